//! The router's event handlers and the pass-down loop: the only code that
//! schedules events and hands a request from one part to the next.

use super::disk_unit::{DiskUnit, Start};
use super::event::Event;
use super::{Reconfigured, Shared, Simulation, SUBMITTED};
use crate::disk::HeadState;
use crate::error::{config_err, Error, Result};
use crate::host::range::Targets;
use crate::host::{ReqId, Request};
use crate::sched::HeadsRead;
use crate::sim::queue_level::Pick;
use crate::time::SimTime;
use crate::workload::IoSpec;

impl Simulation {
    /// The view of the levels above the disks: the host's belief of disk 0's
    /// heads (`SchedCtx::head`), and over an array it refreshes `self.heads`
    /// with every disk's (`SchedCtx::heads`: a positional host or controller
    /// scheduler judges each request against its own disk's heads).
    fn queue_heads(&mut self, now: SimTime) -> HeadState {
        if self.units.len() > 1 {
            self.heads.clear();
            let predictor = &self.shared.predictor;
            self.heads.extend(self.units.iter_mut().map(|u| u.believed_head(now, predictor)));
        }
        self.units[0].believed_head(now, &self.shared.predictor)
    }

    pub(super) fn request_arrived(&mut self, client: u32, now: SimTime) -> Result<()> {
        if self.acct.arrived >= self.limit || self.stop_arrivals_at.is_some_and(|t| now > t) {
            return Ok(());
        }
        let Some((mut io, next)) = self.generator.arrive(now, client, &mut self.rng) else {
            self.limit = self.acct.arrived; // the workload is exhausted
            return Ok(());
        };
        if let Some(t) = next {
            self.schedule(t, Event::RequestArrived { client });
        }
        let mut flow = io.flow.unwrap_or_else(|| self.generator.flow(client));
        if let Some(classify) = &mut self.classifier {
            flow = classify(client, flow, &mut io, now);
        }
        self.admit(client, flow, &io, now)
    }

    /// Request `io` of `client` enters the system at `now`: split into its
    /// disks' pieces, each offered to the host level, then passed down.
    pub(super) fn admit(&mut self, client: u32, flow: u32, io: &IoSpec, now: SimTime) -> Result<()> {
        let logical = self.acct.arrived;
        let range = match &io.range {
            None => None,
            Some(_) if self.units.len() > 1 => return Err(config_err("workload", "range requests need a single disk (disk.count = 1)")),
            Some(spec) => Some(Box::new(Targets::new(spec, io.blocks, &self.model.layout).ok_or_else(|| Error::Config {
                what: "workload".into(),
                msg: format!("range request {logical}: no start aligned to {} blocks fits {} blocks in {:?}", spec.align_blocks, io.blocks, spec.spans),
            })?)),
        };
        let lbn = range.as_ref().map_or(io.lbn, |t| t.first());
        if range.is_some() {
            self.shared.placement.arrived(self.acct.pieces, now);
        }
        self.acct.arrived += 1;
        let request = Request {
            seq: self.acct.pieces,
            logical,
            client,
            flow,
            class: io.class,
            lbn,
            blocks: io.blocks,
            is_write: io.is_write,
            deadline: io.deadline,
            range,
            arrival: now,
            ..Default::default()
        };
        let mut pieces = std::mem::take(&mut self.pieces);
        let Shared { predictor, reqs, .. } = &mut self.shared;
        self.splits.split(&self.array, request, self.acct.pieces, |lbn, blocks| predictor.target_mapped(lbn, blocks), reqs, &mut pieces);
        for id in pieces.drain(..) {
            self.acct.pieces += 1;
            self.enter(0, id, now)?;
        }
        self.pieces = pieces;
        self.pass_down_from(0, now)
    }

    /// Request `id` arrives at level `i` above the disks (or bypasses it).
    fn enter(&mut self, i: usize, id: ReqId, now: SimTime) -> Result<()> {
        // Schedulers that read no heads, or read them only to dispatch, are
        // handed them as the belief last followed them: not brought up to date.
        let head = match self.belief_read {
            HeadsRead::Nothing | HeadsRead::PositionToDispatch => self.units[0].unfollowed_head(now),
            HeadsRead::Cylinder | HeadsRead::Position => self.queue_heads(now),
        };
        let flow = self.shared.reqs.get(id).flow;
        let level = &mut self.levels[i];
        if !level.offer(id, flow, &self.shared.level_ctx(i, now, head, &self.heads)) {
            return self.send_below(i, id, true, now);
        }
        level.gauge(&mut self.metrics, level.len(), now);
        Ok(())
    }

    /// Let the levels from `from` down send what they have room for: the
    /// lowest first (it hears of a completion before the ones above do).
    pub(super) fn pass_down_from(&mut self, from: usize, now: SimTime) -> Result<()> {
        for i in (from..self.levels.len()).rev() {
            self.pass_down(i, now)?;
        }
        Ok(())
    }

    /// Whether level `i` may send down request `id` (or, with `None`, any
    /// request): below its threshold in total and at the request's disk.
    fn has_room(&self, i: usize, id: Option<ReqId>) -> bool {
        let level = &self.levels[i];
        let disk_room = |u: &DiskUnit| u.outstanding() < level.per_disk_threshold as u64;
        level.counters.in_flight < level.threshold as u64 && match id {
            Some(id) => disk_room(&self.units[self.shared.reqs.get(id).disk as usize]),
            None => match &self.units[..] {
                [unit] => disk_room(unit),
                units => units.iter().any(disk_room),
            },
        }
    }

    /// The pass-down loop (GEOM's `g_sched_dispatch`): move requests from
    /// level `i` to the level below while there is room.
    fn pass_down(&mut self, i: usize, now: SimTime) -> Result<()> {
        if let Some(id) = self.levels[i].held {
            if !self.has_room(i, Some(id)) {
                return Ok(());
            }
            self.levels[i].held = None;
            self.send_below(i, id, false, now)?;
        }
        while !self.levels[i].is_empty() && self.has_room(i, None) {
            let nothing_below = self.levels[i].counters.in_flight == 0;
            // (a scheduler that reads no heads is handed them as last followed, as on entering)
            let head = match self.belief_read {
                HeadsRead::Nothing => self.units[0].unfollowed_head(now),
                _ => self.queue_heads(now),
            };
            let ctx = self.shared.level_ctx(i, now, head, &self.heads);
            let clock = (i == 0).then_some(()).and(self.host_clock.is_some().then(std::time::Instant::now));
            let picked = self.levels[i].pick(&ctx, nothing_below)?;
            if let (Some(t), Some((ns, n))) = (clock, &mut self.host_clock) {
                (*ns, *n) = (*ns + t.elapsed().as_nanos(), *n + 1);
            }
            let id = match picked {
                Pick::Request(id) => id,
                Pick::WakeAt(t) => {
                    self.schedule(t, Event::WakeDue(i as u8));
                    break;
                }
                Pick::Wait => break,
            };
            // (One disk: the room just found is this request's disk's.)
            if self.units.len() > 1 && !self.has_room(i, Some(id)) {
                self.levels[i].held = Some(id);
                break;
            }
            // With one in flight below it per disk this level's scheduler drives the arm: its sweeps to the edge happen.
            let level = &mut self.levels[i];
            let travel = level.sched.travel_first();
            if level.threshold.min(level.per_disk_threshold) == 1 {
                let unit = &mut self.units[self.shared.reqs.get(id).disk as usize];
                for &cylinder in travel.cylinders() {
                    unit.travel(cylinder, now, &self.shared.predictor);
                }
            }
            self.send_below(i, id, false, now)?;
        }
        let level = &self.levels[i];
        level.gauge(&mut self.metrics, level.pending(), now);
        Ok(())
    }

    /// Request `id` leaves level `i` (dispatched, or `bypassed`) for the
    /// level below: the next queue level, or its disk.
    fn send_below(&mut self, i: usize, id: ReqId, bypassed: bool, now: SimTime) -> Result<()> {
        let r = self.shared.reqs.get_mut(id);
        if i == 0 {
            r.host_dispatched = now;
            self.acct.host_dispatched += 1;
        }
        let (blocks, write, disk) = (r.blocks, r.is_write, r.disk);
        if !bypassed {
            self.levels[i].left(disk);
        }
        self.levels[i].sent(id, bypassed, self.shared.bytes(blocks), write);
        if i + 1 < self.levels.len() {
            // The level below acts on each request as it comes, as on each completion.
            self.enter(i + 1, id, now)?;
            self.pass_down(i + 1, now)
        } else {
            self.issue(id, now)
        }
    }

    /// Request `id` enters its disk's command queue.
    fn issue(&mut self, id: ReqId, now: SimTime) -> Result<()> {
        let d = self.shared.reqs.get(id).disk as usize;
        self.acct.disk_queue.requests += 1;
        self.metrics.disk_queue(now, self.acct.disk_queue.outstanding() as u32);
        self.units[d].insert(id, &mut self.shared, now);
        self.drive_start(d, now)
    }

    /// Disk `d` starts its next command if its mechanism is free; idle, its
    /// background work may use the time.
    pub(super) fn drive_start(&mut self, d: usize, now: SimTime) -> Result<()> {
        match self.units[d].start(&mut self.shared, now)? {
            Start::Busy => {}
            Start::Idle => self.background_idle(d, now),
            Start::Served { id, done } => {
                self.acct.drive_dispatched += 1;
                let r = self.shared.reqs.get(id);
                self.acct.disk_queue.sent(self.shared.bytes(r.blocks), r.is_write);
                self.schedule(done, Event::DiskCompleted(d as u32));
            }
        }
        Ok(())
    }

    /// Disk `d` has nothing to serve: its background work may read the
    /// nearest wanted track, unless foreground work for it waits above the
    /// disks or no more will come. (Work waiting for another disk of an
    /// array does not hold this one's back.)
    fn background_idle(&mut self, d: usize, now: SimTime) {
        let more_foreground = self.acct.arrived < self.limit && self.stop_arrivals_at.is_none_or(|t| now <= t);
        let waiting = self.levels.iter().any(|l| l.waiting_for(d as u32));
        if waiting || !more_foreground {
            return;
        }
        let unit = &mut self.units[d];
        if let Some(end) = unit.freeblock.idle(now, &mut unit.drive) {
            self.schedule(end, Event::BackgroundCompleted(d as u32));
        }
    }

    pub(super) fn disk_completed(&mut self, d: usize, now: SimTime) -> Result<()> {
        let id = self.units[d].completed(d, now, &self.shared.predictor)?;
        let flow = self.shared.reqs.get(id).flow;
        let ctx = self.shared.ctx(now, self.units[d].head(now), None);
        // Each level's scheduler that dispatched it hears of it, the disk's first.
        self.units[d].queue.completed(id, flow, &ctx);
        self.units[d].queue.expire(now);
        for level in &mut self.levels {
            level.completed(id, flow, &ctx);
            level.expire(now);
        }
        // The request stays in its freed slot while its completion is reported: not copied out.
        let sector_bytes = self.shared.sector_bytes;
        let req = self.shared.reqs.release(id);
        if req.range.is_some() {
            self.shared.placement.completed(req, now);
            if req.client != SUBMITTED {
                self.generator.placed(req.client, req.lbn, req.blocks);
            }
        }
        let bytes = req.blocks as u64 * sector_bytes;
        for level in &mut self.levels {
            level.counters.finished(bytes, req.is_write);
        }
        self.acct.disk_queue.finished(bytes, req.is_write);
        self.units[d].queue.counters.finished(bytes, req.is_write);
        if !self.acct.done.insert(req.seq) {
            return Err(Error::Invariant(format!("request {} completed twice", req.seq)));
        }
        self.metrics.disk_queue(now, self.acct.disk_queue.outstanding() as u32);
        // The workload's request is done with its last piece, reported at its array address.
        if let Some(whole) = self.splits.join(&self.array, req)? {
            self.acct.completed += 1;
            self.metrics.completed(whole);
            if whole.client == SUBMITTED {
                self.completions.push(whole.clone());
            } else {
                let client = whole.client;
                if let Some(t) = self.generator.completed(now, client, &mut self.rng) {
                    self.schedule(t, Event::RequestArrived { client });
                }
            }
        }
        self.units[d].settle_belief(now, &self.shared.predictor);
        self.drive_start(d, now)?;
        self.pass_down_from(0, now)
    }

    /// Swap a queue's scheduler (a level's, or every disk's), moving its
    /// pending requests across in arrival order.
    pub(super) fn reconfigure(&mut self, i: usize, now: SimTime) -> Result<()> {
        let (_, which, new) = &mut self.reconfigure[i];
        let (which, new) = (*which, std::mem::take(new));
        let head = self.queue_heads(now);
        for (d, sched) in new.into_iter().enumerate() {
            let (ctx, level) = match which {
                Reconfigured::Level(l) => (self.shared.level_ctx(l, now, head, &self.heads), &mut self.levels[l]),
                Reconfigured::Disks => (self.shared.ctx(now, self.units[d].head(now), None), &mut self.units[d].queue),
            };
            // The switched-out scheduler's counters leave with it: kept for the result.
            let label = format!("{}.{} until {:.3} ms", level.name, level.sched.name(), now.as_ms_f64());
            self.retired_counters.extend(level.sched.counters().into_iter().map(|(n, v)| (label.clone(), n, v)));
            level.replace(sched, &ctx)?;
        }
        for d in 0..self.units.len() {
            self.drive_start(d, now)?;
        }
        self.pass_down_from(0, now)
    }
}

//! The simulation: workload -> host queue -> (queuing threshold) -> drive
//! queue -> drive, driven by the event engine.
//!
//! Request life cycle: `Arrived` (generator) -> host scheduler `insert` ->
//! host `dispatch` while fewer than `queue_threshold` are outstanding at the
//! disk -> drive scheduler `insert` -> drive `dispatch` when the mechanism is
//! free -> `DiskDone` at the time the drive model computed -> completion.

use crate::background::external::{External, Foreground};
use crate::background::planner::{Planner, Visit};
use crate::background::{FreeblockSummary, Tasks};
use crate::config::SimConfig;
use crate::disk::{builtin, DiskModel, Drive, DriveState, HeadState, Predictor};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::host::range::{best_start, Claims, Targets};
use crate::host::{ReqId, Request, RequestTable};
use crate::metrics::{Metrics, Records, Summary};
use crate::sched::{self, SchedCtx, Scheduler};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Generator, SimRng};
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The drive finished the command in service.
    DiskDone,
    /// A scheduler asked to be consulted again (`wake_at`).
    HostWake,
    /// The drive finished a background (freeblock idle-time) transfer.
    BackgroundDone,
    /// Run-time reconfiguration `i` of the config is due.
    Reconfigure(usize),
    /// A client's next request is due.
    Arrived { client: u32 },
}

impl Event {
    /// Among events at the same instant: completions first (they free the
    /// disk), then timers, then arrivals.
    fn priority(&self) -> u8 {
        match self {
            Event::DiskDone | Event::BackgroundDone => 0,
            Event::HostWake | Event::Reconfigure(_) => 1,
            Event::Arrived { .. } => 2,
        }
    }
}

/// A queue's counters, as GEOM_SCHED exports them: requests that entered,
/// requests in flight below it (count, bytes, writes; the peak over the run,
/// since all are done at the end) and requests done.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct QueueCounters {
    pub requests: u64,
    pub done: u64,
    pub in_flight: u64,
    pub in_flight_bytes: u64,
    pub in_flight_writes: u64,
    pub max_in_flight: u64,
    pub max_in_flight_bytes: u64,
    pub max_in_flight_writes: u64,
}

impl QueueCounters {
    fn sent(&mut self, bytes: u64, write: bool) {
        self.in_flight += 1;
        self.in_flight_bytes += bytes;
        self.in_flight_writes += write as u64;
        self.max_in_flight = self.max_in_flight.max(self.in_flight);
        self.max_in_flight_bytes = self.max_in_flight_bytes.max(self.in_flight_bytes);
        self.max_in_flight_writes = self.max_in_flight_writes.max(self.in_flight_writes);
    }
    fn finished(&mut self, bytes: u64, write: bool) {
        self.in_flight -= 1;
        self.in_flight_bytes -= bytes;
        self.in_flight_writes -= write as u64;
        self.done += 1;
    }
}

/// Request accounting, checked at the end of every run.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub arrived: u64,
    pub host_dispatched: u64,
    pub drive_dispatched: u64,
    pub completed: u64,
    pub host_queue: QueueCounters,
    pub disk_queue: QueueCounters,
    /// Range requests placed by the drive, and those that had to overlap a
    /// concurrent range write's blocks (every acceptable start was claimed).
    pub range_placed: u64,
    pub range_overlaps: u64,
}

/// Freeblock scheduling state: tasks, planner and what they achieved.
struct Freeblock {
    tasks: Tasks,
    planner: Planner,
    idle: bool,
    bg_write: bool,
    /// The idle-time visit in progress.
    busy: Option<(Visit, SimTime)>,
    summary: FreeblockSummary,
    planner_ns: u128,
    /// External mode: the host-side scheduler and the drive as it sees it.
    external: Option<External>,
    /// False: no background work is planned (the baseline run).
    plan: bool,
}

pub struct Simulation {
    engine: Engine<Event>,
    reqs: RequestTable,
    generator: Box<dyn Generator>,
    rng: SimRng,
    host: Box<dyn Scheduler>,
    host_wake: Option<SimTime>,
    threshold: u32,
    outstanding: u32,
    drive: Drive,
    drive_sched: Box<dyn Scheduler>,
    in_service: Option<ReqId>,
    predictor: Predictor,
    /// The host's belief of the drive's state after the last command it knows of.
    belief: DriveState,
    belief_pieces: Vec<crate::disk::TrackPiece>,
    metrics: Metrics,
    counters: Counters,
    /// One bit per request (by seq): set on completion, to catch double completions.
    done_bits: Vec<u64>,
    limit: u64,
    stop_arrivals_at: Option<SimTime>,
    model: Arc<DiskModel>,
    freeblock: Option<Freeblock>,
    /// Schedulers to switch to, built (and so checked) up front: (at, queue is host, scheduler).
    reconfigure: Vec<(SimTime, bool, Option<Box<dyn Scheduler>>)>,
    host_gen: u32,
    disk_gen: u32,
    claims: Claims,
    /// A broken invariant found deep in an event handler; the run stops with it.
    failed: Option<Error>,
    /// Live range requests: seq -> arrival (claims bind those that arrived before a release).
    live_range: BTreeMap<u64, SimTime>,
}

/// Result of a run.
pub struct RunResult {
    pub summary: Summary,
    pub counters: Counters,
    /// Each scheduler's own counters: ("host" | "disk", name, value).
    pub scheduler_counters: Vec<(&'static str, &'static str, u64)>,
    pub freeblock: Option<FreeblockSummary>,
    pub records: Option<Records>,
}

impl Simulation {
    pub fn new(cfg: &SimConfig) -> Result<Simulation> {
        cfg.validate()?;
        let spec = builtin::resolve(&cfg.disk.model, cfg.base_dir.as_deref())?;
        let model = Arc::new(DiskModel::new(spec)?);
        Self::with_model(cfg, model)
    }

    pub fn with_model(cfg: &SimConfig, model: Arc<DiskModel>) -> Result<Simulation> {
        cfg.validate()?;
        let settings = |m: &std::collections::BTreeMap<String, f64>| m.iter().map(|(k, v)| (k.clone(), *v)).collect::<Vec<_>>();
        let host = sched::build(&cfg.host.scheduler, &settings(&cfg.host.set)).map_err(|e| prefix(e, "host"))?;
        let drive_sched = sched::build(&cfg.disk.scheduler, &settings(&cfg.disk.set)).map_err(|e| prefix(e, "disk"))?;
        let depth = model.spec.controller.queue_depth;
        if cfg.host.queue_threshold > depth {
            return Err(crate::error::config_err("host.queue_threshold", format!(
                "{} exceeds the drive's command queue depth of {depth}", cfg.host.queue_threshold)));
        }
        let generator = cfg.workload.build(model.layout.capacity(), model.spec.sector_bytes, cfg.base_dir.as_deref())?;
        let sector_bytes = model.spec.sector_bytes;
        let freeblock = match &cfg.freeblock {
            None => None,
            Some(f) => {
                let tasks = Tasks::new(model.layout.capacity(), &f.tasks)?;
                let mut planner = Planner::new(model.clone(), &tasks, f.search_tracks);
                planner.seek_conservatism_ns = SimDuration::from_ms(f.seek_conservatism_ms).ns();
                Some(Freeblock {
                    external: f.external().then(|| External::new(model.clone(), &f.noise, cfg.seed)),
                    plan: f.plan,
                    tasks,
                    planner,
                    idle: f.idle,
                    bg_write: f.tasks.iter().any(|t| t.write),
                    busy: None,
                    summary: FreeblockSummary::default(),
                    planner_ns: 0,
                })
            }
        };
        let mut reconfigure = Vec::new();
        for (i, r) in cfg.reconfigure.iter().enumerate() {
            let s = sched::build(&r.scheduler, &settings(&r.set)).map_err(|e| prefix(e, &format!("reconfigure[{i}]")))?;
            reconfigure.push((SimTime::ZERO + SimDuration::from_ms(r.at_ms), r.queue == "host", Some(s)));
        }
        Ok(Simulation {
            reconfigure,
            host_gen: 0,
            disk_gen: 0,
            claims: Claims::new(),
            failed: None,
            live_range: BTreeMap::new(),
            freeblock,
            engine: Engine::new(),
            reqs: RequestTable::default(),
            generator,
            rng: SimRng::seed_from_u64(cfg.seed),
            host,
            host_wake: None,
            threshold: cfg.host.queue_threshold,
            outstanding: 0,
            drive: Drive::new(model.clone()),
            drive_sched,
            in_service: None,
            predictor: Predictor { overlapped: cfg.freeblock.as_ref().is_some_and(|f| f.external()), ..Predictor::exact(model.clone()) },
            belief: DriveState::default(),
            belief_pieces: Vec::new(),
            metrics: Metrics::new(cfg.run.warmup_requests, cfg.run.records, sector_bytes),
            counters: Counters::default(),
            done_bits: Vec::new(),
            limit: cfg.run.requests.unwrap_or(match cfg.workload {
                crate::workload::WorkloadConfig::Trace(_) => u64::MAX, // the whole trace
                _ => 10_000,
            }),
            stop_arrivals_at: cfg.run.duration_ms.map(|ms| SimTime::ZERO + SimDuration::from_ms(ms)),
            model,
        })
    }

    /// Receive every run of background blocks as it is transferred: (task, lo, hi, time).
    pub fn on_background_transfer(&mut self, cb: crate::background::TransferCallback) {
        if let Some(f) = &mut self.freeblock {
            f.tasks.on_transfer = Some(cb);
        }
    }

    pub fn model(&self) -> &Arc<DiskModel> {
        &self.model
    }

    /// Run to completion. `progress(completed, limit)` is called every so
    /// often; returning false aborts the run (an error).
    pub fn run(mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<RunResult> {
        for (i, &(t, _, _)) in self.reconfigure.iter().enumerate() {
            self.engine.schedule(t, 1, Event::Reconfigure(i));
        }
        for (t, client) in self.generator.start(&mut self.rng) {
            self.engine.schedule(t, Event::Arrived { client }.priority(), Event::Arrived { client });
        }
        let mut steps: u64 = 0;
        while let Some((now, ev)) = self.engine.step() {
            match ev {
                Event::Arrived { client } => self.arrived(now, client)?,
                Event::DiskDone => self.disk_done(now)?,
                Event::BackgroundDone => self.background_done(now),
                Event::Reconfigure(i) => self.reconfigure(now, i)?,
                Event::HostWake => {
                    if self.host_wake == Some(now) {
                        self.host_wake = None;
                        self.host_dispatch(now);
                    }
                }
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            steps += 1;
            if steps & 0xFFFF == 0 && !progress(self.counters.completed, self.limit) {
                return Err(Error::Config { what: "run".into(), msg: "interrupted".into() });
            }
        }
        let end = self.engine.now();
        if let Some(e) = self.generator.take_error() {
            return Err(e);
        }
        self.check_conservation()?;
        progress(self.counters.completed, self.limit);
        let scheduler_counters = self.host.counters().into_iter().map(|(n, v)| ("host", n, v))
            .chain(self.drive_sched.counters().into_iter().map(|(n, v)| ("disk", n, v)))
            .collect();
        let summary = self.metrics.summary(end);
        let freeblock = self.freeblock.take().map(|mut f| {
            let s = &mut f.summary;
            let span_s = summary.sim_time_ms / 1000.0;
            let bytes = self.model.spec.sector_bytes as f64;
            if span_s > 0.0 && summary.iops > 0.0 {
                // Over the foreground's measured span (requests / IOPS).
                let fg_span_s = summary.requests as f64 / summary.iops;
                s.free_mb_per_s = (s.free_blocks + s.idle_blocks) as f64 * bytes / fg_span_s / 1e6;
                s.latency_mb_per_s = s.free_blocks as f64 * bytes / fg_span_s / 1e6;
            }
            s.planner_us_per_opportunity = if s.opportunities > 0 { f.planner_ns as f64 / s.opportunities as f64 / 1e3 } else { 0.0 };
            s.tasks = f.tasks.status().to_vec();
            s.external = f.external.as_ref().map(External::summary);
            f.summary
        });
        Ok(RunResult {
            freeblock,
            summary,
            counters: self.counters,
            scheduler_counters,
            records: self.metrics.records.take(),
        })
    }

    /// The host's view: its belief of the drive's state.
    fn ctx_head_for_host(&self, now: SimTime) -> HeadState {
        head_at(&self.belief, now)
    }

    fn arrived(&mut self, now: SimTime, client: u32) -> Result<()> {
        if self.counters.arrived >= self.limit || self.stop_arrivals_at.is_some_and(|t| now > t) {
            return Ok(());
        }
        let Some((io, next)) = self.generator.arrive(now, client, &mut self.rng) else {
            self.limit = self.counters.arrived; // the workload is exhausted
            return Ok(());
        };
        let seq = self.counters.arrived;
        let range = match &io.range {
            None => None,
            Some(spec) => Some(Box::new(Targets::new(spec, io.blocks, &self.model.layout).ok_or_else(|| Error::Config {
                what: "workload".into(),
                msg: format!("range request {seq}: no start aligned to {} blocks fits {} blocks in {:?}", spec.align_blocks, io.blocks, spec.spans),
            })?)),
        };
        let lbn = range.as_ref().map_or(io.lbn, |t| t.first());
        if range.is_some() {
            self.live_range.insert(seq, now);
        }
        if let Some(t) = next {
            self.engine.schedule(t, 2, Event::Arrived { client });
        }
        let req = Request {
            seq,
            client,
            class: io.class,
            lbn,
            blocks: io.blocks,
            is_write: io.is_write,
            deadline: io.deadline,
            range,
            target: self.predictor.target(lbn),
            arrival: now,
            ..Default::default()
        };
        self.counters.arrived += 1;
        self.counters.host_queue.requests += 1;
        let id = self.reqs.insert(req);
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.ctx_head_for_host(now), claims: &self.claims };
        if self.host.bypass(id, &ctx) {
            self.reqs.get_mut(id).bypassed = true;
            self.issue(now, id);
            return Ok(());
        }
        self.host.insert(id, &ctx);
        self.metrics.host_queue(now, self.host.len());
        self.host_dispatch(now);
        Ok(())
    }

    /// Move requests from the host queue to the disk while below the threshold.
    fn host_dispatch(&mut self, now: SimTime) {
        while self.outstanding < self.threshold && !self.host.is_empty() {
            let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.ctx_head_for_host(now), claims: &self.claims };
            let Some(id) = self.host.dispatch(&ctx, false) else {
                if let Some(t) = self.host.wake_at().filter(|&t| t > now) {
                    if self.host_wake != Some(t) {
                        self.host_wake = Some(t);
                        self.engine.schedule(t, 1, Event::HostWake);
                    }
                } else if self.outstanding == 0 {
                    // Nothing in flight will call us again: never stall.
                    let id = self.host.dispatch(&ctx, true).expect("forced dispatch from a non-empty queue");
                    self.issue(now, id);
                    continue;
                }
                break;
            };
            self.issue(now, id);
        }
        self.metrics.host_queue(now, self.host.len());
    }

    fn issue(&mut self, now: SimTime, id: ReqId) {
        self.counters.host_dispatched += 1;
        let r = self.reqs.get_mut(id);
        r.issued = now;
        r.host_gen = self.host_gen;
        let (bytes, write) = (r.blocks as u64 * self.model.spec.sector_bytes as u64, r.is_write);
        self.counters.host_queue.sent(bytes, write);
        self.counters.disk_queue.requests += 1;
        self.outstanding += 1;
        self.metrics.disk_queue(now, self.outstanding);
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.drive_head(now), claims: &self.claims };
        self.drive_sched.insert(id, &ctx);
        self.drive_start(now);
    }

    /// The drive's own view (firmware knows where its heads are).
    fn drive_head(&self, now: SimTime) -> HeadState {
        head_at(&self.drive.state, now)
    }

    /// If the mechanism is free, let the drive's scheduler pick the next command.
    fn drive_start(&mut self, now: SimTime) {
        if self.in_service.is_some() || self.freeblock.as_ref().is_some_and(|f| f.busy.is_some()) {
            return;
        }
        if self.drive_sched.is_empty() {
            self.background_idle(now);
            return;
        }
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.drive_head(now), claims: &self.claims };
        let id = self.drive_sched.dispatch(&ctx, true).expect("forced dispatch from a non-empty drive queue");
        self.counters.drive_dispatched += 1;
        if let Err(e) = self.place(id, &ctx.head) {
            self.failed.get_or_insert(e);
        }
        let (lbn, blocks, is_write) = {
            let r = self.reqs.get(id);
            (r.lbn, r.blocks, r.is_write)
        };
        if self.freeblock.as_ref().is_some_and(|f| f.external.is_some()) {
            let service = self.serve_external(id);
            self.started(now, id, service);
            return;
        }
        let service = self.drive.serve(now, lbn, blocks, is_write);
        let source = self.drive.last_source;
        if let Some(f) = self.freeblock.as_mut().filter(|f| f.plan && service.media_start.0 > 0 && !service.cache_hit) {
            // In firmware the planner's model is the drive's: the plan ends
            // with the heads over the request's first sector exactly when
            // they would have been without it.
            let target = self.reqs.get(id).target;
            let media_start = service.media_start;
            let clock = std::time::Instant::now();
            let plan = f.planner.plan(source.time, (source.cylinder, source.head), (target.cylinder, target.head), media_start,
                                      is_write, f.bg_write, &f.tasks);
            f.planner_ns += clock.elapsed().as_nanos();
            f.summary.opportunities += 1;
            for v in &plan.visits {
                f.summary.free_blocks += f.planner.credit(v, media_start, &mut f.tasks);
            }
        }
        // The host's belief follows its own model of the drive.
        self.belief.head.time = self.belief.head.time.max(now);
        self.predictor.model.serve(&mut self.belief, now, lbn, blocks, is_write, &mut self.belief_pieces);
        self.started(now, id, service);
    }

    /// External mode: the host plans background work for request `id` with
    /// its model, and the drive (the noisy truth) serves both.
    fn serve_external(&mut self, id: ReqId) -> crate::disk::Service {
        let r = self.reqs.get(id);
        let fg = Foreground { lbn: r.lbn, blocks: r.blocks, is_write: r.is_write, cylinder: r.target.cylinder, head: r.target.head, ready: r.issued };
        let f = self.freeblock.as_mut().expect("external mode has freeblock state");
        let ext = f.external.as_mut().expect("external mode");
        let planner = f.plan.then_some(&mut f.planner);
        let service = ext.serve(&mut self.drive, &fg, planner, &mut f.tasks, f.bg_write, &mut f.summary, &mut f.planner_ns);
        self.belief = DriveState { head: ext.belief(), last_was_write: r.is_write };
        service
    }

    /// The drive took request `id`: record it and wait for its completion.
    fn started(&mut self, now: SimTime, id: ReqId, service: crate::disk::Service) {
        let r = self.reqs.get_mut(id);
        let (blocks, is_write) = (r.blocks, r.is_write);
        r.started = now;
        r.service = service;
        r.disk_gen = self.disk_gen;
        self.counters.disk_queue.sent(blocks as u64 * self.model.spec.sector_bytes as u64, is_write);
        self.in_service = Some(id);
        self.engine.schedule(service.done, 0, Event::DiskDone);
    }

    /// The drive puts a range request at its best start from `head` (the
    /// start a range scheduler chose it for) and claims the blocks of a write.
    fn place(&mut self, id: ReqId, head: &HeadState) -> Result<()> {
        let r = self.reqs.get(id);
        let Some(targets) = r.range.as_deref() else { return Ok(()) };
        let phase = self.predictor.phase_at(head.time);
        let c = best_start(r, targets, head, phase, &self.predictor, &self.claims, None)
            .filter(|c| targets.contains(c.lbn))
            .ok_or_else(|| Error::Invariant(format!("range request {} placed outside its targets", r.seq)))?;
        self.counters.range_placed += 1;
        self.counters.range_overlaps += c.claimed as u64;
        if r.is_write {
            self.claims.claim(r.seq, c.lbn, r.blocks);
        }
        let target = self.predictor.target(c.lbn);
        let r = self.reqs.get_mut(id);
        r.lbn = c.lbn;
        r.target = target;
        Ok(())
    }

    /// Nothing to serve: let freeblock read the nearest wanted track, unless
    /// foreground work is waiting at the host or no more will come.
    fn background_idle(&mut self, now: SimTime) {
        let more_foreground = self.counters.arrived < self.limit && self.stop_arrivals_at.is_none_or(|t| now <= t);
        let Some(f) = &mut self.freeblock else { return };
        if !f.idle || !self.host.is_empty() || !more_foreground {
            return;
        }
        let at = self.drive.state.head;
        if let Some((visit, end)) = f.planner.idle(now, (at.cylinder, at.head), f.bg_write, &f.tasks) {
            self.drive.state.head = HeadState { cylinder: visit.cylinder, head: visit.head, time: end, ..Default::default() };
            f.busy = Some((visit, end));
            self.engine.schedule(end, 0, Event::BackgroundDone);
        }
    }

    /// Swap a queue's scheduler, moving its pending requests across in arrival order.
    fn reconfigure(&mut self, now: SimTime, i: usize) -> Result<()> {
        let (_, is_host, new) = &mut self.reconfigure[i];
        let mut new = new.take().expect("each reconfiguration runs once");
        let is_host = *is_host;
        let head = if is_host { self.ctx_head_for_host(now) } else { self.drive_head(now) };
        let old = if is_host { &mut self.host } else { &mut self.drive_sched };
        let held = old.len();
        let mut moved = old.drain();
        if moved.len() != held || !old.is_empty() {
            return Err(Error::Invariant(format!("reconfiguration: {} drained {} of {held} requests", old.name(), moved.len())));
        }
        moved.sort_by_key(|&id| self.reqs.get(id).seq);
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, claims: &self.claims };
        for &id in &moved {
            new.insert(id, &ctx);
        }
        if new.len() != held {
            return Err(Error::Invariant(format!("reconfiguration: {} holds {} of {held} requests", new.name(), new.len())));
        }
        if is_host {
            self.host = new;
            self.host_gen += 1;
            self.host_wake = None;
        } else {
            self.drive_sched = new;
            self.disk_gen += 1;
        }
        self.drive_start(now);
        self.host_dispatch(now);
        Ok(())
    }

    fn background_done(&mut self, now: SimTime) {
        if let Some(f) = &mut self.freeblock {
            if let Some((visit, _)) = f.busy.take() {
                f.summary.idle_blocks += f.planner.credit(&visit, now, &mut f.tasks);
            }
        }
        self.drive_start(now);
        self.host_dispatch(now);
    }

    fn disk_done(&mut self, now: SimTime) -> Result<()> {
        let id = self.in_service.take().ok_or_else(|| Error::Invariant("completion with no command in service".into()))?;
        if let Some(ext) = self.freeblock.as_mut().and_then(|f| f.external.as_mut()) {
            ext.observed(now);
            self.belief.head = ext.belief();
        }
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.drive_head(now), claims: &self.claims };
        // Only the scheduler instance that dispatched a request hears of its completion.
        let r = self.reqs.get(id);
        if r.disk_gen == self.disk_gen {
            self.drive_sched.complete(id, &ctx);
        }
        if !r.bypassed && r.host_gen == self.host_gen {
            self.host.complete(id, &ctx);
        }
        let req = self.reqs.remove(id);
        if req.range.is_some() {
            // The host learns where it went; claims nobody can still violate go.
            self.live_range.remove(&req.seq);
            if req.is_write {
                self.claims.release(req.seq, now, self.live_range.values().next().copied());
            }
            self.generator.placed(req.client, req.lbn, req.blocks);
        }
        self.counters.completed += 1;
        let bytes = req.blocks as u64 * self.model.spec.sector_bytes as u64;
        self.counters.host_queue.finished(bytes, req.is_write);
        self.counters.disk_queue.finished(bytes, req.is_write);
        self.outstanding -= 1;
        let (word, bit) = ((req.seq / 64) as usize, req.seq % 64);
        if self.done_bits.len() <= word {
            self.done_bits.resize(word + 1, 0);
        }
        if self.done_bits[word] & (1 << bit) != 0 {
            return Err(Error::Invariant(format!("request {} completed twice", req.seq)));
        }
        self.done_bits[word] |= 1 << bit;
        self.metrics.completed(&req);
        self.metrics.disk_queue(now, self.outstanding);
        if let Some(t) = self.generator.completed(now, req.client, &mut self.rng) {
            self.engine.schedule(t, 2, Event::Arrived { client: req.client });
        }
        if self.in_service.is_none() && self.drive_sched.is_empty() {
            // The host observes the completion time; its believed position stays its own.
            self.belief.head.time = now;
        }
        self.drive_start(now);
        self.host_dispatch(now);
        Ok(())
    }

    fn check_conservation(&self) -> Result<()> {
        let c = &self.counters;
        let queued = (self.host.len() + self.drive_sched.len()) as u64;
        let q_ok = |q: &QueueCounters| q.requests == c.arrived && q.done == c.arrived && q.in_flight == 0 && q.in_flight_bytes == 0;
        if !q_ok(&c.host_queue) || !q_ok(&c.disk_queue) {
            return Err(Error::Invariant(format!("queue counters: host {:?} disk {:?}", c.host_queue, c.disk_queue)));
        }
        if c.arrived != c.completed || queued != 0 || self.reqs.live() != 0 || c.host_dispatched != c.arrived
            || c.drive_dispatched != c.arrived || self.metrics.completed != c.completed
        {
            return Err(Error::Invariant(format!(
                "request conservation: arrived {} host-dispatched {} drive-dispatched {} completed {} still queued {} live {}",
                c.arrived, c.host_dispatched, c.drive_dispatched, c.completed, queued, self.reqs.live())));
        }
        let full_words = (c.arrived / 64) as usize;
        let all_done = self.done_bits[..full_words].iter().all(|&w| w == u64::MAX)
            && (c.arrived.is_multiple_of(64) || self.done_bits[full_words] == (1u64 << (c.arrived % 64)) - 1);
        if !all_done {
            return Err(Error::Invariant("some request never completed".into()));
        }
        Ok(())
    }
}

/// Where a positioning prediction starts: the heads of `state`, free no earlier than `now`.
fn head_at(state: &DriveState, now: SimTime) -> HeadState {
    HeadState { time: state.head.time.max(now), last_was_write: state.last_was_write, ..state.head }
}

fn prefix(e: Error, level: &str) -> Error {
    match e {
        Error::Config { what, msg } => Error::Config { what: format!("{level}.{what}"), msg },
        e => e,
    }
}

/// Convenience: build and run a config.
pub fn run(cfg: &SimConfig) -> Result<RunResult> {
    Simulation::new(cfg)?.run(&mut |_, _| true)
}

//! `DiskUnit`: one disk of the array: the drive (the truth), its command
//! queue (a `QueueLevel`), the host's belief of where its heads are, the
//! command in service and its background work (`background::freeblock`).
//! It answers with what happened; the router schedules the events.

use super::queue_level::QueueLevel;
use super::Shared;
use crate::background::freeblock::Freeblock;
use crate::disk::{Access, Drive, DriveState, HeadState, Predictor, Service};
use crate::error::{Error, Result};
use crate::host::ReqId;
use crate::sched::HeadsRead;
use crate::time::SimTime;

/// What a disk unit did when asked to start its next command.
pub(crate) enum Start {
    /// The mechanism is busy (a command or background work).
    Busy,
    /// Nothing queued: the drive is idle.
    Idle,
    /// Request `id` went into service (its `service` is on the request); it completes at `done`.
    Served { id: ReqId, done: SimTime },
}

pub(crate) struct DiskUnit {
    pub(crate) drive: Drive,
    /// The drive's own command queue.
    pub(crate) queue: QueueLevel,
    in_service: Option<ReqId>,
    /// The host's belief of the drive's state after the last command it
    /// has followed (read it through `belief`, which follows `unserved`).
    belief: DriveState,
    /// The command the belief has not yet followed: followed when the
    /// belief is next read, or, if the drive falls idle first, placed at
    /// its end without timing it (then only where it ended is kept).
    unserved: Option<Unserved>,
    /// How far the belief follows each command: as far as the run reads it (`Simulation::belief_read`).
    pub(crate) keep_belief: HeadsRead,
    pub(crate) freeblock: Box<dyn Freeblock>,
    /// With `[disk.noise]`: the host's belief's prediction of each command against the drive's service.
    pub(crate) prediction: Option<crate::disk::noisy::PredictionErrors>,
    /// Wall-clock time of this queue's scheduler decisions and their count
    /// (kept only where freeblock compares its planner's CPU with it).
    pub(crate) clock: Option<(u128, u64)>,
}

/// A command the belief follows later (`DiskUnit::unserved`): what its
/// serve needs, and the track it ends on when that is known without one.
#[derive(Clone, Copy)]
struct Unserved {
    now: SimTime,
    lbn: u64,
    blocks: u32,
    is_write: bool,
    end: Option<(u32, u32)>,
}

/// Where a positioning prediction starts: the heads of `state`, free no earlier than `now`.
pub(crate) fn head_at(state: &DriveState, now: SimTime) -> HeadState {
    HeadState { time: state.head.time.max(now), last_was_write: state.last_was_write, ..state.head }
}

impl DiskUnit {
    pub(crate) fn new(drive: Drive, queue: QueueLevel, freeblock: Box<dyn Freeblock>) -> DiskUnit {
        DiskUnit { drive, queue, in_service: None, belief: DriveState::default(), unserved: None, keep_belief: HeadsRead::Position, freeblock, prediction: None, clock: None }
    }

    /// Requests sent to this disk and not yet done (queued or in service).
    #[inline]
    pub(crate) fn outstanding(&self) -> u64 {
        self.queue.counters.outstanding()
    }

    /// A command is in service.
    #[inline]
    pub(crate) fn busy(&self) -> bool {
        self.in_service.is_some()
    }

    /// The drive's own view (firmware knows where its heads are).
    #[inline]
    pub(crate) fn head(&self, now: SimTime) -> HeadState {
        head_at(&self.drive.state, now)
    }

    /// The host's view: its belief of the heads (`predictor`: the one it follows commands with).
    #[inline]
    pub(crate) fn believed_head(&mut self, now: SimTime, predictor: &Predictor) -> HeadState {
        head_at(self.belief(predictor), now)
    }

    /// The host's belief of the heads as it last followed them (what a
    /// scheduler that reads no heads, or reads them only to dispatch, is handed).
    #[inline]
    pub(crate) fn unfollowed_head(&self, now: SimTime) -> HeadState {
        head_at(&self.belief, now)
    }

    /// The host's belief, brought through the command it has not followed yet.
    fn belief(&mut self, predictor: &Predictor) -> &mut DriveState {
        self.follow(predictor);
        &mut self.belief
    }

    /// Bring the belief through the command it has not followed yet, if
    /// any: its predicted service.
    fn follow(&mut self, predictor: &Predictor) -> Option<Service> {
        let c = self.unserved.take()?;
        self.belief.head.time = self.belief.head.time.max(c.now);
        Some(predictor.model.serve(&mut self.belief, c.now, c.lbn, c.blocks, c.is_write, self.drive.pieces_mut()))
    }

    /// Request `id` enters the drive's command queue.
    pub(crate) fn insert(&mut self, id: ReqId, shared: &mut Shared, now: SimTime) {
        let r = shared.reqs.get_mut(id);
        r.issued = now;
        let flow = r.flow;
        let ctx = shared.ctx(now, self.head(now), None);
        self.queue.insert(id, flow, &ctx);
    }

    /// An empty seek of the arm to `cylinder`; the host's belief follows it.
    pub(crate) fn travel(&mut self, cylinder: u32, now: SimTime, predictor: &Predictor) {
        self.drive.travel(now, cylinder);
        self.follow(predictor);
        let b = &mut self.belief.head;
        let seek_ns = self.drive.model.position_ns((b.cylinder, b.head), (cylinder, b.head), Access::Onward { write: false }, 0);
        *b = HeadState { cylinder, time: SimTime(b.time.max(now).0 + seek_ns), ..*b };
    }

    /// If the mechanism is free, let the drive's scheduler pick the next
    /// command, place it (range requests) and serve it.
    pub(crate) fn start(&mut self, shared: &mut Shared, now: SimTime) -> Result<Start> {
        if self.in_service.is_some() || self.freeblock.busy() {
            return Ok(Start::Busy);
        }
        if self.queue.is_empty() {
            return Ok(Start::Idle);
        }
        let ctx = shared.ctx(now, self.head(now), Some(self.drive.cache()));
        let id = match &mut self.clock {
            None => self.queue.force(&ctx)?,
            Some((ns, n)) => {
                let t = std::time::Instant::now();
                let id = self.queue.force(&ctx)?;
                (*ns, *n) = (*ns + t.elapsed().as_nanos(), *n + 1);
                id
            }
        };
        for &cylinder in self.queue.sched.travel_first().cylinders() {
            self.travel(cylinder, now, &shared.predictor);
        }
        let head = self.head(now);
        if shared.reqs.get(id).range.is_some() {
            shared.placement.place(shared.reqs.get_mut(id), &head, &shared.predictor)?;
        }
        let r = shared.reqs.get(id);
        // Mapped on arrival by the same layout (an exact belief's): not mapped again.
        let mapped = r.mapped.filter(|&(lbn, p)| lbn == r.lbn && p.blocks == r.blocks);
        if let Some((lbn, piece)) = mapped {
            self.drive.seed_mapped(&shared.predictor.model.layout, lbn, piece);
        }
        let (service, believed) = self.freeblock.serve(&mut self.drive, r, now);
        match believed {
            Some(head) => {
                self.unserved = None;
                self.belief = DriveState { head, last_was_write: r.is_write };
            }
            None if self.keep_belief == HeadsRead::Nothing => {}
            // The heads end on the cylinder of the request's last block (a one-track request's is its mapped piece's).
            None if self.keep_belief == HeadsRead::Cylinder => {
                self.belief.head.cylinder = match mapped {
                    Some((_, piece)) => piece.cylinder,
                    None => shared.predictor.model.layout.lbn_to_pbn(r.lbn + r.blocks as u64 - 1).cylinder,
                };
            }
            None => {
                // The host's belief follows its own model of the drive: the
                // command before this one first, this one when next read.
                self.follow(&shared.predictor);
                let end = mapped.map(|(_, piece)| (piece.cylinder, piece.head));
                self.unserved = Some(Unserved { now, lbn: r.lbn, blocks: r.blocks, is_write: r.is_write, end });
                if self.prediction.is_some() {
                    // Its prediction errors compare each command's prediction with its service: followed now.
                    if let (Some(predicted), Some(p)) = (self.follow(&shared.predictor), &mut self.prediction) {
                        p.add(&predicted, &service);
                    }
                }
            }
        }
        let bytes = shared.bytes(r.blocks);
        let r = shared.reqs.get_mut(id);
        (r.started, r.service) = (now, service);
        self.queue.sent(id, false, bytes, r.is_write);
        self.in_service = Some(id);
        Ok(Start::Served { id, done: service.done })
    }

    /// The command in service completed at `now`: the disk's scheduler and
    /// the host's belief hear of it; returns the request.
    pub(crate) fn completed(&mut self, d: usize, now: SimTime, predictor: &Predictor) -> Result<ReqId> {
        let id = self.in_service.take().ok_or_else(|| Error::Invariant(format!("disk {d}: completion with no command in service")))?;
        if let Some(head) = self.freeblock.observed(now) {
            self.belief(predictor).head = head;
        }
        Ok(id)
    }

    /// After a completion: with nothing left, the host observes the
    /// completion time; its believed position stays its own. A command it
    /// has not followed needs no timing then: the heads are where it ended.
    pub(crate) fn settle_belief(&mut self, now: SimTime, predictor: &Predictor) {
        if self.in_service.is_some() || !self.queue.is_empty() {
            return;
        }
        if let Some(Unserved { lbn, blocks, is_write, end: Some((cylinder, head)), .. }) = self.unserved {
            self.unserved = None;
            self.belief = DriveState::after_command(cylinder, head, now, lbn + blocks as u64, is_write);
        } else {
            self.belief(predictor).head.time = now;
        }
    }
}

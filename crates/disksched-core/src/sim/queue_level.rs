//! `QueueLevel`: one type for the host queue, the controller queue and each
//! disk's command queue. It holds the owner's half of the scheduler contract
//! (`sched::Scheduler`): classes, forced dispatch, wake times, which
//! scheduler generation dispatched each request, and the level's counters.
//! It decides nothing about where a request goes next: it answers, and the
//! router (`sim::mod`) acts.

use super::accounting::QueueCounters;
use crate::error::{Error, Result};
use crate::host::ReqId;
use crate::metrics::Metrics;
use crate::sched::{Classes, SchedCtx, Scheduler};
use crate::time::{SimDuration, SimTime};

/// What a level's scheduler answered when asked for its next request.
pub(crate) enum Pick {
    /// Send this request below.
    Request(ReqId),
    /// Nothing now; ask again at this time (a wake-up not yet scheduled).
    WakeAt(SimTime),
    /// Nothing now; something already scheduled or in flight will ask again.
    Wait,
}

/// A queue level: its scheduler and everything its owner keeps for it.
pub(crate) struct QueueLevel {
    /// "host", "controller" or "disk": how its scheduler's counters are reported.
    pub(crate) name: &'static str,
    pub(crate) sched: Box<dyn Scheduler>,
    /// Flows with requests here (for `init_class` / `fini_class`), kept
    /// only where the scheduler `uses_classes` (asked once: a constant of it).
    classes: Classes,
    uses_classes: bool,
    /// Requests the scheduler holds (inserted less dispatched): the router's
    /// checks read it without a call to the scheduler. The run's end checks
    /// it against the scheduler's own `len`.
    queued: usize,
    /// The `wake_at` time a wake-up event is scheduled for.
    wake: Option<SimTime>,
    /// Bumped when the scheduler is replaced at run time.
    gen: u32,
    /// Most requests in flight below this level in total and at each disk
    /// (`u32::MAX`: no limit; a disk's own level takes one at a time anyway).
    pub(crate) threshold: u32,
    pub(crate) per_disk_threshold: u32,
    /// A request the scheduler handed out whose disk was full: it blocks the level.
    pub(crate) held: Option<ReqId>,
    /// Above the disks, by disk: requests here (queued or held) for it.
    waiting: Vec<u32>,
    /// By request slot: 1 + the generation of this level's scheduler that
    /// dispatched it; 0 if it did not (not here yet, bypassed, or done).
    dispatched_by: Vec<u32>,
    pub(crate) counters: QueueCounters,
    /// Where the level's length is measured (none for a disk: the disks'
    /// gauge counts what is outstanding at them).
    gauge: Option<fn(&mut Metrics, SimTime, usize)>,
}

impl QueueLevel {
    pub(crate) fn new(name: &'static str, sched: Box<dyn Scheduler>, class_expire: SimDuration, threshold: u32,
                      per_disk_threshold: u32, gauge: Option<fn(&mut Metrics, SimTime, usize)>) -> QueueLevel {
        let uses_classes = sched.uses_classes();
        QueueLevel { name, sched, classes: Classes::new(class_expire), uses_classes, queued: 0, wake: None, gen: 0, threshold, per_disk_threshold,
                     held: None, waiting: Vec::new(), dispatched_by: Vec::new(), counters: QueueCounters::default(), gauge }
    }

    /// Request `id` of `flow` arrives at a level above the disks. False: the
    /// scheduler let it bypass the queue (the caller sends it below at once).
    #[inline]
    pub(crate) fn offer(&mut self, id: ReqId, flow: u32, ctx: &SchedCtx) -> bool {
        self.counters.requests += 1;
        if self.sched.bypass(id, ctx) {
            return false;
        }
        let d = ctx.reqs.get(id).disk as usize;
        if self.waiting.len() <= d {
            self.waiting.resize(d + 1, 0);
        }
        self.waiting[d] += 1;
        self.queue(id, flow, ctx);
        true
    }

    /// A request `offer` queued here for `disk` left for the level below.
    #[inline]
    pub(crate) fn left(&mut self, disk: u32) {
        self.waiting[disk as usize] -= 1;
    }

    /// Whether a request for `disk` waits here (queued, or held at the head).
    #[inline]
    pub(crate) fn waiting_for(&self, disk: u32) -> bool {
        self.waiting.get(disk as usize).is_some_and(|&n| n > 0)
    }

    /// Request `id` of `flow` enters a disk's command queue (no bypass there).
    #[inline]
    pub(crate) fn insert(&mut self, id: ReqId, flow: u32, ctx: &SchedCtx) {
        self.counters.requests += 1;
        self.queue(id, flow, ctx);
    }

    #[inline]
    fn queue(&mut self, id: ReqId, flow: u32, ctx: &SchedCtx) {
        if self.uses_classes {
            self.classes.enter(self.sched.as_mut(), flow);
        }
        self.sched.insert(id, ctx);
        self.queued += 1;
    }

    /// Requests queued here (not counting one held at the head).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.queued
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// The scheduler's next request. With `nothing_below` no completion will
    /// ask again, so a scheduler holding back (anticipation) without a wake
    /// time is forced: a level never stalls.
    #[inline]
    pub(crate) fn pick(&mut self, ctx: &SchedCtx, nothing_below: bool) -> Result<Pick> {
        if let Some(id) = self.sched.dispatch(ctx, false) {
            self.queued = self.queued.saturating_sub(1); // (one too many handed out shows at the end: `check_queued`)
            return Ok(Pick::Request(id));
        }
        if let Some(t) = self.sched.wake_at().filter(|&t| t > ctx.now) {
            if self.wake == Some(t) {
                return Ok(Pick::Wait);
            }
            self.wake = Some(t);
            return Ok(Pick::WakeAt(t));
        }
        if !nothing_below {
            return Ok(Pick::Wait);
        }
        self.force(ctx).map(Pick::Request)
    }

    /// A request, whatever the scheduler would rather do (a level with
    /// requests must hand one out: the drive's queue when its mechanism is free).
    pub(crate) fn force(&mut self, ctx: &SchedCtx) -> Result<ReqId> {
        let id = self.sched.dispatch(ctx, true).ok_or_else(|| Error::Invariant(format!(
            "{} queue: {} returned nothing from a forced dispatch with {} requests", self.name, self.sched.name(), self.sched.len())))?;
        self.queued = self.queued.saturating_sub(1);
        Ok(id)
    }

    /// A wake-up event fired: whether it is the one still wanted (a later
    /// `wake_at` or a reconfiguration supersedes it).
    #[inline]
    pub(crate) fn woken(&mut self, now: SimTime) -> bool {
        let due = self.wake == Some(now);
        if due {
            self.wake = None;
        }
        due
    }

    /// Request `id` (`bytes`, a write or not) leaves the level for the one
    /// below, dispatched by the scheduler or, with `bypassed`, around it.
    #[inline]
    pub(crate) fn sent(&mut self, id: ReqId, bypassed: bool, bytes: u64, write: bool) {
        if !bypassed {
            let slot = id.0 as usize;
            if slot >= self.dispatched_by.len() {
                self.dispatched_by.resize(slot + 1, 0);
            }
            self.dispatched_by[slot] = self.gen + 1;
        }
        self.counters.sent(bytes, write);
    }

    /// Request `id` of `flow` finished at the disk. Only the scheduler
    /// instance that dispatched it hears of it.
    #[inline]
    pub(crate) fn completed(&mut self, id: ReqId, flow: u32, ctx: &SchedCtx) {
        let Some(by) = self.dispatched_by.get_mut(id.0 as usize) else { return };
        if std::mem::take(by) == self.gen + 1 {
            self.sched.complete(id, ctx);
            self.classes.leave(flow, ctx.now);
        }
    }

    /// Free the scheduler's state of flows idle for the expiry time.
    #[inline]
    pub(crate) fn expire(&mut self, now: SimTime) {
        self.classes.expire(self.sched.as_mut(), now);
    }

    /// At the run's end: the scheduler holds what the router counted (a
    /// plug-in's `len` or `dispatch` gone astray shows here).
    pub(crate) fn check_queued(&self) -> Result<()> {
        if self.sched.len() == self.queued {
            return Ok(());
        }
        Err(Error::Invariant(format!("{} queue: {} holds {} requests, {} by what it was given and gave out",
                                     self.name, self.sched.name(), self.sched.len(), self.queued)))
    }

    /// Requests queued here, with one held at the head.
    #[inline]
    pub(crate) fn pending(&self) -> usize {
        self.queued + self.held.is_some() as usize
    }

    /// Record the level's length `len` at `now`.
    #[inline]
    pub(crate) fn gauge(&self, metrics: &mut Metrics, len: usize, now: SimTime) {
        if let Some(g) = self.gauge {
            g(metrics, now, len);
        }
    }

    /// Swap the scheduler for `new` (run-time reconfiguration), moving the
    /// requests queued here across in arrival order; completions of requests
    /// the old one dispatched are not reported to the new one.
    pub(crate) fn replace(&mut self, mut new: Box<dyn Scheduler>, ctx: &SchedCtx) -> Result<()> {
        self.wake = None;
        let old = &mut self.sched;
        let held = old.len();
        let mut moved = old.drain();
        if moved.len() != held || !old.is_empty() {
            return Err(Error::Invariant(format!("reconfiguration: {} drained {} of {held} requests", old.name(), moved.len())));
        }
        moved.sort_by_key(|&id| ctx.reqs.get(id).seq);
        // The new scheduler sets up the classes of the requests it takes over.
        self.classes.reset();
        self.uses_classes = new.uses_classes();
        for &id in &moved {
            if self.uses_classes {
                self.classes.enter(new.as_mut(), ctx.reqs.get(id).flow);
            }
            new.insert(id, ctx);
        }
        if new.len() != held {
            return Err(Error::Invariant(format!("reconfiguration: {} holds {} of {held} requests", new.name(), new.len())));
        }
        self.queued = held;
        self.sched = new;
        self.gen += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{HeadState, Predictor};
    use crate::host::{Request, RequestTable};

    /// A scheduler that counts completions it hears of.
    struct Counting(Vec<ReqId>, u32);
    impl Scheduler for Counting {
        fn name(&self) -> &'static str { "counting" }
        fn insert(&mut self, id: ReqId, _: &SchedCtx) { self.0.push(id) }
        fn dispatch(&mut self, _: &SchedCtx, _: bool) -> Option<ReqId> { (!self.0.is_empty()).then(|| self.0.remove(0)) }
        fn complete(&mut self, _: ReqId, _: &SchedCtx) { self.1 += 1 }
        fn drain(&mut self) -> Vec<ReqId> { std::mem::take(&mut self.0) }
        fn len(&self) -> usize { self.0.len() }
        fn counters(&self) -> Vec<(&'static str, u64)> { vec![("completed", self.1 as u64)] }
    }

    /// `n` requests and an exact belief of the Atlas 10K: what a context is made of.
    fn parts(n: u64) -> (RequestTable, Predictor, Vec<ReqId>) {
        let model = std::sync::Arc::new(crate::disk::DiskModel::new(crate::disk::builtin::resolve("atlas10k", None).unwrap()).unwrap());
        let mut reqs = RequestTable::default();
        let ids = (0..n).map(|seq| reqs.insert(Request { seq, ..Default::default() })).collect();
        (reqs, Predictor::exact(model), ids)
    }

    fn counting_level() -> QueueLevel {
        QueueLevel::new("host", Box::new(Counting(vec![], 0)), SimDuration::from_ms(1.0), 4, 4, None)
    }

    #[test]
    fn only_the_generation_that_dispatched_hears_the_completion() {
        let (reqs, predictor, ids) = parts(3);
        let ctx = SchedCtx::standalone(&reqs, &predictor, HeadState::default());
        let mut q = counting_level();
        // 0 is dispatched by the first scheduler; 1 goes around it (as a
        // bypass does); then the scheduler is replaced and 2 is dispatched by the new one.
        for id in [ids[0], ids[2]] {
            assert!(q.offer(id, 0, &ctx));
        }
        let Ok(Pick::Request(a)) = q.pick(&ctx, false) else { panic!("a request") };
        q.sent(a, false, 512, false);
        q.sent(ids[1], true, 512, false);
        q.replace(Box::new(Counting(vec![], 0)), &ctx).unwrap();
        assert_eq!(q.sched.len(), 1, "the queued request moved across");
        let Ok(Pick::Request(c)) = q.pick(&ctx, false) else { panic!("a request") };
        q.sent(c, false, 512, false);
        for id in [a, ids[1], c] {
            q.completed(id, 0, &ctx);
        }
        // Only `c` reached the new scheduler's `complete`; a second report of it is ignored.
        q.completed(c, 0, &ctx);
        assert_eq!(q.sched.counters(), vec![("completed", 1)]);
        assert_eq!((q.counters.requests, q.counters.in_flight), (2, 3));
    }

    /// The level counts what its scheduler holds; a scheduler that loses a
    /// request (here: `dispatch` hands out nothing it was given, then keeps
    /// quiet) is caught by the end-of-run check, not followed.
    #[test]
    fn the_level_counts_its_queue_and_catches_a_scheduler_that_loses_one() {
        let (reqs, predictor, ids) = parts(2);
        let ctx = SchedCtx::standalone(&reqs, &predictor, HeadState::default());
        let mut q = counting_level();
        for &id in &ids {
            assert!(q.offer(id, 0, &ctx));
        }
        assert_eq!((q.len(), q.is_empty()), (2, false));
        q.force(&ctx).unwrap();
        assert_eq!(q.len(), 1);
        q.check_queued().unwrap();
        // The scheduler drops its request behind the level's back.
        q.sched.drain();
        let e = q.check_queued().unwrap_err().to_string();
        assert!(e.contains("counting holds 0 requests, 1 by what it was given"), "{e}");
    }
}

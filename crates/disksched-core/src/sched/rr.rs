//! rr: GEOM_SCHED's per-client round robin with anticipation (Rizzo &
//! Checconi, "GEOM_SCHED: a framework for disk scheduling within GEOM",
//! 2009; FreeBSD `sys/geom/sched/gs_rr.c`).
//!
//! Each client (flow: the issuing process) has its own queue, sorted in C-SCAN order. Queues with work
//! take turns; the queue in service keeps the disk for a slice of
//! `quantum_ms` or `quantum_kb`, whichever ends first. As in gs_rr, the
//! slice's time starts at the first completion of one of the client's
//! requests, not at its first dispatch, so the client is not charged for the
//! seek to its data or for the drive finishing the previous client's work
//! (write-back destages) (`slice_from_completion`). Which completion starts
//! it changed between copies of gs_rr.c (`slice_start_when_idle`): in
//! FreeBSD 8.x's, the code of the 2009 paper, only a completion that finds the
//! client in service with its queue empty, anticipating, starts the clock, so
//! a client that always keeps requests queued (a greedy asynchronous writer)
//! is bounded by `quantum_kb` alone; later copies (and the default here)
//! start it at the client's first completion of any kind.
//!
//! When the queue in service runs dry after a read (or a write, with
//! `w_anticipate`), the scheduler does not switch at once: it idles up to
//! `wait_ms` after that request completes, betting that the client (a
//! sequential reader) is about to issue its next, nearby request. It bets
//! only on clients whose history says so (gs_rr's `g_rr_should_anticipate`):
//! not when the client's mean think time (the time between its submissions
//! while in service, each sample capped at 2 x `wait_ms`) exceeds `wait_ms`
//! (`think_test`), nor when its mean seek distance (from the end of its
//! previous request to the start of the next, each sample capped at 64 KiB)
//! exceeds `seek_dist_bytes`. Both means are gs_rr's `g_savg`: decaying
//! averages with weight 1/8, valid once 8 samples are in, sampled only once
//! the client has issued 8 requests. Time here is exact nanoseconds, not
//! FreeBSD's `hz` ticks (gs_rr rounds `wait_ms` up to at least 2 ticks).
//!
//! At most `queue_depth` requests are in flight. With `bypass`, requests skip
//! the scheduler entirely.

use super::{tunable, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;
use crate::time::{SimDuration, SimTime};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// gs_rr's `struct g_rr_params` with FreeBSD's `{min, cur, max}` (`wait_ms = { 1, 10, 30 }` ...).
pub const TUNABLES: &[Tunable] = &[
    tunable("queue_depth", "requests", 1.0, 1.0, 50.0, "most requests in flight"),
    // FreeBSD's minimum is 1; 0 is kept here to mean "never anticipate".
    tunable("wait_ms", "ms", 0.0, 10.0, 30.0, "anticipation: idle this long for the client in service; 0 = never"),
    tunable("quantum_ms", "ms", 1.0, 100.0, 500.0, "longest time slice of a client"),
    tunable("quantum_kb", "KB", 16.0, 8192.0, 65536.0, "most data per slice"),
    tunable("bypass", "bool", 0.0, 0.0, 1.0, "1 = pass every request straight through"),
    tunable("w_anticipate", "bool", 0.0, 1.0, 1.0, "anticipate after writes too"),
    // Not sysctls in gs_rr.c, but its constants, made tunable to measure their effect.
    tunable("think_test", "bool", 0.0, 1.0, 1.0,
        "1 = no anticipation for a client whose mean think time exceeds wait_ms (gs_rr's g_rr_should_anticipate)"),
    tunable("seek_dist_bytes", "bytes", 0.0, 8192.0, 1e12,
        "no anticipation for a client whose mean seek distance exceeds this (gs_rr: 8192 bytes; samples capped at 65536)"),
    tunable("slice_from_completion", "bool", 0.0, 1.0, 1.0,
        "1 = a slice's quantum_ms runs from its first completion (gs_rr), 0 = from its first dispatch"),
    tunable("slice_start_when_idle", "bool", 0.0, 0.0, 1.0,
        "with slice_from_completion: 1 = the clock starts only at a completion that finds the client's queue empty \
         while anticipating (gs_rr.c of FreeBSD 8.x, 2009), 0 = at its first completion of any kind (later gs_rr.c)"),
];

/// gs_rr caps each seek-distance sample at this (`8192 * 8` bytes).
const SEEK_SAMPLE_CAP_BYTES: u64 = 8192 * 8;

/// FreeBSD's `struct g_savg`: a decaying average with weight 1/8, in fixed
/// point (the sum is kept x8), valid after 8 samples.
#[derive(Clone, Copy, Debug, Default)]
struct Savg {
    sum: u64,
    samples: u64,
}

impl Savg {
    fn add(&mut self, sample: u64) {
        self.sum = sample + self.sum - (self.sum >> 3);
        self.samples = 1 + self.samples - (self.samples >> 3);
    }
    fn valid(&self) -> bool {
        self.samples > 7
    }
    fn read(&self) -> u64 {
        self.sum / self.samples
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Has requests (or just got one) and may be served.
    Ready,
    /// In service, empty, waiting for its in-flight request to complete.
    Busy,
    /// In service, empty, idling until `wait_end` for the client's next request.
    Idling,
}

struct ClientQueue {
    sorted: BTreeMap<(u64, u64), ReqId>,
    position: u64,
    status: Status,
    service_bytes: u64,
    /// A request of this slice has completed (gs_rr's `G_FLAG_COMPLETED`): `slice_end` is set.
    completed: bool,
    slice_end: SimTime,
    wait_end: SimTime,
    think_ns: Savg,
    seek_bytes: Savg,
    /// gs_rr's `q_bionum`: a decaying request count (reaches 8); the averages are fed only past 7.
    bionum: u32,
    /// Last submission while in service (`q_lastsub`), end of the last submitted request in bytes (`q_lastoff`).
    last_submit: SimTime,
    last_end_byte: u64,
}

/// The GEOM_SCHED round-robin scheduler (see the module doc).
pub struct Rr {
    queues: HashMap<u32, ClientQueue>,
    /// Clients with pending work waiting for their turn.
    turns: VecDeque<u32>,
    active: Option<u32>,
    in_flight: u32,
    queued: usize,
    queue_depth: u32,
    wait_ns: u64,
    quantum_ns: u64,
    quantum_bytes: u64,
    bypass: bool,
    w_anticipate: bool,
    think_test: bool,
    seek_dist_bytes: u64,
    slice_from_completion: bool,
    slice_start_when_idle: bool,
    wait_hits: u64,
    wait_misses: u64,
    wait_skipped: u64,
    classes_created: u64,
    classes_freed: u64,
}

impl Rr {
    /// A round-robin scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> Rr {
        Rr {
            queues: HashMap::new(),
            turns: VecDeque::new(),
            active: None,
            in_flight: 0,
            queued: 0,
            queue_depth: t.get("queue_depth") as u32,
            wait_ns: SimDuration::from_ms(t.get("wait_ms")).ns(),
            quantum_ns: SimDuration::from_ms(t.get("quantum_ms")).ns(),
            quantum_bytes: t.get("quantum_kb") as u64 * 1024,
            bypass: t.get("bypass") != 0.0,
            w_anticipate: t.get("w_anticipate") != 0.0,
            think_test: t.get("think_test") != 0.0,
            seek_dist_bytes: t.get("seek_dist_bytes") as u64,
            slice_from_completion: t.get("slice_from_completion") != 0.0,
            slice_start_when_idle: t.get("slice_start_when_idle") != 0.0,
            wait_hits: 0,
            wait_misses: 0,
            wait_skipped: 0,
            classes_created: 0,
            classes_freed: 0,
        }
    }

    /// The active queue gives up the disk: back in line if it has work.
    fn release_active(&mut self) {
        if let Some(c) = self.active.take() {
            let q = self.queues.get_mut(&c).unwrap();
            q.status = Status::Ready;
            if !q.sorted.is_empty() {
                self.turns.push_back(c);
            }
        }
    }

    /// gs_rr's `g_rr_should_anticipate`, less the write test: the client's history says it comes back soon and near.
    fn history_says_wait(&self, q: &ClientQueue) -> bool {
        if self.think_test && q.think_ns.valid() && q.think_ns.read() > self.wait_ns {
            return false;
        }
        !(q.seek_bytes.valid() && q.seek_bytes.read() > self.seek_dist_bytes)
    }
}

impl Scheduler for Rr {
    fn name(&self) -> &'static str {
        "rr"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn bypass(&self, _id: ReqId, _ctx: &SchedCtx) -> bool {
        self.bypass
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        if !self.queues.contains_key(&r.flow) {
            self.init_class(r.flow); // an owner that does not track classes
        }
        let active = self.active == Some(r.flow);
        let (wait_ns, sector_bytes) = (self.wait_ns, ctx.predictor.model.spec.sector_bytes as u64);
        let q = self.queues.get_mut(&r.flow).expect("class set up");
        // gs_rr's g_rr_start: the client's history, updated at each submission.
        q.bionum = 1 + q.bionum - (q.bionum >> 3);
        if active {
            let think = ctx.now.0.saturating_sub(q.last_submit.0).min(2 * wait_ns);
            q.last_submit = ctx.now;
            if q.bionum > 7 {
                q.think_ns.add(think);
            }
        }
        let (start, end) = (r.lbn * sector_bytes, r.end_lbn() * sector_bytes);
        let seek = start.abs_diff(q.last_end_byte).min(SEEK_SAMPLE_CAP_BYTES);
        q.last_end_byte = end;
        if q.bionum > 7 {
            q.seek_bytes.add(seek);
        }
        let was_empty = q.sorted.is_empty();
        q.sorted.insert((r.lbn, r.seq), id);
        self.queued += 1;
        if active {
            if q.status != Status::Ready {
                // The bet paid off: the client came back while we waited for it.
                if q.status == Status::Idling {
                    self.wait_hits += 1;
                }
                q.status = Status::Ready;
            }
        } else if was_empty {
            self.turns.push_back(r.flow);
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId> {
        if !force {
            if self.in_flight >= self.queue_depth {
                return None;
            }
            if let Some(c) = self.active {
                let q = &self.queues[&c];
                if q.status == Status::Idling && ctx.now >= q.wait_end {
                    self.wait_misses += 1;
                    self.release_active();
                } else if q.status != Status::Ready {
                    return None; // anticipating
                }
            }
        } else if self.active.is_some_and(|c| self.queues[&c].status != Status::Ready) {
            self.release_active();
        }
        let c = match self.active {
            Some(c) => c,
            None => {
                let c = self.turns.pop_front()?;
                let q = self.queues.get_mut(&c).unwrap();
                // A new slice (gs_rr's g_rr_queue_reset). Its clock starts at its first completion
                // (complete()), or here without slice_from_completion.
                q.service_bytes = 0;
                q.completed = !self.slice_from_completion;
                q.slice_end = ctx.now + SimDuration(self.quantum_ns);
                self.active = Some(c);
                c
            }
        };
        let q = self.queues.get_mut(&c).unwrap();
        // C-SCAN within the client's queue.
        let key = *q.sorted.range((q.position, 0)..).next().or_else(|| q.sorted.iter().next())?.0;
        let id = q.sorted.remove(&key).unwrap();
        self.queued -= 1;
        let r = ctx.reqs.get(id);
        q.position = r.end_lbn();
        q.service_bytes += r.blocks as u64 * ctx.predictor.model.spec.sector_bytes as u64;
        // gs_rr's g_rr_queue_expired: out of budget, or out of time once the slice's clock runs.
        let expired = q.service_bytes >= self.quantum_bytes || (q.completed && ctx.now >= q.slice_end);
        let anticipate = !force && self.wait_ns > 0 && (r.is_read() || self.w_anticipate);
        if expired {
            self.release_active();
        } else if !q.sorted.is_empty() {
            q.status = Status::Ready;
        } else if anticipate && self.history_says_wait(&self.queues[&c]) {
            self.queues.get_mut(&c).unwrap().status = Status::Busy;
        } else {
            if anticipate {
                self.wait_skipped += 1;
            }
            self.active = None;
        }
        self.in_flight += 1;
        Some(id)
    }
    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.in_flight -= 1;
        let client = ctx.reqs.get(id).flow;
        let Some(q) = self.queues.get_mut(&client) else { return };
        // gs_rr's g_rr_done: the slice's clock starts at its first completion, so the
        // client is not charged for the first seek (or for what the drive did before it);
        // with slice_start_when_idle (FreeBSD 8.x) only at one that finds it anticipating.
        let busy = self.active == Some(client) && q.status == Status::Busy;
        if !q.completed && (busy || !self.slice_start_when_idle) {
            q.completed = true;
            q.slice_end = ctx.now + SimDuration(self.quantum_ns);
        }
        if busy {
            q.status = Status::Idling;
            q.wait_end = ctx.now + SimDuration(self.wait_ns);
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        let q = &self.queues[&self.active?];
        (q.status == Status::Idling).then_some(q.wait_end)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.turns.clear();
        self.active = None;
        self.queued = 0;
        self.queues.values_mut().flat_map(|q| std::mem::take(&mut q.sorted).into_values()).collect()
    }
    fn len(&self) -> usize {
        self.queued
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("wait_hits", self.wait_hits), ("wait_misses", self.wait_misses), ("wait_skipped", self.wait_skipped),
             ("classes_created", self.classes_created), ("classes_freed", self.classes_freed)]
    }
    fn uses_classes(&self) -> bool {
        true
    }
    /// gs_rr's `g_rr_init_class`: the flow's queue.
    fn init_class(&mut self, flow: u32) {
        self.classes_created += 1;
        self.queues.insert(flow, ClientQueue {
            sorted: BTreeMap::new(),
            position: 0,
            status: Status::Ready,
            service_bytes: 0,
            completed: false,
            slice_end: SimTime::ZERO,
            wait_end: SimTime::ZERO,
            think_ns: Savg::default(),
            seek_bytes: Savg::default(),
            bionum: 0,
            last_submit: SimTime::ZERO,
            last_end_byte: 0,
        });
    }
    /// `g_rr_fini_class`: the flow is gone; its (empty) queue goes too.
    fn fini_class(&mut self, flow: u32) {
        if self.queues.get(&flow).is_some_and(|q| q.sorted.is_empty()) {
            if self.active == Some(flow) {
                self.active = None;
            }
            self.queues.remove(&flow);
            self.classes_freed += 1;
        }
    }
}

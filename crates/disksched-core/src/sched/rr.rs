//! rr: GEOM_SCHED's per-client round robin with anticipation (Rizzo &
//! Checconi, "GEOM_SCHED: a framework for disk scheduling within GEOM",
//! 2009; FreeBSD `sys/geom/sched/gs_rr.c`).
//!
//! Each client (flow: the issuing process) has its own queue, sorted in C-SCAN order. Queues with work
//! take turns; the queue in service keeps the disk for a slice of
//! `quantum_ms` or `quantum_kb`, whichever ends first. When the queue in
//! service runs dry after a read (or a write, with `w_anticipate`), the
//! scheduler does not switch at once: it idles up to `wait_ms` after that
//! request completes, betting that the client (a sequential reader) is about
//! to issue its next, nearby request. At most `queue_depth` requests are in
//! flight. With `bypass`, requests skip the scheduler entirely.

use super::{SchedCtx, Scheduler, Tunables};
use crate::host::ReqId;
use crate::time::{SimDuration, SimTime};
use std::collections::{BTreeMap, HashMap, VecDeque};

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
    slice_end: SimTime,
    wait_end: SimTime,
}

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
    wait_hits: u64,
    wait_misses: u64,
    classes_created: u64,
    classes_freed: u64,
}

impl Rr {
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
            wait_hits: 0,
            wait_misses: 0,
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
}

impl Scheduler for Rr {
    fn name(&self) -> &'static str {
        "rr"
    }
    fn bypass(&self, _id: ReqId, _ctx: &SchedCtx) -> bool {
        self.bypass
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        if !self.queues.contains_key(&r.flow) {
            self.init_class(r.flow); // an owner that does not track classes
        }
        let q = self.queues.get_mut(&r.flow).expect("class set up");
        let was_empty = q.sorted.is_empty();
        q.sorted.insert((r.lbn, r.seq), id);
        self.queued += 1;
        if self.active == Some(r.flow) {
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
                q.service_bytes = 0;
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
        let expired = q.service_bytes >= self.quantum_bytes || ctx.now >= q.slice_end;
        if expired {
            self.release_active();
        } else if !q.sorted.is_empty() {
            q.status = Status::Ready;
        } else if !force && self.wait_ns > 0 && (r.is_read() || self.w_anticipate) {
            q.status = Status::Busy;
        } else {
            self.active = None;
        }
        self.in_flight += 1;
        Some(id)
    }
    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.in_flight -= 1;
        let client = ctx.reqs.get(id).flow;
        if self.active == Some(client) {
            let q = self.queues.get_mut(&client).unwrap();
            if q.status == Status::Busy {
                q.status = Status::Idling;
                q.wait_end = ctx.now + SimDuration(self.wait_ns);
            }
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
        vec![("wait_hits", self.wait_hits), ("wait_misses", self.wait_misses),
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
            slice_end: SimTime::ZERO,
            wait_end: SimTime::ZERO,
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

//! Anticipatory scheduling (Iyer & Druschel, "Anticipatory scheduling: a disk
//! scheduling framework to overcome deceptive idleness in synchronous I/O",
//! SOSP 2001; Linux's former `as-iosched.c`).
//!
//! Requests are served in C-LOOK order. When a read completes and its client
//! has nothing else queued, the disk is "deceptively idle": the client is
//! probably about to issue its next, nearby read. If the client's history
//! says so (its mean think time is below `antic_expire_ms`, and its requests
//! land nearer the heads than the best pending request), the scheduler keeps
//! the disk idle for up to `antic_expire_ms` waiting for it.

use super::{SchedCtx, Scheduler, Tunables};
use crate::host::ReqId;
use crate::time::{SimDuration, SimTime};
use std::collections::{BTreeMap, HashMap};

/// What a client's past says about its next request (exponential averages, weight 1/8 as in Linux AS).
#[derive(Clone, Copy, Debug, Default)]
struct History {
    think_ns: f64,
    seek_blocks: f64,
    samples: u32,
    last_done: Option<SimTime>,
    last_end_lbn: u64,
}

pub struct Anticipatory {
    by_lbn: BTreeMap<(u64, u64), ReqId>,
    position: u64,
    clients: HashMap<u32, History>,
    /// The client anticipated and until when.
    waiting: Option<(u32, SimTime)>,
    expire_ns: u64,
    hits: u64,
    misses: u64,
}

impl Anticipatory {
    pub fn new(t: &Tunables) -> Anticipatory {
        Anticipatory {
            by_lbn: BTreeMap::new(),
            position: 0,
            clients: HashMap::new(),
            waiting: None,
            expire_ns: SimDuration::from_ms(t.get("antic_expire_ms")).ns(),
            hits: 0,
            misses: 0,
        }
    }

    fn next_key(&self) -> Option<(u64, u64)> {
        self.by_lbn.range((self.position, 0)..).next().or_else(|| self.by_lbn.iter().next()).map(|(k, _)| *k)
    }
}

const WEIGHT: f64 = 1.0 / 8.0;

impl Scheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_lbn.insert((r.lbn, r.seq), id);
        let h = self.clients.entry(r.flow).or_default();
        if let Some(done) = h.last_done {
            let think = ctx.now.0.saturating_sub(done.0) as f64;
            let seek = r.lbn.abs_diff(h.last_end_lbn) as f64;
            h.think_ns = if h.samples == 0 { think } else { h.think_ns + WEIGHT * (think - h.think_ns) };
            h.seek_blocks = if h.samples == 0 { seek } else { h.seek_blocks + WEIGHT * (seek - h.seek_blocks) };
            h.samples += 1;
            h.last_done = None;
        }
        if self.waiting.is_some_and(|(c, _)| c == r.flow) {
            self.hits += 1;
            self.waiting = None;
            self.position = r.lbn; // serve the anticipated request next
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId> {
        if let Some((_, until)) = self.waiting {
            if !force && ctx.now < until {
                return None;
            }
            self.misses += 1;
            self.waiting = None;
        }
        let key = self.next_key()?;
        let id = self.by_lbn.remove(&key)?;
        self.position = ctx.reqs.get(id).end_lbn();
        Some(id)
    }
    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        let h = self.clients.entry(r.flow).or_default();
        h.last_done = Some(ctx.now);
        h.last_end_lbn = r.end_lbn();
        if r.is_write || self.expire_ns == 0 || self.by_lbn.values().any(|&q| ctx.reqs.get(q).flow == r.flow) {
            return;
        }
        // Worth waiting only if this client has been quick and close.
        let (quick, near) = (h.samples >= 2 && h.think_ns < self.expire_ns as f64, h.seek_blocks as u64);
        let best_other = self.next_key().map_or(u64::MAX, |k| k.0.abs_diff(r.end_lbn()));
        if quick && near < best_other {
            self.waiting = Some((r.flow, ctx.now + SimDuration(self.expire_ns)));
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.waiting.map(|(_, t)| t)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.waiting = None;
        std::mem::take(&mut self.by_lbn).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_lbn.len()
    }
    fn uses_classes(&self) -> bool {
        true
    }
    /// The flow is gone: forget its history.
    fn fini_class(&mut self, flow: u32) {
        self.clients.remove(&flow);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("antic_hits", self.hits), ("antic_misses", self.misses)]
    }
}

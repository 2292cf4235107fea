//! Anticipatory scheduling (Iyer & Druschel, "Anticipatory scheduling: a disk
//! scheduling framework to overcome deceptive idleness in synchronous I/O",
//! SOSP 2001; Linux 2.6's `block/as-iosched.c`).
//!
//! Reads and writes are kept apart, each in C-LOOK order and in a FIFO with
//! a deadline (`read_expire_ms`, `write_expire_ms` after arrival). The disk
//! serves batches of one direction: a read batch lasts `read_batch_expire_ms`
//! from its first completion, a write batch `write_batch_expire_ms` from its
//! start or a number of writes that adapts to how long the last write batch
//! really took (Linux's `write_batch_count`); when a batch is over and the
//! other direction has work, the direction changes, after the last batch's
//! requests have completed. Within a batch, when the head of the FIFO is past
//! its deadline it is served next; as in Linux, the FIFO is looked at no more
//! often than once per expiry time (`last_check_fifo`).
//!
//! When a read completes during a read batch and its client has nothing else
//! queued, the disk is "deceptively idle": the client is probably about to
//! issue its next, nearby read. If the client's history says so (its mean
//! think time is below `antic_expire_ms`, and its requests land nearer the
//! heads than the best pending request), the scheduler keeps the disk idle
//! for up to `antic_expire_ms` waiting for it; an expired read ends the wait.
//!
//! Left out of Linux's AS: its elevator's limited backward seeks
//! (`back_seek_max`; here C-LOOK), its per-process exit tracking, and the
//! breaking of anticipation by another process's close request.

use super::{tunable, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;
use crate::time::{SimDuration, SimTime};
use std::collections::{BTreeMap, HashMap};

/// Linux as-iosched's defaults at HZ = 1000 (`Documentation/block/as-iosched.txt`).
pub const TUNABLES: &[Tunable] = &[
    tunable("antic_expire_ms", "ms", 0.0, 6.0, 100.0, "longest wait for the anticipated request; 0 = no anticipation"),
    tunable("read_expire_ms", "ms", 1.0, 125.0, 600_000.0, "a read's deadline after arrival"),
    tunable("write_expire_ms", "ms", 1.0, 250.0, 600_000.0, "a write's deadline after arrival"),
    tunable("read_batch_expire_ms", "ms", 1.0, 500.0, 600_000.0, "longest read batch while writes wait (from its first completion)"),
    tunable("write_batch_expire_ms", "ms", 1.0, 125.0, 600_000.0, "longest write batch while reads wait"),
];

const READ: usize = 0;
const WRITE: usize = 1;

/// What a client's past says about its next request (exponential averages, weight 1/8 as in Linux AS).
#[derive(Clone, Copy, Debug, Default)]
struct History {
    think_ns: f64,
    seek_blocks: f64,
    samples: u32,
    last_done: Option<SimTime>,
    last_end_lbn: u64,
}

/// The anticipatory scheduler (see the module doc).
pub struct Anticipatory {
    /// Per direction: C-LOOK order, and arrival (FIFO) order.
    sorted: [BTreeMap<(u64, u64), ReqId>; 2],
    fifo: [BTreeMap<u64, ReqId>; 2],
    position: u64,
    clients: HashMap<u32, History>,
    /// The client anticipated and until when.
    waiting: Option<(u32, SimTime)>,
    antic_ns: u64,
    expire_ns: [u64; 2],
    batch_expire_ns: [u64; 2],
    batch_dir: usize,
    batch_ends: SimTime,
    /// A read batch's clock starts at its first completion (Linux's `new_batch`).
    new_batch: bool,
    /// The direction changed: wait for the last batch's requests to finish.
    changed_batch: bool,
    write_batch_count: u64,
    current_write_count: u64,
    write_batch_idled: bool,
    last_check_fifo: [SimTime; 2],
    in_flight: u32,
    hits: u64,
    misses: u64,
    expired: u64,
    batches: [u64; 2],
}

impl Anticipatory {
    /// An anticipatory scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> Anticipatory {
        let ns = |name| SimDuration::from_ms(t.get(name)).ns();
        let write_batch_ns = ns("write_batch_expire_ms");
        Anticipatory {
            sorted: Default::default(),
            fifo: Default::default(),
            position: 0,
            clients: HashMap::new(),
            waiting: None,
            antic_ns: ns("antic_expire_ms"),
            expire_ns: [ns("read_expire_ms"), ns("write_expire_ms")],
            batch_expire_ns: [ns("read_batch_expire_ms"), write_batch_ns],
            batch_dir: READ,
            batch_ends: SimTime::ZERO,
            new_batch: false,
            changed_batch: false,
            // Linux: batch_expire[ASYNC] / 10 (in jiffies = ms), at least 2.
            write_batch_count: (write_batch_ns / 10_000_000).max(2),
            current_write_count: 0,
            write_batch_idled: false,
            last_check_fifo: [SimTime::ZERO; 2],
            in_flight: 0,
            hits: 0,
            misses: 0,
            expired: 0,
            batches: [0; 2],
        }
    }

    /// The next request of `dir` in C-LOOK order from the heads.
    fn next_in(&self, dir: usize) -> Option<ReqId> {
        let s = &self.sorted[dir];
        s.range((self.position, 0)..).next().or_else(|| s.iter().next()).map(|(_, &id)| id)
    }

    fn fifo_head(&self, dir: usize) -> Option<ReqId> {
        self.fifo[dir].values().next().copied()
    }

    /// Linux's `as_fifo_expired`: at most once per expiry time, is the FIFO head past its deadline?
    fn fifo_expired(&mut self, dir: usize, ctx: &SchedCtx) -> bool {
        if ctx.now.0.abs_diff(self.last_check_fifo[dir].0) < self.expire_ns[dir] {
            return false;
        }
        self.last_check_fifo[dir] = ctx.now;
        self.fifo_head(dir).is_some_and(|id| ctx.now.0 > ctx.reqs.get(id).arrival.0 + self.expire_ns[dir])
    }

    /// Linux's `as_batch_expired`.
    fn batch_expired(&self, now: SimTime) -> bool {
        if self.changed_batch || self.new_batch {
            return false;
        }
        now > self.batch_ends || (self.batch_dir == WRITE && self.current_write_count == 0)
    }

    /// Linux's `update_write_batch`, at the first completion of a read batch:
    /// fewer writes per batch if the last one overran its time, more if it finished early.
    fn update_write_batch(&mut self, now: SimTime) {
        let batch = self.batch_expire_ns[WRITE] as i128;
        let write_time = (now.0 as i128 - self.batch_ends.0 as i128 + batch).max(0);
        if write_time > batch && !self.write_batch_idled {
            if write_time > batch * 3 {
                self.write_batch_count /= 2;
            } else {
                self.write_batch_count = self.write_batch_count.saturating_sub(1);
            }
        } else if write_time < batch && self.current_write_count == 0 {
            if batch > write_time * 3 {
                self.write_batch_count *= 2;
            } else {
                self.write_batch_count += 1;
            }
        }
        self.write_batch_count = self.write_batch_count.max(1);
    }

    fn remove(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        let dir = r.is_write as usize;
        self.sorted[dir].remove(&(r.lbn, r.seq));
        self.fifo[dir].remove(&r.seq);
    }

    fn start_batch(&mut self, dir: usize, ctx: &SchedCtx) -> Option<ReqId> {
        if self.batch_dir != dir {
            self.changed_batch = true;
        }
        if dir == WRITE {
            self.new_batch = false;
            self.current_write_count = self.write_batch_count;
            self.write_batch_idled = false;
        }
        self.batch_dir = dir;
        self.last_check_fifo[dir] = ctx.now;
        self.fifo_head(dir)
    }
}

const WEIGHT: f64 = 1.0 / 8.0;

impl Scheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        let dir = r.is_write as usize;
        self.sorted[dir].insert((r.lbn, r.seq), id);
        self.fifo[dir].insert(r.seq, id);
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
            if !r.is_write {
                self.position = r.lbn; // serve the anticipated request next
            }
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId> {
        let (reads, writes) = (!self.fifo[READ].is_empty(), !self.fifo[WRITE].is_empty());
        // An uncontended write batch cannot be timed (Linux: write_batch_idled).
        if self.batch_dir == WRITE && !reads && (self.current_write_count == 0 || !writes) {
            self.write_batch_idled = true;
        }
        if let Some((_, until)) = self.waiting {
            // Linux does not look at the FIFOs while it waits (at most antic_expire_ms).
            if !force && ctx.now < until {
                return None;
            }
            if ctx.now >= until {
                self.misses += 1;
            }
            self.waiting = None;
        }
        if !(reads || writes) || (self.changed_batch && self.in_flight > 0 && !force) {
            return None;
        }
        let mut pick = None;
        if !(reads && writes && self.batch_expired(ctx.now)) {
            // The batch runs on (or only one direction has work).
            pick = self.next_in(self.batch_dir);
            if pick.is_some() && reads && !writes && self.batch_dir == READ {
                self.batch_ends = ctx.now + SimDuration(self.batch_expire_ns[READ]);
            }
        }
        if pick.is_none() {
            // A new batch: after reads, writes if there are any; else reads.
            let dir = if reads && !(writes && self.batch_dir == READ) { READ } else { WRITE };
            pick = self.start_batch(dir, ctx);
        }
        let dir = self.batch_dir;
        if self.fifo_expired(dir, ctx) {
            pick = self.fifo_head(dir);
            self.expired += 1;
        }
        if self.changed_batch {
            if self.in_flight > 0 && !force {
                return None; // the last batch's requests finish first
            }
            self.begin_changed_batch(ctx.now);
        }
        self.send(pick?, ctx)
    }
    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let r = ctx.reqs.get(id);
        if self.changed_batch && self.in_flight == 0 {
            // The last batch has drained: the new one starts (Linux's as_completed_request).
            self.begin_changed_batch(ctx.now);
        }
        if self.new_batch && self.batch_dir == r.is_write as usize {
            // The read batch's clock starts now; the write batch before it is timed.
            self.update_write_batch(ctx.now);
            self.batch_ends = ctx.now + SimDuration(self.batch_expire_ns[READ]);
            self.new_batch = false;
        }
        let h = self.clients.entry(r.flow).or_default();
        h.last_done = Some(ctx.now);
        h.last_end_lbn = r.end_lbn();
        if r.is_write || self.antic_ns == 0 || self.batch_dir != READ
            || self.sorted[READ].values().any(|&q| ctx.reqs.get(q).flow == r.flow) {
            return;
        }
        // Worth waiting only if this client has been quick and close.
        let (quick, near) = (h.samples >= 2 && h.think_ns < self.antic_ns as f64, h.seek_blocks as u64);
        let best_other = self.next_in(READ).map_or(u64::MAX, |q| ctx.reqs.get(q).lbn.abs_diff(r.end_lbn()));
        if quick && near < best_other {
            self.waiting = Some((r.flow, ctx.now + SimDuration(self.antic_ns)));
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.waiting.map(|(_, t)| t)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.waiting = None;
        self.fifo = Default::default();
        let [r, w] = std::mem::take(&mut self.sorted);
        r.into_values().chain(w.into_values()).collect()
    }
    fn len(&self) -> usize {
        self.fifo[READ].len() + self.fifo[WRITE].len()
    }
    fn uses_classes(&self) -> bool {
        true
    }
    /// The flow is gone: forget its history.
    fn fini_class(&mut self, flow: u32) {
        self.clients.remove(&flow);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("antic_hits", self.hits), ("antic_misses", self.misses), ("fifo_expired", self.expired),
             ("read_batches", self.batches[READ]), ("write_batches", self.batches[WRITE])]
    }
}

impl Anticipatory {
    /// The direction has changed and nothing of the last batch is in flight: the
    /// write batch's clock starts now, the read batch's at its first completion.
    fn begin_changed_batch(&mut self, now: SimTime) {
        let dir = self.batch_dir;
        if dir == WRITE {
            self.batch_ends = now + SimDuration(self.batch_expire_ns[WRITE]);
        } else {
            self.new_batch = true;
        }
        self.changed_batch = false;
        self.batches[dir] += 1;
    }

    fn send(&mut self, id: ReqId, ctx: &SchedCtx) -> Option<ReqId> {
        self.remove(id, ctx);
        let r = ctx.reqs.get(id);
        self.position = r.end_lbn();
        if r.is_write {
            self.current_write_count = self.current_write_count.saturating_sub(1);
        }
        self.in_flight += 1;
        Some(id)
    }
}

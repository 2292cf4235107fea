//! mq-deadline, as Linux `block/mq-deadline.c` defines it: reads and writes
//! each kept sorted by sector and in FIFO order with an expiry time
//! (`read_expire`, `write_expire`). Requests go out in sector order in
//! batches of up to `fifo_batch`; at a batch boundary reads are preferred
//! unless writes have been passed over `writes_starved` times; if the chosen
//! direction's oldest request has expired (or no request lies ahead of the
//! last position) the batch restarts from the FIFO head.

use super::{tunable, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;
use crate::time::SimDuration;
use std::collections::BTreeMap;

#[derive(Default)]
struct Direction {
    sorted: BTreeMap<(u64, u64), ReqId>,
    /// (seq) -> (expiry ns, lbn): arrival order is seq order.
    fifo: BTreeMap<u64, (u64, u64)>,
    expire_ns: u64,
}

/// Linux mq-deadline's defaults (`block/mq-deadline.c`).
pub const TUNABLES: &[Tunable] = &[
    tunable("read_expire_ms", "ms", 1.0, 500.0, 600_000.0, "a read's deadline after arrival"),
    tunable("write_expire_ms", "ms", 1.0, 5000.0, 600_000.0, "a write's deadline after arrival"),
    tunable("fifo_batch", "requests", 1.0, 16.0, 4096.0, "requests per sector-ordered batch"),
    tunable("writes_starved", "batches", 0.0, 2.0, 1024.0, "read batches allowed ahead of waiting writes"),
];

/// The mq-deadline scheduler (see the module doc).
pub struct MqDeadline {
    dirs: [Direction; 2], // [reads, writes]
    fifo_batch: u32,
    writes_starved: u32,
    batching: u32,
    starved: u32,
    last_dir: usize,
    /// Per direction: the sector just past the last request dispatched (`latest_pos`).
    latest_pos: [Option<u64>; 2],
}

impl MqDeadline {
    /// An mq-deadline scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> MqDeadline {
        let mut dirs: [Direction; 2] = Default::default();
        dirs[0].expire_ns = SimDuration::from_ms(t.get("read_expire_ms")).ns();
        dirs[1].expire_ns = SimDuration::from_ms(t.get("write_expire_ms")).ns();
        MqDeadline {
            dirs,
            fifo_batch: t.get("fifo_batch") as u32,
            writes_starved: t.get("writes_starved") as u32,
            batching: 0,
            starved: 0,
            last_dir: 0,
            latest_pos: [None; 2],
        }
    }

    fn take(&mut self, dir: usize, key: (u64, u64), ctx: &SchedCtx) -> Option<ReqId> {
        let d = &mut self.dirs[dir];
        let id = d.sorted.remove(&key)?;
        d.fifo.remove(&key.1);
        self.last_dir = dir;
        self.latest_pos[dir] = Some(ctx.reqs.get(id).end_lbn());
        self.batching += 1;
        Some(id)
    }
}

impl Scheduler for MqDeadline {
    fn name(&self) -> &'static str {
        "mq_deadline"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        let d = &mut self.dirs[r.is_write as usize];
        d.sorted.insert((r.lbn, r.seq), id);
        d.fifo.insert(r.seq, (ctx.now.0 + d.expire_ns, r.lbn));
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        // Continue the batch in sector order.
        if self.batching < self.fifo_batch {
            if let Some(pos) = self.latest_pos[self.last_dir] {
                let d = &self.dirs[self.last_dir];
                if let Some((&key, _)) = d.sorted.range((pos, 0)..).next() {
                    return self.take(self.last_dir, key, ctx);
                }
            }
        }
        // A new batch: pick the direction.
        let (reads, writes) = (!self.dirs[0].sorted.is_empty(), !self.dirs[1].sorted.is_empty());
        let dir = if reads && (!writes || self.starved < self.writes_starved) {
            if writes {
                self.starved += 1;
            }
            0
        } else if writes {
            self.starved = 0;
            1
        } else {
            return None;
        };
        self.batching = 0;
        let d = &self.dirs[dir];
        let (&oldest_seq, &(expiry, oldest_lbn)) = d.fifo.first_key_value()?;
        let ahead = self.latest_pos[dir]
            .and_then(|pos| d.sorted.range((pos, 0)..).next().map(|(k, _)| *k));
        let key = match ahead {
            Some(k) if ctx.now.0 < expiry => k,
            _ => (oldest_lbn, oldest_seq),
        };
        self.take(dir, key, ctx)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.dirs.iter_mut().flat_map(|d| { d.fifo.clear(); std::mem::take(&mut d.sorted).into_values() }).collect()
    }
    fn len(&self) -> usize {
        self.dirs[0].sorted.len() + self.dirs[1].sorted.len()
    }
}

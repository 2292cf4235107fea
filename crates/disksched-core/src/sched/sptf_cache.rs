//! Cache-aware SPTF (Worthington, Ganger & Patt 1994, "Scheduling
//! algorithms for modern disk drives": SPTF that knows the drive's buffer).
//! In the drive's firmware the scheduler sees its own cache: a read whose
//! blocks are all in a segment costs only the hit overhead, and is preferred
//! over any media access that takes longer. Everything else is SPTF.
//!
//! Hits are found from the segments (a handful) through an LBN index of
//! the pending reads, not by testing every request. Outside the drive (no
//! `ctx.cache`) it is plain SPTF. The buffer is seen as of the last command:
//! blocks a running read-ahead has fetched since are not yet counted.

use super::sptf::best;
use super::{ByCylinder, SchedCtx, Scheduler, HeadsRead};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The cache-aware SPTF scheduler (see the module doc).
pub struct SptfCache {
    by_cyl: ByCylinder,
    /// Pending reads by (first LBN, seq).
    reads: BTreeMap<(u64, u64), ReqId>,
    hits: u64,
}

impl SptfCache {
    /// The oldest pending read wholly in the buffer, if any.
    fn best_hit(&self, ctx: &SchedCtx) -> Option<(u64, ReqId)> {
        let cache = ctx.cache?;
        let spec = &ctx.predictor.model.spec.controller;
        let mut best: Option<(u64, ReqId)> = None;
        for (_, seg) in cache.readable(spec.read_hits_on_write_data) {
            for (&(lbn, seq), &id) in self.reads.range((seg.lo, 0)..(seg.hi, 0)) {
                let r = ctx.reqs.get(id);
                if lbn + r.blocks as u64 <= seg.hi && best.is_none_or(|(s, _)| seq < s) {
                    best = Some((seq, id));
                }
            }
        }
        best
    }
}

impl Scheduler for SptfCache {
    fn name(&self) -> &'static str {
        "sptf_cache"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(super::cyl_key(r), id);
        if r.is_read() {
            self.reads.insert((r.lbn, r.seq), id);
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let media = best(&self.by_cyl, ctx);
        let hit = self.best_hit(ctx).filter(|&(_, id)| {
            let last_was_write = ctx.head_for(ctx.reqs.get(id)).last_was_write;
            let hit_ns = ctx.predictor.model.controller.hit_overhead_ns[0][last_was_write as usize];
            media.is_none_or(|(_, positioning_ns)| hit_ns <= positioning_ns)
        });
        let id = match (hit, media) {
            (Some((_, id)), _) => {
                self.hits += 1;
                id
            }
            (None, Some((key, _))) => self.by_cyl[&key],
            (None, None) => return None,
        };
        let r = ctx.reqs.get(id);
        self.by_cyl.remove(&super::cyl_key(r));
        self.reads.remove(&(r.lbn, r.seq));
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.reads.clear();
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("cache_hits_chosen", self.hits)]
    }
}

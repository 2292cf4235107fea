//! SPTF: shortest positioning time first (Seltzer et al. 1990; Jacobson &
//! Wilkes 1991 "SATF"). Every pending request's seek plus rotational latency
//! is predicted from the believed head state; the least wins, ties to the
//! older request.
//!
//! Requests are kept sorted by cylinder and the search walks outwards from
//! the heads' cylinder, stopping on each side once the seek time alone (a
//! monotone lower bound on the positioning time) exceeds the best found; at
//! deep queues only a few cylinders around the heads are examined.

use super::{SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct Sptf {
    by_cyl: BTreeMap<(u32, u64), ReqId>,
}

impl Sptf {
    /// Key of the request with the least positioning time (ties: the older).
    pub(crate) fn best(by_cyl: &BTreeMap<(u32, u64), ReqId>, ctx: &SchedCtx) -> Option<(u32, u64)> {
        let head = &ctx.head;
        let phase = ctx.predictor.phase_at(head.time);
        let mut best: Option<(u64, u64, (u32, u64))> = None;
        let c = head.cylinder;
        let mut up = by_cyl.range((c, 0)..).peekable();
        let mut down = by_cyl.range(..(c, 0)).rev().peekable();
        loop {
            let bound = best.map_or(u64::MAX, |b| b.0);
            let up_next = up.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(k.0 - c) <= bound);
            let down_next = down.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(c - k.0) <= bound);
            // Advance the side whose next cylinder is nearer.
            let take_up = match (up_next, down_next) {
                (Some(u), Some(d)) => u.0 .0 - c <= c - d.0 .0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (&key, &id) = if take_up { up.next().unwrap() } else { down.next().unwrap() };
            let r = ctx.reqs.get(id);
            let cost = ctx.predictor.positioning(head, phase, &r.target, r.is_write).total_ns();
            if best.is_none_or(|(c, s, _)| (cost, r.seq) < (c, s)) {
                best = Some((cost, r.seq, key));
            }
        }
        best.map(|b| b.2)
    }
}

impl Scheduler for Sptf {
    fn name(&self) -> &'static str {
        "sptf"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert((r.target.cylinder, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let key = Self::best(&self.by_cyl, ctx)?;
        self.by_cyl.remove(&key)
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

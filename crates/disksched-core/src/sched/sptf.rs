//! SPTF: shortest positioning time first (Seltzer et al. 1990; Jacobson &
//! Wilkes 1991 "SATF"). Every pending request's seek plus rotational latency
//! is predicted from the believed head state; the least wins, ties to the
//! older request.
//!
//! Requests are kept sorted by cylinder and the search walks outwards from
//! the heads' cylinder, stopping on each side once the seek time alone (a
//! monotone lower bound on the positioning time) exceeds the best found; at
//! deep queues only a few cylinders around the heads are examined.

use super::{cyl_key, disks_of, outward, ByCylinder, CylKey, SchedCtx, Scheduler, HeadsRead};
use crate::disk::{HeadState, Positioning};
use crate::host::{ReqId, Request};

/// Visit pending requests nearest-cylinder-first, predicting each one's
/// positioning from its own disk's believed heads (one disk after another
/// over an array). `visit` returns the current bound: cylinders whose seek
/// time alone exceeds it are not visited.
pub(crate) fn scan_outward(by_cyl: &ByCylinder, ctx: &SchedCtx,
                           mut visit: impl FnMut(CylKey, &Request, Positioning) -> u64) {
    let mut bound = u64::MAX;
    for disk in disks_of(by_cyl) {
        let head = ctx.head_of(disk);
        let phase = ctx.predictor.phase_at(head.time);
        let c = head.cylinder;
        let (mut up, mut down) = outward(by_cyl, disk, c);
        // Each side's next request with its seek floor, worked out once as the side moves on.
        let with_floor = |(&key, &id): (&CylKey, &ReqId)| (key, id, ctx.predictor.seek_floor_ns(key.1.abs_diff(c)));
        let (mut next_up, mut next_down) = (up.next().map(with_floor), down.next().map(with_floor));
        loop {
            let (u, d) = (next_up.filter(|n| n.2 <= bound), next_down.filter(|n| n.2 <= bound));
            let (key, id, _) = match (u, d) {
                (Some(u), d) if d.is_none_or(|d| u.0 .1 - c <= c - d.0 .1) => {
                    next_up = up.next().map(with_floor);
                    u
                }
                (_, Some(d)) => {
                    next_down = down.next().map(with_floor);
                    d
                }
                _ => break,
            };
            let r = ctx.reqs.get(id);
            bound = visit(key, r, ctx.predictor.positioning(head, phase, &r.target, r.is_write, r.blocks));
        }
    }
}

/// Up to this many requests, `best` predicts every one rather than set up
/// the outward walk (its two tree searches cost more than the few
/// predictions its bound would save).
const SCAN_ALL_UP_TO: usize = 8;

/// Key of the request with the least positioning time (ties: the older).
pub(crate) fn best(by_cyl: &ByCylinder, ctx: &SchedCtx) -> Option<(CylKey, u64)> {
    if by_cyl.len() == 1 {
        // The only request (a shallow queue's usual case): no walk to set up.
        let (&key, &id) = by_cyl.first_key_value()?;
        let (r, head) = (ctx.reqs.get(id), ctx.head_of(key.0));
        let p = ctx.predictor.positioning(head, ctx.predictor.phase_at(head.time), &r.target, r.is_write, r.blocks);
        return Some((key, p.total_ns()));
    }
    let mut best: Option<(u64, u64, CylKey)> = None;
    if by_cyl.len() <= SCAN_ALL_UP_TO {
        // Every request predicted, in key order (the least cost and its ties
        // do not depend on the order: the walk's answer).
        let mut at: Option<(u32, &HeadState, u64)> = None;
        for (&key, &id) in by_cyl.iter() {
            if at.is_none_or(|(disk, _, _)| disk != key.0) {
                let head = ctx.head_of(key.0);
                at = Some((key.0, head, ctx.predictor.phase_at(head.time)));
            }
            let (_, head, phase) = at.expect("set above");
            let r = ctx.reqs.get(id);
            let cost = ctx.predictor.positioning(head, phase, &r.target, r.is_write, r.blocks).total_ns();
            if best.is_none_or(|(c, s, _)| (cost, r.seq) < (c, s)) {
                best = Some((cost, r.seq, key));
            }
        }
        return best.map(|b| (b.2, b.0));
    }
    scan_outward(by_cyl, ctx, |key, r, p| {
        let cost = p.total_ns();
        if best.is_none_or(|(c, s, _)| (cost, r.seq) < (c, s)) {
            best = Some((cost, r.seq, key));
        }
        best.map_or(u64::MAX, |b| b.0)
    });
    best.map(|b| (b.2, b.0))
}

#[derive(Default)]
/// The SPTF scheduler (see the module doc).
pub struct Sptf {
    by_cyl: ByCylinder,
}

impl Scheduler for Sptf {
    fn name(&self) -> &'static str {
        "sptf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(cyl_key(r), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        if self.by_cyl.len() == 1 {
            // One request is the shortest whatever its positioning: not predicted.
            return self.by_cyl.pop_first().map(|(_, id)| id);
        }
        let (key, _) = best(&self.by_cyl, ctx)?;
        self.by_cyl.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

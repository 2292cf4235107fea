//! HRS: the hierarchical range scheduler of Anand et al. (OSDI 2008). SPTF
//! over the pending set, where a range request's positioning time is that of
//! its best acceptable start: for each request, its candidate tracks are
//! visited nearest-cylinder-first and pruned by seek time, and on each track
//! the best start is the first one the head reaches after the seek (no start
//! is visited one by one). Ordinary requests are SPTF's. The drive then
//! places the chosen request at the start found here (`host::range`).

use super::sptf::scan_outward;
use super::{ByCylinder, SchedCtx, Scheduler, HeadsRead};
use crate::host::range::{best_start, Choice};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The HRS range scheduler (see the module doc).
pub struct Hrs {
    plain: ByCylinder,
    /// Range requests by seq.
    ranged: BTreeMap<u64, ReqId>,
}

/// The least `Choice` over a pending set: ordinary requests (SPTF's index) and range requests.
pub(crate) fn best_choice(plain: &ByCylinder, ranged: &BTreeMap<u64, ReqId>, ctx: &SchedCtx) -> Option<(Choice, ReqId)> {
    let mut best: Option<(Choice, ReqId)> = None;
    scan_outward(plain, ctx, |key, r, p| {
        let c = Choice { claimed: false, positioning_ns: p.total_ns(), seq: r.seq, lbn: r.lbn };
        if best.is_none_or(|(b, _)| c < b) {
            best = Some((c, plain[&key]));
        }
        best.map_or(u64::MAX, |b| b.0.positioning_ns)
    });
    for &id in ranged.values() {
        let r = ctx.reqs.get(id);
        let targets = r.range.as_deref().expect("a range request");
        let head = ctx.head_for(r);
        let phase = ctx.predictor.phase_at(head.time);
        if let Some(c) = best_start(r, targets, head, phase, ctx.predictor, ctx.claims, best.map(|b| b.0)) {
            best = Some((c, id));
        }
    }
    best
}

impl Scheduler for Hrs {
    fn name(&self) -> &'static str {
        "hrs"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        if r.range.is_some() {
            self.ranged.insert(r.seq, id);
        } else {
            self.plain.insert(super::cyl_key(r), id);
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let (c, id) = best_choice(&self.plain, &self.ranged, ctx)?;
        let r = ctx.reqs.get(id);
        if r.range.is_some() { self.ranged.remove(&c.seq) } else { self.plain.remove(&super::cyl_key(r)) }
    }
    fn drain(&mut self) -> Vec<ReqId> {
        let mut v: Vec<ReqId> = self.plain.drain();
        v.extend(std::mem::take(&mut self.ranged).into_values());
        v
    }
    fn len(&self) -> usize {
        self.plain.len() + self.ranged.len()
    }
}

//! Aged SPTF (Jacobson & Wilkes 1991 "ASATF"; Worthington, Ganger & Patt
//! 1994): each request's effective cost is its positioning time minus
//! `aging_weight` times how long it has waited, bounding starvation.
//! Weight 0 is SPTF; large weights approach FCFS.

use super::{SchedCtx, Scheduler, Tunables};
use crate::host::ReqId;

pub struct Asptf {
    pending: Vec<ReqId>,
    weight: f64,
}

impl Asptf {
    pub fn new(t: &Tunables) -> Asptf {
        Asptf { pending: Vec::new(), weight: t.get("aging_weight") }
    }
}

impl Scheduler for Asptf {
    fn name(&self) -> &'static str {
        "asptf"
    }
    fn insert(&mut self, id: ReqId, _ctx: &SchedCtx) {
        self.pending.push(id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        // Aging breaks SPTF's seek-time pruning bound, so every request is predicted.
        let phase = ctx.predictor.phase_at(ctx.head.time);
        let (i, _) = self.pending.iter().enumerate().map(|(i, &id)| {
            let r = ctx.reqs.get(id);
            let pos = ctx.predictor.positioning(&ctx.head, phase, &r.target, r.is_write).total_ns() as f64;
            let waited = ctx.now.0.saturating_sub(r.arrival.0) as f64;
            (i, (pos - self.weight * waited, r.seq))
        }).min_by(|a, b| a.1.partial_cmp(&b.1).unwrap())?;
        Some(self.pending.swap_remove(i))
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.pending)
    }
    fn len(&self) -> usize {
        self.pending.len()
    }
}

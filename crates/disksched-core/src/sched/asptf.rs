//! Aged SPTF (Jacobson & Wilkes 1991 "ASATF"; Worthington, Ganger & Patt
//! 1994): each request's effective cost is its positioning time minus
//! `aging_weight` times how long it has waited, bounding starvation.
//! Weight 0 is SPTF; large weights approach FCFS.
//!
//! The SPTF search's seek-time pruning still applies, loosened by the most
//! any request can be credited: `aging_weight` x the oldest request's wait.

use super::sptf::{scan_outward, ByCylinder};
use super::{SchedCtx, Scheduler, Tunables};
use crate::host::ReqId;
use std::collections::BTreeSet;

pub struct Asptf {
    by_cyl: ByCylinder,
    /// (arrival ns, seq): the oldest request bounds the aging credit.
    arrivals: BTreeSet<(u64, u64)>,
    weight: f64,
}

impl Asptf {
    pub fn new(t: &Tunables) -> Asptf {
        Asptf { by_cyl: ByCylinder::new(), arrivals: BTreeSet::new(), weight: t.get("aging_weight") }
    }
}

impl Scheduler for Asptf {
    fn name(&self) -> &'static str {
        "asptf"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert((r.target.cylinder, r.seq), id);
        self.arrivals.insert((r.arrival.0, r.seq));
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let oldest = self.arrivals.first()?.0;
        let max_credit = self.weight * ctx.now.0.saturating_sub(oldest) as f64;
        let mut best: Option<(f64, u64, (u32, u64))> = None;
        scan_outward(&self.by_cyl, ctx, |key, r, p| {
            let waited = ctx.now.0.saturating_sub(r.arrival.0) as f64;
            let cost = p.total_ns() as f64 - self.weight * waited;
            if best.is_none_or(|(c, s, _)| (cost, r.seq) < (c, s)) {
                best = Some((cost, r.seq, key));
            }
            // No request can cost less than its seek minus the largest credit.
            best.map_or(u64::MAX, |b| (b.0 + max_credit).max(0.0).ceil() as u64)
        });
        let key = best?.2;
        let id = self.by_cyl.remove(&key)?;
        self.arrivals.remove(&(ctx.reqs.get(id).arrival.0, key.1));
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.arrivals.clear();
        std::mem::take(&mut self.by_cyl).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

//! Aged SPTF (Jacobson & Wilkes 1991 "ASATF"; Worthington, Ganger & Patt
//! 1994): each request's effective cost is its positioning time minus
//! `aging_weight` times how long it has waited, bounding starvation.
//! Weight 0 is SPTF; large weights approach FCFS.
//!
//! Branch and bound over bands of cylinders: a band's requests cost at
//! least the seek to the band's nearest cylinder minus the credit of the
//! band's oldest request. Bands are visited cheapest bound first and the
//! search stops when no band can beat the best request found, so deep queues
//! of old requests (where credit, not position, decides) and young ones
//! (where the nearest cylinders decide) are both searched in a few bands.
//! Over an array bands are per disk, each bounded from its own disk's heads.

use super::{ByCylinder, cyl_key, tunable, SchedCtx, Scheduler, Tunable, Tunables, HeadsRead};
use crate::host::ReqId;
use std::collections::{BTreeMap, BTreeSet};

/// Cylinders per band.
const BAND: u32 = 64;

/// Declared tunables: `aging_weight`.
pub const TUNABLES: &[Tunable] = &[tunable("aging_weight", "ns per ns waited", 0.0, 0.01, 100.0,
    "0 = SPTF, large = FCFS; the default is a moderate choice, not a published value")];

/// The aged-SPTF scheduler (see the module doc).
pub struct Asptf {
    by_cyl: ByCylinder,
    /// Per (disk, band): (arrival ns, seq) of its requests, oldest first.
    bands: BTreeMap<(u32, u32), BTreeSet<(u64, u64)>>,
    weight: f64,
}

impl Asptf {
    /// An aged-SPTF scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> Asptf {
        Asptf { by_cyl: ByCylinder::new(), bands: BTreeMap::new(), weight: t.get("aging_weight") }
    }
}

impl Scheduler for Asptf {
    fn name(&self) -> &'static str {
        "asptf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(cyl_key(r), id);
        self.bands.entry((r.disk, r.target.cylinder / BAND)).or_default().insert((r.arrival.0, r.seq));
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let now = ctx.now.0;
        // Each band's lower bound on cost.
        let mut order: Vec<(f64, (u32, u32))> = self.bands.iter().map(|(&(d, b), arrivals)| {
            let c = ctx.head_of(d).cylinder;
            let (lo, hi) = (b * BAND, b * BAND + BAND - 1);
            let distance = if c < lo { lo - c } else { c.saturating_sub(hi) };
            let oldest = arrivals.first().expect("bands are never empty").0;
            (ctx.predictor.seek_floor_ns(distance) as f64 - self.weight * now.saturating_sub(oldest) as f64, (d, b))
        }).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut best: Option<(f64, u64, super::CylKey)> = None;
        for (bound, (d, b)) in order {
            if best.is_some_and(|(cost, _, _)| bound > cost) {
                break;
            }
            let head = ctx.head_of(d);
            let phase = ctx.predictor.phase_at(head.time);
            for (&key, &id) in self.by_cyl.range((d, b * BAND, 0)..(d, (b + 1) * BAND, 0)) {
                let r = ctx.reqs.get(id);
                let p = ctx.predictor.positioning(head, phase, &r.target, r.is_write, r.blocks);
                let cost = p.total_ns() as f64 - self.weight * now.saturating_sub(r.arrival.0) as f64;
                if best.is_none_or(|(bc, bs, _)| (cost, r.seq) < (bc, bs)) {
                    best = Some((cost, r.seq, key));
                }
            }
        }
        let key = best?.2;
        let id = self.by_cyl.remove(&key)?;
        let band = (key.0, key.1 / BAND);
        let arrivals = self.bands.get_mut(&band).expect("band of a queued request");
        arrivals.remove(&(ctx.reqs.get(id).arrival.0, key.2));
        if arrivals.is_empty() {
            self.bands.remove(&band);
        }
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.bands.clear();
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

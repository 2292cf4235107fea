//! V(R) (Geist & Daniel, "A continuum of disk scheduling algorithms", 1987):
//! the next request minimises its cylinder distance, plus R x (number of
//! cylinders) if serving it means reversing the current sweep direction.
//! R = 0 is SSTF, R = 1 is LOOK; Riska & Riedel use VSCAN at the host.

use super::{tunable, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;
use std::collections::BTreeMap;

/// Declared tunables: `r`.
pub const TUNABLES: &[Tunable] = &[tunable("r", "fraction", 0.0, 0.2, 1.0, "0 = SSTF, 1 = LOOK")];

/// The V(R) scheduler (see the module doc).
pub struct VScan {
    by_cyl: BTreeMap<(u32, u64), ReqId>,
    r: f64,
    downward: bool,
}

impl VScan {
    /// A V(R) scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> VScan {
        VScan { by_cyl: BTreeMap::new(), r: t.get("r"), downward: false }
    }
}

impl Scheduler for VScan {
    fn name(&self) -> &'static str {
        "vscan"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert((r.target.cylinder, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let c = ctx.head.cylinder;
        let penalty = self.r * ctx.predictor.model.layout.cylinders() as f64;
        // The nearest request on each side is the only candidate there; same-cylinder requests count as ahead.
        let [up, down] = super::nearest_each_side(&self.by_cyl, c);
        let cost = |k: (u32, u64), is_down: bool| {
            let d = k.0.abs_diff(c) as f64;
            (if is_down != self.downward && k.0 != c { d + penalty } else { d }, k.1)
        };
        let (key, down_chosen) = match (up, down) {
            (Some(u), Some(d)) => if cost(u, false) <= cost(d, true) { (u, false) } else { (d, true) },
            (Some(u), None) => (u, false),
            (None, Some(d)) => (d, true),
            (None, None) => return None,
        };
        if key.0 != c {
            self.downward = down_chosen;
        }
        self.by_cyl.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.by_cyl).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

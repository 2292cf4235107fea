//! V(R) (Geist & Daniel, "A continuum of disk scheduling algorithms", 1987):
//! the next request minimises its cylinder distance, plus R x (number of
//! cylinders) if serving it means reversing the current sweep direction.
//! R = 0 is SSTF, R = 1 is LOOK; Riska & Riedel use VSCAN at the host.
//! Over an array each disk's arm sweeps on its own: a request's distance and
//! direction are from its own disk's heads and that disk's current sweep.

use super::{ByCylinder, cyl_key, disks_of, nearest_on_disk, tunable, CylKey, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;

/// Declared tunables: `r`.
pub const TUNABLES: &[Tunable] = &[tunable("r", "fraction", 0.0, 0.2, 1.0, "0 = SSTF, 1 = LOOK")];

/// The V(R) scheduler (see the module doc).
pub struct VScan {
    by_cyl: ByCylinder,
    r: f64,
    /// By disk: the current sweep is downward (absent: upward).
    downward: Vec<bool>,
}

impl VScan {
    /// A V(R) scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> VScan {
        VScan { by_cyl: ByCylinder::new(), r: t.get("r"), downward: Vec::new() }
    }
}

impl Scheduler for VScan {
    fn name(&self) -> &'static str {
        "vscan"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Cylinder
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(cyl_key(r), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let penalty = self.r * ctx.predictor.model.layout.cylinders() as f64;
        // Each disk's nearest request on each side is the only candidate there; same-cylinder requests count as ahead.
        let mut best: Option<((f64, u64), CylKey, bool)> = None;
        for disk in disks_of(&self.by_cyl) {
            let c = ctx.head_of(disk).cylinder;
            let downward = self.downward.get(disk as usize).copied().unwrap_or(false);
            let [up, down] = nearest_on_disk(&self.by_cyl, disk, c);
            for (k, is_down) in [(up, false), (down, true)].into_iter().filter_map(|(k, d)| Some((k?, d))) {
                let d = k.1.abs_diff(c) as f64;
                let cost = (if is_down != downward && k.1 != c { d + penalty } else { d }, k.2);
                if best.is_none_or(|(b, _, _)| cost < b) {
                    best = Some((cost, k, is_down));
                }
            }
        }
        let (_, key, down_chosen) = best?;
        if key.1 != ctx.head_of(key.0).cylinder {
            let disk = key.0 as usize;
            if self.downward.len() <= disk {
                self.downward.resize(disk + 1, false);
            }
            self.downward[disk] = down_chosen;
        }
        self.by_cyl.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

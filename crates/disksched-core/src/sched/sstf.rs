//! SSTF: shortest seek first, by cylinder distance from the heads
//! (Denning 1967; Teorey & Pinkerton 1972). Ties go to the older request.

use super::{SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The SSTF scheduler (see the module doc).
pub struct Sstf {
    /// (cylinder, seq) -> request: the nearest on each side is a range lookup.
    by_cyl: BTreeMap<(u32, u64), ReqId>,
}

impl Scheduler for Sstf {
    fn name(&self) -> &'static str {
        "sstf"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert((r.target.cylinder, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let c = ctx.head.cylinder;
        let [up, down] = super::nearest_each_side(&self.by_cyl, c);
        let key = match (up, down) {
            (Some(u), Some(d)) => {
                let (du, dd) = (u.0 - c, c - d.0);
                if du < dd || (du == dd && u.1 < d.1) { u } else { d }
            }
            (Some(k), None) | (None, Some(k)) => k,
            (None, None) => return None,
        };
        self.by_cyl.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.by_cyl).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

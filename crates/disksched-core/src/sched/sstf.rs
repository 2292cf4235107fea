//! SSTF: shortest seek first, by cylinder distance from the heads
//! (Denning 1967; Teorey & Pinkerton 1972). Ties go to the older request.
//! Over an array each request's distance is from its own disk's heads.

use super::{ByCylinder, cyl_key, disks_of, nearest_on_disk, HeadsRead, SchedCtx, Scheduler};
use crate::host::ReqId;

#[derive(Default)]
/// The SSTF scheduler (see the module doc).
pub struct Sstf {
    /// (disk, cylinder, seq) -> request: the nearest on each side is a range lookup.
    by_cyl: ByCylinder,
}

impl Scheduler for Sstf {
    fn name(&self) -> &'static str {
        "sstf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Cylinder
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(cyl_key(r), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        // The least (distance, seq) over each disk's nearest request on either side.
        let mut best: Option<((u32, u64), super::CylKey)> = None;
        for disk in disks_of(&self.by_cyl) {
            let c = ctx.head_of(disk).cylinder;
            for k in nearest_on_disk(&self.by_cyl, disk, c).into_iter().flatten() {
                let cost = (k.1.abs_diff(c), k.2);
                if best.is_none_or(|(b, _)| cost < b) {
                    best = Some((cost, k));
                }
            }
        }
        let (_, key) = best?;
        self.by_cyl.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

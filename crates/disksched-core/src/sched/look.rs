//! LOOK (the elevator as kernels implement it): sweep in one direction of
//! LBN, serving requests in order; reverse when none remain ahead (Denning
//! 1967 "SCAN", as refined to turn at the last request rather than the edge).
//! Over an array each disk is swept on its own (its own position and
//! direction), and the disk whose heads are free first is served next.

use super::{lbn_key, next_disk, next_on_disk, ByLbn, HeadsRead, SchedCtx, Scheduler};
use crate::host::ReqId;

#[derive(Default)]
/// The LOOK scheduler (see the module doc).
pub struct Look {
    by_lbn: ByLbn,
    /// By disk: the sweep position (LBN) and whether the sweep runs downward.
    sweep: Vec<(u64, bool)>,
}

impl Look {
    /// The next request, and whether its disk's sweep reversed to reach it:
    /// `Some(the direction it had been going, true = downward)`.
    pub(crate) fn next(&mut self, ctx: &SchedCtx) -> Option<(ReqId, Option<bool>)> {
        let disk = next_disk(&self.by_lbn, ctx)?;
        let d = disk as usize;
        if self.sweep.len() <= d {
            self.sweep.resize(d + 1, (0, false));
        }
        let (position, down) = self.sweep[d];
        let ahead = |down: bool| next_on_disk(&self.by_lbn, disk, position, !down);
        let (key, turned) = match ahead(down) {
            Some(k) => (k, None),
            None => (ahead(!down)?, Some(down)),
        };
        let id = self.by_lbn.remove(&key)?;
        let r = ctx.reqs.get(id);
        let down = down != turned.is_some();
        self.sweep[d] = (if down { r.lbn } else { r.end_lbn() }, down);
        Some((id, turned))
    }
}

impl Scheduler for Look {
    fn name(&self) -> &'static str {
        "look"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.by_lbn.insert(lbn_key(ctx.reqs.get(id)), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        self.next(ctx).map(|(id, _)| id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_lbn.drain()
    }
    fn len(&self) -> usize {
        self.by_lbn.len()
    }
}

//! C-LOOK: serve requests in ascending LBN order from the current position;
//! at the highest pending request jump back to the lowest (Seltzer, Chen &
//! Ousterhout 1990; the BSD `bioq_disksort` order). Never seeks backwards
//! within a sweep. Over an array each disk is swept on its own, and the
//! disk whose heads are free first is served next.

use super::{lbn_at, lbn_key, lbn_of, next_disk, ByLbn, HeadsRead, LbnKey, SchedCtx, Scheduler};
use crate::host::ReqId;

#[derive(Default)]
/// The C-LOOK scheduler (see the module doc).
pub struct CLook {
    by_lbn: ByLbn,
    /// By disk: the LBN just past the last request dispatched, the sweep position.
    position: Vec<u64>,
}

impl CLook {
    /// The next request, and whether its disk's sweep wrapped back to reach it.
    pub(crate) fn next(&mut self, ctx: &SchedCtx) -> Option<(ReqId, bool)> {
        let disk = next_disk(&self.by_lbn, ctx)?;
        let d = disk as usize;
        if self.position.len() <= d {
            self.position.resize(d + 1, 0);
        }
        let on_disk = |k: &LbnKey| lbn_of(*k).0 == disk;
        let ((_, id), wrapped) = match self.by_lbn.take_first_from(&(lbn_at(disk, self.position[d]), 0), on_disk) {
            Some(e) => (e, false),
            // Nothing above: the disk's lowest request.
            None => (self.by_lbn.take_first_from(&(lbn_at(disk, 0), 0), on_disk)?, true),
        };
        self.position[d] = ctx.reqs.get(id).end_lbn();
        Some((id, wrapped))
    }
}

impl Scheduler for CLook {
    fn name(&self) -> &'static str {
        "clook"
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

//! C-LOOK: serve requests in ascending LBN order from the current position;
//! at the highest pending request jump back to the lowest (Seltzer, Chen &
//! Ousterhout 1990; the BSD `bioq_disksort` order). Never seeks backwards
//! within a sweep.

use super::{SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The C-LOOK scheduler (see the module doc).
pub struct CLook {
    by_lbn: BTreeMap<(u64, u64), ReqId>,
    /// LBN just past the last request dispatched: the sweep position.
    pub(crate) position: u64,
}

impl Scheduler for CLook {
    fn name(&self) -> &'static str {
        "clook"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_lbn.insert((r.lbn, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let key = *self.by_lbn.range((self.position, 0)..).next().or_else(|| self.by_lbn.iter().next())?.0;
        let id = self.by_lbn.remove(&key)?;
        self.position = ctx.reqs.get(id).end_lbn();
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.by_lbn).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_lbn.len()
    }
}

//! SSTF by LBN: the pending request whose start block is nearest the end of
//! the last one dispatched (what a host that knows no geometry can do).
//! Ties go to the older request.

use super::{SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The SSTF-by-LBN scheduler (see the module doc).
pub struct SstfLbn {
    by_lbn: BTreeMap<(u64, u64), ReqId>,
    position: u64,
}

impl Scheduler for SstfLbn {
    fn name(&self) -> &'static str {
        "sstf_lbn"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_lbn.insert((r.lbn, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let p = self.position;
        let [up, down] = super::nearest_each_side(&self.by_lbn, p);
        let key = match (up, down) {
            (Some(u), Some(d)) => if (u.0 - p, u.1) <= (p - d.0, d.1) { u } else { d },
            (Some(k), None) | (None, Some(k)) => k,
            (None, None) => return None,
        };
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

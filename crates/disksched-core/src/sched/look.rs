//! LOOK (the elevator as kernels implement it): sweep in one direction of
//! LBN, serving requests in order; reverse when none remain ahead (Denning
//! 1967 "SCAN", as refined to turn at the last request rather than the edge).

use super::{SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The LOOK scheduler (see the module doc).
pub struct Look {
    by_lbn: BTreeMap<(u64, u64), ReqId>,
    position: u64,
    pub(crate) downward: bool,
}

impl Scheduler for Look {
    fn name(&self) -> &'static str {
        "look"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_lbn.insert((r.lbn, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let ahead = |s: &Self, down: bool| {
            if down {
                s.by_lbn.range(..(s.position, 0)).next_back().map(|(k, _)| *k)
            } else {
                s.by_lbn.range((s.position, 0)..).next().map(|(k, _)| *k)
            }
        };
        let key = match ahead(self, self.downward) {
            Some(k) => k,
            None if self.by_lbn.is_empty() => return None,
            None => {
                self.downward = !self.downward;
                ahead(self, self.downward)?
            }
        };
        let id = self.by_lbn.remove(&key)?;
        let r = ctx.reqs.get(id);
        self.position = if self.downward { r.lbn } else { r.end_lbn() };
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.by_lbn).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_lbn.len()
    }
}

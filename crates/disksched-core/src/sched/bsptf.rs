//! Batched SPTF: the requests pending when a batch starts are served in SPTF
//! order; requests arriving meanwhile wait for the next batch. Bounds
//! starvation to one batch while keeping positional ordering within it.

use super::sptf::best;
use super::{ByCylinder, tunable, SchedCtx, Scheduler, Tunable, Tunables, HeadsRead};
use crate::host::ReqId;
use std::collections::VecDeque;

/// Declared tunables: `batch_size`.
pub const TUNABLES: &[Tunable] = &[tunable("batch_size", "requests", 0.0, 0.0, 1_000_000.0, "largest batch; 0 = everything pending")];

/// The batched-SPTF scheduler (see the module doc).
pub struct Bsptf {
    batch: ByCylinder,
    waiting: VecDeque<(super::CylKey, ReqId)>,
    max_batch: usize,
}

impl Bsptf {
    /// A batched-SPTF scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> Bsptf {
        Bsptf { batch: ByCylinder::new(), waiting: VecDeque::new(), max_batch: t.get("batch_size") as usize }
    }
}

impl Scheduler for Bsptf {
    fn name(&self) -> &'static str {
        "bsptf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.waiting.push_back((super::cyl_key(r), id));
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        if self.batch.is_empty() {
            let n = if self.max_batch == 0 { self.waiting.len() } else { self.max_batch.min(self.waiting.len()) };
            for (key, id) in self.waiting.drain(..n) {
                self.batch.insert(key, id);
            }
        }
        let (key, _) = best(&self.batch, ctx)?;
        self.batch.remove(&key)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.batch.drain().into_iter().chain(self.waiting.drain(..).map(|w| w.1)).collect()
    }
    fn len(&self) -> usize {
        self.batch.len() + self.waiting.len()
    }
}

//! C-SCAN (circular SCAN; Seaman, Lind & Wilson 1966): sweep upwards only,
//! serving requests in order; at the edge, return to the first cylinder and
//! sweep up again. The request order is C-LOOK's; what differs is the arm's
//! empty travel to the last cylinder and the full-stroke return, which
//! `travel_first` asks the drive to make.

use super::clook::CLook;
use super::{HeadsRead, SchedCtx, Scheduler, Travel};
use crate::host::ReqId;

#[derive(Default)]
/// The C-SCAN scheduler (see the module doc).
pub struct CScan {
    clook: CLook,
    travel: Travel,
}

impl Scheduler for CScan {
    fn name(&self) -> &'static str {
        "cscan"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.clook.insert(id, ctx);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let (id, wrapped) = self.clook.next(ctx)?;
        if wrapped {
            // To the last cylinder, then the return stroke to the first.
            self.travel = Travel::via(ctx.predictor.model.layout.cylinders() - 1, 0);
        }
        Some(id)
    }
    fn travel_first(&mut self) -> Travel {
        std::mem::take(&mut self.travel)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.clook.drain()
    }
    fn len(&self) -> usize {
        self.clook.len()
    }
}

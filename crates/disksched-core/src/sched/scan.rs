//! SCAN, the elevator as Denning (1967) defined it: sweep in one direction,
//! serving requests in order, and turn only at the edge of the disk. The
//! request order is LOOK's; what differs is the arm's empty travel to the
//! last (or first) cylinder before it turns, which `travel_first` asks the
//! drive to make.

use super::look::Look;
use super::{HeadsRead, SchedCtx, Scheduler, Travel};
use crate::host::ReqId;

#[derive(Default)]
/// The SCAN scheduler (see the module doc).
pub struct Scan {
    look: Look,
    edge: Option<u32>,
}

impl Scheduler for Scan {
    fn name(&self) -> &'static str {
        "scan"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.look.insert(id, ctx);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let (id, turned) = self.look.next(ctx)?;
        if let Some(was_down) = turned {
            // Nothing was left ahead: the arm finished its sweep at the edge.
            self.edge = Some(if was_down { 0 } else { ctx.predictor.model.layout.cylinders() - 1 });
        }
        Some(id)
    }
    fn travel_first(&mut self) -> Travel {
        self.edge.take().map_or(Travel::NONE, Travel::to)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.look.drain()
    }
    fn len(&self) -> usize {
        self.look.len()
    }
}

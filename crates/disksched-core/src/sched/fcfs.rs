//! FCFS: first come, first served (Linux `none`, FreeBSD's default queue).

use super::{HeadsRead, SchedCtx, Scheduler};
use crate::host::ReqId;
use std::collections::VecDeque;

#[derive(Default)]
/// The FCFS scheduler (see the module doc).
pub struct Fcfs {
    queue: VecDeque<ReqId>,
}

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, _ctx: &SchedCtx) {
        self.queue.push_back(id);
    }
    fn dispatch(&mut self, _ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        self.queue.pop_front()
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.queue.drain(..).collect()
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
}

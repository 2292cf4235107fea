//! SSTF by LBN: the pending request whose start block is nearest the end of
//! the last one dispatched (what a host that knows no geometry can do).
//! Ties go to the older request. Over an array each request's distance is
//! from the last one dispatched to its own disk.

use super::{lbn_disks, lbn_key, lbn_of, next_on_disk, ByLbn, HeadsRead, LbnKey, SchedCtx, Scheduler};
use crate::host::ReqId;

#[derive(Default)]
/// The SSTF-by-LBN scheduler (see the module doc).
pub struct SstfLbn {
    by_lbn: ByLbn,
    /// By disk: the LBN just past the last request dispatched.
    position: Vec<u64>,
}

impl Scheduler for SstfLbn {
    fn name(&self) -> &'static str {
        "sstf_lbn"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.by_lbn.insert(lbn_key(ctx.reqs.get(id)), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        // The least (distance, seq) over each disk's nearest request on either side.
        let mut best: Option<((u64, u64), LbnKey)> = None;
        for disk in lbn_disks(&self.by_lbn, ctx) {
            let p = self.position.get(disk as usize).copied().unwrap_or(0);
            // The nearest below, as the oldest request at its LBN.
            let below = next_on_disk(&self.by_lbn, disk, p, false).and_then(|k| next_on_disk(&self.by_lbn, disk, lbn_of(k).1, true));
            for k in [next_on_disk(&self.by_lbn, disk, p, true), below].into_iter().flatten() {
                let cost = (lbn_of(k).1.abs_diff(p), k.1);
                if best.is_none_or(|(b, _)| cost < b) {
                    best = Some((cost, k));
                }
            }
        }
        let (_, key) = best?;
        let id = self.by_lbn.remove(&key)?;
        let d = lbn_of(key).0 as usize;
        if self.position.len() <= d {
            self.position.resize(d + 1, 0);
        }
        self.position[d] = ctx.reqs.get(id).end_lbn();
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_lbn.drain()
    }
    fn len(&self) -> usize {
        self.by_lbn.len()
    }
}

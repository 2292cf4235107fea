//! SCAN-EDF (Reddy & Wyllie, "Disk scheduling in a multimedia I/O system",
//! 1993): earliest deadline first, and requests whose deadlines fall in the
//! same `granularity_ms` window are served in ascending-LBN sweep order
//! (C-LOOK within the window).

use super::edf::deadline_ns;
use super::{tunable, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::ReqId;
use crate::time::SimDuration;
use std::collections::BTreeMap;

/// Declared tunables: `granularity_ms` and the shared `default_deadline_ms`.
pub const TUNABLES: &[Tunable] = &[
    tunable("granularity_ms", "ms", 0.001, 10.0, 60_000.0, "deadlines in one window count as equal"),
    super::edf::DEFAULT_DEADLINE,
];

/// The SCAN-EDF scheduler (see the module doc).
pub struct ScanEdf {
    /// (deadline window, lbn, seq).
    queue: BTreeMap<(u64, u64, u64), ReqId>,
    granularity_ns: u64,
    default_deadline_ns: u64,
    position: u64,
}

impl ScanEdf {
    /// A SCAN-EDF scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> ScanEdf {
        ScanEdf {
            queue: BTreeMap::new(),
            granularity_ns: SimDuration::from_ms(t.get("granularity_ms")).ns().max(1),
            default_deadline_ns: SimDuration::from_ms(t.get("default_deadline_ms")).ns(),
            position: 0,
        }
    }
}

impl Scheduler for ScanEdf {
    fn name(&self) -> &'static str {
        "scan_edf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        let window = deadline_ns(r, self.default_deadline_ns) / self.granularity_ns;
        self.queue.insert((window, r.lbn, r.seq), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let w = self.queue.first_key_value()?.0 .0;
        let key = *self.queue.range((w, self.position, 0)..(w + 1, 0, 0)).next()
            .or_else(|| self.queue.range((w, 0, 0)..).next())?.0;
        let id = self.queue.remove(&key)?;
        self.position = ctx.reqs.get(id).end_lbn();
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.queue).into_values().collect()
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
}

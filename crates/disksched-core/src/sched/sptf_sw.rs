//! SPTF-SWn (Lumb et al., "Freeblock scheduling outside of disk firmware",
//! FAST 2002, section 4.1): among the requests whose positioning time is
//! within n% of the shortest, take the one with the smallest seek time. It
//! keeps most of SPTF's efficiency while leaving more rotational latency for
//! freeblock scheduling to fill.

use super::sptf::{best, scan_outward};
use super::{ByCylinder, tunable, SchedCtx, Scheduler, Tunable, Tunables, HeadsRead};
use crate::host::ReqId;

/// Declared tunables: `window_pct`.
pub const TUNABLES: &[Tunable] = &[tunable("window_pct", "%", 0.0, 60.0, 1000.0, "window above the shortest positioning time")];

/// The SPTF-SWn scheduler (see the module doc).
pub struct SptfSw {
    by_cyl: ByCylinder,
    window_pct: f64,
}

impl SptfSw {
    /// An SPTF-SWn scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> SptfSw {
        SptfSw { by_cyl: ByCylinder::new(), window_pct: t.get("window_pct") }
    }
}

impl Scheduler for SptfSw {
    fn name(&self) -> &'static str {
        "sptf_sw"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_cyl.insert(super::cyl_key(r), id);
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let (_, shortest) = best(&self.by_cyl, ctx)?;
        let window = (shortest as f64 * (1.0 + self.window_pct / 100.0)) as u64;
        let mut pick: Option<(u64, u64, super::CylKey)> = None;
        scan_outward(&self.by_cyl, ctx, |key, r, p| {
            if p.total_ns() <= window && pick.is_none_or(|(s, q, _)| (p.seek_ns, r.seq) < (s, q)) {
                pick = Some((p.seek_ns, r.seq, key));
            }
            window
        });
        self.by_cyl.remove(&pick?.2)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.by_cyl.drain()
    }
    fn len(&self) -> usize {
        self.by_cyl.len()
    }
}

//! EDF: earliest deadline first (Liu & Layland 1973). Requests without a
//! deadline get `arrival + default_deadline_ms`. Ties: the older request.

use super::{tunable, HeadsRead, SchedCtx, Scheduler, Tunable, Tunables};
use crate::host::{ReqId, Request};
use crate::time::SimDuration;
use std::collections::BTreeMap;

/// Shared with SCAN-EDF.
pub const DEFAULT_DEADLINE: Tunable =
    tunable("default_deadline_ms", "ms", 0.0, 1000.0, 3_600_000.0, "deadline given to requests that carry none, after arrival");

/// Declared tunables: `default_deadline_ms`.
pub const TUNABLES: &[Tunable] = &[DEFAULT_DEADLINE];

/// The EDF scheduler (see the module doc).
pub struct Edf {
    by_deadline: BTreeMap<(u64, u64), ReqId>,
    default_deadline_ns: u64,
}

impl Edf {
    /// An EDF scheduler with validated tunables `t`.
    pub fn new(t: &Tunables) -> Edf {
        Edf { by_deadline: BTreeMap::new(), default_deadline_ns: SimDuration::from_ms(t.get("default_deadline_ms")).ns() }
    }
}

/// A request's deadline, or the default one for requests that carry none.
pub(crate) fn deadline_ns(r: &Request, default_ns: u64) -> u64 {
    r.deadline.map_or(r.arrival.0.saturating_add(default_ns), |d| d.0)
}

impl Scheduler for Edf {
    fn name(&self) -> &'static str {
        "edf"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Nothing
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        let r = ctx.reqs.get(id);
        self.by_deadline.insert((deadline_ns(r, self.default_deadline_ns), r.seq), id);
    }
    fn dispatch(&mut self, _ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        self.by_deadline.pop_first().map(|(_, id)| id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        std::mem::take(&mut self.by_deadline).into_values().collect()
    }
    fn len(&self) -> usize {
        self.by_deadline.len()
    }
}

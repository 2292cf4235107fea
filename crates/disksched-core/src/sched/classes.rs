//! The queue owner's bookkeeping of flows (GEOM's classes): when a
//! scheduler's `init_class` and `fini_class` are called.

use super::Scheduler;
use crate::time::SimTime;

/// The owner's side of `init_class` / `fini_class`: which flows a queue holds
/// requests of (queued or in flight from it), and since when the others
/// have been idle.
#[derive(Default)]
pub struct Classes {
    live: std::collections::HashMap<u32, u32>,
    idle_since: std::collections::HashMap<u32, SimTime>,
    /// (idle since, flow), oldest first.
    idle: std::collections::BTreeSet<(SimTime, u32)>,
    expire: crate::time::SimDuration,
}

impl Classes {
    /// Empty, freeing a flow's class once it has been idle for `expire`.
    pub fn new(expire: crate::time::SimDuration) -> Classes {
        Classes { expire, ..Default::default() }
    }
    /// A request of `flow` is about to be inserted into `s`, a scheduler
    /// that `uses_classes` (the owner asks once, not per request).
    pub fn enter(&mut self, s: &mut dyn Scheduler, flow: u32) {
        let n = self.live.entry(flow).or_insert(0);
        if *n == 0 {
            match self.idle_since.remove(&flow) {
                Some(t) => {
                    self.idle.remove(&(t, flow));
                }
                None => s.init_class(flow),
            }
        }
        *n += 1;
    }
    /// A request of `flow` that `s` held completed (or left) at `now`.
    #[inline]
    pub fn leave(&mut self, flow: u32, now: SimTime) {
        if self.live.is_empty() {
            return; // (no flow held: a scheduler without classes)
        }
        let Some(n) = self.live.get_mut(&flow) else { return };
        *n -= 1;
        if *n == 0 {
            self.live.remove(&flow);
            self.idle_since.insert(flow, now);
            self.idle.insert((now, flow));
        }
    }
    /// Free the flows idle for the expiry time.
    #[inline]
    pub fn expire(&mut self, s: &mut dyn Scheduler, now: SimTime) {
        if self.idle.is_empty() {
            return;
        }
        while let Some(&(t, flow)) = self.idle.first().filter(|(t, _)| *t + self.expire <= now) {
            self.idle.remove(&(t, flow));
            self.idle_since.remove(&flow);
            s.fini_class(flow);
        }
    }
    /// Forget every flow (the queue's scheduler was replaced: classes are
    /// set up again in the new one as requests come in).
    pub fn reset(&mut self) {
        *self = Classes::new(self.expire);
    }
}

//! What the router schedules: things that happened, each handled by the
//! part that owns it, and their order among events at the same instant.

/// An event of the simulation, named for what has happened by the time it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A client's next request is due (the workload's open- or closed-loop arrival).
    RequestArrived {
        /// The workload's client whose request it is.
        client: u32,
    },
    /// Disk `.0` finished the command in service.
    DiskCompleted(u32),
    /// Disk `.0` finished a background (freeblock idle-time) transfer.
    BackgroundCompleted(u32),
    /// The `wake_at` time a queue level's scheduler asked for has come (`.0`:
    /// the level's index above the disks, 0 = host).
    WakeDue(u8),
    /// Run-time reconfiguration `.0` of the config is due.
    ReconfigurationDue(usize),
    /// Background task event `.0` of the config (`[[freeblock.events]]`, a task's `start_ms`) is due.
    TaskEventDue(usize),
}

/// Completions first: they free a disk and a slot below each queue, so a
/// timer or an arrival at the same instant already sees the room.
pub(crate) const COMPLETION: u8 = 0;
/// Then timers (wake-ups, reconfigurations): a scheduler consulted at its
/// wake time sees the completions of that instant but not its arrivals.
pub(crate) const TIMER: u8 = 1;
/// Arrivals last: a request arriving at an instant never overtakes
/// anything else that happened then.
pub(crate) const ARRIVAL: u8 = 2;

impl Event {
    /// The engine's tie-break among events at the same time (lower first;
    /// events of equal priority fire in the order they were scheduled).
    pub(crate) fn priority(&self) -> u8 {
        match self {
            Event::DiskCompleted(_) | Event::BackgroundCompleted(_) => COMPLETION,
            Event::WakeDue(_) | Event::ReconfigurationDue(_) | Event::TaskEventDue(_) => TIMER,
            Event::RequestArrived { .. } => ARRIVAL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_instant_order_is_completions_then_timers_then_arrivals() {
        let mut e = crate::engine::Engine::new();
        let at = crate::time::SimTime(7);
        // Scheduled in the reverse of the order they must fire in.
        for ev in [Event::RequestArrived { client: 0 }, Event::ReconfigurationDue(0), Event::WakeDue(0),
                   Event::BackgroundCompleted(0), Event::DiskCompleted(0)] {
            e.schedule(at, ev.priority(), ev);
        }
        let mut order = vec![];
        e.run(None, |_, _, ev| order.push(ev));
        // Equal priorities keep the order they were scheduled in.
        assert_eq!(order, vec![Event::BackgroundCompleted(0), Event::DiskCompleted(0), Event::ReconfigurationDue(0),
                               Event::WakeDue(0), Event::RequestArrived { client: 0 }]);
    }
}

//! The progress watchdog: a run that stops making simulated progress ends
//! with an error saying what is spinning, instead of hanging (the bounds in
//! `schema` keep known configs from getting here; this catches the rest).
//!
//! Progress is a request arriving or completing: every run is bounded by its
//! request count, so a run makes progress as long as one of the two moves.
//! Two ways of not moving are caught:
//! - `MAX_EVENTS_WITHOUT_PROGRESS` events with no request arriving or
//!   completing (a scheduler asking to be woken without ever dispatching,
//!   background commands with the foreground stalled, a generator
//!   scheduling arrivals that issue nothing);
//! - `MAX_EVENTS_AT_ONE_INSTANT` events without the clock advancing (a
//!   generator emitting at the same instant forever).
//!
//! Both limits are far above what a run that does work needs: the most
//! events at one instant a valid config makes is its clients starting
//! together (at most 10^6 per generator), and between two arrivals or
//! completions a run steps a handful of wake-ups and background transfers,
//! or at most a whole-disk background scan (10^6 transfers on the largest
//! built-in disk).

use crate::error::Error;
use crate::time::SimTime;

/// Events with no request arriving or completing before the run is declared stuck.
pub const MAX_EVENTS_WITHOUT_PROGRESS: u64 = 20_000_000;
/// Events at one simulated instant before the run is declared stuck.
pub const MAX_EVENTS_AT_ONE_INSTANT: u64 = 20_000_000;

#[derive(Debug)]
/// Declares a run stuck when events go on without any request arriving or completing, or pile up at one instant.
pub struct Watchdog {
    limit_no_progress: u64,
    limit_same_instant: u64,
    progress: u64,
    since_progress: u64,
    instant: SimTime,
    at_instant: u64,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog::new(MAX_EVENTS_WITHOUT_PROGRESS, MAX_EVENTS_AT_ONE_INSTANT)
    }
}

impl Watchdog {
    /// A watchdog with the given limits, in events.
    pub fn new(limit_no_progress: u64, limit_same_instant: u64) -> Watchdog {
        Watchdog { limit_no_progress, limit_same_instant, progress: 0, since_progress: 0, instant: SimTime::ZERO, at_instant: 0 }
    }

    /// One event was handled at `now`; `progress` counts requests arrived
    /// plus completed so far. `event` describes the event (called only when
    /// the run is stuck: its Debug form, e.g. `Wake(Host)`).
    #[inline]
    pub fn observe(&mut self, now: SimTime, progress: u64, event: impl FnOnce() -> String) -> Result<(), Error> {
        if progress != self.progress {
            self.progress = progress;
            self.since_progress = 0;
        } else {
            self.since_progress += 1;
        }
        if now != self.instant {
            self.instant = now;
            self.at_instant = 0;
        } else {
            self.at_instant += 1;
        }
        if self.since_progress >= self.limit_no_progress {
            return Err(self.stuck(now, &format!("no request arrived or completed in the last {} events", self.since_progress), &event()));
        }
        if self.at_instant >= self.limit_same_instant {
            return Err(self.stuck(now, &format!("{} events without the clock advancing", self.at_instant), &event()));
        }
        Ok(())
    }

    fn stuck(&self, now: SimTime, what: &str, event: &str) -> Error {
        Error::Config {
            what: "run".into(),
            msg: format!("stuck at {:.3} ms: {what}; the last was {event}: {}", now.0 as f64 / 1e6, culprit(event)),
        }
    }
}

/// Who keeps the run busy, from the last event's Debug form.
fn culprit(event: &str) -> String {
    let level = |e: &str| e.trim_start_matches("Wake(").trim_end_matches(')').to_ascii_lowercase();
    if event.starts_with("Wake(") {
        format!("the {} queue's scheduler keeps asking to be woken without dispatching", level(event))
    } else if event.starts_with("Arrived") {
        "the workload generator keeps scheduling arrivals (at the same instant, or issuing no request)".into()
    } else if event.starts_with("BackgroundDone") || event.starts_with("DiskDone") {
        "the disk keeps serving commands that complete no request (background work while the foreground is held: check the shaper's rates)".into()
    } else if event.starts_with("Reconfigure") {
        "run-time reconfigurations".into()
    } else {
        "an unexpected event".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_keeps_progressing_is_never_stopped() {
        let mut w = Watchdog::new(10, 10);
        // Every third event completes a request; the clock moves every other one.
        for i in 0..1000u64 {
            w.observe(SimTime(i / 2), i / 3, || unreachable!()).unwrap();
        }
    }

    #[test]
    fn wake_ups_without_progress_name_the_queue() {
        let mut w = Watchdog::new(10, 1000);
        let mut err = None;
        for i in 0..100u64 {
            if let Err(e) = w.observe(SimTime(i * 1000), 5, || "Wake(Host)".into()) {
                err = Some((i, e.to_string()));
                break;
            }
        }
        let (i, e) = err.expect("stopped");
        // The first event records the progress count; ten more without it trip the limit.
        assert_eq!(i, 10);
        assert!(e.starts_with("run: stuck at 0.010 ms: no request arrived or completed in the last 10 events"), "{e}");
        assert!(e.contains("the host queue's scheduler keeps asking to be woken"), "{e}");
    }

    #[test]
    fn arrivals_at_one_instant_forever_are_stopped() {
        let mut w = Watchdog::new(1000, 20);
        let e = (0..100u64)
            .find_map(|i| w.observe(SimTime(7_000_000), i, || "Arrived { client: 0 }".into()).err())
            .expect("stopped")
            .to_string();
        assert!(e.contains("stuck at 7.000 ms: 20 events without the clock advancing"), "{e}");
        assert!(e.contains("workload generator"), "{e}");
        assert!(!e.contains('\n'));
    }
}

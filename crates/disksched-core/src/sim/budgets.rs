//! The run's budgets, checked before every event: the clock's end and the
//! time series' bound, so that no handler loops or allocates past them.

use super::event::Event;
use super::Simulation;
use crate::error::{Error, Result};
use crate::time::SimTime;

impl Simulation {
    /// Before event `ev` at `now` is handled: the clock's end and the time
    /// series' budget (`budget`), so that no event handler loops or allocates
    /// past them.
    #[inline(always)]
    pub(super) fn check_budgets(&self, now: SimTime, ev: &Event) -> Result<()> {
        // One test on every event; what went over is worked out only when something did.
        if now >= crate::budget::CLOCK_END || now > self.series_end || self.metrics.series_over() {
            return Err(self.budget_err(now, ev));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn budget_err(&self, now: SimTime, ev: &Event) -> Error {
        if now >= crate::budget::CLOCK_END {
            return crate::budget::clock_end_err(now, &format!("{ev:?}"));
        }
        if now > self.series_end {
            return self.series_too_long(now);
        }
        self.metrics.series_error().unwrap_or_else(|| Error::Invariant(format!("a budget check failed at {now:?} with every budget kept")))
    }

    fn series_too_long(&self, now: SimTime) -> Error {
        let windows = crate::metrics::MAX_SERIES_ROWS / self.series_timed_rows.max(1);
        crate::error::config_err("run.series_window_ms", format!(
            "{} ms windows reach the series' bound of {} rows ({} sampled every window: shaper rates, freeblock tasks) at t = {:.3} s, \
             and the run has an event at t = {:.3} s; choose a window of at least {} ms (or end the run sooner: run.duration_ms)",
            self.series_window_ns as f64 / 1e6, crate::metrics::MAX_SERIES_ROWS, self.series_timed_rows,
            self.series_end.0 as f64 / 1e9, now.0 as f64 / 1e9, (now.0 as f64 / windows as f64 / 1e6).ceil()))
    }
}

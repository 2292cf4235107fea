//! A token bucket (the traffic shaper's "TBF"): tokens accrue at a rate up to
//! a capacity; the bucket starts full.
//!
//! A request costing `cost` tokens may pass once the bucket holds
//! min(cost, capacity) and then takes `cost`, which may leave the bucket in
//! debt: a request larger than the bucket still passes (once the bucket is
//! full) and the debt delays the next one. So over any interval of length t,
//! what passes is at most rate x t + capacity, plus the excess over the
//! capacity of one request.

use crate::time::{SimTime, NS_PER_S};

/// Slack for float rounding: a wake-up computed for "enough tokens" must find them.
const EPS: f64 = 1e-9;

#[derive(Clone, Debug)]
/// A token bucket (see the module doc).
pub struct Bucket {
    capacity: f64,
    tokens: f64,
    last: SimTime,
}

impl Bucket {
    /// A full bucket of `capacity` tokens.
    pub fn new(capacity: f64) -> Bucket {
        Bucket { capacity, tokens: capacity, last: SimTime::ZERO }
    }

    /// Add what `rate_per_s` accrued since the last refill.
    pub fn refill(&mut self, now: SimTime, rate_per_s: f64) {
        let dt = now.0.saturating_sub(self.last.0) as f64 / NS_PER_S as f64;
        self.tokens = (self.tokens + rate_per_s * dt).min(self.capacity);
        self.last = self.last.max(now);
    }

    fn need(&self, cost: f64) -> f64 {
        cost.min(self.capacity) * (1.0 - EPS)
    }

    /// Take `cost` tokens (the bucket may go into debt).
    pub fn take(&mut self, cost: f64) {
        self.tokens -= cost;
    }

    /// The earliest time, no earlier than `from` nor the last refill, at which
    /// a request of `cost` may pass with tokens accruing at `rate_per_s` (> 0);
    /// `None` if that is beyond the clock (a wait of inf or past `u64::MAX` ns).
    /// "Never" must not saturate to the clock's last instant: a wake-up there
    /// would fire, find the tokens "due" at that instant and issue the request
    /// at the end of time, where the drive model's time arithmetic runs away
    /// (issue 22: `wiops = 1e-308` spun inside one event).
    pub fn available_at(&self, cost: f64, rate_per_s: f64, from: SimTime) -> Option<SimTime> {
        let from = from.max(self.last);
        let tokens = (self.tokens + rate_per_s * (from.0 - self.last.0) as f64 / NS_PER_S as f64).min(self.capacity);
        if tokens >= self.need(cost) {
            return Some(from);
        }
        let wait_ns = ((self.need(cost) - tokens) / rate_per_s * NS_PER_S as f64).ceil().max(1.0);
        // `as u64` would saturate inf/huge to u64::MAX (and NaN to 0): refuse both explicitly.
        if wait_ns.is_nan() || wait_ns >= u64::MAX as f64 {
            return None;
        }
        from.0.checked_add(wait_ns as u64).map(SimTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_passes_its_capacity_then_the_rate() {
        let mut b = Bucket::new(3.0);
        let mut passed = 0;
        while b.available_at(1.0, 10.0, SimTime::ZERO) == Some(SimTime::ZERO) {
            b.take(1.0);
            passed += 1;
        }
        assert_eq!(passed, 3);
        // 10 tokens/s: the next token is 100 ms away, from wherever one starts looking.
        assert_eq!(b.available_at(1.0, 10.0, SimTime::ZERO), Some(SimTime(100_000_000)));
        assert_eq!(b.available_at(1.0, 10.0, SimTime(60_000_000)), Some(SimTime(100_000_000)));
        b.refill(SimTime(99_999_999), 10.0);
        assert_eq!(b.available_at(1.0, 10.0, SimTime(99_999_999)), Some(SimTime(100_000_000)));
        // Idle for a minute: the bucket holds its capacity, no more.
        b.refill(SimTime(60_000_000_000), 10.0);
        for _ in 0..3 {
            assert_eq!(b.available_at(1.0, 10.0, SimTime(60_000_000_000)), Some(SimTime(60_000_000_000)));
            b.take(1.0);
        }
        assert_eq!(b.available_at(1.0, 10.0, SimTime(60_000_000_000)), Some(SimTime(60_100_000_000)));
    }

    #[test]
    fn a_request_larger_than_the_bucket_passes_when_full_and_leaves_debt() {
        let mut b = Bucket::new(2.0);
        assert_eq!(b.available_at(5.0, 1.0, SimTime::ZERO), Some(SimTime::ZERO));
        b.take(5.0);
        // 3 tokens of debt plus 1 for the next unit request, at 1 token/s: 4 s (less the rounding slack).
        assert!(b.available_at(1.0, 1.0, SimTime::ZERO).unwrap().0.abs_diff(4_000_000_000) <= 1);
    }

    #[test]
    fn a_wait_beyond_the_clock_is_never_not_the_last_instant() {
        // wiops = 1e-308 with a 100 ms slice: capacity 1e-309, one write leaves 1 token of debt.
        let rate = 1e-308;
        let mut b = Bucket::new(rate * 0.1);
        assert_eq!(b.available_at(1.0, rate, SimTime::ZERO), Some(SimTime::ZERO));
        b.take(1.0);
        // The next token is 1e308 s away: (1 / 1e-308) * 1e9 ns overflows f64 to inf.
        assert!((1.0 / rate * NS_PER_S as f64).is_infinite());
        assert_eq!(b.available_at(1.0, rate, SimTime::ZERO), None);
        // Even at the clock's last instant the request is not due (it used to be: "due" == now == u64::MAX).
        b.refill(SimTime(u64::MAX), rate);
        assert_eq!(b.available_at(1.0, rate, SimTime(u64::MAX)), None);
        // A finite wait that would pass u64::MAX ns: 1 token at 1e-11/s is 1e11 s = 1e20 ns > 1.8e19 ns.
        let mut c = Bucket::new(1.0);
        c.take(1.0);
        assert!(1.0 / 1e-11 * NS_PER_S as f64 > u64::MAX as f64);
        assert_eq!(c.available_at(1.0, 1e-11, SimTime::ZERO), None);
        // Just inside the clock: 1 token at 1 per 1e9 s from t = 0 is due at 1e18 ns (less the rounding slack).
        let due = c.available_at(1.0, 1e-9, SimTime::ZERO).expect("within the clock");
        assert!(due.0.abs_diff(1_000_000_000_000_000_000) <= 2_000_000_000, "{due:?}");
        // The same wait starting near the end of the clock overflows it: never.
        c.refill(SimTime(u64::MAX - 1), 1e-9);
        c.take(1.0);
        assert_eq!(c.available_at(1.0, 1e-9, SimTime(u64::MAX - 1)), None);
    }
}

//! Simulated time: integer nanoseconds.
//!
//! Every timestamp in the simulator is a `SimTime` (nanoseconds since the start
//! of the run) and every interval a `SimDuration`. Integer time makes rotational
//! position exact and runs bit-identical across machines.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// A point in simulated time: nanoseconds since the start of the run.
pub struct SimTime(pub u64);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// A simulated interval, in nanoseconds.
pub struct SimDuration(pub u64);

/// Nanoseconds per microsecond.
pub const NS_PER_US: u64 = 1_000;
/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds per second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// The longest simulated time a config may name, ms (about 31 years; the
/// nanosecond clock ends at about 584 years).
pub const MAX_TIME_MS: f64 = 1e12;

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// Nanoseconds since the start of the run.
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Milliseconds since the start of the run.
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / NS_PER_MS as f64
    }
    /// Interval since `earlier`; saturates at zero.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

/// `x.round().max(0.0) as u64`: halves away from zero, negative and NaN
/// to 0, beyond `u64` saturated. Without the library call that `round` is
/// on baseline x86-64 (its rounding instruction needs SSE4.1), taken for
/// every drawn interval: the whole part by truncation, then up one at a
/// fraction of one half or more (exact: below 2^53 the fraction is, above
/// it there is none).
#[inline]
fn nearest(x: f64) -> u64 {
    let whole = x as u64;
    if x - whole as f64 >= 0.5 { whole.saturating_add(1) } else { whole }
}

impl SimDuration {
    /// No time.
    pub const ZERO: SimDuration = SimDuration(0);
    /// Length in nanoseconds.
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Milliseconds (as written in drive spec sheets) to the nearest nanosecond.
    #[inline]
    pub fn from_ms(ms: f64) -> SimDuration {
        SimDuration(nearest(ms * NS_PER_MS as f64))
    }
    /// Microseconds to the nearest nanosecond (negative gives zero).
    #[inline]
    pub fn from_us(us: f64) -> SimDuration {
        SimDuration(nearest(us * NS_PER_US as f64))
    }
    /// Length in milliseconds.
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / NS_PER_MS as f64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0 + d.0)
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0
    }
}
impl Sub for SimTime {
    type Output = SimDuration;
    fn sub(self, o: SimTime) -> SimDuration {
        SimDuration(self.0 - o.0)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0 + d.0)
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} ms", self.as_ms_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} ms", self.as_ms_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nearest` is `round().max(0.0) as u64` for every kind of double:
    /// halves, the largest double below one half, both sides of 2^53 and
    /// 2^64, negatives, infinities, NaN, and a million random bit patterns.
    #[test]
    fn nearest_is_round_to_u64() {
        let by_round = |x: f64| x.round().max(0.0) as u64;
        let edges = [0.0, -0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 1e6 + 0.5, 4503599627370495.5, 9007199254740993.0,
                     18446744073709551615.0, 18446744073709551616.0, 1e30, -0.4, -0.5, -0.6, -1e30, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        for x in edges {
            assert_eq!(nearest(x), by_round(x), "{x}");
        }
        let mut bits = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1_000_000 {
            bits = bits.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = f64::from_bits(bits);
            assert_eq!(nearest(x), by_round(x), "{x:e} ({bits:#x})");
            let ms = (bits >> 11) as f64 / (1u64 << 53) as f64 * 1e3; // an interval of 0-1000 ms, as drawn
            assert_eq!(nearest(ms * 1e6), by_round(ms * 1e6), "{ms} ms");
        }
    }
}

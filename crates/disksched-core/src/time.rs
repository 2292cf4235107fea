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

impl SimDuration {
    /// No time.
    pub const ZERO: SimDuration = SimDuration(0);
    /// Length in nanoseconds.
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Milliseconds (as written in drive spec sheets) to the nearest nanosecond.
    pub fn from_ms(ms: f64) -> SimDuration {
        SimDuration((ms * NS_PER_MS as f64).round().max(0.0) as u64)
    }
    /// Microseconds to the nearest nanosecond (negative gives zero).
    pub fn from_us(us: f64) -> SimDuration {
        SimDuration((us * NS_PER_US as f64).round().max(0.0) as u64)
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

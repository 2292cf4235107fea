//! Open-loop arrivals: Poisson (exponential gaps) or constant inter-arrival
//! times, independent of completions; uniform random start blocks.

use super::{draw_interval, Generator, IntervalDist, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::Result;
use crate::schema::{Param, Ty};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// At least the clock's 1 ns: a shorter gap rounds to 0 and every arrival lands at one instant.
const INTERARRIVAL_MS: Param = Param::float("interarrival_ms", "ms", 1e-6, f64::NAN, super::MAX_TIME_MS,
    "mean time between arrivals").default_text("required");

/// `kind = "open"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[
    INTERARRIVAL_MS,
    Param::other("arrivals", Ty::Choice(&["exponential", "poisson", "constant"]), "exponential", "inter-arrival distribution"),
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "open"`: open-loop arrivals, uniform random starts.
pub struct OpenConfig {
    /// Mean time between arrivals, ms.
    pub interarrival_ms: f64,
    #[serde(default = "poisson")]
    /// Inter-arrival distribution (default exponential).
    pub arrivals: IntervalDist,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

fn poisson() -> IntervalDist {
    IntervalDist::Exponential
}

/// The open-loop generator.
pub struct Open {
    cfg: OpenConfig,
    io: RandomIoSampler,
}

impl Open {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: OpenConfig, capacity: u64, sector_bytes: u32) -> Result<Open> {
        INTERARRIVAL_MS.check("workload", cfg.interarrival_ms)?;
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        Ok(Open { cfg, io })
    }
}

impl Generator for Open {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        vec![(SimTime::ZERO + draw_interval(self.cfg.interarrival_ms, self.cfg.arrivals == IntervalDist::Exponential, rng), 0)]
    }
    fn arrive(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let io = self.io.sample(rng);
        let next = now + draw_interval(self.cfg.interarrival_ms, self.cfg.arrivals == IntervalDist::Exponential, rng);
        Some((io, Some(next)))
    }
    fn completed(&mut self, _now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        None
    }
    fn clients(&self) -> u32 {
        1
    }
}

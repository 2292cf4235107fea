//! Open-loop arrivals: Poisson (exponential gaps) or constant inter-arrival
//! times, independent of completions; uniform random start blocks.

use super::{draw_interval, Generator, IntervalDist, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::{config_err, Result};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenConfig {
    /// Mean time between arrivals, ms.
    pub interarrival_ms: f64,
    #[serde(default = "poisson")]
    pub arrivals: IntervalDist,
    #[serde(flatten)]
    pub io: RandomIo,
}

fn poisson() -> IntervalDist {
    IntervalDist::Exponential
}

pub struct Open {
    cfg: OpenConfig,
    io: RandomIoSampler,
}

impl Open {
    pub fn new(cfg: OpenConfig, capacity: u64, sector_bytes: u32) -> Result<Open> {
        if !(cfg.interarrival_ms > 0.0 && cfg.interarrival_ms.is_finite()) {
            return Err(config_err("workload.interarrival_ms", format!("{} must be > 0", cfg.interarrival_ms)));
        }
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

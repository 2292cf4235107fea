//! Closed-loop clients: each issues its next request a think time after its
//! previous one completed; uniform random start blocks.

use super::{draw_interval, Generator, IntervalDist, IoSpec, RandomIo, RandomIoSampler, SimRng, SizeDist};
use crate::error::Result;
use crate::schema::Param;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `kind = "closed"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[super::CLIENTS.default_text("required"), super::THINK_TIME_MS, super::THINK_DIST];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "closed"`: closed-loop clients with a think time, uniform random starts.
pub struct ClosedConfig {
    /// Closed-loop clients.
    pub clients: u32,
    /// Mean think time between a completion and the client's next request, ms.
    #[serde(default)]
    pub think_time_ms: f64,
    #[serde(default)]
    /// Think-time distribution (default constant).
    pub think_dist: IntervalDist,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

impl ClosedConfig {
    /// The freeblock paper's OLTP foreground (Lumb et al. 2002, section 5.1).
    pub fn oltp() -> ClosedConfig {
        ClosedConfig {
            clients: 10,
            think_time_ms: 30.0,
            think_dist: IntervalDist::Constant,
            io: RandomIo { size_kb: 8.0, size_dist: SizeDist::Exponential, size_multiple_kb: 4.0, read_fraction: 2.0 / 3.0 },
        }
    }
}

/// The closed-loop generator.
pub struct Closed {
    cfg: ClosedConfig,
    io: RandomIoSampler,
}

impl Closed {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: ClosedConfig, capacity: u64, sector_bytes: u32) -> Result<Closed> {
        super::CLIENTS.check_count("workload", cfg.clients as u64)?;
        super::THINK_TIME_MS.check("workload", cfg.think_time_ms)?;
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        Ok(Closed { cfg, io })
    }
}

impl Generator for Closed {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        (0..self.cfg.clients).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        Some((self.io.sample(rng), None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<SimTime> {
        Some(now + draw_interval(self.cfg.think_time_ms, self.cfg.think_dist == IntervalDist::Exponential, rng))
    }
    fn clients(&self) -> u32 {
        self.cfg.clients
    }
}

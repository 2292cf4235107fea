//! Hot/cold skew: a fraction `hot_fraction` of the disk (the hot region,
//! starting at `hot_start_lbn`, default the start of the disk) receives
//! `hot_access_fraction` of the requests; starts are uniform within the
//! region chosen. Closed-loop clients with a think time; sizes and
//! read/write as `RandomIo` (the "80/20" skew of OLTP and file-server
//! traces, e.g. Gray & Putzolu's five-minute-rule data).

use super::{one, draw_interval, Generator, IntervalDist, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::{config_err, Result};
use crate::schema::Param;
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

const HOT_FRACTION: Param = Param::float("hot_fraction", "", 0.0, f64::NAN, 1.0,
    "share of the disk's blocks that is hot; each region must hold one size unit").open_min().open_max().default_text("required");
const HOT_ACCESS_FRACTION: Param = Param::float("hot_access_fraction", "", 0.0, f64::NAN, 1.0,
    "share of requests that start in the hot region").default_text("required");
const HOT_START_LBN: Param = Param::int("hot_start_lbn", "block", 0.0, 0.0, u64::MAX as f64,
    "first block of the hot region, which must fit on the disk");

/// `kind = "hotcold"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[super::CLIENTS, super::THINK_TIME_MS, super::THINK_DIST, HOT_FRACTION, HOT_ACCESS_FRACTION, HOT_START_LBN];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "hotcold"`: closed-loop clients whose requests favour a hot region.
pub struct HotColdConfig {
    #[serde(default = "one")]
    /// Closed-loop clients (default 1).
    pub clients: u32,
    #[serde(default)]
    /// Mean think time between a completion and the client's next request, ms.
    pub think_time_ms: f64,
    #[serde(default)]
    /// Think-time distribution (default constant).
    pub think_dist: IntervalDist,
    /// Share of the disk's blocks that is hot, (0, 1).
    pub hot_fraction: f64,
    /// Share of requests that start in the hot region, [0, 1].
    pub hot_access_fraction: f64,
    /// First block of the hot region.
    #[serde(default)]
    pub hot_start_lbn: u64,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

/// The hot/cold generator.
pub struct HotCold {
    cfg: HotColdConfig,
    io: RandomIoSampler,
    capacity: u64,
    /// Hot region [hot_lo, hot_hi).
    hot_lo: u64,
    hot_hi: u64,
}

impl HotCold {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: HotColdConfig, capacity: u64, sector_bytes: u32) -> Result<HotCold> {
        super::CLIENTS.check_count("workload", cfg.clients as u64)?;
        super::THINK_TIME_MS.check("workload", cfg.think_time_ms)?;
        HOT_FRACTION.check("workload", cfg.hot_fraction)?;
        HOT_ACCESS_FRACTION.check("workload", cfg.hot_access_fraction)?;
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        let hot_blocks = (cfg.hot_fraction * capacity as f64).round() as u64;
        // Each region must hold at least one aligned start.
        let u = io.unit_blocks();
        if hot_blocks < u || capacity - hot_blocks < u {
            return Err(config_err("workload.hot_fraction", format!(
                "{} leaves a region smaller than one {}-block size unit on this {capacity}-block disk", cfg.hot_fraction, u)));
        }
        HOT_START_LBN.check_count_within("workload", cfg.hot_start_lbn, 0.0, (capacity - hot_blocks) as f64)?;
        let (hot_lo, hot_hi) = (cfg.hot_start_lbn, cfg.hot_start_lbn + hot_blocks);
        Ok(HotCold { cfg, io, capacity, hot_lo, hot_hi })
    }
}

impl Generator for HotCold {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        (0..self.cfg.clients).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let io = if rng.gen::<f64>() < self.cfg.hot_access_fraction {
            self.io.sample_in(rng, self.hot_lo, self.hot_hi)
        } else {
            // The cold region is the rest of the disk, on both sides of the
            // hot one: pick a side in proportion to its size.
            let below = self.hot_lo;
            let above = self.capacity - self.hot_hi;
            if rng.gen_range(0..below + above) < below {
                self.io.sample_in(rng, 0, self.hot_lo)
            } else {
                self.io.sample_in(rng, self.hot_hi, self.capacity)
            }
        };
        Some((io, None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<SimTime> {
        Some(now + draw_interval(self.cfg.think_time_ms, self.cfg.think_dist == IntervalDist::Exponential, rng))
    }
    fn clients(&self) -> u32 {
        self.cfg.clients
    }
}

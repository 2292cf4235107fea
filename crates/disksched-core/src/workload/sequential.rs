//! Sequential streams: each client reads (or writes) consecutive blocks,
//! closed-loop with a think time, starting at a random aligned block (or
//! at `start_lbn`) and wrapping at the end of the disk.

use super::{draw_interval, Generator, IntervalDist, IoSpec, SimRng};
use crate::error::{config_err, Result};
use crate::host::Class;
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequentialConfig {
    #[serde(default = "one")]
    pub streams: u32,
    pub request_kb: f64,
    #[serde(default)]
    pub think_time_ms: f64,
    #[serde(default = "constant")]
    pub think_dist: IntervalDist,
    #[serde(default)]
    pub write: bool,
    /// First block of stream 0 (others start at random places); random if absent.
    #[serde(default)]
    pub start_lbn: Option<u64>,
}

fn one() -> u32 {
    1
}
fn constant() -> IntervalDist {
    IntervalDist::Constant
}

pub struct Sequential {
    cfg: SequentialConfig,
    capacity: u64,
    blocks: u64,
    next_lbn: Vec<u64>,
}

impl Sequential {
    pub fn new(cfg: SequentialConfig, capacity: u64, sector_bytes: u32) -> Result<Sequential> {
        let blocks = cfg.request_kb * 1024.0 / sector_bytes as f64;
        if !(blocks >= 1.0 && blocks.fract() == 0.0 && (blocks as u64) <= capacity.min(65536)) {
            return Err(config_err("workload.request_kb", format!(
                "{} KB is not a whole number of {sector_bytes}-byte blocks between 1 and 65536", cfg.request_kb)));
        }
        if !(1..=100_000).contains(&cfg.streams) {
            return Err(config_err("workload.streams", format!("{} is out of range [1, 100000]", cfg.streams)));
        }
        if !(cfg.think_time_ms >= 0.0 && cfg.think_time_ms.is_finite()) {
            return Err(config_err("workload.think_time_ms", format!("{} must be >= 0", cfg.think_time_ms)));
        }
        if let Some(s) = cfg.start_lbn.filter(|&s| s >= capacity) {
            return Err(config_err("workload.start_lbn", format!("{s} is beyond the disk's {capacity} blocks")));
        }
        Ok(Sequential { capacity, blocks: blocks as u64, next_lbn: vec![], cfg })
    }
}

impl Generator for Sequential {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let slots = self.capacity / self.blocks;
        self.next_lbn = (0..self.cfg.streams)
            .map(|s| match (s, self.cfg.start_lbn) {
                (0, Some(l)) => l,
                _ => rng.gen_range(0..slots) * self.blocks,
            })
            .collect();
        (0..self.cfg.streams).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let next = &mut self.next_lbn[client as usize];
        if *next + self.blocks > self.capacity {
            *next = 0;
        }
        let io = IoSpec { lbn: *next, blocks: self.blocks as u32, is_write: self.cfg.write, class: Class::BestEffort, deadline: None };
        *next += self.blocks;
        Some((io, None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<SimTime> {
        Some(now + draw_interval(self.cfg.think_time_ms, self.cfg.think_dist == IntervalDist::Exponential, rng))
    }
    fn clients(&self) -> u32 {
        self.cfg.streams
    }
}

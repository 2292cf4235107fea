//! Sequential streams: each client reads (or writes) consecutive blocks,
//! closed-loop with a think time, starting at a random aligned block (or
//! at `start_lbn`) and wrapping at the end of the disk: a strided stream
//! whose stride is its request size.

use super::strided::{Strided, StridedConfig};
use super::IntervalDist;
use crate::error::{config_err, Result};
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

/// A sequential stream is a strided one whose stride is its request size.
pub fn new(cfg: SequentialConfig, capacity: u64, sector_bytes: u32) -> Result<Strided> {
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
    let blocks = blocks as u64;
    let strided = StridedConfig {
        streams: cfg.streams,
        request_kb: cfg.request_kb,
        stride_kb: cfg.request_kb,
        think_time_ms: cfg.think_time_ms,
        think_dist: cfg.think_dist,
        write: cfg.write,
        start_lbn: cfg.start_lbn,
    };
    Ok(Strided::checked(strided, capacity, blocks, blocks))
}

//! Strided streams: each client reads (or writes) `request_kb` every
//! `stride_kb`, i.e. sequential with a gap of `stride_kb - request_kb` between
//! requests (column scans of a row-major array, interleaved file layouts),
//! closed-loop with a think time. Stream 0 starts at `start_lbn` if given,
//! the others at random stride-aligned blocks; a stream wraps to block 0 at
//! the end of the disk.

use super::{one, draw_interval, kb_to_blocks, Generator, IntervalDist, IoSpec, SimRng};
use crate::error::{config_err, Result};
use crate::schema::Param;
use crate::host::Class;
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// `kind = "strided"` keys.
pub const PARAMS: &[Param] = &[
    super::STREAMS, super::REQUEST_KB,
    Param::float("stride_kb", "KB", 0.0, f64::NAN, 1e12,
        "distance from one request's start to the next one's: whole blocks, from request_kb to the disk").open_min().default_text("required"),
    super::THINK_TIME_MS, super::THINK_DIST, super::WRITE, super::START_LBN,
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "strided"`: strided closed-loop streams (see the module doc).
pub struct StridedConfig {
    #[serde(default = "one")]
    /// Streams, each its own client (default 1).
    pub streams: u32,
    /// Request size, KB.
    pub request_kb: f64,
    /// Distance from one request's start to the next one's, KB (>= request_kb).
    pub stride_kb: f64,
    #[serde(default)]
    /// Mean think time between a completion and the stream's next request, ms.
    pub think_time_ms: f64,
    #[serde(default)]
    /// Think-time distribution (default constant).
    pub think_dist: IntervalDist,
    #[serde(default)]
    /// Writes instead of reads.
    pub write: bool,
    #[serde(default)]
    /// First block of stream 0; random if absent.
    pub start_lbn: Option<u64>,
}

/// The strided generator.
pub struct Strided {
    cfg: StridedConfig,
    capacity: u64,
    blocks: u64,
    stride: u64,
    next_lbn: Vec<u64>,
}

impl Strided {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: StridedConfig, capacity: u64, sector_bytes: u32) -> Result<Strided> {
        let blocks = kb_to_blocks("workload.request_kb", cfg.request_kb, sector_bytes, capacity)?;
        let stride = cfg.stride_kb * 1024.0 / sector_bytes as f64;
        if !(stride >= blocks as f64 && stride.fract() == 0.0 && stride <= capacity as f64) {
            return Err(config_err("workload.stride_kb", format!(
                "{} KB is not a whole number of {sector_bytes}-byte blocks in [request_kb = {}, disk capacity]",
                cfg.stride_kb, cfg.request_kb)));
        }
        super::STREAMS.check_count("workload", cfg.streams as u64)?;
        super::THINK_TIME_MS.check("workload", cfg.think_time_ms)?;
        super::check_start_lbn(cfg.start_lbn, blocks, capacity)?;
        Ok(Strided { capacity, blocks, stride: stride as u64, next_lbn: vec![], cfg })
    }
}

impl Generator for Strided {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let slots = (self.capacity - self.blocks) / self.stride + 1;
        self.next_lbn = (0..self.cfg.streams)
            .map(|s| match (s, self.cfg.start_lbn) {
                (0, Some(l)) => l,
                _ => rng.gen_range(0..slots) * self.stride,
            })
            .collect();
        (0..self.cfg.streams).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let next = &mut self.next_lbn[client as usize];
        if *next + self.blocks > self.capacity {
            *next = 0;
        }
        let io = IoSpec { lbn: *next, blocks: self.blocks as u32, is_write: self.cfg.write, class: Class::BestEffort, deadline: None, range: None, flow: None };
        *next += self.stride;
        Some((io, None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<SimTime> {
        Some(now + draw_interval(self.cfg.think_time_ms, self.cfg.think_dist == IntervalDist::Exponential, rng))
    }
    fn clients(&self) -> u32 {
        self.cfg.streams
    }
}

//! Sequential streams: each client reads (or writes) consecutive blocks,
//! closed-loop with a think time, starting at a random aligned block (or
//! at `start_lbn`) and wrapping at the end of the disk: a strided stream
//! whose stride is its request size.

use super::strided::{Strided, StridedConfig};
use super::{one, IntervalDist};
use crate::error::Result;
use crate::schema::Param;
use serde::{Deserialize, Serialize};

/// `kind = "sequential"` keys (checked as a strided stream's).
pub const PARAMS: &[Param] = &[super::STREAMS, super::REQUEST_KB, super::THINK_TIME_MS, super::THINK_DIST, super::WRITE, super::START_LBN];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "sequential"`: sequential closed-loop streams (see the module doc).
pub struct SequentialConfig {
    #[serde(default = "one")]
    /// Streams, each its own client (default 1).
    pub streams: u32,
    /// Request size, KB.
    pub request_kb: f64,
    #[serde(default)]
    /// Mean think time between a completion and the stream's next request, ms.
    pub think_time_ms: f64,
    #[serde(default)]
    /// Think-time distribution (default constant).
    pub think_dist: IntervalDist,
    #[serde(default)]
    /// Writes instead of reads.
    pub write: bool,
    /// First block of stream 0 (others start at random places); random if absent.
    #[serde(default)]
    pub start_lbn: Option<u64>,
}

/// A sequential stream is a strided one whose stride is its request size.
pub fn new(cfg: SequentialConfig, capacity: u64, sector_bytes: u32) -> Result<Strided> {
    let strided = StridedConfig {
        streams: cfg.streams,
        request_kb: cfg.request_kb,
        stride_kb: cfg.request_kb,
        think_time_ms: cfg.think_time_ms,
        think_dist: cfg.think_dist,
        write: cfg.write,
        start_lbn: cfg.start_lbn,
    };
    Strided::new(strided, capacity, sector_bytes)
}

//! Constant-rate streams (soft-real-time readers: video playback, a
//! continuous-media server): each stream wants `mb_per_s` (10^6 bytes/s) in
//! `request_kb` requests, one per period (period = request size / rate), read
//! sequentially. Request k is due at `start_ms` + k x period and is issued
//! then, or when request k-1 completes if that is later: one request in
//! flight, and a stream that has fallen behind reads back to back to catch
//! up. Each request's deadline is the end of its period plus the client's
//! playout buffer of `buffer_periods` periods, `start_ms` + (k+1+buffer) x
//! period: the data a player holds lets a request finish that much late
//! before playback stalls. The default, one period, is classic double
//! buffering (one buffer plays while the other fills); 0 is no slack. A
//! stream behind its schedule (by more than its buffer) misses until it has
//! caught up.
//! No request is due at or after `stop_ms`. Stream 0 starts at `start_lbn` if
//! given, the others at random request-aligned blocks; a stream wraps to
//! block 0 at the end of the disk.

use super::{one, kb_to_blocks, Generator, IoSpec, SimRng};
use crate::error::{config_err, Result};
use crate::host::Class;
use crate::schema::Param;
use crate::time::{SimDuration, SimTime, NS_PER_S};
use rand::Rng;
use serde::{Deserialize, Serialize};

const MB_PER_S: Param = Param::float("mb_per_s", "MB/s", 0.0, f64::NAN, 1e6,
    "rate each stream needs (10^6 bytes/s); at least 1 ns per request").open_min().default_text("required");
const START_MS: Param = Param::float("start_ms", "ms", 0.0, 0.0, super::MAX_TIME_MS, "when the streams start");
const STOP_MS: Param = Param::float("stop_ms", "ms", 0.0, f64::NAN, super::MAX_TIME_MS,
    "no request is due at or after it; after start_ms").open_min().default_text("absent: never");
const BUFFER_PERIODS: Param = Param::float("buffer_periods", "periods", 0.0, 1.0, 1000.0,
    "playout buffer: each deadline's slack (1 = double buffering)");

/// `kind = "stream"` keys.
pub const PARAMS: &[Param] = &[super::STREAMS, MB_PER_S, super::REQUEST_KB, super::WRITE, super::START_LBN, START_MS, STOP_MS, BUFFER_PERIODS];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "stream"`: constant-rate streams with deadlines (see the module doc).
pub struct StreamConfig {
    #[serde(default = "one")]
    /// Streams, each its own client (default 1).
    pub streams: u32,
    /// Rate each stream needs, MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Request size, KB.
    pub request_kb: f64,
    #[serde(default)]
    /// Writes instead of reads.
    pub write: bool,
    #[serde(default)]
    /// First block of stream 0; random if absent.
    pub start_lbn: Option<u64>,
    /// When the streams start, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// When they stop (no request is due at or after it), ms; never if absent.
    #[serde(default)]
    pub stop_ms: Option<f64>,
    /// Playout buffer, in periods: each deadline's slack (0 to 1000; default 1, double buffering).
    #[serde(default = "default_buffer_periods")]
    pub buffer_periods: f64,
}

fn default_buffer_periods() -> f64 {
    1.0
}

/// The stream generator.
pub struct Stream {
    cfg: StreamConfig,
    capacity: u64,
    blocks: u64,
    period_ns: u64,
    slack_ns: u64,
    start: SimTime,
    stop: Option<SimTime>,
    next_lbn: Vec<u64>,
    /// Index of each stream's next request.
    next_k: Vec<u64>,
}

impl Stream {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: StreamConfig, capacity: u64, sector_bytes: u32) -> Result<Stream> {
        let blocks = kb_to_blocks("workload.request_kb", cfg.request_kb, sector_bytes, capacity)?;
        super::STREAMS.check_count("workload", cfg.streams as u64)?;
        MB_PER_S.check("workload", cfg.mb_per_s)?;
        START_MS.check("workload", cfg.start_ms)?;
        if let Some(s) = cfg.stop_ms {
            STOP_MS.check("workload", s)?;
            if s <= cfg.start_ms {
                return Err(config_err("workload.stop_ms", format!("{s} must be after start_ms ({})", cfg.start_ms)));
            }
        }
        BUFFER_PERIODS.check("workload", cfg.buffer_periods)?;
        super::check_start_lbn(cfg.start_lbn, blocks, capacity)?;
        let period_ns = (blocks * sector_bytes as u64) as f64 / (cfg.mb_per_s * 1e6) * NS_PER_S as f64;
        if period_ns < 1.0 {
            return Err(config_err("workload.mb_per_s", format!("{} leaves less than 1 ns per request", cfg.mb_per_s)));
        }
        Ok(Stream {
            capacity,
            blocks,
            period_ns: period_ns.round() as u64,
            slack_ns: (period_ns.round() * cfg.buffer_periods).round() as u64,
            start: SimTime::ZERO + SimDuration::from_ms(cfg.start_ms),
            stop: cfg.stop_ms.map(|s| SimTime::ZERO + SimDuration::from_ms(s)),
            next_lbn: vec![],
            next_k: vec![],
            cfg,
        })
    }

    fn due(&self, k: u64) -> SimTime {
        SimTime(self.start.0 + k * self.period_ns)
    }
}

impl Generator for Stream {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let slots = self.capacity / self.blocks;
        self.next_lbn = (0..self.cfg.streams)
            .map(|s| match (s, self.cfg.start_lbn) {
                (0, Some(l)) => l,
                _ => rng.gen_range(0..slots) * self.blocks,
            })
            .collect();
        self.next_k = vec![0; self.cfg.streams as usize];
        (0..self.cfg.streams).map(|c| (self.start, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let c = client as usize;
        if self.next_lbn[c] + self.blocks > self.capacity {
            self.next_lbn[c] = 0;
        }
        self.next_k[c] += 1;
        let deadline = Some(self.due(self.next_k[c]) + SimDuration(self.slack_ns));
        let io = IoSpec { lbn: self.next_lbn[c], blocks: self.blocks as u32, is_write: self.cfg.write, class: Class::BestEffort, deadline, range: None, flow: None };
        self.next_lbn[c] += self.blocks;
        Some((io, None))
    }
    fn completed(&mut self, now: SimTime, client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        let due = self.due(self.next_k[client as usize]);
        if self.stop.is_some_and(|s| due >= s) {
            return None;
        }
        Some(due.max(now))
    }
    fn clients(&self) -> u32 {
        self.cfg.streams
    }
}

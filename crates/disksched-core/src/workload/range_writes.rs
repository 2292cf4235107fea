//! Randomized range writes (Anand et al., OSDI 2008, section 5): `outstanding`
//! closed-loop writers, each writing `size_blocks` as soon as its previous
//! write completes. Each write names a *range*: `range_blocks` blocks placed
//! uniformly at random within the span (the whole disk, or one group of
//! `group_blocks` blocks, as an FFS cylinder group), and accepts `targets`
//! aligned starts chosen at random within it (0 = every start in the range).
//! `range_blocks = size_blocks` with one target is a traditional write; with
//! `as_range = false` such writes are issued as ordinary writes (same draws).
//! With `read_fraction > 0` some requests are range reads: the `targets`
//! starts are replicas, and the drive reads whichever it reaches first.

use super::{one, check_count, check_range, Generator, IoSpec, SimRng};
use crate::error::{config_err, Result};
use crate::host::range::RangeSpec;
use crate::host::Class;
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Span {
    Disk,
    Group,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeWritesConfig {
    /// Writes kept outstanding (closed-loop writers).
    pub outstanding: u32,
    #[serde(default = "one")]
    pub size_blocks: u32,
    #[serde(default = "one")]
    pub range_blocks: u32,
    /// Acceptable starts per request; 0 = all in the range.
    #[serde(default)]
    pub targets: u32,
    #[serde(default = "one")]
    pub align_blocks: u32,
    #[serde(default = "disk")]
    pub span: Span,
    #[serde(default = "group_blocks")]
    pub group_blocks: u64,
    /// The group used with `span = "group"`; default: the one at mid-capacity.
    #[serde(default)]
    pub group: Option<u64>,
    #[serde(default = "yes")]
    pub as_range: bool,
    #[serde(default)]
    pub read_fraction: f64,
}

fn disk() -> Span {
    Span::Disk
}
fn group_blocks() -> u64 {
    4096
}
fn yes() -> bool {
    true
}

pub struct RangeWrites {
    cfg: RangeWritesConfig,
    /// Blocks [lo, hi) that ranges are drawn from.
    span: (u64, u64),
    /// Aligned starts in one range.
    starts_per_range: u64,
}

impl RangeWrites {
    pub fn new(cfg: RangeWritesConfig, capacity: u64) -> Result<RangeWrites> {
        check_count("workload.outstanding", cfg.outstanding, 1, 1024)?;
        check_count("workload.size_blocks", cfg.size_blocks, 1, 65536)?;
        check_count("workload.align_blocks", cfg.align_blocks, 1, 65536)?;
        check_range("workload.read_fraction", cfg.read_fraction, 0.0, 1.0)?;
        let span = match cfg.span {
            Span::Disk => (0, capacity),
            Span::Group => {
                if !(1..=capacity).contains(&cfg.group_blocks) {
                    return Err(config_err("workload.group_blocks", format!("{} is out of range [1, {capacity}]", cfg.group_blocks)));
                }
                let groups = capacity / cfg.group_blocks;
                let g = cfg.group.unwrap_or(groups / 2);
                if g >= groups {
                    return Err(config_err("workload.group", format!("{g} is out of range [0, {}]", groups - 1)));
                }
                (g * cfg.group_blocks, (g + 1) * cfg.group_blocks)
            }
        };
        let room = span.1 - span.0;
        if !(cfg.size_blocks as u64..=room).contains(&(cfg.range_blocks as u64)) {
            return Err(config_err("workload.range_blocks", format!(
                "{} is out of range [{}, {room}] (at least the write, at most the span)", cfg.range_blocks, cfg.size_blocks)));
        }
        // Ranges are aligned, so each holds the same number of aligned starts.
        let a = cfg.align_blocks as u64;
        if cfg.range_blocks as u64 % a != 0 || span.0 % a != 0 {
            return Err(config_err("workload.align_blocks", format!(
                "{a} must divide range_blocks ({}) and the span's first block ({})", cfg.range_blocks, span.0)));
        }
        let starts_per_range = (cfg.range_blocks - cfg.size_blocks) as u64 / a + 1;
        if cfg.targets as u64 > starts_per_range {
            return Err(config_err("workload.targets", format!(
                "{} is out of range [0, {starts_per_range}] (aligned starts in a {}-block range)", cfg.targets, cfg.range_blocks)));
        }
        if !cfg.as_range && !(cfg.targets == 1 || starts_per_range == 1) {
            return Err(config_err("workload.as_range", "false needs exactly one target per write (targets = 1)"));
        }
        Ok(RangeWrites { cfg, span, starts_per_range })
    }
}

impl Generator for RangeWrites {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        (0..self.cfg.outstanding).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let c = &self.cfg;
        let (a, blocks) = (c.align_blocks as u64, c.size_blocks);
        let windows = (self.span.1 - self.span.0 - c.range_blocks as u64) / a + 1;
        let lo = self.span.0 + rng.gen_range(0..windows) * a;
        let is_write = rng.gen::<f64>() >= c.read_fraction;
        let n = self.starts_per_range;
        let k = if c.targets == 0 { n } else { c.targets as u64 };
        let spans: Vec<(u64, u64)> = if k == n {
            vec![(lo, lo + c.range_blocks as u64)]
        } else {
            let mut picks: Vec<u64> = rand::seq::index::sample(rng, n as usize, k as usize).into_iter().map(|i| i as u64).collect();
            picks.sort_unstable();
            picks.into_iter().map(|i| (lo + i * a, lo + i * a + blocks as u64)).collect()
        };
        let io = IoSpec { lbn: spans[0].0, blocks, is_write, class: Class::BestEffort, deadline: None, range: None, flow: None };
        let io = if c.as_range { IoSpec { range: Some(RangeSpec { spans, align_blocks: c.align_blocks }), ..io } } else { io };
        Some((io, None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        Some(now)
    }
    fn clients(&self) -> u32 {
        self.cfg.outstanding
    }
}

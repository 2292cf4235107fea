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

use super::{one, Generator, IoSpec, SimRng};
use crate::error::{config_err, Result};
use crate::host::range::RangeSpec;
use crate::host::Class;
use crate::schema::{Param, Ty};
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// Where ranges are drawn from.
pub enum Span {
    /// The whole disk.
    Disk,
    /// One group of `group_blocks` blocks.
    Group,
}

pub(crate) const OUTSTANDING: Param = Param::int("outstanding", "requests", 1.0, f64::NAN, 1024.0,
    "writes kept outstanding (closed-loop writers)").default_text("required");
const SIZE_BLOCKS: Param = Param::int("size_blocks", "blocks", 1.0, 1.0, 65536.0, "write size");
const RANGE_BLOCKS: Param = Param::int("range_blocks", "blocks", 1.0, 1.0, u32::MAX as f64,
    "blocks of a range: at least size_blocks, at most the span");
const TARGETS: Param = Param::int("targets", "starts", 0.0, 0.0, u32::MAX as f64,
    "acceptable starts per request, at most the aligned starts in a range; 0 = all");
const TARGET_BLOCKS: Param = Param::int("target_blocks", "blocks", 1.0, f64::NAN, u32::MAX as f64,
    "blocks of each target: the write may start anywhere it fits inside one (Anand et al.'s range size per target); \
     at least size_blocks, at most range_blocks").default_text("size_blocks");
const ALIGN_BLOCKS: Param = Param::int("align_blocks", "blocks", 1.0, 1.0, 65536.0, "starts are aligned to this; it divides range_blocks");
const GROUP_BLOCKS: Param = Param::int("group_blocks", "blocks", 1.0, 4096.0, u64::MAX as f64, "`span = \"group\"`: blocks of a group, at most the disk");
const GROUP: Param = Param::int("group", "", 0.0, f64::NAN, u64::MAX as f64, "`span = \"group\"`: the group used, on the disk")
    .default_text("the group at mid-capacity");
const READ_FRACTION: Param = Param::float("read_fraction", "", 0.0, 0.0, 1.0, "share of requests that are range reads of replicas");

/// `kind = "range-writes"` keys.
pub const PARAMS: &[Param] = &[
    OUTSTANDING, SIZE_BLOCKS, RANGE_BLOCKS, TARGETS, TARGET_BLOCKS, ALIGN_BLOCKS,
    Param::other("span", Ty::Choice(&["disk", "group"]), "disk", "ranges are drawn from the whole disk or one group"),
    GROUP_BLOCKS, GROUP,
    Param::other("as_range", Ty::Bool, "true", "false: writes with one target are issued as ordinary writes"),
    READ_FRACTION,
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "range-writes"`: randomized range writes (see the module doc).
pub struct RangeWritesConfig {
    /// Writes kept outstanding (closed-loop writers).
    pub outstanding: u32,
    #[serde(default = "one")]
    /// Write size, blocks (default 1).
    pub size_blocks: u32,
    #[serde(default = "one")]
    /// Blocks of a range (default 1).
    pub range_blocks: u32,
    /// Acceptable starts per request; 0 = all in the range.
    #[serde(default)]
    pub targets: u32,
    /// Blocks of each target (default: `size_blocks`, a target is one start).
    #[serde(default)]
    pub target_blocks: Option<u32>,
    #[serde(default = "one")]
    /// Starts are aligned to this, blocks (default 1).
    pub align_blocks: u32,
    #[serde(default = "disk")]
    /// Ranges come from the whole disk or one group (default disk).
    pub span: Span,
    #[serde(default = "group_blocks")]
    /// Blocks of a group with `span = "group"` (default 4096).
    pub group_blocks: u64,
    /// The group used with `span = "group"`; default: the one at mid-capacity.
    #[serde(default)]
    pub group: Option<u64>,
    #[serde(default = "yes")]
    /// false: writes with one target are issued as ordinary writes (default true).
    pub as_range: bool,
    #[serde(default)]
    /// Share of requests that are range reads of replicas (default 0).
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

/// The range-writes generator.
pub struct RangeWrites {
    cfg: RangeWritesConfig,
    /// Blocks [lo, hi) that ranges are drawn from.
    span: (u64, u64),
    /// Aligned starts in one range.
    starts_per_range: u64,
}

impl RangeWrites {
    /// A generator for a disk of `capacity` blocks; an error names any key out of bounds.
    pub fn new(cfg: RangeWritesConfig, capacity: u64) -> Result<RangeWrites> {
        OUTSTANDING.check_count("workload", cfg.outstanding as u64)?;
        SIZE_BLOCKS.check_count("workload", cfg.size_blocks as u64)?;
        ALIGN_BLOCKS.check_count("workload", cfg.align_blocks as u64)?;
        READ_FRACTION.check("workload", cfg.read_fraction)?;
        // Declared bounds hold whether or not the key is used; the disk narrows some below.
        RANGE_BLOCKS.check_count("workload", cfg.range_blocks as u64)?;
        GROUP_BLOCKS.check_count("workload", cfg.group_blocks)?;
        let span = match cfg.span {
            Span::Disk => (0, capacity),
            Span::Group => {
                GROUP_BLOCKS.check_count_within("workload", cfg.group_blocks, 1.0, capacity as f64)?;
                let groups = capacity / cfg.group_blocks;
                let g = cfg.group.unwrap_or(groups / 2);
                GROUP.check_count_within("workload", g, 0.0, (groups - 1) as f64)?;
                (g * cfg.group_blocks, (g + 1) * cfg.group_blocks)
            }
        };
        let room = span.1 - span.0;
        RANGE_BLOCKS.check_count_within("workload", cfg.range_blocks as u64, cfg.size_blocks as f64, room as f64)?;
        // Ranges are aligned, so each holds the same number of aligned starts.
        let a = cfg.align_blocks as u64;
        if cfg.range_blocks as u64 % a != 0 || span.0 % a != 0 {
            return Err(config_err("workload.align_blocks", format!(
                "{a} must divide range_blocks ({}) and the span's first block ({})", cfg.range_blocks, span.0)));
        }
        let starts_per_range = (cfg.range_blocks - cfg.size_blocks) as u64 / a + 1;
        TARGETS.check_count_within("workload", cfg.targets as u64, 0.0, starts_per_range as f64)?;
        if let Some(t) = cfg.target_blocks {
            TARGET_BLOCKS.check_count_within("workload", t as u64, cfg.size_blocks as f64, cfg.range_blocks as f64)?;
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
            // Each target: `target_blocks` from its start, within the range (they may overlap).
            let width = c.target_blocks.unwrap_or(blocks) as u64;
            let end = lo + c.range_blocks as u64;
            picks.into_iter().map(|i| (lo + i * a, (lo + i * a + width).min(end))).collect()
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

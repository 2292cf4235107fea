//! Trace replay: requests from a trace file, streamed (constant memory).
//!
//! Modes:
//! - `open`: issue each request at its timestamp (relative to the first),
//!   divided by `speed`;
//! - `closed`: keep `outstanding` requests in the system, ignoring timestamps;
//! - `validate`: DiskSim's validation replay: one request outstanding, each
//!   issued the trace's recorded delay after the previous one completed.
//!
//! Addresses are mapped onto the simulated disk: `none` (a request beyond the
//! disk is an error), `offset` (add `offset_blocks`), `modulo` (wrap around
//! the disk), `scale` (stretch `source_blocks` onto the disk). With
//! `device_disks`, every trace device gets its own disk of a concatenated
//! array (`disk.count`), in order of first appearance. `skip_requests`
//! starts the replay that many requests (of the selected device) into the
//! trace, so an experiment can take its starting point from its seed.

use super::{Generator, IoSpec, SimRng};
use crate::error::{config_err, Error, Result};
use crate::host::Class;
use crate::schema::{Param, Ty};
use crate::time::SimTime;
use crate::trace::{self, TraceFormat, TraceReader, TraceRecord};
use serde::{Deserialize, Serialize};
use std::path::Path;

const SPEED: Param = Param::float("speed", "x", 0.0, 1.0, 1e9, "open loop: 2 = twice as fast").open_min();
const SKIP_REQUESTS: Param = Param::int("skip_requests", "requests", 0.0, 0.0, u64::MAX as f64,
    "start the replay this many requests (of the selected device) into the trace");
const OUTSTANDING: Param = Param::int("outstanding", "requests", 1.0, 1.0, 1_000_000.0, "closed loop: requests kept in the system");

/// `kind = "trace"` keys.
pub const PARAMS: &[Param] = &[
    Param::other("path", Ty::Str, "required", "trace file (relative paths: from the config file's directory)"),
    Param::other("format", Ty::Str, "absent: detected", "trace format (`disksched trace info` lists them)"),
    Param::other("mode", Ty::Choice(&["open", "closed", "validate"]), "open",
        "open: at the trace's times / speed; closed: `outstanding` in the system; validate: DiskSim's validation replay"),
    SPEED,
    OUTSTANDING,
    Param::int("device", "", 0.0, f64::NAN, u32::MAX as f64, "replay only this trace device").default_text("absent: every device"),
    Param::other("map", Ty::Choice(&["none", "offset", "modulo", "scale"]), "none", "how trace addresses map onto the disk"),
    Param::int("offset_blocks", "blocks", 0.0, 0.0, u64::MAX as f64, "`map = \"offset\"`: added to every address"),
    Param::int("source_blocks", "blocks", 1.0, f64::NAN, u64::MAX as f64, "`map = \"scale\"`: the trace's address space").default_text("absent (required by scale)"),
    Param::other("skip_bad_lines", Ty::Bool, "false", "count and skip malformed lines instead of stopping"),
    SKIP_REQUESTS,
    Param::other("device_disks", Ty::Bool, "false", "each trace device onto its own disk of a concatenated array"),
    Param::other("flow_by", Ty::Choice(&["client", "device"]), "client", "each request's flow: its client or its trace device"),
    Param::other("classes", Ty::List, "[]", "class rules, first match wins: `[[workload.classes]]`"),
];

/// `workload.classes[]` keys: every condition given must hold.
pub const CLASS_RULE_PARAMS: &[Param] = &[
    Param::int("device", "", 0.0, f64::NAN, u32::MAX as f64, "the trace device").default_text("absent: any"),
    Param::other("write", Ty::Bool, "absent: any", "writes (true) or reads (false)"),
    Param::float("min_kb", "KB", 0.0, f64::NAN, 1e12, "at least this size").default_text("absent: any"),
    Param::float("max_kb", "KB", 0.0, f64::NAN, 1e12, "at most this size").default_text("absent: any"),
    Param::other("class", Ty::Choice(&["best-effort", "real-time", "background"]), "required", "the class given"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// How a trace is replayed (see the module doc).
pub enum ReplayMode {
    /// Each request at its timestamp (relative to the first), divided by `speed`.
    Open,
    /// `outstanding` requests kept in the system, timestamps ignored.
    Closed,
    /// DiskSim's validation replay: one request outstanding, each issued the recorded delay after the previous completed.
    Validate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// How trace addresses map onto the simulated disk.
pub enum AddressMap {
    /// As they are; a request beyond the disk is an error.
    None,
    /// `offset_blocks` added; a request beyond the disk is an error.
    Offset,
    /// `offset_blocks` added, then wrapped around the disk.
    Modulo,
    /// `source_blocks` stretched onto the disk.
    Scale,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "trace"`: requests from a trace file (see the module doc).
pub struct ReplayConfig {
    /// Trace file (relative paths: from the config file's directory).
    pub path: String,
    /// Format name; detected from the content if absent.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default = "open_mode")]
    /// Open, closed or validate replay (default open).
    pub mode: ReplayMode,
    /// Open loop: 2 = twice as fast.
    #[serde(default = "one")]
    pub speed: f64,
    /// Closed loop: requests kept in the system.
    #[serde(default = "one_u32")]
    pub outstanding: u32,
    /// Replay only this trace device (disk / volume number).
    #[serde(default)]
    pub device: Option<u32>,
    #[serde(default = "none_map")]
    /// Address mapping (default none).
    pub map: AddressMap,
    #[serde(default)]
    /// Added to every address by `offset` and `modulo`, blocks.
    pub offset_blocks: u64,
    /// `scale`: the trace's address space, blocks.
    #[serde(default)]
    pub source_blocks: Option<u64>,
    /// Count and skip malformed lines instead of stopping.
    #[serde(default)]
    pub skip_bad_lines: bool,
    /// Start the replay this many requests (of the selected device) into the trace.
    #[serde(default)]
    pub skip_requests: u64,
    /// Each trace device onto its own disk of a concatenated array, in order
    /// of first appearance (addresses mapped onto one disk by `map`).
    #[serde(default)]
    pub device_disks: bool,
    /// Classify requests the trace does not: each request's flow is its
    /// client (`client`, the default) or its trace device (`device`).
    #[serde(default)]
    pub flow_by: FlowBy,
    /// Class rules, first match wins (default best-effort), e.g.
    /// `{ device = 2, class = "real-time" }`, `{ write = true, min_kb = 256, class = "background" }`.
    #[serde(default)]
    pub classes: Vec<ClassRule>,
    /// Disks in the array (set by the simulation).
    #[serde(skip, default = "one_u32")]
    pub array_disks: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// What a replayed request's flow is.
pub enum FlowBy {
    #[default]
    /// Its client.
    Client,
    /// Its trace device.
    Device,
}

/// A classifier rule: every condition given must hold.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassRule {
    #[serde(default)]
    /// The request is on this trace device.
    pub device: Option<u32>,
    #[serde(default)]
    /// The request is a write (true) or a read (false).
    pub write: Option<bool>,
    #[serde(default)]
    /// The request is at least this size, KB.
    pub min_kb: Option<f64>,
    #[serde(default)]
    /// The request is at most this size, KB.
    pub max_kb: Option<f64>,
    /// The class given to matching requests.
    pub class: Class,
}

impl ClassRule {
    fn matches(&self, rec: &TraceRecord, kb: f64) -> bool {
        self.device.is_none_or(|d| d == rec.device) && self.write.is_none_or(|w| w == rec.is_write)
            && self.min_kb.is_none_or(|m| kb >= m) && self.max_kb.is_none_or(|m| kb <= m)
    }
}

fn open_mode() -> ReplayMode {
    ReplayMode::Open
}
fn one() -> f64 {
    1.0
}
fn one_u32() -> u32 {
    1
}
fn none_map() -> AddressMap {
    AddressMap::None
}

/// The trace replay generator.
pub struct Replay {
    cfg: ReplayConfig,
    reader: TraceReader,
    capacity: u64,
    /// The next record to issue.
    next: Option<TraceRecord>,
    first_time_ns: Option<u64>,
    /// Validate mode: the delay after the request in flight completes.
    think_ns: u64,
    error: Option<Error>,
    /// `device_disks`: trace devices in order of first appearance (index = disk).
    devices: Vec<u32>,
}

impl Replay {
    /// A generator replaying `cfg.path` (relative to `base_dir`) onto a disk of `capacity` blocks; an error names any key out of bounds.
    pub fn new(cfg: ReplayConfig, capacity: u64, base_dir: Option<&Path>) -> Result<Replay> {
        let format = cfg.format.as_deref().map(str::parse::<TraceFormat>).transpose()?;
        SPEED.check("workload", cfg.speed)?;
        OUTSTANDING.check_count("workload", cfg.outstanding as u64)?;
        for (i, rule) in cfg.classes.iter().enumerate() {
            for (p, v) in [(&CLASS_RULE_PARAMS[2], rule.min_kb), (&CLASS_RULE_PARAMS[3], rule.max_kb)] {
                if let Some(v) = v {
                    p.check(&format!("workload.classes[{i}]"), v)?;
                }
            }
        }
        if cfg.map == AddressMap::Scale && cfg.source_blocks.is_none_or(|b| b == 0) {
            return Err(config_err("workload.source_blocks", "map = \"scale\" needs the trace's address space in blocks"));
        }
        let mut path = Path::new(&cfg.path).to_path_buf();
        if let (true, Some(base)) = (path.is_relative(), base_dir) {
            path = base.join(path);
        }
        let reader = trace::open(&path, format, cfg.skip_bad_lines)?;
        if cfg.device_disks && cfg.device.is_some() {
            return Err(config_err("workload.device_disks", "replays every device; drop workload.device"));
        }
        // With devices on disks, addresses map onto one disk.
        let capacity = if cfg.device_disks { capacity / cfg.array_disks as u64 } else { capacity };
        let mut r = Replay { cfg, reader, capacity, next: None, first_time_ns: None, think_ns: 0, error: None, devices: Vec::new() };
        r.advance();
        for _ in 0..r.cfg.skip_requests {
            if r.next.is_none() {
                break;
            }
            r.advance();
        }
        if r.next.is_none() && r.error.is_none() && r.cfg.skip_requests > 0 {
            return Err(config_err("workload.skip_requests",
                format!("{} skips every request of the trace", r.cfg.skip_requests)));
        }
        Ok(r)
    }

    /// Read the next record of the selected device into `self.next`.
    fn advance(&mut self) {
        self.next = None;
        for item in self.reader.by_ref() {
            match item {
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
                Ok(rec) if self.cfg.device.is_some_and(|d| d != rec.device) => continue,
                Ok(rec) => {
                    self.next = Some(rec);
                    return;
                }
            }
        }
    }

    fn map(&mut self, rec: &TraceRecord) -> Option<u64> {
        let blocks = rec.blocks as u64;
        let room = self.capacity.saturating_sub(blocks);
        let lbn = match self.cfg.map {
            // Checked: a block number near 2^64 must be refused, not wrapped onto the disk.
            AddressMap::None => Some(rec.lbn).filter(|&l| l.checked_add(blocks).is_some_and(|e| e <= self.capacity)),
            AddressMap::Offset => rec.lbn.checked_add(self.cfg.offset_blocks).filter(|&l| l.checked_add(blocks).is_some_and(|e| e <= self.capacity)),
            AddressMap::Modulo => Some(((rec.lbn as u128 + self.cfg.offset_blocks as u128) % (room as u128 + 1)) as u64),
            AddressMap::Scale => {
                let src = self.cfg.source_blocks.unwrap() as u128;
                Some(((rec.lbn as u128 * (room as u128 + 1) / src) as u64).min(room))
            }
        };
        if lbn.is_none() || blocks == 0 || blocks > self.capacity {
            self.error = Some(Error::Parse {
                path: self.reader.path().to_string(),
                line: self.reader.lines_read(),
                msg: format!("request at block {} of {} blocks is beyond the simulated disk's {} blocks \
                              (set workload.map to offset, modulo or scale)", rec.lbn, rec.blocks, self.capacity),
            });
        }
        lbn
    }

    fn due(&self, rec: &TraceRecord) -> SimTime {
        let t0 = self.first_time_ns.unwrap_or(rec.time_ns);
        SimTime(((rec.time_ns.saturating_sub(t0)) as f64 / self.cfg.speed).round() as u64)
    }
}

impl Generator for Replay {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let Some(first) = &self.next else { return vec![] };
        self.first_time_ns = Some(first.time_ns);
        match self.cfg.mode {
            ReplayMode::Open => vec![(SimTime::ZERO, 0)],
            ReplayMode::Closed => (0..self.cfg.outstanding).map(|c| (SimTime::ZERO, c)).collect(),
            ReplayMode::Validate => vec![(SimTime::ZERO, 0)],
        }
    }

    fn arrive(&mut self, _now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        if self.error.is_some() {
            return None;
        }
        let rec = self.next.take()?;
        let mut lbn = self.map(&rec)?;
        if self.cfg.device_disks {
            let disk = match self.devices.iter().position(|&d| d == rec.device) {
                Some(i) => i,
                None => {
                    self.devices.push(rec.device);
                    self.devices.len() - 1
                }
            };
            if disk as u32 >= self.cfg.array_disks {
                self.error = Some(Error::Parse {
                    path: self.reader.path().to_string(),
                    line: self.reader.lines_read(),
                    msg: format!("device {} is the trace's device number {} but the array has {} disks (disk.count)",
                                 rec.device, disk + 1, self.cfg.array_disks),
                });
                return None;
            }
            lbn += disk as u64 * self.capacity;
        }
        self.think_ns = rec.think_ns.unwrap_or(0);
        self.advance();
        let next = match (self.cfg.mode, &self.next) {
            (ReplayMode::Open, Some(n)) => Some(self.due(n)),
            _ => None,
        };
        let kb = rec.blocks as f64 / 2.0; // trace blocks are 512 bytes
        let class = self.cfg.classes.iter().find(|c| c.matches(&rec, kb)).map_or(Class::BestEffort, |c| c.class);
        let flow = (self.cfg.flow_by == FlowBy::Device).then_some(rec.device);
        let io = IoSpec { lbn, blocks: rec.blocks, is_write: rec.is_write, class, deadline: None, range: None, flow };
        Some((io, next))
    }

    fn completed(&mut self, now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        match self.cfg.mode {
            ReplayMode::Open => None,
            ReplayMode::Closed => self.next.as_ref().map(|_| now),
            ReplayMode::Validate => self.next.as_ref().map(|_| SimTime(now.0 + self.think_ns)),
        }
    }

    fn clients(&self) -> u32 {
        if self.cfg.mode == ReplayMode::Closed { self.cfg.outstanding } else { 1 }
    }

    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    fn bad_lines_skipped(&self) -> u64 {
        self.reader.bad_lines_skipped()
    }
}

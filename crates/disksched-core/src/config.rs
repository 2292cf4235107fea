//! Run configuration (TOML), validated into a ready-to-run `Simulation`.
//!
//! ```toml
//! seed = 1
//! [disk]
//! model = "atlas10k"        # built-in name, or path to a disk spec .toml
//! scheduler = "fcfs"        # the drive's own command-queue scheduler
//! [host]
//! scheduler = "sptf"
//! queue_threshold = 16      # most requests outstanding at the disk, 1..1024
//! # [controller]            # optional level between host and disks (see `sim`)
//! [workload]
//! kind = "oltp"
//! [run]
//! requests = 100000
//! ```

use crate::error::{config_err, Error, Result};
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// A whole run configuration: the TOML (or JSON) a run is given.
pub struct SimConfig {
    #[serde(default)]
    /// Random seed: the same config and seed give bit-identical results (default 0).
    pub seed: u64,
    /// The drive(s): `[disk]`.
    pub disk: DiskConfig,
    #[serde(default)]
    /// The host queue: `[host]`.
    pub host: HostConfig,
    /// A controller queue between the host queue and the disks (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerConfig>,
    /// What requests arrive: `[workload]`.
    pub workload: WorkloadConfig,
    #[serde(default)]
    /// Run length, warm-up and what to record: `[run]`.
    pub run: RunConfig,
    /// Run-time changes of a queue's scheduler or tunables.
    #[serde(default)]
    pub reconfigure: Vec<Reconfigure>,
    /// Freeblock scheduling of background tasks (optional).
    #[serde(default)]
    pub freeblock: Option<crate::background::FreeblockConfig>,
    /// Directory that relative paths in the config are resolved against.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `[disk]`: the drive model, its command-queue scheduler and the array of identical disks.
pub struct DiskConfig {
    /// Built-in disk name or path to a disk spec file.
    pub model: String,
    /// The drive's command-queue scheduler.
    #[serde(default = "fcfs")]
    pub scheduler: String,
    /// Tunables of the drive's scheduler.
    #[serde(default)]
    pub set: BTreeMap<String, f64>,
    /// Identical disks behind the controller; each has its own queue,
    /// scheduler and `host.queue_threshold`.
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default)]
    /// How the array's address space maps onto the disks (default concat).
    pub array: crate::host::array::ArrayLayout,
    /// Stripe unit with `array = "stripe"`, KB.
    #[serde(default = "stripe_kb")]
    pub stripe_kb: f64,
    /// How every drive varies from its spec (`disk::noisy`); absent: it is its spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::disk::noisy::NoiseConfig>,
}

fn class_expire_ms() -> f64 {
    10_000.0
}
fn stripe_kb() -> f64 {
    64.0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `[host]`: the host queue's scheduler, threshold and shaper.
pub struct HostConfig {
    #[serde(default = "fcfs")]
    /// The host queue's scheduler (default fcfs).
    pub scheduler: String,
    #[serde(default)]
    /// Tunables of the host scheduler.
    pub set: BTreeMap<String, f64>,
    /// Maximum requests outstanding at each disk, or with a `[controller]`
    /// at the controller and below; the rest wait in the host queue.
    #[serde(default = "one")]
    pub queue_threshold: u32,
    /// A flow idle this long at a queue has its class freed (`fini_class`), ms.
    #[serde(default = "class_expire_ms")]
    pub class_expire_ms: f64,
    /// Traffic shaping above the scheduler (optional; see `qos`).
    #[serde(default)]
    pub shaper: Option<crate::qos::ShaperConfig>,
    /// The host's belief of the drive (`disk::belief`); absent: exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief: Option<crate::disk::belief::BeliefConfig>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { scheduler: fcfs(), set: BTreeMap::new(), queue_threshold: 1, shaper: None, class_expire_ms: class_expire_ms(), belief: None }
    }
}

/// The controller's queue: it takes what the host sends and feeds the disks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    #[serde(default = "fcfs")]
    /// The controller queue's scheduler (default fcfs).
    pub scheduler: String,
    #[serde(default)]
    /// Tunables of the controller scheduler.
    pub set: BTreeMap<String, f64>,
    /// Maximum requests outstanding at the disks together; the rest wait in the controller queue.
    #[serde(default = "one")]
    pub queue_threshold: u32,
    /// Maximum outstanding at each disk (default, and at most, `queue_threshold`).
    #[serde(default)]
    pub per_disk_threshold: Option<u32>,
    /// The controller's belief of the drive (`disk::belief`); absent: exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief: Option<crate::disk::belief::BeliefConfig>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig { scheduler: fcfs(), set: BTreeMap::new(), queue_threshold: 1, per_disk_threshold: None, belief: None }
    }
}

impl ControllerConfig {
    /// Most requests outstanding at each disk: `per_disk_threshold`, or `queue_threshold` when absent.
    pub fn per_disk(&self) -> u32 {
        self.per_disk_threshold.unwrap_or(self.queue_threshold)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `[run]`: how much to simulate and what to keep.
pub struct RunConfig {
    /// Requests to generate (the run ends when all have completed); default
    /// 10,000, or the whole trace for trace replay.
    #[serde(default)]
    pub requests: Option<u64>,
    /// Stop generating after this much simulated time, ms (optional).
    #[serde(default)]
    pub duration_ms: Option<f64>,
    /// The first N requests (by arrival) are left out of the statistics.
    #[serde(default)]
    pub warmup_requests: u64,
    /// Keep a record of every request (columns for NumPy / pandas).
    #[serde(default)]
    pub records: bool,
    /// Keep time series in windows of this length, ms: per-client throughput
    /// and deadline misses, and the host scheduler's own samples.
    #[serde(default)]
    pub series_window_ms: Option<f64>,
}


fn fcfs() -> String {
    "fcfs".into()
}
fn one() -> u32 {
    1
}

/// At `at_ms`, replace the scheduler of queue `queue` ("host", "controller" or "disk");
/// its pending requests move to the new one.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reconfigure {
    /// When the change happens, ms of simulated time.
    pub at_ms: f64,
    /// Which queue: "host", "controller" or "disk".
    pub queue: String,
    /// The new scheduler.
    pub scheduler: String,
    #[serde(default)]
    /// Its tunables.
    pub set: BTreeMap<String, f64>,
}

/// Upper bound of every queue threshold, requests.
pub const MAX_QUEUE_THRESHOLD: u32 = 1024;

use crate::schema::{Param, Ty};

pub use crate::time::MAX_TIME_MS;

/// Declarations of the top-level keys.
pub const TOP_PARAMS: &[Param] = &[
    Param::int("seed", "", 0.0, 0.0, u64::MAX as f64, "random seed: the same config and seed give bit-identical results"),
    Param::other("disk", Ty::Table, "required", "the drive(s): `[disk]`"),
    Param::other("host", Ty::Table, "", "the host queue: `[host]`"),
    Param::other("controller", Ty::Table, "absent: no controller level", "a controller queue: `[controller]`"),
    Param::other("workload", Ty::Table, "required", "what requests arrive: `[workload]` with a `kind`"),
    Param::other("run", Ty::Table, "", "`[run]`"),
    Param::other("reconfigure", Ty::List, "[]", "run-time scheduler changes: `[[reconfigure]]`"),
    Param::other("freeblock", Ty::Table, "absent: no background tasks", "`[freeblock]`"),
];

pub use crate::host::array::DISK_COUNT;

/// Declarations of the `[disk]` keys.
pub const DISK_PARAMS: &[Param] = &[
    Param::other("model", Ty::Str, "required", "built-in disk name, a disk spec .toml, or a DiskSim .parv/.diskspecs/.model (`file.parv#NAME` names one disk of several)"),
    Param::other("scheduler", Ty::Str, "fcfs", "the drive's command-queue scheduler (`disksched schedulers`)"),
    Param::other("set", Ty::Table, "{}", "tunables of the drive's scheduler"),
    DISK_COUNT,
    Param::other("array", Ty::Choice(&["concat", "stripe"]), "concat", "how the array's address space maps onto the disks"),
    STRIPE_KB,
    Param::other("noise", Ty::Table, "absent: none",
        "`[disk.noise]`: every drive varies from its spec (seek variation, rotation drift, bus/media overlap, internal work), so every belief mispredicts; not with `freeblock.mode = \"external\"`, whose `[freeblock.noise]` is the drive's"),
];

/// `disk.stripe_kb`: the stripe unit, KB.
pub const STRIPE_KB: Param = Param::float("stripe_kb", "KB", 0.5, 64.0, 1e9,
    "stripe unit with `array = \"stripe\"`: a whole number of blocks, at most one disk");

/// `host.queue_threshold`: requests outstanding below the host queue.
pub const QUEUE_THRESHOLD: Param = Param::int("queue_threshold", "requests", 1.0, 1.0, MAX_QUEUE_THRESHOLD as f64,
    "most requests outstanding below this queue (at each disk; with a `[controller]`, at the controller and below)");
/// `host.class_expire_ms`: idle time after which a flow's class is freed, ms.
pub const CLASS_EXPIRE_MS: Param = Param::float("class_expire_ms", "ms", 0.0, 10_000.0, 86_400_000.0,
    "a flow idle this long at a queue has its class freed (`fini_class`)");

/// Declarations of the `[host]` keys.
pub const HOST_PARAMS: &[Param] = &[
    Param::other("scheduler", Ty::Str, "fcfs", "the host queue's scheduler (`disksched schedulers`)"),
    Param::other("set", Ty::Table, "{}", "tunables of the host scheduler"),
    QUEUE_THRESHOLD,
    CLASS_EXPIRE_MS,
    Param::other("shaper", Ty::Table, "absent: no shaping", "traffic shaping above the scheduler: `[host.shaper]`"),
    Param::other("belief", Ty::Table, "absent: exact", "the host scheduler's belief of the drive: `[host.belief]`"),
];

/// `controller.queue_threshold`: requests outstanding at the disks together.
pub const CTL_QUEUE_THRESHOLD: Param = Param::int("queue_threshold", "requests", 1.0, 1.0, MAX_QUEUE_THRESHOLD as f64,
    "most requests outstanding at the disks together; the rest wait in the controller queue");
/// `controller.per_disk_threshold`: requests outstanding at each disk.
pub const PER_DISK_THRESHOLD: Param = Param::int("per_disk_threshold", "requests", 1.0, f64::NAN, MAX_QUEUE_THRESHOLD as f64,
    "most outstanding at each disk, at most `queue_threshold`").default_text("queue_threshold");

/// Declarations of the `[controller]` keys.
pub const CONTROLLER_PARAMS: &[Param] = &[
    Param::other("scheduler", Ty::Str, "fcfs", "the controller queue's scheduler"),
    Param::other("set", Ty::Table, "{}", "tunables of the controller scheduler"),
    CTL_QUEUE_THRESHOLD,
    PER_DISK_THRESHOLD,
    Param::other("belief", Ty::Table, "absent: exact", "the controller scheduler's belief of the drive: `[controller.belief]`"),
];

/// `run.requests`: requests to generate.
pub const REQUESTS: Param = Param::int("requests", "requests", 1.0, f64::NAN, 1e15,
    "requests to generate (the run ends when all have completed)").default_text("10000, or the whole trace");
/// `run.duration_ms`: simulated time to generate requests for, ms.
pub const DURATION_MS: Param = Param::float("duration_ms", "ms", 0.0, f64::NAN, MAX_TIME_MS,
    "stop generating after this much simulated time").open_min().default_text("absent: no limit");
/// `run.warmup_requests`: leading requests left out of the statistics.
pub const WARMUP_REQUESTS: Param = Param::int("warmup_requests", "requests", 0.0, 0.0, 1e15,
    "the first N requests (by arrival) are left out of the statistics; below `requests`");
/// `run.series_window_ms`: time-series window, ms.
pub const SERIES_WINDOW_MS: Param = Param::float("series_window_ms", "ms", 1.0, f64::NAN, 3_600_000.0,
    "keep time series in windows of this length (per-client throughput, deadline misses)").default_text("absent: no series");

/// Declarations of the `[run]` keys.
pub const RUN_PARAMS: &[Param] = &[
    REQUESTS,
    DURATION_MS,
    WARMUP_REQUESTS,
    Param::other("records", Ty::Bool, "false", "keep a record of every request"),
    SERIES_WINDOW_MS,
];

/// `reconfigure.at_ms`: when the change happens, ms.
pub const AT_MS: Param = Param::float("at_ms", "ms", 0.0, f64::NAN, MAX_TIME_MS, "when the change happens").default_text("required");

/// Declarations of the `[[reconfigure]]` keys.
pub const RECONFIGURE_PARAMS: &[Param] = &[
    AT_MS,
    Param::other("queue", Ty::Choice(&["host", "controller", "disk"]), "required", "which queue's scheduler is replaced"),
    Param::other("scheduler", Ty::Str, "required", "the new scheduler; pending requests move to it"),
    Param::other("set", Ty::Table, "{}", "its tunables"),
];

impl SimConfig {
    /// Parse a TOML config; relative paths in it resolve against `origin`'s directory. Errors name `origin`.
    pub fn from_toml(text: &str, origin: &str) -> Result<SimConfig> {
        let mut c: SimConfig = toml::from_str(text)
            .map_err(|e| Error::File { path: origin.to_string(), msg: crate::disk::spec::one_line(&e.to_string()) })?;
        c.base_dir = Path::new(origin).parent().map(Path::to_path_buf);
        Ok(c)
    }

    /// Parse a JSON config; relative paths in it resolve against `origin`'s directory. Errors name `origin`.
    pub fn from_json(text: &str, origin: &str) -> Result<SimConfig> {
        let mut c: SimConfig =
            serde_json::from_str(text).map_err(|e| Error::File { path: origin.to_string(), msg: e.to_string() })?;
        c.base_dir = Path::new(origin).parent().map(Path::to_path_buf);
        Ok(c)
    }

    /// Read and parse the TOML config at `path`.
    pub fn from_file(path: &Path) -> Result<SimConfig> {
        let text = crate::budget::read_text_file_utf8(path, "run config")?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Checks that do not need the disk; `Simulation::new` does the rest.
    pub fn validate(&self) -> Result<()> {
        DISK_COUNT.check_count("disk", self.disk.count as u64)?;
        STRIPE_KB.check("disk", self.disk.stripe_kb)?;
        CLASS_EXPIRE_MS.check("host", self.host.class_expire_ms)?;
        QUEUE_THRESHOLD.check_count("host", self.host.queue_threshold as u64)?;
        if let Some(b) = &self.host.belief {
            b.validate("host.belief")?;
        }
        if let Some(b) = self.controller.as_ref().and_then(|c| c.belief.as_ref()) {
            b.validate("controller.belief")?;
        }
        if let Some(c) = &self.controller {
            CTL_QUEUE_THRESHOLD.check_count("controller", c.queue_threshold as u64)?;
            PER_DISK_THRESHOLD.check_count("controller", c.per_disk() as u64)?;
            if c.per_disk() > c.queue_threshold {
                return Err(config_err("controller.per_disk_threshold", format!(
                    "{} exceeds controller.queue_threshold ({})", c.per_disk(), c.queue_threshold)));
            }
        }
        if let Some(n) = &self.disk.noise {
            n.validate_at("disk.noise")?;
            if self.freeblock.as_ref().is_some_and(|f| f.external()) {
                return Err(config_err("disk.noise", "with freeblock.mode = \"external\" the drive's noise is [freeblock.noise] (one noise per drive; expected only that)"));
            }
        }
        if let Some(f) = &self.freeblock {
            f.validate(self.host.queue_threshold)?;
            if f.external() && self.controller.is_some() {
                return Err(config_err("freeblock.mode", "external mode keeps the host's commands at the drive: it needs no [controller]"));
            }
        }
        for (i, r) in self.reconfigure.iter().enumerate() {
            AT_MS.check(&format!("reconfigure[{i}]"), r.at_ms)?;
            let (known, expected) = match (r.queue.as_str(), self.controller.is_some()) {
                ("host" | "disk", _) | ("controller", true) => (true, ""),
                ("controller", false) => (false, "host or disk; the config has no [controller]"),
                (_, true) => (false, "host, controller or disk"),
                (_, false) => (false, "host or disk"),
            };
            if !known {
                return Err(config_err(format!("reconfigure[{i}].queue"), format!("'{}' (expected {expected})", r.queue)));
            }
        }
        if let Some(n) = self.run.requests {
            REQUESTS.check_count("run", n)?;
        }
        WARMUP_REQUESTS.check_count("run", self.run.warmup_requests)?;
        if let Some(n) = self.run.requests.filter(|&n| self.run.warmup_requests >= n) {
            return Err(config_err("run.warmup_requests", format!(
                "{} leaves none of the {n} requests measured; it must be below run.requests", self.run.warmup_requests)));
        }
        if let Some(w) = self.run.series_window_ms {
            SERIES_WINDOW_MS.check("run", w)?;
        }
        if self.host.shaper.is_some() {
            if let Some(i) = self.reconfigure.iter().position(|r| r.queue == "host") {
                return Err(config_err(format!("reconfigure[{i}].queue"), "the host scheduler cannot be switched under a shaper"));
            }
        }
        if let Some(d) = self.run.duration_ms {
            DURATION_MS.check("run", d)?;
        }
        Ok(())
    }
}

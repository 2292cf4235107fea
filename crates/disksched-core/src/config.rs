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
pub struct SimConfig {
    #[serde(default)]
    pub seed: u64,
    pub disk: DiskConfig,
    #[serde(default)]
    pub host: HostConfig,
    /// A controller queue between the host queue and the disks (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerConfig>,
    pub workload: WorkloadConfig,
    #[serde(default)]
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
    pub array: crate::host::array::ArrayLayout,
    /// Stripe unit with `array = "stripe"`, KB.
    #[serde(default = "stripe_kb")]
    pub stripe_kb: f64,
}

fn class_expire_ms() -> f64 {
    10_000.0
}
fn stripe_kb() -> f64 {
    64.0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    #[serde(default = "fcfs")]
    pub scheduler: String,
    #[serde(default)]
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
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { scheduler: fcfs(), set: BTreeMap::new(), queue_threshold: 1, shaper: None, class_expire_ms: class_expire_ms() }
    }
}

/// The controller's queue: it takes what the host sends and feeds the disks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    #[serde(default = "fcfs")]
    pub scheduler: String,
    #[serde(default)]
    pub set: BTreeMap<String, f64>,
    /// Maximum requests outstanding at the disks together; the rest wait in the controller queue.
    #[serde(default = "one")]
    pub queue_threshold: u32,
    /// Maximum outstanding at each disk (default, and at most, `queue_threshold`).
    #[serde(default)]
    pub per_disk_threshold: Option<u32>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig { scheduler: fcfs(), set: BTreeMap::new(), queue_threshold: 1, per_disk_threshold: None }
    }
}

impl ControllerConfig {
    pub fn per_disk(&self) -> u32 {
        self.per_disk_threshold.unwrap_or(self.queue_threshold)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    pub at_ms: f64,
    pub queue: String,
    pub scheduler: String,
    #[serde(default)]
    pub set: BTreeMap<String, f64>,
}

pub const MAX_QUEUE_THRESHOLD: u32 = 1024;

impl SimConfig {
    pub fn from_toml(text: &str, origin: &str) -> Result<SimConfig> {
        let mut c: SimConfig = toml::from_str(text)
            .map_err(|e| Error::File { path: origin.to_string(), msg: crate::disk::spec::one_line(&e.to_string()) })?;
        c.base_dir = Path::new(origin).parent().map(Path::to_path_buf);
        Ok(c)
    }

    pub fn from_json(text: &str, origin: &str) -> Result<SimConfig> {
        let mut c: SimConfig =
            serde_json::from_str(text).map_err(|e| Error::File { path: origin.to_string(), msg: e.to_string() })?;
        c.base_dir = Path::new(origin).parent().map(Path::to_path_buf);
        Ok(c)
    }

    pub fn from_file(path: &Path) -> Result<SimConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::File { path: path.display().to_string(), msg: e.to_string() })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Checks that do not need the disk; `Simulation::new` does the rest.
    pub fn validate(&self) -> Result<()> {
        if !(self.host.class_expire_ms >= 0.0 && self.host.class_expire_ms <= 86_400_000.0) {
            return Err(config_err("host.class_expire_ms", format!("{} is out of range [0, 86400000]", self.host.class_expire_ms)));
        }
        if !(1..=MAX_QUEUE_THRESHOLD).contains(&self.host.queue_threshold) {
            return Err(config_err("host.queue_threshold", format!(
                "{} is out of range [1, {MAX_QUEUE_THRESHOLD}]", self.host.queue_threshold)));
        }
        if let Some(c) = &self.controller {
            for (key, t) in [("queue_threshold", c.queue_threshold), ("per_disk_threshold", c.per_disk())] {
                if !(1..=MAX_QUEUE_THRESHOLD).contains(&t) {
                    return Err(config_err(format!("controller.{key}"), format!("{t} is out of range [1, {MAX_QUEUE_THRESHOLD}]")));
                }
            }
            if c.per_disk() > c.queue_threshold {
                return Err(config_err("controller.per_disk_threshold", format!(
                    "{} exceeds controller.queue_threshold ({})", c.per_disk(), c.queue_threshold)));
            }
        }
        if let Some(f) = &self.freeblock {
            f.validate(self.host.queue_threshold)?;
            if f.external() && self.controller.is_some() {
                return Err(config_err("freeblock.mode", "external mode keeps the host's commands at the drive: it needs no [controller]"));
            }
        }
        for (i, r) in self.reconfigure.iter().enumerate() {
            if !(r.at_ms >= 0.0 && r.at_ms.is_finite()) {
                return Err(config_err(format!("reconfigure[{i}].at_ms"), format!("{} must be >= 0", r.at_ms)));
            }
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
        if self.run.requests == Some(0) {
            return Err(config_err("run.requests", "must be >= 1"));
        }
        if let Some(n) = self.run.requests.filter(|&n| self.run.warmup_requests >= n) {
            return Err(config_err("run.warmup_requests", format!(
                "{} leaves none of the {n} requests measured; it must be below run.requests", self.run.warmup_requests)));
        }
        if let Some(w) = self.run.series_window_ms.filter(|w| !(*w >= 1.0 && *w <= 3_600_000.0)) {
            return Err(config_err("run.series_window_ms", format!("{w} is out of range [1, 3600000]")));
        }
        if self.host.shaper.is_some() {
            if let Some(i) = self.reconfigure.iter().position(|r| r.queue == "host") {
                return Err(config_err(format!("reconfigure[{i}].queue"), "the host scheduler cannot be switched under a shaper"));
            }
        }
        if let Some(d) = self.run.duration_ms {
            if !(d > 0.0 && d.is_finite()) {
                return Err(config_err("run.duration_ms", format!("{d} must be > 0")));
            }
        }
        Ok(())
    }
}

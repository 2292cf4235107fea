//! Quality of service by traffic shaping (Wu & Brandt, "QoS support for
//! intelligent storage devices", ISW 2004): token buckets above any
//! scheduler, instead of a QoS-aware scheduler.
//!
//! Requests wait in one FIFO pipe per class (real-time, best-effort,
//! background); a request leaves its pipe for the host scheduler only when
//! every token bucket ("gate") of its pipe has a token for it. Gates per
//! pipe: the paper's token bucket in requests (`rate_per_s`, `burst`) and/or
//! in bytes (`rate_kb_per_s`, `burst_kb`), and Linux cgroup v2 `io.max` caps
//! per direction (`rbps`, `wbps` in bytes/s, `riops`, `wiops`), each a bucket
//! holding `io_burst_ms` of its rate. A pipe with no gate is not shaped.
//!
//! The policy sets the shaped rates (`rate_per_s`, `rate_kb_per_s`) of every
//! pipe but real-time: `fixed` leaves them as configured; the feedback
//! policies cut them (x `cut_factor`) on each missed-deadline notification (a
//! real-time request's deadline passing while it is queued or in flight;
//! signalled then, not when the late request completes) and raise them again
//! `optimistic`ally (continuously, `recover_pct_per_s`) or
//! `pessimistic`ally (back to the configured rate, only when the declared
//! real-time demand changes: a real-time client starts, or withdraws after
//! `rt_idle_ms` with nothing outstanding).
//!
//! Every request goes through the shaper (the inner scheduler's `bypass` is
//! not consulted), so every real-time completion can be checked for a miss.
//!
//! ```toml
//! [host]
//! scheduler = "anticipatory"     # the scheduler under the shaper
//! [host.shaper]
//! policy = "optimistic"
//! set = { cut_factor = 0.5 }
//! best-effort = { rate_per_s = 90, burst = 1, wbps = 10e6 }
//! ```

pub mod bucket;
pub mod shaper;

use crate::error::{config_err, Result};
use crate::host::Class;
use crate::sched::{tunable, Tunable};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How the shaped rates react to missed real-time deadlines (see the module doc).
pub enum Policy {
    /// Rates stay as configured.
    Fixed,
    /// Each miss cuts the rates; they grow back continuously.
    Optimistic,
    /// Each miss cuts the rates; they return only when real-time demand changes.
    Pessimistic,
}

/// (name, summary) of each policy.
pub const POLICIES: &[(&str, &str)] = &[
    ("fixed", "shaped rates stay as configured"),
    ("optimistic", "each missed real-time deadline cuts the shaped rates; they grow back continuously"),
    ("pessimistic", "each missed real-time deadline cuts the shaped rates; they return only when real-time demand changes"),
];

impl Policy {
    /// The policy called `name`; an error listing the policies otherwise.
    pub fn parse(name: &str) -> Result<Policy> {
        Ok(match name {
            "fixed" => Policy::Fixed,
            "optimistic" => Policy::Optimistic,
            "pessimistic" => Policy::Pessimistic,
            _ => {
                let names: Vec<_> = POLICIES.iter().map(|p| p.0).collect();
                return Err(config_err("host.shaper.policy", format!("unknown policy '{name}' (expected one of: {})", names.join(", "))));
            }
        })
    }
}

/// Tunables of the feedback policies (`host.shaper.set`).
pub const POLICY_TUNABLES: &[Tunable] = &[
    tunable("cut_factor", "fraction", 0.01, 0.5, 1.0, "a missed deadline multiplies the shaped rates by this"),
    tunable("cut_holdoff_ms", "ms", 0.0, 100.0, 60_000.0,
        "misses this soon after a cut do not cut again (requests queued together miss together); 0 = every miss cuts"),
    tunable("min_rate_pct", "%", 0.1, 5.0, 100.0, "cuts stop at this share of the configured rate"),
    tunable("recover_pct_per_s", "% per s", 0.0, 2.0, 1000.0, "optimistic: growth per second, in % of the configured rate"),
    tunable("rt_idle_ms", "ms", 1.0, 1000.0, 3_600_000.0, "pessimistic: a real-time client with nothing queued or in flight this long has withdrawn its demand"),
];

/// Tunables of a class's pipe (`host.shaper.<class>`); 0 = no such gate.
/// A rate is 0 (no gate) or at least one token per `MAX_TOKEN_WAIT_S`: a
/// smaller one (1e-308) holds a request for longer than any run. (Such a
/// wait once saturated to the clock's last instant and hung a run inside
/// one event; `Bucket::available_at` now calls it "never", so the bound is
/// about meaningful configs, not about hangs.)
pub const PIPE_TUNABLES: &[Tunable] = &[
    tunable("rate_per_s", "requests/s", MIN_RATE, 0.0, 1e7, "token rate in requests (the policy adjusts it); 0 = none").or_zero(),
    tunable("burst", "requests", 1.0, 1.0, 1e6, "requests the bucket holds"),
    tunable("rate_kb_per_s", "KB/s", MIN_RATE, 0.0, 1e9, "token rate in bytes (the policy adjusts it); 0 = none").or_zero(),
    tunable("burst_kb", "KB", 0.5, 128.0, 1e9, "bytes the bucket holds"),
    tunable("rbps", "bytes/s", MIN_RATE, 0.0, 1e12, "io.max read bytes per second; 0 = max").or_zero(),
    tunable("wbps", "bytes/s", MIN_RATE, 0.0, 1e12, "io.max write bytes per second; 0 = max").or_zero(),
    tunable("riops", "IO/s", MIN_RATE, 0.0, 1e9, "io.max read requests per second; 0 = max").or_zero(),
    tunable("wiops", "IO/s", MIN_RATE, 0.0, 1e9, "io.max write requests per second; 0 = max").or_zero(),
    tunable("io_burst_ms", "ms", 1.0, 100.0, 60_000.0, "an io.max bucket holds this much of its rate (blk-throttle's slice)"),
];

/// The longest wait for one token a gate may impose, s.
pub const MAX_TOKEN_WAIT_S: f64 = 1000.0;
/// The smallest non-zero token rate, per s: one token per `MAX_TOKEN_WAIT_S`.
pub const MIN_RATE: f64 = 1.0 / MAX_TOKEN_WAIT_S;

/// `[host.shaper]` keys besides the per-class pipes' gates.
pub const SHAPER_PARAMS: &[Tunable] = &[
    crate::schema::Param::other("policy", crate::schema::Ty::Choice(&["fixed", "optimistic", "pessimistic"]), "fixed",
        "how missed real-time deadlines change the shaped rates"),
    crate::schema::Param::other("set", crate::schema::Ty::Table, "{}", "the policy's tunables: `[host.shaper.set]`"),
    crate::schema::Param::other("real-time", crate::schema::Ty::Table, "{}", "gates of the real-time pipe"),
    crate::schema::Param::other("best-effort", crate::schema::Ty::Table, "{}", "gates of the best-effort pipe"),
    crate::schema::Param::other("background", crate::schema::Ty::Table, "{}", "gates of the background pipe"),
];

/// `[host.shaper]`: the policy, its tunables and one pipe per class.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaperConfig {
    #[serde(default = "fixed")]
    /// Policy name (default fixed).
    pub policy: String,
    #[serde(default)]
    /// The policy's tunables.
    pub set: BTreeMap<String, f64>,
    #[serde(default, rename = "real-time")]
    /// Gates of the real-time pipe.
    pub real_time: BTreeMap<String, f64>,
    #[serde(default, rename = "best-effort")]
    /// Gates of the best-effort pipe.
    pub best_effort: BTreeMap<String, f64>,
    #[serde(default)]
    /// Gates of the background pipe.
    pub background: BTreeMap<String, f64>,
}

fn fixed() -> String {
    "fixed".into()
}

impl Default for ShaperConfig {
    fn default() -> Self {
        ShaperConfig { policy: fixed(), set: BTreeMap::new(), real_time: BTreeMap::new(), best_effort: BTreeMap::new(), background: BTreeMap::new() }
    }
}

impl ShaperConfig {
    /// The gate settings of `class`'s pipe.
    pub fn pipe(&self, class: Class) -> &BTreeMap<String, f64> {
        match class {
            Class::RealTime => &self.real_time,
            Class::BestEffort => &self.best_effort,
            Class::Background => &self.background,
        }
    }

    /// Apply a `key=value` override: a policy tunable (`cut_factor`) or a
    /// pipe's (`best-effort.rate_per_s`); checked when the shaper is built.
    pub fn apply(&mut self, key: &str, value: f64) -> Result<()> {
        let Some((class, name)) = key.split_once('.') else {
            self.set.insert(key.to_string(), value);
            return Ok(());
        };
        let pipe = match class {
            "real-time" => &mut self.real_time,
            "best-effort" => &mut self.best_effort,
            "background" => &mut self.background,
            _ => return Err(config_err(format!("host.shaper.{key}"), "unknown class (expected real-time, best-effort or background)")),
        };
        pipe.insert(name.to_string(), value);
        Ok(())
    }
}

//! `disksched serve`'s figures: the live and final statistics document
//! (`--stats`, rewritten each window) and the queue depths it reports.

use super::Shared;
use crate::error::{Error, Result};
use crate::sim::Simulation;
use hdrhistogram::Histogram;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Longest time the histograms hold, ns (an hour).
pub(super) const HIST_MAX_NS: u64 = 3_600_000_000_000;

pub(super) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid bounds")
}

/// Live and final figures of a serve session.
#[derive(Default)]
pub(super) struct Live {
    requests: u64,
    bytes: u64,
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) flushes: u64,
    pub(super) trims: u64,
    window_requests: u64,
    window_bytes: u64,
    pub(super) window_max_outstanding: u64,
    /// The deepest each level was in the window (as `depths`).
    window_max_depths: Vec<(&'static str, u64)>,
    response: Option<Histogram<u64>>,
    window_response: Option<Histogram<u64>>,
}

impl Live {
    pub(super) fn new() -> Live {
        Live { response: Some(histogram()), window_response: Some(histogram()), ..Default::default() }
    }

    /// A reply of `bytes` whose request took `response_ns` (simulated).
    pub(super) fn completed(&mut self, bytes: u64, response_ns: u64) {
        let ns = response_ns.clamp(1, HIST_MAX_NS);
        let _ = self.response.as_mut().unwrap().record(ns);
        let _ = self.window_response.as_mut().unwrap().record(ns);
        self.requests += 1;
        self.window_requests += 1;
        self.bytes += bytes;
        self.window_bytes += bytes;
    }

    /// Raise the window's deepest queues to what the simulation holds now.
    pub(super) fn sample_depths(&mut self, sim: &Simulation) {
        for (name, n) in depths(sim) {
            fold_level(&mut self.window_max_depths, name, n, u64::max);
        }
    }
}

/// Requests at each level now: "host", "controller" (if any), "disk" (queued in the drives' command
/// queues, all disks together) and "in_service" (disks with a command in service).
pub(super) fn depths(sim: &Simulation) -> Vec<(&'static str, u64)> {
    let mut d = Vec::new();
    for (name, n) in sim.queue_lengths().into_iter().chain([("in_service", sim.commands_in_service())]) {
        fold_level(&mut d, name, n as u64, |a, b| a + b);
    }
    d
}

/// Combine `n` into level `name`'s figure with `f`, or add the level.
fn fold_level(levels: &mut Vec<(&'static str, u64)>, name: &'static str, n: u64, f: impl Fn(u64, u64) -> u64) {
    match levels.iter_mut().find(|(k, _)| *k == name) {
        Some(e) => e.1 = f(e.1, n),
        None => levels.push((name, n)),
    }
}

/// The statistics document: the last window's rates and response times,
/// the whole session's, and reply lateness (wall-clock send time minus the
/// simulated completion time).
pub(super) fn live_stats(live: &mut Live, shared: &Shared, outstanding: u64, depths: &[(&'static str, u64)], window: Duration, elapsed: Duration, whole: bool) -> serde_json::Value {
    let ms = |ns: u64| ns as f64 / 1e6;
    let pct = |h: &Histogram<u64>| match h.is_empty() {
        true => serde_json::json!({"count": 0}),
        false => serde_json::json!({
            "count": h.len(), "mean": h.mean() / 1e6, "p50": ms(h.value_at_quantile(0.5)), "p90": ms(h.value_at_quantile(0.9)),
            "p99": ms(h.value_at_quantile(0.99)), "max": ms(h.max()),
        }),
    };
    let w_s = window.as_secs_f64().max(1e-9);
    let lat = shared.lateness.lock().unwrap();
    let lag = shared.schedule_lag.lock().unwrap();
    let late_1ms = lat.count_between(1_000_000, HIST_MAX_NS);
    let v = serde_json::json!({
        "elapsed_s": elapsed.as_secs_f64(),
        "window_s": w_s,
        "connections": shared.connections.load(Ordering::SeqCst),
        "iops": live.window_requests as f64 / w_s,
        "mb_per_s": live.window_bytes as f64 / w_s / 1e6,
        "outstanding": outstanding,
        "max_outstanding": live.window_max_outstanding,
        "queue_depths": as_object(depths),
        "max_queue_depths": as_object(&live.window_max_depths),
        "response_ms": pct(live.window_response.as_ref().unwrap()),
        "total": {
            "requests": live.requests, "bytes": live.bytes, "reads": live.reads, "writes": live.writes,
            "flushes": live.flushes, "trims": live.trims, "errors": shared.malformed.load(Ordering::Relaxed),
            "iops": live.requests as f64 / elapsed.as_secs_f64().max(1e-9),
            "response_ms": pct(live.response.as_ref().unwrap()),
        },
        "lateness_ms": {
            "count": lat.len(), "p50": ms(lat.value_at_quantile(0.5)), "p99": ms(lat.value_at_quantile(0.99)),
            "max": ms(lat.max()), "over_1ms": late_1ms,
        },
        "schedule_lag_ms": {
            "p50": ms(lag.value_at_quantile(0.5)), "p99": ms(lag.value_at_quantile(0.99)), "max": ms(lag.max()),
            "over_1ms": lag.count_between(1_000_000, HIST_MAX_NS),
        },
        "final": whole,
    });
    live.window_requests = 0;
    live.window_bytes = 0;
    live.window_max_outstanding = outstanding;
    live.window_max_depths = depths.to_vec();
    live.window_response.as_mut().unwrap().reset();
    v
}

fn as_object(d: &[(&'static str, u64)]) -> serde_json::Value {
    d.iter().map(|&(k, n)| (k.to_string(), n.into())).collect::<serde_json::Map<_, _>>().into()
}

/// Rewrite the `--stats` file. A full disk or a removed directory costs the statistics, not the
/// session: one warning on stderr, none more until a write succeeds again.
pub(super) fn write_stats(path: &std::path::Path, v: &serde_json::Value, failing: &mut bool) {
    match write_atomically(path, v) {
        Err(e) if !*failing => {
            eprintln!("disksched serve: warning: --stats not written: {e}");
            *failing = true;
        }
        Err(_) => {}
        Ok(()) => *failing = false,
    }
}

/// Write `v` to `path` through a temporary file renamed into place (a reader never sees half a file).
fn write_atomically(path: &std::path::Path, v: &serde_json::Value) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let io = |e: std::io::Error| Error::File { path: path.display().to_string(), msg: e.to_string() };
    std::fs::write(&tmp, format!("{v:#}\n")).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

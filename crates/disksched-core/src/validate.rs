//! Validation against a drive measured for real: replay a DiskSim
//! "validate" trace closed-loop (one request outstanding, each issued the
//! recorded delay after the previous completed) and compare the simulated
//! access-time distribution with the measured one.
//!
//! The demerit figure is DiskSim's (Ruemmler and Wilkes'): the
//! root-mean-square horizontal distance between the two access-time CDFs,
//! in ms, taken at 10,000 evenly spaced quantiles 0.0001 .. 1.0 with linear
//! interpolation between histogram points. DiskSim's `rms` computes it on
//! the histograms its `statdefs` file defines for the measured ("Trace
//! access time") and simulated ("Physical access time") access times, so
//! `rms_ms` is taken on those bins (`disksim_bins_ms`), and `rms_exact_ms`
//! on the samples themselves. It compares two distributions, so errors that
//! cancel (one request too fast, another as much too slow) lower it; the
//! per-request error beside it pairs each simulated request with the same
//! measured one, in trace order.

use crate::config::{DiskConfig, HostConfig, RunConfig, SimConfig};
use crate::disk::DiskModel;
use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::trace;
use crate::workload::replay::{AddressMap, ReplayConfig, ReplayMode};
use crate::workload::WorkloadConfig;
use serde::Serialize;
use std::sync::Arc;

#[derive(Clone, Debug, Serialize)]
/// The result of replaying a DiskSim validate trace: simulated against measured access times.
pub struct Validation {
    /// Requests replayed.
    pub requests: u64,
    /// DiskSim's demerit figure, on DiskSim's histograms (see `demerit`), ms.
    pub rms_ms: f64,
    /// The same on the samples themselves, unbinned (see `demerit_exact`), ms.
    pub rms_exact_ms: f64,
    /// Mean measured access time, ms.
    pub measured_mean_ms: f64,
    /// Mean simulated access time, ms.
    pub simulated_mean_ms: f64,
    /// Per-request error: |simulated - measured| of the same request, ms.
    pub per_request: PerRequestError,
    /// (quantile, measured ms, simulated ms) at 0.1, 0.25, 0.5, 0.75, 0.9, 0.99.
    pub percentiles: Vec<(f64, f64, f64)>,
    /// Per-request access times in ms, in trace order.
    #[serde(skip)]
    pub measured_ms: Vec<f64>,
    #[serde(skip)]
    /// Per-request simulated access times in ms (issue to completion), in trace order.
    pub simulated_ms: Vec<f64>,
}

/// |simulated - measured| request by request (pairs in trace order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerRequestError {
    /// Mean absolute error, ms.
    pub mean_abs_ms: f64,
    /// 90th percentile of the absolute errors (same quantile rule as `percentiles`).
    pub p90_abs_ms: f64,
    /// Share of requests whose absolute error is at most `WITHIN_MS`.
    pub within_0_5ms_fraction: f64,
}

/// The bound of `within_0_5ms_fraction`, ms.
pub const WITHIN_MS: f64 = 0.5;

/// Per-request error of two equally long series (panics on unequal or empty input:
/// `validate` replays every traced request, so they always match).
pub fn per_request_error(measured: &[f64], simulated: &[f64]) -> PerRequestError {
    assert!(!measured.is_empty() && measured.len() == simulated.len(), "one simulated time per measured request");
    let mut abs: Vec<f64> = measured.iter().zip(simulated).map(|(m, s)| (s - m).abs()).collect();
    // A hair of tolerance: times in ms carry binary rounding (0.5 may print as 0.50000000001).
    let within = abs.iter().filter(|&&e| e <= WITHIN_MS + 1e-9).count();
    let mean_abs_ms = abs.iter().sum::<f64>() / abs.len() as f64;
    abs.sort_by(f64::total_cmp);
    PerRequestError { mean_abs_ms, p90_abs_ms: quantile(&abs, 0.9), within_0_5ms_fraction: within as f64 / abs.len() as f64 }
}

/// Value at quantile `q` of sorted samples: the empirical CDF's points
/// (x_i, (i+1)/n), linearly interpolated.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let t = q * n as f64 - 1.0;
    if t <= 0.0 {
        return sorted[0];
    }
    let k = (t.floor() as usize).min(n - 1);
    if k + 1 >= n {
        return sorted[n - 1];
    }
    sorted[k] + (t - k as f64) * (sorted[k + 1] - sorted[k])
}

/// RMS over 10,000 evenly spaced quantiles 0.0001 .. 1.0 of the
/// horizontal distance between two quantile functions.
fn rms_over_quantiles(qa: impl Fn(f64) -> f64, qb: impl Fn(f64) -> f64) -> f64 {
    let sum: f64 = (1..=10_000).map(|i| {
        let q = i as f64 / 10_000.0;
        (qa(q) - qb(q)).powi(2)
    }).sum();
    (sum / 10_000.0).sqrt()
}

/// The demerit on the samples themselves: each sample a point of the CDF.
pub fn demerit_exact(a: &[f64], b: &[f64]) -> f64 {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    rms_over_quantiles(|q| quantile(&a, q), |q| quantile(&b, q))
}

/// The bin boundaries, in ms, of DiskSim's access-time histograms
/// (`statdefs`: "Trace access time" and "Physical access time",
/// "Distribution size: 1750", "Scale/Equals: 1000/0", "Start 0 step 1 grow
/// 1"): in µs, each boundary is the previous plus 1 plus 1% of the previous
/// (DiskSim manual §5.1); bin i holds the values below boundary i and not
/// below the one before, the last bin all the rest.
pub fn disksim_bins_ms() -> Vec<f64> {
    let mut us = vec![0.0f64];
    while us.len() < 1749 {
        let b = us[us.len() - 1];
        us.push(b + 1.0 + b / 100.0);
    }
    us.into_iter().map(|b| b / 1000.0).collect()
}

/// The quantile function of a histogram's CDF: the points (boundary, share
/// of the values below it), linearly interpolated.
fn histogram_quantile(bounds: &[f64], below: &[f64], q: f64) -> f64 {
    let i = below.partition_point(|&f| f < q).clamp(1, bounds.len() - 1);
    let (f0, f1) = (below[i - 1], below[i]);
    if f1 <= f0 {
        return bounds[i];
    }
    bounds[i - 1] + (q - f0) / (f1 - f0) * (bounds[i] - bounds[i - 1])
}

/// DiskSim's demerit: the RMS horizontal distance between the two CDFs, each
/// from its histogram on DiskSim's bins (`disksim_bins_ms`), at 10,000
/// quantiles. Two samples in the same bin are not told apart.
pub fn demerit(a: &[f64], b: &[f64]) -> f64 {
    let bounds = disksim_bins_ms();
    let below = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        bounds.iter().map(|&b| v.partition_point(|&x| x < b) as f64 / v.len() as f64).collect::<Vec<f64>>()
    };
    let (fa, fb) = (below(a), below(b));
    rms_over_quantiles(|q| histogram_quantile(&bounds, &fa, q), |q| histogram_quantile(&bounds, &fb, q))
}

/// Replay the DiskSim validate trace at `trace_path` closed-loop on a drive of `model` and compare (see the module doc).
pub fn validate(model: Arc<DiskModel>, trace_path: &str) -> Result<Validation> {
    let measured_ms: Vec<f64> = trace::open(trace_path, Some(trace::TraceFormat::DisksimValidate), false)?
        .map(|r| r.map(|r| r.response_ns.unwrap_or(0) as f64 / 1e6))
        .collect::<Result<_>>()?;
    if measured_ms.is_empty() {
        return Err(Error::File { path: trace_path.into(), msg: "no requests".into() });
    }
    let cfg = SimConfig {
        seed: 0,
        disk: DiskConfig { model: model.spec.name.clone(), scheduler: "fcfs".into(), set: Default::default(), count: 1, array: Default::default(), stripe_kb: 64.0, noise: None },
        host: HostConfig::default(),
        controller: None,
        workload: WorkloadConfig::Trace(ReplayConfig {
            path: trace_path.into(),
            format: Some("disksim-validate".into()),
            mode: ReplayMode::Validate,
            speed: 1.0,
            outstanding: 1,
            device: None,
            map: AddressMap::None,
            offset_blocks: 0,
            source_blocks: None,
            skip_bad_lines: false,
            skip_requests: 0,
            device_disks: false,
            flow_by: Default::default(),
            classes: vec![],
            array_disks: 1,
        }),
        run: RunConfig { records: true, ..Default::default() },
        reconfigure: vec![],
        freeblock: None,
        base_dir: None,
    };
    let result = Simulation::with_model(&cfg, model)?.run(&mut |_, _| true)?;
    let rec = result.records.expect("records were requested");
    let simulated_ms: Vec<f64> = (0..rec.len()).map(|i| (rec.done_ns[i] - rec.issued_ns[i]) as f64 / 1e6).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mut ms, mut ss) = (measured_ms.clone(), simulated_ms.clone());
    ms.sort_by(f64::total_cmp);
    ss.sort_by(f64::total_cmp);
    Ok(Validation {
        requests: simulated_ms.len() as u64,
        rms_ms: demerit(&measured_ms, &simulated_ms),
        rms_exact_ms: demerit_exact(&measured_ms, &simulated_ms),
        per_request: per_request_error(&measured_ms, &simulated_ms),
        measured_mean_ms: mean(&measured_ms),
        simulated_mean_ms: mean(&simulated_ms),
        percentiles: [0.1, 0.25, 0.5, 0.75, 0.9, 0.99].iter().map(|&q| (q, quantile(&ms, q), quantile(&ss, q))).collect(),
        measured_ms,
        simulated_ms,
    })
}

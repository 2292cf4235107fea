//! Validation against the real-drive traces: the demerit figure and quality gates.
mod common;

use disksched_core::disk::{builtin, DiskModel};
use disksched_core::validate::{demerit, demerit_exact, per_request_error, validate};
use std::sync::Arc;

#[test]
fn demerit_is_zero_for_equal_distributions_and_the_shift_for_a_shifted_one() {
    let a: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37) % 17.0).collect();
    assert_eq!(demerit(&a, &a), 0.0);
    assert_eq!(demerit_exact(&a, &a), 0.0);
    let shifted: Vec<f64> = a.iter().map(|x| x + 0.25).collect();
    assert!((demerit_exact(&a, &shifted) - 0.25).abs() < 1e-12);
    // Order does not matter: it compares distributions.
    let mut rev = a.clone();
    rev.reverse();
    assert_eq!(demerit(&a, &rev), 0.0);
    assert_eq!(demerit_exact(&a, &rev), 0.0);
}

/// DiskSim's histogram bins, from statdefs' "Start 0 step 1 grow 1" in µs
/// (manual §5.1: each boundary adds the step and `grow` percent of the
/// previous one), here in ms: the bin holding `x` as (lower, upper) boundary.
fn disksim_bin(x: f64) -> (f64, f64) {
    let mut b = 0.0f64;
    loop {
        let next = b + 1.0 + 0.01 * b;
        if next / 1000.0 > x {
            return (b / 1000.0, next / 1000.0);
        }
        b = next;
    }
}

#[test]
fn the_demerit_is_taken_on_disksims_histograms() {
    // Two samples in one bin (near 10 ms bins are 0.1 ms wide): DiskSim's
    // figure cannot tell them apart, the exact one sees their distance.
    let (lo, hi) = disksim_bin(10.0);
    assert!((hi - lo - 0.1).abs() < 0.01, "bin [{lo}, {hi})");
    let (a, b) = (lo + 0.1 * (hi - lo), lo + 0.9 * (hi - lo));
    assert_eq!(disksim_bin(b), (lo, hi));
    assert_eq!(demerit(&[a], &[b]), 0.0);
    assert!((demerit_exact(&[a], &[b]) - 0.8 * (hi - lo)).abs() < 1e-12);
    // One sample each in different bins: each CDF rises linearly across its
    // bin, so quantile q sits at lower + q x width; the figure is the RMS
    // over q = 0.0001 .. 1 of the distance between those.
    let (x, y) = (3.0, 7.5);
    let ((xl, xh), (yl, yh)) = (disksim_bin(x), disksim_bin(y));
    let want = ((1..=10_000).map(|i| {
        let q = i as f64 / 10_000.0;
        ((yl + q * (yh - yl)) - (xl + q * (xh - xl))).powi(2)
    }).sum::<f64>() / 10_000.0).sqrt();
    assert!((demerit(&[x], &[y]) - want).abs() < 1e-9, "{} vs {want}", demerit(&[x], &[y]));
    assert!((demerit_exact(&[x], &[y]) - 4.5).abs() < 1e-12);
}

#[test]
fn per_request_error_sees_errors_that_cancel_in_the_demerit() {
    // The same four times in reverse order: the distributions are equal
    // (demerit 0), every request is wrong by 3, 1, 1 and 3 ms.
    let measured = [1.0, 2.0, 3.0, 4.0];
    let simulated = [4.0, 3.0, 2.0, 1.0];
    assert_eq!(demerit(&measured, &simulated), 0.0);
    let e = per_request_error(&measured, &simulated);
    assert_eq!(e.mean_abs_ms, (3.0 + 1.0 + 1.0 + 3.0) / 4.0);
    assert_eq!(e.within_0_5ms_fraction, 0.0);
    // Sorted errors 1, 1, 3, 3: quantile 0.9 is at t = 0.9 * 4 - 1 = 2.6,
    // between the 3rd and 4th (both 3).
    assert_eq!(e.p90_abs_ms, 3.0);
}

#[test]
fn per_request_error_of_known_offsets() {
    // Errors 0.2, 0.5 (counts as within), 0, 1.0 and 2.5 ms.
    let measured = [1.0, 2.0, 3.0, 4.0, 5.0];
    let simulated = [1.2, 1.5, 3.0, 5.0, 7.5];
    let e = per_request_error(&measured, &simulated);
    assert!((e.mean_abs_ms - (0.2 + 0.5 + 0.0 + 1.0 + 2.5) / 5.0).abs() < 1e-12);
    assert_eq!(e.within_0_5ms_fraction, 3.0 / 5.0);
    // Sorted 0, 0.2, 0.5, 1.0, 2.5: t = 0.9 * 5 - 1 = 3.5, halfway from 1.0 to 2.5.
    assert!((e.p90_abs_ms - 1.75).abs() < 1e-12);
}

/// (DiskSim's demerit, the same on the unbinned samples), ms.
fn demerit_of(disk: &str, trace: &str) -> (f64, f64) {
    let model = Arc::new(DiskModel::new(builtin::resolve(disk, None).unwrap()).unwrap());
    let v = validate(model, common::shared(trace).to_str().unwrap()).unwrap();
    let lines = std::fs::read_to_string(common::shared(trace)).unwrap().lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(v.requests as usize, lines, "every traced request replayed");
    (v.rms_ms, v.rms_exact_ms)
}

/// DiskSim's own demerits (../shared/disksim/README.md): disksched must not do worse. The
/// unbinned figures keep today's levels, so the model cannot silently regress
/// inside DiskSim's bins.
#[test]
fn atlas10k_beats_disksim() {
    let (d, exact) = demerit_of("atlas10k", "atlas10k.trace");
    assert!(d <= 0.268 && exact <= 0.268, "demerit {d} ms, unbinned {exact} (DiskSim: 0.268)");
}

#[test]
fn dec_rz26_beats_disksim() {
    let (d, exact) = demerit_of("dec_rz26", "dec_rz26.trace");
    assert!(d <= 0.340 && exact <= 0.340, "demerit {d} ms, unbinned {exact} (DiskSim: 0.340)");
}

#[test]
fn cheetah4lp_beats_disksim() {
    let (d, exact) = demerit_of("cheetah4lp", "cheetah4LP.trace");
    assert!(d <= 0.318 && exact <= 0.318, "demerit {d} ms, unbinned {exact} (DiskSim: 0.318)");
}

#[test]
fn hp_c2247a_beats_disksim() {
    // Unbinned it is not yet under DiskSim's figure (see docs/validation.md):
    // that gate keeps it from getting worse than it is today.
    let (d, exact) = demerit_of("hp_c2247a", "hp_c2247a.trace");
    assert!(d <= 0.090, "demerit {d} ms (DiskSim: 0.090; PDL's build 0.0899, WD's 0.0893)");
    assert!(exact <= 0.093, "unbinned demerit {exact} ms (0.0930 with shared segments, as the reference; 0.0922 with dedicated_write_segment)");
}

#[test]
fn st41601n_finishes_with_a_figure() {
    // DiskSim does not finish on this trace.
    let (d, exact) = demerit_of("st41601n", "st41601n.trace");
    assert!(d <= 0.08 && exact <= 0.08, "demerit {d} ms, unbinned {exact} (0.078 with DiskSim's slip turning)");
}

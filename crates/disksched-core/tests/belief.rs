//! Beliefs of the drive at the levels above it (`disk::belief`): a belief
//! never reads the truth, it mispredicts exactly by its configured error,
//! and a geometry-blind host loses to the drive's own SPTF.
mod common;

use disksched_core::disk::belief::BeliefConfig;
use disksched_core::disk::{HeadState, Predictor};
use disksched_core::{SimConfig, Simulation};

/// `[host.belief]` as TOML, parsed the way a run config is.
fn belief(toml: &str) -> BeliefConfig {
    toml::from_str(toml).unwrap()
}

#[test]
fn a_belief_with_a_known_skew_error_mispredicts_by_exactly_that_error() {
    let truth = common::atlas();
    let exact = Predictor::exact(truth.clone());
    for e in [3i64, -5, 17] {
        let b = belief(&format!("skew_error_sectors = {e}")).predictor("host.belief", &truth, None).unwrap();
        assert!(b.own_layout);
        // The heads rest on cylinder 0, head 0 (the zone's first track: no skew before it), having read LBN 0.
        let from = HeadState { cylinder: 0, head: 0, time: disksched_core::time::SimTime(1_234_567), next_lbn: Some(1), ..Default::default() };
        // A read of the first LBN on head 1: one track switch into the zone, so its first sector moved by e.
        let span = truth.layout.track_span(0, 1).unwrap();
        let to = exact.target(span.first_lbn);
        assert_eq!((to.cylinder, to.head), (0, 1));
        let p_truth = exact.positioning_at(&from, &to, false, 8);
        // The belief is handed the truth's target (as every request carries) and must re-map it itself.
        let p_belief = b.positioning_at(&from, &to, false, 8);
        assert_eq!(p_belief.seek_ns, p_truth.seek_ns, "a skew error moves no seek");
        // Independent arithmetic: e sectors of a revolution of 60e9/rpm ns over the track's sectors.
        let rev_ns = 60e9 / truth.spec.rpm;
        let expected = (e as f64 * rev_ns / span.sectors_per_track as f64).rem_euclid(rev_ns);
        let got = (p_belief.rotation_ns as f64 - p_truth.rotation_ns as f64).rem_euclid(rev_ns);
        let diff = (got - expected).abs().min(rev_ns - (got - expected).abs());
        assert!(diff < 3.0, "skew error {e}: belief - truth = {got} ns, expected {expected} ns");
    }
}

#[test]
fn a_belief_with_a_seek_error_or_head_switch_error_mispredicts_the_move_by_it() {
    let truth = common::atlas();
    let exact = Predictor::exact(truth.clone());
    let from = HeadState { cylinder: 100, head: 0, time: disksched_core::time::SimTime(0), next_lbn: None, ..Default::default() };
    let to = exact.target(truth.layout.track_span(1100, 0).unwrap().first_lbn);
    let t = exact.positioning_at(&from, &to, false, 8).seek_ns as f64;
    let b = belief("seek_error_pct = 10").predictor("host.belief", &truth, None).unwrap();
    let s = b.positioning_at(&from, &to, false, 8).seek_ns as f64;
    assert!((s / t - 1.1).abs() < 0.01, "seek {s} vs {t}");
    let sw_to = exact.target(truth.layout.track_span(100, 1).unwrap().first_lbn);
    let b = belief("head_switch_ms = 2.5").predictor("host.belief", &truth, None).unwrap();
    let s = b.positioning_at(&from, &sw_to, false, 8).seek_ns;
    let t = exact.positioning_at(&from, &sw_to, false, 8).seek_ns;
    assert_ne!(s, t);
    assert_eq!(s, 2_500_000, "a pure head switch is the believed head-switch time");
}

#[test]
fn an_exact_belief_is_the_truth_and_changes_no_run() {
    let truth = common::atlas();
    let p = belief("geometry = \"known\"");
    assert!(p.is_exact());
    let run = |extra: &str| {
        let cfg = common::config(&format!(r#"
            seed = 3
            [disk]
            model = "atlas10k"
            [host]
            scheduler = "sptf"
            queue_threshold = 1
            {extra}
            [workload]
            kind = "closed"
            clients = 8
            [run]
            requests = 3000
        "#));
        Simulation::with_model(&cfg, truth.clone()).unwrap().run(&mut |_, _| true).unwrap().summary
    };
    let (a, b) = (run(""), run("[host.belief]\nskew_error_sectors = 0"));
    assert_eq!(a.host_response_ms.mean, b.host_response_ms.mean);
    let c = run("[host.belief]\nskew_error_sectors = 40");
    assert_ne!(a.host_response_ms.mean, c.host_response_ms.mean, "a wrong skew changes the host's SPTF choices");
}

/// The Riska & Riedel set-up (reproduction riska2004): Cheetah 9LP, random
/// 4 KB, 2:1 reads, 16 outstanding.
fn riska(host: &str, drive: &str, threshold: u32, extra: &str) -> SimConfig {
    common::config(&format!(r#"
        seed = 1
        [disk]
        model = "cheetah9lp"
        scheduler = "{drive}"
        [host]
        scheduler = "{host}"
        queue_threshold = {threshold}
        {extra}
        [workload]
        kind = "closed"
        clients = 16
        think_time_ms = 0
        size_kb = 4
        read_fraction = 0.6666666666666666
        [run]
        requests = 20000
        warmup_requests = 2000
    "#))
}

#[test]
fn a_geometry_blind_host_sptf_loses_to_the_drives_own_sptf() {
    let mean = |cfg: SimConfig| disksched_core::run(&cfg).unwrap().summary.host_response_ms.mean;
    let blind = mean(riska("sptf", "fcfs", 1, "[host.belief]\ngeometry = \"blind\""));
    let in_drive = mean(riska("fcfs", "sptf", 16, ""));
    let host_exact = mean(riska("sptf", "fcfs", 1, ""));
    let host_fcfs = mean(riska("fcfs", "fcfs", 1, ""));
    assert!(blind > in_drive * 1.1, "blind host SPTF {blind:.2} ms vs in-drive SPTF {in_drive:.2} ms");
    assert!(blind > host_exact * 1.03, "blind host SPTF {blind:.2} ms vs a host that knows the geometry {host_exact:.2} ms");
    // LBN distance still orders seeks: better than no scheduling at all.
    assert!(blind < host_fcfs, "blind {blind:.2} ms vs FCFS {host_fcfs:.2} ms");
}

#[test]
fn bad_beliefs_are_refused_with_the_key_named() {
    let truth = common::atlas();
    let e = belief("model = \"no_such_disk\"").predictor("host.belief", &truth, None).err().unwrap().to_string();
    assert!(e.contains("host.belief.model"), "{e}");
    let e = belief("zone_skew_error_sectors = [1, 2]").predictor("host.belief", &truth, None).err().unwrap().to_string();
    assert!(e.contains("zone_skew_error_sectors") && e.contains("one per zone"), "{e}");
    let e = belief("seek_error_pct = -95").validate("controller.belief").unwrap_err().to_string();
    assert!(e.contains("controller.belief") && e.contains("seek_error_pct"), "{e}");
    let e = SimConfig::from_toml("[disk]\nmodel = \"atlas10k\"\n[host.belief]\ngeometry = \"fuzzy\"\n[workload]\nkind = \"oltp\"\n", "t.toml")
        .and_then(|c| c.validate()).unwrap_err().to_string();
    assert!(e.contains("host.belief.geometry") && e.contains("fuzzy"), "{e}");
}

/// The seek time a predictor believes for a read `d` cylinders away, ns:
/// to the first track that holds LBNs (a spare track holds none) from a
/// cylinder `d` before or after it (a change of cylinder is a seek whatever
/// the surface).
fn believed_seek_ns(p: &Predictor, truth: &std::sync::Arc<disksched_core::disk::DiskModel>, d: u32) -> f64 {
    let exact = Predictor::exact(truth.clone());
    let max = truth.spec.cylinders - 1;
    let (to, from) = (0..=max).find_map(|c| {
        let from = if c >= d { c - d } else if c + d <= max { c + d } else { return None };
        (0..truth.spec.surfaces).find_map(|h| truth.layout.track_span(c, h)).map(|s| (exact.target(s.first_lbn), from))
    }).unwrap();
    let from = HeadState { cylinder: from, head: 0, time: disksched_core::time::SimTime(0), next_lbn: None, ..Default::default() };
    assert_eq!(to.cylinder.abs_diff(from.cylinder), d);
    p.positioning_at(&from, &to, false, 8).seek_ns as f64
}

/// `pts` linearly interpolated at `x`, constant beyond the ends (written
/// here again, not taken from the code under test).
fn piecewise(pts: &[(f64, f64)], x: f64) -> f64 {
    if x <= pts[0].0 {
        return pts[0].1;
    }
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x <= x1 {
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
        }
    }
    pts[pts.len() - 1].1
}

#[test]
fn a_belief_with_a_seek_error_shape_mispredicts_each_distance_by_its_interpolated_error() {
    // A table curve (Atlas 10K) and a three-point curve (HP C2247A) turned into a table first.
    for disk in ["atlas10k", "hp_c2247a"] {
        let truth = std::sync::Arc::new(disksched_core::disk::DiskModel::new(disksched_core::disk::builtin::resolve(disk, None).unwrap()).unwrap());
        let exact = Predictor::exact(truth.clone());
        let points = [(1.0, 8.0), (10.0, -4.0), (400.0, 2.5), (1500.0, 12.0)];
        let b = belief("seek_error_points = [[1, 8.0], [10, -4], [400, 2.5], [1500, 12]]").predictor("host.belief", &truth, None).unwrap();
        // The longest seek between tracks with LBNs (the HP's cylinder 0 and last four hold spares only).
        let data: Vec<u32> = (0..truth.spec.cylinders).filter(|&c| (0..truth.spec.surfaces).any(|h| truth.layout.track_span(c, h).is_some())).collect();
        let max = data[data.len() - 1] - data[0];
        for d in [1, 2, 5, 10, 11, 37, 205, 400, 401, 999, 1500, 1501, max / 2, max] {
            let t = believed_seek_ns(&exact, &truth, d);
            let got = believed_seek_ns(&b, &truth, d);
            let want = t * (1.0 + piecewise(&points, d as f64) / 100.0);
            assert!((got - want).abs() <= 2.0, "{disk} distance {d}: believed {got} ns, truth {t} ns, expected {want} ns");
        }
        // On top of a uniform error the two scale the seek together.
        let b = belief("seek_error_pct = 10\nseek_error_points = [[100, -20]]").predictor("host.belief", &truth, None).unwrap();
        let (t, got) = (believed_seek_ns(&exact, &truth, 300), believed_seek_ns(&b, &truth, 300));
        assert!((got - t * 1.1 * 0.8).abs() <= 2.0, "{disk}: {got} vs {t} x 1.1 x 0.8");
    }
}

#[test]
fn a_sampled_seek_curve_is_the_truth_at_the_samples_and_straight_between() {
    let truth = common::atlas();
    let exact = Predictor::exact(truth.clone());
    let max = truth.spec.cylinders - 1; // 10041
    let t = |d: u32| believed_seek_ns(&exact, &truth, d);
    // N = 2: 1 cylinder and the full stroke; N = 3: and 10041^(1/2) = 100.2, rounded to 100.
    for (n, samples) in [(2u32, vec![1u32, max]), (3, vec![1, 100, max])] {
        let b = belief(&format!("seek_sample_points = {n}")).predictor("host.belief", &truth, None).unwrap();
        let line: Vec<(f64, f64)> = samples.iter().map(|&s| (s as f64, t(s))).collect();
        for &s in &samples {
            let got = believed_seek_ns(&b, &truth, s);
            assert!((got - t(s)).abs() <= 1.0, "N = {n}: at the sample {s}, believed {got} ns vs truth {}", t(s));
        }
        for d in [2, 7, 50, 99, 101, 1400, 4700, 9000, max - 1] {
            let got = believed_seek_ns(&b, &truth, d);
            let want = piecewise(&line, d as f64);
            assert!((got - want).abs() <= 2.0, "N = {n}, distance {d}: believed {got} ns, the straight line {want} ns (truth {})", t(d));
        }
    }
    // Sampled at 40 distances, then a shape on top: the shape scales the sampled curve.
    let sampled = belief("seek_sample_points = 40").predictor("host.belief", &truth, None).unwrap();
    let both = belief("seek_sample_points = 40\nseek_error_points = [[1, 5], [10041, 5]]").predictor("host.belief", &truth, None).unwrap();
    for d in [3, 333, 3333] {
        let (s, b) = (believed_seek_ns(&sampled, &truth, d), believed_seek_ns(&both, &truth, d));
        assert!((b - s * 1.05).abs() <= 2.0, "distance {d}: {b} vs sampled {s} x 1.05");
    }
}

#[test]
fn a_seek_shape_keeps_the_models_same_track_cost_and_head_switch() {
    let truth = common::atlas();
    let b = belief("seek_error_points = [[1, 50], [2, -30]]").model("host.belief", &truth, None).unwrap();
    assert_eq!(b.mech.same_track_read_ns, truth.mech.same_track_read_ns, "the same-track read cost is a figure of its own");
    assert_eq!(b.mech.head_switch_ns, truth.mech.head_switch_ns);
}

#[test]
fn bad_seek_shapes_are_refused_in_one_line_with_the_key_and_value() {
    let cases = [
        ("seek_error_points = [[10, 1], [5, 2]]", "host.belief.seek_error_points[1]", "increasing"),
        ("seek_error_points = [[10, 1], [10, 2]]", "host.belief.seek_error_points[1]", "increasing"),
        ("seek_error_points = [[0, 1]]", "host.belief.seek_error_points[0]", "distance 0"),
        ("seek_error_points = [[5, -95]]", "host.belief.seek_error_points[0]", "-95"),
        ("seek_error_points = [[5, 2000]]", "host.belief.seek_error_points[0]", "2000"),
        ("seek_sample_points = 1", "host.belief.seek_sample_points", "1 is out of range 0 or [2, 100000]"),
        ("seek_sample_points = 100001", "host.belief.seek_sample_points", "100001"),
    ];
    for (toml, key, what) in cases {
        let e = belief(toml).validate("host.belief").unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(what) && !e.contains('\n'), "{toml}: {e}");
    }
    let e = SimConfig::from_toml("[disk]\nmodel = \"atlas10k\"\n[controller]\n[controller.belief]\nseek_sample_points = 1\n[workload]\nkind = \"oltp\"\n", "t.toml")
        .and_then(|c| c.validate()).unwrap_err().to_string();
    assert!(e.contains("controller.belief.seek_sample_points"), "{e}");
}

#[test]
fn a_sampled_seek_curve_changes_a_host_sptfs_choices_and_an_unsampled_one_does_not() {
    let mean = |extra: &str| disksched_core::run(&riska("sptf", "fcfs", 1, extra)).unwrap().summary.host_response_ms.mean;
    let exact = mean("");
    assert_eq!(exact, mean("[host.belief]\nseek_sample_points = 0\nseek_error_points = []"));
    assert_ne!(exact, mean("[host.belief]\nseek_sample_points = 3"));
}

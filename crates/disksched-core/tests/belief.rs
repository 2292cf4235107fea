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

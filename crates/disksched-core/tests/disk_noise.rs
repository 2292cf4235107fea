//! `[disk.noise]`: the drive itself varies from its spec in any run, so
//! every level's belief, even an exact one, mispredicts as a real host's does.
mod common;

use disksched_core::sim::RunResult;
use disksched_core::{SimConfig, Simulation};

/// Random 4 KB reads on the Atlas 10K, `clients` outstanding, the host's scheduler `host`.
fn config(host: &str, clients: u32, requests: u64, extra: &str) -> SimConfig {
    common::config(&format!(r#"
        seed = 7
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "{host}"
        queue_threshold = 1
        [workload]
        kind = "closed"
        clients = {clients}
        think_time_ms = 0
        size_kb = 4
        read_fraction = 1.0
        [run]
        requests = {requests}
        {extra}
    "#))
}

fn run(cfg: &SimConfig) -> RunResult {
    Simulation::with_model(cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

/// Seek bias only: no core, no tail, no drift, no overlap variation, no internal work.
const BIAS_ONLY: &str = "[disk.noise]\nseek_jitter_us = 0\nseek_tail_pct = 0\nrotation_drift_ppm = 0\noverlap_jitter_pct = 0\ninternal_activity_interval_s = 0";

#[test]
fn with_a_seek_bias_the_exact_beliefs_mean_error_is_the_bias() {
    // One request at a time, FCFS: the rotational wait the belief predicts is
    // uniform over a revolution R, so a seek b late costs a revolution with
    // probability b / R: the completion is late by b on average.
    for bias in [66.0, 150.0] {
        let r = run(&config("fcfs", 1, 40_000, &format!("{BIAS_ONLY}\nseek_bias_us = {bias}")));
        let n = r.disk_noise.expect("[disk.noise] reports");
        assert!(n.commands > 39_000, "{} commands compared", n.commands);
        assert!((n.noise.seek_jitter_mean_us - bias).abs() < 1e-6, "every seek varies by exactly the bias: {}", n.noise.seek_jitter_mean_us);
        assert!((n.seek_error_mean_us - bias).abs() < 0.5, "seek error {} us vs bias {bias}", n.seek_error_mean_us);
        // Standard error of the mean: R sqrt(p(1-p)/n) = 5985 sqrt(0.025/40000) = 4.7 us at b = 150.
        assert!((n.service_error_mean_us - bias).abs() < 20.0, "completion error {} us vs bias {bias}", n.service_error_mean_us);
        let rev_us = 60e6 / 10025.0;
        assert!((n.error_one_rev_longer - bias / rev_us).abs() < 0.004, "one revolution late: {} vs {}", n.error_one_rev_longer, bias / rev_us);
        assert_eq!(n.error_one_rev_shorter, 0.0, "a positive bias alone never makes a read early");
    }
}

#[test]
fn a_host_sptf_meets_the_bias_in_every_seek_and_more_in_its_completions() {
    // SPTF picks short rotational waits, which a late seek misses more often
    // than a uniform wait: the completion error is above the bias.
    let r = run(&config("sptf", 16, 20_000, &format!("{BIAS_ONLY}\nseek_bias_us = 66")));
    let n = r.disk_noise.unwrap();
    assert!((n.seek_error_mean_us - 66.0).abs() < 0.5, "seek error {}", n.seek_error_mean_us);
    assert!(n.service_error_mean_us > 66.0 * 1.5, "host SPTF completion error {} us", n.service_error_mean_us);
    // The defaults (bias, core, tail, drift, overlap): the seek error's mean is still about the bias.
    let r = run(&config("sptf", 16, 20_000, "[disk.noise]"));
    let n = r.disk_noise.unwrap();
    assert!((n.seek_error_mean_us - 66.0).abs() < 15.0, "default noise: seek error {} us", n.seek_error_mean_us);
    assert!(n.error_one_rev_shorter > 0.0 && n.error_one_rev_longer > n.error_one_rev_shorter, "{n:?}");
}

#[test]
fn noise_slows_a_host_sptf_and_no_noise_changes_nothing() {
    let plain = run(&config("sptf", 16, 10_000, ""));
    assert!(plain.disk_noise.is_none());
    let zero = run(&config("sptf", 16, 10_000, &format!("{BIAS_ONLY}\nseek_bias_us = 0\nsurprise_hit_pct = 0")));
    assert_eq!(serde_json::to_string(&plain.summary).unwrap(), serde_json::to_string(&zero.summary).unwrap(),
               "a noise of zero is the drive's spec");
    assert_eq!(zero.disk_noise.unwrap().noise.seeks, 0);
    let noisy = run(&config("sptf", 16, 10_000, "[disk.noise]\nseek_bias_us = 300"));
    assert!(noisy.summary.host_response_ms.mean > plain.summary.host_response_ms.mean * 1.02,
            "{} vs {}", noisy.summary.host_response_ms.mean, plain.summary.host_response_ms.mean);
}

#[test]
fn noisy_runs_are_deterministic_and_account_for_every_request() {
    let cfg = config("sptf", 8, 5_000, "[disk.noise]\nseek_tail_pct = 30\nsurprise_hit_pct = 2\ninternal_activity_interval_s = 0.2");
    let (a, b) = (run(&cfg), run(&cfg));
    let js = |r: &RunResult| (serde_json::to_string(&r.summary).unwrap(), serde_json::to_string(&r.disk_noise).unwrap(),
                              serde_json::to_string(&r.counters).unwrap());
    assert_eq!(js(&a), js(&b));
    let c = &a.counters;
    assert_eq!((c.arrived, c.completed, c.drive_dispatched), (5_000, 5_000, 5_000));
    let n = a.disk_noise.as_ref().unwrap();
    assert!(n.noise.surprise_hits > 0 && n.noise.internal_activities > 0, "{n:?}");
    assert_eq!(n.cache_hits + n.commands, 5_000, "every command is compared or a buffer hit");
    // Another seed, another noise.
    let mut other = cfg.clone();
    other.seed = 8;
    assert_ne!(js(&run(&other)).1, js(&a).1);
}

#[test]
fn every_disk_of_an_array_is_noisy_and_counted() {
    let cfg = |count: u32| common::config(&format!(r#"
        seed = 3
        [disk]
        model = "atlas10k"
        count = {count}
        array = "stripe"
        [disk.noise]
        [host]
        scheduler = "fcfs"
        queue_threshold = 4
        [workload]
        kind = "closed"
        clients = 8
        size_kb = 4
        [run]
        requests = 4000
    "#));
    let two = disksched_core::run(&cfg(2)).unwrap();
    let n = two.disk_noise.unwrap();
    assert_eq!(two.counters.completed, 4000);
    assert!(n.commands + n.cache_hits >= 4000, "both disks' commands are counted: {n:?}");
    assert_eq!(serde_json::to_string(&disksched_core::run(&cfg(2)).unwrap().disk_noise).unwrap(), serde_json::to_string(&n).unwrap());
}

#[test]
fn firmware_freeblock_runs_on_a_noisy_drive() {
    let r = run(&config("sptf", 8, 5_000, "[freeblock]\nidle = false\n[disk.noise]"));
    assert_eq!(r.counters.completed, 5_000);
    assert!(r.freeblock.unwrap().free_blocks > 0);
    assert!(r.disk_noise.unwrap().noise.seeks > 0);
}

#[test]
fn bad_disk_noise_is_refused_in_one_line_naming_the_key() {
    for (extra, key, what) in [
        ("[disk.noise]\nseek_bias_us = 5000", "disk.noise.seek_bias_us", "5000 us is out of range [-1000, 1000]"),
        ("[disk.noise]\nseek_tail_pct = -1", "disk.noise.seek_tail_pct", "-1"),
        ("[disk.noise]\ninternal_activity_interval_s = 0.0001", "disk.noise.internal_activity_interval_s", "0 or [0.001, 86400]"),
        ("[disk.noise]\n[freeblock]\nmode = \"external\"\nidle = false", "disk.noise", "[freeblock.noise]"),
    ] {
        let e = config("fcfs", 1, 100, extra).validate().unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(what) && !e.contains('\n'), "{extra}: {e}");
    }
    let e = SimConfig::from_toml("[disk]\nmodel = \"atlas10k\"\n[disk.noise]\nseek_bias = 5\n[workload]\nkind = \"oltp\"\n", "t.toml").unwrap_err().to_string();
    assert!(e.contains("seek_bias"), "{e}");
}

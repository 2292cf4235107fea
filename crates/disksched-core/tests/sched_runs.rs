//! Schedulers in whole runs: anticipation, fairness, tunable checking.
mod common;

use disksched_core::{RunResult, SimConfig, Simulation};

fn run(toml: &str) -> RunResult {
    let cfg: SimConfig = common::config(toml);
    Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

fn two_readers(sched: &str, think_ms: f64, extra: &str) -> String {
    format!(r#"
        seed = 4
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "{sched}"
        queue_threshold = 1
        {extra}
        [workload]
        kind = "sequential"
        streams = 2
        request_kb = 64
        think_time_ms = {think_ms}
        [run]
        requests = 4000
        records = true
    "#)
}

fn counter(r: &RunResult, name: &str) -> u64 {
    r.scheduler_counters.iter().find(|c| c.0 == "host" && c.1 == name).unwrap().2
}

/// Mean length of runs of consecutive dispatches from the same client.
fn mean_run_length(r: &RunResult) -> f64 {
    let rec = r.records.as_ref().unwrap();
    let mut order: Vec<(u64, u32)> = (0..rec.len()).map(|i| (rec.issued_ns[i], rec.client[i])).collect();
    order.sort_unstable();
    let switches = order.windows(2).filter(|w| w[0].1 != w[1].1).count();
    order.len() as f64 / (switches + 1) as f64
}

/// Mean time at the disk (issue to completion) of a run's requests, ms.
fn mean_service_ms(r: &RunResult) -> f64 {
    let rec = r.records.as_ref().unwrap();
    (0..rec.len()).map(|i| (rec.done_ns[i] - rec.issued_ns[i]) as f64 / 1e6).sum::<f64>() / rec.len() as f64
}

#[test]
fn rr_returns_to_a_client_that_issues_within_wait_ms() {
    // Each 64 KB read here takes over 10 ms, so with the 2 ms think a reader submits
    // about every 15 ms: within wait_ms = 30, not within the default 10. (Not 20: gs_rr's
    // think-time average also takes the gap across the other reader's slice, capped at
    // 2 x wait_ms, which puts it close to 20.)
    let rr = run(&two_readers("rr", 2.0, "set = { wait_ms = 30 }"));
    let clook = run(&two_readers("clook", 2.0, ""));
    // Within a slice a reader submits every service time + 2 ms think.
    let gap = mean_service_ms(&rr) + 2.0;
    assert!(gap > 10.0 && gap < 20.0, "gap {gap} ms");
    assert!(counter(&rr, "wait_hits") > 1000, "hits {}", counter(&rr, "wait_hits"));
    // Anticipation keeps serving one reader for a slice; C-LOOK alternates.
    assert!(mean_run_length(&rr) > 5.0 * mean_run_length(&clook), "{} vs {}", mean_run_length(&rr), mean_run_length(&clook));
    // At the default 10 ms, gs_rr's think-time test finds the gap too long and stops waiting.
    let r = run(&two_readers("rr", 2.0, ""));
    assert!(counter(&r, "wait_skipped") > 1000 && counter(&r, "wait_hits") < 50, "{:?}", r.scheduler_counters);
}

#[test]
fn rr_gives_up_on_a_client_that_thinks_longer_than_wait_ms() {
    // Each reader's next request comes 20 ms after its last completes: past wait_ms, so
    // it never arrives while its queue is in service, and (as in gs_rr) its think time
    // is never sampled: every wait times out.
    let r = run(&two_readers("rr", 20.0, ""));
    assert_eq!(counter(&r, "wait_hits"), 0);
    assert!(counter(&r, "wait_misses") > 1000);
    // With wait_ms raised above the think time the client comes back in time, but its
    // gap between submissions (think + service, over 30 ms) exceeds wait_ms:
    // after a few hits the think-time test stops the waiting.
    let r = run(&two_readers("rr", 20.0, "set = { wait_ms = 25 }"));
    assert!(counter(&r, "wait_skipped") > 1000 && counter(&r, "wait_hits") < 50, "{:?}", r.scheduler_counters);
    // Without the test the bet pays again.
    let r = run(&two_readers("rr", 20.0, "set = { wait_ms = 25, think_test = 0 }"));
    assert!(counter(&r, "wait_hits") > 1000);
}

#[test]
fn rr_bypass_passes_everything_through() {
    let r = run(&two_readers("rr", 2.0, "set = { bypass = 1 }"));
    assert_eq!(counter(&r, "wait_hits") + counter(&r, "wait_misses"), 0);
    assert_eq!(r.counters.completed, 4000);
}

#[test]
fn tunables_are_checked_against_their_bounds() {
    let cfg = common::config(&two_readers("rr", 2.0, "set = { wait_ms = 99 }"));
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert_eq!(e, "host.set.wait_ms: 99 ms is out of range [0, 30]");
    let cfg = common::config(&two_readers("rr", 2.0, "set = { patience = 1 }"));
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert!(e.contains("host.set.patience: unknown tunable (expected one of: queue_depth, wait_ms"), "{e}");
}

#[test]
fn every_scheduler_conserves_requests_at_host_and_drive() {
    for info in disksched_core::sched::REGISTRY {
        for (threshold, disk) in [(1, "fcfs"), (8, info.name)] {
            let toml = format!(r#"
                seed = 9
                [disk]
                model = "atlas10k"
                scheduler = "{disk}"
                [host]
                scheduler = "{}"
                queue_threshold = {threshold}
                [workload]
                kind = "closed"
                clients = 24
                think_time_ms = 5
                [run]
                requests = 3000
            "#, info.name);
            let r = run(&toml);
            assert_eq!(r.counters.completed, 3000, "{}", info.name);
        }
    }
}

fn with_switch(host: &str, queue: &str, to: &str, threshold: u32) -> String {
    format!(r#"
        seed = 12
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "{host}"
        queue_threshold = {threshold}
        [workload]
        kind = "closed"
        clients = 32
        [run]
        requests = 20000
        records = true
        [[reconfigure]]
        at_ms = 60000
        queue = "{queue}"
        scheduler = "{to}"
    "#)
}

#[test]
fn switching_schedulers_at_run_time_moves_every_pending_request() {
    for (host, queue, to, threshold) in [("fcfs", "host", "sptf", 1), ("rr", "host", "clook", 1), ("sptf", "host", "rr", 1),
                                         ("fcfs", "disk", "sptf", 16), ("mq_deadline", "host", "bsptf", 4)] {
        let r = run(&with_switch(host, queue, to, threshold));
        assert_eq!(r.counters.completed, 20_000, "{host} -> {to}");
        let rec = r.records.unwrap();
        let mut seqs = rec.seq.clone();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..20_000).collect::<Vec<u64>>(), "{host} -> {to}: each request exactly once");
    }
    // FCFS -> SPTF at 60 s: disk response falls after the switch (32 requests to choose from).
    let rec = run(&with_switch("fcfs", "host", "sptf", 1)).records.unwrap();
    let mean = |after: bool| {
        let v: Vec<f64> = (0..rec.len()).filter(|&i| (rec.issued_ns[i] >= 61_000_000_000) == after && rec.issued_ns[i] > 1_000_000_000)
            .map(|i| (rec.done_ns[i] - rec.arrival_ns[i]) as f64).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(true) < 0.8 * mean(false), "after {} before {}", mean(true), mean(false));
}

#[test]
fn a_bad_reconfiguration_is_reported_before_the_run() {
    let cfg = common::config(&with_switch("fcfs", "host", "warp", 1));
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert!(e.starts_with("reconfigure[0].scheduler: unknown scheduler 'warp'"), "{e}");
    let cfg = common::config(&with_switch("fcfs", "controller", "sptf", 1));
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert!(e.contains("reconfigure[0].queue: 'controller' (expected host or disk; the config has no [controller])"), "{e}");
    let cfg = common::config(&with_switch("fcfs", "driver", "sptf", 1));
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert!(e.contains("reconfigure[0].queue: 'driver' (expected host or disk)"), "{e}");
}

/// Two synchronous sequential readers with 2 ms think time, plus random
/// readers: anticipation keeps serving a sequential reader instead of seeking away.
fn antic(expire_ms: f64) -> RunResult {
    run(&format!(r#"
        seed = 8
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "anticipatory"
        set = {{ antic_expire_ms = {expire_ms} }}
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "sequential", streams = 2, request_kb = 4, think_time_ms = 2 }},
          {{ kind = "closed", clients = 4, think_time_ms = 20, size_kb = 4, read_fraction = 1.0 }},
        ]
        [run]
        requests = 6000
        records = true
    "#))
}

#[test]
fn anticipatory_waits_for_a_quick_nearby_reader() {
    let on = antic(6.0);
    let off = antic(0.0);
    assert!(counter(&on, "antic_hits") > 500, "hits {}", counter(&on, "antic_hits"));
    assert_eq!(counter(&off, "antic_hits") + counter(&off, "antic_misses"), 0);
    // Without anticipation the streams are interleaved with the random readers.
    assert!(mean_run_length(&on) > 1.5 * mean_run_length(&off), "{} vs {}", mean_run_length(&on), mean_run_length(&off));
}

#[test]
fn classes_are_set_up_for_new_flows_and_freed_once_idle_for_the_expiry() {
    // Four streams stop after 1 s; a fifth runs on. rr keeps one queue per flow.
    let toml = |expire_ms: f64| format!(r#"
        seed = 2
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "rr"
        class_expire_ms = {expire_ms}
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "stream", streams = 4, mb_per_s = 1.0, request_kb = 64, stop_ms = 1000 }},
          {{ kind = "stream", streams = 1, mb_per_s = 1.0, request_kb = 64, flow = 100 }},
        ]
        [run]
        requests = 1000000
        duration_ms = 20000
    "#);
    let r = run(&toml(2000.0));
    assert_eq!(counter(&r, "classes_created"), 5);
    assert_eq!(counter(&r, "classes_freed"), 4, "the four stopped streams, not the live one");
    // Longer than the run: nothing expires.
    let r = run(&toml(60_000.0));
    assert_eq!((counter(&r, "classes_created"), counter(&r, "classes_freed")), (5, 0));
}

#[test]
fn cache_aware_sptf_serves_buffered_reads_first() {
    // Sequential readers whose next blocks the drive has read ahead, among random readers.
    let toml = |sched: &str| format!(r#"
        seed = 4
        [disk]
        model = "atlas10k"
        scheduler = "{sched}"
        [host]
        queue_threshold = 16
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "dd", request_kb = 16, jobs = 4 }},
          {{ kind = "closed", clients = 12, size_kb = 4, read_fraction = 1.0, flow = 100 }},
        ]
        [run]
        requests = 20000
        warmup_requests = 2000
    "#);
    let (plain, aware) = (run(&toml("sptf")), run(&toml("sptf_cache")));
    let hits = aware.scheduler_counters.iter().find(|c| c.0 == "disk" && c.1 == "cache_hits_chosen").unwrap().2;
    assert!(hits > 1000, "{hits} hits chosen");
    assert!(aware.summary.host_response_ms.mean < plain.summary.host_response_ms.mean,
            "cache-aware {} vs plain {}", aware.summary.host_response_ms.mean, plain.summary.host_response_ms.mean);
}

#[test]
fn sweeping_to_the_edge_costs_throughput() {
    let iops = |sched: &str| {
        let r = run(&format!(r#"
            seed = 6
            [disk]
            model = "atlas10k"
            scheduler = "{sched}"
            [host]
            queue_threshold = 8
            [workload]
            kind = "closed"
            clients = 8
            [run]
            requests = 5000
        "#));
        r.summary.iops
    };
    // Same orders, plus empty travel: SCAN below LOOK, C-SCAN below C-LOOK.
    assert!(iops("scan") < 0.98 * iops("look"));
    assert!(iops("cscan") < 0.98 * iops("clook"));
}

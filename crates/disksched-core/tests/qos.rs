//! Traffic shaping (qos): token-bucket bounds, feedback policies, io.max
//! caps, composition with other schedulers, soft-real-time streams.
//! Expected figures come from the configured rates, not from the code.
mod common;

use disksched_core::metrics::Series;
use disksched_core::{RunResult, SimConfig, Simulation};

fn run(toml: &str) -> RunResult {
    let cfg: SimConfig = common::config(toml);
    Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

fn error(toml: &str) -> String {
    let cfg: SimConfig = common::config(toml);
    Simulation::with_model(&cfg, common::atlas()).err().expect("config rejected").to_string()
}

fn counter(r: &RunResult, name: &str) -> u64 {
    r.scheduler_counters.iter().find(|c| c.0 == "host" && c.1 == name).unwrap_or_else(|| panic!("no counter {name}")).2
}

/// Host dispatch times (s) and sizes (bytes) of the requests of `clients`, reads or writes, in time order.
fn dispatches(r: &RunResult, clients: std::ops::Range<u32>, write: Option<bool>) -> Vec<(f64, f64)> {
    let rec = r.records.as_ref().unwrap();
    let mut v: Vec<(f64, f64)> = (0..rec.len())
        .filter(|&i| clients.contains(&rec.client[i]) && write.is_none_or(|w| rec.is_write[i] == w))
        .map(|i| (rec.issued_ns[i] as f64 / 1e9, rec.blocks[i] as f64 * 512.0))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The most any window [t_i, t_j] carries beyond rate x (t_j - t_i) (cost: 1 per request, or bytes).
fn worst_excess(d: &[(f64, f64)], rate: f64, bytes: bool) -> f64 {
    let cost = |x: &(f64, f64)| if bytes { x.1 } else { 1.0 };
    let mut worst = f64::MIN;
    for i in 0..d.len() {
        let mut sum = 0.0;
        for j in i..d.len() {
            sum += cost(&d[j]);
            worst = worst.max(sum - rate * (d[j].0 - d[i].0));
        }
    }
    worst
}

/// With FCFS under the shaper and a threshold the queue never reaches, a
/// request is sent to the disk the moment it leaves its pipe.
fn open_load(shaper: &str, size: &str, read_fraction: f64) -> String {
    format!(r#"
        seed = 5
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "fcfs"
        queue_threshold = 1024
        shaper = {shaper}
        [workload]
        kind = "open"
        interarrival_ms = 2
        read_fraction = {read_fraction}
        {size}
        [run]
        requests = 3000
        records = true
    "#)
}

#[test]
fn a_token_bucket_never_releases_more_than_rate_times_time_plus_burst() {
    // 500 requests/s offered, 60/s allowed with a burst of 5.
    let r = run(&open_load("{ best-effort = { rate_per_s = 60, burst = 5 } }", "", 2.0 / 3.0));
    let d = dispatches(&r, 0..1, None);
    assert_eq!(d.len(), 3000);
    let excess = worst_excess(&d, 60.0, false);
    assert!(excess <= 5.0 + 1e-6, "{excess} requests beyond rate x time");
    // The bucket was binding: the run took as long as 3000 requests at 60/s (less the burst).
    let span = d.last().unwrap().0 - d[0].0;
    assert!((span - 2995.0 / 60.0).abs() < 0.05, "span {span} s");
    assert!(counter(&r, "shaper_delayed") > 2500);

    // In bytes: 400 KB/s, bursts of 64 KB; exponential sizes (mean 16 KB), so a few exceed the burst and leave debt.
    let r = run(&open_load("{ best-effort = { rate_kb_per_s = 400, burst_kb = 64 } }",
                           "size_kb = 16\nsize_dist = \"exponential\"", 1.0));
    let d = dispatches(&r, 0..1, None);
    let biggest = d.iter().map(|x| x.1).fold(0.0, f64::max);
    let bound = 64.0 * 1024.0 + (biggest - 64.0 * 1024.0).max(0.0);
    let excess = worst_excess(&d, 400.0 * 1024.0, true);
    assert!(excess <= bound * (1.0 + 1e-9), "{excess} bytes beyond rate x time (bound {bound})");
    let total: f64 = d.iter().map(|x| x.1).sum();
    let span = d.last().unwrap().0 - d[0].0;
    assert!(total / span > 0.95 * 400.0 * 1024.0, "the byte bucket was not binding: {} B/s", total / span);
}

#[test]
fn io_max_caps_hold_per_direction() {
    // Reads capped at 1 MiB/s and writes at 30 IO/s; 500 requests/s offered, half reads, 8 KB.
    let r = run(&open_load("{ best-effort = { rbps = 1048576, wiops = 30, io_burst_ms = 200 } }", "size_kb = 8", 0.5));
    let reads = dispatches(&r, 0..1, Some(false));
    let writes = dispatches(&r, 0..1, Some(true));
    // Bucket capacities: 200 ms of each rate.
    assert!(worst_excess(&reads, 1048576.0, true) <= 0.2 * 1048576.0 + 1e-3);
    assert!(worst_excess(&writes, 30.0, false) <= 0.2 * 30.0 + 1e-9);
    // Both caps bind: after the first bucketful (25.6 reads of 8 KB, 6 writes) reads
    // leave at 1 MiB/s = 128 IO/s and writes at 30 IO/s, each unhindered by the other.
    let span = |d: &[(f64, f64)]| d.last().unwrap().0 - d[0].0;
    let expect_reads = (reads.len() as f64 - 25.6) / 128.0;
    let expect_writes = (writes.len() as f64 - 6.0) / 30.0;
    assert!((span(&reads) - expect_reads).abs() < 2.0 / 128.0, "reads took {} s, expected {expect_reads}", span(&reads));
    assert!((span(&writes) - expect_writes).abs() < 2.0 / 30.0, "writes took {} s, expected {expect_writes}", span(&writes));
}

/// Client 0: one 2 MB/s stream of 64 KB reads (real-time, a request every 32.8 ms); then
/// `be_clients` greedy best-effort readers of random 8 KB blocks.
fn stream_and_readers(shaper: &str, host: &str, be_clients: u32, requests: u64) -> String {
    stream_at(2.0, shaper, host, be_clients, requests)
}

fn stream_at(mb_per_s: f64, shaper: &str, host: &str, be_clients: u32, requests: u64) -> String {
    format!(r#"
        seed = 11
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "{host}"
        queue_threshold = 1
        shaper = {shaper}
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "stream", mb_per_s = {mb_per_s}, request_kb = 64, start_lbn = 0, class = "real-time" }},
          {{ kind = "closed", clients = {be_clients}, think_time_ms = 0, size_kb = 8, read_fraction = 1.0 }},
        ]
        [run]
        requests = {requests}
        records = true
        series_window_ms = 1000
    "#)
}

fn samples<'a>(s: &'a Series, name: &str) -> Vec<(u64, f64)> {
    (0..s.sample_ns.len()).filter(|&i| s.sample_name[i] == name).map(|i| (s.sample_ns[i], s.sample_value[i])).collect()
}

/// (deadline requests, misses) of `client`.
fn misses(s: &Series, client: u32) -> (u64, u64) {
    (0..s.client.len()).filter(|&i| s.client[i] == client).fold((0, 0), |a, i| (a.0 + s.deadline_requests[i], a.1 + s.missed[i]))
}

#[test]
fn feedback_policies_do_not_throttle_without_misses() {
    // One best-effort reader beside a 1 MB/s stream (a request every 65.5 ms): a
    // stream request waits for at most one reader's request (each under 30 ms), so it never misses.
    for policy in ["optimistic", "pessimistic"] {
        let r = run(&stream_at(1.0, &format!("{{ policy = \"{policy}\", best-effort = {{ rate_per_s = 80 }} }}"), "clook", 1, 4000));
        let s = r.series.as_ref().unwrap();
        assert_eq!(misses(s, 0).1, 0, "{policy}");
        assert_eq!(counter(&r, "shaper_rate_cuts"), 0, "{policy}");
        let rate = samples(s, "best-effort.rate_per_s");
        assert!(rate.len() > 5 && rate.iter().all(|&(_, v)| v == 80.0), "{policy}: {rate:?}");
    }
}

#[test]
fn shaping_cuts_the_boosted_streams_misses() {
    // Eight greedy readers beside the 4 MB/s stream: alone, the stream misses often.
    let plain = run(&stream_and_readers("{ }", "clook", 8, 6000));
    let (n, plain_missed) = misses(plain.series.as_ref().unwrap(), 0);
    let plain_ratio = plain_missed as f64 / n as f64;
    assert!(plain_ratio > 0.3, "unshaped miss ratio {plain_ratio}");
    for shaper in ["{ best-effort = { rate_per_s = 40 } }", "{ policy = \"optimistic\", best-effort = { rate_per_s = 400 } }",
                   "{ policy = \"pessimistic\", best-effort = { rate_per_s = 400 } }"] {
        let r = run(&stream_and_readers(shaper, "clook", 8, 6000));
        let (n, missed) = misses(r.series.as_ref().unwrap(), 0);
        let ratio = missed as f64 / n as f64;
        assert!(ratio < plain_ratio / 3.0, "{shaper}: miss ratio {ratio} vs {plain_ratio} unshaped");
        assert_eq!(counter(&r, "shaper_rt_misses"), missed, "{shaper}: every miss is notified");
    }
}

#[test]
fn optimistic_grows_back_and_pessimistic_waits_for_a_demand_change() {
    // The stream stops at 20 s; the readers go on.
    let cfg = |policy: &str| stream_and_readers(&format!(
        "{{ policy = \"{policy}\", set = {{ recover_pct_per_s = 10, rt_idle_ms = 500 }}, best-effort = {{ rate_per_s = 400 }} }}"), "clook", 8, 40_000)
        .replace("class = \"real-time\"", "class = \"real-time\", stop_ms = 20000");
    let opt = run(&cfg("optimistic"));
    let pes = run(&cfg("pessimistic"));
    let rate_at = |r: &RunResult, s: u64| samples(r.series.as_ref().unwrap(), "best-effort.rate_per_s")
        .into_iter().find(|&(t, _)| t == s * 1_000_000_000).unwrap().1;
    for r in [&opt, &pes] {
        assert!(counter(r, "shaper_rate_cuts") > 0);
        let low = samples(r.series.as_ref().unwrap(), "best-effort.rate_per_s").into_iter()
            .filter(|&(t, _)| t < 20_000_000_000).map(|x| x.1).fold(f64::MAX, f64::min);
        assert!(low < 400.0);
    }
    // Optimistic: between cuts the rate rises by 10% of 400 per second.
    let rises: Vec<f64> = samples(opt.series.as_ref().unwrap(), "best-effort.rate_per_s").windows(2)
        .map(|w| w[1].1 - w[0].1).filter(|&d| d > 0.0).collect();
    assert!(rises.iter().any(|&d| (d - 40.0).abs() < 1e-6), "rises {rises:?}");
    // Pessimistic: flat between cuts until the stream stops, then back to 400 within rt_idle_ms.
    let pes_rate = samples(pes.series.as_ref().unwrap(), "best-effort.rate_per_s");
    assert!(pes_rate.windows(2).filter(|w| w[0].0 < 20_000_000_000).all(|w| w[1].1 <= w[0].1), "{pes_rate:?}");
    assert_eq!(rate_at(&pes, 22), 400.0);
    assert!(counter(&pes, "shaper_rate_resets") >= 1);
}

#[test]
fn shaping_composes_with_fcfs_clook_and_sptf() {
    let mut service = vec![];
    for inner in ["fcfs", "clook", "sptf"] {
        let toml = format!(r#"
            seed = 3
            [disk]
            model = "atlas10k"
            [host]
            scheduler = "{inner}"
            queue_threshold = 1
            shaper = {{ best-effort = {{ rate_per_s = 30, burst = 4 }} }}
            [workload]
            kind = "mix"
            clients = [
              {{ kind = "closed", clients = 8, think_time_ms = 0, size_kb = 4, class = "real-time", deadline_ms = 50 }},
              {{ kind = "closed", clients = 16, think_time_ms = 0, size_kb = 4 }},
            ]
            [run]
            requests = 6000
            records = true
        "#);
        let r = run(&toml);
        assert_eq!(r.counters.completed, 6000, "{inner}");
        let rec = r.records.as_ref().unwrap();
        let mut seqs = rec.seq.clone();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..6000).collect::<Vec<u64>>(), "{inner}: each request exactly once");
        // Best-effort requests sent by time t never exceed what the bucket let out: 30 t + 4
        // (the real-time ones, unshaped, keep the inner scheduler's queue 8 deep).
        let be = dispatches(&r, 8..24, None);
        assert!(be.len() > 500, "{inner}: {} best-effort requests", be.len());
        for (k, &(t, _)) in be.iter().enumerate() {
            assert!((k + 1) as f64 <= 30.0 * t + 4.0 + 1e-6, "{inner}: request {k} sent at {t} s");
        }
        assert_eq!(counter(&r, "shaper_forced"), 0, "{inner}");
        service.push(r.summary.mean_seek_ms + r.summary.mean_rotation_ms);
    }
    // The inner scheduler still orders: SPTF positions faster than C-LOOK, C-LOOK than FCFS.
    assert!(service[2] < service[1] && service[1] < service[0], "positioning ms fcfs/clook/sptf {service:?}");
}

#[test]
fn a_stream_alone_gets_its_rate_and_meets_its_deadlines() {
    let r = run(r#"
        [disk]
        model = "atlas10k"
        [workload]
        kind = "stream"
        mb_per_s = 2.048
        request_kb = 64
        start_lbn = 1000
        [run]
        requests = 320
        records = true
        series_window_ms = 1000
    "#);
    let rec = r.records.as_ref().unwrap();
    // 65536 B at 2.048e6 B/s: one request every 32 ms, sequential from block 1000.
    for i in 0..rec.len() {
        assert_eq!(rec.arrival_ns[i], rec.seq[i] * 32_000_000);
        assert_eq!(rec.lbn[i], 1000 + rec.seq[i] * 128);
    }
    let s = r.series.as_ref().unwrap();
    assert_eq!(misses(s, 0), (320, 0));
    assert_eq!(r.summary.deadline_requests, 320);
    // Full windows carry 2.048 MB: 31 or 32 completions of 65536 B (31.25 per second).
    for i in 1..9 {
        assert!(s.bytes[i] == 31 * 65536 || s.bytes[i] == 32 * 65536, "window {i}: {} B", s.bytes[i]);
    }
}

#[test]
fn bad_shaper_settings_are_one_line_errors() {
    let base = |shaper: &str| stream_and_readers(shaper, "clook", 1, 100);
    assert_eq!(error(&base("{ best-effort = { rate_per_s = -1 } }")),
               "host.shaper.best-effort.rate_per_s: -1 requests/s is out of range 0 or [0.001, 10000000]");
    assert_eq!(error(&base("{ set = { cut_factor = 2 } }")), "host.shaper.set.cut_factor: 2 fraction is out of range [0.01, 1]");
    assert!(error(&base("{ real-time = { rate = 5 } }"))
        .starts_with("host.shaper.real-time.rate: unknown tunable (expected one of: rate_per_s, burst,"));
    assert_eq!(error(&base("{ policy = \"greedy\" }")),
               "host.shaper.policy: unknown policy 'greedy' (expected one of: fixed, optimistic, pessimistic)");
    assert_eq!(error(&base("{ policy = \"optimistic\", real-time = { rate_per_s = 10 } }")),
               "host.shaper.policy: 'optimistic' needs a rate to adjust: set rate_per_s or rate_kb_per_s of best-effort or background");
    let e = error(&stream_and_readers("{ }", "clook", 1, 100).replace("series_window_ms = 1000", "series_window_ms = 0"));
    assert_eq!(e, "run.series_window_ms: 0 ms is out of range [1, 3600000]");
    let e = error(&stream_and_readers("{ }", "clook", 1, 100).replace("mb_per_s = 2,", "mb_per_s = 0,"));
    assert_eq!(e, "workload.clients[0].mb_per_s: 0 MB/s is out of range (0, 1000000]");
    let e = error(&format!("{}\n[[reconfigure]]\nat_ms = 5\nqueue = \"host\"\nscheduler = \"fcfs\"\n", base("{ }")));
    assert_eq!(e, "reconfigure[0].queue: the host scheduler cannot be switched under a shaper");
    for e in [error(&base("{ best-effort = { rate_per_s = -1 } }")), error(&base("{ policy = \"greedy\" }"))] {
        assert!(!e.contains('\n'));
    }
    // An unknown class is a config parse error naming the key.
    let parsed = SimConfig::from_toml(&base("{ gold = { rate_per_s = 1 } }"), "x.toml").unwrap_err().to_string();
    assert!(parsed.contains("unknown field `gold`") && !parsed.contains('\n'), "{parsed}");
}

#[test]
fn shaped_runs_are_deterministic() {
    let toml = stream_and_readers("{ policy = \"optimistic\", best-effort = { rate_per_s = 300, burst = 3 } }", "sptf", 8, 5000);
    let (a, b) = (run(&toml), run(&toml));
    let (sa, sb) = (a.series.unwrap(), b.series.unwrap());
    assert_eq!(sa.bytes, sb.bytes);
    assert_eq!(sa.missed, sb.missed);
    assert_eq!(sa.sample_value, sb.sample_value);
    assert_eq!(a.records.unwrap().done_ns, b.records.unwrap().done_ns);
    assert_eq!(a.scheduler_counters, b.scheduler_counters);
}

//! The synthetic generators, each run through a whole simulation with
//! records on, checked against its defining statistics worked out here from
//! the parameters (not from the generator): strided LBN sequences, local
//! mean |distance|, hot/cold shares, on/off idle gaps, schedule counts per
//! piece, dd's outstanding depth, mix client ids and classes. Plus one-line
//! errors for bad parameters.
mod common;

use disksched_core::host::Class;
use disksched_core::metrics::Records;
use disksched_core::workload::SimRng;
use disksched_core::{Simulation, SimConfig};
use rand::SeedableRng;

/// Atlas 10K capacity in 512-byte blocks: what atlas10k.model's zones map
/// (DiskSim's capacity; tests/catalogue.rs computes it from the file).
const CAP: u64 = 17_966_953;

fn config(workload: &str, run: &str, host: &str) -> SimConfig {
    common::config(&format!(
        "seed = 7\n[disk]\nmodel = \"atlas10k\"\n[host]\n{host}\n[workload]\n{workload}\n[run]\nrecords = true\n{run}\n"
    ))
}

fn run_with(workload: &str, run: &str, host: &str) -> Records {
    let cfg = config(workload, run, host);
    let r = Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap();
    assert_eq!(r.counters.arrived, r.counters.completed);
    sorted_by_seq(r.records.unwrap())
}

fn run(workload: &str, requests: u64) -> Records {
    run_with(workload, &format!("requests = {requests}"), "")
}

fn err(workload: &str) -> String {
    let cfg = config(workload, "requests = 10", "");
    match Simulation::with_model(&cfg, common::atlas()) {
        Ok(_) => panic!("accepted: {workload}"),
        Err(e) => e.to_string(),
    }
}

/// Records come in completion order; put them in arrival (seq) order.
fn sorted_by_seq(r: Records) -> Records {
    let mut idx: Vec<usize> = (0..r.len()).collect();
    idx.sort_by_key(|&i| r.seq[i]);
    let pick = |v: &Vec<u64>| idx.iter().map(|&i| v[i]).collect::<Vec<_>>();
    Records {
        seq: pick(&r.seq),
        client: idx.iter().map(|&i| r.client[i]).collect(),
        lbn: pick(&r.lbn),
        blocks: idx.iter().map(|&i| r.blocks[i]).collect(),
        disk: idx.iter().map(|&i| r.disk[i]).collect(),
        class: idx.iter().map(|&i| r.class[i]).collect(),
        is_write: idx.iter().map(|&i| r.is_write[i]).collect(),
        arrival_ns: pick(&r.arrival_ns),
        host_dispatched_ns: pick(&r.host_dispatched_ns),
        issued_ns: pick(&r.issued_ns),
        started_ns: pick(&r.started_ns),
        done_ns: pick(&r.done_ns),
        seek_ns: pick(&r.seek_ns),
        rotation_ns: pick(&r.rotation_ns),
        transfer_ns: pick(&r.transfer_ns),
        destage_wait_ns: pick(&r.destage_wait_ns),
        destage_ns: pick(&r.destage_ns),
    }
}

fn within(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got}, expected {want} +- {tol}");
}

#[test]
fn strided_visits_every_stride_and_wraps() {
    // 4 KB = 8 blocks every 64 KB = 128 blocks, from block 1000.
    let r = run("kind = \"strided\"\nrequest_kb = 4\nstride_kb = 64\nstart_lbn = 1000\nthink_time_ms = 1", 300);
    let want: Vec<u64> = (0..300).map(|i| 1000 + 128 * i).collect();
    assert_eq!(r.lbn, want);
    assert!(r.blocks.iter().all(|&b| b == 8) && r.is_write.iter().all(|&w| !w));
    // Four requests fit before the end (the last ends exactly at the end), then block 0.
    let start = CAP - 8 - 3 * 128;
    let r = run(&format!("kind = \"strided\"\nrequest_kb = 4\nstride_kb = 64\nstart_lbn = {start}\nwrite = true"), 7);
    assert_eq!(r.lbn, vec![start, start + 128, start + 256, CAP - 8, 0, 128, 256]);
    assert!(r.is_write.iter().all(|&w| w));
    // Several streams: each one's own sequence advances by the stride.
    let r = run("kind = \"strided\"\nstreams = 3\nrequest_kb = 8\nstride_kb = 32\nthink_time_ms = 2", 900);
    for c in 0..3 {
        let l: Vec<u64> = (0..r.len()).filter(|&i| r.client[i] == c).map(|i| r.lbn[i]).collect();
        assert!(l.len() >= 250, "stream {c}: {}", l.len());
        assert!(l.windows(2).all(|w| w[1] == w[0] + 64 || w[1] == 0), "stream {c}");
    }
}

/// Mean |start - previous start of the same client|, and the share of upward steps.
fn steps(r: &Records) -> (f64, f64) {
    let mut prev = std::collections::HashMap::new();
    let (mut sum, mut n, mut up) = (0.0, 0u64, 0u64);
    for i in 0..r.len() {
        if let Some(p) = prev.insert(r.client[i], r.lbn[i]) {
            sum += (r.lbn[i] as f64 - p as f64).abs();
            n += 1;
            up += (r.lbn[i] > p) as u64;
        }
    }
    (sum / n as f64, up as f64 / n as f64)
}

#[test]
fn local_steps_have_the_configured_mean_distance() {
    // Mean 512 KB = 1024 blocks; 20,000 draws: the sample mean's sd is 0.7 %.
    for dist in ["exponential", "normal"] {
        let r = run(&format!("kind = \"local\"\nclients = 4\nthink_time_ms = 5\nmean_distance_kb = 512\ndistance_dist = \"{dist}\""), 20_000);
        let (mean, up) = steps(&r);
        within(mean, 1024.0, 1024.0 * 0.03, &format!("{dist}: mean |distance| blocks"));
        within(up, 0.5, 0.02, &format!("{dist}: share of upward steps"));
        assert!(r.lbn.iter().all(|&l| l % 8 == 0 && l + 8 <= CAP), "aligned to 4 KB and on the disk");
    }
    // Zero distance: every client rereads its first block.
    let r = run("kind = \"local\"\nclients = 2\nmean_distance_kb = 0", 100);
    assert_eq!(steps(&r).0, 0.0);
}

#[test]
fn hotcold_sends_the_hot_share_to_the_hot_region() {
    // 10 % of the disk gets 90 % of 20,000 requests: sd of the share is 0.2 %.
    let r = run("kind = \"hotcold\"\nclients = 8\nthink_time_ms = 10\nhot_fraction = 0.1\nhot_access_fraction = 0.9", 20_000);
    let hot_end = (CAP as f64 * 0.1).round() as u64;
    let n = r.len() as f64;
    let hot = r.lbn.iter().filter(|&&l| l < hot_end).count() as f64;
    within(hot / n, 0.9, 0.01, "hot share");
    // The cold requests spread uniformly over the cold 90 %: half in each half of it.
    let cold_mid = hot_end + (CAP - hot_end) / 2;
    let lower_cold = r.lbn.iter().filter(|&&l| l >= hot_end && l < cold_mid).count() as f64;
    within(lower_cold / (n - hot), 0.5, 0.05, "cold requests in the lower half of the cold region");
    // A hot region in the middle: cold requests come from both sides.
    let mid = CAP / 2;
    let r = run(&format!("kind = \"hotcold\"\nclients = 4\nhot_fraction = 0.2\nhot_access_fraction = 0.5\nhot_start_lbn = {mid}"), 10_000);
    let hot_hi = mid + (CAP as f64 * 0.2).round() as u64;
    let n = r.len() as f64;
    let hot = r.lbn.iter().filter(|&&l| l >= mid && l < hot_hi).count() as f64;
    let below = r.lbn.iter().filter(|&&l| l < mid).count() as f64;
    within(hot / n, 0.5, 0.02, "middle hot share");
    // Cold: 50 % of requests over 80 % of the disk, of which 50 points are below.
    within(below / n, 0.5 * 0.5 / 0.8, 0.02, "cold share below the hot region");
}

#[test]
fn onoff_bursts_are_poisson_and_separated_by_idle_gaps() {
    // 1000/s during on periods (mean 20 ms) and nothing during off (mean 80 ms).
    let r = run("kind = \"onoff\"\non_rate_per_s = 1000\nmean_on_ms = 20\nmean_off_ms = 80", 40_000);
    let gaps: Vec<f64> = r.arrival_ns.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e6).collect();
    let span_ms = (r.arrival_ns[r.len() - 1] - r.arrival_ns[0]) as f64 / 1e6;
    // Long-run rate: on share 20 / (20 + 80) of 1000/s.
    within(r.len() as f64 / span_ms * 1000.0, 200.0, 200.0 * 0.12, "mean rate per s");
    // A 10 ms gap inside a burst has probability e^-10; longer gaps are off periods.
    let (short, long): (Vec<f64>, Vec<f64>) = gaps.iter().partition(|&&g| g <= 10.0);
    within(short.iter().sum::<f64>() / short.len() as f64, 1.0, 0.03, "mean gap within bursts, ms");
    // Off periods are 80 % of the time; the idle ends of on periods add about
    // 1/rate = 1 ms on each side of every gap (2 % of a 100 ms cycle).
    within(long.iter().sum::<f64>() / span_ms, 0.82, 0.05, "share of time in idle gaps");
    // About one idle gap per cycle: 40,000 requests / 20 per burst (4.8 % of
    // on periods see no arrival and merge two gaps).
    within(long.len() as f64, 40_000.0 / 20.0 * (1.0 - 1.0 / 21.0), 2000.0 * 0.12, "idle gaps");
}

#[test]
fn schedule_arrival_counts_follow_the_rate_pieces() {
    let r = run_with(
        "kind = \"schedule\"\nrates = [[0, 100], [3000, 400], [6000, 0], [8000, 50]]",
        "requests = 1000000\nduration_ms = 12000",
        "scheduler = \"sstf\"\nqueue_threshold = 16",
    );
    let count = |lo: f64, hi: f64| r.arrival_ns.iter().filter(|&&t| t as f64 >= lo * 1e6 && (t as f64) < hi * 1e6).count() as f64;
    // Poisson counts: rate x length, within 4 standard deviations (sqrt of the mean).
    for (lo, hi, rate) in [(0.0, 3000.0, 100.0), (3000.0, 6000.0, 400.0), (8000.0, 12000.0, 50.0)] {
        let want = rate * (hi - lo) / 1000.0;
        within(count(lo, hi), want, 4.0 * f64::sqrt(want), &format!("arrivals in [{lo}, {hi}) ms"));
    }
    assert_eq!(count(6000.0, 8000.0), 0.0, "the idle piece");
    assert!(r.arrival_ns.iter().all(|&t| t <= 12_000_000_000), "duration_ms stops arrivals");
}

/// Most requests in the system at once (arrival to completion); a completion
/// at the same instant as an arrival frees its slot first.
fn max_outstanding(r: &Records) -> i64 {
    let mut ev: Vec<(u64, i64)> = r.arrival_ns.iter().map(|&t| (t, 1)).chain(r.done_ns.iter().map(|&t| (t, -1))).collect();
    ev.sort();
    let mut n = 0;
    ev.iter().map(|&(_, d)| { n += d; n }).max().unwrap()
}

#[test]
fn dd_sync_is_back_to_back_sequential() {
    let r = run("kind = \"dd\"\nrequest_kb = 64\nstart_lbn = 0", 200);
    assert_eq!(r.lbn, (0..200).map(|i| 128 * i).collect::<Vec<u64>>());
    assert!(r.blocks.iter().all(|&b| b == 128));
    for i in 1..r.len() {
        assert_eq!(r.arrival_ns[i], r.done_ns[i - 1], "request {i} issued as {} completed", i - 1);
    }
    assert_eq!(max_outstanding(&r), 1);
}

#[test]
fn dd_async_keeps_depth_outstanding() {
    let r = run_with("kind = \"dd\"\nrequest_kb = 16\ndepth = 8\nwrite = true\nstart_lbn = 5000", "requests = 2000", "queue_threshold = 8");
    assert_eq!(max_outstanding(&r), 8);
    assert_eq!(r.lbn, (0..2000).map(|i| 5000 + 32 * i).collect::<Vec<u64>>());
    assert!(r.is_write.iter().all(|&w| w));
    // Two jobs of depth 4: clients 0..8, each job sequential on its own.
    let r = run_with("kind = \"dd\"\nrequest_kb = 16\ndepth = 4\njobs = 2\nstart_lbn = 0", "requests = 1000", "queue_threshold = 8");
    assert_eq!(max_outstanding(&r), 8);
    let mut clients: Vec<u32> = r.client.clone();
    clients.sort_unstable();
    clients.dedup();
    assert_eq!(clients, (0..8).collect::<Vec<u32>>());
    let job0: Vec<u64> = (0..r.len()).filter(|&i| r.client[i] < 4).map(|i| r.lbn[i]).collect();
    assert_eq!(job0, (0..job0.len() as u64).map(|i| 32 * i).collect::<Vec<u64>>());
}

const MIX: &str = r#"kind = "mix"
clients = [
  { kind = "closed", clients = 3, think_time_ms = 5, class = "real-time", flow = 100, deadline_ms = 50 },
  { kind = "oltp", class = "background" },
  { kind = "dd", request_kb = 64, depth = 2, flow = 0 },
]"#;

#[test]
fn mix_members_keep_their_client_ids() {
    let r = run(MIX, 6000);
    let mut ids: Vec<u32> = r.client.clone();
    ids.sort_unstable();
    ids.dedup();
    // closed: 100..103; oltp: next free after it, 103..113; dd at flow 0: 0..2.
    let want: Vec<u32> = (0..2).chain(100..103).chain(103..113).collect();
    assert_eq!(ids, want);
    // The dd member is sequential in 128-block steps on its own.
    let dd: Vec<u64> = (0..r.len()).filter(|&i| r.client[i] < 2).map(|i| r.lbn[i]).collect();
    assert!(dd.len() > 100 && dd.windows(2).all(|w| w[1] == w[0] + 128 || w[1] == 0));
}

#[test]
fn mix_stamps_each_members_class_and_deadline() {
    // The records do not carry the class, so drive the generator directly.
    let cfg = config(MIX, "requests = 10", "");
    let mut g = cfg.workload.build(CAP, 512, None).unwrap();
    let mut rng = SimRng::seed_from_u64(1);
    let starts = g.start(&mut rng);
    let mut clients: Vec<u32> = starts.iter().map(|s| s.1).collect();
    clients.sort_unstable();
    assert_eq!(clients, (0..2).chain(100..113).collect::<Vec<u32>>());
    let now = disksched_core::time::SimTime(1_000_000);
    for c in clients {
        let (io, _) = g.arrive(now, c, &mut rng).unwrap();
        let (class, deadline) = match c {
            0..=1 => (Class::BestEffort, None),
            100..=102 => (Class::RealTime, Some(disksched_core::time::SimTime(51_000_000))),
            _ => (Class::Background, None),
        };
        assert_eq!((io.class, io.deadline), (class, deadline), "client {c}");
    }
}

#[test]
fn bad_parameters_give_one_line_errors_naming_them() {
    let cases = [
        ("kind = \"strided\"\nrequest_kb = 8\nstride_kb = 4", "workload.stride_kb: 4 KB is not a whole number of 512-byte blocks in [request_kb = 8"),
        ("kind = \"strided\"\nrequest_kb = 0.3\nstride_kb = 4", "workload.request_kb: 0.3 KB is not a whole number"),
        ("kind = \"strided\"\nrequest_kb = 4\nstride_kb = 4\nstreams = 0", "workload.streams: 0 is out of range [1, 100000]"),
        ("kind = \"local\"\nmean_distance_kb = -3", "workload.mean_distance_kb: -3 KB is out of range [0, 8983476.5]"),
        ("kind = \"local\"\nmean_distance_kb = 3\nread_fraction = 2", "workload.read_fraction: 2 is out of range [0, 1]"),
        ("kind = \"hotcold\"\nhot_fraction = 1\nhot_access_fraction = 0.5", "workload.hot_fraction: 1 is out of range (0, 1)"),
        ("kind = \"hotcold\"\nhot_fraction = 0.5\nhot_access_fraction = 1.5", "workload.hot_access_fraction: 1.5 is out of range [0, 1]"),
        ("kind = \"hotcold\"\nhot_fraction = 0.5\nhot_access_fraction = 0.5\nhot_start_lbn = 17000000", "workload.hot_start_lbn: 17000000 is out of range [0, 8983476]"), // CAP - ceil(CAP / 2)
        ("kind = \"onoff\"\non_rate_per_s = 0\nmean_on_ms = 1\nmean_off_ms = 1", "workload.on_rate_per_s: 0 requests/s is out of range [1e-6, 1000000000]"),
        ("kind = \"onoff\"\non_rate_per_s = 10\nmean_on_ms = 1\nmean_off_ms = -1", "workload.mean_off_ms: -1 ms is out of range [0.001, 1000000000]"),
        ("kind = \"schedule\"\nrates = [[5, 100]]", "workload.rates[0].start_ms: 5 must be 0"),
        ("kind = \"schedule\"\nrates = [[0, 100], [0, 5]]", "workload.rates[1].start_ms: 0 must be finite and after the previous piece's start (0)"),
        ("kind = \"schedule\"\nrates = [[0, 100], [10, -5]]", "workload.rates[1].rate_per_s: -5 requests/s is out of range 0 or [1e-6, 1000000000]"),
        ("kind = \"schedule\"\nrates = [[0, 0]]", "workload.rates: every rate is 0"),
        ("kind = \"schedule\"\nrates = []", "workload.rates: 0 pieces is out of range [1, 100000]"),
        ("kind = \"dd\"\nrequest_kb = 64\ndepth = 0", "workload.depth: 0 is out of range [1, 1024]"),
        ("kind = \"dd\"\nrequest_kb = 64\nstart_lbn = 17966900", "workload.start_lbn: 17966900 is out of range [0, 17966825]"), // CAP - 128
        ("kind = \"mix\"\nclients = []", "workload.clients: 0 members is out of range [1, 10000]"),
        (
            "kind = \"mix\"\nclients = [{ kind = \"oltp\" }, { kind = \"oltp\" }, { kind = \"closed\", clients = 2, think_time_ms = -1 }]",
            "workload.clients[2].think_time_ms: -1 ms is out of range [0, 1000000000000]",
        ),
        (
            "kind = \"mix\"\nclients = [{ kind = \"oltp\" }, { kind = \"dd\", request_kb = 4, depth = 4, flow = 8 }]",
            "workload.clients[1].flow: client ids 8..12 overlap member 0's 0..10; choose flow >= 10",
        ),
        ("kind = \"mix\"\nclients = [{ kind = \"oltp\", class = \"urgent\" }]", "workload.clients[0]: unknown variant `urgent`"),
        ("kind = \"mix\"\nclients = [{ kind = \"oltp\" }, { kind = \"dd\", request_kb = 4, dept = 4 }]", "workload.clients[1]: unknown field `dept`"),
        ("kind = \"mix\"\nclients = [{ kind = \"oltp\" }, { kind = \"mix\", clients = [{ kind = \"dd\", request_kb = 4, depth = 0 }] }]", "workload.clients[1].clients[0].depth: 0 is out of range [1, 1024]"),
    ];
    for (w, want) in cases {
        let e = match SimConfig::from_toml(&format!("[disk]\nmodel = \"atlas10k\"\n[workload]\n{w}\n"), "test.toml") {
            Err(e) => e.to_string(),
            Ok(_) => err(w),
        };
        assert!(e.contains(want), "{w}\n got: {e}\nwant: {want}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

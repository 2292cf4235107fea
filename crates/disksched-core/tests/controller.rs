//! The optional controller queue between the host queue and the disks:
//! absent, nothing changes; as a pass-through it changes nothing; its
//! thresholds and the host's bound what is outstanding below each; requests
//! are conserved through reconfiguration; runs repeat; bad tunables are
//! one-line errors.
mod common;

use disksched_core::{RunResult, SimConfig, Simulation};

fn run(toml: &str) -> RunResult {
    try_run(toml).unwrap()
}

fn try_run(toml: &str) -> disksched_core::Result<RunResult> {
    Simulation::new(&SimConfig::from_toml(toml, "test.toml")?)?.run(&mut |_, _| true)
}

fn error(toml: &str) -> String {
    let e = try_run(toml).err().expect("rejected").to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

/// Two-level configs exercising what the host queue does without a
/// controller: positional choice, head-of-line blocking over a striped array
/// with split requests, run-time switches, wake-ups (anticipation, rr), sweeps
/// to the edge at threshold 1.
const TWO_LEVEL: [&str; 5] = [
    r#"
    seed = 3
    [disk]
    model = "atlas10k"
    scheduler = "clook"
    [host]
    scheduler = "sptf"
    queue_threshold = 4
    [workload]
    kind = "oltp"
    [run]
    requests = 8000
    records = true
    "#,
    r#"
    seed = 5
    [disk]
    model = "cheetah9lp"
    scheduler = "sptf"
    count = 4
    array = "stripe"
    stripe_kb = 16
    [host]
    scheduler = "clook"
    queue_threshold = 2
    [workload]
    kind = "closed"
    clients = 48
    size_kb = 24
    [run]
    requests = 8000
    records = true
    "#,
    r#"
    seed = 12
    [disk]
    model = "atlas10k"
    [host]
    scheduler = "rr"
    queue_threshold = 1
    [workload]
    kind = "closed"
    clients = 32
    [run]
    requests = 10000
    records = true
    [[reconfigure]]
    at_ms = 20000
    queue = "host"
    scheduler = "sptf"
    [[reconfigure]]
    at_ms = 40000
    queue = "disk"
    scheduler = "clook"
    "#,
    r#"
    seed = 3
    [disk]
    model = "atlas10k"
    scheduler = "scan"
    count = 2
    array = "concat"
    [host]
    scheduler = "cscan"
    queue_threshold = 1
    [workload]
    kind = "closed"
    clients = 16
    [run]
    requests = 6000
    records = true
    "#,
    r#"
    seed = 8
    [disk]
    model = "atlas10k"
    [host]
    scheduler = "anticipatory"
    queue_threshold = 4
    [workload]
    kind = "mix"
    clients = [
      { kind = "sequential", streams = 2, request_kb = 4, think_time_ms = 2 },
      { kind = "closed", clients = 4, think_time_ms = 5 },
    ]
    [run]
    requests = 8000
    records = true
    "#,
];

#[test]
fn without_a_controller_nothing_about_one_is_exported() {
    // (That these runs are unchanged by the controller level was checked
    // against the code before it, commit 92b917f, when it was merged.)
    for toml in TWO_LEVEL {
        let r = run(toml);
        assert!(r.counters.controller_queue.is_none() && r.summary.mean_controller_queue.is_none());
        let json = serde_json::to_string(&r.counters).unwrap() + &serde_json::to_string(&r.summary).unwrap();
        assert!(!json.contains("controller"), "{json}");
        assert!(r.scheduler_counters.iter().all(|c| c.0 != "controller"));
    }
}

/// One Atlas 10K with an SPTF drive queue under sequential readers beside
/// random clients (so anticipation and rr's time slices have work), with
/// the host queue `host` at `threshold` and `controller` a `[controller]`
/// section or nothing.
fn one_disk(host: &str, threshold: u32, controller: &str) -> String {
    format!(r#"
        seed = 21
        [disk]
        model = "atlas10k"
        scheduler = "sptf"
        [host]
        scheduler = "{host}"
        queue_threshold = {threshold}
        {controller}
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "sequential", streams = 2, request_kb = 4, think_time_ms = 2 }},
          {{ kind = "closed", clients = 24, think_time_ms = 5, think_dist = "exponential", size_kb = 8 }},
        ]
        [run]
        requests = 6000
        records = true
    "#)
}

fn controller(sched: &str, threshold: u32) -> String {
    format!("[controller]\nscheduler = \"{sched}\"\nqueue_threshold = {threshold}\n")
}

/// The record columns that say what the disk was given and when.
fn served(r: &RunResult) -> Vec<Vec<u64>> {
    let rec = r.records.as_ref().unwrap();
    let widen = |v: &[u32]| v.iter().map(|&x| x as u64).collect::<Vec<_>>();
    vec![rec.seq.clone(), widen(&rec.client), rec.lbn.clone(), widen(&rec.blocks), widen(&rec.disk),
         rec.is_write.iter().map(|&w| w as u64).collect(), rec.arrival_ns.clone(), rec.issued_ns.clone(), rec.started_ns.clone(),
         rec.done_ns.clone(), rec.seek_ns.clone(), rec.rotation_ns.clone(), rec.transfer_ns.clone()]
}

fn sched_counters(r: &RunResult, level: &str) -> Vec<(&'static str, u64)> {
    r.scheduler_counters.iter().filter(|c| c.0 == level).map(|c| (c.1, c.2)).collect()
}

const HOST_SCHEDULERS: [&str; 6] = ["fcfs", "sptf", "cscan", "anticipatory", "rr", "mq_deadline"];

#[test]
fn a_fcfs_controller_that_never_holds_a_request_back_is_a_pass_through() {
    // With at most `threshold` below the host, a FCFS controller allowed as
    // many or more at the disk sends each request on the instant it comes:
    // the disk gets the same requests at the same times, the host queue
    // behaves exactly as without the controller, and nothing waits in the
    // controller queue.
    for host in HOST_SCHEDULERS {
        for threshold in [1, 4, 16] {
            let without = run(&one_disk(host, threshold, ""));
            for ctl_threshold in [threshold, 64] {
                let with = run(&one_disk(host, threshold, &controller("fcfs", ctl_threshold)));
                let what = format!("{host} at {threshold}, controller at {ctl_threshold}");
                assert!(served(&with) == served(&without), "{what}: the disk's requests and times");
                let rec = with.records.as_ref().unwrap();
                assert_eq!(rec.host_dispatched_ns, rec.issued_ns, "{what}: nothing waits at the controller");
                let (c, c0) = (&with.counters, &without.counters);
                assert_eq!((&c.host_queue, &c.disk_queue), (&c0.host_queue, &c0.disk_queue), "{what}");
                let ctl = c.controller_queue.as_ref().unwrap();
                assert_eq!((ctl.requests, ctl.done, ctl.max_in_flight), (c.pieces, c.pieces, c.host_queue.max_in_flight), "{what}");
                assert_eq!(with.summary.mean_controller_queue, Some(0.0), "{what}");
                let (s, s0) = (&with.summary, &without.summary);
                assert_eq!((s.mean_host_queue, s.max_host_queue, s.mean_disk_queue), (s0.mean_host_queue, s0.max_host_queue, s0.mean_disk_queue));
                assert_eq!(sched_counters(&with, "host"), sched_counters(&without, "host"), "{what}");
                assert_eq!(sched_counters(&with, "disk"), sched_counters(&without, "disk"), "{what}");
            }
        }
    }
}

#[test]
fn behind_a_fcfs_host_that_holds_nothing_the_controller_queue_is_the_old_host_queue() {
    // The other direction: a FCFS host queue that passes everything on at
    // once leaves the controller's scheduler exactly the place the host's
    // had without a controller: same decisions, wake-ups, classes and sweeps.
    for sched in HOST_SCHEDULERS {
        for threshold in [1, 4] {
            let old = run(&one_disk(sched, threshold, ""));
            let new = run(&one_disk("fcfs", 1024, &controller(sched, threshold)));
            let what = format!("{sched} at {threshold}");
            assert!(served(&new) == served(&old), "{what}: the disk's requests and times");
            let rec = new.records.as_ref().unwrap();
            assert_eq!(rec.host_dispatched_ns, rec.arrival_ns, "{what}: the host holds nothing");
            assert_eq!(new.counters.controller_queue.as_ref(), Some(&old.counters.host_queue), "{what}");
            assert_eq!(new.counters.disk_queue, old.counters.disk_queue, "{what}");
            assert_eq!(new.summary.mean_controller_queue, Some(old.summary.mean_host_queue), "{what}");
            assert_eq!(new.summary.max_controller_queue, Some(old.summary.max_host_queue), "{what}");
            assert_eq!(sched_counters(&new, "controller"), sched_counters(&old, "host"), "{what}");
            assert!(sched_counters(&new, "host").is_empty(), "{what}: FCFS keeps no counters");
        }
    }
}

/// The most intervals [start, end) open at any instant, per key; an end
/// and a start at the same instant do not overlap (the completion frees the slot).
fn max_open(intervals: impl Iterator<Item = (u32, u64, u64)>) -> std::collections::BTreeMap<u32, i64> {
    let mut events: Vec<(u32, u64, i64)> = intervals.flat_map(|(k, s, e)| [(k, s, 1), (k, e, -1)]).collect();
    events.sort();
    let mut open = std::collections::BTreeMap::new();
    let mut max = std::collections::BTreeMap::new();
    for (k, _, step) in events {
        let n = open.entry(k).or_insert(0i64);
        *n += step;
        let m = max.entry(k).or_insert(0i64);
        *m = (*m).max(*n);
    }
    max
}

#[test]
fn the_host_threshold_bounds_the_controller_and_the_controller_thresholds_bound_the_disks() {
    // 4 KB requests on a 16 KB stripe never split, so each record is one
    // piece with its own times: at the controller or below from
    // host_dispatched_ns to done_ns, at its disk from issued_ns.
    for (disks, host_t, ctl_t, per_disk) in [(1u32, 12u32, 3u32, 3u32), (4, 24, 8, 3)] {
        let r = run(&format!(r#"
            seed = 4
            [disk]
            model = "cheetah9lp"
            scheduler = "sptf"
            count = {disks}
            array = "stripe"
            stripe_kb = 16
            [host]
            scheduler = "fcfs"
            queue_threshold = {host_t}
            [controller]
            scheduler = "sptf"
            queue_threshold = {ctl_t}
            per_disk_threshold = {per_disk}
            [workload]
            kind = "closed"
            clients = 64
            size_kb = 4
            [run]
            requests = 20000
            records = true
        "#));
        let c = &r.counters;
        assert_eq!(c.pieces, c.arrived, "no request split");
        let rec = r.records.unwrap();
        let n = rec.len();
        let below_host = max_open((0..n).map(|i| (0, rec.host_dispatched_ns[i], rec.done_ns[i])));
        let at_disks = max_open((0..n).map(|i| (0, rec.issued_ns[i], rec.done_ns[i])));
        let per = max_open((0..n).map(|i| (rec.disk[i], rec.issued_ns[i], rec.done_ns[i])));
        // Bounded at every instant, and 64 clients keep every bound reached.
        assert_eq!(below_host[&0], host_t as i64);
        assert_eq!(at_disks[&0], ctl_t as i64);
        assert_eq!(per.len(), disks as usize);
        assert!(per.values().all(|&m| m == per_disk as i64), "{per:?}");
        // The queues' own counters say the same.
        assert_eq!(c.host_queue.max_in_flight, host_t as u64);
        assert_eq!(c.controller_queue.as_ref().unwrap().max_in_flight, ctl_t as u64);
        assert_eq!(c.disk_queue.max_in_flight, disks as u64, "one command in each mechanism");
        // What cannot go below waits in the controller queue (head of line included).
        assert!(r.summary.max_controller_queue.unwrap() as u32 >= host_t - ctl_t);
        assert!(r.summary.mean_controller_queue.unwrap() > 0.0);
    }
}

#[test]
fn the_host_threshold_bounds_what_the_controller_can_choose_from() {
    // An SPTF controller over an FCFS host: at host threshold 1 it has one
    // request to choose from (FCFS exactly); the more the host lets through,
    // the better its choices.
    let fcfs = run(&one_disk("fcfs", 1, ""));
    let mean = |host_t| {
        let r = run(&one_disk("fcfs", host_t, &controller("sptf", 1)));
        if host_t == 1 {
            assert!(served(&r) == served(&fcfs));
        }
        r.summary.host_response_ms.mean
    };
    let (one, four, all) = (mean(1), mean(4), mean(64));
    assert!(all < 0.9 * four && four < 0.9 * one, "host threshold 1: {one} ms, 4: {four} ms, 64: {all} ms");
}

#[test]
fn every_request_is_conserved_through_splits_bypass_and_controller_switches() {
    // 64 KB requests on a 16 KB stripe over four disks (most split four
    // ways); rr at the host (16 in flight); the controller switched twice
    // with a backlog, or letting everything bypass it.
    let base = |ctl: &str, reconfigure: &str| format!(r#"
        seed = 9
        [disk]
        model = "cheetah9lp"
        scheduler = "sptf"
        count = 4
        array = "stripe"
        stripe_kb = 16
        [host]
        scheduler = "rr"
        set = {{ queue_depth = 16 }}
        queue_threshold = 32
        {ctl}
        [workload]
        kind = "closed"
        clients = 48
        size_kb = 64
        [run]
        requests = 8000
        records = true
        {reconfigure}
    "#);
    let switches = r#"
        [[reconfigure]]
        at_ms = 20000
        queue = "controller"
        scheduler = "sptf"
        [[reconfigure]]
        at_ms = 40000
        queue = "controller"
        scheduler = "clook"
        [[reconfigure]]
        at_ms = 50000
        queue = "host"
        scheduler = "fcfs"
    "#;
    let cases = [
        base("[controller]\nscheduler = \"mq_deadline\"\nqueue_threshold = 4\nper_disk_threshold = 2", switches),
        base("[controller]\nscheduler = \"rr\"\nset = { bypass = 1 }\nqueue_threshold = 4", ""),
    ];
    for (i, toml) in cases.iter().enumerate() {
        let r = run(toml);
        let c = &r.counters;
        assert_eq!((c.arrived, c.completed), (8000, 8000));
        assert!(c.pieces > 3 * 8000, "{} pieces", c.pieces);
        assert_eq!((c.host_dispatched, c.drive_dispatched), (c.pieces, c.pieces));
        for q in [&c.host_queue, c.controller_queue.as_ref().unwrap(), &c.disk_queue] {
            assert_eq!((q.requests, q.done, q.in_flight, q.in_flight_bytes, q.in_flight_writes), (c.pieces, c.pieces, 0, 0, 0), "{q:?}");
        }
        let mut seqs = r.records.unwrap().seq;
        seqs.sort_unstable();
        assert_eq!(seqs, (0..8000).collect::<Vec<u64>>(), "each request exactly once");
        let ctl = c.controller_queue.as_ref().unwrap();
        if i == 0 {
            // The switches found requests waiting (the run lasts past them) and the threshold held.
            assert!(r.summary.sim_time_ms > 50_000.0 && r.summary.mean_controller_queue.unwrap() > 1.0);
            assert_eq!(ctl.max_in_flight, 4);
        } else {
            // Bypassing requests skip the controller queue and its threshold.
            assert_eq!(r.summary.max_controller_queue, Some(0));
            assert!(ctl.max_in_flight > 4, "{}", ctl.max_in_flight);
        }
    }
}

#[test]
fn switching_the_controllers_scheduler_takes_effect() {
    // Everything waits at a FCFS controller that keeps one request at the
    // disk; switched to SPTF at 60 s, it chooses among ~25 and response falls.
    let toml = one_disk("fcfs", 1024, &controller("fcfs", 1)).replace("requests = 6000", "requests = 20000")
        + "[[reconfigure]]\nat_ms = 60000\nqueue = \"controller\"\nscheduler = \"sptf\"\n";
    let r = run(&toml);
    let rec = r.records.unwrap();
    let mut seqs = rec.seq.clone();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..20_000).collect::<Vec<u64>>());
    let mean = |after: bool| {
        let v: Vec<f64> = (0..rec.len()).filter(|&i| (rec.issued_ns[i] >= 61_000_000_000) == after && rec.issued_ns[i] > 1_000_000_000)
            .map(|i| (rec.done_ns[i] - rec.arrival_ns[i]) as f64).collect();
        assert!(v.len() > 1000);
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(true) < 0.8 * mean(false), "after {} before {}", mean(true), mean(false));
}

#[test]
fn same_seed_same_results_with_a_controller() {
    let toml = |seed: u64| format!(r#"
        seed = {seed}
        [disk]
        model = "cheetah9lp"
        scheduler = "sptf"
        count = 3
        array = "stripe"
        stripe_kb = 32
        [host]
        scheduler = "anticipatory"
        queue_threshold = 16
        [controller]
        scheduler = "rr"
        queue_threshold = 6
        per_disk_threshold = 3
        [workload]
        kind = "oltp"
        [run]
        requests = 5000
        records = true
    "#);
    let (a, b, c) = (run(&toml(2)), run(&toml(2)), run(&toml(3)));
    assert!(served(&a) == served(&b));
    assert_eq!(a.records.as_ref().unwrap().host_dispatched_ns, b.records.as_ref().unwrap().host_dispatched_ns);
    assert_eq!((&a.counters, &a.scheduler_counters), (&b.counters, &b.scheduler_counters));
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
    assert_ne!(a.records.unwrap().lbn, c.records.unwrap().lbn, "another seed, another workload");
}

#[test]
fn bad_controller_settings_are_one_line_errors() {
    let with = |section: &str| one_disk("fcfs", 4, &format!("[controller]\n{section}"));
    let cases = [
        ("scheduler = \"rr\"\nset = { wait_ms = 99 }", "controller.set.wait_ms: 99 ms is out of range [0, 30]"),
        ("scheduler = \"sptf_sw\"\nset = { window_pct = -1 }", "controller.set.window_pct: -1 % is out of range [0, 1000]"),
        ("scheduler = \"fcfs\"\nset = { wait_ms = 1 }", "controller.set.wait_ms: unknown tunable (expected one of: none)"),
        ("scheduler = \"warp\"", "controller.scheduler: unknown scheduler 'warp'"),
        ("queue_threshold = 0", "controller.queue_threshold: 0 is out of range [1, 1024]"),
        ("queue_threshold = 2000", "controller.queue_threshold: 2000 is out of range [1, 1024]"),
        ("queue_threshold = 4\nper_disk_threshold = 0", "controller.per_disk_threshold: 0 is out of range [1, 1024]"),
        ("queue_threshold = 4\nper_disk_threshold = 8", "controller.per_disk_threshold: 8 exceeds controller.queue_threshold (4)"),
        ("queue = 3", "unknown field `queue`"),
    ];
    for (section, want) in cases {
        let e = error(&with(section));
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
    // A reconfiguration of the controller is checked like any other.
    let e = error(&(with("scheduler = \"fcfs\"") + "[[reconfigure]]\nat_ms = 5\nqueue = \"controller\"\nscheduler = \"rr\"\nset = { quantum_ms = 0 }\n"));
    assert_eq!(e, "reconfigure[0].set.quantum_ms: 0 ms is out of range [1, 500]");
    let e = error(&(with("scheduler = \"fcfs\"") + "[[reconfigure]]\nat_ms = 5\nqueue = \"drive\"\nscheduler = \"rr\"\n"));
    assert_eq!(e, "reconfigure[0].queue: 'drive' (expected host, controller or disk)");
}

#[test]
fn the_drives_queue_depth_limits_the_controllers_per_disk_threshold_not_the_host_threshold() {
    let spec = disksched_core::disk::builtin::resolve("atlas10k", None).unwrap().to_toml();
    let path = std::env::temp_dir().join(format!("disksched-ctl-depth-{}.toml", std::process::id()));
    std::fs::write(&path, spec.replace("queue_depth = 1024", "queue_depth = 8")).unwrap();
    let toml = |ctl: &str| one_disk("fcfs", 64, ctl).replace("\"atlas10k\"", &format!("{:?}", path.display().to_string()));
    assert_eq!(error(&toml("[controller]\nqueue_threshold = 16")), "controller.queue_threshold: 16 exceeds the drive's command queue depth of 8");
    assert_eq!(error(&toml("[controller]\nqueue_threshold = 16\nper_disk_threshold = 9")),
               "controller.per_disk_threshold: 9 exceeds the drive's command queue depth of 8");
    assert_eq!(error(&toml("")), "host.queue_threshold: 64 exceeds the drive's command queue depth of 8");
    let r = run(&toml("[controller]\nqueue_threshold = 16\nper_disk_threshold = 8"));
    assert_eq!(r.counters.host_queue.max_in_flight, 26, "every client's request below the host (64 allowed)");
    std::fs::remove_file(&path).ok();
}

#[test]
fn freeblock_in_firmware_works_behind_a_controller_and_external_mode_is_refused() {
    let toml = |mode: &str| format!(r#"
        seed = 2
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "fcfs"
        queue_threshold = 2
        [controller]
        scheduler = "sptf"
        queue_threshold = 2
        [workload]
        kind = "oltp"
        [run]
        requests = 3000
        [freeblock]
        mode = "{mode}"
        idle = false
    "#);
    let r = run(&toml("firmware"));
    assert!(r.freeblock.unwrap().free_blocks > 0);
    assert_eq!(error(&toml("external")), "freeblock.mode: external mode keeps the host's commands at the drive: it needs no [controller]");
}

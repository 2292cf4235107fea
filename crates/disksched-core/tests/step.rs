//! Driving a run from outside (`Simulation::submit` / `run_until`): the
//! requests of a workload run, submitted one by one at their recorded
//! arrival times, are served exactly as the workload run served them.
mod common;

use disksched_core::time::SimTime;
use disksched_core::workload::IoSpec;
use disksched_core::{SimConfig, Simulation};

const CONFIG: &str = r#"
    seed = 5
    [disk]
    model = "atlas10k"
    scheduler = "sptf"
    count = 2
    array = "stripe"
    stripe_kb = 16
    [host]
    scheduler = "clook"
    queue_threshold = 4
    [workload]
    kind = "open"
    interarrival_ms = 3.3
    size_kb = 8
    [run]
    requests = 400
    records = true
"#;

#[test]
fn submitted_requests_are_served_as_the_workload_run_serves_them() {
    let cfg = SimConfig::from_toml(CONFIG, "step.toml").unwrap();
    let batch = Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap();
    let rec = batch.records.expect("records");
    assert_eq!(rec.seq.len(), 400);
    // Submit the same requests from outside, each at its arrival time, into a run whose own workload never starts.
    let mut sim = Simulation::with_model(&cfg, common::atlas()).unwrap();
    let mut order: Vec<usize> = (0..rec.seq.len()).collect();
    order.sort_by_key(|&i| (rec.arrival_ns[i], rec.seq[i]));
    let mut done = Vec::new();
    for &i in &order {
        done.extend(sim.run_until(SimTime(rec.arrival_ns[i])).unwrap());
        assert_eq!(sim.now(), SimTime(rec.arrival_ns[i]));
        let io = IoSpec { lbn: rec.lbn[i], blocks: rec.blocks[i], is_write: rec.is_write[i], class: Default::default(),
                          deadline: None, range: None, flow: Some(0) };
        sim.submit(io).unwrap();
    }
    // Nothing completes in the instant of the last arrival; everything by a second later.
    let last = SimTime(rec.arrival_ns[*order.last().unwrap()]);
    let tail = sim.run_until(last).unwrap();
    done.extend(tail);
    let before_end = done.len();
    done.extend(sim.run_until(SimTime(last.0 + 1_000_000_000)).unwrap());
    assert!(before_end < done.len(), "requests still in service at the last arrival");
    assert_eq!(done.len(), 400, "every submitted request completed once");
    done.sort_by_key(|r| r.seq);
    for (k, &i) in order.iter().enumerate() {
        let r = &done[k];
        assert_eq!((r.lbn, r.blocks, r.arrival.0), (rec.lbn[i], rec.blocks[i], rec.arrival_ns[i]), "request {k}");
        assert_eq!((r.disk, r.issued.0, r.started.0, r.service.done.0), (rec.disk[i], rec.issued_ns[i], rec.started_ns[i], rec.done_ns[i]),
                   "request {k} is served as in the workload run");
        assert!(r.service.done > r.arrival);
    }
    // The accounting holds for a run driven from outside too.
    let result = sim.into_result().unwrap();
    assert_eq!((result.counters.arrived, result.counters.completed), (400, 400));
}

#[test]
fn the_published_time_follows_every_step_and_run_until() {
    let cfg = SimConfig::from_toml(CONFIG, "step.toml").unwrap();
    let mut sim = Simulation::with_model(&cfg, common::atlas()).unwrap();
    let clock = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
    sim.publish_time(clock.clone());
    let published = || SimTime(clock.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(published(), SimTime::ZERO);
    sim.start();
    for _ in 0..50 {
        let t = sim.step().unwrap().expect("an event");
        assert_eq!(published(), t);
    }
    sim.run_until(SimTime(sim.now().0 + 123_456)).unwrap();
    assert_eq!(published(), sim.now());
}

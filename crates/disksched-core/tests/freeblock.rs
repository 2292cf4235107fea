//! Freeblock scheduling in firmware mode.
mod common;

use disksched_core::background::{TaskConfig, TaskState, Tasks};
use disksched_core::time::SimTime;
use disksched_core::{RunResult, SimConfig, Simulation};
use std::sync::{Arc, Mutex};

fn config(sched: &str, freeblock: &str, requests: u64) -> SimConfig {
    common::config(&format!(r#"
        seed = 17
        [disk]
        model = "atlas10k"
        scheduler = "{sched}"
        [host]
        queue_threshold = 16
        [workload]
        kind = "oltp"
        [run]
        requests = {requests}
        records = true
        {freeblock}
    "#))
}

fn run(cfg: &SimConfig) -> RunResult {
    Simulation::with_model(cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

#[test]
fn background_work_never_delays_a_foreground_request_in_firmware() {
    for sched in ["sptf", "sstf", "clook", "sptf_sw"] {
        let plain = run(&config(sched, "", 20_000));
        let fb = run(&config(sched, "[freeblock]\nidle = false", 20_000));
        let (a, b) = (plain.records.unwrap(), fb.records.unwrap());
        assert_eq!(a.done_ns, b.done_ns, "{sched}: every foreground completion at the same nanosecond");
        assert_eq!(a.seq, b.seq);
        let f = fb.freeblock.unwrap();
        assert!(f.free_blocks > 100_000, "{sched}: {} free blocks", f.free_blocks);
        assert_eq!(f.idle_blocks, 0);
    }
}

#[test]
fn seek_reducing_schedulers_leave_more_free_bandwidth_than_sptf() {
    // SSTF leaves the rotational latency that SPTF removes (Lumb et al. 2002):
    // more free bandwidth, paid for in foreground response time.
    let free = |s| run(&config(s, "[freeblock]\nidle = false", 20_000));
    let (sptf, sstf) = (free("sptf"), free("sstf"));
    assert!(sstf.freeblock.unwrap().free_blocks > sptf.freeblock.unwrap().free_blocks);
    assert!(sstf.summary.host_response_ms.mean > sptf.summary.host_response_ms.mean);
}

#[test]
fn a_scan_reads_every_block_exactly_once_and_completes() {
    let blocks = 400_000u64;
    // A light foreground (3 clients) leaves idle time for the scan to finish.
    let text = format!(r#"
        seed = 5
        [disk]
        model = "atlas10k"
        scheduler = "sptf"
        [host]
        queue_threshold = 16
        [workload]
        kind = "closed"
        clients = 3
        think_time_ms = 30
        [run]
        requests = 20000
        [freeblock]
        idle = true
        [[freeblock.tasks]]
        name = "scan"
        blocks = [1000000, {}]
    "#, 1_000_000 + blocks);
    let cfg = common::config(&text);
    let mut sim = Simulation::with_model(&cfg, common::atlas()).unwrap();
    let runs = Arc::new(Mutex::new(Vec::new()));
    let sink = runs.clone();
    sim.on_background_transfer(Box::new(move |task, lo, hi, t| sink.lock().unwrap().push((task, lo, hi, t))));
    let r = sim.run(&mut |_, _| true).unwrap();
    let f = r.freeblock.unwrap();
    let task = &f.tasks[0];
    assert_eq!(task.state, TaskState::Done);
    assert_eq!(task.blocks_done, blocks);
    assert!(task.completed_ms.is_some());
    // The callback saw every block of the range exactly once.
    let mut seen = vec![0u8; blocks as usize];
    for &(t, lo, hi, _) in runs.lock().unwrap().iter() {
        assert_eq!(t, 0);
        for b in lo..hi {
            seen[(b - 1_000_000) as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n == 1));
    assert_eq!(f.free_blocks + f.idle_blocks, blocks);
}

#[test]
fn pause_resume_and_abort_never_double_count() {
    let cfgs = vec![
        TaskConfig { name: "a".into(), blocks: Some((0, 1000)), priority: 0, write: false },
        TaskConfig { name: "b".into(), blocks: Some((1000, 3000)), priority: 1, write: false },
    ];
    let mut t = Tasks::new(10_000, &cfgs).unwrap();
    assert_eq!(t.wanted.count(), 3000);
    assert_eq!(t.transferred(0, 500, SimTime(1)), 500);
    t.pause(0);
    assert_eq!(t.transferred(400, 1200, SimTime(2)), 200, "only b's blocks while a is paused");
    t.resume(0);
    assert_eq!(t.transferred(0, 1000, SimTime(3)), 500, "a's first 500 were already done");
    assert_eq!(t.status()[0].state, TaskState::Done);
    assert_eq!(t.status()[0].blocks_done, 1000);
    t.abort(1);
    assert_eq!(t.transferred(0, 3000, SimTime(4)), 0);
    assert_eq!(t.status()[1].state, TaskState::Aborted);
    assert_eq!(t.status()[1].blocks_done, 200);
    assert_eq!(t.wanted.count(), 0);
    assert!(Tasks::new(10_000, &[cfgs[0].clone(), TaskConfig { blocks: Some((500, 600)), ..cfgs[1].clone() }]).is_err());
}

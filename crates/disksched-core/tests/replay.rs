//! Trace replay: open loop with time scaling, closed loop, DiskSim's
//! validation replay, address mapping and errors.
mod common;

use disksched_core::{RunResult, SimConfig, Simulation};
use std::io::Write;

const SHARED_VALIDATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/disksim/atlas10k.trace");

fn run(workload: &str, extra: &str) -> disksched_core::Result<RunResult> {
    let cfg: SimConfig = common::config(&format!(r#"
        [disk]
        model = "atlas10k"
        {extra}
        [workload]
        kind = "trace"
        {workload}
        [run]
        records = true
    "#));
    Simulation::with_model(&cfg, common::atlas())?.run(&mut |_, _| true)
}

/// The trace's own columns, parsed here independently of the readers.
fn validate_columns() -> Vec<(u64, u32, bool, f64)> {
    std::fs::read_to_string(SHARED_VALIDATE).unwrap().lines().map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[2].parse().unwrap(), f[3].parse().unwrap(), f[0] == "W", f[5].parse::<f64>().unwrap())
    }).collect()
}

#[test]
fn validate_mode_issues_each_request_its_recorded_delay_after_the_last_completed() {
    let r = run(&format!("path = \"{SHARED_VALIDATE}\"\nmode = \"validate\""), "").unwrap();
    let rec = r.records.unwrap();
    let cols = validate_columns();
    assert_eq!(rec.len(), 10_000);
    for i in 0..rec.len() {
        assert_eq!((rec.lbn[i], rec.blocks[i], rec.is_write[i]), (cols[i].0, cols[i].1, cols[i].2));
        if i > 0 {
            let think_ns = (cols[i - 1].3 * 1000.0).round() as u64;
            assert_eq!(rec.arrival_ns[i], rec.done_ns[i - 1] + think_ns, "request {i}");
        }
    }
    assert_eq!(r.summary.max_disk_queue, 1);
}

/// A trace file in the temp directory, removed when dropped.
struct TempTrace(std::path::PathBuf);

impl Drop for TempTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn ascii_trace(lines: &[&str]) -> TempTrace {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = std::env::temp_dir().join(format!("disksched-replay-{}-{}.trace", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let mut f = std::fs::File::create(&p).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    TempTrace(p)
}

#[test]
fn open_mode_follows_timestamps_scaled_by_speed() {
    // DiskSim ascii: time_ms devno blkno bcount flags (bit 0 = read).
    let t = ascii_trace(&["100.0 0 1000 8 1", "110.5 0 5000 8 0", "180.0 1 9000 16 1", "400.25 0 20 8 1"]);
    let r = run(&format!("path = \"{}\"\nformat = \"disksim-ascii\"\nspeed = 2", t.0.display()), "").unwrap();
    let rec = r.records.unwrap();
    assert_eq!(rec.arrival_ns, vec![0, 5_250_000, 40_000_000, 150_125_000]);
    assert_eq!(rec.is_write, vec![false, true, false, false]);
    // One device only.
    let r = run(&format!("path = \"{}\"\ndevice = 1", t.0.display()), "").unwrap();
    assert_eq!(r.records.unwrap().lbn, vec![9000]);
}

#[test]
fn closed_mode_keeps_n_outstanding() {
    let lines: Vec<String> = (0..400).map(|i| format!("{}.0 0 {} 8 1", i * 1000, (i * 7919) % 17_000_000)).collect();
    let t = ascii_trace(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    let r = run(&format!("path = \"{}\"\nmode = \"closed\"\noutstanding = 4", t.0.display()), "[host]\nqueue_threshold = 16").unwrap();
    assert_eq!(r.counters.completed, 400);
    assert_eq!(r.summary.max_disk_queue, 4);
    // Timestamps 1 s apart are ignored: the run takes far less than 400 s.
    assert!(r.summary.sim_time_ms < 400.0 * 20.0);
}

#[test]
fn addresses_beyond_the_disk_are_an_error_unless_mapped() {
    let t = ascii_trace(&["0.0 0 100 8 1", "1.0 0 40000000 8 1"]);
    let e = run(&format!("path = \"{}\"", t.0.display()), "").err().unwrap().to_string();
    assert!(e.contains(":2:") && e.contains("beyond the simulated disk's 17966953 blocks"), "{e}");
    let r = run(&format!("path = \"{}\"\nmap = \"modulo\"", t.0.display()), "").unwrap();
    assert_eq!(r.records.unwrap().lbn, vec![100, 40_000_000 % (17_966_953 - 8 + 1)]);
    let r = run(&format!("path = \"{}\"\nmap = \"scale\"\nsource_blocks = 80000000", t.0.display()), "").unwrap();
    assert_eq!(r.records.unwrap().lbn[1], (40_000_000u128 * (17_966_953 - 8 + 1) / 80_000_000) as u64);
}

#[test]
fn a_malformed_line_stops_the_run_with_file_and_line_unless_skipped() {
    let t = ascii_trace(&["0.0 0 100 8 1", "1.0 0 banana 8 1", "2.0 0 300 8 1"]);
    let e = run(&format!("path = \"{}\"\nformat = \"disksim-ascii\"", t.0.display()), "").err().unwrap().to_string();
    assert!(e.contains(&format!("{}:2:", t.0.display())) && e.contains("banana"), "{e}");
    let r = run(&format!("path = \"{}\"\nformat = \"disksim-ascii\"\nskip_bad_lines = true", t.0.display()), "").unwrap();
    assert_eq!(r.records.unwrap().lbn, vec![100, 300]);
}

#[test]
fn a_classifier_gives_trace_requests_a_class_and_a_flow() {
    let trace = std::env::temp_dir().join(format!("disksched-classify-{}.txt", std::process::id()));
    // DiskSim ascii: time_ms devno blkno bcount flags (1 = read); devices 1 and 2, small and large.
    let lines: String = (0..300).map(|i| format!("{}.0 {} {} {} {}\n", i * 5, 1 + i % 2, i * 997, if i % 3 == 0 { 1024 } else { 8 }, i % 2)).collect();
    std::fs::write(&trace, lines).unwrap();
    let toml = format!(r#"
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "rr"
        [workload]
        kind = "trace"
        path = "{}"
        format = "disksim-ascii"
        flow_by = "device"
        classes = [ {{ device = 2, class = "real-time" }}, {{ min_kb = 256, class = "background" }} ]
    "#, trace.display());
    let cfg: disksched_core::SimConfig = toml::from_str(&toml.replace("[workload]", "[run]\nrecords = true\n[workload]")).unwrap();
    let r = disksched_core::Simulation::new(&cfg).unwrap().run(&mut |_, _| true).unwrap();
    // rr keeps one queue per flow: the two devices.
    assert_eq!(r.scheduler_counters.iter().find(|c| c.1 == "classes_created").unwrap().2, 2);
    let rec = r.records.unwrap();
    assert_eq!(rec.len(), 300);
    for i in 0..rec.len() {
        let k = rec.seq[i];
        // First match wins: device 2 (odd lines) is real-time, else 512 KB requests are background.
        let want = if k % 2 == 1 { 1 } else if k % 3 == 0 { 2 } else { 0 };
        assert_eq!(rec.class[i], want, "line {k}");
    }
    std::fs::remove_file(&trace).ok();
}

#[test]
fn skip_requests_starts_the_replay_that_far_into_the_selected_device() {
    let t = ascii_trace(&["100.0 0 1000 8 1", "110.5 1 5000 8 0", "180.0 0 9000 16 1", "400.25 0 20 8 1"]);
    let r = run(&format!("path = \"{}\"\nformat = \"disksim-ascii\"\nskip_requests = 1", t.0.display()), "").unwrap();
    let rec = r.records.unwrap();
    assert_eq!(rec.lbn, vec![5000, 9000, 20]);
    assert_eq!(rec.arrival_ns[0], 0, "times run from the first request replayed");
    let r = run(&format!("path = \"{}\"\ndevice = 0\nskip_requests = 1", t.0.display()), "").unwrap();
    assert_eq!(r.records.unwrap().lbn, vec![9000, 20]);
    let e = run(&format!("path = \"{}\"\nskip_requests = 4", t.0.display()), "").err().expect("skipping every request is an error").to_string();
    assert!(e.contains("workload.skip_requests"), "{e}");
}

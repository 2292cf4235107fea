//! Inputs a fuzzer or a careless edit produces: each must end in an error that
//! names the place, never a crash, a wrapped number or a lost request.
mod common;

use disksched_core::disk::disksim::parse_str;
use disksched_core::trace::{TraceFormat, TraceRecord, TraceWriter};
use disksched_core::{Simulation, SimConfig};
use std::path::{Path, PathBuf};

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("disksched-hostile-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn deeply_nested_disksim_values_are_refused_not_recursed_into() {
    // 9,000 nested `[` overflowed the stack before there was a bound.
    let text = format!("disksim_global Global {{ X = {}1{} }}", "[".repeat(9000), "]".repeat(9000));
    let e = parse_str(&text, Path::new("deep.parv")).unwrap_err().to_string();
    assert!(e.contains("deep.parv") && e.contains("nested more than"), "{e}");
    // Nested blocks and topology nodes take the same bound.
    let blocks = format!("disksim_global Global {{ {} }}", "X = b {".repeat(5000));
    let e = parse_str(&blocks, Path::new("blocks.parv")).unwrap_err().to_string();
    assert!(e.contains("nested more than"), "{e}");
    let topo = format!("topology {} ", "t n [ ".repeat(5000));
    let e = parse_str(&topo, Path::new("topo.parv")).unwrap_err().to_string();
    assert!(e.contains("nested more than"), "{e}");
    // Ordinary nesting (DiskSim's files go 4 deep) still parses.
    parse_str("disksim_global Global { X = [ [ [ 1 ] ] ] }", Path::new("ok.parv")).unwrap();
}

#[test]
fn invalid_utf8_in_a_disksim_file_is_placed_by_line_and_column() {
    let p = scratch("bad-utf8.parv", b"disksim_global Global {\n  Init Seed = 42,\n  X = \xff\xfe\n}\n");
    let e = disksched_core::disk::disksim::parse_file(&p).unwrap_err().to_string();
    let _ = std::fs::remove_file(&p);
    assert!(e.contains("bad-utf8.parv") && e.contains("line 3, column 7"), "{e}");
}

#[test]
fn trace_info_with_more_devices_than_the_extent_budget_finishes() {
    // 262,145 devices: every extent is on its own device, so coarsening the
    // region size can never merge them; it used to double until it wrapped to 0.
    let text: String = (0..262_145u32).map(|d| format!("{}.0 {d} 0 8 1\n", d)).collect();
    let p = scratch("many-devices.trace", text.as_bytes());
    let i = disksched_core::trace::info::info(&p, Some(TraceFormat::DisksimAscii), false).unwrap();
    let _ = std::fs::remove_file(&p);
    assert_eq!(i.requests, 262_145);
    assert!(!i.footprint_exact);
    assert!(i.footprint_blocks >= 262_145 * 8, "{}", i.footprint_blocks);
}

#[test]
fn a_replayed_block_near_2_pow_64_is_an_error_not_a_lost_request() {
    let p = scratch("huge-lbn.trace", b"0.0 0 100 8 1\n1.0 0 18446744073709551610 8 1\n");
    for map in ["none", "offset"] {
        let cfg: SimConfig = common::config(&format!(
            "[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"trace\"\npath = \"{}\"\nmap = \"{map}\"\n",
            p.display()
        ));
        let e = Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true)).err().expect("an error").to_string();
        assert!(e.contains("huge-lbn.trace:2:") && e.contains("18446744073709551610") && !e.contains("conservation"), "{map}: {e}");
    }
    let _ = std::fs::remove_file(&p);
}

fn record(lbn: u64, time_ns: u64) -> TraceRecord {
    TraceRecord { time_ns, device: 0, lbn, blocks: 8, is_write: false, response_ns: None, think_ns: None }
}

#[test]
fn byte_offset_formats_refuse_blocks_past_2_pow_64_bytes() {
    // 2^55 blocks = 2^64 bytes: the offset used to wrap to 0.
    for to in [TraceFormat::Msr, TraceFormat::Fio, TraceFormat::Alibaba] {
        let mut w = TraceWriter::new(to, Vec::new()).unwrap();
        w.write(&record(1000, 0)).unwrap();
        let e = w.write(&record(1 << 55, 1)).unwrap_err().to_string();
        assert!(e.contains("record 2") && e.contains(&(1u64 << 55).to_string()), "{to}: {e}");
    }
    // Block-addressed formats hold it.
    TraceWriter::new(TraceFormat::DisksimAscii, Vec::new()).unwrap().write(&record(1 << 55, 0)).unwrap();
}

#[test]
fn msr_output_refuses_a_time_before_the_first_record() {
    let mut w = TraceWriter::new(TraceFormat::Msr, Vec::new()).unwrap();
    w.write(&record(0, 5_000)).unwrap();
    w.write(&record(0, 9_000)).unwrap();
    let e = w.write(&record(0, 4_000)).unwrap_err().to_string();
    assert!(e.contains("record 3") && e.contains("4000 ns"), "{e}");
}

#[test]
fn a_series_window_far_smaller_than_the_run_is_an_error_not_gigabytes() {
    // Ten requests 1e4 s apart in 1 ms windows: 10^8 dense rows.
    let cfg: SimConfig = common::config(
        "[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"open\"\ninterarrival_ms = 1e7\narrivals = \"constant\"\n\
         [run]\nrequests = 10\nseries_window_ms = 1\n",
    );
    let e = Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true)).err().expect("an error").to_string();
    assert!(e.starts_with("run.series_window_ms") && e.contains("4000000"), "{e}");
    // The same run in 1000 s windows keeps its series.
    let cfg: SimConfig = common::config(
        "[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"open\"\ninterarrival_ms = 1e7\narrivals = \"constant\"\n\
         [run]\nrequests = 10\nseries_window_ms = 1e6\n",
    );
    let r = Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).ok().unwrap();
    assert_eq!(r.series.unwrap().requests.iter().sum::<u64>(), 10);
}

fn run_err(workload: &str) -> String {
    let cfg: SimConfig = common::config(&format!("[disk]\nmodel = \"atlas10k\"\n[workload]\n{workload}\n[run]\nrequests = 100\n"));
    Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true)).err().expect("an error").to_string()
}

#[test]
fn workload_values_that_would_hang_or_panic_are_refused() {
    // Used to spin forever drawing empty on periods, or overflow the clock.
    let e = run_err("kind = \"onoff\"\non_rate_per_s = 100\nmean_on_ms = 1e-9\nmean_off_ms = 10");
    assert!(e.starts_with("workload.mean_on_ms") && e.contains("1e-9"), "{e}");
    let e = run_err("kind = \"onoff\"\non_rate_per_s = 100\nmean_on_ms = 10\nmean_off_ms = 1e308");
    assert!(e.starts_with("workload.mean_off_ms") && e.contains("1e308"), "{e}");
    let e = run_err("kind = \"onoff\"\non_rate_per_s = 1e-5\nmean_on_ms = 1\nmean_off_ms = 10");
    assert!(e.starts_with("workload.mean_on_ms") && e.contains("at least 1e-6"), "{e}");
    // Used to panic on an infinite normal deviation.
    let e = run_err("kind = \"local\"\nmean_distance_kb = 1e308\ndistance_dist = \"normal\"");
    assert!(e.starts_with("workload.mean_distance_kb") && e.contains("1e308"), "{e}");
}

#[test]
fn silent_wrong_results_are_errors() {
    // `oltp` is fixed: fields it would ignore are refused, not dropped.
    let e = SimConfig::from_toml("[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"oltp\"\nclients = 50\n", "t.toml")
        .err().expect("an error").to_string();
    assert!(e.contains("unknown field `clients`"), "{e}");
    // Every request warm-up: no figures, so no run.
    let e = SimConfig::from_toml("[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"oltp\"\n[run]\nrequests = 100\nwarmup_requests = 100\n", "t.toml")
        .and_then(|c| c.validate()).err().expect("an error").to_string();
    assert!(e.starts_with("run.warmup_requests") && e.contains("100"), "{e}");
    // ... also where the count is known only at the end (a whole trace).
    let p = scratch("short.trace", b"0.0 0 100 8 1\n1.0 0 200 8 1\n");
    let cfg: SimConfig = common::config(&format!(
        "[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"trace\"\npath = \"{}\"\n[run]\nwarmup_requests = 5\n", p.display()));
    let e = Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true)).err().expect("an error").to_string();
    let _ = std::fs::remove_file(&p);
    assert!(e.starts_with("run.warmup_requests") && e.contains("2 requests"), "{e}");
}

#[test]
fn a_shaper_rate_of_1e_minus_6_is_refused_before_any_series_is_allocated() {
    // 10 requests at 1e-6 requests/s in 1 ms windows allocated 2.4 GB of series rows.
    let cfg: SimConfig = common::config(
        "[disk]\nmodel = \"atlas10k\"\n[host.shaper]\nbest-effort = { rate_per_s = 1e-6 }\n[workload]\nkind = \"oltp\"\n\
         [run]\nrequests = 10\nseries_window_ms = 1\n",
    );
    let e = Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true)).err().expect("an error").to_string();
    assert!(e.starts_with("host.shaper.best-effort.rate_per_s: 1e-6 requests/s is out of range 0 or [0.001, ") && !e.contains('\n'), "{e}");
}

//! `trace info` and `trace convert` on the fixtures (expected values worked
//! out by hand from the fixture text, in the comments) and on DiskSim's real
//! traces from shared/ (counts known from the DiskSim distribution).

use disksched_core::trace::convert::convert;
use disksched_core::trace::info::{info, DeviceCount, TraceInfo};
use disksched_core::trace::{self, TraceFormat};
use disksched_core::Error;
use std::path::{Path, PathBuf};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/disksim/");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces").join(name)
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("disksched-info-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{what}: got {got}, want {want}");
}

fn devices(pairs: &[(u32, u64)]) -> Vec<DeviceCount> {
    pairs.iter().map(|&(device, requests)| DeviceCount { device, requests }).collect()
}

#[test]
fn info_on_the_sequentiality_fixture() {
    // info_seq.trace, lines (time ms, dev, lbn, blocks, flags; flags 1 = read):
    //  0.0 d0 100+8 R | 1.0 d0 108+8 R (seq) | 2.0 d1 500+4 W | 3.0 d0 116+16 W (seq)
    //  4.0 d1 504+4 W (seq) | 3.5 d0 100+4 R (out of order; prev end 132)
    //  6.0 d0 132+8 R (prev end 104) | 8.0 d1 0+2 R (prev end 508)
    let i = info(fixture("info_seq.trace"), None, false).unwrap();
    assert_eq!(i.format, "disksim-ascii");
    assert_eq!((i.requests, i.reads, i.writes), (8, 5, 3));
    close(i.read_fraction, 5.0 / 8.0, "read fraction");
    assert_eq!(i.devices, devices(&[(0, 5), (1, 3)]));
    close(i.duration_ms, 8.0, "duration");
    // 3 of the 6 requests that follow one on their device start where it ended.
    assert_eq!(i.sequential_requests, 3);
    close(i.sequential_fraction, 0.5, "sequential fraction");
    // d0: 100..140 (the 100+4 lies inside, 132..140 adjoins) = 40; d1: 500..508 and 0..2 = 10.
    assert_eq!((i.footprint_blocks, i.footprint_exact, i.footprint_granularity_blocks), (50, true, 1));
    close(i.footprint_kb, 25.0, "footprint KB");
    // Sizes 8 8 4 16 4 4 8 2 blocks: sum 54; sorted 2 4 4 4 8 8 8 16.
    close(i.size_kb.mean, 54.0 / 8.0 / 2.0, "mean size");
    close(i.size_kb.p50, 2.0, "p50 size"); // 4th of 8
    close(i.size_kb.p90, 8.0, "p90 size"); // 8th of 8
    close(i.size_kb.max, 8.0, "max size");
    close(i.read_kb, 30.0 / 2.0, "read KB");
    close(i.written_kb, 24.0 / 2.0, "written KB");
    // Gaps 1 1 1 1 0 (3.5 after 4.0) 2.5 2 ms.
    assert_eq!(i.out_of_order, 1);
    close(i.interarrival_ms.mean, 8.5 / 7.0, "mean gap");
    close(i.interarrival_ms.max, 2.5, "max gap");
    // Percentiles of ns values are HDR buckets: within 0.1 %.
    assert!((i.interarrival_ms.p50 - 1.0).abs() <= 1e-3, "p50 gap {}", i.interarrival_ms.p50);
    assert_eq!(i.bad_lines_skipped, 0);
}

#[test]
fn info_on_the_format_fixtures() {
    // disksim_ascii.trace: 6 requests; reads (flags bit 0) on lines 1 3 5 6;
    // devices 0 0 1 1 2 30; last arrival 13.191135 ms; sizes 8 16 1 128 3 5
    // blocks (161, no overlaps); no request follows its device's previous one.
    let i = info(fixture("disksim_ascii.trace"), None, false).unwrap();
    assert_eq!((i.format.as_str(), i.requests, i.reads, i.writes), ("disksim-ascii", 6, 4, 2));
    assert_eq!(i.devices, devices(&[(0, 2), (1, 2), (2, 1), (30, 1)]));
    close(i.duration_ms, 13.191135, "duration");
    assert_eq!((i.footprint_blocks, i.sequential_requests), (161, 0));
    close(i.sequential_fraction, 0.0, "sequential");
    close(i.size_kb.mean, 161.0 / 6.0 / 2.0, "mean size");
    close(i.size_kb.max, 64.0, "max size");
    close(i.interarrival_ms.mean, 13.191135 / 5.0, "mean gap");
    close(i.interarrival_ms.max, 10.000001 - 2.125, "max gap");

    // msr.csv: filetimes relative to the first, 100 ns ticks: last at
    // 43321026 ticks = 4332.1026 ms; reads lines 1 4 5; devices 1 1 0 0 1;
    // sizes 24576 8192 4096 32768 bytes and bytes 1000..1100 = blocks 1..3:
    // 48 16 8 64 2 blocks.
    let i = info(fixture("msr.csv"), Some(TraceFormat::Msr), false).unwrap();
    assert_eq!((i.format.as_str(), i.requests, i.reads, i.writes), ("msr", 5, 3, 2));
    assert_eq!(i.devices, devices(&[(0, 2), (1, 3)]));
    close(i.duration_ms, 4332.1026, "duration");
    assert_eq!((i.footprint_blocks, i.sequential_requests), (138, 0));
    close(i.size_kb.mean, 138.0 / 5.0 / 2.0, "mean size");
    close(i.interarrival_ms.max, 1332.0526, "max gap");
}

#[test]
fn info_counts_skipped_lines_or_names_the_bad_one() {
    let dir = scratch("bad");
    let path = dir.join("bad.trace");
    let text = std::fs::read_to_string(fixture("info_seq.trace")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "2.5\t0\tnot-a-block\t8\t1"); // becomes line 4
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let e = info(&path, Some(TraceFormat::DisksimAscii), false).unwrap_err();
    assert!(matches!(e, Error::Parse { line: 4, .. }), "{e}");
    assert!(e.to_string().starts_with(&format!("{}:4: field 3 (blkno)", path.display())), "{e}");
    let i = info(&path, Some(TraceFormat::DisksimAscii), true).unwrap();
    assert_eq!((i.requests, i.bad_lines_skipped, i.sequential_requests), (8, 1, 3));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn info_on_disksim_real_traces() {
    // ajw.1week.srt (HPL): 44,519 records of which 13,040 reads.
    let i: TraceInfo = info(format!("{SHARED}ajw.1week.srt"), None, false).unwrap();
    assert_eq!((i.format.as_str(), i.requests, i.reads, i.writes), ("hpl", 44_519, 13_040, 44_519 - 13_040));
    assert_eq!(i.devices.iter().map(|d| d.requests).sum::<u64>(), 44_519);
    assert!(i.footprint_exact && i.footprint_blocks > 0);
    assert!(i.duration_ms > 0.0 && i.size_kb.p50 <= i.size_kb.p99 && i.size_kb.p99 <= i.size_kb.max);
    // atlas10k.trace (DiskSim validation trace): 10,000 requests, one device.
    let i = info(format!("{SHARED}atlas10k.trace"), None, false).unwrap();
    assert_eq!((i.format.as_str(), i.requests), ("disksim-validate", 10_000));
    assert_eq!(i.devices.len(), 1);
    assert_eq!(i.reads + i.writes, 10_000);
}

#[test]
fn convert_round_trips_and_never_leaves_a_partial_file() {
    let dir = scratch("convert");
    let out = dir.join("msr.ascii");
    let n = convert(fixture("msr.csv"), None, false, TraceFormat::DisksimAscii, &out).unwrap();
    assert_eq!(n, 5);
    let key = |r: &trace::TraceRecord| (r.time_ns, r.device, r.lbn, r.blocks, r.is_write);
    let orig: Vec<_> = trace::open(fixture("msr.csv"), None, false).unwrap().map(|r| key(&r.unwrap())).collect();
    let back: Vec<_> = trace::open(&out, None, false).unwrap().map(|r| key(&r.unwrap())).collect();
    assert_eq!(back, orig);
    // The fifth msr request (bytes 1000..1100) is block 1, 2 blocks, at 4332.1026 ms.
    assert_eq!(back[4], (4_332_102_600, 1, 1, 2, false));

    // Unwritable format, bad input: an error and no output, no temporary file.
    let bad_out = dir.join("never.txt");
    let e = convert(fixture("msr.csv"), None, false, TraceFormat::Hpl, &bad_out).unwrap_err();
    assert!(e.to_string().contains("hpl cannot be written"), "{e}");
    let bad_in = dir.join("bad.csv");
    let text = std::fs::read_to_string(fixture("msr.csv")).unwrap();
    std::fs::write(&bad_in, text.replace(",Write,1317441536,", ",Wrote,1317441536,")).unwrap();
    let e = convert(&bad_in, Some(TraceFormat::Msr), false, TraceFormat::Spc, &bad_out).unwrap_err();
    assert!(e.to_string().starts_with(&format!("{}:2:", bad_in.display())), "{e}");
    let mut left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    left.sort();
    assert_eq!(left, ["bad.csv", "msr.ascii"]);
    // Skipping the bad line converts the other four.
    assert_eq!(convert(&bad_in, Some(TraceFormat::Msr), true, TraceFormat::Spc, &bad_out).unwrap(), 4);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn convert_until_stops_when_asked_and_leaves_nothing() {
    use disksched_core::trace::convert::convert_until;
    let dir = scratch("until");
    let src = dir.join("in.ascii");
    // 200,000 records: asked at 65,536, 131,072 and 196,608.
    let text: String = (0..200_000u64).map(|i| format!("{}.0 0 {} 8 1\n", i, i * 8)).collect();
    std::fs::write(&src, text).unwrap();
    let out = dir.join("out.msr");
    let mut asked = 0;
    let e = convert_until(&src, None, false, TraceFormat::Msr, &out, &mut || {
        asked += 1;
        asked < 2
    })
    .unwrap_err();
    assert!(e.to_string().contains("interrupted"), "{e}");
    assert_eq!(asked, 2);
    let left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(left, ["in.ascii"]);
    let mut calls = 0;
    let n = convert_until(&src, None, false, TraceFormat::Msr, &out, &mut || {
        calls += 1;
        true
    })
    .unwrap();
    // Asked at every 65,536th record and once more before the rename.
    assert_eq!((n, calls), (200_000, 200_000 / 65_536 + 1));
    std::fs::remove_dir_all(dir).unwrap();
}

//! A synchronous sequential reader (one request at a time, the next issued
//! when the last completes, like `dd`) on every catalogue drive that reads
//! ahead. With read-ahead the drive keeps reading while the host takes its
//! data, so a stream runs at the media rate of its zone (track and cylinder
//! skews included) or the bus rate, whichever is lower, less the command
//! overheads, and a larger request is never much slower than a smaller one.
//! The expectation is computed here from the spec's figures (sectors per
//! track, skews, spares, rpm, bus and overheads), not by the model.

use disksched_core::disk::spec::Sparing;
use disksched_core::disk::{builtin, DiskModel, DiskSpec, Drive};
use disksched_core::time::SimTime;
use std::sync::Arc;

const SIZES_KB: [u32; 8] = [64, 96, 128, 192, 256, 384, 512, 1024];

/// MB/s (10^6 bytes) of a synchronous reader of `kb` KB requests from LBN 0.
fn dd_mb_s(model: &Arc<DiskModel>, kb: u32) -> f64 {
    let mut d = Drive::new(model.clone());
    let blocks = kb * 2;
    let n = (48 * 1024 / kb).max(24) as u64;
    let (mut t, mut first) = (0u64, 0u64);
    for i in 0..n {
        t = d.serve(SimTime(t), i * blocks as u64, blocks, false).done.0;
        if i == 1 {
            first = t;
        }
    }
    (n - 2) as f64 * blocks as f64 * 512.0 / ((t - first) as f64 / 1e9) / 1e6
}

/// The expected rate, MB/s, from the spec of a zoned drive: zone 0's media
/// rate over whole cylinders (every track switch costs its track skew, the
/// cylinder switch its cylinder skew, in sector times; spare sectors carry
/// no data) or the bus rate if slower, with the hit overhead, data
/// preparation and completion of every command added to its transfer.
fn expected_mb_s(spec: &DiskSpec, kb: u32) -> f64 {
    let z = &spec.layout.zones[0];
    let (spt, s) = (z.sectors_per_track as f64, spec.surfaces as f64);
    let sector_ms = 60_000.0 / spec.rpm / spt;
    let cylinder_sectors = s * spt + (s - 1.0) * z.track_skew_sectors.floor() + z.cylinder_skew_sectors.floor();
    let lbns_per_cylinder = match spec.layout.sparing {
        Sparing::SectorsPerTrack => s * (spt - z.spares as f64),
        Sparing::SectorsPerCylinder => s * spt - z.spares as f64,
        Sparing::SectorsPerRange => s * spt - z.spares as f64 / spec.layout.sparing_range_cylinders as f64,
        _ => s * spt,
    };
    let media_ms_per_block = cylinder_sectors * sector_ms / lbns_per_cylinder;
    let c = &spec.controller;
    let blocks = (kb * 2) as f64;
    let scale = c.overhead_time_scale;
    let overhead_ms = (c.read_hit_overhead_after_read_ms + c.data_preparation_overhead_ms + c.read_completion_overhead_ms) * scale;
    let request_ms = (blocks * media_ms_per_block).max(blocks * c.bus_sector_ms) + overhead_ms;
    blocks * 512.0 / request_ms / 1e3
}

fn reads_ahead(spec: &DiskSpec) -> bool {
    let c = &spec.controller;
    c.caching_enabled && c.cache_segments > 0 && c.segment_size_blocks > 0 && c.continuous_read > 0
}

#[test]
fn a_sequential_reader_runs_at_the_media_or_bus_rate_on_every_drive_that_reads_ahead() {
    let mut failures = vec![];
    let mut checked = 0;
    for name in builtin::names() {
        let spec = builtin::resolve(name, None).unwrap();
        if !reads_ahead(&spec) || spec.layout.zones.is_empty() {
            continue;
        }
        checked += 1;
        let model = Arc::new(DiskModel::new(spec.clone()).unwrap());
        let mut last = 0.0;
        for kb in SIZES_KB {
            let got = dd_mb_s(&model, kb);
            let want = expected_mb_s(&spec, kb);
            if got < 0.9 * want {
                failures.push(format!("{name} {kb} KB: {got:.2} MB/s < 90% of {want:.2}"));
            }
            if got < 0.95 * last {
                failures.push(format!("{name} {kb} KB: {got:.2} MB/s falls more than 5% below the smaller size's {last:.2}"));
            }
            last = got;
        }
    }
    assert!(checked >= 10, "{checked} drives checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_datasheet_disk_streams_at_its_media_rate() {
    // The 250 GB 7200 RPM desktop disk of the README, no bus time.
    let sheet: disksched_core::disk::datasheet::Datasheet = toml::from_str(
        "name = \"desk\"\ncapacity_gb = 250\nrpm = 7200\nouter_mb_s = 88\ninner_mb_s = 45\ntrack_to_track_ms = 0.8\n\
         average_seek_ms = 8.5\nfull_stroke_ms = 17\ncache_kb = 8192").unwrap();
    let spec = sheet.build().unwrap();
    let model = Arc::new(DiskModel::new(spec.clone()).unwrap());
    let mut last = 0.0;
    for kb in [16, 24, 32, 48].into_iter().chain(SIZES_KB) {
        let (got, want) = (dd_mb_s(&model, kb), expected_mb_s(&spec, kb));
        assert!(got >= 0.9 * want, "{kb} KB: {got:.2} MB/s < 90% of {want:.2}");
        assert!(got >= 0.95 * last, "{kb} KB: {got:.2} MB/s < 95% of {last:.2}");
        last = got;
    }
}


#[test]
fn a_write_back_datasheet_disk_streams_a_sequential_writer_at_its_media_rate() {
    // The 250 GB disk of GEOM_SCHED's slides (write cache on, a 150 MB/s bus, 512 KB
    // segments): a writer issuing 128 KB writes back to back. The bus brings data
    // faster than the media takes it, so the segment fills; each write then joins the
    // destage once room is free and the media write never stops. (Before: it waited
    // for the destage's end and started a new media write a sector late, losing a
    // revolution every segment's worth: 32.7 MiB/s.)
    let sheet: disksched_core::disk::datasheet::Datasheet = toml::from_str(
        "name = \"desk\"\ncapacity_gb = 250\nrpm = 7200\nouter_mb_s = 88\ninner_mb_s = 45\ntrack_to_track_ms = 0.8\n\
         average_seek_ms = 8.5\nfull_stroke_ms = 17\ncache_kb = 8192\nbus_mb_s = 150").unwrap();
    let spec = sheet.build().unwrap();
    let model = Arc::new(DiskModel::new(spec.clone()).unwrap());
    let mut d = Drive::new(model.clone());
    let blocks = 256u32;
    let n = 400u64;
    let mut t = 0u64;
    let mut last_media = 0u64;
    for i in 0..n {
        let s = d.serve(SimTime(t), i * blocks as u64, blocks, true);
        t = s.done.0;
        last_media = d.state.head.time.0;
    }
    let got = n as f64 * blocks as f64 * 512.0 / (last_media as f64 / 1e9) / 1e6;
    let want = expected_mb_s(&spec, 128);
    assert!(got >= 0.95 * want, "{got:.2} MB/s < 95% of the media-bound {want:.2}");
}

//! Datasheet disks: a spec from the figures a datasheet gives.
use disksched_core::disk::datasheet::Datasheet;
use disksched_core::disk::DiskModel;

fn sheet() -> Datasheet {
    // A 7200 RPM desktop drive with an 88 MB/s outer rate (the class of GEOM_SCHED's test disk).
    toml::from_str(r#"
        name = "desk7200"
        capacity_gb = 250
        rpm = 7200
        outer_mb_s = 88
        inner_mb_s = 45
        track_to_track_ms = 0.8
        average_seek_ms = 8.5
        full_stroke_ms = 17
        cache_kb = 8192
        write_cache = true
    "#).unwrap()
}

#[test]
fn the_model_has_the_datasheet_figures() {
    let spec = sheet().build().unwrap();
    let m = DiskModel::new(spec).unwrap();
    assert!(m.layout.capacity() as f64 * 512.0 >= 250e9);
    let last = m.spec.cylinders - 1;
    // Media rates: sectors per track x 512 B x revolutions per second.
    let rate = |c: u32| m.layout.sectors_per_track(c, 0) as f64 * 512.0 * 7200.0 / 60.0 / 1e6;
    assert!((rate(0) - 88.0).abs() / 88.0 < 0.005, "outer {}", rate(0));
    assert!((rate(last) - 45.0).abs() / 45.0 < 0.005, "inner {}", rate(last));
    assert!((m.mech.seek_ns(1) as f64 / 1e6 - 0.8).abs() < 1e-6);
    assert!((m.mech.seek_ns(last) as f64 / 1e6 - 17.0).abs() < 1e-6);
    // Skews cover the switch times.
    let z0 = &m.spec.layout.zones[0];
    let sector_ms = 60_000.0 / 7200.0 / z0.sectors_per_track as f64;
    assert!(z0.track_skew_sectors * sector_ms >= 0.8 && z0.cylinder_skew_sectors * sector_ms >= 0.8);
    for lbn in (0..m.layout.capacity()).step_by(9_999_991) {
        assert_eq!(m.layout.pbn_to_lbn(m.layout.lbn_to_pbn(lbn)), Some(lbn));
    }
}

#[test]
fn bad_figures_are_rejected() {
    let mut s = sheet();
    s.inner_mb_s = 120.0;
    assert!(s.build().unwrap_err().to_string().contains("inner_mb_s: 120 must not exceed outer_mb_s (88)"));
    let mut s = sheet();
    s.rpm = 0.0;
    assert!(s.build().unwrap_err().to_string().contains("datasheet.rpm: 0 must be > 0"));
}

#[test]
fn a_datasheet_disk_with_a_cache_is_write_back_unless_told_otherwise() {
    // Current drives ship with the write cache on: a cache makes a write-back drive;
    // `write_cache = false` (`--no-write-cache`) makes it write-through; no cache, no write-back.
    let level = |extra: &str, cache_kb: u32| {
        let mut s = sheet();
        s.cache_kb = cache_kb;
        s.write_cache = match extra { "on" => Some(true), "off" => Some(false), _ => None };
        s.build().unwrap().controller.fast_write_level
    };
    assert_eq!(level("", 8192), 2);
    assert_eq!(level("off", 8192), 0);
    assert_eq!(level("on", 8192), 2);
    assert_eq!(level("", 0), 0);
}

//! The drive's controller and buffer on constructed command sequences, each
//! timed by hand. The disk: 6000 RPM (10 ms a revolution), 100 sectors a
//! track (0.1 ms a sector, LBN k of track 0 at sector k, no skew), 2 surfaces,
//! heads on cylinder 0 / surface 0 at t = 0 when sector 0 is under them.

use disksched_core::disk::{DiskModel, DiskSpec, Drive, Service};
use disksched_core::time::SimTime;
use std::sync::Arc;

fn drive(controller: &str) -> Drive {
    let text = format!(r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = 2000
rpm = 6000.0
[seek]
table = [[1, 1.0], [9, 1.0]]
head_switch_ms = 0.5
[layout]
[[layout.zones]]
first_cylinder = 0
last_cylinder = 9
sectors_per_track = 100
track_skew_sectors = 0.0
cylinder_skew_sectors = 0.0
[controller]
{controller}
"#);
    let spec = DiskSpec::from_toml(&text, "hand").unwrap();
    Drive::new(Arc::new(DiskModel::new(spec).unwrap()))
}

const CACHE: &str = "caching_enabled = true\ncache_segments = 4\nsegment_size_blocks = 300\nread_ahead_max_blocks = 300\n";

fn ms(s: &Service) -> f64 {
    s.done.0 as f64 / 1e6
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() < 1e-5
}

#[test]
fn a_read_miss_streams_its_data_behind_the_media() {
    // 10 blocks from sector 20: media 2.0 .. 3.0 ms; the bus (0.05 ms a sector)
    // is faster, so the last block leaves one bus transfer after the media.
    let mut d = drive("bus_sector_ms = 0.05");
    let s = d.serve(SimTime(0), 20, 10, false);
    assert!(close(ms(&s), 3.05), "{}", ms(&s));
    assert!(!s.cache_hit);
}

#[test]
fn the_high_water_mark_holds_the_data_until_that_much_is_buffered() {
    // Bus 0.2 ms a sector, slower than the media. 20 blocks from sector 20:
    // media 2.0 .. 4.0 ms. Water mark 0: data goes out after the first
    // sector (2.1) and takes 4.0 ms -> 6.1. Water mark 0.75 of the request:
    // after 15 sectors (3.5) -> 7.5.
    let mut d = drive("bus_sector_ms = 0.2");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, false)), 6.1));
    let mut d = drive("bus_sector_ms = 0.2\nread_water_mark = 0.75");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, false)), 7.5));
    // Of a 40-block segment instead of the request: 30 blocks, more than the request holds -> all 20 (4.0).
    let mut d = drive("bus_sector_ms = 0.2\nread_water_mark = 0.75\nwater_mark_by_request = false\nsegment_size_blocks = 40");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, false)), 8.0));
}

#[test]
fn a_write_starts_on_the_media_as_soon_as_its_data_can_keep_ahead() {
    // Bus 0.2 ms a sector, media 0.1: a 20-block write can start once
    // 20 * 0.2 - 19 * 0.1 = 2.1 ms of data have come, so sector 30 (3.0 ms)
    // is reachable: media 3.0 .. 5.0. (Waiting for all the data, 4.0 ms,
    // would lose a revolution.)
    let mut d = drive("bus_sector_ms = 0.2");
    let s = d.serve(SimTime(0), 30, 20, true);
    assert!(close(ms(&s), 5.0), "{}", ms(&s));
    // Sector 20 (2.0 ms) is not: the next pass, 12.0 .. 14.0.
    let mut d = drive("bus_sector_ms = 0.2");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, true)), 14.0));
}

#[test]
fn the_extra_write_disconnect_delays_the_data() {
    // Command 0.3 + disconnect 0.1 + delay 0.4 + reselect 0.2 + second disconnect 0.1
    // = 1.1 ms before the data, then one 0.05 ms block: sector 11 (1.1 ms) is
    // missed and sector 12 (1.2 ms) is not.
    let extradisc = "bus_sector_ms = 0.05\nextra_write_disconnect = true\nextradisc_command_overhead_ms = 0.3\n\
        extradisc_disconnect_overhead_ms = 0.1\nextradisc_inter_disconnect_delay_ms = 0.4\n\
        first_reselect_overhead_ms = 0.2\nextradisc_second_disconnect_overhead_ms = 0.1";
    let s = drive(extradisc).serve(SimTime(0), 12, 1, true);
    assert!(close(s.media_start.0 as f64 / 1e6, 1.2), "{:?}", s);
    let s = drive(extradisc).serve(SimTime(0), 11, 1, true);
    assert!(close(s.media_start.0 as f64 / 1e6, 11.1), "{:?}", s);
    // Without it the data follows the (zero) command overhead: sector 1 is reachable.
    let s = drive("bus_sector_ms = 0.05").serve(SimTime(0), 1, 1, true);
    assert!(close(s.media_start.0 as f64 / 1e6, 0.1), "{:?}", s);
}

#[test]
fn the_minimum_seek_delay_applies_on_the_same_track() {
    // Sector 5 passes at 0.5 ms; a 1 ms minimum positioning delay misses it.
    assert!(close(drive("").serve(SimTime(0), 5, 1, false).media_start.0 as f64 / 1e6, 0.5));
    assert!(close(drive("minimum_seek_delay_ms = 1.0").serve(SimTime(0), 5, 1, false).media_start.0 as f64 / 1e6, 10.5));
}

#[test]
fn read_ahead_makes_the_next_sequential_read_a_hit() {
    // Miss on 0..10 (media 0 .. 1.0 ms); the buffer reads on. At 20 ms the
    // read-ahead has long passed 10..20: a hit, 0.4 ms overhead + 10 bus transfers.
    let mut d = drive(&format!("{CACHE}bus_sector_ms = 0.05\nread_hit_overhead_after_read_ms = 0.4\ncontinuous_read = 3"));
    d.serve(SimTime(0), 0, 10, false);
    let s = d.serve(SimTime(20_000_000), 10, 10, false);
    assert!(s.cache_hit && s.media_start.0 == 0);
    assert!(close(ms(&s), 20.9), "{}", ms(&s));
    // A read elsewhere misses.
    assert!(!d.serve(SimTime(40_000_000), 1500, 10, false).cache_hit);
}

/// After a miss on 80..90 and a long pause, does 95..105 (into the next track) come wholly from the buffer?
fn crosses_track_hit(mode: u32) -> (bool, bool) {
    let mut d = drive(&format!("{CACHE}continuous_read = {mode}"));
    d.serve(SimTime(0), 80, 10, false);
    let s = d.serve(SimTime(100_000_000), 95, 10, false);
    (s.cache_hit, s.media_start.0 == 0)
}

#[test]
fn read_ahead_modes_stop_where_disksim_says() {
    // Mode 1: to the end of the track (sector 99): 95..100 are buffered, 100..105 need the media.
    assert_eq!(crosses_track_hit(1), (true, false));
    // Mode 2: to the end of the cylinder (both surfaces: LBN 200): all buffered.
    assert_eq!(crosses_track_hit(2), (true, true));
    // Mode 3: until the 300-block segment is full: all buffered.
    assert_eq!(crosses_track_hit(3), (true, true));
    // Mode 4 without a preceding read of the track before: as mode 1.
    assert_eq!(crosses_track_hit(4), (true, false));
    // Mode 4 continuing a read of the track before (track 0 -> track 1):
    // to the end of the following track (track 2, LBN 300).
    let mut d = drive(&format!("{CACHE}continuous_read = 4"));
    d.serve(SimTime(0), 50, 10, false);
    d.serve(SimTime(100_000_000), 1500, 10, false); // elsewhere: the stream test looks at the last read only
    d.serve(SimTime(200_000_000), 150, 10, false);
    let s = d.serve(SimTime(300_000_000), 250, 10, false);
    assert!(!s.cache_hit, "the last read was not on the track before");
    let mut d = drive(&format!("{CACHE}continuous_read = 4"));
    d.serve(SimTime(0), 50, 10, false);
    d.serve(SimTime(100_000_000), 150, 10, false);
    let s = d.serve(SimTime(200_000_000), 250, 10, false);
    assert!(s.cache_hit && s.media_start.0 == 0, "{s:?}");
}

#[test]
fn read_ahead_is_bounded_by_its_maximum() {
    // Max 20 blocks after 0..10: 10..30 buffered, 30..40 not (mode 0: no
    // continuous read, which would go on reading ahead of the hit).
    let mut d = drive("caching_enabled = true\ncache_segments = 4\nsegment_size_blocks = 300\nread_ahead_max_blocks = 20\ncontinuous_read = 0");
    d.serve(SimTime(0), 0, 10, false);
    assert!(d.serve(SimTime(50_000_000), 20, 10, false).media_start.0 == 0);
    let s = d.serve(SimTime(100_000_000), 30, 10, false);
    assert!(s.media_start.0 > 0);
}

#[test]
fn write_back_reports_once_the_data_is_buffered_and_reads_hit_it() {
    // Fast write level 2: done after the hit overhead and the bus transfer.
    let c = format!("{CACHE}bus_sector_ms = 0.05\nfast_write_level = 2\nwrite_hit_overhead_after_read_ms = 0.3\nread_hits_on_write_data = true");
    let mut d = drive(&c);
    let s = d.serve(SimTime(0), 500, 8, true);
    assert!(close(ms(&s), 0.3 + 8.0 * 0.05) && s.media_start.0 == 0, "{s:?}");
    assert!(d.serve(SimTime(50_000_000), 500, 8, false).cache_hit);
    // Without read hits on write data the same read goes to the media.
    let mut d = drive(&c.replace("read_hits_on_write_data = true", "read_hits_on_write_data = false"));
    d.serve(SimTime(0), 500, 8, true);
    assert!(!d.serve(SimTime(50_000_000), 500, 8, false).cache_hit);
}

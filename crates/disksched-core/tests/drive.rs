//! The drive's controller and buffer on constructed command sequences, each
//! timed by hand. The disk: 6000 RPM (10 ms a revolution), 100 sectors a
//! track (0.1 ms a sector, LBN k of track 0 at sector k, no skew), 2 surfaces,
//! heads on cylinder 0 / surface 0 at t = 0 when sector 0 is under them.

use disksched_core::disk::{builtin, DiskModel, DiskSpec, Drive, DriveState, HeadState, Predictor, Service};
use disksched_core::time::SimTime;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::sync::Arc;

fn drive(controller: &str) -> Drive {
    drive_settling(controller, 0.0)
}

/// The hand disk with a fixed cost for a read on the heads' own track.
fn drive_settling(controller: &str, same_track_ms: f64) -> Drive {
    let text = format!(r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = 2000
rpm = 6000.0
[seek]
table = [[1, 1.0], [9, 1.0]]
head_switch_ms = 0.5
same_track_read_ms = {same_track_ms}
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
    // The mark is whole blocks, rounded down (DiskSim's integer cast): 0.75
    // of 6 blocks is 4, buffered at 2.4 ms; 6 bus transfers -> 3.6 (not 3.7).
    let mut d = drive("bus_sector_ms = 0.2\nread_water_mark = 0.75");
    assert!(close(ms(&d.serve(SimTime(0), 20, 6, false)), 3.6));
    // By request size, a request larger than a segment counts as a segment
    // (DiskSim: min(segment, request) x mark). Bus 0.1 = the media rate,
    // 8-block segments: 0.75 of 8 is 6 blocks, buffered at 2.6; 20 bus
    // transfers -> 4.6 (of the request, 15 blocks, it would be 5.5).
    let mut d = drive("bus_sector_ms = 0.1\nread_water_mark = 0.75\nsegment_size_blocks = 8");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, false)), 4.6));
    // Of a segment, the share is rounded up: 0.7 of 15 is 10.5 -> 11 blocks,
    // in at 3.1; 20 transfers -> 5.1.
    let mut d = drive("bus_sector_ms = 0.1\nread_water_mark = 0.7\nwater_mark_by_request = false\nsegment_size_blocks = 15");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, false)), 5.1));
}

#[test]
fn the_high_water_mark_counts_the_blocks_of_each_track() {
    // 20 blocks from LBN 90: sectors 90..99 of surface 0 (9.0 .. 10.0 ms),
    // head switch to surface 1 (10.5), whose sector 0 comes round at 20.0:
    // LBNs 100..109 at 20.0 .. 21.0. The 15th block is in at 20.5, and 20 bus
    // transfers of 0.2 ms end at 24.5. (Spread evenly over the access, the
    // mark would fall at 18.0, in the middle of the wait.)
    let mut d = drive("bus_sector_ms = 0.2\nread_water_mark = 0.75");
    let s = d.serve(SimTime(0), 90, 20, false);
    assert!(close(ms(&s), 24.5), "{}", ms(&s));
}

#[test]
fn a_write_whose_data_falls_behind_the_head_waits_a_revolution() {
    // Bus 0.2 ms a sector, media 0.1: the write starts once its first block
    // is in, and a sector whose data has not come when the head reaches it
    // waits a revolution. 20 blocks from sector 30 (3.0 ms): block i comes
    // at 0.2 (i + 1), the head reaches it at 3.0 + 0.1 i, always later:
    // media 3.0 .. 5.0.
    let mut d = drive("bus_sector_ms = 0.2");
    let s = d.serve(SimTime(0), 30, 20, true);
    assert!(close(ms(&s), 5.0), "{}", ms(&s));
    // From sector 20 the last block (4.0 ms) is late for the head (3.9): the next pass, 12.0 .. 14.0.
    let mut d = drive("bus_sector_ms = 0.2");
    assert!(close(ms(&d.serve(SimTime(0), 20, 20, true)), 14.0));
    // Each track is checked on its own: 70 blocks from sector 60 are 40 on
    // track 0 (last block in at 8.0, head there at 9.9: 6.0 .. 10.0) and 30
    // on surface 1 from sector 0 (head switch 0.5, next pass 20.0; all data
    // in by 14.0): done 23.0. Holding the start until the whole request
    // could keep ahead (7.1 ms) would lose a revolution: 33.0.
    let mut d = drive("bus_sector_ms = 0.2");
    assert!(close(ms(&d.serve(SimTime(0), 60, 70, true)), 23.0));
}

#[test]
fn the_exact_predictor_times_the_first_sector_as_the_drive_does() {
    // HP C2247A: extra write disconnect, a bus slower than the outer zones,
    // a minimum seek delay. Random one-track commands, some continuing the last.
    let model = Arc::new(DiskModel::new(builtin::resolve("hp_c2247a", None).unwrap()).unwrap());
    let pred = Predictor::exact(model.clone());
    let mut rng = StdRng::seed_from_u64(7);
    let (mut state, mut pieces, mut t, mut checked, mut stalls) = (DriveState::default(), Vec::new(), 0u64, [0; 2], 0);
    let rev = model.mech.revolution_ns();
    while checked[0] + checked[1] < 4000 {
        let blocks = rng.gen_range(1..48u32);
        let lbn = match state.head.next_lbn {
            Some(next) if rng.gen_bool(0.3) => next,
            _ => rng.gen_range(0..model.layout.capacity() - 64),
        };
        model.layout.pieces(lbn, blocks, &mut pieces);
        if pieces.len() > 1 {
            continue;
        }
        let is_write = rng.gen_bool(0.6);
        let head = HeadState { time: SimTime(t), last_was_write: state.last_was_write, ..state.head };
        let want = t + pred.positioning_at(&head, &pred.target(lbn), is_write, blocks).total_ns();
        checked[(state.head.next_lbn == Some(lbn)) as usize] += 1;
        let s = model.serve(&mut state, SimTime(t), lbn, blocks, is_write, &mut disksched_core::disk::MappedPieces::default());
        // A write that outruns its data writes what it has and loses a
        // revolution; the predictor waits for the pass that does not (the
        // same end), to within the ns rounding of a revolution.
        let stall = if s.transfer_ns >= rev { rev } else { 0 };
        assert!((s.media_start.0 + stall).abs_diff(want) <= 2, "lbn {lbn} blocks {blocks} write {is_write}: {s:?} vs {want}");
        stalls += (stall > 0) as u32;
        t = s.done.0 + rng.gen_range(0..20_000_000);
    }
    // (Few stalls: the drive holds a write's first sector until 10 or 15 blocks are in, §2.5.)
    assert!(checked[1] > 500 && stalls > 5, "{checked:?} {stalls}");
}

#[test]
fn every_data_phase_starts_with_the_data_preparation_overhead() {
    // Preparation 0.15 ms, bus 0.2 ms a sector (slower than the media).
    let prep = "bus_sector_ms = 0.2\ndata_preparation_overhead_ms = 0.15";
    // A read miss of 5 blocks from sector 20 (media 2.0 .. 2.5): the data
    // goes out after the first block (2.1), prepared (2.25), 5 transfers -> 3.25.
    let mut d = drive(prep);
    assert!(close(ms(&d.serve(SimTime(0), 20, 5, false)), 3.25));
    // A write's data follows its (zero) command overhead and the preparation:
    // the first block is in at 0.35, so sector 3 (0.3 ms) is missed and 4 is not.
    assert!(close(drive(prep).serve(SimTime(0), 4, 1, true).media_start.0 as f64 / 1e6, 0.4));
    assert!(close(drive(prep).serve(SimTime(0), 3, 1, true).media_start.0 as f64 / 1e6, 10.3));
    // A read hit: 0.4 ms overhead + preparation + 10 transfers.
    let mut d = drive(&format!("{CACHE}{prep}\nread_hit_overhead_after_read_ms = 0.4\ncontinuous_read = 3"));
    d.serve(SimTime(0), 0, 10, false);
    let s = d.serve(SimTime(50_000_000), 10, 10, false);
    assert!(s.cache_hit && close(ms(&s), 52.55), "{}", ms(&s));
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
    // A read ending at the track end leaves the heads on the next track: mode 1 reads it.
    let mut d = drive(&format!("{CACHE}continuous_read = 1"));
    d.serve(SimTime(0), 90, 10, false);
    let s = d.serve(SimTime(100_000_000), 150, 10, false);
    assert!(s.cache_hit && s.media_start.0 == 0, "{s:?}");
    // Mode 2: to the end of the cylinder (both surfaces: LBN 200): all buffered.
    assert_eq!(crosses_track_hit(2), (true, true));
    // Mode 3: until the 300-block segment is full: all buffered.
    assert_eq!(crosses_track_hit(3), (true, true));
    // Mode 4 without a preceding read of the track before: as mode 1.
    assert_eq!(crosses_track_hit(4), (true, false));
    // Mode 4 (DiskSim): one track further when the segment's data already
    // begins before the track holding the block after the request. A miss
    // on 95..105 crossed into track 1: read ahead to the end of track 2 (300).
    let mut d = drive(&format!("{CACHE}continuous_read = 4"));
    d.serve(SimTime(0), 95, 10, false);
    let s = d.serve(SimTime(100_000_000), 250, 10, false);
    assert!(s.cache_hit && s.media_start.0 == 0, "{s:?}");
    // A miss on 150..160 after one on 50..60 (the track before, but another
    // segment): its segment begins on track 1, so only to the end of track 1.
    let mut d = drive(&format!("{CACHE}continuous_read = 4"));
    d.serve(SimTime(0), 50, 10, false);
    d.serve(SimTime(100_000_000), 150, 10, false);
    assert!(d.serve(SimTime(200_000_000), 190, 10, false).media_start.0 == 0);
    assert!(!d.serve(SimTime(300_000_000), 250, 10, false).cache_hit);
}

#[test]
fn read_ahead_over_the_requested_data_loses_it() {
    // A 300-block segment, read-ahead up to DiskSim's limit (mode 3). With no
    // maximum the limit is a segment's worth from the request's start (kept:
    // 0..300 buffered after a miss on 0..10 and a long pause) or from its
    // end (over requested: 10..310, the window slid past the request, so
    // re-reading it misses).
    let after_miss = |over: bool, max: u32, lbn: u64| {
        let c = CACHE.replace("read_ahead_max_blocks = 300", &format!("read_ahead_max_blocks = {max}"));
        let mut d = drive(&format!("{c}continuous_read = 3\nread_ahead_over_requested = {over}"));
        d.serve(SimTime(0), 0, 10, false);
        d.serve(SimTime(100_000_000), lbn, 10, false).media_start.0 == 0
    };
    assert!(after_miss(false, 0, 0) && !after_miss(false, 0, 300));
    assert!(!after_miss(true, 0, 0) && after_miss(true, 0, 300));
    // With a maximum the limit is the request's end + the maximum either way
    // (DiskSim: the flag then changes nothing): 10..310.
    for over in [false, true] {
        assert!(!after_miss(over, 300, 0) && after_miss(over, 300, 300));
    }
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

#[test]
fn a_read_crossing_a_track_never_sends_a_block_before_the_head_has_read_it() {
    // Bus 0.2 ms a sector, twice the media's time. LBNs 90..110: sectors
    // 90..99 of surface 0 (9.0 .. 10.0 ms), a head switch, and sector 0 of
    // surface 1 comes round at 20.0: LBNs 100..109 pass 20.0 .. 21.0. The
    // bus may send the first ten early, but block 100 only once read
    // (20.1), and each later one 0.2 ms after the one before: 20.1 + 10 x
    // 0.2 = 22.1 (not 9.1 + 20 x 0.2 = 13.1, nor the media's end + one
    // block, 21.2). No block goes before it passed under the head.
    let s = drive("bus_sector_ms = 0.2").serve(SimTime(0), 90, 20, false);
    assert!(close(ms(&s), 22.1), "{}", ms(&s));
    // Across a cylinder: LBN 190 is sector 90 of surface 1 (a head switch,
    // 9.0 .. 10.0), then cylinder 1 (a 1 ms seek), whose sector 0 passes at
    // 20.0: the same 22.1.
    let s = drive("bus_sector_ms = 0.2").serve(SimTime(0), 190, 20, false);
    assert!(close(ms(&s), 22.1), "{}", ms(&s));
    // A bus faster than the media: the last block (read by 21.0) plus its own transfer.
    let s = drive("bus_sector_ms = 0.05").serve(SimTime(0), 90, 20, false);
    assert!(close(ms(&s), 21.05), "{}", ms(&s));
    // Every block of every such read, against the layout: block k of LBN
    // 90 + k is under the head from its sector's time (track 0: 9.0 + 0.1 k;
    // track 1: 20.0 + 0.1 (k - 10)), so a read of n blocks cannot finish
    // before the last one has passed plus one bus transfer.
    for n in 11..=20u64 {
        for bus in [0.05, 0.1, 0.2, 0.3] {
            let s = drive(&format!("bus_sector_ms = {bus}")).serve(SimTime(0), 90, n as u32, false);
            let last_read = 20.0 + 0.1 * (n - 10) as f64;
            assert!(ms(&s) >= last_read + bus - 1e-6, "{n} blocks, bus {bus}: {} < {}", ms(&s), last_read + bus);
        }
    }
}

#[test]
fn a_read_miss_reselects_before_its_data_not_after_it() {
    // DiskSim §2.1: the drive reconnects (first reselect, 0.15 ms) once the
    // water mark's block is buffered, then sends. Bus 0.2 ms a sector.
    let c = "bus_sector_ms = 0.2\nfirst_reselect_overhead_ms = 0.15";
    // On one track the bus sets the pace: 20 blocks from sector 20, first
    // block read by 2.1, reselect to 2.25, 20 x 0.2 -> 6.25.
    assert!(close(ms(&drive(c).serve(SimTime(0), 20, 20, false)), 6.25));
    // Across a track the head sets it: LBNs 90..99 by 10.0, LBN 100 read by
    // 20.1 (sector 0 of surface 1 after the head switch), then 10 x 0.2 ->
    // 22.1. The reselect (9.1 .. 9.25) went before the first burst and is
    // hidden; charged after the data it would give 22.25.
    let s = drive(c).serve(SimTime(0), 90, 20, false);
    assert!(close(ms(&s), 22.1), "{}", ms(&s));
    // Not before the disconnect after the command has ended: miss overhead
    // 0.2 + read disconnect 0.5 = 0.7, though the block (sector 2) is read
    // by 0.3: 0.7 + 0.15 + 0.2 = 1.05 (without the disconnect 0.65).
    let c = "bus_sector_ms = 0.2\nfirst_reselect_overhead_ms = 0.15\nread_overhead_after_read_ms = 0.2\n\
             read_disconnect_after_read_ms = 0.5";
    let s = drive(c).serve(SimTime(0), 2, 1, false);
    assert!(close(ms(&s), 1.05), "{}", ms(&s));
}

#[test]
fn the_overhead_time_scale_scales_overheads_but_no_bus_transfer() {
    // DiskSim: "a multiplicative scaling factor for all processing overhead
    // times"; a block's bus time is a transfer time, the same for reads and writes.
    let c = "overhead_time_scale = 2.0\nread_overhead_after_read_ms = 0.1\nbus_sector_ms = 0.2\nbus_write_sector_ms = 0.3";
    let d = drive(c);
    let ctl = &d.model.controller;
    assert_eq!((ctl.bus_sector_ns, ctl.bus_write_sector_ns, ctl.overhead_ns[0][0]), (200_000, 300_000, 200_000));
    // 20 blocks from sector 20: the (scaled) 0.2 ms overhead ends as
    // sector 2 passes, sector 20 comes at 2.0, media 2.0 .. 4.0, data from
    // 2.1 at 0.2 ms a block -> 6.1 (a scaled bus would give 10.1).
    assert!(close(ms(&drive(c).serve(SimTime(0), 20, 20, false)), 6.1));
}

/// Read-ahead up to 20 blocks past each request (mode 3); miss overhead
/// 0.2 ms, hit overhead 0.3, no bus time. A miss on 10..20 at t = 0 reads
/// 1.0 .. 2.0 ms (sector 10 after the 0.2 ms overhead), then the read-ahead
/// reads 20..40 until 4.0 and stops.
const RA20: &str = "caching_enabled = true\ncache_segments = 4\nsegment_size_blocks = 300\nread_ahead_max_blocks = 20\n\
                    continuous_read = 3\nread_overhead_after_read_ms = 0.2\nread_hit_overhead_after_read_ms = 0.3\n";

#[test]
fn a_stopped_read_ahead_restarts_with_its_own_positioning_only_on_idle_hit() {
    for idle_hit in [false, true] {
        let mut d = drive(&format!("{RA20}read_ahead_on_idle_hit = {idle_hit}"));
        assert!(close(ms(&d.serve(SimTime(0), 10, 10, false)), 2.0));
        // A whole hit at 50 ms: 0.3 ms overhead. With the flag it restarts
        // the read-ahead from the segment's end (LBN 40) after the miss
        // overhead (50.2, sector 2 under the head): sector 40 comes round at
        // 54.0, and 40..60 are read 54.0 .. 56.0.
        let s = d.serve(SimTime(50_000_000), 30, 10, false);
        assert!(s.cache_hit && close(ms(&s), 50.3), "{s:?}");
        // At 60 ms LBNs 40..50 are buffered if (and only if) it restarted; a
        // miss starts at 60.2 and reads sector 40 at 64.0 .. 65.0.
        let s = d.serve(SimTime(60_000_000), 40, 10, false);
        if idle_hit {
            assert!(s.cache_hit && close(ms(&s), 60.3), "{s:?}");
        } else {
            assert!(!s.cache_hit && close(ms(&s), 65.0), "{s:?}");
        }
    }
    // The restart is not a free continuation of the stopped read-ahead
    // (which would have had 40..45 in the buffer at 5.0 ms, a hit at
    // 51.3): a read of 40..45 at 51.0 joins the restarted read-ahead and
    // waits for the heads to read it, 54.0 .. 54.5.
    let mut d = drive(&format!("{RA20}read_ahead_on_idle_hit = true"));
    d.serve(SimTime(0), 10, 10, false);
    d.serve(SimTime(50_000_000), 30, 10, false);
    let s = d.serve(SimTime(51_000_000), 40, 5, false);
    assert!(close(ms(&s), 54.5), "{s:?}");
    // A hit while the read-ahead still runs extends it (no flag needed): a
    // miss on 10..20, then at 3.0 ms (read-ahead at LBN 30) a hit on 20..30
    // raises its limit to 30 + 20 = 50, so 40..50 are buffered by 5.0.
    let mut d = drive(RA20);
    d.serve(SimTime(0), 10, 10, false);
    assert!(d.serve(SimTime(3_000_000), 20, 10, false).cache_hit);
    let s = d.serve(SimTime(50_000_000), 40, 10, false);
    assert!(s.cache_hit && close(ms(&s), 50.3), "{s:?}");
}

#[test]
fn read_ahead_over_requested_minus_one_drops_the_data_once_sent() {
    // DiskSim's -1 (st41601n): a read's own blocks leave the segment once
    // sent; read-ahead data still hits, and is dropped in turn once read.
    for drops in [false, true] {
        let c = format!("{RA20}read_ahead_drops_request = {drops}");
        // Re-reading the miss at 50 ms: a miss from 50.2, sector 10 at 51.0 .. 52.0.
        let mut d = drive(&c);
        d.serve(SimTime(0), 10, 10, false);
        let s = d.serve(SimTime(50_000_000), 10, 10, false);
        assert_eq!(close(ms(&s), 52.0), drops, "{s:?}");
        assert_eq!(close(ms(&s), 50.3), !drops, "{s:?}");
        // The read-ahead's 20..30: a hit either way; read again at 60 ms it
        // misses with -1 (60.2, sector 20 at 62.0 .. 63.0).
        let mut d = drive(&c);
        d.serve(SimTime(0), 10, 10, false);
        assert!(close(ms(&d.serve(SimTime(50_000_000), 20, 10, false)), 50.3));
        let s = d.serve(SimTime(60_000_000), 20, 10, false);
        assert!(close(ms(&s), if drops { 63.0 } else { 60.3 }), "{s:?}");
    }
}

#[test]
fn a_partial_hit_takes_the_hit_overhead_and_stays_connected() {
    // Miss overhead 0.2, hit overhead 1.0, reselect 0.15, bus 0.5 ms a
    // sector. After the miss on 10..20 the read-ahead holds 20..40 (by 4.0).
    // At 53.0 a read of 35..45: its five cached blocks go out after the hit
    // overhead, 54.0 .. 56.5; the mechanism starts after the miss overhead
    // (53.2) and reads 40..45 from sector 40 at 54.0 (54.1 .. 54.5 buffered),
    // so the bus never waits: 54.0 + 10 x 0.5 = 59.0, and no reselect (it
    // never disconnected). With the miss overhead it would be 58.2.
    let c = "caching_enabled = true\ncache_segments = 4\nsegment_size_blocks = 300\nread_ahead_max_blocks = 20\n\
             continuous_read = 3\nread_overhead_after_read_ms = 0.2\nread_hit_overhead_after_read_ms = 1.0\n\
             first_reselect_overhead_ms = 0.15\nbus_sector_ms = 0.5";
    let mut d = drive(c);
    // The miss itself: 1.0 .. 2.0 on the media, data from 1.1, 10 x 0.5 -> 6.1, + reselect.
    assert!(close(ms(&d.serve(SimTime(0), 10, 10, false)), 6.25));
    let s = d.serve(SimTime(53_000_000), 35, 10, false);
    assert!(s.cache_hit && close(ms(&s), 59.0), "{s:?}");
}

#[test]
fn a_stream_detecting_drive_reads_ahead_only_for_a_read_that_continues_the_last() {
    // `read_ahead_when = "stream"`: the miss on 10..20 starts no read-ahead,
    // so 20..30 misses at 50 ms (from 50.2, sector 20 at 52.0 .. 53.0); that
    // read continues the last one, so it reads ahead and 30..40 hits.
    let mut d = drive(&format!("{RA20}read_ahead_when = \"stream\""));
    d.serve(SimTime(0), 10, 10, false);
    let s = d.serve(SimTime(50_000_000), 20, 10, false);
    assert!(!s.cache_hit && close(ms(&s), 53.0), "{s:?}");
    let s = d.serve(SimTime(60_000_000), 30, 10, false);
    assert!(s.cache_hit && close(ms(&s), 60.3), "{s:?}");
    // The default reads ahead after every read: 20..30 is a hit.
    let mut d = drive(RA20);
    d.serve(SimTime(0), 10, 10, false);
    assert!(close(ms(&d.serve(SimTime(50_000_000), 20, 10, false)), 50.3));
}

#[test]
fn a_read_on_the_heads_track_pays_the_same_track_cost_before_its_rotation() {
    // 0.35 ms on the heads' own track. A read of sector 20 at t = 0 (heads on
    // track 0 at sector 0): without it 2.0 .. 2.1 ms; with it the same (the
    // sector is 2 ms away). Of sector 2 at 0: 0.2 .. 0.3 without, but with
    // 0.35 ms to settle sector 2 has passed: the next pass, 10.2 .. 10.3.
    assert!(close(ms(&drive("").serve(SimTime(0), 20, 1, false)), 2.1));
    assert!(close(ms(&drive_settling("", 0.35).serve(SimTime(0), 20, 1, false)), 2.1));
    assert!(close(ms(&drive("").serve(SimTime(0), 2, 1, false)), 0.3));
    assert!(close(ms(&drive_settling("", 0.35).serve(SimTime(0), 2, 1, false)), 10.3));
    // Another track pays its seek or head switch instead (LBN 102: surface 1,
    // 0.5 ms switch, sector 2 passed: 10.2 .. 10.3 either way); writes are not held.
    assert!(close(ms(&drive_settling("", 0.35).serve(SimTime(0), 102, 1, false)), 10.3));
    assert!(close(drive_settling("", 0.35).serve(SimTime(0), 2, 1, true).media_start.0 as f64 / 1e6, 0.2));
    // The exact predictor agrees.
    let d = drive_settling("", 0.35);
    let pred = Predictor::exact(d.model.clone());
    let p = pred.positioning_at(&HeadState::default(), &pred.target(2), false, 1);
    assert!(close((p.total_ns()) as f64 / 1e6, 10.2), "{p:?}");
}

#[test]
fn a_read_ahead_stopped_during_a_head_switch_finishes_the_switch_first() {
    // DiskSim (§3.6 of the semantics reference): a read-ahead is abandoned at
    // once mid-sector, but a seek or head switch under way is completed. A
    // miss on 80..90 at t = 0 reads 8.0 .. 9.0 ms; its read-ahead (11 blocks,
    // 90..101) reads 90..100 until 10.0, then switches to surface 1 (0.5 ms,
    // until 10.5) for LBN 100 (sector 0 there, next under the head at 20.0).
    let c = RA20.replace("read_ahead_max_blocks = 20", "read_ahead_max_blocks = 11");
    let mut d2 = drive(&c);
    assert!(close(ms(&d2.serve(SimTime(0), 80, 10, false)), 9.0));
    // A read of LBN 104 (surface 1, sector 4) at 10.1, during the switch:
    // the heads are free at 10.5, after the 0.2 ms overhead (10.3), so
    // sector 4 (10.4) has passed: the next pass, 20.4 .. 20.5. (Taking the
    // heads as free at 10.1 would read it at 10.4 .. 10.5.)
    let s = d2.serve(SimTime(10_100_000), 104, 1, false);
    assert!(!s.cache_hit && close(ms(&s), 20.5), "{s:?}");
    // After the switch has ended the overhead alone counts: at 10.6 the heads
    // start at 10.8 and read LBN 108 (sector 8) at 10.8 .. 10.9.
    let mut d3 = drive(&c);
    d3.serve(SimTime(0), 80, 10, false);
    let s = d3.serve(SimTime(10_600_000), 108, 1, false);
    assert!(!s.cache_hit && close(ms(&s), 10.9), "{s:?}");
}

#[test]
fn a_drive_that_finishes_the_sector_under_the_head_stops_its_read_ahead_at_the_sector_end() {
    // The hand disk with a 0.53 ms head switch (not a whole number of sectors)
    // and no overheads. A miss on 10..20 at t = 0 reads 1.0 .. 2.0 ms; its
    // read-ahead (3 blocks) reads sectors 20..23 from 2.0 to 2.3. A read of
    // LBN 128 (surface 1, sector 28) arrives at 2.25, mid-sector 22.
    let text = |finish: bool| format!(r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = 2000
rpm = 6000.0
[seek]
table = [[1, 1.0], [9, 1.0]]
head_switch_ms = 0.53
same_track_read_ms = 0.0
[layout]
[[layout.zones]]
first_cylinder = 0
last_cylinder = 9
sectors_per_track = 100
track_skew_sectors = 0.0
cylinder_skew_sectors = 0.0
[controller]
caching_enabled = true
cache_segments = 4
segment_size_blocks = 300
read_ahead_max_blocks = 3
continuous_read = 3
finish_sector_on_stop = {finish}
"#);
    for finish in [false, true] {
        let spec = DiskSpec::from_toml(&text(finish), "hand").unwrap();
        let mut d = Drive::new(Arc::new(DiskModel::new(spec).unwrap()));
        assert!(close(ms(&d.serve(SimTime(0), 10, 10, false)), 2.0));
        let s = d.serve(SimTime(2_250_000), 128, 1, false);
        // Abandoned at once (DiskSim `Stop prefetch in sector = 1`): the
        // switch ends at 2.78, sector 28 comes at 2.8: 2.8 .. 2.9. Finishing
        // sector 22 first (`= 0`): the switch starts at 2.3 and ends at 2.83,
        // sector 28 has begun: the next pass, 12.8 .. 12.9.
        let want = if finish { 12.9 } else { 2.9 };
        assert!(!s.cache_hit && close(ms(&s), want), "finish {finish}: {s:?}");
    }
}

#[test]
fn a_separate_write_segment_holds_every_write_and_no_read() {
    // Two 300-block segments, no read-ahead, bus 0.05 ms a block, read hit
    // overhead 0.4: a hit on 10 blocks is done 0.4 + 10 x 0.05 = 0.9 ms
    // after it arrives. With `Use separate write segment` and the dedicated
    // segment (DiskSim 4.0: "a single segment is statically designated for
    // use by all write requests") one of the two is the writes', so reads
    // have one segment and never hit write data; writes never push read
    // data out.
    let c = |separate: bool| format!("caching_enabled = true\ncache_segments = 2\nsegment_size_blocks = 300\n\
        bus_sector_ms = 0.05\nread_hit_overhead_after_read_ms = 0.4\nread_hit_overhead_after_write_ms = 0.4\n\
        read_hits_on_write_data = true\nseparate_write_segment = {separate}\ndedicated_write_segment = {separate}");
    let t = |ms: f64| SimTime((ms * 1e6).round() as u64);
    // Two reads, then the first again: in the other segment (a hit at 40.9),
    // or, with one segment for reads, gone (a miss).
    for separate in [false, true] {
        let mut d = drive(&c(separate));
        d.serve(t(0.0), 0, 10, false);
        d.serve(t(20.0), 500, 10, false);
        let s = d.serve(t(40.0), 0, 10, false);
        assert_eq!(s.cache_hit, !separate, "{s:?}");
        if !separate {
            assert!(close(ms(&s), 40.9), "{s:?}");
        }
    }
    // A write's data: hit by a read (50.9) only without the write segment.
    for separate in [false, true] {
        let mut d = drive(&c(separate));
        d.serve(t(0.0), 700, 10, true);
        let s = d.serve(t(50.0), 700, 10, false);
        assert_eq!(s.cache_hit, !separate, "{s:?}");
        if !separate {
            assert!(close(ms(&s), 50.9), "{s:?}");
        }
    }
    // A read, two writes elsewhere, the read again: the second write takes
    // the least recently used segment, the read's, unless writes have their own.
    for separate in [false, true] {
        let mut d = drive(&c(separate));
        d.serve(t(0.0), 0, 10, false);
        d.serve(t(20.0), 700, 10, true);
        d.serve(t(40.0), 900, 10, true);
        let s = d.serve(t(60.0), 0, 10, false);
        assert_eq!(s.cache_hit, separate, "{s:?}");
        if separate {
            assert!(close(ms(&s), 60.9), "{s:?}");
        }
    }
}

#[test]
fn use_separate_write_segment_alone_shares_the_segments_as_the_reference_does() {
    // The file's flag without `dedicated_write_segment`: Western Digital's
    // DiskSim reads it and ignores it, so a read hits a write's data (50.0 +
    // 0.4 hit overhead + 10 x 0.05 bus = 50.9 ms) and a second write pushes
    // the read out of the least recently used segment (a miss).
    let c = |dedicated: bool| format!("caching_enabled = true\ncache_segments = 2\nsegment_size_blocks = 300\n\
        bus_sector_ms = 0.05\nread_hit_overhead_after_read_ms = 0.4\nread_hit_overhead_after_write_ms = 0.4\n\
        read_hits_on_write_data = true\nseparate_write_segment = true\ndedicated_write_segment = {dedicated}");
    let t = |ms: f64| SimTime((ms * 1e6).round() as u64);
    let mut d = drive(&c(false));
    d.serve(t(0.0), 700, 10, true);
    let s = d.serve(t(50.0), 700, 10, false);
    assert!(s.cache_hit && close(ms(&s), 50.9), "{s:?}");
    for dedicated in [false, true] {
        let mut d = drive(&c(dedicated));
        d.serve(t(0.0), 0, 10, false);
        d.serve(t(20.0), 700, 10, true);
        d.serve(t(40.0), 900, 10, true);
        let s = d.serve(t(60.0), 0, 10, false);
        assert_eq!(s.cache_hit, dedicated, "dedicated {dedicated}: {s:?}");
    }
}

//! The write path: write-back destages, the reads and writes that wait for
//! them, appending writes that join them, the extra write disconnect and the
//! write-data threshold (DiskSim 4.0, shared/reference/disksim-semantics.md
//! §2.1, §2.4-2.6, §3.5), each timed by hand. The disk: 6000 RPM (10 ms a
//! revolution), 100 sectors a track (0.1 ms a sector, LBN k of track 0 at
//! sector k, no skew), 2 surfaces (200 blocks a cylinder), every seek 1 ms,
//! heads on cylinder 0 / surface 0 at t = 0 when sector 0 is under them.
mod common;

use disksched_core::disk::{DiskModel, DiskSpec, Drive, Service};
use disksched_core::time::SimTime;
use disksched_core::{SimConfig, Simulation};
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

const MS: u64 = 1_000_000;

fn at(ms: f64) -> SimTime {
    SimTime((ms * 1e6).round() as u64)
}

fn ms(t: u64) -> f64 {
    t as f64 / 1e6
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() < 1e-5
}

/// Write-back: 4 segments of 300 blocks, bus 0.05 ms a block, write (hit)
/// overhead 0.3 ms, read miss overhead 0.2, read hit 0.1, read disconnect
/// 0.1, write disconnect 0.1, first reselect 0.15, read completion 0.05.
const WRITE_BACK: &str = "caching_enabled = true\ncache_segments = 4\nsegment_size_blocks = 300\n\
    bus_sector_ms = 0.05\nfast_write_level = 2\nread_hits_on_write_data = true\n\
    write_hit_overhead_after_read_ms = 0.3\nwrite_hit_overhead_after_write_ms = 0.3\n\
    read_overhead_after_write_ms = 0.2\nread_overhead_after_read_ms = 0.2\n\
    read_hit_overhead_after_write_ms = 0.1\nread_hit_overhead_after_read_ms = 0.1\n\
    read_disconnect_after_write_ms = 0.1\nwrite_disconnect_overhead_ms = 0.1\n\
    first_reselect_overhead_ms = 0.15\nread_completion_overhead_ms = 0.05";

/// The parts of a service add up to it (done - start of service).
fn adds_up(s: &Service, start: SimTime) {
    let parts = s.overhead_ns + s.destage_wait_ns + s.seek_ns + s.rotation_ns + s.transfer_ns + s.bus_wait_ns;
    assert_eq!(parts, s.done.0 - start.0, "{s:?}");
}

#[test]
fn a_destage_positions_during_the_data_phase_and_writes_as_the_data_arrives() {
    // 8 blocks to LBN 5 at t = 0: overhead 0.3, data 0.3 .. 0.7, reported at
    // 0.7. The destage positions from 0.3 (no seek), its first block is in at
    // 0.35 and sector 5 comes at 0.5: media 0.5 .. 1.3, before and after the
    // report. (Starting only after the data, at 0.7, it would wait for the
    // next pass: 10.5 .. 11.3.)
    let mut d = drive(WRITE_BACK);
    let s = d.serve(SimTime(0), 5, 8, true);
    assert!(close(ms(s.done.0), 0.7) && s.media_start.0 == 0, "{s:?}");
    assert!(close(ms(d.state.head.time.0), 1.3), "{:?}", d.state);
    assert_eq!((s.destage_seek_ns, s.destage_rotation_ns, s.destage_transfer_ns), (0, (0.2 * 1e6) as u64, (0.8 * 1e6) as u64));
    adds_up(&s, SimTime(0));
    // Data slower than the media: bus 0.2 ms a block, 8 blocks from LBN 5.
    // Block i is in at 0.3 + 0.2 (i + 1); the head reaches it at 0.5 + 0.1 i:
    // block 0 (0.5) is in time, block 1 (in at 0.7, head at 0.6) is not, and
    // the write, in LBN order, goes on at the next pass: 10.5 .. 11.3.
    let mut d = drive(&WRITE_BACK.replace("bus_sector_ms = 0.05", "bus_sector_ms = 0.2"));
    let s = d.serve(SimTime(0), 5, 8, true);
    assert!(close(ms(s.done.0), 0.3 + 1.6), "{s:?}");
    assert!(close(ms(d.state.head.time.0), 11.3), "{:?}", d.state);
}

#[test]
fn reads_arriving_during_a_destage_wait_for_it() {
    // The write of 8 blocks to LBN 50 at t = 0 is reported at 0.7; its
    // destage writes sectors 50..57 at 5.0 .. 5.8.
    let write = || {
        let mut d = drive(WRITE_BACK);
        let s = d.serve(SimTime(0), 50, 8, true);
        assert!(close(ms(s.done.0), 0.7));
        d
    };
    // A read of the same blocks at 1.0 hits the buffer but cannot use the
    // bus during the destage: miss overhead 0.2 + read disconnect 0.1, wait
    // until 5.8, reselect 0.15, 8 blocks 0.4, completion 0.05: 6.4.
    let mut d = write();
    let s = d.serve(at(1.0), 50, 8, false);
    assert!(s.cache_hit && close(ms(s.done.0), 6.4), "{s:?}");
    assert!(close(ms(s.destage_wait_ns), 5.8 - 1.2), "{s:?}");
    adds_up(&s, at(1.0));
    // Once the destage has ended it is a plain hit: 10.0 + 0.1 + 0.4 + 0.05.
    let mut d = write();
    let s = d.serve(at(10.0), 50, 8, false);
    assert!(s.cache_hit && close(ms(s.done.0), 10.55) && s.destage_wait_ns == 0, "{s:?}");
    // A read miss of LBN 20 at 1.0: the mechanism is free at 5.8, sector 20
    // next comes at 12.0: media 12.0 .. 12.1, bus 0.05, reselect 0.15,
    // completion 0.05: 12.35; it waited 5.8 - 1.2 for the destage.
    let mut d = write();
    let s = d.serve(at(1.0), 20, 1, false);
    assert!(close(ms(s.media_start.0), 12.0) && close(ms(s.done.0), 12.35), "{s:?}");
    assert!(close(ms(s.destage_wait_ns), 4.6), "{s:?}");
    adds_up(&s, at(1.0));
}

#[test]
fn an_appending_write_joins_the_destage_and_others_wait_for_it() {
    let write = |controller: &str| {
        let mut d = drive(controller);
        assert!(close(ms(d.serve(SimTime(0), 50, 8, true).done.0), 0.7));
        d
    };
    // LBN 58 at 1.0 continues the destage (5.0 .. 5.8): reported after its
    // own overhead and data (1.0 + 0.3 + 0.4 = 1.7); the heads go straight
    // on to sector 58: media 5.8 .. 6.6.
    let mut d = write(WRITE_BACK);
    let s = d.serve(at(1.0), 58, 8, true);
    assert!(close(ms(s.done.0), 1.7) && s.destage_wait_ns == 0, "{s:?}");
    assert!(close(ms(d.state.head.time.0), 6.6), "{:?}", d.state);
    assert!(s.destage_rotation_ns < 100, "{s:?}");
    // Without `Combine seq writes` it waits like any other write (below): 6.35.
    let mut d = write(&format!("{WRITE_BACK}\ncombine_seq_writes = false"));
    assert!(close(ms(d.serve(at(1.0), 58, 8, true).done.0), 6.35));
    // LBN 70 at 1.0 does not continue it: overhead 0.3, disconnect 0.1, wait
    // for the destage's end (5.8), reselect 0.15, data 5.95 .. 6.35, reported
    // then. Its own destage: the heads are free at 5.8, its first block is in
    // at 6.0, sector 70 comes at 7.0: media 7.0 .. 7.8.
    let mut d = write(WRITE_BACK);
    let s = d.serve(at(1.0), 70, 8, true);
    assert!(close(ms(s.done.0), 6.35), "{s:?}");
    assert!(close(ms(s.destage_wait_ns), 5.8 - 1.3), "{s:?}");
    assert!(close(ms(d.state.head.time.0), 7.8), "{:?}", d.state);
    adds_up(&s, at(1.0));
    // After the destage has ended the same continuation is an ordinary
    // write: reported at 6.0 + 0.7; its destage misses sector 58 (5.8) and
    // takes the next pass, 15.8 .. 16.6.
    let mut d = write(WRITE_BACK);
    let s = d.serve(at(6.0), 58, 8, true);
    assert!(close(ms(s.done.0), 6.7), "{s:?}");
    assert!(close(ms(d.state.head.time.0), 16.6), "{:?}", d.state);
}

#[test]
fn the_minimum_seek_delay_spares_only_a_write_appending_to_a_destage() {
    // Minimum seek delay 1.0 ms. The first write (LBN 50) is held until
    // 0.3 + 1.0 = 1.3, sector 50 at 5.0 is still ahead: 5.0 .. 5.8. A write
    // appending to it at 1.0 is not held: 5.8 .. 6.6 (held it would lose
    // sector 58 and take 15.8 .. 16.6).
    let c = format!("{WRITE_BACK}\nminimum_seek_delay_ms = 1.0");
    let mut d = drive(&c);
    d.serve(SimTime(0), 50, 8, true);
    assert!(close(ms(d.state.head.time.0), 5.8));
    d.serve(at(1.0), 58, 8, true);
    assert!(close(ms(d.state.head.time.0), 6.6), "{:?}", d.state);
    // Write-through: every write is held, a sequential one too. 0..2 at t = 0
    // misses sector 0 (held to 1.0) and writes 10.0 .. 10.2; LBN 2 at 10.2
    // is held to 11.2 and takes the next pass of sector 2: 20.2.
    let mut d = drive("minimum_seek_delay_ms = 1.0");
    assert!(close(ms(d.serve(SimTime(0), 0, 2, true).done.0), 10.2));
    assert!(close(ms(d.serve(at(10.2), 2, 1, true).media_start.0), 20.2));
    // Reads are never held: LBN 8 on the same track at 10.2 pays only the
    // same-track settle (0.5, the head switch here) and reads sector 8 at
    // 10.8 (held 1.0 it would wait for the next pass, 20.8).
    let mut d = drive("minimum_seek_delay_ms = 1.0");
    d.serve(SimTime(0), 0, 2, true);
    assert!(close(ms(d.serve(at(10.2), 8, 1, false).media_start.0), 10.8));
}

/// HP-like extra write disconnect: command 0.3, disconnect 0.1, delay 0.4,
/// first reselect 0.2, second disconnect 0.1, seek delta 0.25, other
/// reselect 0.05; ordinary write overhead 0.15, write disconnect 0.08,
/// write completion 0.02, bus 0.05 ms a block.
const EXTRADISC: &str = "bus_sector_ms = 0.05\nextra_write_disconnect = true\nseparate_write_segment = true\n\
    extradisc_command_overhead_ms = 0.3\nextradisc_disconnect_overhead_ms = 0.1\n\
    extradisc_inter_disconnect_delay_ms = 0.4\nfirst_reselect_overhead_ms = 0.2\n\
    extradisc_second_disconnect_overhead_ms = 0.1\nextradisc_seek_delta_ms = 0.25\n\
    other_reselect_overhead_ms = 0.05\nwrite_overhead_after_read_ms = 0.15\n\
    write_overhead_after_write_ms = 0.15\nwrite_disconnect_overhead_ms = 0.08\n\
    write_completion_overhead_ms = 0.02";

#[test]
fn the_extra_write_disconnect_is_taken_by_a_write_after_a_write_that_it_does_not_continue() {
    // First write (after nothing: ordinary path): LBN 0 at t = 0, overhead
    // 0.15, its block in at 0.2, sector 0 next at 10.0: media 10.0 .. 10.1;
    // status after the media: first reselect 0.2 + completion 0.02 = 10.32.
    let first = || {
        let mut d = drive(EXTRADISC);
        let s = d.serve(SimTime(0), 0, 1, true);
        assert!(close(ms(s.done.0), 10.32), "{s:?}");
        d
    };
    // A write of LBN 11 at 20.0 follows a write and does not continue it:
    // data from 20.0 + 0.3 + 0.1 + 0.4 + 0.2 = 21.0, its block in at 21.05;
    // the heads may start at 20.55; sector 11 at 21.1 is caught (the media
    // write does not wait for the 0.1 second disconnect). Status: the
    // second disconnect has ended at 21.15, the media at 21.2; other
    // reselect 0.05 + completion 0.02: 21.27.
    let mut d = first();
    let s = d.serve(at(20.0), 11, 1, true);
    assert!(close(ms(s.media_start.0), 21.1) && close(ms(s.done.0), 21.27), "{s:?}");
    adds_up(&s, at(20.0));
    // Its positioning starts command + seek delta after arrival (20.55): a
    // seek to cylinder 1 (1 ms) ends at 21.55, so LBN 215 (cylinder 1,
    // sector 15, at 21.5) waits for the next pass (31.5) while LBN 216
    // (21.6) is caught. (From the end of the command alone, 20.3, both would be.)
    let mut d = first();
    assert!(close(ms(d.serve(at(20.0), 215, 1, true).media_start.0), 31.5));
    let mut d = first();
    assert!(close(ms(d.serve(at(20.0), 216, 1, true).media_start.0), 21.6));
    // Not taken by a write that continues the last one (LBN 1 at 20.0:
    // ordinary overhead 0.15, block in at 20.2, sector 1 at 20.1 missed,
    // next pass 30.1; status 30.2 + 0.2 + 0.02).
    let mut d = first();
    let s = d.serve(at(20.0), 1, 1, true);
    assert!(close(ms(s.media_start.0), 30.1) && close(ms(s.done.0), 30.42), "{s:?}");
    // Nor by a write after a read: LBN 3 at 20.0 after a read of LBN 50 is
    // in at 20.2 and catches sector 3 at 20.3.
    let mut d = first();
    d.serve(at(12.0), 50, 1, false);
    assert!(close(ms(d.serve(at(20.0), 3, 1, true).media_start.0), 20.3));
}

#[test]
fn extra_write_disconnect_drives_write_nothing_until_ten_or_fifteen_blocks_are_in() {
    // Write overhead 0, bus 0.05 ms a block, a fresh drive (ordinary path).
    // n < 45: the first sector waits for min(n, 10) blocks; n >= 45: 15.
    let c = "bus_sector_ms = 0.05\nextra_write_disconnect = true\nseparate_write_segment = true";
    let start = |c: &str, lbn: u64, n: u32| ms(drive(c).serve(SimTime(0), lbn, n, true).media_start.0);
    // 20 blocks: 10 in at 0.5, so sector 5 (0.5) is written, sector 4 (0.4) waits a revolution.
    assert!(close(start(c, 5, 20), 0.5) && close(start(c, 4, 20), 10.4));
    // 5 blocks: all 5 in at 0.25: sector 3 (0.3) caught, sector 2 not.
    assert!(close(start(c, 3, 5), 0.3) && close(start(c, 2, 5), 10.2));
    // 50 blocks: 15 in at 0.75: sector 8 caught, sector 7 not.
    assert!(close(start(c, 8, 50), 0.8) && close(start(c, 7, 50), 10.7));
    // Without the extra write disconnect only the first block is awaited (0.05): sector 1.
    assert!(close(start("bus_sector_ms = 0.05", 1, 20), 0.1));
}

fn open_fcfs(requests: u64) -> disksched_core::RunResult {
    let toml = format!("seed = 1\n[disk]\nmodel = \"atlas10k\"\n[host]\nscheduler = \"fcfs\"\nqueue_threshold = 1\n\
        [workload]\nkind = \"open\"\ninterarrival_ms = 10.0\narrivals = \"poisson\"\nsize_kb = 4.0\n\
        size_dist = \"constant\"\nread_fraction = 0.6666666666666666\n[run]\nrequests = {requests}\nrecords = true\n");
    let cfg: SimConfig = common::config(&toml);
    Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

#[test]
fn open_fcfs_on_a_write_back_drive_reaches_a_steady_state_and_its_parts_add_up() {
    // Atlas 10K (write-back, one write segment), 4 KB requests every 10 ms
    // (Poisson), a third writes: about 90% busy. Destages no longer pile up
    // behind the reads: no single service waits for more than one destage,
    // and the mean response of the first and second half of a long run agree.
    let r = open_fcfs(200_000);
    let rec = r.records.as_ref().unwrap();
    let n = rec.len();
    let resp: Vec<f64> = (0..n).map(|i| ms(rec.done_ns[i] - rec.arrival_ns[i])).collect();
    let half = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (a, b) = (half(&resp[..n / 2]), half(&resp[n / 2..]));
    assert!((a - b).abs() / a.max(b) < 0.15, "first half {a:.1} ms, second half {b:.1} ms");
    // A full-stroke seek, a revolution, a destage's worth of both, and bus time: 40 ms.
    let max_service = (0..n).map(|i| rec.done_ns[i] - rec.started_ns[i]).max().unwrap();
    assert!(max_service < 40 * MS, "longest service {} ms", ms(max_service));
    // The summary's parts of a service add up to the mean service within 1%,
    // and the destages it reports are the writes' (a third of the requests).
    let s = &r.summary;
    let parts = s.mean_overhead_ms + s.mean_destage_wait_ms + s.mean_seek_ms + s.mean_rotation_ms + s.mean_transfer_ms + s.mean_bus_ms;
    assert!((parts - s.mean_service_ms).abs() < 0.01 * s.mean_service_ms, "{parts} vs {}", s.mean_service_ms);
    assert!(s.mean_destage_wait_ms > 0.5, "{s:?}");
    let writes = rec.is_write.iter().filter(|&&w| w).count() as u64;
    assert!(s.destages as f64 > 0.95 * s.writes as f64 && s.writes <= writes, "{} destages, {} writes", s.destages, s.writes);
    assert!(s.mean_destage_seek_ms > 1.0 && s.mean_destage_transfer_ms > 0.0, "{s:?}");
}

#[test]
fn the_exact_belief_follows_a_write_back_drive() {
    // A host's exact belief (the model without the read cache, as the
    // router advances it) must put the heads where the drive's destages
    // leave them: random writes and reads at random gaps, many arriving
    // during a destage. Every write's report and every read's first sector
    // agree with the drive; a read arriving after the destage is predicted
    // exactly by the exact predictor from the belief.
    use disksched_core::disk::{DriveState, HeadState, Predictor};
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut d = drive(&WRITE_BACK.replace("read_hits_on_write_data = true", "read_hits_on_write_data = false"));
    let model = d.model.clone();
    let pred = Predictor::exact(model.clone());
    let (mut belief, mut pieces, mut rng) = (DriveState::default(), disksched_core::disk::MappedPieces::default(), StdRng::seed_from_u64(3));
    let (mut t, mut during, mut predicted) = (0u64, 0, 0);
    for _ in 0..3000 {
        let (lbn, blocks, is_write) = (rng.gen_range(0..1900u64), rng.gen_range(1..40u32), rng.gen_bool(0.5));
        let destaging = d.state.head.time.0 > t;
        let head = HeadState { time: belief.head.time.max(SimTime(t)), last_was_write: belief.last_was_write, ..belief.head };
        let want = (!is_write && !destaging).then(|| t + pred.positioning_at(&head, &pred.target(lbn), false, blocks).total_ns());
        belief.head.time = belief.head.time.max(SimTime(t));
        let b = model.serve(&mut belief, SimTime(t), lbn, blocks, is_write, &mut pieces);
        let s = d.serve(SimTime(t), lbn, blocks, is_write);
        if is_write {
            assert_eq!(b.done, s.done, "write {lbn}+{blocks} at {t}: {b:?} vs {s:?}");
            assert_eq!((belief.head.cylinder, belief.head.head, belief.head.time), (d.state.head.cylinder, d.state.head.head, d.state.head.time));
        } else if !s.cache_hit {
            assert_eq!(b.media_start, s.media_start, "read {lbn}+{blocks} at {t}");
            if let Some(want) = want {
                assert!(want.abs_diff(s.media_start.0) <= 2, "read {lbn}+{blocks} at {t}: predicted {want}, drive {s:?}");
                predicted += 1;
            }
        } else {
            // The belief has no read cache: it read from the media what the
            // drive found in its buffer (outside this test's subject).
            belief = d.state;
        }
        during += destaging as u32;
        t = s.done.0 + rng.gen_range(0..8 * MS);
    }
    assert!(during > 500 && predicted > 300, "{during} during a destage, {predicted} predicted");
}

#[test]
fn a_stream_of_appending_writes_goes_on_sector_after_sector() {
    // Atlas 10K (sector times are not whole ns): 8-block writes, each issued
    // when the last is reported (about 1 ms apart), all while the first
    // destage still waits for its sector (several ms). Each continuation
    // whose data is in before the destage reaches it is written straight
    // after the one before: no rotation, no wait, however many have joined
    // (rounding must not add up to a lost revolution).
    let mut d = Drive::new(common::atlas());
    let first = d.serve(SimTime(0), 100_000, 8, true);
    let mut t = first.done.0;
    let mut joined = 0;
    for i in 1..40u64 {
        let before = d.state.head.time.0;
        let s = d.serve(SimTime(t), 100_000 + 8 * i, 8, true);
        // Its data all in (it is reported then) before the destage gets to it.
        if s.done.0 < before {
            assert!(s.destage_rotation_ns < 1_000 && s.destage_wait_ns == 0, "write {i}: {s:?}");
            joined += 1;
        }
        t = s.done.0;
    }
    assert!(joined >= 4, "{joined} joined");
}

//! The one place that times a media access (`disk::timing`): positioning by
//! kind of access, rotational wait and transfer, checked against arithmetic
//! done by hand. The disk: 6000 RPM (10 ms a revolution), 100 sectors a
//! track (0.1 ms a sector, no skew: LBN k of track 0 at sector k, track 1 is
//! surface 1 of cylinder 0), seeks of 1 ms at any distance, head switch
//! 0.5 ms, write settle 0.2 ms, same-track read cost 0.3 ms, minimum seek
//! delay 1.5 ms. Sector 0 is under the heads at t = 0.

use disksched_core::disk::{Access, DiskModel, DiskSpec, HeadState, Predictor, WriteData};
use disksched_core::time::SimTime;
use std::sync::Arc;

const MS: u64 = 1_000_000;

fn model() -> Arc<DiskModel> {
    model_with("", "", 2000)
}

/// The hand disk with more zone keys (`zone`), controller keys (`controller`) and `blocks` LBNs.
fn model_with(zone: &str, controller: &str, blocks: u64) -> Arc<DiskModel> {
    let text = format!(r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = {blocks}
rpm = 6000.0
[seek]
table = [[1, 1.0], [9, 1.0]]
head_switch_ms = 0.5
write_settle_ms = 0.2
same_track_read_ms = 0.3
[layout]
[[layout.zones]]
first_cylinder = 0
last_cylinder = 9
sectors_per_track = 100
cylinder_skew_sectors = 0.0
{}
[controller]
minimum_seek_delay_ms = 1.5
{controller}
"#, if zone.contains("track_skew_sectors") { zone.to_string() } else { format!("track_skew_sectors = 0.0\n{zone}") });
    Arc::new(DiskModel::new(DiskSpec::from_toml(&text, "hand").unwrap()).unwrap())
}

#[test]
fn each_kind_of_access_pays_its_own_fixed_costs() {
    let m = model();
    let p = |from, to, access| m.position_ns(from, to, access, 0);
    // A new read: the same-track cost on the heads' track, else a head switch or a seek.
    assert_eq!(p((0, 0), (0, 0), Access::Read), 3 * MS / 10);
    assert_eq!(p((0, 0), (0, 1), Access::Read), MS / 2);
    assert_eq!(p((0, 0), (3, 0), Access::Read), MS);
    // Going on with work under way: nothing on the same track.
    assert_eq!(p((0, 0), (0, 0), Access::Onward { write: false }), 0);
    assert_eq!(p((0, 0), (0, 1), Access::Onward { write: false }), MS / 2);
    assert_eq!(p((0, 0), (0, 1), Access::Onward { write: true }), MS / 2 + MS / 5);
    // A write settles; a new one waits at least the minimum seek delay.
    assert_eq!(p((0, 0), (3, 0), Access::AppendedWrite), MS + MS / 5);
    assert_eq!(p((0, 0), (3, 0), Access::Write), 3 * MS / 2);
    assert_eq!(p((0, 0), (0, 0), Access::Write), 3 * MS / 2);
    assert_eq!(p((0, 0), (0, 0), Access::AppendedWrite), 0);
    // A belief's margin goes on every movement of the heads, not on staying.
    let c = 50_000;
    assert_eq!(m.position_ns((0, 0), (3, 0), Access::Read, c), MS + c);
    assert_eq!(m.position_ns((0, 0), (0, 0), Access::Read, c), 3 * MS / 10);
    assert_eq!(m.position_ns((0, 0), (0, 0), Access::Onward { write: false }, c), 0);
    assert_eq!(m.position_ns((0, 0), (3, 0), Access::AppendedWrite, c), MS + MS / 5 + c);
}

#[test]
fn a_read_waits_for_its_first_sector_and_transfers_sector_by_sector() {
    let m = model();
    let mut pieces = Vec::new();
    // LBNs 30..40 from the heads' own track at t = 0: 0.3 ms same-track
    // cost, sector 30 at 3.0 ms, ten sectors of 0.1 ms.
    let a = m.media_access((0, 0), 0, None, 30, 10, false, &mut pieces);
    assert_eq!((a.seek_ns, a.rotation_ns, a.media_start, a.media_end), (3 * MS / 10, 27 * MS / 10, 3 * MS, 4 * MS));
    // From cylinder 3: a 1 ms seek, then sector 30 at 3.0 ms.
    let a = m.media_access((3, 0), 0, None, 30, 10, false, &mut pieces);
    assert_eq!((a.seek_ns, a.rotation_ns, a.media_start), (MS, 2 * MS, 3 * MS));
    // Started at 2.95 ms on the same track: sector 30 is missed (ready at
    // 3.25 ms) and comes round at 13.0 ms.
    let t = 2 * MS + 95 * MS / 100;
    let a = m.media_access((0, 0), t, None, 30, 10, false, &mut pieces);
    assert_eq!((a.media_start, a.rotation_ns), (13 * MS, 13 * MS - t - 3 * MS / 10));
}

#[test]
fn a_read_crossing_a_track_pays_the_head_switch_and_the_wait_for_sector_zero() {
    let m = model();
    let mut pieces = Vec::new();
    // LBNs 95..105: sectors 95-99 of track 0 from 9.5 to 10.0 ms, a 0.5 ms
    // head switch to surface 1, whose sector 0 (no skew) next passes at
    // 20.0 ms; five sectors more end at 20.5 ms, on (0, 1).
    let a = m.media_access((0, 0), 0, None, 95, 10, false, &mut pieces);
    assert_eq!((a.media_start, a.media_end, a.cylinder, a.head), (19 * MS / 2, 41 * MS / 2, 0, 1));
}

#[test]
fn a_write_pays_settle_and_the_minimum_seek_delay_then_waits_for_its_data() {
    let m = model();
    let mut pieces = Vec::new();
    // Data already in: positioning max(0.2 ms settle after a 0 ms move, 1.5 ms) = 1.5 ms; sector 30 at 3.0 ms.
    let data = WriteData { data_from: 0, appends: false, first_blocks: 1 };
    let a = m.media_access((0, 0), 0, Some(data), 30, 10, true, &mut pieces);
    assert_eq!((a.seek_ns, a.media_start, a.media_end), (3 * MS / 2, 3 * MS, 4 * MS));
    // Appending: no minimum delay, no settle on the same track; sector 30 at 3.0 ms still.
    let a = m.media_access((0, 0), 0, Some(WriteData { appends: true, ..data }), 30, 10, true, &mut pieces);
    assert_eq!((a.seek_ns, a.media_start), (0, 3 * MS));
    // Its first block arrives only at 3.5 ms (the bus's default sector time
    // is 0; data from 3.5 ms): sector 30 is missed and comes round at 13.0 ms.
    let a = m.media_access((0, 0), 0, Some(WriteData { data_from: 7 * MS / 2, ..data }), 30, 10, true, &mut pieces);
    assert_eq!(a.media_start, 13 * MS);
}

#[test]
fn the_predictor_positions_as_the_drive_does_with_its_margin_on_moves_only() {
    let m = model();
    let mut pieces = Vec::new();
    let mut belief = Predictor::exact(m.clone());
    for (from, lbn) in [((0, 0), 30u64), ((3, 0), 30), ((0, 1), 30), ((0, 0), 130), ((9, 1), 1999)] {
        let head = HeadState { cylinder: from.0, head: from.1, time: SimTime(0), ..Default::default() };
        let a = m.media_access(from, 0, None, lbn, 1, false, &mut pieces);
        belief.seek_conservatism_ns = 0;
        let exact = belief.positioning_at(&head, &belief.target(lbn), false, 1);
        assert_eq!((exact.seek_ns, exact.total_ns()), (a.seek_ns, a.media_start), "from {from:?} lbn {lbn}");
        belief.seek_conservatism_ns = 40_000;
        let wary = belief.positioning_at(&head, &belief.target(lbn), false, 1);
        let moved = from != (a.cylinder, a.head);
        assert_eq!(wary.seek_ns, a.seek_ns + if moved { 40_000 } else { 0 }, "from {from:?} lbn {lbn}");
    }
}

// Mutation testing (docs/mutation-testing.md) of `media_access_sending`: a
// bus time above zero and write thresholds above one block, the cases the
// tests above leave at their defaults.

#[test]
fn a_write_starts_its_media_access_once_its_first_blocks_are_in() {
    // Bus 0.25 ms a block; the first sector may be written once 10 blocks
    // are in: data from t = 0, so at 10 x 0.25 = 2.5 ms, later than the
    // 1.5 ms minimum seek delay. LBN 20 (sector 20) passes at 2.0 ms, too
    // early, and next at 12.0 ms: 10.5 ms of rotation after the 1.5 ms.
    let m = model_with("", "bus_sector_ms = 0.25", 2000);
    let mut pieces = Vec::new();
    let data = WriteData { data_from: 0, appends: false, first_blocks: 10 };
    let a = m.media_access((0, 0), 0, Some(data), 20, 10, true, &mut pieces);
    assert_eq!((a.seek_ns, a.rotation_ns, a.media_start), (3 * MS / 2, 21 * MS / 2, 12 * MS));
    // All ten blocks were in by 2.5 ms: ten sectors of 0.1 ms, no wait.
    assert_eq!(a.media_end, 13 * MS);
}

#[test]
fn data_in_at_the_very_nanosecond_its_sector_arrives_is_written_on_this_pass() {
    // As above, the first 10 blocks in at exactly 2.5 ms, when sector 25
    // (LBN 25) passes: written at once, 2.5 .. 3.5 ms, not a revolution later.
    let m = model_with("", "bus_sector_ms = 0.25", 2000);
    let mut pieces = Vec::new();
    let data = WriteData { data_from: 0, appends: false, first_blocks: 10 };
    let a = m.media_access((0, 0), 0, Some(data), 25, 10, true, &mut pieces);
    assert_eq!((a.media_start, a.media_end), (5 * MS / 2, 7 * MS / 2));
}

#[test]
fn a_write_crossing_a_track_waits_for_the_next_blocks_data_not_the_last_sent() {
    // Track 1's first LBN (100) 9 sectors on (track skew 9), and the 15 slots
    // after it slipped: LBN 101 is physical sector 9 + 16 = 25. The write of
    // LBNs 98..102 has two pieces: sectors 98-99 of track 0 (2 blocks), and
    // sectors 9..25 of track 1 (2 blocks over 17 sectors).
    let slips: Vec<String> = (101..=115).map(|s| s.to_string()).collect();
    let m = model_with(&format!("track_skew_sectors = 9.0\nslips = [{}]", slips.join(", ")), "bus_sector_ms = 1.2", 1985);
    let mut pieces = Vec::new();
    m.layout.pieces(98, 4, &mut pieces);
    assert_eq!(pieces.iter().map(|p| (p.head, p.first_sector, p.span_sectors, p.blocks)).collect::<Vec<_>>(),
               vec![(0, 98, 2, 2), (1, 9, 17, 2)], "the layout this test assumes");
    // Data from 7.4 ms at 1.2 ms a block: block 1 in at 8.6, 2 at 9.8, 3 at 11.0, 4 at 12.2.
    let data = WriteData { data_from: 74 * MS / 10, appends: false, first_blocks: 1 };
    let a = m.media_access((0, 0), 0, Some(data), 98, 4, true, &mut pieces);
    // Ready at max(1.5 ms minimum seek delay, 8.6) = 8.6: sector 98 passes at
    // 9.8 (block 2, the piece's last, in at 9.8 <= 9.9, when sector 99 comes).
    assert_eq!(a.media_start, 98 * MS / 10);
    // Piece 1 ends at 10.0; head switch 0.5 + write settle 0.2 = 10.7;
    // sector 9 of track 1 passes at 10.9, but the piece's first block
    // (block 3) is in only at 11.0: a revolution, 20.9 .. 20.9 + 17 x 0.1 = 22.6 ms.
    // (Waiting only for block 2, already sent, it would write at once: 12.6 ms.)
    assert_eq!((a.media_end, a.head), (226 * MS / 10, 1));
}

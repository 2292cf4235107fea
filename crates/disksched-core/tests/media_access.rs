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
    let text = r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = 2000
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
track_skew_sectors = 0.0
cylinder_skew_sectors = 0.0
[controller]
minimum_seek_delay_ms = 1.5
"#;
    Arc::new(DiskModel::new(DiskSpec::from_toml(text, "hand").unwrap()).unwrap())
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

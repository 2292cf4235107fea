//! Mechanics and drive timing against independent arithmetic.
mod common;

use disksched_core::disk::spec::{DiskSpec, SeekSpec};
use disksched_core::disk::{mechanics::REV, Mechanics};
use disksched_core::time::SimTime;

#[test]
fn seek_table_reproduces_the_disksim_curve() {
    let m = common::atlas();
    let pts = common::seek_points("atlas10k.seek");
    assert_eq!(pts.len(), 138);
    for d in 1..m.layout.cylinders() {
        let want_ns = common::interp(&pts, d as f64) * 1e6;
        let got = m.mech.seek_ns(d) as f64;
        assert!((got - want_ns).abs() <= 1.0, "distance {d}: {got} ns vs {want_ns} ns");
    }
    assert_eq!(m.mech.seek_ns(0), 0);
}

#[test]
fn three_point_curve_hits_its_points_and_average() {
    let mut spec: DiskSpec = (*common::atlas()).spec.clone();
    spec.seek = SeekSpec {
        table: None,
        single_cylinder_ms: Some(1.0),
        average_ms: Some(5.0),
        full_stroke_ms: Some(11.0),
        head_switch_ms: 0.2,
        write_settle_ms: 0.0,
        ..Default::default()
    };
    let mech = Mechanics::new(&spec).unwrap();
    let n = spec.cylinders as u64;
    assert!((mech.seek_ns(1) as f64 - 1e6).abs() <= 1.0);
    assert!((mech.seek_ns(spec.cylinders - 1) as f64 - 11e6).abs() <= 1.0);
    // Mean over uniformly random ordered pairs of distinct cylinders: distance d occurs 2(n-d) times.
    let (mut sum, mut w) = (0.0, 0.0);
    for d in 1..n {
        sum += 2.0 * (n - d) as f64 * mech.seek_ns(d as u32) as f64;
        w += 2.0 * (n - d) as f64;
    }
    assert!((sum / w / 1e6 - 5.0).abs() < 0.001, "average {}", sum / w / 1e6);
}

#[test]
fn rotation_is_exact() {
    let m = common::atlas();
    let mech = &m.mech;
    // 10025 RPM: one revolution is 60e9/10025 = 5,985,037.4 ns.
    assert_eq!(mech.revolution_ns(), 5_985_038);
    assert_eq!(mech.phase_at(SimTime(0)), 0);
    // After 10025 revolutions (exactly one minute) the platter is back at phase 0.
    assert_eq!(mech.phase_at(SimTime(60_000_000_000)), 0);
    // Half a revolution later it is at half phase (to within one ns of rotation).
    let half = mech.phase_at(SimTime(2_992_519));
    assert!((half as i128 - (REV / 2) as i128).abs() < 10_025_000);
    // Rotating a full track's worth of sectors takes one revolution.
    assert_eq!(mech.sectors_ns(334, 334), 5_985_038);
}

/// Phases and sector times in 64-bit arithmetic equal the exact 128-bit
/// definitions (t x rpm_milli mod REV; ceil(sectors x REV / (spt x rpm_milli))).
#[test]
fn phase_and_sector_times_match_the_128_bit_definition() {
    use disksched_core::disk::{builtin, DiskModel};
    for name in builtin::names() {
        let m = DiskModel::new(builtin::resolve(name, None).unwrap()).unwrap();
        let mech = &m.mech;
        let r = mech.rpm_milli as u128;
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = x >> (x % 40); // from huge to small times
            assert_eq!(mech.phase_at(SimTime(t)) as u128, t as u128 * r % REV as u128, "{name}: t {t}");
            let phase = (x >> 7) % REV;
            let dt = (x >> 13) >> (x % 50);
            assert_eq!(mech.phase_after(phase, dt) as u128, (phase as u128 + dt as u128 * r) % REV as u128, "{name}");
            let (sectors, spt) = ((x >> 20) % 5000, 1 + (x >> 40) as u32 % 2000);
            assert_eq!(mech.sectors_ns(sectors, spt) as u128, (sectors as u128 * REV as u128).div_ceil(spt as u128 * r), "{name}");
        }
    }
}

/// Whole sectors passed in a time (`sectors_in`), against hand arithmetic:
/// atlas10k turns at 10,025 rpm, 5,985,037.4 ns a revolution; on a track
/// of 334 sectors a sector passes in 17,919.3 ns. Times long enough that the
/// 64-bit product overflows take the 128-bit path to the same floor.
#[test]
fn sectors_in_a_time_floors_the_exact_count() {
    let m = common::atlas();
    let mech = &m.mech;
    assert_eq!(mech.rpm_milli, 10_025_000);
    let sector_ns = 60e9 / 10_025.0 / 334.0;
    for dt in [0u64, 1, 17_919, 17_920, 35_839, 35_840, 5_985_037, 5_985_038, 1_000_000_000, 3_000_000_000, u64::MAX / 1000] {
        let want = (dt as f64 / sector_ns).floor() as u64;
        // (f64 rounds near a boundary: accept the exact 128-bit quotient there.)
        let exact = (dt as u128 * 334 * 10_025_000 / REV as u128) as u64;
        assert_eq!(mech.sectors_in(dt, 334), exact, "{dt} ns");
        assert!(exact.abs_diff(want) <= 1, "{dt} ns: {exact} vs {want}");
    }
    assert_eq!(mech.sectors_in(17_919, 334), 0);
    assert_eq!(mech.sectors_in(17_920, 334), 1);
    assert_eq!(mech.sectors_in(5_985_038, 334), 334);
}

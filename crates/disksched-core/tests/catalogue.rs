//! The built-in catalogue against DiskSim's files and DiskSim's definitions:
//! capacity of every drive computed here from the model file's zones, spares
//! and slips (not by the layout code), the validation set-ups behind the
//! built-in names, seek-curve extrapolation, serpentine parity and the
//! spare-less last range of sparing scheme 8.
mod common;

use disksched_core::disk::spec::DiskSpec;
use disksched_core::disk::{builtin, DiskModel, Layout, Mechanics, Pbn};
use std::sync::Arc;

/// Built-in name and the .model file its catalogue entry sources.
const MODELS: &[(&str, &str)] = &[
    ("atlas10k", "atlas10k.model"),
    ("atlas3", "atlas_III.model"),
    ("barracuda", "barracuda.model"),
    ("cheetah4lp", "cheetah4LP.model"),
    ("cheetah9lp", "cheetah9LP.model"),
    ("ibm18es", "ibm18es.model"),
    ("hp_c2247a", "hp_c2247a_validate.model"),
    ("hp_c2249a", "hp_c2249a.model"),
    ("hp_c2490a", "hp_c2490a_validate.model"),
    ("hp_c3323a", "hp_c3323a_validate.model"),
    ("hp_c3323a_synth", "hp_c3323a.model"),
    ("dec_rz26", "dec_rz26_validate.model"),
    ("st41601n", "st41601n_validate.model"),
];

/// DiskSim's own capacities (docs: reference table from DiskSim's layout library).
const DISKSIM_CAPACITY: &[(&str, u64)] = &[
    ("atlas10k", 17_966_953),
    ("atlas3", 17_797_944),
    ("barracuda", 4_217_670),
    ("cheetah4lp", 8_887_940),
    ("cheetah9lp", 17_918_387),
    ("ibm18es", 18_033_753),
    ("hp_c2247a", 2_054_864),
    ("hp_c2249a", 2_687_632),
    ("hp_c2490a", 4_165_272),
    ("hp_c3323a", 2_056_008),
    ("hp_c3323a_synth", 2_056_008),
    ("dec_rz26", 2_050_860),
    ("st41601n", 2_676_846),
];

/// The number after `key =` in `text` (first occurrence, comments skipped).
fn num(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v))
        .map(|v| v.trim().trim_end_matches(',').trim().parse::<f64>().unwrap() as u64)
}

/// Entries of the `[...]` list after `key =` in a zone's text.
fn list_len(zone: &str, key: &str) -> u64 {
    let Some(at) = zone.find(&format!("{key} =")).or_else(|| zone.find(&format!("{key}="))) else { return 0 };
    let rest = &zone[at..];
    let (open, close) = (rest.find('[').unwrap(), rest.find(']').unwrap());
    rest[open + 1..close].split(',').filter(|x| !x.trim().is_empty()).count() as u64
}

struct ZoneText {
    cylinders: u64,
    spt: u64,
    empty: u64,
    spares: u64,
    slips: u64,
}

/// (surfaces, sparing scheme, range size, zones) of a .model file.
fn model(file: &str) -> (u64, u64, u64, Vec<ZoneText>) {
    let text = std::fs::read_to_string(common::shared(file)).unwrap();
    let mut parts = text.split("dm_layout_g1_zone");
    let head = parts.next().unwrap();
    let zones = parts.map(|z| ZoneText {
        cylinders: num(z, "Last cylinder number").unwrap() - num(z, "First cylinder number").unwrap() + 1,
        spt: num(z, "Blocks per track").unwrap(),
        empty: num(z, "Empty space at zone front").unwrap_or(0),
        spares: num(z, "Number of spares").unwrap_or(0),
        slips: list_len(z, "slips"),
    }).collect();
    (num(head, "Number of data surfaces").unwrap(), num(head, "Sparing scheme used").unwrap(),
     num(head, "Rangesize for sparing").unwrap_or(1), zones)
}

/// DiskSim's capacity of a zoned drive: per zone, its sectors less the
/// empty front and the spare space of the sparing scheme.
fn capacity_from_files(file: &str) -> u64 {
    let (surfaces, scheme, range, zones) = model(file);
    zones.iter().map(|z| {
        let sectors = z.cylinders * surfaces * z.spt;
        let spare = match scheme {
            0 => 0,
            1 => z.spares * z.spt,                  // spare tracks
            2 => z.spares * z.cylinders,            // spare sectors per cylinder
            3 => z.spares * z.cylinders * surfaces, // per track
            7 => z.slips,                           // each slip costs an LBN
            8 => z.spares * (z.cylinders / range),  // whole ranges only
            9 => z.spares,                          // per zone
            s => panic!("{file}: scheme {s}"),
        };
        sectors - z.empty - spare
    }).sum()
}

#[test]
fn every_zoned_drive_exports_what_its_zones_map() {
    for &(name, file) in MODELS {
        let want = capacity_from_files(file);
        let disksim = DISKSIM_CAPACITY.iter().find(|c| c.0 == name).unwrap().1;
        assert_eq!(want, disksim, "{name}: the test's arithmetic disagrees with DiskSim's table");
        let spec = builtin::resolve(name, None).unwrap();
        assert_eq!(spec.blocks, want, "{name}: exported blocks");
        let l = Layout::new(&spec).unwrap();
        assert_eq!((l.capacity(), l.mapped_blocks()), (want, want), "{name}");
        // The last LBN maps to a sector that maps back.
        let p = l.lbn_to_pbn(want - 1);
        assert_eq!(l.pbn_to_lbn(p), Some(want - 1), "{name}");
    }
}

#[test]
fn a_table_driven_drive_keeps_its_block_count() {
    let text = std::fs::read_to_string(common::shared("dualseek_example/maxtor300g.model")).unwrap();
    let stated = num(&text, "Block count").unwrap();
    assert_eq!(builtin::resolve("maxtor300g", None).unwrap().blocks, stated);
}

#[test]
fn scheme_8_last_partial_range_holds_lbns_in_every_sector() {
    // barracuda and cheetah4lp: in a zone whose cylinder count is not a whole
    // number of ranges, every sector of the partial last range holds an LBN
    // (no spares), except slipped ones.
    for (name, file) in [("barracuda", "barracuda.model"), ("cheetah4lp", "cheetah4LP.model")] {
        let text = std::fs::read_to_string(common::shared(file)).unwrap();
        let (surfaces, scheme, range, _) = model(file);
        assert_eq!(scheme, 8);
        let l = Layout::new(&builtin::resolve(name, None).unwrap()).unwrap();
        let mut partial_ranges = 0;
        for z in text.split("dm_layout_g1_zone").skip(1) {
            let (first, last) = (num(z, "First cylinder number").unwrap(), num(z, "Last cylinder number").unwrap());
            let (spt, slips) = (num(z, "Blocks per track").unwrap(), list_len(z, "slips"));
            let c = last - first + 1;
            if c % range == 0 {
                continue;
            }
            partial_ranges += 1;
            let lo = last + 1 - c % range;
            let mut held = 0;
            for cyl in lo..=last {
                for head in 0..surfaces {
                    for sector in 0..spt {
                        if l.pbn_to_lbn(Pbn { cylinder: cyl as u32, head: head as u32, sector: sector as u32 }).is_some() {
                            held += 1;
                        }
                    }
                }
            }
            let sectors = (last + 1 - lo) * surfaces * spt;
            assert!(held <= sectors && held + slips >= sectors, "{name} cylinders {lo}..={last}: {held} of {sectors} sectors hold LBNs");
        }
        assert!(partial_ranges > 0, "{name}: no partial range to check");
    }
}

/// The trace-free validation set-ups and the built-in each one is.
const SETUPS: &[(&str, &str)] = &[
    ("atlas10k.parv", "atlas10k"),
    ("atlas_III.parv", "atlas3"),
    ("barracuda.parv", "barracuda"),
    ("cheetah4LP.parv", "cheetah4lp"),
    ("cheetah9LP.parv", "cheetah9lp"),
    ("ibm18es.parv", "ibm18es"),
    ("hp_c2247a.parv", "hp_c2247a"),
    ("hp_c2490a.parv", "hp_c2490a"),
    ("hp_c3323a.parv", "hp_c3323a"),
    ("dec_rz26.parv", "dec_rz26"),
    ("st41601n.parv", "st41601n"),
];

/// Largest `key = value` in a DiskSim file (e.g. over its bus blocks).
fn max_of(file: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(common::shared(file)).unwrap();
    text.lines()
        .filter_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v))
        .map(|v| v.trim().trim_end_matches(',').trim().parse::<f64>().unwrap())
        .fold(0.0, f64::max)
}

fn without_names(mut s: DiskSpec) -> String {
    s.name.clear();
    s.description.clear();
    s.source.clear();
    s.validated.clear();
    s.to_toml()
}

#[test]
fn built_in_names_are_the_validation_set_ups() {
    for &(parv, name) in SETUPS {
        let builtin_spec = builtin::resolve(name, None).unwrap();
        let setup = builtin::resolve(common::shared(parv).to_str().unwrap(), None).unwrap();
        assert_eq!(without_names(builtin_spec.clone()), without_names(setup), "{name} is not {parv}");
        assert!(builtin_spec.validated.contains(parv), "{name}: {}", builtin_spec.validated);
        // The bus time per block is the slower of the set-up's buses and the drive's interface.
        let diskspecs = builtin_spec.source.split(", ").find(|f| f.ends_with(".diskspecs")).unwrap().to_string();
        let want = max_of(parv, "Read block transfer time").max(max_of(&diskspecs, "Bulk sector transfer time"));
        assert_eq!(builtin_spec.controller.bus_sector_ms, want, "{name}");
    }
    for name in ["hp_c2249a", "maxtor300g", "hp_c3323a_synth"] {
        assert!(builtin::resolve(name, None).unwrap().validated.starts_with("not validated"), "{name}");
    }
    assert!(builtin::resolve("hp_c3323a_synth", None).unwrap().validated.contains("hp_c3323a.parv"));
    // The variant keeps its own model file: the nominal 5400 RPM, not the validated 5396.
    let synth = builtin::resolve("hp_c3323a_synth", None).unwrap();
    let text = std::fs::read_to_string(common::shared("hp_c3323a.model")).unwrap();
    assert_eq!(synth.rpm, num(&text, "Rotation speed (in rpms)").unwrap() as f64);
    assert_ne!(synth.rpm, builtin::resolve("hp_c3323a", None).unwrap().rpm);
}

#[test]
fn hp_c3323a_set_up_serves_the_traces_highest_blocks() {
    // The drive's validation trace addresses block 1,898,003 (8 blocks).
    let dir = std::env::temp_dir().join(format!("disksched-catalogue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("c3323a.trace");
    std::fs::write(&trace, "R Miss 1898003 8 10000.0 0.0\nW Miss 2056000 8 10000.0 0.0\n").unwrap();
    let spec = builtin::resolve(common::shared("hp_c3323a.parv").to_str().unwrap(), None).unwrap();
    let model = Arc::new(DiskModel::new(spec).unwrap());
    let v = disksched_core::validate::validate(model, trace.to_str().unwrap()).unwrap();
    assert_eq!(v.requests, 2);
    assert!(v.simulated_ms.iter().all(|&ms| ms > 0.0), "{:?}", v.simulated_ms);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn seek_curves_extend_past_their_last_point_along_the_last_two() {
    // atlas10k's curve stops 20 cylinders short of the full stroke, barracuda's 185.
    for (name, seek, short) in [("atlas10k", "atlas10k.seek", 20u32), ("barracuda", "barracuda.seek", 185)] {
        let spec = builtin::resolve(name, None).unwrap();
        let m = Mechanics::new(&spec).unwrap();
        let pts = common::seek_points(seek);
        let ((d0, t0), (d1, t1)) = (pts[pts.len() - 2], pts[pts.len() - 1]);
        let max = m.max_seek_distance();
        assert_eq!(max - d1 as u32, short, "{name}");
        for d in d1 as u32..=max {
            let want_ms = t1 + (t1 - t0) * (d as f64 - d1) / (d1 - d0);
            assert!((m.seek_ns(d) as f64 - want_ms * 1e6).abs() <= 1.0, "{name} distance {d}: {} ns vs {want_ms} ms", m.seek_ns(d));
        }
        assert!(m.seek_ns(max) > m.seek_ns(d1 as u32), "{name}: the curve keeps rising");
    }
}

#[test]
fn serpentine_parity_restarts_at_every_zone() {
    // DiskSim mapping scheme 1: each zone's first cylinder runs its surfaces
    // upwards, the next one downwards, whatever the absolute cylinder number.
    let text = std::fs::read_to_string(common::shared("atlas10k.model")).unwrap();
    let l = Layout::new(&builtin::resolve("atlas10k", None).unwrap()).unwrap();
    let top = l.surfaces() - 1;
    let mut odd_starts = 0;
    for z in text.split("dm_layout_g1_zone").skip(1) {
        let first = num(z, "First cylinder number").unwrap() as u32;
        odd_starts += first % 2;
        let (a, b) = (l.track_lbns(first, 0).0, l.track_lbns(first, top).0);
        assert!(a < b, "cylinder {first}: head 0 first");
        let (c, d) = (l.track_lbns(first + 1, 0).0, l.track_lbns(first + 1, top).0);
        assert!(d < c, "cylinder {}: head {top} first", first + 1);
        // A cylinder switch stays on the same surface.
        let (before, after) = (l.lbn_to_pbn(d - 1), l.lbn_to_pbn(d));
        assert_eq!((before.cylinder, before.head, after.cylinder, after.head), (first, top, first + 1, top));
    }
    assert!(odd_starts > 0, "some zone must start on an odd cylinder for this to test anything");
}

/// Numbers of the `[...]` list after `key =` in a zone's text.
fn list(zone: &str, key: &str) -> Vec<u64> {
    let Some(at) = zone.find(&format!("{key} =")) else { return Vec::new() };
    let rest = &zone[at..];
    let (open, close) = (rest.find('[').unwrap(), rest.find(']').unwrap());
    rest[open + 1..close].split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| x.parse().unwrap()).collect()
}

#[test]
fn st41601n_slips_turn_the_later_cylinders() {
    // Sparing scheme 2 (spare sectors per cylinder), conventional mapping. DiskSim
    // puts the first LBN of a zone's track at offset + track switches x track
    // skew + cylinder switches x cylinder skew + (slips on earlier cylinders of
    // the zone) sectors past the index. Checked on the first track of every cylinder.
    let text = std::fs::read_to_string(common::shared("st41601n_validate.model")).unwrap();
    let (surfaces, scheme, _, _) = model("st41601n_validate.model");
    assert_eq!(scheme, 2);
    let l = Layout::new(&builtin::resolve("st41601n", None).unwrap()).unwrap();
    let (mut turned_tracks, mut checked) = (0, 0);
    for z in text.split("dm_layout_g1_zone").skip(1) {
        let (first, last, spt) = (num(z, "First cylinder number").unwrap(), num(z, "Last cylinder number").unwrap(), num(z, "Blocks per track").unwrap());
        let (offset, tskew, cskew) = (num(z, "Offset of first block").unwrap(), num(z, "Skew for track switch").unwrap(), num(z, "Skew for cylinder switch").unwrap());
        let slips = list(z, "slips");
        let cyl_slots = surfaces * spt;
        for c in first..=last {
            let rel = c - first;
            if slips.iter().any(|&s| s == rel * cyl_slots) {
                continue; // the track's first slot is slipped: its first LBN is pushed
            }
            let earlier = slips.iter().filter(|&&s| s < rel * cyl_slots).count() as u64;
            let want = (offset + rel * (surfaces - 1) * tskew + rel * cskew + earlier) % spt;
            let (lbn, n) = l.track_lbns(c as u32, 0);
            assert!(n > 0);
            assert_eq!(l.lbn_to_pbn(lbn), Pbn { cylinder: c as u32, head: 0, sector: want as u32 }, "cylinder {c}");
            turned_tracks += (earlier > 0) as u32;
            checked += 1;
        }
    }
    assert!(checked > 2000 && turned_tracks > 500, "{checked} cylinders, {turned_tracks} turned");
}

#[test]
fn maxtor300g_read_and_write_curves_extend_past_their_last_point() {
    // maxtor300g_dual.seek: `distance, read ms, stdev, write ms`, last point 80,000
    // cylinders; the drive's table reaches cylinder 80,512 (512 beyond).
    let text = std::fs::read_to_string(common::shared("dualseek_example/maxtor300g_dual.seek")).unwrap();
    let rows: Vec<Vec<f64>> = text.lines().skip(1).filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|x| x.trim().parse().unwrap()).collect()).collect();
    let spec = builtin::resolve("maxtor300g", None).unwrap();
    let settle_ns = (spec.seek.write_settle_ms * 1e6).round();
    let m = Mechanics::new(&spec).unwrap();
    let (a, b) = (&rows[rows.len() - 2], &rows[rows.len() - 1]);
    let max = m.max_seek_distance();
    assert_eq!(max - b[0] as u32, 512);
    for d in [b[0] as u32 + 1, b[0] as u32 + 200, max] {
        let x = d as f64 - b[0];
        let read_ms = b[1] + (b[1] - a[1]) * x / (b[0] - a[0]);
        let write_ms = b[3] + (b[3] - a[3]) * x / (b[0] - a[0]);
        assert!((m.seek_ns(d) as f64 - read_ms * 1e6).abs() <= 1.0, "read {d}");
        let w = m.reposition_ns(0, 0, d, 0, true) as f64 - settle_ns;
        assert!((w - write_ms * 1e6).abs() <= 1.0, "write {d}: {w} ns vs {write_ms} ms");
    }
}

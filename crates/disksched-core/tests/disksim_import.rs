//! DiskSim importer: the catalogue against the files it came from, the
//! mapping of every block of every drive, hand-worked sparing cases, and
//! errors for malformed parameter files.
mod common;

use disksched_core::disk::builtin::{self, catalogue_toml};
use disksched_core::disk::disksim::{self, import, parse_file, CATALOGUE};
use disksched_core::disk::spec::DiskSpec;
use disksched_core::disk::{Layout, Mechanics, Pbn};
use std::path::{Path, PathBuf};

fn imported(name: &str) -> DiskSpec {
    disksim::import_catalogue(&common::shared(""), name).unwrap()
}

/// `key = value` numbers from a DiskSim file, in file order, read with plain
/// string handling (independent of the importer).
fn grab(file: &str, key: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(common::shared(file)).unwrap();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v))
        .map(|v| v.trim().trim_end_matches(',').trim().parse::<f64>().unwrap())
        .collect()
}

/// The .model file each catalogue drive's .diskspecs sources, and its seek file.
const MODELS: &[(&str, &str, Option<&str>)] = &[
    ("atlas10k", "atlas10k.model", Some("atlas10k.seek")),
    ("atlas3", "atlas_III.model", Some("atlas_III.seek")),
    ("barracuda", "barracuda.model", Some("barracuda.seek")),
    ("cheetah4lp", "cheetah4LP.model", Some("cheetah4LP.seek")),
    ("cheetah9lp", "cheetah9LP.model", Some("cheetah9LP.seek")),
    ("ibm18es", "ibm18es.model", Some("ibm18es.seek")),
    ("hp_c2247a", "hp_c2247a_validate.model", None),
    ("hp_c2249a", "hp_c2249a.model", None),
    ("hp_c2490a", "hp_c2490a_validate.model", Some("hp_c2490a_validate.seek")),
    ("hp_c3323a", "hp_c3323a_validate.model", Some("hp_c3323a_validate.seek")),
    ("hp_c3323a_synth", "hp_c3323a.model", Some("hp_c3323a.seek")),
    ("dec_rz26", "dec_rz26_validate.model", Some("dec_rz26_validate.seek")),
    ("st41601n", "st41601n_validate.model", Some("st41601n_validate.seek")),
];

#[test]
fn committed_catalogue_is_what_the_importer_produces() {
    assert_eq!(builtin::names().len(), CATALOGUE.len());
    for (name, _, _) in CATALOGUE {
        let text = builtin::BUILTIN.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(catalogue_toml(&imported(name)), text, "{name}: re-run examples/import_disksim.rs");
    }
}

#[test]
fn import_states_what_the_files_state() {
    for &(name, model, seek) in MODELS {
        let spec = builtin::resolve(name, None).unwrap();
        let mech = Mechanics::new(&spec).unwrap();
        let layout = Layout::new(&spec).unwrap();
        assert_eq!(spec.surfaces as f64, grab(model, "Number of data surfaces")[0], "{name}");
        // Zoned drives export what the zones map, not Block count (tests/catalogue.rs checks the figure).
        assert_eq!(spec.blocks, layout.mapped_blocks(), "{name}");
        assert_eq!(spec.rpm, grab(model, "Rotation speed (in rpms)")[0], "{name}");
        assert_eq!(spec.seek.head_switch_ms, grab(model, "Head switch time")[0], "{name}");
        assert_eq!(spec.seek.write_settle_ms, grab(model, "Add. write settling delay")[0], "{name}");
        assert_eq!(mech.head_switch_ns, (grab(model, "Head switch time")[0] * 1e6).round() as u64);
        // Sectors per track at every zone's first and last cylinder.
        let (firsts, lasts, spts) =
            (grab(model, "First cylinder number"), grab(model, "Last cylinder number"), grab(model, "Blocks per track"));
        assert!(!firsts.is_empty() && firsts.len() == spts.len() && lasts.len() == spts.len());
        for i in 0..firsts.len() {
            assert_eq!(layout.sectors_per_track(firsts[i] as u32, 0) as f64, spts[i], "{name} zone {i}");
            assert_eq!(layout.sectors_per_track(lasts[i] as u32, 0) as f64, spts[i], "{name} zone {i}");
        }
        // Seek time at every point of the measured curve.
        if let Some(seek) = seek {
            let pts = common::seek_points(seek);
            assert_eq!(pts.len() as f64, common::seek_points_stated(seek), "{name}");
            for &(d, ms) in &pts {
                if (d as u32) < spec.cylinders {
                    assert_eq!(mech.seek_ns(d as u32), (ms * 1e6).round() as u64, "{name}: seek distance {d}");
                }
            }
        }
    }
    // The drives whose Block count the zones reproduce exactly (research notes, section 1).
    for (name, exact) in [("hp_c2247a", 2_054_864u64), ("hp_c2249a", 2_687_632), ("hp_c2490a", 4_165_272),
                          ("st41601n", 2_676_846), ("dec_rz26", 2_050_860), ("hp_c3323a", 2_056_008)] {
        let l = Layout::new(&builtin::resolve(name, None).unwrap()).unwrap();
        assert_eq!(l.mapped_blocks(), exact, "{name}");
    }
    // hp_c2490a's last zone ends at cylinder 2629 = Number of cylinders: extended to cover it.
    assert_eq!(builtin::resolve("hp_c2490a", None).unwrap().cylinders, 2630);
}

#[test]
fn hpl_seek_follows_the_equation_and_first_ten() {
    // hp_c2247a_validate.model: hplplus10, HPL values [300, 3.81, 0.33, 7.75, 0.0059, -1],
    // first ten [2.89, 3.68, 3.81, 3.98, 4.27, 4.65, 4.52, 4.65, 4.82, 4.99].
    let m = Mechanics::new(&builtin::resolve("hp_c2247a", None).unwrap()).unwrap();
    let ms = |d: u32| m.seek_ns(d) as f64 / 1e6;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert!(close(ms(1), 2.89) && close(ms(3), 3.81) && close(ms(10), 4.99));
    assert!(close(ms(11), 3.81 + 0.33 * 11f64.sqrt()));
    assert!(close(ms(299), 3.81 + 0.33 * 299f64.sqrt()));
    assert!(close(ms(300), 7.75 + 0.0059 * 300.0));
    assert!(close(ms(2000), 7.75 + 0.0059 * 2000.0));
    assert_eq!(m.seek_ns(0), 0);
}

#[test]
fn negative_write_settle_shortens_write_seeks() {
    // dec_rz26: Add. write settling delay = -0.483 ms.
    let m = Mechanics::new(&builtin::resolve("dec_rz26", None).unwrap()).unwrap();
    let read = m.reposition_ns(0, 0, 100, 0, false);
    assert_eq!(m.reposition_ns(0, 0, 100, 0, true), read - 483_000);
    assert!(m.seek_floor_ns(100) <= read - 483_000, "the SPTF floor must bound writes too");
}

#[test]
fn dual_seek_file_gives_a_write_curve() {
    let path = common::shared("dualseek_example/maxtor300g_dual.seek");
    let loc = disksim::Loc { file: "test".into(), line: 1 };
    let (read, write) = disksim::read_seek_file(&path, &loc).unwrap();
    let write = write.expect("4 columns -> write curve");
    assert_eq!(read.len(), 350);
    assert_eq!(read[0], (1.0, 0.5257));
    assert_eq!(write[0], (1.0, 0.6757));
    // The 3-column (distance, ms, stdev) file without a header: no write curve.
    let (r3, w3) = disksim::read_seek_file(&common::shared("dualseek_example/maxtor300g.seek"), &loc).unwrap();
    assert_eq!((r3.len(), r3[0], w3), (350, (1.0, 0.5257), None));
    // Put it on a drive and check writes use column 4 at every table point.
    let mut spec = builtin::resolve("atlas10k", None).unwrap();
    spec.cylinders = 80_512;
    spec.seek.table = Some(read.clone());
    spec.seek.write_table = Some(write.clone());
    spec.seek.write_settle_ms = 0.0;
    let m = Mechanics::new(&spec).unwrap();
    for (&(d, r), &(_, w)) in read.iter().zip(&write) {
        let d = d as u32;
        assert_eq!(m.reposition_ns(0, 0, d, 0, false), (r * 1e6).round() as u64, "read seek {d}");
        assert_eq!(m.reposition_ns(0, 0, d, 0, true), (w * 1e6).round() as u64, "write seek {d}");
    }
}

/// The numbers of a `Key = [ ... ]` list of the g4 layout file, by plain string handling.
fn g4_list(text: &str, key: &str) -> Vec<f64> {
    let start = text.find(&format!("{key} = [")).unwrap() + key.len() + 4;
    let end = start + text[start..].find(']').unwrap();
    text[start..end].split(',').map(str::trim).filter(|t| !t.is_empty()).map(|t| t.parse().unwrap()).collect()
}

/// maxtor300g (DiskSim 4 `dm_layout_g4`) against its own files, with
/// arithmetic independent of the importer; the slot tree's own invariants
/// (entries chain, children cover their parent entry) are checked when the
/// layout is built. Every block and every sector (DISKSCHED_EXHAUSTIVE=1) took
/// 159 s on the 2-core build machine (two threads, measured while another build
/// ran), against ~8 s for this default: every track's first and last LBN,
/// the sectors of every 61st track, and 4M seeded random LBNs round-trip;
/// DISKSCHED_EXHAUSTIVE=1 walks every block and every sector.
#[test]
fn maxtor300g_g4_layout_holds_the_files_invariants() {
    let text = std::fs::read_to_string(common::shared("dualseek_example/maxtor300g-layout.model")).unwrap();
    let spec = builtin::resolve("maxtor300g", None).unwrap();
    let l = Layout::new(&spec).unwrap();
    assert!(l.is_table());
    // Slots: the root (last) table's last entry's first slot + slots in its run.
    let before_slips = &text[..text.find("Slips = [").unwrap()];
    let last_idx = before_slips.lines().filter(|l| l.contains("IDX,")).last().unwrap();
    let f: Vec<u64> = last_idx.split(',').take(7).map(|t| t.trim().parse::<f64>().unwrap() as u64).collect();
    let slots = f[0] + f[6];
    let slips = g4_list(&text, "Slips");
    let slipped: u64 = slips.chunks(2).map(|c| c[1] as u64).sum();
    assert_eq!((slots, slipped), (585_972_555, 35_055));
    // The tree maps Block count + 1 LBNs (300 GB / 512 exactly); Block count is exported.
    assert_eq!(l.mapped_blocks(), slots - slipped);
    assert_eq!(spec.blocks as f64, grab("dualseek_example/maxtor300g.model", "Block count")[0]);
    assert_eq!(l.mapped_blocks(), spec.blocks + 1);
    assert_eq!(spec.surfaces, 8);
    assert_eq!(spec.rpm, 10001.0);
    // The last band's tracks reach cylinder 80512: the stated 80512 cylinders are raised by one.
    assert_eq!(grab("dualseek_example/maxtor300g.model", "Number of cylinders")[0], 80512.0);
    assert_eq!(spec.cylinders, 80513);
    // Sectors per track differ by surface within a cylinder (table 0: 1170, 1114, 1170, 1114, 1170, 1170, 1040, 1144).
    let spt0: Vec<u32> = (0..8).map(|h| l.sectors_per_track(0, h)).collect();
    assert_eq!(spt0, [1170, 1114, 1170, 1114, 1170, 1170, 1040, 1144]);
    // Tracks chain in LBN order, each (cylinder, surface) once, and cover every LBN once.
    let tracks = l.table_tracks().unwrap();
    let mut seen = std::collections::HashSet::new();
    let (mut next, mut span_slips) = (0u64, 0u64);
    for (i, &(c, h, first, n)) in tracks.iter().enumerate() {
        assert_eq!(first, next, "track {i}");
        assert!(c < spec.cylinders && h < 8 && seen.insert((c, h)), "track {i}: ({c}, {h})");
        next += n;
        let spt = l.sectors_per_track(c, h);
        assert!(n > 0 && n <= spt as u64);
        if first < l.capacity() {
            let span = l.track_span(c, h).unwrap();
            assert_eq!((span.first_lbn, span.blocks as u64), (first, n.min(l.capacity() - first)));
            span_slips += span.slips.len() as u64;
            for lbn in [first, (first + n - 1).min(l.capacity() - 1)] {
                let p = l.lbn_to_pbn(lbn);
                assert!(p.cylinder == c && p.head == h && p.sector < spt, "lbn {lbn} -> {p:?}");
                assert_eq!(l.pbn_to_lbn(p), Some(lbn), "lbn {lbn} -> {p:?}");
            }
        }
    }
    assert_eq!(next, l.mapped_blocks());
    // Slips inside the tracks (a slip before a track's first LBN is not listed by its span).
    assert!(span_slips <= slipped && span_slips + 2 * tracks.len() as u64 >= slipped, "{span_slips}");
    let exhaustive = std::env::var("DISKSCHED_EXHAUSTIVE").is_ok_and(|v| v == "1");
    // Every sector of a sample of tracks holds at most one LBN, which maps back to it.
    let step = if exhaustive { 1 } else { 61 };
    let mut mapped = 0u64;
    for &(c, h, first, n) in tracks.iter().step_by(step) {
        let mut on = 0;
        for sector in 0..l.sectors_per_track(c, h) {
            let p = Pbn { cylinder: c, head: h, sector };
            if let Some(lbn) = l.pbn_to_lbn(p) {
                assert!(lbn >= first && lbn < first + n && l.lbn_to_pbn(lbn) == p, "{p:?} -> {lbn}");
                on += 1;
            }
        }
        assert_eq!(on, n.min(l.capacity().saturating_sub(first)), "({c}, {h})");
        mapped += on;
    }
    if exhaustive {
        assert_eq!(mapped, l.capacity());
    }
    // Block round trips: all of them, or a seeded random sample.
    let check = |lbn: u64| {
        let p = l.lbn_to_pbn(lbn);
        assert!(p.head < 8 && p.sector < l.sectors_per_track(p.cylinder, p.head), "lbn {lbn} -> {p:?}");
        assert_eq!(l.pbn_to_lbn(p), Some(lbn), "lbn {lbn} -> {p:?}");
    };
    if exhaustive {
        let cap = l.capacity();
        std::thread::scope(|s| {
            s.spawn(|| (0..cap / 2).for_each(check));
            s.spawn(|| (cap / 2..cap).for_each(check));
        });
    } else {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..4_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x % l.capacity());
        }
    }
}

/// Sequential reads on maxtor300g at the media rate the files imply:
/// 10001 RPM and the sectors per track of the track read, which differ by
/// surface (1170 on surface 0, 1114 on surface 1, 1040 on 6, 1144 on 7 at cylinder 0).
#[test]
fn maxtor300g_sequential_read_runs_at_the_tracks_media_rate() {
    use disksched_core::disk::DiskModel;
    let m = DiskModel::new(builtin::resolve("maxtor300g", None).unwrap()).unwrap();
    let rev_ns = 60e9 / 10001.0;
    let mut pieces = Vec::new();
    // The first track of table 0's bands (surface 0 from cylinder 31 down, surface 1
    // from cylinder 0 up, ...): (cylinder, surface, sectors per track in the file).
    for (cyl, head, spt) in [(31u32, 0u32, 1170u32), (0, 1, 1114), (31, 6, 1040), (0, 7, 1144)] {
        let (lbn, n) = m.layout.track_lbns(cyl, head);
        assert_eq!((n, m.layout.sectors_per_track(cyl, head)), (spt as u64, spt), "no slips on ({cyl}, {head})");
        let p = m.layout.lbn_to_pbn(lbn);
        for blocks in [spt, spt / 2, 100] {
            let a = m.media_access((p.cylinder, p.head), 0, None, lbn, blocks, false, &mut pieces);
            assert_eq!(pieces.len(), 1, "{lbn} {blocks} {pieces:?}");
            let t = (a.media_end - a.media_start) as f64;
            let want = blocks as f64 / spt as f64 * rev_ns;
            assert!((t - want).abs() <= 1.0, "surface {head}, {blocks} blocks: {t} ns, expected {want}");
            let mb_s = blocks as f64 * 512.0 / t * 1e3;
            let file_mb_s = spt as f64 * 512.0 * 10001.0 / 60.0 / 1e6;
            assert!((mb_s / file_mb_s - 1.0).abs() < 1e-5, "surface {head}: {mb_s} MB/s vs {file_mb_s}");
        }
    }
    // A whole band (32 tracks of surface 0, cylinders 31 down to 0) reads in 32 revolutions of
    // transfer plus 31 single-cylinder switches, each at most one revolution.
    let a = m.media_access((31, 0), 0, None, 0, 37_440, false, &mut pieces);
    assert_eq!(pieces.len(), 32);
    assert!(pieces.iter().enumerate().all(|(i, p)| p.cylinder == 31 - i as u32 && p.head == 0 && p.sectors_per_track == 1170));
    let t = (a.media_end - a.media_start) as f64;
    assert!(t >= 32.0 * rev_ns - 32.0 && t <= 63.0 * rev_ns, "{t}");
}

/// lbn -> pbn -> lbn over every exported block, and every physical sector
/// maps to at most one LBN, for every catalogue drive.
#[test]
fn every_block_of_every_catalogue_drive_round_trips() {
    let names = builtin::names();
    std::thread::scope(|s| {
        for chunk in names.chunks(names.len().div_ceil(2)) {
            s.spawn(move || {
                for name in chunk {
                    let spec = builtin::resolve(name, None).unwrap();
                    let l = Layout::new(&spec).unwrap();
                    if l.is_table() {
                        continue; // maxtor300g: its own test (586M blocks, serpentine bands run down)
                    }
                    let mut prev_cyl = 0;
                    for lbn in 0..l.capacity() {
                        let p = l.lbn_to_pbn(lbn);
                        assert!(p.cylinder >= prev_cyl, "{name}: lbn {lbn} went back a cylinder");
                        prev_cyl = p.cylinder;
                        assert!(p.head < spec.surfaces && p.sector < l.sectors_per_track(p.cylinder, p.head), "{name}: lbn {lbn} -> {p:?}");
                        assert_eq!(l.pbn_to_lbn(p), Some(lbn), "{name}: lbn {lbn} -> {p:?}");
                    }
                    let (mut mapped, mut spanned) = (0u64, 0u64);
                    for cylinder in 0..l.cylinders() {
                        for head in 0..l.surfaces() {
                            // The track's span lists its LBNs in order from `first_sector`, skipping slips
                            // (a defective slot's LBN lives in its spare, so its sector maps to nothing).
                            if let Some(t) = l.track_span(cylinder, head) {
                                spanned += t.blocks as u64;
                                let mut k = 0;
                                for i in 0..t.blocks as u64 {
                                    while t.slips.contains(&k) {
                                        k += 1;
                                    }
                                    let p = Pbn { cylinder, head, sector: (t.first_sector + k) % t.sectors_per_track };
                                    let at = l.pbn_to_lbn(p);
                                    assert!(at == Some(t.first_lbn + i) || at.is_none(), "{name}: span of ({cylinder}, {head}) block {i}: {p:?} holds {at:?}");
                                    k += 1;
                                }
                            }
                            for sector in 0..l.sectors_per_track(cylinder, head) {
                                if l.pbn_to_lbn(Pbn { cylinder, head, sector }).is_some() {
                                    mapped += 1;
                                }
                            }
                        }
                    }
                    assert_eq!(mapped, l.capacity(), "{name}");
                    assert_eq!(spanned, l.capacity(), "{name}: track spans cover every LBN once");
                }
            });
        }
    });
}

#[test]
fn every_shared_parameter_file_parses() {
    let dir = common::shared("");
    let mut n = 0;
    for dir in [dir.clone(), dir.join("dualseek_example")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if matches!(p.extension().and_then(|x| x.to_str()), Some("parv" | "diskspecs" | "model")) {
                parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
    }
    assert!(n >= 40, "{n} files");
    // A .parv imports the disk it instantiates; builtin::resolve accepts DiskSim paths.
    let a = builtin::resolve(common::shared("atlas10k.parv").to_str().unwrap(), None).unwrap();
    let b = builtin::resolve("atlas10k", None).unwrap();
    assert_eq!(a.layout.zones.len(), b.layout.zones.len());
    assert_eq!(a.blocks, b.blocks);
    let c = builtin::resolve(common::shared("cheetah4LP.model").to_str().unwrap(), None).unwrap();
    assert_eq!(c.blocks, 8_887_940, "what the zones map, not Block count 8,887,200");
    // cheetah4LP's one defect pair remaps a sector to itself.
    assert_eq!(c.layout.zones[1].defects, vec![(233_375, 233_375)]);
    let e = import(&common::shared("3disks.parv"), None, None).unwrap_err().to_string();
    assert!(e.contains("several disks"), "{e}");
    // Where a disk is given by name (disk.model), `file.parv#NAME` names one, and the
    // error for a file of several says so.
    let parv = common::shared("3disks.parv");
    let e = builtin::resolve(parv.to_str().unwrap(), None).unwrap_err().to_string();
    assert!(e.contains("several disks") && e.contains(&format!("`{}#NAME`", parv.display())) && !e.contains('\n'), "{e}");
    let named = builtin::resolve(&format!("{}#IBM_DNES-309170W_validate", parv.display()), None).unwrap();
    let direct = import(&parv, None, Some("IBM_DNES-309170W_validate")).unwrap();
    assert_eq!(named.to_toml(), direct.to_toml());
    assert_ne!(named.to_toml(), import(&parv, None, Some("QUANTUM_TORNADO_validate")).unwrap().to_toml());
    let e = builtin::resolve(&format!("{}#nope", parv.display()), None).unwrap_err().to_string();
    assert!(e.contains("3disks.parv") && e.contains("nope"), "{e}");
}

// ---- hand-worked sparing cases ----------------------------------------------
//
// One zone: 2 surfaces x 3 cylinders x 10 sectors per track, no skew. Slots are
// zone-relative: slot = (cylinder * 2 + track) * 10 + sector, so track k of the
// walk holds slots 10k..10k+9 (track 0 = cyl 0 head 0, 1 = cyl 0 head 1, 2 = cyl 1 head 0 ...).

fn tiny(sparing: &str, zone_extra: &str, layout_extra: &str) -> Layout {
    let text = format!(
        r#"name = "tiny"
surfaces = 2
cylinders = 3
blocks = 1
rpm = 6000.0
[seek]
table = [[1, 1.0]]
[layout]
sparing = "{sparing}"
{layout_extra}
[[layout.zones]]
first_cylinder = 0
last_cylinder = 2
sectors_per_track = 10
track_skew_sectors = 0.0
cylinder_skew_sectors = 0.0
{zone_extra}
"#
    );
    let mut spec = DiskSpec::from_toml(&text, "tiny").unwrap();
    let l = Layout::new(&spec).unwrap();
    spec.blocks = l.mapped_blocks();
    let l = Layout::new(&spec).unwrap();
    for lbn in 0..l.capacity() {
        assert_eq!(l.pbn_to_lbn(l.lbn_to_pbn(lbn)), Some(lbn));
    }
    l
}

fn at(c: u32, h: u32, s: u32) -> Pbn {
    Pbn { cylinder: c, head: h, sector: s }
}

#[test]
fn sectors_per_track_with_a_slip() {
    // 1 spare per track: 9 LBNs per track, 6 tracks -> 54.
    // Track 0: slot 4 slipped, so LBNs 0-3 at sectors 0-3, LBNs 4-8 at sectors 5-9
    // (the slip used the track's spare). Later tracks are turned one sector by
    // the earlier slip (DiskSim): track 1 holds LBNs 9-17 at 1-9, its spare at 0.
    let l = tiny("sectors-per-track", "spares = 1\nslips = [4]", "");
    assert_eq!(l.mapped_blocks(), 54);
    assert_eq!(l.lbn_to_pbn(3), at(0, 0, 3));
    assert_eq!(l.lbn_to_pbn(4), at(0, 0, 5));
    assert_eq!(l.lbn_to_pbn(8), at(0, 0, 9));
    assert_eq!(l.lbn_to_pbn(9), at(0, 1, 1));
    assert_eq!(l.lbn_to_pbn(17), at(0, 1, 9));
    assert_eq!(l.lbn_to_pbn(53), at(2, 1, 9));
    assert_eq!(l.pbn_to_lbn(at(0, 0, 4)), None);
    assert_eq!(l.pbn_to_lbn(at(0, 1, 0)), None);
}

#[test]
fn sectors_per_cylinder_with_a_slip() {
    // 1 spare per cylinder: 19 LBNs per cylinder -> 57. Slip at slot 4 pushes
    // LBNs 4-18 to slots 5-19 (the cylinder's spare at slot 19 is used up).
    // DiskSim turns the tracks of later cylinders one sector per earlier slip:
    // cylinder 1's slot k of a track lies at sector (k + 1) mod 10.
    let l = tiny("sectors-per-cylinder", "spares = 1\nslips = [4]", "");
    assert_eq!(l.mapped_blocks(), 57);
    assert_eq!(l.lbn_to_pbn(9), at(0, 1, 0)); // slot 10: same cylinder, not turned
    assert_eq!(l.lbn_to_pbn(18), at(0, 1, 9)); // slot 19
    assert_eq!(l.lbn_to_pbn(19), at(1, 0, 1)); // slot 20, turned
    assert_eq!(l.lbn_to_pbn(28), at(1, 0, 0)); // slot 29
    assert_eq!(l.lbn_to_pbn(29), at(1, 1, 1)); // slot 30
    assert_eq!(l.pbn_to_lbn(at(1, 1, 0)), None); // cylinder 1's unused spare, slot 39
    assert_eq!(l.lbn_to_pbn(38), at(2, 0, 1)); // still one slip before cylinder 2
}

#[test]
fn sectors_per_zone_with_two_slips() {
    // 3 spares at the end of the zone: 60 - 3 = 57 LBNs. Slips at slots 4 and 25:
    // LBN 4 -> slot 5, LBN 23 -> slot 24, LBN 24 -> slot 26, LBN 56 -> slot 58; slot 59 spare.
    let l = tiny("sectors-per-zone", "spares = 3\nslips = [25, 4]", "");
    assert_eq!(l.mapped_blocks(), 57);
    assert_eq!(l.lbn_to_pbn(23), at(1, 0, 4));
    assert_eq!(l.lbn_to_pbn(24), at(1, 0, 6));
    assert_eq!(l.lbn_to_pbn(56), at(2, 1, 8));
    assert_eq!(l.pbn_to_lbn(at(1, 0, 5)), None);
    assert_eq!(l.pbn_to_lbn(at(2, 1, 9)), None);
}

#[test]
fn tracks_per_zone_with_a_slipped_track() {
    // DiskSim scheme 1: 1 spare track at the end of the zone -> 5 tracks x 10 = 50 LBNs.
    // Track 1 (cyl 0 head 1) slipped: LBNs 0-9 on track 0, LBNs 10-19 on track 2
    // (cyl 1 head 0), ..., LBNs 40-49 on track 5 (cyl 2 head 1), the spare track.
    let l = tiny("tracks-per-zone", "spares = 1\nslipped_tracks = [1]", "");
    assert_eq!(l.mapped_blocks(), 50);
    assert_eq!(l.lbn_to_pbn(9), at(0, 0, 9));
    assert_eq!(l.lbn_to_pbn(10), at(1, 0, 0));
    assert_eq!(l.lbn_to_pbn(49), at(2, 1, 9));
    assert_eq!(l.pbn_to_lbn(at(0, 1, 3)), None);
}

#[test]
fn sectors_per_range_partial_last_range_has_no_spares() {
    // DiskSim scheme 8, ranges of 2 cylinders from the zone's first cylinder:
    // cylinders 0-1 = 40 slots, 38 LBNs; cylinder 2 = a partial range of 20 slots
    // with no spares -> 20 LBNs; 58 in all. Slip at slot 4:
    // LBN 37 -> slot 38 (cyl 1 head 1 sector 8), slot 39 spare, LBN 38 -> slot 40.
    let l = tiny("sectors-per-range", "spares = 2\nslips = [4]", "sparing_range_cylinders = 2");
    assert_eq!(l.mapped_blocks(), 58);
    assert_eq!(l.lbn_to_pbn(37), at(1, 1, 8));
    assert_eq!(l.pbn_to_lbn(at(1, 1, 9)), None);
    assert_eq!(l.lbn_to_pbn(38), at(2, 0, 0));
    assert_eq!(l.lbn_to_pbn(57), at(2, 1, 9));
    // A slip in the spare-less range (slot 45 = cylinder 2 head 0 sector 5) costs one LBN.
    let l = tiny("sectors-per-range", "spares = 2\nslips = [4, 45]", "sparing_range_cylinders = 2");
    assert_eq!(l.mapped_blocks(), 57);
    assert_eq!(l.lbn_to_pbn(42), at(2, 0, 4));
    assert_eq!(l.lbn_to_pbn(43), at(2, 0, 6));
    assert_eq!(l.lbn_to_pbn(56), at(2, 1, 9));
    assert_eq!(l.pbn_to_lbn(at(2, 0, 5)), None);
}

#[test]
fn end_of_disk_sparing_loses_one_block_per_slip() {
    // DiskSim scheme 7: no spares in the zone; slip at slot 4 -> 59 LBNs, LBN 58 at slot 59.
    let l = tiny("end-of-disk", "slips = [4]", "");
    assert_eq!(l.mapped_blocks(), 59);
    assert_eq!(l.lbn_to_pbn(58), at(2, 1, 9));
}

#[test]
fn empty_zone_front_counts_lbn_positions() {
    // 1 spare per track (9 positions per track) and 12 empty positions: LBN 0 is
    // position 12 = track 1, sector 3. 54 - 12 = 42 LBNs.
    let l = tiny("sectors-per-track", "spares = 1\nempty_front_slots = 12", "");
    assert_eq!(l.mapped_blocks(), 42);
    assert_eq!(l.lbn_to_pbn(0), at(0, 1, 3));
    assert_eq!(l.pbn_to_lbn(at(0, 0, 0)), None);
    assert_eq!(l.pbn_to_lbn(at(0, 1, 2)), None);
    // Track 0 holds only empty positions; track 1 holds positions 12..17 = LBNs 0..5 from sector 3.
    assert_eq!(l.track_span(0, 0), None);
    let t = l.track_span(0, 1).unwrap();
    assert_eq!((t.first_lbn, t.blocks, t.first_sector), (0, 6, 3));
    assert_eq!(l.track_span(1, 0).unwrap().first_lbn, 6);
}

#[test]
fn serpentine_and_skews() {
    // Serpentine (DiskSim mapping 2, absolute parity): odd cylinders run head 1 then head 0.
    let l = tiny("none", "", "mapping = \"serpentine\"");
    assert_eq!(l.lbn_to_pbn(20), at(1, 1, 0));
    assert_eq!(l.lbn_to_pbn(30), at(1, 0, 0));
    assert_eq!(l.lbn_to_pbn(40), at(2, 0, 0));
    // Track skew 3, cylinder skew 5: track k's first LBN sits at
    // (tracks switched x 3 + cylinders switched x 5) mod 10.
    let text = std::fs::read_to_string(common::shared("atlas10k.model")).unwrap();
    drop(text);
    let l = tiny_skewed();
    assert_eq!(l.lbn_to_pbn(10), at(0, 1, 3)); // one track switch
    assert_eq!(l.lbn_to_pbn(20), at(1, 0, 8)); // one track + one cylinder switch: 3 + 5
    assert_eq!(l.lbn_to_pbn(30), at(1, 1, 1)); // 2 x 3 + 5 = 11 -> 1
}

fn tiny_skewed() -> Layout {
    let text = r#"name = "tiny"
surfaces = 2
cylinders = 3
blocks = 60
rpm = 6000.0
[seek]
table = [[1, 1.0]]
[layout]
[[layout.zones]]
first_cylinder = 0
last_cylinder = 2
sectors_per_track = 10
track_skew_sectors = 3.0
cylinder_skew_sectors = 5.0
"#;
    Layout::new(&DiskSpec::from_toml(text, "tiny").unwrap()).unwrap()
}

#[test]
fn a_remapped_defect_is_served_from_its_spare() {
    // 1 spare per track; slot 2 is defective and remapped to slot 9 (track 0's spare).
    let l = tiny("sectors-per-track", "spares = 1\ndefects = [[2, 9]]", "");
    assert_eq!(l.lbn_to_pbn(2), at(0, 0, 9));
    assert_eq!(l.lbn_to_pbn(3), at(0, 0, 3));
    assert_eq!(l.pbn_to_lbn(at(0, 0, 2)), None);
    let mut pieces = Vec::new();
    l.pieces(0, 5, &mut pieces);
    let got: Vec<(u32, u32)> = pieces.iter().map(|p| (p.first_sector, p.blocks)).collect();
    assert_eq!(got, vec![(0, 2), (9, 1), (3, 2)]);
    // A full track holding a defective slot (its spare at the zone's end):
    // the piece after a read on it is not that track's rest.
    let l = tiny("sectors-per-zone", "spares = 1\ndefects = [[4, 59]]", "");
    let read = l.first_piece(0, 2);
    assert_eq!(read.track_blocks, 10, "a full track");
    let next = l.first_piece(2, 5);
    assert_eq!(next.blocks, 2, "the piece stops before the defect");
    assert!(l.piece_after(&read, 2, 5).is_none_or(|p| p == next), "{:?} against {next:?}", l.piece_after(&read, 2, 5));
    // Each piece names the LBNs of the track it lies on, the spare's included.
    for (lbn, defects) in [(0, "[[2, 9]]"), (10, "[[12, 9]]")] {
        let l = tiny("sectors-per-track", &format!("spares = 1\ndefects = {defects}"), "");
        l.pieces(lbn, 12, &mut pieces);
        assert!(pieces.len() >= 3, "{defects}: {pieces:?}");
        for p in &pieces {
            assert_eq!((p.track_first_lbn, p.track_blocks as u64), l.track_lbns(p.cylinder, p.head), "{defects}: {p:?}");
        }
    }
}

// ---- importer edge cases and malformed files --------------------------------

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("disksched-disksim-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const MODEL: &str = "dm_disk tiny {
   Number of data surfaces = 2,
   Number of cylinders = 3,
   Block count = 54,
   Mechanical Model = dm_mech_g1 {
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      HPL seek equation values = [ 616, 1.0, 0.5, 3.0, 0.01, 0.8 ],
      Head switch time = 0.5,
      Add. write settling delay = 0.0,
      Rotation speed (in rpms) = 6000,
      Percent error in rpms = 0.0
   },
   Layout Model = dm_layout_g1 {
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 3,
      Rangesize for sparing = 1,
      Zones = [
         dm_layout_g1_zone {
            First cylinder number = 0,
            Last cylinder number = 2,
            Blocks per track = 10,
            Offset of first block = 0,
            Empty space at zone front = 0,
            Skew for track switch = 0.25,
            Skew for cylinder switch = 4,
            Number of spares = 1,
            slips = [ 4 ],
            defects = [ ]
         }
      ]
   }
}
";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn synthetic_model_imports_with_fractional_skew_and_hpl() {
    let d = scratch();
    let p = write(&d, "tiny.model", MODEL);
    let spec = import(&p, None, None).unwrap();
    assert_eq!(spec.layout.zones[0].track_skew_sectors, 2.5); // 0.25 rev x 10 sectors
    assert_eq!(spec.layout.zones[0].cylinder_skew_sectors, 4.0);
    let m = Mechanics::new(&spec).unwrap();
    assert_eq!(m.seek_ns(1), 800_000); // single-cylinder override
    assert_eq!(m.seek_ns(2), ((1.0 + 0.5 * 2f64.sqrt()) * 1e6).round() as u64);
    // A .diskspecs that sources it from a subdirectory, as a value.
    std::fs::create_dir_all(d.join("sub")).unwrap();
    write(&d, "sub/tiny.model", MODEL);
    let ds = write(&d, "tiny.diskspecs", "disksim_disk T {\n Model = source sub/tiny.model,\n Max queue length = 4,\n Fast write level = 2\n}\n");
    let spec = import(&ds, Some("t"), None).unwrap();
    assert_eq!((spec.controller.max_queue_length, spec.controller.fast_write_level), (4, 2));
    assert_eq!(spec.name, "t");
    // An error inside the sourced model names the model file and its line.
    write(&d, "sub/bad.model", &MODEL.replace("Head switch time", "Head swap time"));
    let ds = write(&d, "bad.diskspecs", "disksim_disk T {\n Model = source sub/bad.model\n}\n");
    let e = import(&ds, None, None).unwrap_err().to_string();
    let line = MODEL.lines().position(|l| l.contains("Head switch time")).unwrap() + 1;
    assert!(e.starts_with(&format!("{}:{line}: unknown parameter `Head swap time`", d.join("sub/bad.model").display())), "{e}");
}

fn err_of(text: &str) -> (String, String) {
    let d = scratch();
    let p = write(&d, "bad.model", text);
    (import(&p, None, None).unwrap_err().to_string(), p.display().to_string())
}

#[test]
fn malformed_files_give_file_and_line() {
    let line_of = |needle: &str| MODEL.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let cases = [
        (MODEL.replace("Block count = 54", "Block count 54"), line_of("Block count"), "missing `=`"),
        (MODEL.replace("Head switch time = 0.5", "Head switch time = 0.5x"), line_of("Head switch time"), "not a number"),
        (MODEL.replace("Head switch time = 0.5", "Head swtich time = 0.5"), line_of("Head switch time"), "unknown parameter"),
        (MODEL.replace("Number of spares = 1", "Number of spares = 1,\n Bogus = 3"), line_of("Number of spares") + 1, "unknown parameter"),
        (MODEL.replace("slips = [ 4 ]", "slips = [ 4 "), line_of("defects"), "expected"),
        (MODEL.replacen("   }\n}", "   }\n", 1), MODEL.lines().count(), "unbalanced braces"),
        (MODEL.replace("Seek type = hpl", "Seek type = extracted,\n Full seek curve = nope.seek"), line_of("Seek type") + 1, "nope.seek"),
        (MODEL.replace("Sparing scheme used = 3", "Sparing scheme used = 5"), line_of("Sparing scheme"), "not supported"),
        (MODEL.replace("slips = [ 4 ]", "slips = [ 400 ]"), line_of("slips"), "beyond"),
        (format!("source missing.model\n{MODEL}"), 1, "no such file"),
    ];
    for (text, line, what) in cases {
        let (e, path) = err_of(&text);
        assert!(e.starts_with(&format!("{path}:{line}: ")), "want {path}:{line}: ..., got {e}");
        assert!(e.contains(what), "want {what:?} in {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // A missing `source`d value file names the including file and line.
    let d = scratch();
    let p = write(&d, "x.diskspecs", "disksim_disk X {\n  Model = source gone.model\n}\n");
    let e = import(&p, None, None).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:2: ", p.display())) && e.contains("gone.model"), "{e}");
    // A bad seek file line.
    write(&d, "s.seek", "Seek distances measured: 2\n1, 1.0\n2, zz\n");
    let p = write(&d, "s.model", &MODEL.replace("Seek type = hpl", "Seek type = extracted,\n Full seek curve = s.seek"));
    let e = import(&p, None, None).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:3: ", d.join("s.seek").display())), "{e}");
}

/// Random requests on every catalogue drive: the track pieces cover exactly
/// the requested LBNs in order, and the drive serves them without surprises.
#[test]
fn pieces_and_service_on_every_catalogue_drive() {
    use disksched_core::disk::{DiskModel, Drive};
    use disksched_core::time::SimTime;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for name in builtin::names() {
        let model = std::sync::Arc::new(DiskModel::new(builtin::resolve(name, None).unwrap()).unwrap());
        let l = &model.layout;
        let mut drive = Drive::new(model.clone());
        let mut pieces = Vec::new();
        let mut now = SimTime(0);
        for k in 0..3000 {
            let blocks = 1 + (rnd() % 600) as u32;
            let lbn = rnd() % (l.capacity() - blocks as u64);
            l.pieces(lbn, blocks, &mut pieces);
            let mut next = lbn;
            for p in &pieces {
                let mut got = Vec::new();
                for s in 0..p.span_sectors {
                    let sector = (p.first_sector + s) % p.sectors_per_track;
                    if let Some(b) = l.pbn_to_lbn(Pbn { cylinder: p.cylinder, head: p.head, sector }) {
                        got.push(b);
                    }
                }
                assert_eq!(got, (next..next + p.blocks as u64).collect::<Vec<_>>(), "{name}: lbn {lbn} x {blocks}");
                next += p.blocks as u64;
            }
            assert_eq!(next, lbn + blocks as u64, "{name}");
            let s = drive.serve(now, lbn, blocks, k % 3 == 0);
            assert!(s.done > now, "{name}");
            now = s.done;
        }
    }
}

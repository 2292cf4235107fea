//! The spec validator bounds what a disk file may make the simulator
//! allocate: each case from issue 22 ends in a one-line error naming the file
//! (where there is one), the value and the bound, before anything is sized
//! from it. Every way a disk gets in is covered: spec TOML, DiskSim import
//! (.model / .diskspecs / .seek) and datasheet figures.

use disksched_core::disk::builtin;
use disksched_core::disk::datasheet::Datasheet;
use disksched_core::disk::disksim::import;
use disksched_core::disk::spec::limits;
use disksched_core::disk::DiskModel;
use std::path::PathBuf;

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("disksched-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A built-in spec as a TOML table, edited by `edit`, written to `name`.
fn spec_file(name: &str, edit: impl FnOnce(&mut toml::Table)) -> PathBuf {
    let text = builtin::BUILTIN.iter().find(|b| b.0 == "hp_c2247a").unwrap().1;
    let mut t: toml::Table = toml::from_str(text).unwrap();
    edit(&mut t);
    scratch(name, &toml::to_string(&t).unwrap())
}

fn load_err(p: &PathBuf) -> String {
    let e = builtin::resolve(p.to_str().unwrap(), None).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains(&p.display().to_string()), "names the file: {e}");
    e
}

#[test]
fn the_unedited_built_in_still_loads_from_a_file() {
    let p = spec_file("ok.toml", |_| {});
    let spec = builtin::resolve(p.to_str().unwrap(), None).unwrap();
    DiskModel::new(spec).unwrap();
}

#[test]
fn four_billion_cylinders_in_a_spec_is_an_error_naming_file_value_and_bound() {
    let p = spec_file("cyl.toml", |t| { t.insert("cylinders".into(), toml::Value::Integer(4_000_000_000)); });
    let e = load_err(&p);
    assert!(e.contains("cylinders = 4000000000") && e.contains(&limits::MAX_CYLINDERS.to_string()), "{e}");
}

#[test]
fn surfaces_times_cylinders_times_sectors_cannot_overflow() {
    // 65,536 surfaces x 2^24 cylinders x 2^24 sectors wrapped to 0 (then a remainder by zero).
    let p = spec_file("surf.toml", |t| { t.insert("surfaces".into(), toml::Value::Integer(65_536)); });
    let e = load_err(&p);
    assert!(e.contains("surfaces = 65536") && e.contains(&limits::MAX_SURFACES.to_string()), "{e}");
    // Each within its own bound, but the product of tracks is not.
    let p = spec_file("tracks.toml", |t| {
        t.insert("surfaces".into(), toml::Value::Integer(1024));
        t.insert("cylinders".into(), toml::Value::Integer(10_000_000));
    });
    let e = load_err(&p);
    assert!(e.contains(&format!("= {}", 1024u64 * 10_000_000)) && e.contains(&limits::MAX_TRACKS.to_string()), "{e}");
    // Sectors per track past the bound.
    let p = spec_file("spt.toml", |t| {
        let z = t["layout"]["zones"].as_array().unwrap()[0].clone();
        let mut z = z.as_table().unwrap().clone();
        z.insert("sectors_per_track".into(), toml::Value::Integer(4_294_967_295));
        t.get_mut("layout").unwrap().as_table_mut().unwrap().insert("zones".into(), toml::Value::Array(vec![toml::Value::Table(z)]));
    });
    let e = load_err(&p);
    assert!(e.contains("sectors_per_track = 4294967295") && e.contains("65535"), "{e}");
}

#[test]
fn four_billion_cache_segments_in_a_spec_is_an_error() {
    let p = spec_file("cache.toml", |t| {
        let c = t.entry("controller").or_insert(toml::Value::Table(Default::default()));
        c.as_table_mut().unwrap().insert("cache_segments".into(), toml::Value::Integer(4_000_000_000));
    });
    let e = load_err(&p);
    assert!(e.contains("cache_segments = 4000000000") && e.contains(&limits::MAX_CACHE_SEGMENTS.to_string()), "{e}");
}

#[test]
fn a_layout_error_in_a_spec_file_names_the_file() {
    // Past validation: the spares do not fit the sparing unit (found while building the layout).
    let p = spec_file("spares.toml", |t| {
        let zones = t.get_mut("layout").unwrap().get_mut("zones").unwrap().as_array_mut().unwrap();
        zones[0].as_table_mut().unwrap().insert("spares".into(), toml::Value::Integer(1_000_000));
    });
    let e = load_err(&p);
    assert!(e.contains("1000000 spares do not fit"), "{e}");
}

#[test]
fn a_bad_seek_table_in_a_spec_names_the_file_and_entry() {
    let p = spec_file("seek.toml", |t| {
        let seek = t.get_mut("seek").unwrap().as_table_mut().unwrap();
        let pts = vec![toml::Value::Array(vec![5.0.into(), 2.0.into()]), toml::Value::Array(vec![3.0.into(), 2.5.into()])];
        seek.insert("table".into(), toml::Value::Array(pts));
    });
    let e = load_err(&p);
    assert!(e.contains("seek.table[1] = (3, 2.5)") && e.contains("must increase"), "{e}");
}

const HPL_MECH: &str = "Mechanical Model = dm_mech_g1 {
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      HPL seek equation values = [ 300, 3.75, 0.33, 7.69, 0.0059, -1 ],
      Head switch time = 0.8,
      Rotation speed (in rpms) = 5400
   }";

/// A one-zone g1 drive (2 surfaces, 100 cylinders, 50 sectors per track).
fn g1_model(last_cyl: &str, extra: &str) -> String {
    format!("dm_disk tiny {{
   Number of data surfaces = 2,
   Number of cylinders = 100,
   Block count = 10000,
   Layout Model = dm_layout_g1 {{
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 0,
      Zones = [ dm_layout_g1_zone {{
         First cylinder number = 0,
         Last cylinder number = {last_cyl},
         Blocks per track = 50,
         Skew for track switch = 3,
         Skew for cylinder switch = 5
      }} ]
   }},
   {HPL_MECH}{extra}
}}
")
}

/// A g4 drive: 2 surfaces x 10 cylinders of 100-slot tracks; `root` is the
/// root table (a table of two TRACK runs is table 0).
fn g4_model(root: &str, slips: &str) -> String {
    format!("dm_disk tiny4 {{
   Number of data surfaces = 2,
   Number of cylinders = 10,
   Block count = 1900,
   Layout Model = dm_layout_g4 {{
      TP = [ 0, 99, 100 ],
      IDX = [ [ 0, 0, 0.0, 100, 1, 0.1, 1000, 10, TRACK, 0, 0,
                1000, 0, 0.0, 100, 1, 0.1, 1000, 10, TRACK, 0, 1 ]{root} ],
      Slips = [ {slips} ],
      Remaps = [ ]
   }},
   {HPL_MECH}
}}
")
}

fn import_err(name: &str, text: &str) -> String {
    let p = scratch(name, text);
    let e = import(&p, None, None).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains(name), "names the file: {e}");
    e
}

#[test]
fn the_test_models_import_as_written() {
    // The templates are sound: only the edited number makes them fail.
    let s = import(&scratch("g1ok.model", &g1_model("99", "")), None, None).unwrap();
    assert_eq!(s.blocks, 2 * 100 * 50);
    let s = import(&scratch("g4ok.model", &g4_model("", "5, 10")), None, None).unwrap();
    assert_eq!(s.blocks, 1900);
    DiskModel::new(s).unwrap();
}

#[test]
fn a_zone_ending_on_cylinder_4294967294_is_an_error_with_file_line_and_bound() {
    let e = import_err("zone.model", &g1_model("4294967294", ""));
    // The value sits on line 10 of the file.
    assert!(e.contains("zone.model:10") && e.contains("4294967294") && e.contains(&(limits::MAX_CYLINDERS - 1).to_string()), "{e}");
}

#[test]
fn a_g4_run_of_2_pow_31_tracks_is_refused_before_expansion() {
    // A root table repeating table 0 (2,000 slots, 2 x 10 tracks) 2^31 times:
    // its slot count is already past the bound.
    let e = import_err("run.model", &g4_model(&format!(", [ 0, 0, 0.0, 2000, 10, 0.0, {}, {}, IDX, 0 ]", 2000u64 << 31, 10u64 << 31), ""));
    assert!(e.contains("run.model:") && e.contains(&(2000u64 << 31).to_string()) && e.contains(&limits::MAX_BLOCKS.to_string()), "{e}");
    // 2^20 times: slots within bounds, but 20 x 2^20 tracks are not.
    let e = import_err("tracks.model", &g4_model(&format!(", [ 0, 0, 0.0, 2000, 1, 0.0, {}, {}, IDX, 0 ]", 2000u64 << 20, 1u64 << 20), ""));
    assert!(e.contains("tracks.model:") && e.contains(&(20u64 << 20).to_string()) && e.contains(&limits::MAX_TRACKS.to_string()), "{e}");
    // A child table numbered 2^31.
    let e = import_err("child.model", &g4_model(", [ 0, 0, 0.0, 2000, 10, 0.0, 2000, 10, IDX, 2147483648 ]", ""));
    assert!(e.contains("2147483648"), "{e}");
}

#[test]
fn a_g4_slip_count_of_3e8_is_refused_before_expansion() {
    let e = import_err("slips.model", &g4_model("", "5, 300000000"));
    assert!(e.contains("slips.model:") && e.contains("300000000") && e.contains(&limits::MAX_SLIPS.to_string()), "{e}");
}

#[test]
fn four_billion_cache_segments_in_a_diskspecs_is_an_error_naming_the_line() {
    let text = format!("disksim_disk tinyd {{\n   Number of buffer segments = 4e9,\n   Model = {}\n}}\n", g1_model("99", ""));
    let e = import_err("cache.diskspecs", &text);
    assert!(e.contains("cache.diskspecs:2") && e.contains("4000000000") && e.contains(&limits::MAX_CACHE_SEGMENTS.to_string()), "{e}");
}

#[test]
fn a_model_with_a_dm_disk_and_a_bus_imports_instead_of_panicking() {
    let text = format!("{}\ndisksim_bus bus0 {{\n   Read block transfer time = 0.02,\n   Write block transfer time = 0.03\n}}\n", g1_model("99", ""));
    let s = import(&scratch("bus.model", &text), None, None).unwrap();
    // The bus sets the transfer times (no disksim_disk to add its own).
    assert_eq!(s.controller.bus_sector_ms, 0.02);
    assert_eq!(s.controller.bus_write_sector_ms, Some(0.03));
}

#[test]
fn a_bad_seek_file_names_file_and_line() {
    scratch("curve.seek", "Seek distances measured: 3\n1, 1.0\n5, 2.0\n4, 2.5\n");
    let model = g1_model("99", "").replace("Seek type = hpl,", "Seek type = extracted,\n      Full seek curve = curve.seek,");
    let e = import(&scratch("extracted.model", &model), None, None).unwrap_err().to_string();
    assert!(e.contains("curve.seek:4") && e.contains("distance 4") && e.contains("must increase"), "{e}");
    scratch("neg.seek", "1, 1.0\n2, -2.0\n");
    let model = g1_model("99", "").replace("Seek type = hpl,", "Seek type = extracted,\n      Full seek curve = neg.seek,");
    let p = scratch("neg.model", &model);
    let e = import(&p, None, None).unwrap_err().to_string();
    assert!(e.contains("neg.seek:2") && e.contains("-2"), "{e}");
}

const SHEET: &str = r#""name": "x", "rpm": 7200, "outer_mb_s": 100, "inner_mb_s": 50, "track_to_track_ms": 1, "average_seek_ms": 8, "full_stroke_ms": 16"#;

#[test]
fn a_datasheet_nan_names_the_flag_not_a_column_of_internal_json() {
    // What `json.dumps` writes for --capacity-gb nan.
    let e = Datasheet::from_json(&format!("{{{SHEET}, \"capacity_gb\": NaN}}")).unwrap_err().to_string();
    assert!(e.contains("--capacity-gb") && e.contains("NaN") && !e.contains("column"), "{e}");
    let e = Datasheet::from_json(&format!("{{{SHEET}, \"capacity_gb\": 100, \"surfaces\": -1}}")).unwrap_err().to_string();
    assert!(e.contains("--surfaces") && e.contains("-1") && !e.contains("column"), "{e}");
    // NaN inside a string is left alone.
    let d = Datasheet::from_json(&format!("{{{}, \"capacity_gb\": 100}}", SHEET.replace("\"x\"", "\"NaN-Infinity\""))).unwrap();
    assert_eq!(d.name, "NaN-Infinity");
    d.build().unwrap();
}

#[test]
fn a_datasheet_capacity_of_1e308_is_bounded() {
    let e = Datasheet::from_json(&format!("{{{SHEET}, \"capacity_gb\": 1e308}}")).unwrap().build().unwrap_err().to_string();
    assert!(e.contains("capacity_gb") && e.contains(&limits::MAX_BLOCKS.to_string()), "{e}");
    let e = Datasheet::from_json(&format!("{{{SHEET}, \"capacity_gb\": 100, \"cache_kb\": 4294967295}}")).unwrap().build();
    // A huge buffer is clamped into the segment bound, not wrapped.
    if let Err(e) = e {
        assert!(e.to_string().contains("segment"), "{e}");
    }
}

/// A time figure that is negative, not a number or beyond any drive's (a
/// 1e300 ms bus time saturated every completion at the end of time; a
/// negative overhead was silently 0), or a water mark that is no fraction,
/// is an error naming the file, the key and the value; so is a DiskSim
/// mode past the manual's (a `Buffer continuous read` of 99 ran as mode 1).
#[test]
fn a_time_figure_out_of_range_names_the_file_key_and_value() {
    let cases: [(&str, &str, f64, &str); 7] = [
        ("controller", "read_overhead_after_read_ms", -5.0, "controller.read_overhead_after_read_ms = -5"),
        ("controller", "bus_sector_ms", 1e300, "controller.bus_sector_ms = 1e300: expected a time in [0, 10000] ms"),
        ("controller", "first_reselect_overhead_ms", f64::NAN, "controller.first_reselect_overhead_ms = NaN"),
        ("seek", "head_switch_ms", -3.0, "seek.head_switch_ms = -3"),
        ("seek", "write_settle_ms", -2e4, "seek.write_settle_ms = -20000"),
        ("controller", "read_water_mark", 7.0, "controller.read_water_mark = 7: expected a fraction"),
        ("controller", "overhead_time_scale", -1.0, "controller.overhead_time_scale = -1"),
    ];
    for (k, (table, key, value, expected)) in cases.into_iter().enumerate() {
        let p = spec_file(&format!("time{k}.toml"), |t| {
            let section = t.entry(table).or_insert(toml::Value::Table(Default::default()));
            section.as_table_mut().unwrap().insert(key.into(), toml::Value::Float(value));
        });
        let e = load_err(&p);
        assert!(e.contains(expected), "{key}: {e}");
    }
    for (key, value, expected) in [("continuous_read", 99, "controller.continuous_read = 99: expected a DiskSim mode in 0..=4"),
                                   ("fast_write_level", 7, "controller.fast_write_level = 7: expected a DiskSim mode in 0..=2")] {
        let p = spec_file(&format!("{key}.toml"), |t| {
            t.get_mut("controller").unwrap().as_table_mut().unwrap().insert(key.into(), toml::Value::Integer(value));
        });
        let e = load_err(&p);
        assert!(e.contains(expected), "{key}: {e}");
    }
    // A negative write settle (DiskSim's HP and DEC drives) still loads.
    let p = spec_file("settle.toml", |t| {
        t.get_mut("seek").unwrap().as_table_mut().unwrap().insert("write_settle_ms".into(), toml::Value::Float(-0.65));
    });
    assert!(builtin::resolve(p.to_str().unwrap(), None).is_ok());
}

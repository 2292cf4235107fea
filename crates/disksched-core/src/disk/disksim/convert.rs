//! DiskSim `disksim_disk` / `dm_disk` blocks -> [`DiskSpec`].
//!
//! Unknown parameters in `disksim_disk`, `dm_disk`, `dm_mech_g1`,
//! `dm_layout_g1` and its zones are errors (`file:line: unknown parameter`),
//! so nothing a file states is dropped unnoticed. What each parameter becomes
//! is tabulated in docs/disksim-parameters.md.

use super::parser::{parse_file, Block, Loc, Node, ParamFile};
use crate::disk::layout::Layout;
use crate::disk::spec::{limits, ControllerSpec, DiskSpec, G4Spec, HplSeek, LayoutSpec, Mapping, SeekSpec, Sparing, ZoneSpec};
use crate::error::{Error, Result};
use std::path::Path;

const DISKSIM_DISK_KNOWN: &[&str] = &[
    "Model", "Per-request overhead time", "Time scale for overheads", "Bulk sector transfer time",
    "Hold bus entire read xfer", "Hold bus entire write xfer", "Allow almost read hits",
    "Allow sneaky full read hits", "Allow sneaky partial read hits", "Allow sneaky intermediate read hits",
    "Allow read hits on write data", "Allow write prebuffering", "Preseeking level", "Never disconnect",
    "Print stats", "Avg sectors per cylinder", "Max queue length", "Scheduler", "Number of buffer segments",
    "Maximum number of write segments", "Segment size (in blks)", "Use separate write segment",
    "Low (write) water mark", "High (read) water mark", "Set watermark by reqsize", "Calc sector by sector",
    "Enable caching in buffer", "Buffer continuous read", "Minimum read-ahead (blks)",
    "Maximum read-ahead (blks)", "Read-ahead over requested", "Read-ahead on idle hit", "Read any free blocks",
    "Fast write level", "Immediate buffer read", "Immediate buffer write", "Combine seq writes",
    "Stop prefetch in sector", "Disconnect write if seek", "Write hit stop prefetch", "Read directly to buffer",
    "Immed transfer partial hit", "Read hit over. after read", "Read hit over. after write",
    "Read miss over. after read", "Read miss over. after write", "Write hit over. after read",
    "Write hit over. after write", "Write miss over. after read", "Write miss over. after write",
    "Read completion overhead", "Write completion overhead", "Data preparation overhead",
    "First reselect overhead", "Other reselect overhead", "Read disconnect afterread",
    "Read disconnect afterwrite", "Write disconnect overhead", "Extra write disconnect",
    "Extradisc command overhead", "Extradisc disconnect overhead", "Extradisc inter-disconnect delay",
    "Extradisc 2nd disconnect overhead", "Extradisc seek delta", "Minimum seek delay",
];
const DM_DISK_KNOWN: &[&str] = &["Number of data surfaces", "Number of cylinders", "Block count", "Mechanical Model", "Layout Model"];
const DM_MECH_KNOWN: &[&str] = &[
    "Access time type", "Seek type", "Single cylinder seek time", "Average seek time", "Full strobe seek time",
    "Full seek curve", "Add. write settling delay", "HPL seek equation values", "First ten seek times",
    "Head switch time", "Rotation speed (in rpms)", "Percent error in rpms",
];
const DM_LAYOUT_KNOWN: &[&str] = &["LBN-to-PBN mapping scheme", "Sparing scheme used", "Rangesize for sparing", "Zones"];
const DM_ZONE_KNOWN: &[&str] = &[
    "First cylinder number", "Last cylinder number", "Blocks per track", "Offset of first block",
    "Empty space at zone front", "Skew for track switch", "Skew for cylinder switch", "Number of spares",
    "slips", "defects",
];

/// Import the drive a DiskSim file describes. `.parv`: the instantiated
/// `disksim_disk` (or the one named `disk`); `.diskspecs`: its `disksim_disk`;
/// `.model`: its `dm_disk` (controller left at defaults). `name` becomes the
/// spec's name (default: the file stem, lower-cased).
pub fn import(path: &Path, name: Option<&str>, disk: Option<&str>) -> Result<DiskSpec> {
    let file = parse_file(path)?;
    let name = name.map(str::to_string).unwrap_or_else(|| {
        path.file_stem().map_or("disk".into(), |s| s.to_string_lossy().to_lowercase())
    });
    let at = |msg: String| Error::File { path: path.display().to_string(), msg };
    let disks: Vec<&Block> = file.blocks.iter().filter(|b| b.type_name == "disksim_disk").collect();
    let mut spec = if !disks.is_empty() {
        let chosen = choose_disk(&file, &disks, disk).map_err(at)?;
        from_disksim_disk(chosen, &name)?
    } else {
        let models: Vec<&Block> = file.blocks.iter().filter(|b| b.type_name == "dm_disk").collect();
        let chosen = match (models.as_slice(), disk) {
            ([one], None) => *one,
            (_, Some(d)) => *models.iter().find(|b| b.name.as_deref() == Some(d))
                .ok_or_else(|| at(format!("no dm_disk named {d}")))?,
            ([], None) => return Err(at("no disksim_disk or dm_disk block".into())),
            (_, None) => return Err(at(format!("{} dm_disk blocks; name one", models.len()))),
        };
        let mut s = from_dm_disk(chosen, &name)?;
        s.description = chosen.name.clone().unwrap_or_default();
        s
    };
    // A whole simulation (.parv) also says how fast its buses are: data moves
    // at the slowest of the drive's interface and the buses on its path.
    let buses: Vec<&Block> = file.blocks.iter().filter(|b| b.type_name == "disksim_bus").collect();
    for b in &buses {
        let c = &mut spec.controller;
        c.bus_sector_ms = c.bus_sector_ms.max(f64_or(b, "Read block transfer time", 0.0)?);
        c.bus_write_sector_ms = Some(c.bus_write_sector_ms.unwrap_or(0.0).max(f64_or(b, "Write block transfer time", 0.0)?));
    }
    if let (Some(w), Some(d)) = (&mut spec.controller.bus_write_sector_ms, disks_bulk(&file)) {
        *w = w.max(f64_or(d, "Bulk sector transfer time", 0.0).unwrap_or(0.0));
    }
    spec.source = format!("DiskSim 4.0 parameters: {}", sources(&file, path).join(", "));
    // DiskSim overwrites a zoned drive's `Block count` with what its zones
    // map (after empty fronts, spares and slips); only g4 keeps it.
    if spec.layout.g4.is_none() {
        spec.blocks = 0;
        spec.blocks = Layout::new(&spec).map_err(|e| at(e.to_string()))?.mapped_blocks();
    }
    // Check the mapping now so a bad file fails here, naming the file.
    Layout::new(&spec).map_err(|e| at(e.to_string()))?;
    Ok(spec)
}

/// The first disksim_disk block (for its interface speed); none when a
/// `.model`'s bare dm_disk was imported.
fn disks_bulk(file: &ParamFile) -> Option<&Block> {
    file.blocks.iter().find(|b| b.type_name == "disksim_disk")
}

fn choose_disk<'a>(file: &ParamFile, disks: &[&'a Block], want: Option<&str>) -> std::result::Result<&'a Block, String> {
    let named = |n: &str| disks.iter().find(|b| b.name.as_deref() == Some(n)).copied();
    if let Some(w) = want {
        return named(w).ok_or_else(|| format!("no disksim_disk named {w}"));
    }
    // Prefer the disks a .parv instantiates.
    let mut used: Vec<&Block> = Vec::new();
    for (_, ty, _) in &file.instances {
        if let Some(b) = named(ty) {
            if !used.iter().any(|u| std::ptr::eq(*u, b)) {
                used.push(b);
            }
        }
    }
    let pool: Vec<&Block> = if used.is_empty() { disks.to_vec() } else { used };
    match pool.as_slice() {
        [one] => Ok(one),
        many => Err(format!("several disks ({}); name one",
            many.iter().map(|b| b.name.clone().unwrap_or_default()).collect::<Vec<_>>().join(", "))),
    }
}

/// The file names that went into the import, for the spec's `source`.
fn sources(file: &ParamFile, path: &Path) -> Vec<String> {
    let mut out = vec![base(path.to_string_lossy().as_ref())];
    let mut add = |f: &str| {
        let b = base(f);
        if !out.contains(&b) {
            out.push(b);
        }
    };
    fn walk(b: &Block, add: &mut dyn FnMut(&str)) {
        add(&b.loc.file);
        for p in &b.params {
            walk_node(&p.value, add);
        }
    }
    fn walk_node(n: &Node, add: &mut dyn FnMut(&str)) {
        match &n.value {
            super::parser::Value::Block(b) => walk(b, add),
            super::parser::Value::List(l) => l.iter().for_each(|x| walk_node(x, add)),
            _ => {}
        }
    }
    for b in file.blocks.iter().filter(|b| b.type_name == "disksim_disk" || b.type_name == "dm_disk") {
        walk(b, &mut add);
        // The seek curve file.
        if let Some(c) = find_param(b, "Full seek curve") {
            add(c);
        }
    }
    out
}

fn find_param<'a>(b: &'a Block, name: &str) -> Option<&'a str> {
    for p in &b.params {
        if p.name.eq_ignore_ascii_case(name) {
            return p.value.as_word(name).ok();
        }
        if let Ok(inner) = p.value.as_block(&p.name) {
            if let Some(v) = find_param(inner, name) {
                return Some(v);
            }
        }
    }
    None
}

fn base(f: &str) -> String {
    Path::new(f).file_name().map_or(f.to_string(), |s| s.to_string_lossy().into_owned())
}

fn f64_or(b: &Block, key: &str, default: f64) -> Result<f64> {
    b.get(key).map_or(Ok(default), |p| p.value.as_f64(key))
}

/// `key` as a whole number no larger than `max` (a [`limits`] bound), or `default`.
fn bounded_or(b: &Block, key: &str, default: u32, max: u64) -> Result<u32> {
    let v = u32_or(b, key, default)?;
    match b.get(key) {
        Some(p) => limits::check(&format!("`{key}`"), v as u64, max).map(|_| v).map_err(|m| p.value.loc.err(m)),
        None => Ok(v),
    }
}

fn u32_or(b: &Block, key: &str, default: u32) -> Result<u32> {
    match b.get(key) {
        None => Ok(default),
        Some(p) => {
            let v = p.value.as_u64(key)?;
            u32::try_from(v).map_err(|_| p.value.loc.err(format!("`{key}`: {v} is too large")))
        }
    }
}

fn flag(b: &Block, key: &str) -> Result<bool> {
    Ok(u32_or(b, key, 0)? != 0)
}

fn from_disksim_disk(b: &Block, name: &str) -> Result<DiskSpec> {
    b.check_known(DISKSIM_DISK_KNOWN)?;
    let model = b.req("Model")?;
    let model = model.as_block("Model")?;
    if model.type_name != "dm_disk" {
        return Err(model.loc.err(format!("`Model` must be a dm_disk block, found {}", model.type_name)));
    }
    let mut spec = from_dm_disk(model, name)?;
    spec.description = b.name.clone().unwrap_or_default();
    let c = ControllerSpec {
        read_overhead_after_read_ms: f64_or(b, "Read miss over. after read", 0.0)?,
        read_overhead_after_write_ms: f64_or(b, "Read miss over. after write", 0.0)?,
        write_overhead_after_read_ms: f64_or(b, "Write miss over. after read", 0.0)?,
        write_overhead_after_write_ms: f64_or(b, "Write miss over. after write", 0.0)?,
        read_hit_overhead_after_read_ms: f64_or(b, "Read hit over. after read", 0.0)?,
        read_hit_overhead_after_write_ms: f64_or(b, "Read hit over. after write", 0.0)?,
        write_hit_overhead_after_read_ms: f64_or(b, "Write hit over. after read", 0.0)?,
        write_hit_overhead_after_write_ms: f64_or(b, "Write hit over. after write", 0.0)?,
        per_request_overhead_ms: f64_or(b, "Per-request overhead time", 0.0)?,
        overhead_time_scale: f64_or(b, "Time scale for overheads", 1.0)?,
        read_completion_overhead_ms: f64_or(b, "Read completion overhead", 0.0)?,
        write_completion_overhead_ms: f64_or(b, "Write completion overhead", 0.0)?,
        data_preparation_overhead_ms: f64_or(b, "Data preparation overhead", 0.0)?,
        first_reselect_overhead_ms: f64_or(b, "First reselect overhead", 0.0)?,
        other_reselect_overhead_ms: f64_or(b, "Other reselect overhead", 0.0)?,
        read_disconnect_after_read_ms: f64_or(b, "Read disconnect afterread", 0.0)?,
        read_disconnect_after_write_ms: f64_or(b, "Read disconnect afterwrite", 0.0)?,
        write_disconnect_overhead_ms: f64_or(b, "Write disconnect overhead", 0.0)?,
        bus_sector_ms: f64_or(b, "Bulk sector transfer time", 0.0)?,
        bus_write_sector_ms: None,
        // DiskSim's queue length is a property of its validation set-up; the
        // simulator's command queue depth stays a simulation choice.
        queue_depth: ControllerSpec::default().queue_depth,
        max_queue_length: u32_or(b, "Max queue length", 0)?,
        cache_segments: bounded_or(b, "Number of buffer segments", 0, limits::MAX_CACHE_SEGMENTS)?,
        cache_write_segments: bounded_or(b, "Maximum number of write segments", 0, limits::MAX_CACHE_SEGMENTS)?,
        segment_size_blocks: bounded_or(b, "Segment size (in blks)", 0, limits::MAX_SEGMENT_BLOCKS)?,
        separate_write_segment: flag(b, "Use separate write segment")?,
        // The reference (WD's DiskSim) shares the segments: PDL's dedicated one is the spec's option.
        dedicated_write_segment: false,
        caching_enabled: flag(b, "Enable caching in buffer")?,
        read_ahead_min_blocks: bounded_or(b, "Minimum read-ahead (blks)", 0, limits::MAX_SEGMENT_BLOCKS)?,
        read_ahead_max_blocks: bounded_or(b, "Maximum read-ahead (blks)", 0, limits::MAX_SEGMENT_BLOCKS)?,
        continuous_read: u32_or(b, "Buffer continuous read", 0)?,
        fast_write_level: u32_or(b, "Fast write level", 0)?,
        immediate_buffer_read: flag(b, "Immediate buffer read")?,
        immediate_buffer_write: flag(b, "Immediate buffer write")?,
        read_hits_on_write_data: flag(b, "Allow read hits on write data")?,
        read_any_free_blocks: flag(b, "Read any free blocks")?,
        read_water_mark: f64_or(b, "High (read) water mark", 0.0)?,
        water_mark_by_request: flag(b, "Set watermark by reqsize")?,
        minimum_seek_delay_ms: f64_or(b, "Minimum seek delay", 0.0)?,
        read_ahead_over_requested: f64_or(b, "Read-ahead over requested", 0.0)? != 0.0,
        read_ahead_drops_request: f64_or(b, "Read-ahead over requested", 0.0)? < 0.0,
        read_ahead_on_idle_hit: flag(b, "Read-ahead on idle hit")?,
        finish_sector_on_stop: u32_or(b, "Stop prefetch in sector", 1)? == 0,
        read_ahead_when: Default::default(),
        same_track_read_ahead_blocks: 0,
        extra_write_disconnect: flag(b, "Extra write disconnect")?,
        extradisc_command_overhead_ms: f64_or(b, "Extradisc command overhead", 0.0)?,
        extradisc_disconnect_overhead_ms: f64_or(b, "Extradisc disconnect overhead", 0.0)?,
        extradisc_inter_disconnect_delay_ms: f64_or(b, "Extradisc inter-disconnect delay", 0.0)?,
        extradisc_second_disconnect_overhead_ms: f64_or(b, "Extradisc 2nd disconnect overhead", 0.0)?,
        extradisc_seek_delta_ms: f64_or(b, "Extradisc seek delta", 0.0)?,
        combine_seq_writes: flag(b, "Combine seq writes")?,
    };
    spec.controller = c;
    Ok(spec)
}

fn from_dm_disk(b: &Block, name: &str) -> Result<DiskSpec> {
    b.check_known(DM_DISK_KNOWN)?;
    let surfaces = b.req("Number of data surfaces")?.as_u64("Number of data surfaces")?;
    let cylinders_node = b.req("Number of cylinders")?;
    let cylinders = cylinders_node.as_u64("Number of cylinders")?;
    let blocks = b.req("Block count")?.as_u64("Block count")?;
    if surfaces == 0 || cylinders == 0 {
        return Err(b.loc.err(format!("dm_disk: {surfaces} surfaces x {cylinders} cylinders: expected both >= 1")));
    }
    let bound = |what: &str, v: u64, max: u64| limits::check(what, v, max).map_err(|m| b.loc.err(format!("dm_disk: {m}")));
    bound("`Number of data surfaces`", surfaces, limits::MAX_SURFACES)?;
    bound("`Number of cylinders`", cylinders, limits::MAX_CYLINDERS)?;
    bound("`Block count`", blocks, limits::MAX_BLOCKS)?;
    let mech = sub_block(b, "Mechanical Model", "dm_mech_g1")?;
    let lay_node = b.req("Layout Model")?;
    let lay = lay_node.as_block("Layout Model")?;
    let (seek, rpm, rpm_error) = mechanics(mech)?;
    let (layout, g4_last) = match lay.type_name.as_str() {
        "dm_layout_g1" => (layout(lay, surfaces as u32)?, 0),
        "dm_layout_g4" => layout_g4(lay, surfaces as u32)?,
        other => return Err(lay.loc.err(format!("`Layout Model`: {other} is not supported (only dm_layout_g1, dm_layout_g4)"))),
    };
    // Zones may reach past `Number of cylinders` (hp_c2490a), and so may a g4
    // table (maxtor300g's last band ends on cylinder 80512 of "80512"): DiskSim maps them, so cover them.
    let last = layout.zones.iter().map(|z| z.last_cylinder + 1).max().unwrap_or(0).max(g4_last);
    Ok(DiskSpec {
        name: name.to_string(),
        description: String::new(),
        source: String::new(),
        validated: String::new(),
        surfaces: surfaces as u32,
        cylinders: (cylinders as u32).max(last),
        blocks,
        sector_bytes: 512,
        rpm,
        rpm_error_percent: rpm_error,
        layout,
        seek,
        controller: ControllerSpec::default(),
    })
}

fn sub_block<'a>(b: &'a Block, key: &str, want: &str) -> Result<&'a Block> {
    let n = b.req(key)?;
    let inner = n.as_block(key)?;
    if inner.type_name != want {
        return Err(inner.loc.err(format!("`{key}`: {} is not supported (only {want})", inner.type_name)));
    }
    Ok(inner)
}

fn mechanics(m: &Block) -> Result<(SeekSpec, f64, f64)> {
    m.check_known(DM_MECH_KNOWN)?;
    let access = m.req("Access time type")?;
    if access.as_word("Access time type")? != "trackSwitchPlusRotation" {
        return Err(access.loc.err(format!("`Access time type` {} is not supported (only trackSwitchPlusRotation)", access.as_word("")?)));
    }
    let rpm = m.req("Rotation speed (in rpms)")?.as_f64("Rotation speed (in rpms)")?;
    let rpm_error = f64_or(m, "Percent error in rpms", 0.0)?;
    let opt = |k: &str| -> Result<Option<f64>> { m.get(k).map(|p| p.value.as_f64(k)).transpose() };
    let mut seek = SeekSpec {
        single_cylinder_ms: opt("Single cylinder seek time")?,
        average_ms: opt("Average seek time")?,
        full_stroke_ms: opt("Full strobe seek time")?,
        head_switch_ms: f64_or(m, "Head switch time", 0.0)?,
        write_settle_ms: f64_or(m, "Add. write settling delay", 0.0)?,
        ..Default::default()
    };
    let ty_node = m.req("Seek type")?;
    match ty_node.as_word("Seek type")? {
        "extracted" => {
            let curve = m.req("Full seek curve")?;
            let file = curve.as_word("Full seek curve")?;
            let dir = Path::new(&*curve.loc.file).parent().map(Path::to_path_buf).unwrap_or_default();
            let (read, write) = read_seek_file(&dir.join(file), &curve.loc)?;
            seek.table = Some(read);
            seek.write_table = write;
        }
        ty @ ("hpl" | "hplplus10") => {
            let v = m.req("HPL seek equation values")?;
            let vals = v.as_list("HPL seek equation values")?
                .iter().map(|n| n.as_f64("HPL seek equation values")).collect::<Result<Vec<_>>>()?;
            if vals.len() != 6 {
                return Err(v.loc.err(format!("`HPL seek equation values`: expected 6 numbers, found {}", vals.len())));
            }
            let first_ten_ms = if ty == "hplplus10" {
                let f = m.req("First ten seek times")?;
                let t = f.as_list("First ten seek times")?.iter().map(|n| n.as_f64("First ten seek times")).collect::<Result<Vec<_>>>()?;
                if t.len() != 10 {
                    return Err(f.loc.err(format!("`First ten seek times`: expected 10 numbers, found {}", t.len())));
                }
                t
            } else {
                Vec::new()
            };
            seek.hpl = Some(HplSeek {
                boundary_cylinders: vals[0],
                short_const_ms: vals[1],
                short_sqrt_ms: vals[2],
                long_const_ms: vals[3],
                long_linear_ms: vals[4],
                // -1 means "no override".
                single_cylinder_ms: (vals[5] >= 0.0).then_some(vals[5]),
                first_ten_ms,
            });
        }
        other => return Err(ty_node.loc.err(format!("`Seek type` {other} is not supported (extracted, hpl, hplplus10)"))),
    }
    Ok((seek, rpm, rpm_error))
}

type Curve = Vec<(f64, f64)>;

/// A `.seek` file: optional `Seek distances measured: N` header, then
/// `distance, read_ms[, stdev_ms[, write_ms]]` lines.
pub fn read_seek_file(path: &Path, from: &Loc) -> Result<(Curve, Option<Curve>)> {
    let shown = path.display().to_string();
    let text = crate::budget::read_text_file_utf8(path, "seek curve file")
        .map_err(|e| from.err(format!("seek curve {e}")))?;
    let err = |line: usize, msg: String| Error::Parse { path: shown.clone(), line, msg };
    let (mut read, mut write) = (Vec::new(), Vec::new());
    let mut stated: Option<(usize, usize)> = None;
    let mut columns: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix("Seek distances measured:") {
            let n = rest.trim().parse::<usize>().map_err(|_| err(ln, format!("bad count `{}`", rest.trim())))?;
            stated = Some((n, ln));
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if !(2..=4).contains(&f.len()) {
            return Err(err(ln, format!("expected `distance, ms[, stdev[, write ms]]`, found {} fields", f.len())));
        }
        if *columns.get_or_insert(f.len()) != f.len() {
            return Err(err(ln, format!("{} fields where earlier lines have {}", f.len(), columns.unwrap())));
        }
        let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| err(ln, format!("`{s}` is not a number")));
        let d = num(f[0])?;
        // The curve's rules (mechanics.rs), checked here so an error names this file and line.
        let prev = read.last().map_or(0.0, |p: &(f64, f64)| p.0);
        if d < 1.0 || d <= prev {
            return Err(err(ln, format!("distance {d}: distances must increase from 1 (previous {prev})")));
        }
        let ms = num(f[1])?;
        let wms = if f.len() == 4 { Some(num(f[3])?) } else { None };
        for t in std::iter::once(ms).chain(wms) {
            if t < 0.0 {
                return Err(err(ln, format!("seek time {t} ms: expected >= 0")));
            }
        }
        if read.len() as u64 >= limits::MAX_SEEK_POINTS {
            return Err(err(ln, format!("more than {} seek points (disk::spec::limits)", limits::MAX_SEEK_POINTS)));
        }
        read.push((d, ms));
        if let Some(w) = wms {
            write.push((d, w));
        }
    }
    if let Some((n, ln)) = stated {
        if n != read.len() {
            return Err(err(ln, format!("states {n} seek distances but the file has {}", read.len())));
        }
    }
    if read.is_empty() {
        return Err(err(1, "no seek points".into()));
    }
    Ok((read, (!write.is_empty()).then_some(write)))
}

/// A skew or offset: sectors, or a fraction of a revolution if below 1.
fn sectors(n: &Node, what: &str, spt: u32) -> Result<f64> {
    let v = n.as_f64(what)?;
    if v < 0.0 {
        return Err(n.loc.err(format!("`{what}`: {v} is negative")));
    }
    Ok(if v > 0.0 && v < 1.0 { v * spt as f64 } else { v })
}

fn layout(l: &Block, surfaces: u32) -> Result<LayoutSpec> {
    l.check_known(DM_LAYOUT_KNOWN)?;
    let map_node = l.req("LBN-to-PBN mapping scheme")?;
    let mapping = match map_node.as_u64("LBN-to-PBN mapping scheme")? {
        0 => Mapping::CylinderMajor,
        1 => Mapping::SerpentineZone,
        2 => Mapping::Serpentine,
        m => return Err(map_node.loc.err(format!("`LBN-to-PBN mapping scheme` {m} is not supported (0, 1, 2)"))),
    };
    let sp_node = l.req("Sparing scheme used")?;
    let scheme = sp_node.as_u64("Sparing scheme used")?;
    let sparing = match scheme {
        0 => Sparing::None,
        1 => Sparing::TracksPerZone,
        2 => Sparing::SectorsPerCylinder,
        3 => Sparing::SectorsPerTrack,
        7 => Sparing::EndOfDisk,
        8 => Sparing::SectorsPerRange,
        9 => Sparing::SectorsPerZone,
        s => return Err(sp_node.loc.err(format!("`Sparing scheme used` {s} is not supported (0, 1, 2, 3, 7, 8, 9)"))),
    };
    let range = u32_or(l, "Rangesize for sparing", 1)?;
    if range == 0 {
        return Err(l.req("Rangesize for sparing")?.loc.err("`Rangesize for sparing` must be >= 1"));
    }
    let zones_node = l.req("Zones")?;
    let mut zones = Vec::new();
    for zn in zones_node.as_list("Zones")? {
        let z = zn.as_block("Zones")?;
        if z.type_name != "dm_layout_g1_zone" {
            return Err(z.loc.err(format!("`Zones` holds {}, expected dm_layout_g1_zone", z.type_name)));
        }
        zones.push(zone(z, scheme, surfaces)?);
    }
    if zones.is_empty() {
        return Err(zones_node.loc.err("`Zones` is empty"));
    }
    Ok(LayoutSpec { mapping, sparing, sparing_range_cylinders: if sparing == Sparing::SectorsPerRange { range } else { 1 }, zones, g4: None })
}

/// Whole numbers of a list (integers, possibly negative).
fn ints(n: &Node, what: &str) -> Result<Vec<i64>> {
    n.as_list(what)?.iter().map(|v| {
        let w = v.as_word(what)?;
        w.parse::<i64>().map_err(|_| v.loc.err(format!("`{what}`: `{w}` is not a whole number")))
    }).collect()
}

/// A `dm_layout_g4`: TP, IDX, Slips, Remaps (empty). Returns the layout and
/// one past the highest cylinder its tracks use. Revolution fractions are
/// kept in micro-revolutions (the files give six decimals).
fn layout_g4(l: &Block, surfaces: u32) -> Result<(LayoutSpec, u32)> {
    l.check_known(&["TP", "IDX", "Slips", "Remaps"])?;
    let tp_node = l.req("TP")?;
    let tp = ints(tp_node, "TP")?;
    if tp.is_empty() || tp.len() % 3 != 0 || tp.iter().any(|&v| v < 0 || v > u32::MAX as i64) {
        return Err(tp_node.loc.err("`TP`: expected (first, last, count) triples of whole numbers >= 0"));
    }
    let patterns: Vec<[u32; 3]> = tp.chunks(3).map(|c| [c[0] as u32, c[1] as u32, c[2] as u32]).collect();
    let idx_node = l.req("IDX")?;
    let mut tables = Vec::new();
    for tn in idx_node.as_list("IDX")? {
        let items = tn.as_list("IDX")?;
        let mut entries = Vec::new();
        let mut i = 0;
        while i < items.len() {
            let kind_at = items.get(i + 8).ok_or_else(|| tn.loc.err("`IDX`: a table entry is cut short"))?;
            let kind = kind_at.as_word("IDX")?;
            let width = match kind {
                "TRACK" => 11,
                "IDX" => 10,
                k => return Err(kind_at.loc.err(format!("`IDX`: child kind `{k}` is neither TRACK nor IDX"))),
            };
            let e = items.get(i..i + width).ok_or_else(|| kind_at.loc.err("`IDX`: a table entry is cut short"))?;
            let int = |k: usize| -> Result<i64> {
                let w = e[k].as_word("IDX")?;
                w.parse::<i64>().map_err(|_| e[k].loc.err(format!("`IDX`: `{w}` is not a whole number")))
            };
            let urev = |k: usize| -> Result<i64> {
                let v = e[k].as_f64("IDX")?;
                if !(0.0..1.0).contains(&v) {
                    return Err(e[k].loc.err(format!("`IDX`: angle {v} is not a revolution fraction in [0, 1)")));
                }
                Ok((v * 1e6).round() as i64)
            };
            entries.push([int(0)?, int(1)?, urev(2)?, int(3)?, int(4)?, urev(5)?, int(6)?, int(7)?,
                (kind == "IDX") as i64, int(9)?, if width == 11 { int(10)? } else { 0 }]);
            i += width;
        }
        tables.push(entries);
    }
    let slip_node = l.req("Slips")?;
    let sl = ints(slip_node, "Slips")?;
    if sl.len() % 2 != 0 || sl.iter().any(|&v| v < 0) {
        return Err(slip_node.loc.err("`Slips`: expected (slot, count) pairs of whole numbers >= 0"));
    }
    let slips: Vec<[u64; 2]> = sl.chunks(2).map(|c| [c[0] as u64, c[1] as u64]).collect();
    if let Some(r) = l.get("Remaps") {
        if !r.value.as_list("Remaps")?.is_empty() {
            return Err(r.value.loc.err("`Remaps`: remapped sectors are not supported (every shared file has none)"));
        }
    }
    let g4 = G4Spec { patterns, tables, slips };
    // One past the highest cylinder: build the table against a generous bound.
    let probe = crate::disk::tracktable::TrackTable::extent(&g4, surfaces).map_err(|m| l.loc.err(format!("dm_layout_g4: {m}")))?;
    Ok((LayoutSpec { mapping: Mapping::CylinderMajor, sparing: Sparing::None, sparing_range_cylinders: 1, zones: Vec::new(), g4: Some(g4) }, probe))
}

fn zone(z: &Block, scheme: u64, surfaces: u32) -> Result<ZoneSpec> {
    z.check_known(DM_ZONE_KNOWN)?;
    let u32_req = |k: &str| -> Result<u32> {
        let n = z.req(k)?;
        u32::try_from(n.as_u64(k)?).map_err(|_| n.loc.err(format!("`{k}` is too large")))
    };
    // Bounded before the zone's size is computed from them.
    let bounded = |k: &str, max: u64| -> Result<u32> {
        let v = u32_req(k)?;
        limits::check(&format!("`{k}`"), v as u64, max).map_err(|m| z.req(k).map_or_else(|e| e, |n| n.loc.err(m)))?;
        Ok(v)
    };
    let first = bounded("First cylinder number", limits::MAX_CYLINDERS - 1)?;
    let last = bounded("Last cylinder number", limits::MAX_CYLINDERS - 1)?;
    let spt = bounded("Blocks per track", limits::MAX_SECTORS_PER_TRACK)?;
    if last < first || spt == 0 {
        return Err(z.loc.err(format!("zone cylinders {first}..{last} with {spt} blocks per track")));
    }
    let spares = u32_or(z, "Number of spares", 0)?;
    if scheme == 7 && spares != 0 {
        return Err(z.req("Number of spares")?.loc.err("sparing scheme 7 keeps spares at the end of the disk; `Number of spares` must be 0"));
    }
    let list = |k: &str| -> Result<Vec<u64>> {
        match z.get(k) {
            None => Ok(Vec::new()),
            Some(p) => p.value.as_list(k)?.iter().map(|n| n.as_u64(k)).collect(),
        }
    };
    let slips = list("slips")?;
    let zone_tracks = (last - first + 1) as u64 * surfaces as u64;
    let unit = if scheme == 1 { zone_tracks } else { zone_tracks * spt as u64 };
    if let Some(&s) = slips.iter().max() {
        if s >= unit {
            return Err(z.get("slips").unwrap().value.loc.err(format!(
                "slip {s} is beyond the zone's {unit} {}", if scheme == 1 { "tracks" } else { "sectors" })));
        }
    }
    let d = list("defects")?;
    if d.len() % 2 != 0 {
        return Err(z.get("defects").unwrap().value.loc.err("`defects` must hold (defective, spare) pairs"));
    }
    let offset = match z.get("Offset of first block") {
        Some(p) => sectors(&p.value, "Offset of first block", spt)?,
        None => 0.0,
    };
    Ok(ZoneSpec {
        first_cylinder: first,
        last_cylinder: last,
        sectors_per_track: spt,
        first_block_offset_sectors: offset,
        track_skew_sectors: sectors(z.req("Skew for track switch")?, "Skew for track switch", spt)?,
        cylinder_skew_sectors: sectors(z.req("Skew for cylinder switch")?, "Skew for cylinder switch", spt)?,
        spares,
        empty_front_slots: z.get("Empty space at zone front").map_or(Ok(0), |p| p.value.as_u64("Empty space at zone front"))?,
        slips: if scheme == 1 { Vec::new() } else { slips.clone() },
        slipped_tracks: if scheme == 1 { slips } else { Vec::new() },
        defects: d.chunks(2).map(|p| (p[0], p[1])).collect(),
    })
}

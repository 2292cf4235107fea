//! Importer for DiskSim 4.0 parameter files (`.parv`, `.diskspecs`, `.model`,
//! `.seek`): a generic parser that keeps file:line for every value, and the
//! conversion of a drive's blocks into the project's [`DiskSpec`].

pub mod convert;
pub mod parser;

pub use convert::{import, read_seek_file};
pub use parser::{parse_file, parse_str, Block, Loc, Node, Param, ParamFile, Value};

/// The built-in catalogue: (name, DiskSim file it is imported from, relative
/// to the DiskSim data directory, the drive). Where DiskSim has a validation
/// set-up for a drive (a `.parv` that instantiates it, with the bus and
/// controller its trace was measured behind), the built-in of that name IS
/// that set-up; other variants get their own names (`hp_c3323a_synth`: the
/// non-validate model the synthetic set-ups use). Drives without a set-up
/// (hp_c2249a, maxtor300g) come from their `.diskspecs`.
pub const CATALOGUE: &[(&str, &str, &str)] = &[
    ("atlas10k", "atlas10k.parv", "Quantum Atlas 10K"),
    ("atlas3", "atlas_III.parv", "Quantum Atlas III"),
    ("barracuda", "barracuda.parv", "Seagate Barracuda ST32171W"),
    ("cheetah4lp", "cheetah4LP.parv", "Seagate Cheetah 4LP ST34501N"),
    ("cheetah9lp", "cheetah9LP.parv", "Seagate Cheetah 9LP ST39102LW"),
    ("ibm18es", "ibm18es.parv", "IBM Ultrastar 18ES DNES-309170W"),
    ("hp_c2247a", "hp_c2247a.parv", "HP C2247A"),
    ("hp_c2249a", "hp_c2249a.diskspecs", "HP C2249A"),
    ("hp_c2490a", "hp_c2490a.parv", "HP C2490A"),
    ("hp_c3323a", "hp_c3323a.parv", "HP C3323A"),
    ("hp_c3323a_synth", "hp_c3323a.diskspecs", "HP C3323A (non-validate model of DiskSim's synthetic set-ups)"),
    ("dec_rz26", "dec_rz26.parv", "DEC RZ26"),
    ("st41601n", "st41601n.parv", "Seagate ST41601N"),
    ("maxtor300g", "dualseek_example/maxtor300g.diskspecs", "Maxtor Atlas 10K V 300 GB"),
];

/// Import catalogue drive `name` from the DiskSim data directory `dir`.
pub fn import_catalogue(dir: &std::path::Path, name: &str) -> crate::error::Result<crate::disk::spec::DiskSpec> {
    let (_, file, drive) = CATALOGUE.iter().find(|c| c.0 == name).ok_or_else(|| {
        crate::error::config_err("disk", format!("{name} is not in the DiskSim catalogue"))
    })?;
    let mut spec = import(&dir.join(file), Some(name), None)?;
    spec.validated = if file.ends_with(".parv") {
        let c = &spec.controller;
        format!("DiskSim 4.0 validation set-up {file} (disk {} behind its controller; bus time per block {} ms read, {} ms write)",
            spec.description, c.bus_sector_ms, c.bus_write_sector_ms.unwrap_or(c.bus_sector_ms))
    } else if let Some((base, setup, _)) = CATALOGUE.iter().find(|c| c.1.ends_with(".parv") && name.starts_with(&format!("{}_", c.0))) {
        format!("not validated: a variant of {base}, whose DiskSim validation set-up is {setup}")
    } else {
        "not validated: DiskSim has no validation set-up for this drive".into()
    };
    spec.description = format!("{drive}, {:.2} GB exported, {} RPM (DiskSim disk {})",
        spec.capacity_bytes() as f64 / 1e9, spec.rpm, spec.description);
    Ok(spec)
}

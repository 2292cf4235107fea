//! Importer for DiskSim 4.0 parameter files (`.parv`, `.diskspecs`, `.model`,
//! `.seek`): a generic parser that keeps file:line for every value, and the
//! conversion of a drive's blocks into the project's [`DiskSpec`].

pub mod convert;
pub mod parser;

pub use convert::{import, read_seek_file};
pub use parser::{parse_file, parse_str, Block, Loc, Node, Param, ParamFile, Value};

/// The built-in catalogue: (name, DiskSim file it is imported from, relative
/// to the DiskSim data directory, the drive). Where a drive has NAME.model and
/// NAME_validate.model, the `.diskspecs` named here sources the validated one.
/// Drives with a validation trace are imported from their validation `.parv`,
/// which adds the bus speed of the set-up the trace was measured on.
pub const CATALOGUE: &[(&str, &str, &str)] = &[
    ("atlas10k", "atlas10k.parv", "Quantum Atlas 10K"),
    ("atlas3", "atlas_III.diskspecs", "Quantum Atlas III"),
    ("barracuda", "barracuda.diskspecs", "Seagate Barracuda ST32171W"),
    ("cheetah4lp", "cheetah4LP.parv", "Seagate Cheetah 4LP ST34501N"),
    ("cheetah9lp", "cheetah9LP.diskspecs", "Seagate Cheetah 9LP ST39102LW"),
    ("ibm18es", "ibm18es.diskspecs", "IBM Ultrastar 18ES DNES-309170W"),
    ("hp_c2247a", "hp_c2247a.parv", "HP C2247A"),
    ("hp_c2249a", "hp_c2249a.diskspecs", "HP C2249A"),
    ("hp_c2490a", "hp_c2490a.diskspecs", "HP C2490A"),
    ("hp_c3323a", "hp_c3323a_validate.diskspecs", "HP C3323A"),
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
    spec.description = format!("{drive}, {:.2} GB exported, {} RPM (DiskSim disk {})",
        spec.capacity_bytes() as f64 / 1e9, spec.rpm, spec.description);
    Ok(spec)
}

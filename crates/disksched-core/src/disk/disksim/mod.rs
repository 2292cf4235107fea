//! Importer for DiskSim 4.0 parameter files (`.parv`, `.diskspecs`, `.model`,
//! `.seek`): a generic parser that keeps file:line for every value, and the
//! conversion of a drive's blocks into the project's [`DiskSpec`].

pub mod convert;
pub mod parser;

pub use convert::{import, read_seek_file};
pub use parser::{parse_file, parse_str, Block, Loc, Node, Param, ParamFile, Value};

/// The built-in catalogue: (name, DiskSim file it is imported from, relative
/// to the DiskSim data directory). Where a drive has NAME.model and
/// NAME_validate.model, the `.diskspecs` named here sources the validated one.
pub const CATALOGUE: &[(&str, &str)] = &[
    ("atlas10k", "atlas10k.diskspecs"),
    ("atlas3", "atlas_III.diskspecs"),
    ("barracuda", "barracuda.diskspecs"),
    ("cheetah4lp", "cheetah4LP.diskspecs"),
    ("cheetah9lp", "cheetah9LP.diskspecs"),
    ("ibm18es", "ibm18es.diskspecs"),
    ("hp_c2247a", "hp_c2247a.diskspecs"),
    ("hp_c2249a", "hp_c2249a.diskspecs"),
    ("hp_c2490a", "hp_c2490a.diskspecs"),
    ("hp_c3323a", "hp_c3323a_validate.diskspecs"),
    ("dec_rz26", "dec_rz26.diskspecs"),
    ("st41601n", "st41601n.diskspecs"),
];

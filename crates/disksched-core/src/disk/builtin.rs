//! Built-in disk specs (the project's TOML format, figures from DiskSim's
//! published parameter files), and resolution of a disk name or path.

use crate::disk::spec::DiskSpec;
use crate::error::{Error, Result};
use std::path::Path;

/// (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[("atlas10k", include_str!("../../disks/atlas10k.toml"))];

pub fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A built-in disk by name, or a spec file by path (relative to `base_dir`).
pub fn resolve(name_or_path: &str, base_dir: Option<&Path>) -> Result<DiskSpec> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| n.eq_ignore_ascii_case(name_or_path)) {
        return DiskSpec::from_toml(text, &format!("built-in disk {name}"));
    }
    let mut path = Path::new(name_or_path).to_path_buf();
    if path.is_relative() {
        if let Some(base) = base_dir {
            path = base.join(path);
        }
    }
    if !name_or_path.ends_with(".toml") && !path.exists() {
        return Err(Error::Config {
            what: "disk".into(),
            msg: format!("unknown disk '{name_or_path}' (expected a built-in name: {}, or a path to a .toml spec)", names().join(", ")),
        });
    }
    let text = std::fs::read_to_string(&path).map_err(|e| Error::File { path: path.display().to_string(), msg: e.to_string() })?;
    DiskSpec::from_toml(&text, &path.display().to_string())
}

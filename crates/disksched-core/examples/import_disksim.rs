//! Regenerate the built-in drive catalogue (`disks/*.toml`) from DiskSim's
//! parameter files with the importer:
//!
//!     cargo run -p disksched-core --release --example import_disksim -- [DISKSIM_DIR] [OUT_DIR]
//!
//! Defaults: the shared DiskSim data beside the project, and this crate's `disks/`.
//! Pass `--check` to compare instead of write (exit 1 on any difference).

use disksched_core::disk::disksim::{import_catalogue, CATALOGUE};
use disksched_core::disk::builtin::catalogue_toml;
use std::path::PathBuf;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    args.retain(|a| a != "--check");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let src = args.first().map(PathBuf::from).unwrap_or_else(|| manifest.join("../../../shared/disksim"));
    let out = args.get(1).map(PathBuf::from).unwrap_or_else(|| manifest.join("disks"));
    let mut failed = false;
    for (name, _, _) in CATALOGUE {
        let spec = match import_catalogue(&src, name) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{name}: {e}");
                failed = true;
                continue;
            }
        };
        let text = catalogue_toml(&spec);
        let path = out.join(format!("{name}.toml"));
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                eprintln!("{}: differs from what the importer produces", path.display());
                failed = true;
            }
        } else {
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            println!("wrote {}", path.display());
        }
    }
    if failed {
        std::process::exit(1);
    }
}

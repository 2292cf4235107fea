//! The lower layers import nothing above them (issue 35): time, errors,
//! random streams, the schema's types, the budgets and the disk model
//! can be read, tested and reused without the simulator around them.

use std::collections::BTreeSet;
use std::path::Path;

/// Each lower layer and the top-level modules it may use.
const LAYERS: &[(&str, &[&str])] = &[
    ("time.rs", &[]),
    ("error.rs", &[]),
    ("rng.rs", &[]),
    ("scoped.rs", &[]),
    ("schema.rs", &["error"]),
    ("budget.rs", &["error", "time"]),
    ("disk", &["budget", "disk", "error", "rng", "schema", "time"]),
];

fn sources(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        out.extend(sources(&entry.unwrap().path()));
    }
    out
}

/// The top-level modules named as `crate::NAME` in a file (comments included: a doc link upward is an import in spirit).
fn used_modules(text: &str) -> BTreeSet<String> {
    text.match_indices("crate::")
        .filter(|(i, _)| !text[..*i].ends_with("disksched_"))
        .map(|(i, m)| text[i + m.len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
        .collect()
}

#[test]
fn lower_layers_import_nothing_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (layer, allowed) in LAYERS {
        for file in sources(&src.join(layer)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for m in used_modules(&text) {
                if !allowed.contains(&m.as_str()) {
                    wrong.push(format!("{}: crate::{m}", file.strip_prefix(&src).unwrap().display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "lower layers import from above them: {wrong:?}");
}

#[test]
fn the_check_sees_an_upward_import() {
    assert!(used_modules("use crate::workload::SimRng;").contains("workload"));
    assert!(used_modules("fn f() { crate::sim::run(c) }").contains("sim"));
}

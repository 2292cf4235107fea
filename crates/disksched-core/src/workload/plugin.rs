//! `kind = "plugin"`: a workload the caller provides by name (the Python
//! binding's `disksched.Workload` subclasses), built through a factory the
//! caller installs (`with_factory`), as schedulers are (`sched::with_factory`).
//! Usable alone or as a `mix` member. The core only sees a `Generator`.

use super::Generator;
use crate::error::{config_err, Result};
use crate::schema::{Param, Ty};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `kind = "plugin"` keys.
pub const PARAMS: &[Param] = &[
    Param::other("name", Ty::Str, "required", "the registered workload plug-in (Python: `disksched.run(..., workloads=...)` or `run --plugin`)"),
    Param::other("set", Ty::Table, "{}", "`name = number` settings, checked against the plug-in's declared tunables"),
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "plugin"`: a workload plug-in by name.
pub struct PluginConfig {
    /// Registered name.
    pub name: String,
    /// Settings for its tunables.
    #[serde(default)]
    pub set: BTreeMap<String, f64>,
}

/// Builds plug-in workloads: (name, settings, capacity in blocks, sector
/// bytes) -> `None` if it knows no workload of that name.
pub type Factory = dyn Fn(&str, &[(String, f64)], u64, u32) -> Option<Result<Box<dyn Generator>>>;

thread_local! {
    static FACTORY: std::cell::RefCell<Option<std::rc::Rc<Factory>>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with `factory` building the `kind = "plugin"` workloads on this
/// thread (the previous factory, if any, comes back after).
pub fn with_factory<R>(factory: std::rc::Rc<Factory>, f: impl FnOnce() -> R) -> R {
    crate::scoped::with(&FACTORY, factory, f)
}

/// The generator of plug-in `c.name`, from the installed factory.
pub fn build(c: &PluginConfig, capacity_blocks: u64, sector_bytes: u32) -> Result<Box<dyn Generator>> {
    let settings: Vec<(String, f64)> = c.set.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let built = FACTORY.with(|s| s.borrow().clone()).and_then(|f| f(&c.name, &settings, capacity_blocks, sector_bytes));
    built.unwrap_or_else(|| Err(config_err("workload.name", format!(
        "unknown workload plug-in '{}' (register it: disksched.run(..., workloads=[...]) or `run --plugin FILE`)", c.name))))
}

//! Background work for freeblock scheduling (Lumb et al., FAST 2002):
//! tasks that want a set of blocks transferred in no particular order, and
//! the bookkeeping of which blocks are still wanted.
//!
//! A task is a set of blocks (a range, or the whole disk) with a priority.
//! Tasks may be paused, resumed and aborted while the simulation runs; a
//! block is credited to exactly one task, once.

pub mod external;
pub mod freeblock;
pub mod greedy;
pub mod planner;
mod config;
mod summary;
mod tasks;
mod wanted;

pub use config::*;
pub use summary::{BySource, FreeblockSummary};
pub use tasks::*;
pub use wanted::Wanted;

use crate::disk::DiskModel;
use crate::error::{config_err, Result};
use planner::{Planner, PlannerInfo, PlannerSettings};
use std::sync::Arc;

/// Every planner, by name (`freeblock.planner`).
pub const REGISTRY: &[PlannerInfo] = &[
    PlannerInfo {
        name: "greedy",
        summary: "per opportunity the option moving the most wanted blocks (weighted by priority), searching tracks outward from source and destination within `search_tracks` (Lumb et al. 2000, 2002)",
        build: |model, tasks| Box::new(greedy::Greedy::new(model, tasks, 64)),
    },
];

/// The planner `name`, configured with `settings`; an error naming `freeblock.planner` if there is none.
pub fn build_planner(name: &str, model: Arc<DiskModel>, tasks: &Tasks, settings: &PlannerSettings) -> Result<Box<dyn Planner>> {
    let info = REGISTRY.iter().find(|p| p.name == name).ok_or_else(|| config_err("freeblock.planner", format!(
        "'{name}' (expected one of: {})", REGISTRY.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))))?;
    let mut p = (info.build)(model, tasks);
    p.configure(settings);
    Ok(p)
}

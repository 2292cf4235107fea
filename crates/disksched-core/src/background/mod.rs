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

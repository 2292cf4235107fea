//! The freeblock planner contract: what a disk's background work asks of a
//! planner, and the registry of planners (like the schedulers': file name =
//! registry name = `freeblock.planner`). Another planner is a new file
//! implementing `Planner` and one line in `REGISTRY`.
//!
//! A planner answers; it moves nothing itself. It is asked, for each
//! foreground request the drive turns to (an *opportunity*), which
//! background transfers fit in the time before the request's first sector
//! comes round (`plan` in firmware, `plan_external` for a host-side
//! scheduler's one background command), and, when the drive is idle, where
//! to read (`idle`). It predicts with the model it was built on (the
//! truth in firmware, the external scheduler's belief outside) and keeps
//! whatever index of wanted blocks it likes: `credit` tells it what was
//! transferred, `recount` that tasks changed (arrived, paused, resumed,
//! aborted, a repeating scan's next pass).

use super::Tasks;
use crate::disk::DiskModel;
use crate::time::SimTime;
use std::sync::Arc;

/// A track visit: read (or write) the slots [k0, k0 + n) counted from the track's first-LBN sector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visit {
    /// Cylinder of the track.
    pub cylinder: u32,
    /// Head of the track.
    pub head: u32,
    /// LBNs covered (wanted or not), as half-open ranges.
    pub lbns: Vec<(u64, u64)>,
    /// Wanted blocks among them (of tasks of this visit's direction).
    pub wanted: u64,
    /// A write: it moves the blocks of write tasks only (a read, of read tasks).
    pub write: bool,
}

/// One background command an external scheduler sends: LBNs [lbn, lbn +
/// blocks), prepended to the next foreground read (`merged`) or on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Background {
    /// First LBN.
    pub lbn: u64,
    /// Length, blocks.
    pub blocks: u32,
    /// Wanted blocks among them.
    pub wanted: u64,
    /// Prepended to the next foreground read rather than sent on its own.
    pub merged: bool,
    /// Cylinder of the track its blocks are on.
    pub cylinder: u32,
    /// Head of the track its blocks are on.
    pub head: u32,
    /// A write command (for write tasks' blocks); never merged.
    pub write: bool,
}

#[derive(Clone, Debug, Default)]
/// The planner's choice for one opportunity: the tracks to visit, in order.
pub struct Plan {
    /// Track visits, in the order the heads make them.
    pub visits: Vec<Visit>,
    /// Wanted blocks over all visits.
    pub wanted: u64,
}

/// The `[freeblock]` settings every planner receives.
#[derive(Clone, Copy, Debug)]
pub struct PlannerSettings {
    /// Tracks examined per opportunity besides source and destination, at most.
    pub search_tracks: u32,
    /// Added to every predicted head movement, ns.
    pub seek_conservatism_ns: u64,
    /// External mode: no background command of its own on the source or destination track.
    pub one_per_track: bool,
    /// Firmware mode: plan under the external scheduler's one-command-per-track limits.
    pub firmware_one_per_track: bool,
}

/// A freeblock planner (see the module doc).
pub trait Planner: Send {
    /// Its registry name.
    fn name(&self) -> &'static str;
    /// Take the run's settings (called once, before any other call).
    fn configure(&mut self, settings: &PlannerSettings);
    /// The tasks changed (not by `credit`): rebuild any index of wanted blocks.
    fn recount(&mut self, tasks: &Tasks);
    /// In firmware: the track visits that fit between `now`, with the heads
    /// at `src`, and `deadline`, when the heads must be over the foreground's
    /// first sector on `dst` (`fg_write`: it is a write), moving blocks of
    /// the tasks of direction `bg_write` (the caller plans each direction
    /// the tasks take and keeps the better plan).
    #[allow(clippy::too_many_arguments)]
    fn plan(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg_write: bool, bg_write: bool, tasks: &Tasks) -> Plan;
    /// Outside the drive: one background command, merged into the
    /// foreground read `fg` = (lbn, is_write) or on its own, after which the
    /// foreground command cannot move the heads before `fg_start_behind`.
    #[allow(clippy::too_many_arguments)]
    fn plan_external(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg: (u64, bool),
                     fg_start_behind: SimTime, bg_write: bool, tasks: &Tasks) -> Option<Background>;
    /// Idle time with the heads at `at`: a visit (in the direction it chooses) and when it ends.
    fn idle(&self, now: SimTime, at: (u32, u32), tasks: &Tasks) -> Option<(Visit, SimTime)>;
    /// `visit` was transferred at `now`: credit its wanted blocks to `tasks`; how many.
    fn credit(&mut self, visit: &Visit, now: SimTime, tasks: &mut Tasks) -> u64;
}

/// A registered planner.
pub struct PlannerInfo {
    /// Registry name (`freeblock.planner`).
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Build it for a drive of `model` and the blocks `tasks` want.
    pub build: fn(Arc<DiskModel>, &Tasks) -> Box<dyn Planner>,
}

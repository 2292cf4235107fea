//! Freeblock scheduling as a disk unit sees it: one trait, `Freeblock`, that
//! a disk unit (`sim::disk_unit`) calls at the points a drive's background
//! work hooks in, with one implementation per mode:
//!
//! - `Off`: no background work; the drive serves each command as it is.
//! - `Firmware`: the planner's model is the drive itself; it fills each
//!   command's rotational latency and, optionally, the drive's idle time.
//! - `ExternalMode`: a host-side scheduler with its own model of the drive
//!   (`external::External`) sends background work as commands of its own
//!   or merged into the next foreground read.
//!
//! The trait answers with what happened (a service, a belief, an idle visit's
//! end); the router schedules the events.

use super::external::{External, Foreground};
use super::planner::{Plan, Planner, PlannerSettings, Visit};
use super::{FreeblockConfig, FreeblockSummary, TaskAction, TaskConfig, Tasks, TransferCallback};
use crate::disk::{DiskModel, Drive, HeadState, Service};
use crate::error::Result;
use crate::host::Request;
use crate::metrics::Summary;
use crate::time::{SimDuration, SimTime};
use std::sync::Arc;

/// A disk's background work, called by its disk unit.
pub trait Freeblock: Send {
    /// The mechanism is busy with background work: no command may start.
    fn busy(&self) -> bool {
        false
    }
    /// Serve foreground request `r` on `drive` from `now` (background work
    /// may ride along). Also returns the host's belief of the heads
    /// afterwards when this mode keeps its own (external); `None`: the disk
    /// unit's predictor follows the request.
    fn serve(&mut self, drive: &mut Drive, r: &Request, now: SimTime) -> (Service, Option<HeadState>) {
        (drive.serve(now, r.lbn, r.blocks, r.is_write), None)
    }
    /// The host observed the command in service complete at `now`: its new
    /// belief of the heads, if this mode keeps its own.
    fn observed(&mut self, _now: SimTime) -> Option<HeadState> {
        None
    }
    /// The drive has nothing to serve and no foreground work waits above
    /// it: start idle-time background work on `drive`, returning when it ends.
    fn idle(&mut self, _now: SimTime, _drive: &mut Drive) -> Option<SimTime> {
        None
    }
    /// The idle-time work started by `idle` ended at `now`.
    fn idle_completed(&mut self, _now: SimTime) {}
    /// Receive every run of background blocks as it is transferred.
    fn on_transfer(&mut self, _cb: TransferCallback) {}
    /// Task `task` is started, paused, resumed or aborted at `now`.
    fn task(&mut self, _action: TaskAction, _task: usize, _now: SimTime) -> Result<()> {
        Err(crate::error::config_err("freeblock", "the run has no [freeblock] section with tasks"))
    }
    /// A task added at `now` (it starts then); its index.
    fn add_task(&mut self, _cfg: &TaskConfig, _now: SimTime) -> Result<usize> {
        Err(crate::error::config_err("freeblock", "the run has no [freeblock] section to add a task to"))
    }
    /// The run's freeblock results, given the foreground's `summary`.
    fn finish(self: Box<Self>, _summary: &Summary, _sector_bytes: u64) -> Option<FreeblockSummary> {
        None
    }
}

/// No freeblock scheduling.
pub struct Off;

impl Freeblock for Off {}

/// The mode `cfg` asks for (`Off` without a `[freeblock]` section).
pub fn build(cfg: Option<&FreeblockConfig>, model: &Arc<DiskModel>, seed: u64) -> Result<Box<dyn Freeblock>> {
    build_with_belief(cfg, model, model, seed, None)
}

/// As `build`, the external scheduler believing `belief` (the truth's
/// `model`, or `[freeblock.belief]`'s, with exactly its capacity).
/// `series_window_ns`: keep each task's blocks moved per window of it.
pub fn build_with_belief(cfg: Option<&FreeblockConfig>, model: &Arc<DiskModel>, belief: &Arc<DiskModel>, seed: u64,
                         series_window_ns: Option<u64>) -> Result<Box<dyn Freeblock>> {
    let Some(f) = cfg else { return Ok(Box::new(Off)) };
    if belief.layout.capacity() != model.layout.capacity() {
        return Err(crate::error::config_err("freeblock.belief.model", format!(
            "holds {} blocks (expected the drive's {}: the tasks' blocks are the drive's)", belief.layout.capacity(), model.layout.capacity())));
    }
    let mut tasks = Tasks::new(model.layout.capacity(), &f.tasks)?;
    if let Some(w) = series_window_ns {
        tasks.keep_windows(w);
    }
    let settings = PlannerSettings { search_tracks: f.search_tracks, seek_conservatism_ns: SimDuration::from_ms(f.seek_conservatism_ms).ns(),
                                     one_per_track: f.one_per_track,
                                     firmware_one_per_track: f.firmware_one_per_track && !f.external() };
    let planner = super::build_planner(&f.planner, belief.clone(), &tasks, &settings)?;
    let work = Work {
        plan: f.plan,
        tasks,
        planner,
        idle: f.idle,
        busy: None,
        summary: FreeblockSummary::default(),
        planner_ns: 0,
    };
    Ok(if f.external() {
        let same_layout = Arc::ptr_eq(belief, model);
        Box::new(ExternalMode { work, external: External::with_depth(belief.clone(), &f.noise, seed, f.drive_queue_depth), same_layout })
    } else {
        Box::new(Firmware(work))
    })
}

/// What both modes keep: tasks, planner and what they achieved.
struct Work {
    tasks: Tasks,
    planner: Box<dyn Planner>,
    /// Also use the drive's idle time.
    idle: bool,
    /// The idle-time visit in progress.
    busy: Option<(Visit, SimTime)>,
    summary: FreeblockSummary,
    planner_ns: u128,
    /// False: no background work is planned (the baseline run).
    plan: bool,
}

impl Work {
    fn task(&mut self, action: TaskAction, task: usize, now: SimTime) -> Result<()> {
        let n = self.tasks.status().len();
        if task >= n {
            return Err(crate::error::config_err("freeblock task", format!("{task} does not exist: the run has {n} tasks (0 to {})", n.saturating_sub(1))));
        }
        self.tasks.apply(action, task, now);
        // The planner's per-track counts bound its search: they must follow.
        self.tasks.take_changes();
        self.planner.recount(&self.tasks);
        Ok(())
    }

    fn add_task(&mut self, cfg: &TaskConfig, now: SimTime) -> Result<usize> {
        let i = self.tasks.add(cfg, now)?;
        self.tasks.take_changes();
        self.planner.recount(&self.tasks);
        Ok(i)
    }

    /// Idle time: read the nearest wanted track.
    fn idle(&mut self, now: SimTime, drive: &mut Drive) -> Option<SimTime> {
        if !self.idle {
            return None;
        }
        let at = drive.state.head;
        let (visit, end) = self.planner.idle(now, (at.cylinder, at.head), &self.tasks)?;
        drive.state.head = HeadState { cylinder: visit.cylinder, head: visit.head, time: end, ..Default::default() };
        self.busy = Some((visit, end));
        Some(end)
    }

    fn idle_completed(&mut self, now: SimTime) {
        if let Some((visit, _)) = self.busy.take() {
            let n = self.planner.credit(&visit, now, &mut self.tasks);
            self.summary.idle_blocks += n;
            self.summary.by_source.idle += n;
        }
    }

    fn finish(mut self, summary: &Summary, sector_bytes: u64, external: Option<&External>) -> FreeblockSummary {
        let s = &mut self.summary;
        let span_s = summary.sim_time_ms / 1000.0;
        let bytes = sector_bytes as f64;
        if span_s > 0.0 && summary.iops > 0.0 {
            // Over the foreground's measured span (requests / IOPS).
            let fg_span_s = summary.requests as f64 / summary.iops;
            s.free_mb_per_s = (s.free_blocks + s.idle_blocks) as f64 * bytes / fg_span_s / 1e6;
            s.latency_mb_per_s = s.free_blocks as f64 * bytes / fg_span_s / 1e6;
        }
        s.planner_us_per_opportunity = if s.opportunities > 0 { self.planner_ns as f64 / s.opportunities as f64 / 1e3 } else { 0.0 };
        s.tasks = self.tasks.final_status(SimTime::ZERO + SimDuration::from_ms(summary.sim_time_ms));
        s.task_windows = self.tasks.windows();
        s.external = external.map(External::summary);
        self.summary
    }
}

/// In the drive's firmware: the planner's model is the drive.
struct Firmware(Work);

impl Freeblock for Firmware {
    fn busy(&self) -> bool {
        self.0.busy.is_some()
    }
    fn serve(&mut self, drive: &mut Drive, r: &Request, now: SimTime) -> (Service, Option<HeadState>) {
        let service = drive.serve(now, r.lbn, r.blocks, r.is_write);
        let f = &mut self.0;
        if f.plan && service.media_start.0 > 0 && !service.cache_hit {
            // The plan ends with the heads over the request's first sector
            // exactly when they would have been without it.
            let source = drive.last_source;
            let clock = std::time::Instant::now();
            // Each direction the tasks take is planned on its own; the better plan is kept (reads on a tie).
            let plan = f.tasks.directions().iter()
                .map(|&w| f.planner.plan(source.time, (source.cylinder, source.head), (r.target.cylinder, r.target.head),
                                         service.media_start, r.is_write, w, &f.tasks))
                .fold(Plan::default(), |best, p| if p.wanted > best.wanted { p } else { best });
            f.planner_ns += clock.elapsed().as_nanos();
            f.summary.opportunities += 1;
            for v in &plan.visits {
                let n = f.planner.credit(v, service.media_start, &mut f.tasks);
                f.summary.free_blocks += n;
                let by = &mut f.summary.by_source;
                let track = (v.cylinder, v.head);
                *if track == (source.cylinder, source.head) { &mut by.source_track } else if track == (r.target.cylinder, r.target.head) { &mut by.destination_track } else { &mut by.other_track } += n;
            }
        }
        (service, None)
    }
    fn idle(&mut self, now: SimTime, drive: &mut Drive) -> Option<SimTime> {
        self.0.idle(now, drive)
    }
    fn idle_completed(&mut self, now: SimTime) {
        self.0.idle_completed(now)
    }
    fn on_transfer(&mut self, cb: TransferCallback) {
        self.0.tasks.on_transfer = Some(cb);
    }
    fn task(&mut self, action: TaskAction, task: usize, now: SimTime) -> Result<()> {
        self.0.task(action, task, now)
    }
    fn add_task(&mut self, cfg: &TaskConfig, now: SimTime) -> Result<usize> {
        self.0.add_task(cfg, now)
    }
    fn finish(self: Box<Self>, summary: &Summary, sector_bytes: u64) -> Option<FreeblockSummary> {
        Some(self.0.finish(summary, sector_bytes, None))
    }
}

/// Outside the drive: the host plans with its own model, and the (noisy)
/// drive serves both.
struct ExternalMode {
    work: Work,
    external: External,
    /// The belief is the truth's model: a request's target (computed with
    /// the truth's layout at arrival) is what the belief would compute.
    same_layout: bool,
}

impl Freeblock for ExternalMode {
    fn busy(&self) -> bool {
        self.work.busy.is_some()
    }
    fn serve(&mut self, drive: &mut Drive, r: &Request, _now: SimTime) -> (Service, Option<HeadState>) {
        let (cylinder, head) = if self.same_layout { (r.target.cylinder, r.target.head) } else {
            let p = self.external.model().layout.lbn_to_pbn(r.lbn);
            (p.cylinder, p.head)
        };
        let fg = Foreground { lbn: r.lbn, blocks: r.blocks, is_write: r.is_write, cylinder, head, ready: r.issued };
        let f = &mut self.work;
        let planner = f.plan.then_some(f.planner.as_mut());
        let service = self.external.serve(drive, &fg, planner, &mut f.tasks, &mut f.summary, &mut f.planner_ns);
        (service, Some(self.external.belief()))
    }
    fn observed(&mut self, now: SimTime) -> Option<HeadState> {
        self.external.observed(now);
        Some(self.external.belief())
    }
    fn idle(&mut self, now: SimTime, drive: &mut Drive) -> Option<SimTime> {
        // The host sends a whole-track read (or write) of the nearest wanted track; its
        // belief follows the command (it chose where the heads go).
        let end = self.work.idle(now, drive)?;
        self.external.idle_sent(drive.state.head, end);
        Some(end)
    }
    fn idle_completed(&mut self, now: SimTime) {
        self.work.idle_completed(now);
        self.external.observed(now);
    }
    fn on_transfer(&mut self, cb: TransferCallback) {
        self.work.tasks.on_transfer = Some(cb);
    }
    fn task(&mut self, action: TaskAction, task: usize, now: SimTime) -> Result<()> {
        self.work.task(action, task, now)
    }
    fn add_task(&mut self, cfg: &TaskConfig, now: SimTime) -> Result<usize> {
        self.work.add_task(cfg, now)
    }
    fn finish(self: Box<Self>, summary: &Summary, sector_bytes: u64) -> Option<FreeblockSummary> {
        let ExternalMode { work, external, .. } = *self;
        Some(work.finish(summary, sector_bytes, Some(&external)))
    }
}

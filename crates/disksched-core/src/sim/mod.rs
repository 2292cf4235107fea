//! The simulation: parts that answer what should happen next, and one
//! router that owns the event engine and passes requests down (FreeBSD's
//! `g_sched_dispatch` loop; DiskSim's event switch). The queue topology:
//!
//! ```text
//! workload -> host queue -(host.queue_threshold)-> [controller queue -(controller thresholds)->]
//!          -> disk queue of each disk -> drive, one command at a time
//! ```
//!
//! for one disk or an array of identical disks behind one controller
//! (concatenated or striped). Every queue is a `QueueLevel` with its own
//! scheduler from the one registry; each disk is a `DiskUnit` (drive, queue,
//! belief, background work). `docs/architecture.md` draws a request's path.
//!
//! Request life cycle: `RequestArrived` (generator) -> split into one piece
//! per disk (`host::array::Splits`; pieces are the unit of every queue and
//! threshold below) -> host level `offer` -> the pass-down loop while there
//! is room below -> (controller level `offer` -> its pass-down loop) -> disk
//! unit `insert` -> `start` when the mechanism is free -> `DiskCompleted`
//! at the time the drive model computed -> every level hears of it ->
//! `Splits::join` -> completion of the workload's request.
//!
//! Without a `[controller]` the host queue feeds the disks: it is the
//! driver's queue of one disk, or the controller's one logical queue of an
//! array (Riska & Riedel), and `host.queue_threshold` bounds what is
//! outstanding at each disk. With one, the host queue is the driver's:
//! `host.queue_threshold` bounds what is outstanding at the controller (its
//! queue and the disks), and the controller queue feeds the disks, at most
//! `controller.queue_threshold` outstanding at them together and
//! `controller.per_disk_threshold` at each. The queue that feeds the disks is
//! one logical queue: when its scheduler hands out a piece whose disk is at
//! its threshold, the piece waits at the head and nothing passes it until
//! that disk has room.

mod accounting;
mod budgets;
mod build;
mod disk_unit;
mod event;
mod live;
mod queue_level;
mod route;

pub use accounting::{Counters, QueueCounters};

use crate::background::FreeblockSummary;
use crate::disk::{DiskModel, HeadState, Predictor};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::host::array::{Array, Splits};
use crate::host::range::Placement;
use crate::host::{Request, RequestTable};
use crate::metrics::{Metrics, Records, Series, Summary};
use crate::sched::SchedCtx;
use crate::time::SimTime;
use crate::workload::{Generator, IoSpec, SimRng};
use accounting::DoneSet;
use disk_unit::DiskUnit;
use event::Event;
use queue_level::QueueLevel;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What every part reads and a few write: the live requests, the
/// predictor schedulers consult, and range placement.
pub(crate) struct Shared {
    pub(crate) reqs: RequestTable,
    pub(crate) predictor: Predictor,
    pub(crate) placement: Placement,
    sector_bytes: u64,
    /// A level's own belief (`[host.belief]`, `[controller.belief]`), by
    /// level index; `None`: the level believes `predictor`.
    pub(crate) level_predictors: Vec<Option<Predictor>>,
}

impl Shared {
    /// What a scheduler may look at (`sched::SchedCtx`): the one place it is built.
    #[inline]
    pub(crate) fn ctx<'a>(&'a self, now: SimTime, head: HeadState, cache: Option<&'a crate::disk::cache::Cache>) -> SchedCtx<'a> {
        SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, heads: &[], claims: &self.placement.claims, cache }
    }

    /// What level `level`'s scheduler may look at: as `ctx`, with the
    /// level's own belief if it has one, and over an array each disk's
    /// believed `heads` (`head` is disk 0's).
    #[inline]
    pub(crate) fn level_ctx<'a>(&'a self, level: usize, now: SimTime, head: HeadState, heads: &'a [HeadState]) -> SchedCtx<'a> {
        let predictor = self.level_predictors.get(level).and_then(Option::as_ref).unwrap_or(&self.predictor);
        SchedCtx { now, reqs: &self.reqs, predictor, head, heads, claims: &self.placement.claims, cache: None }
    }

    /// Bytes of `blocks` sectors.
    #[inline]
    pub(crate) fn bytes(&self, blocks: u32) -> u64 {
        blocks as u64 * self.sector_bytes
    }
}

/// Which queue a run-time reconfiguration replaces the scheduler of.
#[derive(Clone, Copy)]
enum Reconfigured {
    /// The level at this index above the disks (0 = host).
    Level(usize),
    /// Every disk's command queue.
    Disks,
}

/// A run in progress: the router and the parts it passes requests between.
pub struct Simulation {
    engine: Engine<Event>,
    shared: Shared,
    generator: Box<dyn Generator>,
    rng: SimRng,
    /// The queue levels above the disks, top first: the host's, then the controller's if any.
    levels: Vec<QueueLevel>,
    units: Vec<DiskUnit>,
    /// Over an array: the host's belief of each disk's heads, as the levels
    /// above the disks last asked (`route::queue_heads`); empty for one disk.
    heads: Vec<HeadState>,
    array: Array,
    splits: Splits,
    /// Pieces of the request being admitted (a buffer kept across arrivals).
    pieces: Vec<crate::host::ReqId>,
    metrics: Metrics,
    acct: Accounting,
    /// Most requests the workload may issue, and when arrivals stop.
    limit: u64,
    stop_arrivals_at: Option<SimTime>,
    model: Arc<DiskModel>,
    /// Schedulers to switch to, built (and so checked) up front: (at, queue,
    /// one scheduler for a level or one per disk).
    reconfigure: Vec<(SimTime, Reconfigured, Vec<Box<dyn crate::sched::Scheduler>>)>,
    /// Requests `submit`ted from outside that completed since `run_until` last returned.
    completions: Vec<Request>,
    /// `start` has scheduled the workload's arrivals.
    started: bool,
    /// Re-classifies each workload request on arrival (`set_classifier`).
    classifier: Option<Box<Classifier>>,
    /// Background task events of the config, in time order: (at, action, task).
    task_events: Vec<(SimTime, crate::background::TaskAction, usize)>,
    /// External freeblock: wall-clock time of the host scheduler's decisions and their count.
    host_clock: Option<(u128, u64)>,
    /// Where the simulated time is published as it advances (`publish_time`).
    published_time: Option<Arc<AtomicU64>>,
    /// Past this time the series' rows sampled every window (`series_timed_rows`
    /// per window of `series_window_ns`) would outgrow `MAX_SERIES_ROWS`.
    series_end: SimTime,
    series_timed_rows: u64,
    series_window_ns: u64,
    /// Counters of the schedulers switched out so far (`RunResult::retired_counters`).
    retired_counters: Vec<(String, &'static str, u64)>,
    /// How much of the host's belief of the heads the config reads (see
    /// `build::belief_read`): a batch run keeps only that much. The
    /// step-by-step API keeps it all, as its caller may ask (`heads`).
    belief_read: crate::sched::HeadsRead,
}

/// A classifier hook: (client, flow, request, now) -> the request's flow; it
/// may also set the request's class and deadline. Called for every request
/// a workload (generator or trace) issues, before it enters the host queue.
pub type Classifier = dyn FnMut(u32, u32, &mut IoSpec, SimTime) -> u32 + Send;

/// The client of requests `submit`ted from outside the workload (no
/// generator hears of them).
pub const SUBMITTED: u32 = u32::MAX;

/// The run's request counts that belong to no single level.
#[derive(Default)]
struct Accounting {
    arrived: u64,
    pieces: u64,
    host_dispatched: u64,
    drive_dispatched: u64,
    completed: u64,
    /// Every disk's queue together.
    disk_queue: QueueCounters,
    /// Which pieces (by seq) completed, to catch double completions.
    done: DoneSet,
}

/// Result of a run.
pub struct RunResult {
    /// The run's figures.
    pub summary: Summary,
    /// Request accounting.
    pub counters: Counters,
    /// Each scheduler's own counters: ("host" | "controller" | "disk", name, value).
    pub scheduler_counters: Vec<(&'static str, &'static str, u64)>,
    /// Freeblock results, with a `[freeblock]` section.
    pub freeblock: Option<FreeblockSummary>,
    /// With `[disk.noise]`: what the noise did and how far the exact belief mispredicted, over every disk.
    pub disk_noise: Option<crate::disk::noisy::DiskNoiseSummary>,
    /// Per-request records, if `run.records` was set.
    pub records: Option<Records>,
    /// Time series, if `run.series_window_ms` was set.
    pub series: Option<Series>,
    /// Counters of schedulers switched out during the run (`[[reconfigure]]`,
    /// `switch`): ("QUEUE.NAME until T ms", counter, value), each disk's in turn.
    pub retired_counters: Vec<(String, &'static str, u64)>,
}

impl Simulation {
    /// The drive model every disk of the run is.
    pub fn model(&self) -> &Arc<DiskModel> {
        &self.model
    }

    /// Run to completion. `progress(completed, limit)` is called every so
    /// often; returning false aborts the run (an error).
    pub fn run(mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<RunResult> {
        for u in &mut self.units {
            u.keep_belief = self.belief_read;
        }
        self.start();
        let mut steps: u64 = 0;
        let mut watchdog = crate::watchdog::Watchdog::default();
        while let Some((now, ev)) = self.engine.step() {
            self.check_budgets(now, &ev)?;
            self.handle(ev, now)?;
            watchdog.observe(now, self.acct.arrived + self.acct.completed, || format!("{ev:?}"))?;
            steps += 1;
            if steps & 0xFFFF == 0 && !progress(self.acct.completed, self.limit) {
                return Err(Error::Config { what: "run".into(), msg: "interrupted".into() });
            }
        }
        self.finish(progress)
    }

    /// Store the simulated time (ns) in `clock` now and whenever it
    /// advances: for code the core calls without a context (the binding's
    /// Python hooks `wake_at`, `init_class`, `fini_class`, `counters`, a
    /// plug-in's constructor), whose errors must say when they happened.
    pub fn publish_time(&mut self, clock: Arc<AtomicU64>) {
        clock.store(self.now().0, Ordering::Relaxed);
        self.published_time = Some(clock);
    }

    #[inline]
    fn publish(&self, now: SimTime) {
        if let Some(c) = &self.published_time {
            c.store(now.0, Ordering::Relaxed);
        }
    }

    /// Schedule the reconfigurations and the workload's first arrivals
    /// (`run` does this; call it once before `run_until` to run the
    /// workload alongside submitted requests).
    pub fn start(&mut self) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        for i in 0..self.reconfigure.len() {
            self.schedule(self.reconfigure[i].0, Event::ReconfigurationDue(i));
        }
        for i in 0..self.task_events.len() {
            self.schedule(self.task_events[i].0, Event::TaskEventDue(i));
        }
        for (t, client) in self.generator.start(&mut self.rng) {
            self.schedule(t, Event::RequestArrived { client });
        }
    }

    #[inline]
    fn schedule(&mut self, at: SimTime, ev: Event) {
        self.engine.schedule(at, ev.priority(), ev);
    }

    /// Route event `ev` at `now` to the part that owns it.
    fn handle(&mut self, ev: Event, now: SimTime) -> Result<()> {
        self.publish(now);
        match ev {
            Event::RequestArrived { client } => self.request_arrived(client, now),
            Event::DiskCompleted(d) => self.disk_completed(d as usize, now),
            Event::BackgroundCompleted(d) => {
                self.units[d as usize].freeblock.idle_completed(now);
                self.drive_start(d as usize, now)?;
                self.pass_down_from(0, now)
            }
            Event::ReconfigurationDue(i) => self.reconfigure(i, now),
            Event::TaskEventDue(i) => {
                let (_, action, task) = self.task_events[i];
                for u in &mut self.units {
                    u.freeblock.task(action, task, now)?;
                }
                self.background_changed(now)
            }
            Event::WakeDue(level) => match self.levels[level as usize].woken(now) {
                true => self.pass_down_from(level as usize, now),
                false => Ok(()),
            },
        }
    }

    /// The end of a run: prove every request was accounted for, collect results.
    fn finish(mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<RunResult> {
        let end = self.engine.now();
        if let Some(e) = self.generator.take_error() {
            return Err(e);
        }
        let counters = self.counters();
        for level in self.levels.iter().chain(self.units.iter().map(|u| &u.queue)) {
            level.check_queued()?;
        }
        let queued = self.levels.iter().map(QueueLevel::pending).chain(self.units.iter().map(|u| u.queue.len())).sum::<usize>();
        counters.check(queued as u64, self.shared.reqs.live(), self.splits.any_open(), self.acct.done.count, self.metrics.completed)?;
        progress(counters.completed, self.limit);
        let scheduler_counters = self.levels.iter().chain(self.units.iter().map(|u| &u.queue))
            .flat_map(|l| l.sched.counters().into_iter().map(|(n, v)| (l.name, n, v)))
            .collect();
        let summary = self.metrics.summary(end);
        if summary.requests == 0 && counters.completed > 0 {
            // A run whose every request is warm-up has no figures to report.
            return Err(crate::error::config_err("run.warmup_requests", format!(
                "leaves none of the run's {} requests measured; it must be below the request count", counters.completed)));
        }
        // Each disk's background work reports on its own; an array's merge, each disk's kept beside.
        let per_disk = self.units.iter_mut()
            .filter_map(|u| std::mem::replace(&mut u.freeblock, Box::new(crate::background::freeblock::Off)).finish(&summary, self.shared.sector_bytes))
            .collect();
        let mut freeblock = FreeblockSummary::of_disks(per_disk);
        if let Some(f) = &mut freeblock {
            let (ns, n) = self.host_clock.or(self.units[0].clock).unwrap_or((0, 0));
            f.foreground_sched_us_per_decision = if n > 0 { ns as f64 / n as f64 / 1e3 } else { 0.0 };
        }
        let samples = self.levels[0].sched.timeline(end);
        let mut series = self.metrics.take_series(samples)?;
        if let (Some(s), Some(f)) = (&mut series, &freeblock) {
            s.add_tasks(&f.tasks.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), &f.task_windows, self.shared.sector_bytes);
        }
        let disk_noise = self.units[0].prediction.is_some().then(|| {
            let mut errors = crate::disk::noisy::PredictionErrors::default();
            let mut noise = crate::disk::noisy::NoiseStats::default();
            for u in &self.units {
                errors.merge(u.prediction.as_ref().expect("every disk has [disk.noise]"));
                noise.merge(&u.drive.noise().expect("every disk has [disk.noise]").stats());
            }
            errors.summary(noise)
        });
        Ok(RunResult {
            freeblock,
            disk_noise,
            summary,
            counters,
            scheduler_counters,
            records: self.metrics.records.take(),
            series,
            retired_counters: std::mem::take(&mut self.retired_counters),
        })
    }

    /// The counters so far: the run's, each level's and range placement's.
    fn counters(&self) -> Counters {
        let a = &self.acct;
        Counters {
            arrived: a.arrived,
            pieces: a.pieces,
            host_dispatched: a.host_dispatched,
            drive_dispatched: a.drive_dispatched,
            completed: a.completed,
            host_queue: self.levels[0].counters.clone(),
            controller_queue: self.levels.get(1).map(|c| c.counters.clone()),
            disk_queue: a.disk_queue.clone(),
            range_placed: self.shared.placement.placed,
            range_overlaps: self.shared.placement.overlaps,
        }
    }
}

/// Convenience: build and run a config.
pub fn run(cfg: &crate::config::SimConfig) -> Result<RunResult> {
    Simulation::new(cfg)?.run(&mut |_, _| true)
}

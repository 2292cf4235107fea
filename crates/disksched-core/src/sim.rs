//! The simulation, driven by the event engine. The queue topology:
//!
//! ```text
//! workload -> host queue -(host.queue_threshold)-> [controller queue -(controller thresholds)->]
//!          -> disk queue of each disk -> drive, one command at a time
//! ```
//!
//! for one disk or an array of identical disks behind one controller
//! (concatenated or striped). Each queue has its own scheduler from the one
//! registry.
//!
//! Request life cycle: `Arrived` (generator) -> split into one piece per disk
//! (an array request crossing disks; usually one piece; pieces are the unit
//! of every queue and threshold below) -> host scheduler `insert` -> host
//! `dispatch` while there is room below -> (controller scheduler `insert` ->
//! controller `dispatch` while there is room at the disks) -> drive scheduler
//! `insert` -> drive `dispatch` when the mechanism is free -> `DiskDone` at
//! the time the drive model computed -> completion, of the workload's request
//! once its last piece is done.
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

use crate::background::external::{External, Foreground};
use crate::background::planner::{Planner, Visit};
use crate::background::{FreeblockSummary, Tasks};
use crate::config::SimConfig;
use crate::disk::{builtin, DiskModel, Drive, DriveState, HeadState, Predictor};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::host::array::{Array, Piece};
use crate::host::range::{best_start, Claims, Targets};
use crate::host::{ReqId, Request, RequestTable};
use crate::metrics::{Metrics, Records, Series, Summary};
use crate::sched::{self, Classes, SchedCtx, Scheduler};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Generator, SimRng};
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// Disk `.0` finished the command in service.
    DiskDone(u32),
    /// A queue's scheduler asked to be consulted again (`wake_at`).
    Wake(Level),
    /// The drive finished a background (freeblock idle-time) transfer.
    BackgroundDone,
    /// Run-time reconfiguration `i` of the config is due.
    Reconfigure(usize),
    /// A client's next request is due.
    Arrived { client: u32 },
}

impl Event {
    /// Among events at the same instant: completions first (they free the
    /// disk), then timers, then arrivals.
    fn priority(&self) -> u8 {
        match self {
            Event::DiskDone(_) | Event::BackgroundDone => 0,
            Event::Wake(_) | Event::Reconfigure(_) => 1,
            Event::Arrived { .. } => 2,
        }
    }
}

/// A queue's counters, as GEOM_SCHED exports them: requests that entered,
/// requests in flight below it (count, bytes, writes; the peak over the run,
/// since all are done at the end) and requests done.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct QueueCounters {
    pub requests: u64,
    pub done: u64,
    pub in_flight: u64,
    pub in_flight_bytes: u64,
    pub in_flight_writes: u64,
    pub max_in_flight: u64,
    pub max_in_flight_bytes: u64,
    pub max_in_flight_writes: u64,
}

impl QueueCounters {
    fn sent(&mut self, bytes: u64, write: bool) {
        self.in_flight += 1;
        self.in_flight_bytes += bytes;
        self.in_flight_writes += write as u64;
        self.max_in_flight = self.max_in_flight.max(self.in_flight);
        self.max_in_flight_bytes = self.max_in_flight_bytes.max(self.in_flight_bytes);
        self.max_in_flight_writes = self.max_in_flight_writes.max(self.in_flight_writes);
    }
    fn finished(&mut self, bytes: u64, write: bool) {
        self.in_flight -= 1;
        self.in_flight_bytes -= bytes;
        self.in_flight_writes -= write as u64;
        self.done += 1;
    }
}

/// Request accounting, checked at the end of every run.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// The workload's requests.
    pub arrived: u64,
    /// Pieces they became (one per disk touched; = arrived on one disk).
    pub pieces: u64,
    pub host_dispatched: u64,
    pub drive_dispatched: u64,
    pub completed: u64,
    pub host_queue: QueueCounters,
    /// With a controller level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_queue: Option<QueueCounters>,
    pub disk_queue: QueueCounters,
    /// Range requests placed by the drive, and those that had to overlap a
    /// concurrent range write's blocks (every acceptable start was claimed).
    pub range_placed: u64,
    pub range_overlaps: u64,
}

/// Freeblock scheduling state: tasks, planner and what they achieved.
struct Freeblock {
    tasks: Tasks,
    planner: Planner,
    idle: bool,
    bg_write: bool,
    /// The idle-time visit in progress.
    busy: Option<(Visit, SimTime)>,
    summary: FreeblockSummary,
    planner_ns: u128,
    /// External mode: the host-side scheduler and the drive as it sees it.
    external: Option<External>,
    /// False: no background work is planned (the baseline run).
    plan: bool,
}

/// A queue level: the disks' own, or one of the queues above them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Host,
    Controller,
    Disk,
}

/// A queue above the disks (the host's, or the controller's) and its owner's state.
struct Queue {
    sched: Box<dyn Scheduler>,
    /// The `wake_at` time an event is scheduled for.
    wake: Option<SimTime>,
    /// Flows with requests here (for `init_class` / `fini_class`).
    classes: Classes,
    /// Bumped when the scheduler is replaced at run time.
    gen: u32,
    /// Most pieces in flight below this queue in total and at each disk (`u32::MAX`: no limit).
    threshold: u32,
    per_disk_threshold: u32,
    /// A piece the scheduler handed out whose disk was full: it blocks the queue.
    held: Option<ReqId>,
}

impl Queue {
    fn new(sched: Box<dyn Scheduler>, class_expire: SimDuration, threshold: u32, per_disk_threshold: u32) -> Queue {
        Queue { sched, wake: None, classes: Classes::new(class_expire), gen: 0, threshold, per_disk_threshold, held: None }
    }
}

/// The host's or the controller's queue (split borrows of the simulation's fields).
fn pick<'a>(host: &'a mut Queue, controller: &'a mut Option<Queue>, level: Level) -> &'a mut Queue {
    match level {
        Level::Host => host,
        Level::Controller => controller.as_mut().expect("a controller level"),
        Level::Disk => unreachable!("the disks' queues are their units'"),
    }
}

/// One disk of the array with its own queue.
struct Unit {
    drive: Drive,
    sched: Box<dyn Scheduler>,
    in_service: Option<ReqId>,
    outstanding: u32,
    classes: Classes,
    /// The host's belief of the drive's state after the last command it knows of.
    belief: DriveState,
}

pub struct Simulation {
    engine: Engine<Event>,
    reqs: RequestTable,
    generator: Box<dyn Generator>,
    rng: SimRng,
    host: Queue,
    controller: Option<Queue>,
    /// Outstanding pieces over all disks.
    outstanding: u32,
    units: Vec<Unit>,
    array: Array,
    /// Requests split across disks: the request as the workload sees it, and pieces left.
    splits: Vec<Option<(Request, u32)>>,
    free_splits: Vec<u32>,
    pieces_buf: Vec<Piece>,
    predictor: Predictor,
    belief_pieces: Vec<crate::disk::TrackPiece>,
    metrics: Metrics,
    counters: Counters,
    /// Which pieces (by seq) completed, to catch double completions.
    done: DoneSet,
    limit: u64,
    stop_arrivals_at: Option<SimTime>,
    model: Arc<DiskModel>,
    freeblock: Option<Freeblock>,
    /// Schedulers to switch to, built (and so checked) up front: (at, queue,
    /// one scheduler for the host or controller or one per disk).
    reconfigure: Vec<(SimTime, Level, Vec<Box<dyn Scheduler>>)>,
    disk_gen: u32,
    claims: Claims,
    /// A broken invariant found deep in an event handler; the run stops with it.
    failed: Option<Error>,
    /// Live range requests: seq -> arrival (claims bind those that arrived before a release).
    live_range: BTreeMap<u64, SimTime>,
}

/// Result of a run.
pub struct RunResult {
    pub summary: Summary,
    pub counters: Counters,
    /// Each scheduler's own counters: ("host" | "controller" | "disk", name, value).
    pub scheduler_counters: Vec<(&'static str, &'static str, u64)>,
    pub freeblock: Option<FreeblockSummary>,
    pub records: Option<Records>,
    /// Time series, if `run.series_window_ms` was set.
    pub series: Option<Series>,
}

impl Simulation {
    pub fn new(cfg: &SimConfig) -> Result<Simulation> {
        cfg.validate()?;
        let spec = builtin::resolve(&cfg.disk.model, cfg.base_dir.as_deref())?;
        let model = Arc::new(DiskModel::new(spec)?);
        Self::with_model(cfg, model)
    }

    pub fn with_model(cfg: &SimConfig, model: Arc<DiskModel>) -> Result<Simulation> {
        cfg.validate()?;
        let mut host_sched = build_queue_sched("host", &cfg.host.scheduler, &cfg.host.set)?;
        let series_window = cfg.run.series_window_ms.map(SimDuration::from_ms);
        if let Some(shaper) = &cfg.host.shaper {
            host_sched = Box::new(crate::qos::shaper::Shaper::new(shaper, host_sched, series_window)?);
        }
        let n = cfg.disk.count;
        let class_expire = SimDuration::from_ms(cfg.host.class_expire_ms);
        // The queue that feeds the disks limits each disk; the host above a controller, the controller's total.
        let (host, controller) = match &cfg.controller {
            None => (Queue::new(host_sched, class_expire, u32::MAX, cfg.host.queue_threshold), None),
            Some(c) => {
                let ctl = build_queue_sched("controller", &c.scheduler, &c.set)?;
                (Queue::new(host_sched, class_expire, cfg.host.queue_threshold, u32::MAX),
                 Some(Queue::new(ctl, class_expire, c.queue_threshold, c.per_disk())))
            }
        };
        let array = Array::new(n, cfg.disk.array, cfg.disk.stripe_kb, model.layout.capacity(), model.spec.sector_bytes)?;
        let mut units = Vec::new();
        for _ in 0..n {
            units.push(Unit {
                drive: Drive::new(model.clone()),
                sched: build_queue_sched("disk", &cfg.disk.scheduler, &cfg.disk.set)?,
                in_service: None,
                outstanding: 0,
                classes: Classes::new(class_expire),
                belief: DriveState::default(),
            });
        }
        if n > 1 && cfg.freeblock.is_some() {
            return Err(crate::error::config_err("freeblock", "freeblock scheduling needs a single disk (disk.count = 1)"));
        }
        let depth = model.spec.controller.queue_depth;
        let (key, per_disk) = match &cfg.controller {
            None => ("host.queue_threshold", cfg.host.queue_threshold),
            Some(c) if c.per_disk_threshold.is_some() => ("controller.per_disk_threshold", c.per_disk()),
            Some(c) => ("controller.queue_threshold", c.queue_threshold),
        };
        if per_disk > depth {
            return Err(crate::error::config_err(key, format!("{per_disk} exceeds the drive's command queue depth of {depth}")));
        }
        let mut workload = cfg.workload.clone();
        if let crate::workload::WorkloadConfig::Trace(t) = &mut workload {
            if t.device_disks && (cfg.disk.array != crate::host::array::ArrayLayout::Concat) {
                return Err(crate::error::config_err("workload.device_disks", "needs disk.array = \"concat\""));
            }
            t.array_disks = n;
        }
        let generator = workload.build(array.capacity(), model.spec.sector_bytes, cfg.base_dir.as_deref())?;
        let sector_bytes = model.spec.sector_bytes;
        let freeblock = match &cfg.freeblock {
            None => None,
            Some(f) => {
                let tasks = Tasks::new(model.layout.capacity(), &f.tasks)?;
                let mut planner = Planner::new(model.clone(), &tasks, f.search_tracks);
                planner.seek_conservatism_ns = SimDuration::from_ms(f.seek_conservatism_ms).ns();
                Some(Freeblock {
                    external: f.external().then(|| External::new(model.clone(), &f.noise, cfg.seed)),
                    plan: f.plan,
                    tasks,
                    planner,
                    idle: f.idle,
                    bg_write: f.tasks.iter().any(|t| t.write),
                    busy: None,
                    summary: FreeblockSummary::default(),
                    planner_ns: 0,
                })
            }
        };
        let mut reconfigure = Vec::new();
        for (i, r) in cfg.reconfigure.iter().enumerate() {
            let level = match r.queue.as_str() {
                "host" => Level::Host,
                "controller" => Level::Controller,
                _ => Level::Disk,
            };
            let copies = if level == Level::Disk { n } else { 1 };
            let s = (0..copies).map(|_| build_queue_sched(&format!("reconfigure[{i}]"), &r.scheduler, &r.set))
                .collect::<Result<Vec<_>>>()?;
            reconfigure.push((SimTime::ZERO + SimDuration::from_ms(r.at_ms), level, s));
        }
        Ok(Simulation {
            reconfigure,
            disk_gen: 0,
            claims: Claims::new(),
            failed: None,
            live_range: BTreeMap::new(),
            freeblock,
            engine: Engine::new(),
            reqs: RequestTable::default(),
            generator,
            rng: SimRng::seed_from_u64(cfg.seed),
            host,
            controller,
            outstanding: 0,
            units,
            array,
            splits: Vec::new(),
            free_splits: Vec::new(),
            pieces_buf: Vec::new(),
            predictor: Predictor { overlapped: cfg.freeblock.as_ref().is_some_and(|f| f.external()), ..Predictor::exact(model.clone()) },
            belief_pieces: Vec::new(),
            metrics: {
                let mut m = Metrics::new(cfg.run.warmup_requests, cfg.run.records, sector_bytes);
                if let Some(w) = series_window {
                    m.keep_series(w.ns());
                }
                if cfg.controller.is_some() {
                    m.keep_controller_queue();
                }
                m
            },
            counters: Counters { controller_queue: cfg.controller.as_ref().map(|_| QueueCounters::default()), ..Default::default() },
            done: DoneSet::default(),
            limit: cfg.run.requests.unwrap_or(match cfg.workload {
                crate::workload::WorkloadConfig::Trace(_) => u64::MAX, // the whole trace
                _ => 10_000,
            }),
            stop_arrivals_at: cfg.run.duration_ms.map(|ms| SimTime::ZERO + SimDuration::from_ms(ms)),
            model,
        })
    }

    /// Receive every run of background blocks as it is transferred: (task, lo, hi, time).
    pub fn on_background_transfer(&mut self, cb: crate::background::TransferCallback) {
        if let Some(f) = &mut self.freeblock {
            f.tasks.on_transfer = Some(cb);
        }
    }

    pub fn model(&self) -> &Arc<DiskModel> {
        &self.model
    }

    /// Run to completion. `progress(completed, limit)` is called every so
    /// often; returning false aborts the run (an error).
    pub fn run(mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<RunResult> {
        for (i, &(t, _, _)) in self.reconfigure.iter().enumerate() {
            self.engine.schedule(t, 1, Event::Reconfigure(i));
        }
        for (t, client) in self.generator.start(&mut self.rng) {
            self.engine.schedule(t, Event::Arrived { client }.priority(), Event::Arrived { client });
        }
        let mut steps: u64 = 0;
        let mut watchdog = crate::watchdog::Watchdog::default();
        while let Some((now, ev)) = self.engine.step() {
            match ev {
                Event::Arrived { client } => self.arrived(now, client)?,
                Event::DiskDone(d) => self.disk_done(now, d as usize)?,
                Event::BackgroundDone => self.background_done(now),
                Event::Reconfigure(i) => self.reconfigure(now, i)?,
                Event::Wake(level) => {
                    let q = pick(&mut self.host, &mut self.controller, level);
                    if q.wake == Some(now) {
                        q.wake = None;
                        self.dispatch(now, level);
                    }
                }
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            watchdog.observe(now, self.counters.arrived + self.counters.completed, || format!("{ev:?}"))?;
            steps += 1;
            if steps & 0xFFFF == 0 && !progress(self.counters.completed, self.limit) {
                return Err(Error::Config { what: "run".into(), msg: "interrupted".into() });
            }
        }
        let end = self.engine.now();
        if let Some(e) = self.generator.take_error() {
            return Err(e);
        }
        self.check_conservation()?;
        progress(self.counters.completed, self.limit);
        let scheduler_counters = self.host.sched.counters().into_iter().map(|(n, v)| ("host", n, v))
            .chain(self.controller.iter().flat_map(|c| c.sched.counters()).map(|(n, v)| ("controller", n, v)))
            .chain(self.units.iter().flat_map(|u| u.sched.counters()).map(|(n, v)| ("disk", n, v)))
            .collect();
        let summary = self.metrics.summary(end);
        if summary.requests == 0 && self.counters.completed > 0 {
            // A run whose every request is warm-up has no figures to report.
            return Err(crate::error::config_err("run.warmup_requests", format!(
                "leaves none of the run's {} requests measured; it must be below the request count", self.counters.completed)));
        }
        let freeblock = self.freeblock.take().map(|mut f| {
            let s = &mut f.summary;
            let span_s = summary.sim_time_ms / 1000.0;
            let bytes = self.model.spec.sector_bytes as f64;
            if span_s > 0.0 && summary.iops > 0.0 {
                // Over the foreground's measured span (requests / IOPS).
                let fg_span_s = summary.requests as f64 / summary.iops;
                s.free_mb_per_s = (s.free_blocks + s.idle_blocks) as f64 * bytes / fg_span_s / 1e6;
                s.latency_mb_per_s = s.free_blocks as f64 * bytes / fg_span_s / 1e6;
            }
            s.planner_us_per_opportunity = if s.opportunities > 0 { f.planner_ns as f64 / s.opportunities as f64 / 1e3 } else { 0.0 };
            s.tasks = f.tasks.status().to_vec();
            s.external = f.external.as_ref().map(External::summary);
            f.summary
        });
        let samples = self.host.sched.timeline(end);
        Ok(RunResult {
            freeblock,
            summary,
            counters: self.counters,
            scheduler_counters,
            records: self.metrics.records.take(),
            series: self.metrics.take_series(samples)?,
        })
    }

    /// The view of the queues above the disks: the host's belief of disk 0's
    /// state (a positional host or controller scheduler over an array sees
    /// the first disk's heads).
    fn queue_head(&self, now: SimTime) -> HeadState {
        head_at(&self.units[0].belief, now)
    }

    fn arrived(&mut self, now: SimTime, client: u32) -> Result<()> {
        if self.counters.arrived >= self.limit || self.stop_arrivals_at.is_some_and(|t| now > t) {
            return Ok(());
        }
        let Some((io, next)) = self.generator.arrive(now, client, &mut self.rng) else {
            self.limit = self.counters.arrived; // the workload is exhausted
            return Ok(());
        };
        let logical = self.counters.arrived;
        let range = match &io.range {
            None => None,
            Some(_) if self.units.len() > 1 => {
                return Err(crate::error::config_err("workload", "range requests need a single disk (disk.count = 1)"));
            }
            Some(spec) => Some(Box::new(Targets::new(spec, io.blocks, &self.model.layout).ok_or_else(|| Error::Config {
                what: "workload".into(),
                msg: format!("range request {logical}: no start aligned to {} blocks fits {} blocks in {:?}", spec.align_blocks, io.blocks, spec.spans),
            })?)),
        };
        let lbn = range.as_ref().map_or(io.lbn, |t| t.first());
        if range.is_some() {
            self.live_range.insert(self.counters.pieces, now);
        }
        if let Some(t) = next {
            self.engine.schedule(t, 2, Event::Arrived { client });
        }
        self.counters.arrived += 1;
        let request = Request {
            seq: self.counters.pieces,
            logical,
            client,
            flow: io.flow.unwrap_or_else(|| self.generator.flow(client)),
            class: io.class,
            lbn,
            blocks: io.blocks,
            is_write: io.is_write,
            deadline: io.deadline,
            range,
            arrival: now,
            ..Default::default()
        };
        let mut pieces = std::mem::take(&mut self.pieces_buf);
        self.array.split(lbn, io.blocks, &mut pieces);
        let split = (pieces.len() > 1).then(|| {
            let whole = (request.clone(), pieces.len() as u32);
            match self.free_splits.pop() {
                Some(i) => { self.splits[i as usize] = Some(whole); i }
                None => { self.splits.push(Some(whole)); self.splits.len() as u32 - 1 }
            }
        });
        for &(disk, local, blocks) in &pieces {
            let piece = Request {
                seq: self.counters.pieces,
                disk,
                lbn: local,
                blocks,
                split,
                target: self.predictor.target(local),
                range: request.range.clone(),
                ..request.clone()
            };
            self.counters.pieces += 1;
            self.enqueue(now, piece);
        }
        self.pieces_buf = pieces;
        self.dispatch(now, Level::Host);
        Ok(())
    }

    /// A piece enters the host queue (or bypasses it).
    fn enqueue(&mut self, now: SimTime, piece: Request) {
        let id = self.reqs.insert(piece);
        self.enter(Level::Host, now, id);
    }

    /// Piece `id` enters queue `level` (or bypasses it).
    fn enter(&mut self, level: Level, now: SimTime, id: ReqId) {
        self.queue_counters(level).requests += 1;
        let head = self.queue_head(now);
        let q = pick(&mut self.host, &mut self.controller, level);
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, claims: &self.claims, cache: None };
        if q.sched.bypass(id, &ctx) {
            let r = self.reqs.get_mut(id);
            if level == Level::Host { r.bypassed = true } else { r.ctl_bypassed = true }
            self.send_below(level, now, id);
            return;
        }
        q.classes.enter(q.sched.as_mut(), self.reqs.get(id).flow);
        q.sched.insert(id, &ctx);
        let len = q.sched.len();
        self.gauge(level, now, len);
    }

    fn queue_counters(&mut self, level: Level) -> &mut QueueCounters {
        match level {
            Level::Host => &mut self.counters.host_queue,
            Level::Controller => self.counters.controller_queue.as_mut().expect("a controller level"),
            Level::Disk => &mut self.counters.disk_queue,
        }
    }

    fn gauge(&mut self, level: Level, now: SimTime, len: usize) {
        match level {
            Level::Host => self.metrics.host_queue(now, len),
            Level::Controller => self.metrics.controller_queue(now, len),
            Level::Disk => unreachable!("the disks' gauge counts what is outstanding at them"),
        }
    }

    fn queue(&self, level: Level) -> &Queue {
        match level {
            Level::Host => &self.host,
            Level::Controller => self.controller.as_ref().expect("a controller level"),
            Level::Disk => unreachable!("the disks' queues are their units'"),
        }
    }

    /// Whether queue `level` may send down piece `id` (or, with `None`, any
    /// piece): below its threshold in total and at the piece's disk.
    fn has_room(&self, level: Level, id: Option<ReqId>) -> bool {
        let q = self.queue(level);
        let disk_room = |u: &Unit| u.outstanding < q.per_disk_threshold;
        self.in_flight(level) < q.threshold as u64 && match id {
            Some(id) => disk_room(&self.units[self.reqs.get(id).disk as usize]),
            None => self.units.iter().any(disk_room),
        }
    }

    /// Pieces sent down from queue `level` and not yet done.
    fn in_flight(&self, level: Level) -> u64 {
        match level {
            Level::Host => self.counters.host_queue.in_flight,
            _ => self.counters.controller_queue.as_ref().expect("a controller level").in_flight,
        }
    }

    /// Let the queues from `from` down send what they have room for: the
    /// controller first (it hears of a completion before the host does).
    fn dispatch(&mut self, now: SimTime, from: Level) {
        if self.controller.is_some() {
            self.dispatch_queue(Level::Controller, now);
        }
        if from == Level::Host {
            self.dispatch_queue(Level::Host, now);
        }
    }

    /// Move pieces from queue `level` to the level below while there is room.
    fn dispatch_queue(&mut self, level: Level, now: SimTime) {
        if let Some(id) = self.queue(level).held {
            if !self.has_room(level, Some(id)) {
                return;
            }
            pick(&mut self.host, &mut self.controller, level).held = None;
            self.send_below(level, now, id);
        }
        while self.has_room(level, None) && !self.queue(level).sched.is_empty() {
            let nothing_below = self.in_flight(level) == 0;
            let head = self.queue_head(now);
            let q = pick(&mut self.host, &mut self.controller, level);
            let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, claims: &self.claims, cache: None };
            let id = match q.sched.dispatch(&ctx, false) {
                Some(id) => id,
                None => {
                    if let Some(t) = q.sched.wake_at().filter(|&t| t > now) {
                        if q.wake != Some(t) {
                            q.wake = Some(t);
                            self.engine.schedule(t, 1, Event::Wake(level));
                        }
                        break;
                    } else if nothing_below {
                        // Nothing in flight will call us again: never stall.
                        q.sched.dispatch(&ctx, true).expect("forced dispatch from a non-empty queue")
                    } else {
                        break;
                    }
                }
            };
            if !self.has_room(level, Some(id)) {
                pick(&mut self.host, &mut self.controller, level).held = Some(id);
                break;
            }
            // With one in flight below it per disk this queue's scheduler drives the arm: its sweeps to the edge happen.
            let q = pick(&mut self.host, &mut self.controller, level);
            let travel = q.sched.travel_first();
            if q.threshold.min(q.per_disk_threshold) == 1 {
                let d = self.reqs.get(id).disk as usize;
                for cylinder in travel {
                    self.travel(d, now, cylinder);
                }
            }
            self.send_below(level, now, id);
        }
        let q = self.queue(level);
        let len = q.sched.len() + q.held.is_some() as usize;
        self.gauge(level, now, len);
    }

    /// Piece `id` leaves queue `level` (dispatched, or bypassing it) for the
    /// controller's queue or its disk.
    fn send_below(&mut self, level: Level, now: SimTime, id: ReqId) {
        let gen = self.queue(level).gen;
        let r = self.reqs.get_mut(id);
        if level == Level::Host {
            r.host_gen = gen;
            r.host_dispatched = now;
            self.counters.host_dispatched += 1;
        } else {
            r.ctl_gen = gen;
        }
        let (bytes, write) = (r.blocks as u64 * self.model.spec.sector_bytes as u64, r.is_write);
        self.queue_counters(level).sent(bytes, write);
        if level == Level::Host && self.controller.is_some() {
            // The controller acts on each piece as it comes, as on each completion.
            self.enter(Level::Controller, now, id);
            self.dispatch_queue(Level::Controller, now);
        } else {
            self.issue(now, id);
        }
    }

    /// Piece `id` enters its disk's queue.
    fn issue(&mut self, now: SimTime, id: ReqId) {
        let r = self.reqs.get_mut(id);
        r.issued = now;
        let d = r.disk as usize;
        self.counters.disk_queue.requests += 1;
        self.outstanding += 1;
        self.units[d].outstanding += 1;
        self.metrics.disk_queue(now, self.outstanding);
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.drive_head(d, now), claims: &self.claims, cache: None };
        let unit = &mut self.units[d];
        unit.classes.enter(unit.sched.as_mut(), self.reqs.get(id).flow);
        unit.sched.insert(id, &ctx);
        self.drive_start(d, now);
    }

    /// An empty seek of disk `d`'s arm; the host's belief follows it.
    fn travel(&mut self, d: usize, now: SimTime, cylinder: u32) {
        let unit = &mut self.units[d];
        unit.drive.travel(now, cylinder);
        let b = &mut unit.belief.head;
        let seek_ns = self.model.mech.reposition_ns(b.cylinder, b.head, cylinder, b.head, false);
        *b = HeadState { cylinder, time: SimTime(b.time.max(now).0 + seek_ns), ..*b };
    }

    /// Disk `d`'s own view (firmware knows where its heads are).
    fn drive_head(&self, d: usize, now: SimTime) -> HeadState {
        head_at(&self.units[d].drive.state, now)
    }

    /// If disk `d`'s mechanism is free, let its scheduler pick the next command.
    fn drive_start(&mut self, d: usize, now: SimTime) {
        if self.units[d].in_service.is_some() || self.freeblock.as_ref().is_some_and(|f| f.busy.is_some()) {
            return;
        }
        if self.units[d].sched.is_empty() {
            self.background_idle(now);
            return;
        }
        let head = self.drive_head(d, now);
        let unit = &mut self.units[d];
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, claims: &self.claims, cache: Some(unit.drive.cache()) };
        let id = unit.sched.dispatch(&ctx, true).expect("forced dispatch from a non-empty drive queue");
        for cylinder in unit.sched.travel_first() {
            self.travel(d, now, cylinder);
        }
        let head = self.drive_head(d, now);
        self.counters.drive_dispatched += 1;
        if let Err(e) = self.place(id, &head) {
            self.failed.get_or_insert(e);
        }
        let (lbn, blocks, is_write) = {
            let r = self.reqs.get(id);
            (r.lbn, r.blocks, r.is_write)
        };
        if self.freeblock.as_ref().is_some_and(|f| f.external.is_some()) {
            let service = self.serve_external(d, id);
            self.started(d, now, id, service);
            return;
        }
        let unit = &mut self.units[d];
        let service = unit.drive.serve(now, lbn, blocks, is_write);
        let source = unit.drive.last_source;
        if let Some(f) = self.freeblock.as_mut().filter(|f| f.plan && service.media_start.0 > 0 && !service.cache_hit) {
            // In firmware the planner's model is the drive's: the plan ends
            // with the heads over the request's first sector exactly when
            // they would have been without it.
            let target = self.reqs.get(id).target;
            let media_start = service.media_start;
            let clock = std::time::Instant::now();
            let plan = f.planner.plan(source.time, (source.cylinder, source.head), (target.cylinder, target.head), media_start,
                                      is_write, f.bg_write, &f.tasks);
            f.planner_ns += clock.elapsed().as_nanos();
            f.summary.opportunities += 1;
            for v in &plan.visits {
                f.summary.free_blocks += f.planner.credit(v, media_start, &mut f.tasks);
            }
        }
        // The host's belief follows its own model of the drive.
        let unit = &mut self.units[d];
        unit.belief.head.time = unit.belief.head.time.max(now);
        self.predictor.model.serve(&mut unit.belief, now, lbn, blocks, is_write, &mut self.belief_pieces);
        self.started(d, now, id, service);
    }

    /// External mode: the host plans background work for request `id` with
    /// its model, and disk `d` (the noisy truth) serves both.
    fn serve_external(&mut self, d: usize, id: ReqId) -> crate::disk::Service {
        let r = self.reqs.get(id);
        let fg = Foreground { lbn: r.lbn, blocks: r.blocks, is_write: r.is_write, cylinder: r.target.cylinder, head: r.target.head, ready: r.issued };
        let f = self.freeblock.as_mut().expect("external mode has freeblock state");
        let ext = f.external.as_mut().expect("external mode");
        let planner = f.plan.then_some(&mut f.planner);
        let unit = &mut self.units[d];
        let service = ext.serve(&mut unit.drive, &fg, planner, &mut f.tasks, f.bg_write, &mut f.summary, &mut f.planner_ns);
        unit.belief = DriveState { head: ext.belief(), last_was_write: r.is_write };
        service
    }

    /// Disk `d` took request `id`: record it and wait for its completion.
    fn started(&mut self, d: usize, now: SimTime, id: ReqId, service: crate::disk::Service) {
        let r = self.reqs.get_mut(id);
        let (blocks, is_write) = (r.blocks, r.is_write);
        r.started = now;
        r.service = service;
        r.disk_gen = self.disk_gen;
        self.counters.disk_queue.sent(blocks as u64 * self.model.spec.sector_bytes as u64, is_write);
        self.units[d].in_service = Some(id);
        self.engine.schedule(service.done, 0, Event::DiskDone(d as u32));
    }

    /// The drive puts a range request at its best start from `head` (the
    /// start a range scheduler chose it for) and claims the blocks of a write.
    fn place(&mut self, id: ReqId, head: &HeadState) -> Result<()> {
        let r = self.reqs.get(id);
        let Some(targets) = r.range.as_deref() else { return Ok(()) };
        let phase = self.predictor.phase_at(head.time);
        let c = best_start(r, targets, head, phase, &self.predictor, &self.claims, None)
            .filter(|c| targets.contains(c.lbn))
            .ok_or_else(|| Error::Invariant(format!("range request {} placed outside its targets", r.seq)))?;
        self.counters.range_placed += 1;
        self.counters.range_overlaps += c.claimed as u64;
        if r.is_write {
            self.claims.claim(r.seq, c.lbn, r.blocks);
        }
        let target = self.predictor.target(c.lbn);
        let r = self.reqs.get_mut(id);
        r.lbn = c.lbn;
        r.target = target;
        Ok(())
    }

    /// Nothing to serve: let freeblock read the nearest wanted track, unless
    /// foreground work is waiting above the disk or no more will come.
    fn background_idle(&mut self, now: SimTime) {
        let more_foreground = self.counters.arrived < self.limit && self.stop_arrivals_at.is_none_or(|t| now <= t);
        let waiting = !self.host.sched.is_empty() || self.controller.as_ref().is_some_and(|c| !c.sched.is_empty());
        let Some(f) = &mut self.freeblock else { return };
        if !f.idle || waiting || !more_foreground {
            return;
        }
        let drive = &mut self.units[0].drive;
        let at = drive.state.head;
        if let Some((visit, end)) = f.planner.idle(now, (at.cylinder, at.head), f.bg_write, &f.tasks) {
            drive.state.head = HeadState { cylinder: visit.cylinder, head: visit.head, time: end, ..Default::default() };
            f.busy = Some((visit, end));
            self.engine.schedule(end, 0, Event::BackgroundDone);
        }
    }

    /// Swap a queue's scheduler (the host's, the controller's, or every
    /// disk's), moving its pending requests across in arrival order.
    fn reconfigure(&mut self, now: SimTime, i: usize) -> Result<()> {
        let (_, level, new) = &mut self.reconfigure[i];
        let (level, new) = (*level, std::mem::take(new));
        for (d, mut new) in new.into_iter().enumerate() {
            let head = if level == Level::Disk { self.drive_head(d, now) } else { self.queue_head(now) };
            let (old, classes) = match level {
                Level::Disk => {
                    let u = &mut self.units[d];
                    (&mut u.sched, &mut u.classes)
                }
                _ => {
                    let q = pick(&mut self.host, &mut self.controller, level);
                    q.wake = None;
                    (&mut q.sched, &mut q.classes)
                }
            };
            let held = old.len();
            let mut moved = old.drain();
            if moved.len() != held || !old.is_empty() {
                return Err(Error::Invariant(format!("reconfiguration: {} drained {} of {held} requests", old.name(), moved.len())));
            }
            moved.sort_by_key(|&id| self.reqs.get(id).seq);
            let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head, claims: &self.claims, cache: None };
            // The new scheduler sets up the classes of the requests it takes over.
            classes.reset();
            for &id in &moved {
                classes.enter(new.as_mut(), self.reqs.get(id).flow);
                new.insert(id, &ctx);
            }
            if new.len() != held {
                return Err(Error::Invariant(format!("reconfiguration: {} holds {} of {held} requests", new.name(), new.len())));
            }
            *old = new;
        }
        match level {
            Level::Disk => self.disk_gen += 1,
            _ => pick(&mut self.host, &mut self.controller, level).gen += 1,
        }
        self.start_all(now);
        self.dispatch(now, Level::Host);
        Ok(())
    }

    fn start_all(&mut self, now: SimTime) {
        for d in 0..self.units.len() {
            self.drive_start(d, now);
        }
    }

    fn background_done(&mut self, now: SimTime) {
        if let Some(f) = &mut self.freeblock {
            if let Some((visit, _)) = f.busy.take() {
                f.summary.idle_blocks += f.planner.credit(&visit, now, &mut f.tasks);
            }
        }
        self.drive_start(0, now);
        self.dispatch(now, Level::Host);
    }

    fn disk_done(&mut self, now: SimTime, d: usize) -> Result<()> {
        let id = self.units[d].in_service.take().ok_or_else(|| Error::Invariant(format!("disk {d}: completion with no command in service")))?;
        if let Some(ext) = self.freeblock.as_mut().and_then(|f| f.external.as_mut()) {
            ext.observed(now);
            self.units[d].belief.head = ext.belief();
        }
        let ctx = SchedCtx { now, reqs: &self.reqs, predictor: &self.predictor, head: self.drive_head(d, now), claims: &self.claims, cache: None };
        // Only the scheduler instance that dispatched a request hears of its completion.
        let r = self.reqs.get(id);
        if r.disk_gen == self.disk_gen {
            self.units[d].sched.complete(id, &ctx);
            self.units[d].classes.leave(r.flow, now);
        }
        if !r.bypassed && r.host_gen == self.host.gen {
            self.host.sched.complete(id, &ctx);
            self.host.classes.leave(r.flow, now);
        }
        if let Some(c) = self.controller.as_mut().filter(|c| !r.ctl_bypassed && r.ctl_gen == c.gen) {
            c.sched.complete(id, &ctx);
            c.classes.leave(r.flow, now);
        }
        for q in std::iter::once(&mut self.host).chain(self.controller.as_mut()) {
            q.classes.expire(q.sched.as_mut(), now);
        }
        let unit = &mut self.units[d];
        unit.classes.expire(unit.sched.as_mut(), now);
        let mut req = self.reqs.remove(id);
        if req.range.is_some() {
            // The host learns where it went; claims nobody can still violate go.
            self.live_range.remove(&req.seq);
            if req.is_write {
                self.claims.release(req.seq, now, self.live_range.values().next().copied());
            }
            self.generator.placed(req.client, req.lbn, req.blocks);
        }
        let bytes = req.blocks as u64 * self.model.spec.sector_bytes as u64;
        for q in [Some(&mut self.counters.host_queue), self.counters.controller_queue.as_mut(), Some(&mut self.counters.disk_queue)].into_iter().flatten() {
            q.finished(bytes, req.is_write);
        }
        self.outstanding -= 1;
        self.units[d].outstanding -= 1;
        if !self.done.insert(req.seq) {
            return Err(Error::Invariant(format!("request {} completed twice", req.seq)));
        }
        self.metrics.disk_queue(now, self.outstanding);
        // The workload's request is done with its last piece, reported at its array address.
        let whole = match req.split {
            None => {
                req.lbn = self.array.array_lbn(req.disk, req.lbn);
                Some(req)
            }
            Some(i) => {
                let (whole, left) = self.splits[i as usize].as_mut().ok_or_else(|| Error::Invariant("piece of a finished split".into()))?;
                let first_done = whole.service.done == SimTime::ZERO;
                whole.issued = if first_done { req.issued } else { whole.issued.min(req.issued) };
                whole.host_dispatched = if first_done { req.host_dispatched } else { whole.host_dispatched.min(req.host_dispatched) };
                *left -= 1;
                if whole.service.done <= req.service.done {
                    (whole.service, whole.started, whole.disk) = (req.service, req.started, req.disk);
                }
                if *left == 0 {
                    self.free_splits.push(i);
                    self.splits[i as usize].take().map(|(w, _)| w)
                } else {
                    None
                }
            }
        };
        if let Some(whole) = whole {
            self.counters.completed += 1;
            self.metrics.completed(&whole);
            if let Some(t) = self.generator.completed(now, whole.client, &mut self.rng) {
                self.engine.schedule(t, 2, Event::Arrived { client: whole.client });
            }
        }
        let unit = &mut self.units[d];
        if unit.in_service.is_none() && unit.sched.is_empty() {
            // The host observes the completion time; its believed position stays its own.
            unit.belief.head.time = now;
        }
        self.drive_start(d, now);
        self.dispatch(now, Level::Host);
        Ok(())
    }

    fn check_conservation(&self) -> Result<()> {
        let c = &self.counters;
        let queued = (std::iter::once(&self.host).chain(&self.controller).map(|q| q.sched.len() + q.held.is_some() as usize).sum::<usize>()
            + self.units.iter().map(|u| u.sched.len()).sum::<usize>()) as u64;
        let q_ok = |q: &QueueCounters| q.requests == c.pieces && q.done == c.pieces && q.in_flight == 0 && q.in_flight_bytes == 0;
        if !q_ok(&c.host_queue) || !c.controller_queue.as_ref().is_none_or(q_ok) || !q_ok(&c.disk_queue) {
            return Err(Error::Invariant(format!("queue counters: host {:?} controller {:?} disk {:?}",
                c.host_queue, c.controller_queue, c.disk_queue)));
        }
        if c.arrived != c.completed || queued != 0 || self.reqs.live() != 0 || c.host_dispatched != c.pieces
            || c.drive_dispatched != c.pieces || self.metrics.completed != c.completed || self.splits.iter().any(Option::is_some)
        {
            return Err(Error::Invariant(format!(
                "request conservation: arrived {} pieces {} host-dispatched {} drive-dispatched {} completed {} still queued {} live {}",
                c.arrived, c.pieces, c.host_dispatched, c.drive_dispatched, c.completed, queued, self.reqs.live())));
        }
        if self.done.count != c.pieces {
            return Err(Error::Invariant("some request never completed".into()));
        }
        Ok(())
    }
}

/// Seqs marked done: every seq below `below` (a multiple of 64), then a bit
/// per seq, so memory follows the spread of the seqs in flight rather than
/// the length of the run.
#[derive(Default)]
struct DoneSet {
    below: u64,
    bits: std::collections::VecDeque<u64>,
    count: u64,
}

impl DoneSet {
    /// Mark `seq` done; false if it already was.
    fn insert(&mut self, seq: u64) -> bool {
        let Some(off) = seq.checked_sub(self.below) else { return false };
        let (word, bit) = ((off / 64) as usize, 1u64 << (off % 64));
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        if self.bits[word] & bit != 0 {
            return false;
        }
        self.bits[word] |= bit;
        self.count += 1;
        while self.bits.front() == Some(&u64::MAX) {
            self.bits.pop_front();
            self.below += 64;
        }
        true
    }
}

/// Where a positioning prediction starts: the heads of `state`, free no earlier than `now`.
fn head_at(state: &DriveState, now: SimTime) -> HeadState {
    HeadState { time: state.head.time.max(now), last_was_write: state.last_was_write, ..state.head }
}

/// The scheduler of a queue's config section (`level`: host, controller,
/// disk, reconfigure[i]); errors name `level.scheduler` or `level.set.KEY`.
fn build_queue_sched(level: &str, name: &str, set: &std::collections::BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>> {
    let settings: Vec<(String, f64)> = set.iter().map(|(k, v)| (k.clone(), *v)).collect();
    sched::build_as(Some("set"), name, &settings).map_err(|e| match e {
        Error::Config { what, msg } => Error::Config { what: format!("{level}.{what}"), msg },
        e => e,
    })
}

/// Convenience: build and run a config.
pub fn run(cfg: &SimConfig) -> Result<RunResult> {
    Simulation::new(cfg)?.run(&mut |_, _| true)
}

#[cfg(test)]
mod tests {
    use super::DoneSet;

    #[test]
    fn done_set_rejects_a_second_completion_in_any_order() {
        let mut d = DoneSet::default();
        // 0..200 in a scrambled order, each once.
        let order: Vec<u64> = (0..200u64).map(|i| (i * 37) % 200).collect();
        for &s in &order {
            assert!(d.insert(s), "{s} first time");
        }
        assert_eq!(d.count, 200);
        for &s in &order {
            assert!(!d.insert(s), "{s} second time");
        }
        // The fully done prefix is folded into `below`: 3 whole words of 64.
        assert_eq!(d.below, 192);
        assert!(d.insert(250) && !d.insert(250) && d.insert(200));
    }
}

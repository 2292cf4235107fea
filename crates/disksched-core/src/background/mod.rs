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

use crate::error::{config_err, Result};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Blocks still wanted, one bit per LBN, plus per-cylinder counts so idle
/// time can find the nearest work quickly.
#[derive(Clone, Debug)]
pub struct Wanted {
    bits: Vec<u64>,
    count: u64,
    capacity: u64,
}

impl Wanted {
    /// No block wanted, on a disk of `capacity` LBNs.
    pub fn new(capacity: u64) -> Wanted {
        Wanted { bits: vec![0; capacity.div_ceil(64) as usize], count: 0, capacity }
    }
    /// Blocks on the disk (wanted or not).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Number of blocks wanted.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// `lbn` is wanted.
    pub fn get(&self, lbn: u64) -> bool {
        self.bits[(lbn / 64) as usize] >> (lbn % 64) & 1 == 1
    }
    /// Set bits in [lo, hi); returns how many changed.
    pub fn set_range(&mut self, lo: u64, hi: u64) -> u64 {
        self.update(lo, hi, true)
    }
    /// Clear bits in [lo, hi); returns how many were set.
    pub fn clear_range(&mut self, lo: u64, hi: u64) -> u64 {
        self.update(lo, hi, false)
    }
    fn update(&mut self, lo: u64, hi: u64, set: bool) -> u64 {
        let mut changed = 0;
        for (w, mask) in word_masks(lo, hi) {
            let before = self.bits[w];
            self.bits[w] = if set { before | mask } else { before & !mask };
            changed += (before ^ self.bits[w]).count_ones() as u64;
        }
        if set { self.count += changed } else { self.count -= changed }
        changed
    }
    /// Number of set bits in [lo, hi).
    pub fn count_range(&self, lo: u64, hi: u64) -> u64 {
        word_masks(lo, hi).map(|(w, mask)| (self.bits[w] & mask).count_ones() as u64).sum()
    }
}

/// The 64-bit words covering bits [lo, hi), each with the mask of its bits in range.
fn word_masks(lo: u64, hi: u64) -> impl Iterator<Item = (usize, u64)> {
    let first = lo / 64;
    let last = hi.div_ceil(64);
    (first..last).map(move |w| {
        let start = lo.max(w * 64) - w * 64;
        let end = hi.min(w * 64 + 64) - w * 64;
        let mask = if end - start == 64 { u64::MAX } else { ((1u64 << (end - start)) - 1) << start };
        (w as usize, mask)
    })
}

use crate::schema::{Param, Ty};

/// `freeblock.seek_conservatism_ms`: margin added to every planned head movement.
pub const SEEK_CONSERVATISM_MS: Param = Param::float("seek_conservatism_ms", "ms", 0.0, 0.0, 10.0,
    "added to every head movement the planner predicts");
/// `freeblock.search_tracks`: tracks the planner examines per opportunity.
pub const SEARCH_TRACKS: Param = Param::int("search_tracks", "tracks", 1.0, 64.0, 100_000.0,
    "tracks the planner examines per opportunity besides source and destination");

/// `freeblock.drive_queue_depth`: commands the external scheduler keeps at the drive.
pub const DRIVE_QUEUE_DEPTH: Param = Param::int("drive_queue_depth", "commands", 1.0, 2.0, 2.0,
    "external mode: commands kept at each drive (2: the next one's processing and bus transfer overlap the media access; 1: none; Fig. 4); host.queue_threshold (a limit per disk) must equal it");

/// Declarations of the `[freeblock]` keys.
pub const FREEBLOCK_PARAMS: &[Param] = &[
    Param::other("planner", Ty::Str, "greedy", "the planner (`background::planner::REGISTRY`): `greedy`"),
    Param::other("mode", Ty::Choice(&["firmware", "external"]), "firmware",
        "`firmware`: the planner's model is the drive; `external`: a host-side scheduler with its own model (`noise`), two commands at the drive (over an array: one such scheduler per disk)"),
    SEEK_CONSERVATISM_MS,
    Param::other("plan", Ty::Bool, "true", "false: plan no background work (the run a foreground's slowdown is measured against)"),
    Param::other("noise", Ty::Table, "", "external mode: `[freeblock.noise]`"),
    Param::other("belief", Ty::Table, "absent: exact", "external mode: the external scheduler's model of the drive, `[freeblock.belief]` (keys as `host.belief`; also the host scheduler's unless `[host.belief]` is given)"),
    Param::other("one_per_track", Ty::Bool, "true", "external mode: no background command of its own on the source or destination track (a second command on a track can trigger the drive's prefetch; section 4.3)"),
    DRIVE_QUEUE_DEPTH,
    SEARCH_TRACKS,
    Param::other("idle", Ty::Bool, "true", "also read background blocks when the drive is idle (both modes)"),
    Param::other("tasks", Ty::List, "one scan of the whole disk", "background tasks: `[[freeblock.tasks]]`"),
    Param::other("events", Ty::List, "[]", "tasks paused, resumed or aborted during the run: `[[freeblock.events]]`"),
];

/// Declarations of the `[[freeblock.tasks]]` keys.
pub const TASK_PARAMS: &[Param] = &[
    Param::other("name", Ty::Str, "scan", "task name (for reports)"),
    Param::other("blocks", Ty::List, "absent: the whole disk", "[first block, one past the last], within the disk"),
    TASK_PRIORITY,
    Param::other("write", Ty::Bool, "false", "writes instead of reads (a cleaner writing segments); a transfer moves the blocks of tasks of its own direction only"),
    Param::other("repeat", Ty::Bool, "false", "a scan that starts again when it completes (scans per day)"),
    TASK_START_MS,
    Param::other("kind", Ty::Choice(&["scan", "scrub", "prefetch", "prewrite"]), "scan",
                 "scan: read (or write) every block once (or repeating); scrub: a read-verify pass that starts again when it completes; prefetch / prewrite: read / write the blocks before deadline_ms, the rest are given up then"),
    TASK_DEADLINE_MS,
];

/// `[[freeblock.tasks]].deadline_ms`: how long a prefetch or prewrite may take.
pub const TASK_DEADLINE_MS: Param = Param::float("deadline_ms", "ms", 0.0, f64::NAN, 1e12,
    "prefetch / prewrite: time from the task's arrival after which its remaining blocks are given up (state expired)").default_text("required for prefetch / prewrite");

/// `[[freeblock.tasks]].priority`: the weight of a task's blocks.
pub const TASK_PRIORITY: Param = Param::int("priority", "", 0.0, 0.0, 1000.0,
    "when options compete, a block of a task of priority p counts p + 1 times (equal priorities: blocks count alike)");
/// `[[freeblock.tasks]].start_ms`: when the task arrives.
pub const TASK_START_MS: Param = Param::float("start_ms", "ms", 0.0, 0.0, 1e12, "simulated time at which the task arrives (its blocks become wanted)");

/// `[[freeblock.events]].at_ms`.
pub const EVENT_AT_MS: Param = Param::float("at_ms", "ms", 0.0, f64::NAN, 1e12, "simulated time of the event").default_text("required");

/// Declarations of the `[[freeblock.events]]` keys.
pub const EVENT_PARAMS: &[Param] = &[
    EVENT_AT_MS,
    Param::other("task", Ty::Str, "required", "the task's name"),
    Param::other("action", Ty::Choice(&["pause", "resume", "abort"]), "required", "what happens to it"),
];

/// What an event does to a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskAction {
    /// Its blocks become wanted (a task arriving: `start_ms`).
    Start,
    /// Its remaining blocks are not wanted until resumed.
    Pause,
    /// A paused task's remaining blocks are wanted again.
    Resume,
    /// Its remaining blocks are no longer wanted.
    Abort,
    /// A prefetch's or prewrite's deadline passed: its remaining blocks are given up.
    Expire,
}

/// `[[freeblock.events]]`: a task paused, resumed or aborted during the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEvent {
    /// Simulated time of the event, ms.
    pub at_ms: f64,
    /// The task's name.
    pub task: String,
    /// What happens to it.
    pub action: TaskAction,
}

/// `[freeblock]` section of a run config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreeblockConfig {
    /// `firmware`: the planner's model is the drive itself. `external`: a
    /// host-side scheduler (Lumb et al. 2002): its model differs from the
    /// drive (`noise`), it keeps two commands at the drive, and it sends
    /// background work as commands of its own or merged into the next
    /// foreground read. Over an array every disk has its own (its belief,
    /// noise stream, commands and tasks over its blocks).
    #[serde(default = "firmware")]
    pub mode: String,
    /// Added to every head movement the planner predicts, ms.
    #[serde(default)]
    pub seek_conservatism_ms: f64,
    /// False: plan no background work, everything else as configured (the
    /// run a foreground's slowdown is measured against).
    #[serde(default = "yes")]
    pub plan: bool,
    /// External mode: how the drive differs from the host's model.
    #[serde(default)]
    pub noise: crate::disk::noisy::NoiseConfig,
    /// Tracks the planner examines per opportunity besides source and destination.
    #[serde(default = "default_search_tracks")]
    pub search_tracks: u32,
    /// External mode: the external scheduler's model of the drive; absent: exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief: Option<crate::disk::belief::BeliefConfig>,
    /// External mode: no background command of its own on the source or destination track.
    #[serde(default = "yes")]
    pub one_per_track: bool,
    /// External mode: commands kept at the drive, 1 or 2.
    #[serde(default = "default_drive_queue_depth")]
    pub drive_queue_depth: u32,
    /// Also read background blocks when the drive is idle.
    #[serde(default = "yes")]
    pub idle: bool,
    /// Background tasks; default: one scan of the whole disk.
    #[serde(default = "default_tasks")]
    pub tasks: Vec<TaskConfig>,
    /// Tasks paused, resumed or aborted during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<TaskEvent>,
    /// The planner, by registry name.
    #[serde(default = "greedy")]
    pub planner: String,
}

fn greedy() -> String {
    "greedy".into()
}

fn firmware() -> String {
    "firmware".into()
}
fn default_search_tracks() -> u32 {
    64
}
fn default_drive_queue_depth() -> u32 {
    2
}
fn yes() -> bool {
    true
}
fn default_tasks() -> Vec<TaskConfig> {
    vec![TaskConfig::default()]
}

impl FreeblockConfig {
    /// `mode = "external"`: a host-side scheduler with its own model.
    pub fn external(&self) -> bool {
        self.mode == "external"
    }

    /// `queue_threshold`: the host's; external mode keeps exactly two commands at the drive.
    pub fn validate(&self, queue_threshold: u32) -> Result<()> {
        if self.mode != "firmware" && self.mode != "external" {
            return Err(config_err("freeblock.mode", format!("'{}' (expected firmware or external)", self.mode)));
        }
        SEEK_CONSERVATISM_MS.check("freeblock", self.seek_conservatism_ms)?;
        self.noise.validate()?;
        DRIVE_QUEUE_DEPTH.check_count("freeblock", self.drive_queue_depth as u64)?;
        if !planner::REGISTRY.iter().any(|p| p.name == self.planner) {
            return Err(config_err("freeblock.planner", format!("'{}' (expected one of: {})", self.planner,
                planner::REGISTRY.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))));
        }
        if let Some(b) = &self.belief {
            b.validate("freeblock.belief")?;
            if !self.external() {
                return Err(config_err("freeblock.belief", "in firmware the planner's model is the drive (expected mode = \"external\")"));
            }
            if b.blind() {
                return Err(config_err("freeblock.belief.geometry", "blind (expected known: the planner needs tracks and rotation)"));
            }
        }
        if self.external() {
            let depth = self.drive_queue_depth;
            if queue_threshold != depth {
                return Err(config_err("host.queue_threshold", format!(
                    "{queue_threshold}: freeblock mode external keeps freeblock.drive_queue_depth = {depth} commands at the drive (set {depth})")));
            }

        }
        SEARCH_TRACKS.check_count("freeblock", self.search_tracks as u64)?;
        if self.tasks.is_empty() {
            return Err(config_err("freeblock.tasks", "at least one task is required"));
        }
        for (i, t) in self.tasks.iter().enumerate() {
            let at = format!("freeblock.tasks[{i}]");
            TASK_PRIORITY.check_count(&at, t.priority as u64)?;
            TASK_START_MS.check(&at, t.start_ms)?;
            t.check_kind(&at)?;
        }
        for (i, e) in self.events.iter().enumerate() {
            let at = format!("freeblock.events[{i}]");
            EVENT_AT_MS.check(&at, e.at_ms)?;
            if matches!(e.action, TaskAction::Start | TaskAction::Expire) {
                return Err(config_err(format!("{at}.action"), "(expected pause, resume or abort; a task arrives at its start_ms and a prefetch expires at its deadline_ms)"));
            }
            self.task_index(&e.task).ok_or_else(|| config_err(format!("{at}.task"), format!(
                "'{}' (expected one of the tasks' names: {})", e.task, self.tasks.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "))))?;
        }
        Ok(())
    }

    /// The index of the first task named `name`.
    pub fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }

    /// Every task event of the run, in time order (ties: configuration
    /// order): the tasks' arrivals after time 0, then the events.
    pub fn schedule(&self) -> Vec<(SimTime, TaskAction, usize)> {
        let at = |ms: f64| SimTime::ZERO + crate::time::SimDuration::from_ms(ms);
        let mut s: Vec<_> = self.tasks.iter().enumerate().filter(|(_, t)| t.start_ms > 0.0).map(|(i, t)| (at(t.start_ms), TaskAction::Start, i))
            .chain(self.tasks.iter().enumerate().filter_map(|(i, t)| t.deadline_ms.map(|d| (at(t.start_ms + d), TaskAction::Expire, i))))
            .chain(self.events.iter().map(|e| (at(e.at_ms), e.action, self.task_index(&e.task).expect("validated"))))
            .collect();
        s.sort_by_key(|e| e.0);
        s
    }
}

/// Freeblock results of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FreeblockSummary {
    /// Foreground requests whose rotational latency the planner looked at.
    pub opportunities: u64,
    /// Background blocks moved inside foreground positioning time.
    pub free_blocks: u64,
    /// Background blocks moved while the drive was otherwise idle.
    pub idle_blocks: u64,
    /// (free + idle) blocks over the foreground's span, MB/s.
    pub free_mb_per_s: f64,
    /// Of that, only what rotational latency gave.
    pub latency_mb_per_s: f64,
    /// Wall-clock CPU time of the planner per opportunity, us (not deterministic).
    pub planner_us_per_opportunity: f64,
    /// Each task's progress, in configuration order.
    pub tasks: Vec<TaskStatus>,
    /// Background blocks by where the heads found them.
    pub by_source: BySource,
    /// Wall-clock CPU time of the foreground scheduler per decision, us
    /// (the level that orders requests for the drive: the drive's own in
    /// firmware, the host's outside; not deterministic).
    pub foreground_sched_us_per_decision: f64,
    /// External mode only: commands, lateness, prediction error, noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<external::ExternalSummary>,
    /// An array's disks: each disk's own results, in disk order (the
    /// figures above merge them, `merge`); empty for one disk.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<FreeblockSummary>,
}

impl FreeblockSummary {
    /// An array's results from each disk's, in disk order: the first
    /// disk's with every other's folded in (`merge`), each disk's kept in `disks`.
    pub fn of_disks(disks: Vec<FreeblockSummary>) -> Option<FreeblockSummary> {
        let mut all = disks.iter().cloned();
        let mut merged = all.next()?;
        for o in all {
            merged.merge(o);
        }
        if disks.len() > 1 {
            merged.disks = disks;
        }
        Some(merged)
    }

    /// Fold in another disk's results (an array: each disk runs the tasks
    /// over its own blocks). Counts and bandwidths add up; a task's blocks
    /// add up, it is done (and reaches a share of its blocks) when it is on
    /// every disk, its passes are the fewest of any disk's; its progress
    /// series stays the first disk's (each disk's is in `disks`). The
    /// external-mode details merge too (`ExternalSummary::merge`: counts and
    /// the error histogram add up, shares are of the disks' requests together).
    pub fn merge(&mut self, o: FreeblockSummary) {
        let ops = self.opportunities + o.opportunities;
        if ops > 0 {
            self.planner_us_per_opportunity = (self.planner_us_per_opportunity * self.opportunities as f64
                + o.planner_us_per_opportunity * o.opportunities as f64) / ops as f64;
        }
        self.opportunities = ops;
        self.free_blocks += o.free_blocks;
        self.idle_blocks += o.idle_blocks;
        self.free_mb_per_s += o.free_mb_per_s;
        self.latency_mb_per_s += o.latency_mb_per_s;
        let (a, b) = (&mut self.by_source, &o.by_source);
        a.source_track += b.source_track;
        a.destination_track += b.destination_track;
        a.other_track += b.other_track;
        a.merged += b.merged;
        a.idle += b.idle;
        let both = |x: Option<f64>, y: Option<f64>| x.zip(y).map(|(x, y)| x.max(y));
        for (t, u) in self.tasks.iter_mut().zip(o.tasks) {
            t.blocks_total += u.blocks_total;
            t.blocks_done += u.blocks_done;
            t.completed_ms = both(t.completed_ms, u.completed_ms);
            for k in 0..t.time_to_pct_ms.len() {
                t.time_to_pct_ms[k] = both(t.time_to_pct_ms[k], u.time_to_pct_ms[k]);
            }
            t.passes = t.passes.min(u.passes);
            t.passes_per_day = t.passes_per_day.min(u.passes_per_day);
            if t.state == TaskState::Done && u.state != TaskState::Done {
                t.state = u.state;
            }
        }
        if let (Some(a), Some(b)) = (&mut self.external, &o.external) {
            a.merge(b);
        }
    }
}

/// Background blocks moved, by where the heads found them (Lumb et al.
/// 2000/2002): on the source track before leaving it, on the destination
/// track before the foreground's sector, on another track visited on the
/// way, merged into the foreground read (external mode), or in idle time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BySource {
    /// On the track the heads were leaving.
    pub source_track: u64,
    /// On the foreground request's track, as a transfer of its own.
    pub destination_track: u64,
    /// On a track visited on the way.
    pub other_track: u64,
    /// Prepended to the next foreground read (external mode).
    pub merged: u64,
    /// While the drive was otherwise idle.
    pub idle: u64,
}

/// A background task as configured.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    /// Task name (for reports).
    #[serde(default = "scan")]
    pub name: String,
    /// First block and one past the last; absent = the whole disk.
    #[serde(default)]
    pub blocks: Option<(u64, u64)>,
    /// When options compete, a block of this task counts `priority + 1` times (one owner per block).
    #[serde(default)]
    pub priority: u32,
    /// Writes instead of reads (e.g. a cleaner writing segments).
    #[serde(default)]
    pub write: bool,
    /// Starts again when it completes (a repeating scan).
    #[serde(default, skip_serializing_if = "is_false")]
    pub repeat: bool,
    /// When the task arrives, ms of simulated time (0: at the start).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub start_ms: f64,
    /// What the task is for (scan, scrub, prefetch, prewrite).
    #[serde(default)]
    pub kind: TaskKind,
    /// Prefetch / prewrite: ms from arrival after which the remaining blocks are given up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<f64>,
}

/// What a background task is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskKind {
    /// Every block once (or repeating), read or written.
    #[default]
    Scan,
    /// A read-verify pass over the blocks that starts again when it completes (media scrubbing).
    Scrub,
    /// Read the blocks before the deadline (data wanted soon, e.g. a prefetch of a file).
    Prefetch,
    /// Write the blocks before the deadline (e.g. dirty data to be on the media by then).
    Prewrite,
}

impl Default for TaskConfig {
    /// A scan of the whole disk (the `[[freeblock.tasks]]` defaults).
    fn default() -> Self {
        TaskConfig { name: scan(), blocks: None, priority: 0, write: false, repeat: false, start_ms: 0.0, kind: TaskKind::Scan, deadline_ms: None }
    }
}

impl TaskConfig {
    /// A write task (a prewrite always writes).
    pub fn writes(&self) -> bool {
        self.write || self.kind == TaskKind::Prewrite
    }

    /// Starts again when it completes (a scrub always does).
    pub fn repeats(&self) -> bool {
        self.repeat || self.kind == TaskKind::Scrub
    }

    /// The kind's rules on `write`, `repeat` and `deadline_ms` (`at`: the key prefix for errors).
    pub fn check_kind(&self, at: &str) -> Result<()> {
        let deadline = matches!(self.kind, TaskKind::Prefetch | TaskKind::Prewrite);
        match self.deadline_ms {
            Some(d) if deadline => {
                TASK_DEADLINE_MS.check(at, d)?;
            }
            Some(d) => return Err(config_err(format!("{at}.deadline_ms"), format!("{d}: only a prefetch or prewrite has a deadline"))),
            None if deadline => return Err(config_err(format!("{at}.deadline_ms"), format!("missing: a {:?} needs one (ms from its arrival)", self.kind).to_lowercase())),
            None => {}
        }
        if self.write && matches!(self.kind, TaskKind::Scrub | TaskKind::Prefetch) {
            return Err(config_err(format!("{at}.write"), format!("true: a {:?} reads", self.kind).to_lowercase()));
        }
        if self.repeat && deadline {
            return Err(config_err(format!("{at}.repeat"), "true: a prefetch or prewrite moves its blocks once, before its deadline"));
        }
        Ok(())
    }
}

fn is_false(v: &bool) -> bool {
    !*v
}
fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn scan() -> String {
    "scan".into()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
/// Where a background task stands.
pub enum TaskState {
    /// Not arrived yet (`start_ms`).
    Waiting,
    /// Its blocks are wanted.
    Active,
    /// Paused: its remaining blocks are not wanted until resumed.
    Paused,
    /// Given up: its remaining blocks are no longer wanted.
    Aborted,
    /// A prefetch or prewrite whose deadline passed before its last block moved (`blocks_done` is what it moved in time).
    Expired,
    /// Every block transferred.
    Done,
}

/// A task's progress, as reported at the end of a run (or queried during one).
#[derive(Clone, Debug, Serialize)]
pub struct TaskStatus {
    /// Task name.
    pub name: String,
    /// Where it stands.
    pub state: TaskState,
    /// Blocks the task covers.
    pub blocks_total: u64,
    /// Blocks transferred so far.
    pub blocks_done: u64,
    /// When its last block was transferred, ms of simulated time (`None` until done).
    pub completed_ms: Option<f64>,
    /// When it arrived, ms of simulated time.
    pub started_ms: f64,
    /// Time from arrival until 50%, 90% and 100% of its blocks were first transferred, ms (`None` until then).
    pub time_to_pct_ms: [Option<f64>; 3],
    /// Whole passes over its blocks completed (a repeating scan counts each).
    pub passes: u64,
    /// Passes per day of the simulated time since it arrived (set at the end of the run).
    pub passes_per_day: f64,
    /// Progress over time: (ms of simulated time, blocks transferred in all passes) at every 1% of its blocks.
    pub progress: Vec<(f64, u64)>,
}

/// Shares of a task's blocks whose first-pass time is reported.
pub const PROGRESS_PCTS: [u64; 3] = [50, 90, 100];

/// Called with each run of blocks [lo, hi) newly transferred for a task, and when.
pub type TransferCallback = Box<dyn FnMut(usize, u64, u64, SimTime) + Send>;

/// The set of tasks and which block belongs to which.
pub struct Tasks {
    /// Blocks still wanted, over all tasks.
    pub wanted: Wanted,
    /// Receives every run of blocks as it is transferred: (task, lo, hi, time).
    pub on_transfer: Option<TransferCallback>,
    owner: Vec<(u64, u64, usize)>, // (lo, hi, task index), sorted, disjoint
    status: Vec<TaskStatus>,
    paused_bits: Vec<Option<Vec<(u64, u64)>>>,
    priority: Vec<u32>,
    /// Each task's direction (`[[freeblock.tasks]].write`).
    write: Vec<bool>,
    /// The directions of the tasks, reads first: what the planner plans for.
    directions: Vec<bool>,
    /// Each task's weight (priority + 1); all 1 when every priority is equal (`reweigh`).
    weight: Vec<u64>,
    repeat: Vec<bool>,
    /// Blocks transferred in all passes, by task (the progress series' value).
    moved: Vec<u64>,
    /// Some weight is not 1.
    is_weighted: bool,
}

impl Tasks {
    /// The tasks in `configs`, every block of those that start at time 0
    /// wanted; an error if a range is empty, off the disk or overlaps another.
    pub fn new(capacity: u64, configs: &[TaskConfig]) -> Result<Tasks> {
        let mut t = Tasks { wanted: Wanted::new(capacity), on_transfer: None, owner: Vec::new(), status: Vec::new(),
                            paused_bits: Vec::new(), priority: Vec::new(), write: Vec::new(), directions: Vec::new(), weight: Vec::new(), repeat: Vec::new(), moved: Vec::new(), is_weighted: false };
        for (i, c) in configs.iter().enumerate() {
            t.register(capacity, i, c)?;
            if c.start_ms <= 0.0 {
                t.start(i, SimTime::ZERO);
            }
        }
        t.reweigh();
        Ok(t)
    }

    /// Weights from the priorities: `priority + 1`, or all 1 when every priority is equal.
    fn reweigh(&mut self) {
        let equal = self.priority.iter().all(|&p| p == self.priority[0]);
        self.weight = self.priority.iter().map(|&p| if equal { 1 } else { p as u64 + 1 }).collect();
        self.is_weighted = !equal;
    }

    fn register(&mut self, capacity: u64, i: usize, c: &TaskConfig) -> Result<()> {
        let (lo, hi) = c.blocks.unwrap_or((0, capacity));
        if !(lo < hi && hi <= capacity) {
            return Err(config_err(format!("background.tasks[{i}].blocks"), format!(
                "[{lo}, {hi}) must be a non-empty range within the disk's {capacity} blocks")));
        }
        if self.owner.iter().any(|&(a, b, _)| lo < b && a < hi) {
            return Err(config_err(format!("background.tasks[{i}].blocks"), "overlaps an earlier task's blocks"));
        }
        let at = self.owner.partition_point(|o| o.0 < lo);
        self.owner.insert(at, (lo, hi, i));
        self.status.push(TaskStatus { name: c.name.clone(), state: TaskState::Waiting, blocks_total: hi - lo, blocks_done: 0, completed_ms: None,
                                      started_ms: 0.0, time_to_pct_ms: [None; 3], passes: 0, passes_per_day: 0.0, progress: Vec::new() });
        self.paused_bits.push(None);
        self.priority.push(c.priority);
        self.write.push(c.writes());
        self.directions = [false, true].into_iter().filter(|w| self.write.contains(w)).collect();
        self.repeat.push(c.repeats());
        self.moved.push(0);
        Ok(())
    }

    /// Add a task during the run (the Rust hook for a caller outside the
    /// config, e.g. the Python binding): it starts at `now`. Its weight is
    /// `priority + 1`, or 1 when every task so far has its priority.
    pub fn add(&mut self, c: &TaskConfig, now: SimTime) -> Result<usize> {
        let i = self.status.len();
        self.register(self.wanted.capacity(), i, c)?;
        self.reweigh();
        self.start(i, now);
        Ok(i)
    }

    /// A waiting task arrives at `now`: its blocks become wanted.
    pub fn start(&mut self, task: usize, now: SimTime) {
        if self.status[task].state != TaskState::Waiting {
            return;
        }
        let (lo, hi) = self.range(task);
        self.wanted.set_range(lo, hi);
        let s = &mut self.status[task];
        s.state = TaskState::Active;
        s.started_ms = now.as_ms_f64();
        s.progress.push((s.started_ms, 0));
    }

    /// Apply `action` to `task` at `now`.
    pub fn apply(&mut self, action: TaskAction, task: usize, now: SimTime) {
        match action {
            TaskAction::Start => self.start(task, now),
            TaskAction::Pause => self.pause(task),
            TaskAction::Resume => self.resume(task),
            TaskAction::Abort => self.abort(task),
            TaskAction::Expire => self.expire(task),
        }
    }

    /// Whether tasks have different priorities (blocks are weighted).
    pub fn weighted(&self) -> bool {
        self.is_weighted
    }

    /// The largest weight of any task's block.
    pub fn max_weight(&self) -> u64 {
        self.weight.iter().copied().max().unwrap_or(1)
    }

    /// The planner's value of the wanted blocks in [lo, hi): their count,
    /// each weighted by its task's priority + 1 when priorities differ.
    #[inline]
    pub fn value_range(&self, lo: u64, hi: u64) -> u64 {
        if !self.weighted() {
            return self.wanted.count_range(lo, hi);
        }
        self.owned_value(lo, hi, |_| true)
    }

    /// The weighted count of the wanted blocks in [lo, hi) of the tasks `keep` accepts.
    #[inline]
    fn owned_value(&self, lo: u64, hi: u64, keep: impl Fn(usize) -> bool) -> u64 {
        let first = self.owner.partition_point(|&(_, b, _)| b <= lo);
        self.owner[first..].iter().take_while(|o| o.0 < hi).filter(|o| keep(o.2))
            .map(|&(a, b, t)| self.wanted.count_range(lo.max(a), hi.min(b)) * self.weight[t]).sum()
    }

    /// The directions background transfers take (false: read, true: write),
    /// reads first: one, or both when some tasks read and others write.
    pub fn directions(&self) -> &[bool] {
        &self.directions
    }

    /// Tasks go both ways: a transfer moves the blocks of its own direction only.
    fn mixed(&self) -> bool {
        self.directions.len() > 1
    }

    /// [`value_range`](Self::value_range) of the blocks a transfer in
    /// direction `write` can move (all of them unless tasks go both ways).
    #[inline]
    pub fn value_range_dir(&self, lo: u64, hi: u64, write: bool) -> u64 {
        if !self.mixed() {
            return self.value_range(lo, hi);
        }
        self.owned_value(lo, hi, |t| self.write[t] == write)
    }

    /// Block `b` is wanted by a task of direction `write`.
    pub fn wanted_by(&self, b: u64, write: bool) -> bool {
        self.wanted.get(b) && (!self.mixed() || {
            let k = self.owner.partition_point(|&(_, hi, _)| hi <= b);
            self.owner.get(k).is_some_and(|&(a, _, t)| a <= b && self.write[t] == write)
        })
    }

    /// Credit the wanted blocks in [lo, hi) as transferred at `now` by a
    /// transfer in direction `write` (when tasks go both ways, only their
    /// tasks' blocks); returns how many.
    pub fn transferred(&mut self, lo: u64, hi: u64, now: SimTime, write: bool) -> u64 {
        let mut total = 0;
        let first = self.owner.partition_point(|&(_, b, _)| b <= lo);
        for k in first..self.owner.len() {
            let (a, b, t) = self.owner[k];
            if a >= hi {
                break;
            }
            if self.mixed() && self.write[t] != write {
                continue;
            }
            let (from, to) = (lo.max(a), hi.min(b));
            if let Some(cb) = &mut self.on_transfer {
                let mut i = from;
                while i < to {
                    if self.wanted.get(i) {
                        let start = i;
                        while i < to && self.wanted.get(i) {
                            i += 1;
                        }
                        cb(t, start, i, now);
                    } else {
                        i += 1;
                    }
                }
            }
            let n = self.wanted.clear_range(from, to);
            total += n;
            if n > 0 {
                self.progressed(t, n, now);
            }
        }
        total
    }

    /// Task `t` moved `n` more blocks at `now`: its first-pass milestones,
    /// progress series and, at the end of a pass, completion or the next pass.
    fn progressed(&mut self, t: usize, n: u64, now: SimTime) {
        let ms = now.as_ms_f64();
        let s = &mut self.status[t];
        let before = self.moved[t];
        self.moved[t] += n;
        let step = s.blocks_total.div_ceil(100);
        if before / step != self.moved[t] / step {
            s.progress.push((ms, self.moved[t]));
        }
        s.blocks_done += n;
        if s.passes == 0 {
            for (k, pct) in PROGRESS_PCTS.iter().enumerate() {
                if s.time_to_pct_ms[k].is_none() && s.blocks_done * 100 >= s.blocks_total * pct {
                    s.time_to_pct_ms[k] = Some(ms - s.started_ms);
                }
            }
        }
        if s.blocks_done == s.blocks_total {
            s.passes += 1;
            s.completed_ms = Some(ms);
            if self.repeat[t] {
                // The next pass wants every block again.
                s.blocks_done = 0;
                let (lo, hi) = self.range(t);
                self.wanted.set_range(lo, hi);
            } else {
                s.state = TaskState::Done;
            }
        }
    }

    /// Stop wanting a task's remaining blocks until `resume`.
    pub fn pause(&mut self, task: usize) {
        if self.status[task].state != TaskState::Active {
            return;
        }
        let (lo, hi) = self.range(task);
        let mut runs = Vec::new();
        let mut i = lo;
        while i < hi {
            if self.wanted.get(i) {
                let start = i;
                while i < hi && self.wanted.get(i) {
                    i += 1;
                }
                runs.push((start, i));
            } else {
                i += 1;
            }
        }
        for &(a, b) in &runs {
            self.wanted.clear_range(a, b);
        }
        self.paused_bits[task] = Some(runs);
        self.status[task].state = TaskState::Paused;
    }

    /// Want a paused task's remaining blocks again.
    pub fn resume(&mut self, task: usize) {
        if let Some(runs) = self.paused_bits[task].take() {
            for (a, b) in runs {
                self.wanted.set_range(a, b);
            }
            self.status[task].state = TaskState::Active;
        }
    }

    /// Give up a task: its remaining blocks are no longer wanted.
    pub fn abort(&mut self, task: usize) {
        self.give_up(task);
        if self.status[task].state != TaskState::Done {
            self.status[task].state = TaskState::Aborted;
        }
    }

    /// Its remaining blocks (paused or not) are no longer wanted.
    fn give_up(&mut self, task: usize) {
        let (lo, hi) = self.range(task);
        self.paused_bits[task] = None;
        self.wanted.clear_range(lo, hi);
    }

    /// A prefetch's or prewrite's deadline passed: unless every block moved in time, the rest are given up.
    pub fn expire(&mut self, task: usize) {
        if matches!(self.status[task].state, TaskState::Done | TaskState::Aborted) {
            return;
        }
        self.give_up(task);
        self.status[task].state = TaskState::Expired;
    }

    fn range(&self, task: usize) -> (u64, u64) {
        let &(lo, hi, _) = self.owner.iter().find(|o| o.2 == task).expect("task exists");
        (lo, hi)
    }

    /// Each task's progress, in configuration order.
    pub fn status(&self) -> &[TaskStatus] {
        &self.status
    }

    /// Each task's progress at the end of a run at `end`, passes per day filled in.
    pub fn final_status(&self, end: SimTime) -> Vec<TaskStatus> {
        let mut s = self.status.clone();
        for t in &mut s {
            let days = (end.as_ms_f64() - t.started_ms) / 86_400_000.0;
            t.passes_per_day = if days > 0.0 { t.passes as f64 / days } else { 0.0 };
        }
        s
    }
}

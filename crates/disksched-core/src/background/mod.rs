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
    Param::other("firmware_one_per_track", Ty::Bool, "false", "firmware mode: plan under the external scheduler's limits (one LBN range per opportunity: nothing on the source track, on the destination track only blocks just before the foreground read, one side of a track's logical start), as Lumb et al. 2002's Fig. 10 simulation with the one-request-per-track limitation"),
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
    Param::other("kind", Ty::Choice(&["scan", "scrub", "prefetch", "prewrite", "backup", "clean"]), "scan",
                 "scan: read (or write) every block once (or repeating); scrub: a read-verify pass that starts again when it completes; prefetch / prewrite: read / write the blocks before deadline_ms, the rest are given up then; backup: read the blocks, write each to its place in to_blocks; clean: an LFS cleaner reading the live blocks of the segments in blocks and writing them anywhere free in to_blocks (range writes)"),
    TASK_DEADLINE_MS,
    Param::other("to_blocks", Ty::List, "required for backup / clean", "backup: where the copy goes, [first, one past the last] (as many blocks as `blocks`); clean: the free segments its writes may use (at least the live blocks)"),
    TASK_SEGMENT_BLOCKS,
    TASK_LIVE_PCT,
    TASK_SHARE_PCT,
];

/// `[[freeblock.tasks]].segment_blocks`: an LFS segment (clean).
pub const TASK_SEGMENT_BLOCKS: Param = Param::int("segment_blocks", "blocks", 1.0, 1024.0, 1_048_576.0,
    "clean: blocks per segment (1024: 512 KB with 512-byte sectors, Sprite LFS's size); the cleaner writes once a segment's worth of live blocks is buffered, and its last ones");
/// `[[freeblock.tasks]].live_pct`: live blocks in the segments cleaned.
pub const TASK_LIVE_PCT: Param = Param::float("live_pct", "%", 0.0, 50.0, 100.0,
    "clean: share of the segments' blocks that are live (each block drawn independently, from the task's blocks: the same for every run)");
/// `[[freeblock.tasks]].share_pct`: the most of the background blocks a task takes.
pub const TASK_SHARE_PCT: Param = Param::float("share_pct", "%", 1.0, f64::NAN, 100.0,
    "the most of all background blocks moved so far this task may have taken while another task wants blocks; over it, its blocks are left for the others").default_text("absent: no limit");

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
    /// Firmware mode: plan under the external scheduler's one-command-per-track limits.
    #[serde(default)]
    pub firmware_one_per_track: bool,
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
            t.check(&at)?;
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
    /// Each task's blocks moved per window of `run.series_window_ms` (the
    /// run's `series`; empty without one).
    #[serde(skip)]
    pub task_windows: Vec<Vec<u64>>,
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
        for (a, b) in self.task_windows.iter_mut().zip(o.task_windows) {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
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
    /// Backup: where the copy goes; clean: the free blocks its writes may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_blocks: Option<(u64, u64)>,
    /// Clean: blocks per segment.
    #[serde(default = "default_segment_blocks", skip_serializing_if = "is_default_segment")]
    pub segment_blocks: u64,
    /// Clean: share of the segments' blocks that are live, %.
    #[serde(default = "default_live_pct", skip_serializing_if = "is_default_live")]
    pub live_pct: f64,
    /// The most of the background blocks this task may take while another task wants blocks, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_pct: Option<f64>,
}

fn default_segment_blocks() -> u64 {
    TASK_SEGMENT_BLOCKS.default as u64
}
fn is_default_segment(v: &u64) -> bool {
    *v == default_segment_blocks()
}
fn default_live_pct() -> f64 {
    TASK_LIVE_PCT.default
}
fn is_default_live(v: &f64) -> bool {
    *v == default_live_pct()
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
    /// Read the blocks, then write each to its place in `to_blocks` (a copy of a range).
    Backup,
    /// An LFS cleaner (Rosenblum & Ousterhout): read the live blocks of the
    /// segments in `blocks`, write them anywhere free in `to_blocks` (range writes).
    Clean,
}

impl Default for TaskConfig {
    /// A scan of the whole disk (the `[[freeblock.tasks]]` defaults).
    fn default() -> Self {
        TaskConfig { name: scan(), blocks: None, priority: 0, write: false, repeat: false, start_ms: 0.0, kind: TaskKind::Scan, deadline_ms: None,
                     to_blocks: None, segment_blocks: default_segment_blocks(), live_pct: default_live_pct(), share_pct: None }
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
            None if deadline => return Err(config_err(format!("{at}.deadline_ms"), format!("missing: a {} needs one (ms from its arrival)", self.kind_name()))),
            None => {}
        }
        if self.write && matches!(self.kind, TaskKind::Scrub | TaskKind::Prefetch) {
            return Err(config_err(format!("{at}.write"), format!("true: a {:?} reads", self.kind).to_lowercase()));
        }
        if self.repeat && deadline {
            return Err(config_err(format!("{at}.repeat"), "true: a prefetch or prewrite moves its blocks once, before its deadline"));
        }
        let copies = matches!(self.kind, TaskKind::Backup | TaskKind::Clean);
        match self.to_blocks {
            None if copies => return Err(config_err(format!("{at}.to_blocks"), format!("missing: a {} needs a destination [first, one past the last]", self.kind_name()))),
            Some(t) if !copies => return Err(config_err(format!("{at}.to_blocks"), format!("{t:?}: only a backup or clean has a destination"))),
            _ => {}
        }
        if copies && (self.write || self.repeat) {
            let key = if self.write { "write" } else { "repeat" };
            return Err(config_err(format!("{at}.{key}"), format!("true: a {} reads its blocks once and writes them to to_blocks", self.kind_name())));
        }
        TASK_SEGMENT_BLOCKS.check_count(at, self.segment_blocks)?;
        TASK_LIVE_PCT.check(at, self.live_pct)?;
        if let Some(s) = self.share_pct {
            TASK_SHARE_PCT.check(at, s)?;
        }
        Ok(())
    }

    /// Every key's bounds and the kind's rules (`at`: the key prefix for errors).
    pub fn check(&self, at: &str) -> Result<()> {
        TASK_PRIORITY.check_count(at, self.priority as u64)?;
        TASK_START_MS.check(at, self.start_ms)?;
        self.check_kind(at)
    }

    fn kind_name(&self) -> String {
        format!("{:?}", self.kind).to_lowercase()
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

/// A range of blocks a task owns, and the direction they move in (a backup
/// or a cleaner owns one range it reads and one it writes).
#[derive(Clone, Copy, Debug)]
struct Owned {
    lo: u64,
    hi: u64,
    task: usize,
    write: bool,
}

/// What a backup or cleaner does with the blocks it reads.
#[derive(Clone, Debug)]
enum Copying {
    /// Block `from + i`, once read, is wanted for writing at `to + i`.
    Backup { from: u64, to: u64 },
    /// The live blocks read are written anywhere free in the destination (a
    /// range write): its free blocks are wanted once a segment's worth is
    /// buffered (or the reads are done), until the buffer is empty.
    Clean {
        segment_blocks: u64,
        /// Live blocks read and not yet written.
        buffered: u64,
        /// Live blocks not yet read.
        to_read: u64,
        /// The destination's free blocks, held back while the buffer fills.
        held: Vec<(u64, u64)>,
    },
}

/// One task's state.
struct Task {
    status: TaskStatus,
    /// Its source range: wanted at arrival and at each pass's start (a
    /// cleaner's live blocks in it).
    source: (u64, u64),
    /// Clean: the share of live blocks, %.
    live_pct: f64,
    paused: Option<Vec<(u64, u64)>>,
    priority: u32,
    /// priority + 1, or 1 when every priority is equal (`reweigh`).
    weight: u64,
    repeat: bool,
    /// Blocks transferred in all passes (the progress series' value).
    moved: u64,
    /// Its blocks wanted now.
    left: u64,
    share_pct: Option<f64>,
    /// Over its share while another task wants blocks: its blocks are left alone.
    capped: bool,
    copy: Option<Copying>,
    /// Blocks moved per window of `Tasks::window_ns` (the run's series).
    windows: Vec<u64>,
}

/// The set of tasks and which block belongs to which.
pub struct Tasks {
    /// Blocks still wanted, over all tasks.
    pub wanted: Wanted,
    /// Receives every run of blocks as it is transferred: (task, lo, hi, time).
    pub on_transfer: Option<TransferCallback>,
    owner: Vec<Owned>, // sorted, disjoint
    tasks: Vec<Task>,
    /// The directions the tasks' blocks move in, reads first: what the planner plans for.
    directions: Vec<bool>,
    /// Blocks are valued by more than their count (weights, shares, a cleaner's buffer).
    valued: bool,
    /// Some task has a share.
    shares: bool,
    /// Blocks moved by all tasks.
    moved_total: u64,
    /// Ranges whose wanted bits changed other than by a transfer's crediting
    /// (a backup's copies, a cleaner's buffer, a pass's start): see `take_changes`.
    changes: Vec<(u64, u64)>,
    /// Keep blocks moved per window of this length (`run.series_window_ms`).
    window_ns: Option<u64>,
}

impl Tasks {
    /// The tasks in `configs`, every block of those that start at time 0
    /// wanted; an error if a range is empty, off the disk or overlaps another.
    pub fn new(capacity: u64, configs: &[TaskConfig]) -> Result<Tasks> {
        let mut t = Tasks { wanted: Wanted::new(capacity), on_transfer: None, owner: Vec::new(), tasks: Vec::new(), directions: Vec::new(),
                            valued: false, shares: false, moved_total: 0, changes: Vec::new(), window_ns: None };
        for (i, c) in configs.iter().enumerate() {
            t.register(capacity, i, c)?;
            if c.start_ms <= 0.0 {
                t.start(i, SimTime::ZERO);
            }
        }
        t.reweigh();
        t.changes.clear();
        Ok(t)
    }

    /// Keep each task's blocks moved per window of `window_ns` (`series`).
    pub fn keep_windows(&mut self, window_ns: u64) {
        self.window_ns = Some(window_ns.max(1));
    }

    /// Weights from the priorities: `priority + 1`, or all 1 when every priority is equal.
    fn reweigh(&mut self) {
        let p0 = self.tasks[0].priority;
        let equal = self.tasks.iter().all(|t| t.priority == p0);
        for t in &mut self.tasks {
            t.weight = if equal { 1 } else { t.priority as u64 + 1 };
        }
        self.shares = self.tasks.iter().any(|t| t.share_pct.is_some());
        self.valued = !equal || self.shares || self.tasks.iter().any(|t| matches!(t.copy, Some(Copying::Clean { .. })));
    }

    fn register(&mut self, capacity: u64, i: usize, c: &TaskConfig) -> Result<()> {
        let within = |key: &str, (lo, hi): (u64, u64), owner: &[Owned]| {
            if !(lo < hi && hi <= capacity) {
                return Err(config_err(format!("background.tasks[{i}].{key}"), format!(
                    "[{lo}, {hi}) must be a non-empty range within the disk's {capacity} blocks")));
            }
            if owner.iter().any(|o| lo < o.hi && o.lo < hi) {
                return Err(config_err(format!("background.tasks[{i}].{key}"), format!("[{lo}, {hi}) overlaps an earlier task's blocks")));
            }
            Ok((lo, hi))
        };
        let (lo, hi) = within("blocks", c.blocks.unwrap_or((0, capacity)), &self.owner)?;
        let mut owned = vec![Owned { lo, hi, task: i, write: c.writes() }];
        let mut total = hi - lo;
        let copy = match (c.kind, c.to_blocks) {
            (TaskKind::Backup | TaskKind::Clean, Some(to)) => {
                let (a, b) = within("to_blocks", to, &[self.owner.as_slice(), &owned].concat())?;
                owned.push(Owned { lo: a, hi: b, task: i, write: true });
                if c.kind == TaskKind::Backup {
                    if b - a != hi - lo {
                        return Err(config_err(format!("background.tasks[{i}].to_blocks"), format!(
                            "[{a}, {b}) holds {} blocks (expected as many as blocks [{lo}, {hi}): {})", b - a, hi - lo)));
                    }
                    total = 2 * (hi - lo);
                    Some(Copying::Backup { from: lo, to: a })
                } else {
                    let live = live_runs(lo, hi, c.live_pct).map(|(x, y)| y - x).sum::<u64>();
                    if live == 0 {
                        return Err(config_err(format!("background.tasks[{i}].live_pct"), format!(
                            "{}: no block of [{lo}, {hi}) is live (expected a larger live_pct or more blocks)", c.live_pct)));
                    }
                    if live > b - a {
                        return Err(config_err(format!("background.tasks[{i}].to_blocks"), format!(
                            "[{a}, {b}) holds {} blocks (expected at least the {live} live blocks of blocks [{lo}, {hi}))", b - a)));
                    }
                    total = 2 * live;
                    Some(Copying::Clean { segment_blocks: c.segment_blocks, buffered: 0, to_read: live, held: vec![(a, b)] })
                }
            }
            _ => None,
        };
        for o in owned {
            let at = self.owner.partition_point(|x| x.lo < o.lo);
            self.owner.insert(at, o);
        }
        self.tasks.push(Task {
            status: TaskStatus { name: c.name.clone(), state: TaskState::Waiting, blocks_total: total, blocks_done: 0, completed_ms: None,
                                 started_ms: 0.0, time_to_pct_ms: [None; 3], passes: 0, passes_per_day: 0.0, progress: Vec::new() },
            source: (lo, hi), live_pct: c.live_pct, paused: None, priority: c.priority, weight: 1, repeat: c.repeats(), moved: 0, left: 0,
            share_pct: c.share_pct, capped: false, copy, windows: Vec::new(),
        });
        self.directions = [false, true].into_iter().filter(|&w| self.owner.iter().any(|o| o.write == w)).collect();
        Ok(())
    }

    /// Add a task during the run (the Rust hook for a caller outside the
    /// config, e.g. the Python binding): it starts at `now`. Its weight is
    /// `priority + 1`, or 1 when every task so far has its priority.
    pub fn add(&mut self, c: &TaskConfig, now: SimTime) -> Result<usize> {
        let i = self.tasks.len();
        self.register(self.wanted.capacity(), i, c)?;
        self.reweigh();
        self.start(i, now);
        Ok(i)
    }

    /// Blocks [lo, hi) of task `t` become wanted.
    fn want(&mut self, t: usize, lo: u64, hi: u64) {
        self.tasks[t].left += self.wanted.set_range(lo, hi);
        self.changes.push((lo, hi));
    }

    /// Blocks [lo, hi) of task `t` are no longer wanted.
    fn unwant(&mut self, t: usize, lo: u64, hi: u64) {
        self.tasks[t].left -= self.wanted.clear_range(lo, hi);
        self.changes.push((lo, hi));
    }

    /// The ranges whose wanted bits changed other than by crediting a
    /// transfer since the last call (a planner's index of wanted blocks
    /// follows them).
    pub fn take_changes(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.changes)
    }

    /// Task `t`'s source blocks wanted at the start of a pass (a cleaner's live ones).
    fn want_source(&mut self, t: usize) {
        let (lo, hi) = self.tasks[t].source;
        if matches!(self.tasks[t].copy, Some(Copying::Clean { .. })) {
            for (a, b) in live_runs(lo, hi, self.tasks[t].live_pct).collect::<Vec<_>>() {
                self.want(t, a, b);
            }
        } else {
            self.want(t, lo, hi);
        }
    }

    /// A waiting task arrives at `now`: its blocks become wanted.
    pub fn start(&mut self, task: usize, now: SimTime) {
        if self.tasks[task].status.state != TaskState::Waiting {
            return;
        }
        self.want_source(task);
        let s = &mut self.tasks[task].status;
        s.state = TaskState::Active;
        s.started_ms = now.as_ms_f64();
        s.progress.push((s.started_ms, 0));
        self.update_caps();
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

    /// The largest weight of any task's block.
    pub fn max_weight(&self) -> u64 {
        self.tasks.iter().map(|t| t.weight).max().unwrap_or(1)
    }

    /// The planner's value of the wanted blocks in [lo, hi): their count,
    /// each weighted by its task's priority + 1 when priorities differ
    /// (none of a task over its share; a cleaner's writes no more than its buffer).
    #[inline]
    pub fn value_range(&self, lo: u64, hi: u64) -> u64 {
        if !self.valued {
            return self.wanted.count_range(lo, hi);
        }
        self.owned_value(lo, hi, |_| true)
    }

    /// The value of the wanted blocks in [lo, hi) of the owned ranges `keep` accepts.
    #[inline]
    fn owned_value(&self, lo: u64, hi: u64, keep: impl Fn(&Owned) -> bool) -> u64 {
        let first = self.owner.partition_point(|o| o.hi <= lo);
        self.owner[first..].iter().take_while(|o| o.lo < hi).filter(|o| keep(o)).map(|o| {
            let t = &self.tasks[o.task];
            if t.capped {
                return 0;
            }
            let n = self.wanted.count_range(lo.max(o.lo), hi.min(o.hi));
            let n = match &t.copy {
                Some(Copying::Clean { buffered, .. }) if o.write => n.min(*buffered),
                _ => n,
            };
            n * t.weight
        }).sum()
    }

    /// The directions background transfers take (false: read, true: write),
    /// reads first: one, or both when some blocks are read and others written.
    pub fn directions(&self) -> &[bool] {
        &self.directions
    }

    /// Blocks go both ways: a transfer moves the blocks of its own direction only.
    fn mixed(&self) -> bool {
        self.directions.len() > 1
    }

    /// [`value_range`](Self::value_range) of the blocks a transfer in
    /// direction `write` can move (all of them unless blocks go both ways).
    #[inline]
    pub fn value_range_dir(&self, lo: u64, hi: u64, write: bool) -> u64 {
        if !self.mixed() {
            return self.value_range(lo, hi);
        }
        self.owned_value(lo, hi, |o| o.write == write)
    }

    /// Block `b` is wanted by a transfer in direction `write` (and its task is not over its share).
    pub fn wanted_by(&self, b: u64, write: bool) -> bool {
        self.wanted.get(b) && (!self.mixed() && !self.shares || {
            let k = self.owner.partition_point(|o| o.hi <= b);
            self.owner.get(k).is_some_and(|o| o.lo <= b && (!self.mixed() || o.write == write) && !self.tasks[o.task].capped)
        })
    }

    /// The value `owned_value` gives blocks of the highest-priority tasks
    /// that want blocks (and are not over their share) in direction `write`:
    /// what idle time serves first. Equal priorities and no shares: every wanted block.
    pub fn idle_value(&self, lo: u64, hi: u64, write: bool) -> u64 {
        if !self.valued {
            return self.value_range_dir(lo, hi, write);
        }
        let top = self.idle_weight();
        self.owned_value(lo, hi, |o| (!self.mixed() || o.write == write) && self.tasks[o.task].weight == top)
    }

    /// The ranges holding the blocks `idle_value` counts (`None`: every wanted block counts).
    pub fn idle_ranges(&self) -> Option<Vec<(u64, u64)>> {
        if !self.valued {
            return None;
        }
        let top = self.idle_weight();
        Some(self.owner.iter().filter(|o| self.tasks[o.task].weight == top && !self.tasks[o.task].capped).map(|o| (o.lo, o.hi)).collect())
    }

    /// The weight of the tasks idle time serves first: the largest of those
    /// that want blocks and are not over their share.
    fn idle_weight(&self) -> u64 {
        self.tasks.iter().filter(|t| t.left > 0 && !t.capped).map(|t| t.weight).max().unwrap_or(0)
    }

    /// Credit the wanted blocks in [lo, hi) as transferred at `now` by a
    /// transfer in direction `write` (when blocks go both ways, only those
    /// of that direction; none of a task over its share; a cleaner's writes
    /// no more than it has buffered); returns how many.
    pub fn transferred(&mut self, lo: u64, hi: u64, now: SimTime, write: bool) -> u64 {
        let mut total = 0;
        let mut k = self.owner.partition_point(|o| o.hi <= lo);
        while k < self.owner.len() && self.owner[k].lo < hi {
            let o = self.owner[k];
            k += 1;
            let t = o.task;
            if (self.mixed() && o.write != write) || self.tasks[t].capped {
                continue;
            }
            let (from, to) = (lo.max(o.lo), hi.min(o.hi));
            let limit = match &self.tasks[t].copy {
                Some(Copying::Clean { buffered, .. }) if o.write => *buffered,
                _ => u64::MAX,
            };
            let n = if self.on_transfer.is_none() && self.tasks[t].copy.is_none() {
                let n = self.wanted.clear_range(from, to);
                self.tasks[t].left -= n;
                n
            } else {
                let runs = self.wanted_runs(from, to, limit);
                let mut n = 0;
                for &(a, b) in &runs {
                    if let Some(cb) = &mut self.on_transfer {
                        cb(t, a, b, now);
                    }
                    self.tasks[t].left -= self.wanted.clear_range(a, b);
                    n += b - a;
                }
                self.copied(t, o.write, &runs, n);
                n
            };
            total += n;
            if n > 0 {
                self.progressed(t, n, now);
            }
        }
        total
    }

    /// The runs of wanted blocks in [lo, hi), at most `limit` blocks in all.
    fn wanted_runs(&self, lo: u64, hi: u64, mut limit: u64) -> Vec<(u64, u64)> {
        let mut runs = Vec::new();
        let mut i = lo;
        while i < hi && limit > 0 {
            if self.wanted.get(i) {
                let start = i;
                while i < hi && limit > 0 && self.wanted.get(i) {
                    i += 1;
                    limit -= 1;
                }
                runs.push((start, i));
            } else {
                i += 1;
            }
        }
        runs
    }

    /// A backup's or cleaner's consequences of moving `runs` (`n` blocks) in direction `write`.
    fn copied(&mut self, t: usize, write: bool, runs: &[(u64, u64)], n: u64) {
        match &mut self.tasks[t].copy {
            // A block read is wanted for writing at its place in the copy.
            Some(Copying::Backup { from, to }) if !write => {
                let (from, to) = (*from, *to);
                for &(a, b) in runs {
                    self.want(t, a - from + to, b - from + to);
                }
            }
            None | Some(Copying::Backup { .. }) => {}
            Some(Copying::Clean { segment_blocks, buffered, to_read, held }) => {
                let was_writing = held.is_empty();
                if write {
                    *buffered -= n;
                } else {
                    *buffered += n;
                    *to_read -= n;
                }
                // Write once a segment's worth is buffered (or the last live blocks are); stop when it is empty.
                let writing = *buffered > 0 && (was_writing || *buffered >= *segment_blocks || *to_read == 0);
                if writing && !was_writing {
                    for (a, b) in std::mem::take(held) {
                        self.want(t, a, b);
                    }
                } else if !writing && was_writing {
                    let dest = self.owner.iter().find(|o| o.task == t && o.write).map(|o| (o.lo, o.hi)).expect("a cleaner's destination");
                    let free = self.wanted_runs(dest.0, dest.1, u64::MAX);
                    for &(a, b) in &free {
                        self.unwant(t, a, b);
                    }
                    if let Some(Copying::Clean { held, .. }) = &mut self.tasks[t].copy {
                        *held = free;
                    }
                }
            }
        }
    }

    /// Task `t` moved `n` more blocks at `now`: its first-pass milestones,
    /// progress series and, at the end of a pass, completion or the next pass.
    fn progressed(&mut self, t: usize, n: u64, now: SimTime) {
        let ms = now.as_ms_f64();
        self.moved_total += n;
        let task = &mut self.tasks[t];
        if let Some(w) = self.window_ns {
            let k = (now.0 / w) as usize;
            // Past the series' row bound the run's series is refused anyway (`Metrics::take_series`).
            if task.windows.len() <= k && k < crate::metrics::MAX_SERIES_ROWS as usize {
                task.windows.resize(k + 1, 0);
            }
            if let Some(c) = task.windows.get_mut(k) {
                *c += n;
            }
        }
        let s = &mut task.status;
        let before = task.moved;
        task.moved += n;
        let step = s.blocks_total.div_ceil(100);
        if before / step != task.moved / step {
            s.progress.push((ms, task.moved));
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
            if task.repeat {
                // The next pass wants every block again.
                s.blocks_done = 0;
                self.want_source(t);
            } else {
                s.state = TaskState::Done;
            }
        }
        self.update_caps();
    }

    /// A task with a share is capped while it has taken more than its share
    /// of the blocks moved and a task within its own share wants blocks
    /// (so the tasks that want blocks are never all capped).
    fn update_caps(&mut self) {
        if !self.shares {
            return;
        }
        let total = self.moved_total;
        // Called on every transfer's credit: no allocation.
        let over = |t: &Task| t.share_pct.is_some_and(|s| total > 0 && t.moved as f64 * 100.0 > s * total as f64);
        let within_wanting = self.tasks.iter().any(|t| t.left > 0 && !over(t));
        for t in &mut self.tasks {
            t.capped = over(t) && within_wanting;
        }
    }

    /// Every range task `t` owns.
    fn ranges(&self, t: usize) -> Vec<(u64, u64)> {
        self.owner.iter().filter(|o| o.task == t).map(|o| (o.lo, o.hi)).collect()
    }

    /// Stop wanting a task's remaining blocks until `resume`.
    pub fn pause(&mut self, task: usize) {
        if self.tasks[task].status.state != TaskState::Active {
            return;
        }
        let runs: Vec<_> = self.ranges(task).into_iter().flat_map(|(lo, hi)| self.wanted_runs(lo, hi, u64::MAX)).collect();
        for &(a, b) in &runs {
            self.unwant(task, a, b);
        }
        self.tasks[task].paused = Some(runs);
        self.tasks[task].status.state = TaskState::Paused;
        self.update_caps();
    }

    /// Want a paused task's remaining blocks again.
    pub fn resume(&mut self, task: usize) {
        if let Some(runs) = self.tasks[task].paused.take() {
            for (a, b) in runs {
                self.want(task, a, b);
            }
            self.tasks[task].status.state = TaskState::Active;
            self.update_caps();
        }
    }

    /// Give up a task: its remaining blocks are no longer wanted.
    pub fn abort(&mut self, task: usize) {
        self.give_up(task);
        if self.tasks[task].status.state != TaskState::Done {
            self.tasks[task].status.state = TaskState::Aborted;
        }
    }

    /// Its remaining blocks (paused, held or wanted) are no longer wanted.
    fn give_up(&mut self, task: usize) {
        self.tasks[task].paused = None;
        if let Some(Copying::Clean { held, .. }) = &mut self.tasks[task].copy {
            held.clear();
        }
        for (lo, hi) in self.ranges(task) {
            self.unwant(task, lo, hi);
        }
        self.update_caps();
    }

    /// A prefetch's or prewrite's deadline passed: unless every block moved in time, the rest are given up.
    pub fn expire(&mut self, task: usize) {
        if matches!(self.tasks[task].status.state, TaskState::Done | TaskState::Aborted) {
            return;
        }
        self.give_up(task);
        self.tasks[task].status.state = TaskState::Expired;
    }

    /// Each task's progress, in configuration order.
    pub fn status(&self) -> Vec<&TaskStatus> {
        self.tasks.iter().map(|t| &t.status).collect()
    }

    /// Each task's progress at the end of a run at `end`, passes per day filled in.
    pub fn final_status(&self, end: SimTime) -> Vec<TaskStatus> {
        self.tasks.iter().map(|t| {
            let mut s = t.status.clone();
            let days = (end.as_ms_f64() - s.started_ms) / 86_400_000.0;
            s.passes_per_day = if days > 0.0 { s.passes as f64 / days } else { 0.0 };
            s
        }).collect()
    }

    /// Each task's blocks moved per window (`keep_windows`), in configuration order.
    pub fn windows(&self) -> Vec<Vec<u64>> {
        self.tasks.iter().map(|t| t.windows.clone()).collect()
    }
}

/// The live blocks of a cleaner's segments [lo, hi) as runs: each block live
/// with probability `live_pct` %, drawn from a stream seeded by the range
/// (the same blocks in every run of the config).
fn live_runs(lo: u64, hi: u64, live_pct: f64) -> impl Iterator<Item = (u64, u64)> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(lo.rotate_left(32) ^ hi);
    let p = live_pct / 100.0;
    let mut b = lo;
    std::iter::from_fn(move || {
        // One draw per block: a run ends at the first dead block, which is skipped.
        while b < hi {
            let start = b;
            while b < hi && rng.gen_bool(p) {
                b += 1;
            }
            let end = b;
            b += 1;
            if end > start {
                return Some((start, end));
            }
        }
        None
    })
}

//! `[freeblock]` and its tasks and events as configured: the declared
//! tunables (unit, bounds, default) and their checks.

use crate::error::{config_err, Result};
use crate::schema::{Param, Ty};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

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
    Param::other("planner", Ty::Str, "greedy", "the planner (`background::REGISTRY`): `greedy`"),
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
        if !super::REGISTRY.iter().any(|p| p.name == self.planner) {
            return Err(config_err("freeblock.planner", format!("'{}' (expected one of: {})", self.planner,
                super::REGISTRY.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))));
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

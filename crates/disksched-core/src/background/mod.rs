//! Background work for freeblock scheduling (Lumb et al., FAST 2002):
//! tasks that want a set of blocks transferred in no particular order, and
//! the bookkeeping of which blocks are still wanted.
//!
//! A task is a set of blocks (a range, or the whole disk) with a priority.
//! Tasks may be paused, resumed and aborted while the simulation runs; a
//! block is credited to exactly one task, once.

pub mod external;
pub mod freeblock;
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
}

impl Wanted {
    /// No block wanted, on a disk of `capacity` LBNs.
    pub fn new(capacity: u64) -> Wanted {
        Wanted { bits: vec![0; capacity.div_ceil(64) as usize], count: 0 }
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
    "external mode: commands kept at the drive (2: the next one's processing and bus transfer overlap the media access; 1: none; Fig. 4); host.queue_threshold must equal it");

/// Declarations of the `[freeblock]` keys.
pub const FREEBLOCK_PARAMS: &[Param] = &[
    Param::other("mode", Ty::Choice(&["firmware", "external"]), "firmware",
        "`firmware`: the planner's model is the drive; `external`: a host-side scheduler with its own model (`noise`), two commands at the drive"),
    SEEK_CONSERVATISM_MS,
    Param::other("plan", Ty::Bool, "true", "false: plan no background work (the run a foreground's slowdown is measured against)"),
    Param::other("noise", Ty::Table, "", "external mode: `[freeblock.noise]`"),
    Param::other("belief", Ty::Table, "absent: exact", "external mode: the external scheduler's model of the drive, `[freeblock.belief]` (keys as `host.belief`; also the host scheduler's unless `[host.belief]` is given)"),
    Param::other("one_per_track", Ty::Bool, "true", "external mode: no background command of its own on the source or destination track (a second command on a track can trigger the drive's prefetch; section 4.3)"),
    DRIVE_QUEUE_DEPTH,
    SEARCH_TRACKS,
    Param::other("idle", Ty::Bool, "true", "also read background blocks when the drive is idle (firmware mode)"),
    Param::other("tasks", Ty::List, "one scan of the whole disk", "background tasks: `[[freeblock.tasks]]`"),
];

/// Declarations of the `[[freeblock.tasks]]` keys.
pub const TASK_PARAMS: &[Param] = &[
    Param::other("name", Ty::Str, "scan", "task name (for reports)"),
    Param::other("blocks", Ty::List, "absent: the whole disk", "[first block, one past the last], within the disk"),
    Param::int("priority", "", 0.0, 0.0, u32::MAX as f64, "higher runs first when tasks want the same block (reported only)"),
    Param::other("write", Ty::Bool, "false", "writes instead of reads (a cleaner writing segments)"),
];

/// `[freeblock]` section of a run config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreeblockConfig {
    /// `firmware`: the planner's model is the drive itself. `external`: a
    /// host-side scheduler (Lumb et al. 2002): its model differs from the
    /// drive (`noise`), it keeps two commands at the drive, and it sends
    /// background work as commands of its own or merged into the next
    /// foreground read.
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
    vec![TaskConfig { name: scan(), blocks: None, priority: 0, write: false }]
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
            if self.idle {
                return Err(config_err("freeblock.idle", "idle-time reads are modelled in firmware mode only (set false)"));
            }
        }
        SEARCH_TRACKS.check_count("freeblock", self.search_tracks as u64)?;
        if self.tasks.is_empty() {
            return Err(config_err("freeblock.tasks", "at least one task is required"));
        }
        Ok(())
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
    /// External mode only: commands, lateness, prediction error, noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<external::ExternalSummary>,
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
    /// Higher runs first when tasks want the same block (reported only; one owner per block).
    #[serde(default)]
    pub priority: u32,
    /// Writes instead of reads (e.g. a cleaner writing segments).
    #[serde(default)]
    pub write: bool,
}

fn scan() -> String {
    "scan".into()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
/// Where a background task stands.
pub enum TaskState {
    /// Its blocks are wanted.
    Active,
    /// Paused: its remaining blocks are not wanted until resumed.
    Paused,
    /// Given up: its remaining blocks are no longer wanted.
    Aborted,
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
}

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
}

impl Tasks {
    /// The tasks in `configs`, every block of theirs wanted; an error if a range is empty, off the disk or overlaps another.
    pub fn new(capacity: u64, configs: &[TaskConfig]) -> Result<Tasks> {
        let mut wanted = Wanted::new(capacity);
        let mut owner = Vec::new();
        let mut status = Vec::new();
        for (i, c) in configs.iter().enumerate() {
            let (lo, hi) = c.blocks.unwrap_or((0, capacity));
            if !(lo < hi && hi <= capacity) {
                return Err(config_err(format!("background.tasks[{i}].blocks"), format!(
                    "[{lo}, {hi}) must be a non-empty range within the disk's {capacity} blocks")));
            }
            if owner.iter().any(|&(a, b, _)| lo < b && a < hi) {
                return Err(config_err(format!("background.tasks[{i}].blocks"), "overlaps an earlier task's blocks"));
            }
            wanted.set_range(lo, hi);
            owner.push((lo, hi, i));
            status.push(TaskStatus { name: c.name.clone(), state: TaskState::Active, blocks_total: hi - lo, blocks_done: 0, completed_ms: None });
        }
        owner.sort_unstable();
        Ok(Tasks { wanted, on_transfer: None, owner, paused_bits: vec![None; configs.len()], status })
    }

    /// Credit the wanted blocks in [lo, hi) as transferred at `now`; returns how many.
    pub fn transferred(&mut self, lo: u64, hi: u64, now: SimTime) -> u64 {
        let mut total = 0;
        let first = self.owner.partition_point(|&(_, b, _)| b <= lo);
        for k in first..self.owner.len() {
            let (a, b, t) = self.owner[k];
            if a >= hi {
                break;
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
            let s = &mut self.status[t];
            s.blocks_done += n;
            total += n;
            if n > 0 && s.blocks_done == s.blocks_total {
                s.state = TaskState::Done;
                s.completed_ms = Some(now.as_ms_f64());
            }
        }
        total
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
        let (lo, hi) = self.range(task);
        self.paused_bits[task] = None;
        self.wanted.clear_range(lo, hi);
        if self.status[task].state != TaskState::Done {
            self.status[task].state = TaskState::Aborted;
        }
    }

    fn range(&self, task: usize) -> (u64, u64) {
        let &(lo, hi, _) = self.owner.iter().find(|o| o.2 == task).expect("task exists");
        (lo, hi)
    }

    /// Each task's progress, in configuration order.
    pub fn status(&self) -> &[TaskStatus] {
        &self.status
    }
}

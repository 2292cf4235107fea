//! The task engine: tasks arrive, are paused, resumed, aborted or expire;
//! each transferred block is credited to exactly one task, once.

use super::{TaskAction, TaskConfig, TaskKind, Wanted};
use crate::error::{config_err, Result};
use crate::time::SimTime;
use serde::Serialize;

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

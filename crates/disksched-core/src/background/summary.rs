//! What a run's background work reports (`FreeblockSummary`).

use super::{external, TaskState, TaskStatus};
use serde::Serialize;

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

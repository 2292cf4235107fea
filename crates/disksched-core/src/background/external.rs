//! Freeblock scheduling outside the drive (Lumb, Schindler & Ganger, FAST
//! 2002, sections 3-4): the host's foreground scheduler and the freeblock
//! planner work from a model of the drive (the belief), the drive is the
//! truth with the noise of `disk::noisy`, and the host keeps two commands at
//! the drive, one in service and one queued, so that the queued command's
//! processing and bus transfer overlap the other's media access and the
//! drive never reorders them.
//!
//! With two commands at the drive, a command is issued when the command two
//! places ahead of it completes; its mechanical work starts when the
//! mechanism frees or once it is processed, whichever is later. A
//! background command rides just ahead of the foreground request it was
//! planned for: it is issued in that request's place and the request follows
//! when the command before it completes, exactly the order of the paper's
//! dispatch queue (fb1, fore1, fb2, fore2 ...). Blocks are credited when
//! their command completes at the drive.
//!
//! Honest accounting: the truth decides whether the foreground request still
//! meets its sector. A foreground request whose media access ends a
//! half-revolution or more later (relative to when its command could start)
//! than the host predicted was late; late requests are counted separately
//! for those that had background work ahead of them and those that had none
//! (noise alone). The distribution of head-time prediction errors (actual
//! minus predicted, as in the paper's Figure 7) is kept for the latter.

use super::planner::{Background, Planner, Visit};
use super::Tasks;
use crate::disk::noisy::{ErrorClass, NoiseConfig, NoiseStats, NoisyTruth};
use crate::disk::{Access, DiskModel, Drive, HeadState, Service, TrackPiece};
use crate::time::SimTime;
use serde::Serialize;

/// Width and extent of the prediction-error histogram.
const ERR_BIN_US: f64 = 50.0;
const ERR_FIRST_US: f64 = -10_000.0;
const ERR_BINS: usize = 400;

/// External-mode results of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExternalSummary {
    /// Background commands of their own, and background reads prepended to a foreground read.
    pub background_commands: u64,
    /// Background reads prepended to a foreground read.
    pub merged_reads: u64,
    /// Wanted blocks each kind delivered.
    pub command_blocks: u64,
    /// Wanted blocks the merged reads delivered.
    pub merged_blocks: u64,
    /// Plans the host's exact model rejected (the foreground command, issued
    /// behind the background one, would start too late) before sending them.
    pub plans_rejected: u64,
    /// Foreground requests with background work ahead of them, and those late.
    pub requests_after_background: u64,
    /// Of those with background work ahead, the late ones.
    pub late_after_background: u64,
    /// `late_after_background / requests_after_background` (0 when none).
    pub late_fraction_after_background: f64,
    /// Foreground requests with nothing ahead, and those late (noise alone).
    pub requests_direct: u64,
    /// Of those with nothing ahead, the late ones.
    pub late_direct: u64,
    /// `late_direct / requests_direct` (0 when none).
    pub late_fraction_direct: f64,
    /// Head-time prediction error (actual - predicted) of the direct
    /// requests: shares within 50 us, one revolution longer / shorter (+-150 us).
    pub error_within_50us: f64,
    /// Share of errors within 150 us (the paper's measure for 40 KB reads).
    pub error_within_150us: f64,
    /// Share of errors within 150 us of one revolution longer.
    pub error_one_rev_longer: f64,
    /// Share of errors within 150 us of one revolution shorter.
    pub error_one_rev_shorter: f64,
    /// Histogram: `error_counts[i]` counts errors in [first + i*bin, first + (i+1)*bin) us; the end bins take the tails.
    pub error_bin_us: f64,
    /// Lower edge of the histogram's first bin, us.
    pub error_first_us: f64,
    /// Count of errors per bin.
    pub error_counts: Vec<u64>,
    /// What the drive's noise did.
    pub noise: NoiseStats,
}

impl ExternalSummary {
    /// Fold in another disk's (an array: one external scheduler per disk).
    /// Counts and the error histogram add up; the late fractions and error
    /// shares are recomputed over both disks' requests; the noise statistics
    /// merge as `NoiseStats::merge`.
    pub fn merge(&mut self, o: &ExternalSummary) {
        let (n, m) = (self.requests_direct as f64, o.requests_direct as f64);
        let shares = |a: f64, b: f64| if n + m > 0.0 { (a * n + b * m) / (n + m) } else { 0.0 };
        self.error_within_50us = shares(self.error_within_50us, o.error_within_50us);
        self.error_within_150us = shares(self.error_within_150us, o.error_within_150us);
        self.error_one_rev_longer = shares(self.error_one_rev_longer, o.error_one_rev_longer);
        self.error_one_rev_shorter = shares(self.error_one_rev_shorter, o.error_one_rev_shorter);
        self.background_commands += o.background_commands;
        self.merged_reads += o.merged_reads;
        self.command_blocks += o.command_blocks;
        self.merged_blocks += o.merged_blocks;
        self.plans_rejected += o.plans_rejected;
        self.requests_after_background += o.requests_after_background;
        self.late_after_background += o.late_after_background;
        self.requests_direct += o.requests_direct;
        self.late_direct += o.late_direct;
        let share = |k: u64, of: u64| if of > 0 { k as f64 / of as f64 } else { 0.0 };
        self.late_fraction_after_background = share(self.late_after_background, self.requests_after_background);
        self.late_fraction_direct = share(self.late_direct, self.requests_direct);
        for (a, b) in self.error_counts.iter_mut().zip(&o.error_counts) {
            *a += b;
        }
        self.noise.merge(&o.noise);
    }
}

/// The foreground request the drive is about to serve.
#[derive(Clone, Copy, Debug)]
pub struct Foreground {
    /// First LBN.
    pub lbn: u64,
    /// Length, blocks.
    pub blocks: u32,
    /// A write.
    pub is_write: bool,
    /// Cylinder of its first sector.
    pub cylinder: u32,
    /// Head of its first sector.
    pub head: u32,
    /// When the host dispatched it (it had it ready from then).
    pub ready: SimTime,
}

/// A predicted command: when its mechanical work starts, its media access,
/// its completion, and where the heads end.
#[derive(Clone, Copy, Debug)]
struct Predicted {
    start: u64,
    media_start: u64,
    media_end: u64,
    done: u64,
    end: HeadState,
}

/// Freeblock scheduling from the host (see the module doc): the host's belief, the noisy drive and two commands at the drive.
pub struct External {
    truth: NoisyTruth,
    model: std::sync::Arc<DiskModel>,
    /// Completion times of the last two commands served, oldest first.
    done: [u64; 2],
    /// The host's belief: heads and mechanism-free time after the last
    /// command served, and when it is predicted to complete.
    belief: HeadState,
    belief_done: u64,
    /// The last completion the host observed (its rotational re-synchronisation).
    synced: SimTime,
    rev_ns: u64,
    sum: ExternalSummary,
    pieces: Vec<TrackPiece>,
    /// Commands kept at the drive: 2 (the paper's) or 1 (no overlap).
    depth: u32,
}

impl External {
    /// An external scheduler whose belief of the drive is `model`, the truth
    /// disturbed by `noise` from `seed`'s random stream, two commands at the drive.
    pub fn new(model: std::sync::Arc<DiskModel>, noise: &NoiseConfig, seed: u64) -> External {
        Self::with_depth(model, noise, seed, 2)
    }

    /// As `new`, keeping `depth` (1 or 2) commands at the drive.
    pub fn with_depth(model: std::sync::Arc<DiskModel>, noise: &NoiseConfig, seed: u64, depth: u32) -> External {
        let rev_ns = model.mech.revolution_ns();
        External {
            truth: NoisyTruth::new(noise, seed, rev_ns),
            model,
            done: [0; 2],
            belief: HeadState::default(),
            belief_done: 0,
            synced: SimTime::ZERO,
            rev_ns,
            sum: ExternalSummary { error_counts: vec![0; ERR_BINS], error_bin_us: ERR_BIN_US, error_first_us: ERR_FIRST_US, ..Default::default() },
            pieces: Vec::with_capacity(4),
            depth,
        }
    }

    /// When a command that became ready at `ready` is issued: once the
    /// command `depth` places ahead of it has completed.
    fn issue_at(&self, ready: u64) -> u64 {
        ready.max(if self.depth >= 2 { self.done[0] } else { self.done[1] })
    }

    /// The belief's model of the drive.
    pub fn model(&self) -> &std::sync::Arc<DiskModel> {
        &self.model
    }

    /// The host's belief of the heads after the last command it sent.
    pub fn belief(&self) -> HeadState {
        self.belief
    }

    /// The host saw the last command served complete at `now`: it moves its
    /// belief by the difference, keeping the rotational offset the drive
    /// showed (the paper's re-synchronisation after each request).
    pub fn observed(&mut self, now: SimTime) {
        let c = now.0 as i64 - self.belief_done as i64;
        self.belief.time = SimTime(self.belief.time.0.saturating_add_signed(c));
        self.belief_done = now.0;
        self.synced = now;
    }

    /// The host's prediction of one command issued at `issue` from `from`
    /// (its model has no buffer cache: every command is a media access).
    fn predict(&mut self, from: &HeadState, issue: u64, lbn: u64, blocks: u32, is_write: bool) -> Predicted {
        let m = &self.model;
        let ctl = &m.controller;
        let overhead = ctl.overhead_ns[0][from.last_was_write as usize];
        // A write's mechanism starts when the drive's does: after its command
        // phase (the write hit overhead on a write-back drive, §2.2).
        let plan = is_write.then(|| ctl.write_plan(issue, from.last_was_write, from.next_lbn == Some(lbn), blocks, None, false));
        let start = plan.map_or(issue + overhead, |p| p.mech_from).max(from.time.0);
        let a = m.media_access((from.cylinder, from.head), start, plan.map(|p| p.data), lbn, blocks, is_write, &mut self.pieces);
        let done = if is_write { a.media_end } else { m.read_bus_done(&a, blocks, issue + overhead + ctl.read_disconnect_ns[from.last_was_write as usize]) };
        let end = HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(a.media_end), last_was_write: is_write, next_lbn: Some(lbn + blocks as u64) };
        Predicted { start, media_start: a.media_start, media_end: a.media_end, done, end }
    }

    /// When the truth's mechanical work on a command issued at `issue` can
    /// start (as `predict` times it, from the drive's state).
    fn truth_start(&self, drive: &Drive, issue: u64, lbn: u64, blocks: u32, is_write: bool) -> u64 {
        let (ctl, s) = (&self.model.controller, &drive.state);
        let from = if is_write {
            ctl.write_plan(issue, s.last_was_write, s.head.next_lbn == Some(lbn), blocks, None, false).mech_from
        } else {
            issue + ctl.overhead_ns[0][s.last_was_write as usize]
        };
        from.max(s.head.time.0)
    }

    fn serve_truth(&mut self, drive: &mut Drive, issue: u64, lbn: u64, blocks: u32, is_write: bool) -> Service {
        let mut s = self.truth.serve(drive, SimTime(issue), self.synced, lbn, blocks, is_write);
        // The drive reports completions in the order it took the commands.
        s.done = s.done.max(SimTime(self.done[1]));
        self.done = [self.done[1], s.done.0];
        s
    }

    /// Plan and serve foreground request `fg` (and the background command
    /// planned for it, if any) at the drive; returns the request's service.
    /// `planner`: None when no background work is planned (`plan = false`).
    #[allow(clippy::too_many_arguments)]
    pub fn serve(&mut self, drive: &mut Drive, fg: &Foreground, planner: Option<&mut (dyn Planner + 'static)>, tasks: &mut Tasks,
                 summary: &mut super::FreeblockSummary, planner_ns: &mut u128) -> Service {
        let issue = self.issue_at(fg.ready.0);
        let from = self.belief;
        let direct = self.predict(&from, issue, fg.lbn, fg.blocks, fg.is_write);
        let bg = match planner.as_deref() {
            Some(p) => {
                let clock = std::time::Instant::now();
                let bg = self.plan(p, fg, &from, issue, &direct, tasks, summary);
                *planner_ns += clock.elapsed().as_nanos();
                bg
            }
            None => None,
        };
        let (first_lbn, first_blocks, first_is_write) = match &bg {
            Some(b) if b.merged => (b.lbn, b.blocks + fg.blocks, false),
            Some(b) => (b.lbn, b.blocks, b.write),
            None => (fg.lbn, fg.blocks, fg.is_write),
        };
        let truth_start = self.truth_start(drive, issue, first_lbn, first_blocks, first_is_write);
        let svc = match (&bg, planner) {
            (Some(b), Some(planner)) if b.merged => {
                let s = self.serve_truth(drive, issue, b.lbn, b.blocks + fg.blocks, false);
                let n = planner.credit(&visit(b), s.done, tasks);
                self.sum.merged_reads += 1;
                self.sum.merged_blocks += n;
                summary.free_blocks += n;
                summary.by_source.merged += n;
                s
            }
            (Some(b), Some(planner)) => {
                let s = self.serve_truth(drive, issue, b.lbn, b.blocks, b.write);
                let n = planner.credit(&visit(b), s.done, tasks);
                self.sum.background_commands += 1;
                self.sum.command_blocks += n;
                summary.free_blocks += n;
                let track = (b.cylinder, b.head);
                let by = &mut summary.by_source;
                *if track == (from.cylinder, from.head) { &mut by.source_track } else if track == (fg.cylinder, fg.head) { &mut by.destination_track } else { &mut by.other_track } += n;
                let behind = self.issue_at(fg.ready.0);
                self.serve_truth(drive, behind, fg.lbn, fg.blocks, fg.is_write)
            }
            _ => self.serve_truth(drive, issue, fg.lbn, fg.blocks, fg.is_write),
        };
        self.account(&direct, truth_start, &svc, bg.is_some());
        self.belief = direct.end;
        self.belief_done = direct.done;
        svc
    }

    /// The background command for `fg`, if its rotational latency has room for one.
    #[allow(clippy::too_many_arguments)]
    fn plan(&mut self, planner: &dyn Planner, fg: &Foreground, from: &HeadState, issue: u64, direct: &Predicted,
            tasks: &Tasks, summary: &mut super::FreeblockSummary) -> Option<Background> {
        let positioned = direct.start + self.model.position_ns((from.cylinder, from.head), (fg.cylinder, fg.head), Access::Onward { write: fg.is_write }, 0);
        if direct.media_start <= positioned || tasks.wanted.count() == 0 {
            return None;
        }
        summary.opportunities += 1;
        let ctl = &self.model.controller;
        // Behind a command of its own the foreground request is issued when the one before it completes.
        // With one command at the drive it is issued when the background command completes: the planner
        // cannot know when that is before choosing one, so it plans as with two and the check below decides.
        let behind = fg.ready.0.max(self.belief_done.max(self.done[1]));
        // Each direction the tasks take is planned on its own (a command reads or writes); the better is kept, reads on a tie.
        let b = tasks.directions().iter().filter_map(|&w| {
            let t0 = (issue + ctl.command_overhead_ns(w, from.last_was_write)).max(from.time.0);
            let fg_start_behind = behind + ctl.command_overhead_ns(fg.is_write, w);
            planner.plan_external(SimTime(t0), (from.cylinder, from.head), (fg.cylinder, fg.head), SimTime(direct.media_start),
                                  (fg.lbn, fg.is_write), SimTime(fg_start_behind), w, tasks)
        }).fold(None, |best: Option<Background>, b| if b.wanted > best.as_ref().map_or(0, |x| x.wanted) { Some(b) } else { best })?;
        // Check the whole sequence with the exact model (the planner's windows
        // leave out command processing and write data transfer); a pass of
        // the same sector differs by the rounding of sector times at most.
        let same_pass = |a: u64, b: u64| a.abs_diff(b) < 1_000;
        let ok = if b.merged {
            same_pass(self.predict(from, issue, b.lbn, b.blocks + fg.blocks, false).media_end, direct.media_end)
        } else {
            let p = self.predict(from, issue, b.lbn, b.blocks, b.write);
            let behind = if self.depth >= 2 { behind } else { behind.max(p.done) };
            same_pass(self.predict(&p.end, behind, fg.lbn, fg.blocks, fg.is_write).media_start, direct.media_start)
        };
        if !ok {
            self.sum.plans_rejected += 1;
        }
        ok.then_some(b)
    }

    /// Compare the foreground's head time with the host's prediction.
    fn account(&mut self, predicted: &Predicted, truth_start: u64, svc: &Service, after_background: bool) {
        let actual_end = if svc.media_start.0 > 0 { svc.media_start.0 + svc.transfer_ns } else { truth_start };
        let actual = actual_end.saturating_sub(truth_start) as f64;
        let err_ns = actual - (predicted.media_end - predicted.start) as f64;
        let late = err_ns >= self.rev_ns as f64 / 2.0;
        let s = &mut self.sum;
        if after_background {
            s.requests_after_background += 1;
            s.late_after_background += late as u64;
        } else {
            s.requests_direct += 1;
            s.late_direct += late as u64;
            let bin = ((err_ns / 1000.0 - ERR_FIRST_US) / ERR_BIN_US).floor().clamp(0.0, (ERR_BINS - 1) as f64) as usize;
            s.error_counts[bin] += 1;
            let c = ErrorClass::of(err_ns, self.rev_ns);
            s.error_within_50us += c.within_50us as u8 as f64;
            s.error_within_150us += c.within_150us as u8 as f64;
            s.error_one_rev_longer += c.rev_longer as u8 as f64;
            s.error_one_rev_shorter += c.rev_shorter as u8 as f64;
        }
    }

    /// Idle time: the host sent a background command that leaves the heads
    /// at `head` when it ends at `end` (as it believes); the drive took it.
    pub fn idle_sent(&mut self, head: HeadState, end: SimTime) {
        self.belief = head;
        self.belief_done = end.0;
        self.done = [self.done[1], end.0];
    }

    /// The results so far, with the fractions and histogram shares computed.
    pub fn summary(&self) -> ExternalSummary {
        let mut s = self.sum.clone();
        let share = |n: u64, of: u64| if of > 0 { n as f64 / of as f64 } else { 0.0 };
        s.late_fraction_after_background = share(s.late_after_background, s.requests_after_background);
        s.late_fraction_direct = share(s.late_direct, s.requests_direct);
        let n = s.requests_direct.max(1) as f64;
        s.error_within_50us /= n;
        s.error_within_150us /= n;
        s.error_one_rev_longer /= n;
        s.error_one_rev_shorter /= n;
        s.noise = self.truth.stats();
        s
    }
}

fn visit(b: &Background) -> Visit {
    Visit { cylinder: b.cylinder, head: b.head, lbns: vec![(b.lbn, b.lbn + b.blocks as u64)], wanted: b.wanted, write: b.write }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::builtin;
    use crate::time::SimDuration;
    use std::sync::Arc;

    #[test]
    fn a_write_on_a_write_back_drive_is_predicted_as_the_drive_times_it() {
        // The Atlas 10K reports writes once their data is in (fast write
        // level 2): its mechanism starts after the write *hit* overhead
        // (0.186 ms after a read; the miss figure, 0.345, is for write-through).
        let model = Arc::new(DiskModel::new(builtin::resolve("atlas10k", None).unwrap()).unwrap());
        let mut ext = External::new(model.clone(), &NoiseConfig::default(), 1);
        let (lbn, blocks) = (1_000_000, 16);
        let p = ext.predict(&HeadState::default(), 0, lbn, blocks, true);
        assert_eq!(p.start, SimDuration::from_ms(model.spec.controller.write_hit_overhead_after_read_ms).ns());
        // The drive's destage of the same write, from the same state, ends where predicted.
        let mut drive = Drive::new(model.clone());
        drive.serve(SimTime(0), lbn, blocks, true);
        assert_eq!(p.media_end, drive.state.head.time.0);
    }
}

//! `greedy`, the freeblock planner of the papers: fill a foreground request's rotational latency
//! with background transfers without delaying it (Lumb, Schindler, Ganger &
//! Riedel, OSDI 2000; Lumb, Schindler & Ganger, FAST 2002).
//!
//! When the drive turns to foreground request F, the heads are on the source
//! track and must be over F's first sector at `deadline` (the time F's media
//! transfer starts without freeblock scheduling). Whatever time that leaves
//! beyond the direct seek can be spent reading wanted blocks: on the source
//! track before leaving, on the destination track before F's sector comes
//! round, or on another track visited on the way, each detour paying its
//! extra seeks. The planner predicts every option with the predictor's model,
//! searches tracks progressively farther from the source and destination
//! within a budget, and takes the option that moves the most wanted blocks.

use super::planner::{Background, Plan, Planner, PlannerSettings, Visit};
use super::Tasks;
use crate::disk::mechanics::{sector_phase, REV};
use crate::disk::{Access, DiskModel, TrackSpan};
use crate::time::SimTime;
use std::sync::Arc;

/// Chooses background transfers that fit in foreground positioning time (see the module doc).
pub struct Greedy {
    model: Arc<DiskModel>,
    /// Tracks examined besides source and destination, at most.
    pub search_tracks: u32,
    /// Added to every predicted head movement (external schedulers' margin).
    pub seek_conservatism_ns: u64,
    /// External mode: no background command of its own on the source or
    /// destination track (Lumb et al. 2002, section 4.3: a second command on
    /// a track can trigger the drive's prefetching). False: such commands
    /// are planned too, so the rule's cost can be measured.
    pub one_per_track: bool,
    /// Firmware mode under the external scheduler's limits (Lumb et al.
    /// 2002, Fig. 10: "with the same one-request-per-track limitation"): one
    /// LBN range per opportunity, nothing on the source track, on the
    /// destination track only blocks that end where the foreground read
    /// begins (a merged read), elsewhere one side of a track's logical start.
    pub firmware_one_per_track: bool,
    /// Wanted blocks per cylinder: lets idle time find the nearest work.
    cyl_wanted: Vec<u32>,
    /// Wanted blocks per track (cylinder * surfaces + head): lets a search skip empty tracks.
    track_wanted: Vec<u32>,
}

impl Greedy {
    /// A planner for a drive of `model`, counting the blocks `tasks` want; no margin.
    pub fn new(model: Arc<DiskModel>, tasks: &Tasks, search_tracks: u32) -> Greedy {
        let mut p = Greedy { model, search_tracks, seek_conservatism_ns: 0, one_per_track: true, firmware_one_per_track: false, cyl_wanted: Vec::new(), track_wanted: Vec::new() };
        p.recount(tasks);
        p
    }

    /// Rebuild the per-cylinder counts (after pause / resume / abort).
    pub fn recount(&mut self, tasks: &Tasks) {
        let l = &self.model.layout;
        // Cylinders outside every zone hold no LBN: they stay 0.
        self.track_wanted = vec![0; (l.cylinders() * l.surfaces()) as usize];
        self.cyl_wanted = vec![0; l.cylinders() as usize];
        let capacity = l.capacity();
        self.recount_range(0, capacity, tasks);
    }

    /// The heads' move between tracks of a plan, as the model times it (with this planner's margin).
    fn move_ns(&self, c0: u32, h0: u32, c1: u32, h1: u32, is_write: bool) -> u64 {
        self.model.position_ns((c0, h0), (c1, h1), Access::Onward { write: is_write }, self.seek_conservatism_ns)
    }

    /// The slots of `span` whose whole sector passes under the head in [ta, tb].
    fn window(&self, span: &TrackSpan, ta: u64, tb: u64) -> Option<(u32, u32)> {
        if tb <= ta {
            return None;
        }
        let m = &self.model.mech;
        let spt = span.sectors_per_track as u64;
        let phase = m.phase_at(SimTime(ta));
        // First sector boundary at or after ta.
        let s0 = ((phase as u128 * spt as u128).div_ceil(REV as u128) % spt as u128) as u32;
        let t0 = ta + m.rotate_ns(phase, sector_phase(s0, span.sectors_per_track));
        if t0 >= tb {
            return None;
        }
        let n = (((tb - t0) as u128 * spt as u128 * m.rpm_milli as u128) / REV as u128).min(spt as u128) as u32;
        (n > 0).then_some(((s0 + span.sectors_per_track - span.first_sector) % span.sectors_per_track, n))
    }

    /// LBN ranges covered by `n` slots from slot offset `k0`, and how many are wanted (in direction `write`).
    fn covered(span: &TrackSpan, k0: u32, n: u32, write: bool, tasks: &Tasks) -> (Vec<(u64, u64)>, u64) {
        let spt = span.sectors_per_track;
        let parts = if k0 + n <= spt { vec![(k0, k0 + n)] } else { vec![(k0, spt), (0, k0 + n - spt)] };
        let mut ranges = Vec::with_capacity(2);
        let mut wanted = 0;
        for (a, b) in parts {
            let (i0, i1) = span.index_range(a, b);
            if i1 > i0 {
                let (lo, hi) = (span.first_lbn + i0 as u64, span.first_lbn + i1 as u64);
                wanted += tasks.value_range_dir(lo, hi, write);
                ranges.push((lo, hi));
            }
        }
        (ranges, wanted)
    }

    /// At most how many blocks a visit to (`c`, `h`) in [ta, tb] can cover:
    /// [`window`](Self::window)'s slot count with its start at `ta`, without
    /// locating the track's sectors. A search skips a track whose bound cannot
    /// beat the best option found so far (the same choice, far fewer visits).
    /// It is also at most the wanted blocks left on the track.
    fn slots_bound(&self, c: u32, h: u32, ta: u64, tb: u64) -> u64 {
        let left = self.track_wanted[(c * self.model.layout.surfaces() + h) as usize] as u64;
        if tb <= ta || left == 0 {
            return 0;
        }
        let spt = self.model.layout.sectors_per_track(c, h) as u128;
        (((tb - ta) as u128 * spt * self.model.mech.rpm_milli as u128) / REV as u128).min(spt).min(left as u128) as u64
    }

    fn visit(&self, c: u32, h: u32, ta: u64, tb: u64, write: bool, tasks: &Tasks) -> Option<Visit> {
        let span = self.model.layout.track_span(c, h)?;
        let (k0, n) = self.window(&span, ta, tb)?;
        let (lbns, wanted) = Self::covered(&span, k0, n, write, tasks);
        (wanted > 0).then_some(Visit { cylinder: c, head: h, lbns, wanted, write })
    }

    /// Best use of the time before `deadline`, when the heads are at
    /// (`src_cyl`, `src_head`) from `now` and must then reach (`dst_cyl`,
    /// `dst_head`) for a foreground request (`fg_write`: it needs write settle).
    #[allow(clippy::too_many_arguments)]
    pub fn plan(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg_write: bool,
                bg_write: bool, tasks: &Tasks) -> Plan {
        let mut best = Plan::default();
        if tasks.wanted.count() == 0 {
            return best;
        }
        let (t0, tf) = (now.0, deadline.0);
        let direct = self.move_ns(src.0, src.1, dst.0, dst.1, fg_write);
        if t0 + direct >= tf {
            return best;
        }
        let same_track = src == dst;
        if self.firmware_one_per_track {
            return self.plan_one_range(t0, tf, direct, src, dst, fg_write, bg_write, tasks);
        }
        // Source and destination: split the slack at a few points.
        const SPLITS: u64 = 4;
        for i in 0..=SPLITS {
            let leave = t0 + (tf - direct - t0) * i / SPLITS;
            let mut visits = Vec::new();
            if same_track {
                if i > 0 { break; }
                visits.extend(self.visit(src.0, src.1, t0, tf, bg_write, tasks));
            } else {
                visits.extend(self.visit(src.0, src.1, t0, leave, bg_write, tasks));
                visits.extend(self.visit(dst.0, dst.1, leave + direct, tf, bg_write, tasks));
            }
            let wanted = visits.iter().map(|v| v.wanted).sum();
            if wanted > best.wanted {
                best = Plan { visits, wanted };
            }
        }
        // Other tracks, nearest the source and destination cylinders first.
        self.other_tracks(t0, tf, src, dst, fg_write, bg_write, |c, h, arrive, leave_by| {
            if self.slots_bound(c, h, arrive, leave_by) * tasks.max_weight() <= best.wanted {
                return;
            }
            if let Some(v) = self.visit(c, h, arrive, leave_by, bg_write, tasks) {
                if v.wanted > best.wanted {
                    best = Plan { wanted: v.wanted, visits: vec![v] };
                }
            }
        });
        best
    }

    /// `plan` under the external scheduler's limits (`firmware_one_per_track`):
    /// the one LBN range moving the most wanted blocks, either on the
    /// destination track ending where the foreground's sector comes round (a
    /// read merged into a foreground read), or on another track (one side of
    /// its logical start). Nothing on the source track.
    #[allow(clippy::too_many_arguments)]
    fn plan_one_range(&self, t0: u64, tf: u64, direct: u64, src: (u32, u32), dst: (u32, u32), fg_write: bool, bg_write: bool,
                      tasks: &Tasks) -> Plan {
        let mut best = Plan::default();
        let keep = |best: &mut Plan, v: Visit, range: (u64, u64)| {
            let wanted = tasks.value_range_dir(range.0, range.1, v.write);
            if wanted > best.wanted {
                *best = Plan { wanted, visits: vec![Visit { lbns: vec![range], wanted, ..v }] };
            }
        };
        if !fg_write && !bg_write && src != dst {
            // The window ends as the foreground's first sector comes round: its last part is the
            // one a read prepended to the foreground read can take.
            if let Some(v) = self.visit(dst.0, dst.1, t0 + direct, tf, false, tasks) {
                let last = *v.lbns.last().expect("a visit covers a range");
                keep(&mut best, v, last);
            }
        }
        self.other_tracks(t0, tf, src, dst, fg_write, bg_write, |c, h, arrive, leave_by| {
            if self.slots_bound(c, h, arrive, leave_by) * tasks.max_weight() <= best.wanted {
                return;
            }
            if let Some(v) = self.visit(c, h, arrive, leave_by, bg_write, tasks) {
                let part = v.lbns.iter().copied().max_by_key(|&(lo, hi)| (tasks.value_range_dir(lo, hi, v.write), std::cmp::Reverse(lo)));
                if let Some(part) = part {
                    keep(&mut best, v, part);
                }
            }
        });
        best
    }

    /// Call `f(cylinder, head, arrive, leave_by)` for every track other than
    /// source and destination the search examines, within the budget: when
    /// the heads could be there and when they must leave for the destination.
    #[allow(clippy::too_many_arguments)]
    fn other_tracks(&self, t0: u64, tf: u64, src: (u32, u32), dst: (u32, u32), fg_write: bool, bg_write: bool,
                    mut f: impl FnMut(u32, u32, u64, u64)) {
        let l = &self.model.layout;
        let mech = &self.model.mech;
        let slack = tf - t0;
        // Cylinders in order of distance from the path between source and
        // destination: outward on both sides, and inward along the path.
        // Outside the path the detour only grows with distance, so each side
        // stops at its first unreachable cylinder.
        let reachable = |c: u32| mech.seek_floor_ns(c.abs_diff(src.0)) + mech.seek_floor_ns(c.abs_diff(dst.0)) < slack;
        let (lo, hi) = (src.0.min(dst.0), src.0.max(dst.0));
        let mut examined = 0u32;
        for d in 0u32.. {
            let below = lo.checked_sub(d).filter(|&c| reachable(c));
            let above = (hi + d < l.cylinders()).then_some(hi + d).filter(|&c| (d > 0 || hi != lo) && reachable(c));
            let inward = lo + d < hi.saturating_sub(d + 1);
            if below.is_none() && above.is_none() && !inward {
                break;
            }
            let inside = [lo + d + 1, hi.saturating_sub(d + 1)].into_iter().filter(|&c| c > lo && c < hi);
            // At most four candidates: kept on the stack (this runs for every opportunity).
            let (mut cands, mut n) = ([0u32; 4], 0);
            for c in below.into_iter().chain(above).chain(inside.filter(|&c| reachable(c))) {
                if n == 0 || cands[n - 1] != c {  // as Vec::dedup: drop a repeat of the previous one
                    cands[n] = c;
                    n += 1;
                }
            }
            for &c in &cands[..n] {
                for h in 0..l.surfaces() {
                    if (c, h) == src || (c, h) == dst {
                        continue;
                    }
                    examined += 1;
                    if examined > self.search_tracks {
                        return;
                    }
                    // Nothing wanted there: no visit could move a block (it still counts as examined).
                    if self.track_wanted[(c * l.surfaces() + h) as usize] == 0 {
                        continue;
                    }
                    let arrive = t0 + self.move_ns(src.0, src.1, c, h, bg_write);
                    let leave_by = tf.saturating_sub(self.move_ns(c, h, dst.0, dst.1, fg_write));
                    f(c, h, arrive, leave_by);
                }
            }
        }
    }

    /// The external scheduler's choice (Lumb et al. 2002, section 4.3): one
    /// background command per opportunity, which the drive's LBN interface
    /// and its prefetcher constrain. Nothing on the source track (the
    /// request there is already at the drive); on the destination track only
    /// blocks that end where the foreground read `fg` = (lbn, is_write)
    /// begins, to be prepended to it; elsewhere one LBN range per track (a
    /// window across a track's logical start keeps its larger part, by
    /// wanted blocks). The ranges are trimmed to their first and last wanted
    /// block; blocks in between are read anyway. Behind a command of its own
    /// the foreground command cannot move the heads before `fg_start_behind`
    /// (it is issued later, and processed then).
    #[allow(clippy::too_many_arguments)]
    pub fn plan_external(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg: (u64, bool),
                         fg_start_behind: SimTime, bg_write: bool, tasks: &Tasks) -> Option<Background> {
        if tasks.wanted.count() == 0 {
            return None;
        }
        let (t0, tf) = (now.0, deadline.0);
        let direct = self.move_ns(src.0, src.1, dst.0, dst.1, fg.1);
        if t0 + direct >= tf {
            return None;
        }
        let mut best: Option<Background> = None;
        let consider = |best: &mut Option<Background>, b: Background| {
            if b.wanted > best.as_ref().map_or(0, |x| x.wanted) {
                *best = Some(b);
            }
        };
        if !fg.1 && !bg_write && src != dst {
            if let Some(v) = self.visit(dst.0, dst.1, t0 + direct, tf, false, tasks) {
                // The window ends as the foreground's first sector comes round (give or take the
                // rounding of one sector); only where it starts matters to the merged read.
                if let Some(&(lo, _)) = v.lbns.iter().find(|r| r.0 < fg.0 && r.1 <= fg.0 && r.1 + 1 >= fg.0) {
                    if let Some(first) = (lo..fg.0).find(|&b| tasks.wanted_by(b, false)) {
                        let wanted = tasks.value_range_dir(first, fg.0, false);
                        consider(&mut best, Background { lbn: first, blocks: (fg.0 - first) as u32, wanted, merged: true, cylinder: dst.0, head: dst.1,
                                                         write: false });
                    }
                }
            }
        }
        if !self.one_per_track {
            // Without the rule: a command of its own on the source track
            // before the heads leave, or on the destination track before the
            // foreground's sector comes round (behind it, the foreground
            // command is issued when it completes).
            // A command of its own settles on its track first (as any read
            // that finds the heads on its track), and so does the foreground
            // read behind one on the destination track; plus the margin.
            let settle = self.model.position_ns(src, src, Access::Read, 0) + self.seek_conservatism_ns;
            let tracks = [(src, t0 + settle, tf - direct, fg_start_behind.0 + direct),
                          (dst, t0 + direct + settle, tf.saturating_sub(settle), fg_start_behind.0 + settle)];
            for ((c, h), arrive, leave_by, fg_ready) in tracks {
                if arrive < leave_by && fg_ready < tf {
                    if let Some(b) = self.visit(c, h, arrive, leave_by, bg_write, tasks).and_then(|v| Self::command(&v, tasks)) {
                        consider(&mut best, b);
                    }
                }
            }
        }
        self.other_tracks(t0, tf, src, dst, fg.1, bg_write, |c, h, arrive, leave_by| {
            if fg_start_behind.0 + self.move_ns(c, h, dst.0, dst.1, fg.1) >= tf {
                return;
            }
            if self.slots_bound(c, h, arrive, leave_by) * tasks.max_weight() <= best.as_ref().map_or(0, |x| x.wanted) {
                return;
            }
            let Some(v) = self.visit(c, h, arrive, leave_by, bg_write, tasks) else { return };
            if let Some(b) = Self::command(&v, tasks) {
                consider(&mut best, b);
            }
        });
        best
    }

    /// The one LBN range of a visit a command can read: its part with the
    /// most wanted blocks (a window across the track's logical start has
    /// two), trimmed to its first and last wanted block.
    fn command(v: &Visit, tasks: &Tasks) -> Option<Background> {
        let part = v.lbns.iter().map(|&(lo, hi)| (tasks.value_range_dir(lo, hi, v.write), lo, hi)).max_by_key(|p| (p.0, std::cmp::Reverse(p.1)));
        let (wanted, lo, hi) = part.filter(|p| p.0 > 0)?;
        let first = (lo..hi).find(|&b| tasks.wanted_by(b, v.write)).expect("a wanted block");
        let last = (lo..hi).rev().find(|&b| tasks.wanted_by(b, v.write)).expect("a wanted block");
        Some(Background { lbn: first, blocks: (last + 1 - first) as u32, wanted, merged: false, cylinder: v.cylinder, head: v.head,
                          write: v.write })
    }

    /// Idle time: the nearest track with blocks of the highest-priority
    /// tasks that want blocks (any wanted block when priorities are equal),
    /// read (or written) whole on arrival (zero-latency), in the direction
    /// that moves more of those. Returns the visit and when it ends.
    pub fn idle(&self, now: SimTime, at: (u32, u32), tasks: &Tasks) -> Option<(Visit, SimTime)> {
        if tasks.wanted.count() == 0 {
            return None;
        }
        let l = &self.model.layout;
        // The value idle time serves on track (c, h) in each direction, reads first.
        let serves = |c: u32, h: u32| {
            let s = l.track_span(c, h)?;
            let (lo, hi) = (s.first_lbn, s.first_lbn + s.blocks as u64);
            tasks.directions().iter().map(|&w| (w, tasks.idle_value(lo, hi, w))).fold(None, |best: Option<(bool, u64)>, d| {
                if d.1 > best.map_or(0, |b| b.1) { Some(d) } else { best }
            }).map(|d| (h, lo, hi, d.0))
        };
        // With priorities or shares, only the cylinders of the tasks idle time serves first are candidates.
        let cylinders: Option<Vec<(u32, u32)>> = tasks.idle_ranges().map(|r| r.iter()
            .map(|&(lo, hi)| (l.lbn_to_pbn(lo).cylinder, l.lbn_to_pbn(hi - 1).cylinder)).map(|(a, b)| (a.min(b), a.max(b))).collect());
        let candidate = |c: u32| cylinders.as_ref().is_none_or(|v| v.iter().any(|&(a, b)| a <= c && c <= b));
        let n = self.cyl_wanted.len() as u32;
        let c = (0..n).find_map(|d| {
            [at.0.checked_sub(d), Some(at.0 + d).filter(|&c| c < n)].into_iter().flatten()
                .find(|&c| self.cyl_wanted[c as usize] > 0 && candidate(c) && (0..l.surfaces()).any(|h| serves(c, h).is_some()))
        })?;
        // Prefer the current surface, then the others in order.
        let (h, lo, hi, write) = std::iter::once(at.1).chain(0..l.surfaces()).find_map(|h| serves(c, h))?;
        let lbns = vec![(lo, hi)];
        let wanted = tasks.value_range_dir(lo, hi, write);
        let end = now.0 + self.model.position_ns(at, (c, h), Access::Onward { write }, 0) + self.model.mech.revolution_ns();
        Some((Visit { cylinder: c, head: h, lbns, wanted, write }, SimTime(end)))
    }

    /// Credit a visit's blocks to their tasks.
    pub fn credit(&mut self, visit: &Visit, now: SimTime, tasks: &mut Tasks) -> u64 {
        let n: u64 = visit.lbns.iter().map(|&(lo, hi)| tasks.transferred(lo, hi, now, visit.write)).sum();
        self.cyl_wanted[visit.cylinder as usize] -= n as u32;
        self.track_wanted[(visit.cylinder * self.model.layout.surfaces() + visit.head) as usize] -= n as u32;
        // Blocks wanted anew (a repeating task's next pass, a backup's copies, a cleaner's buffer).
        for (lo, hi) in tasks.take_changes() {
            self.recount_range(lo, hi, tasks);
        }
        n
    }

    /// Recount the tracks of the cylinders holding LBNs [lo, hi).
    fn recount_range(&mut self, lo: u64, hi: u64, tasks: &Tasks) {
        let l = &self.model.layout;
        let (a, b) = (l.lbn_to_pbn(lo).cylinder, l.lbn_to_pbn(hi - 1).cylinder);
        for c in a.min(b)..=a.max(b) {
            let mut sum = 0;
            for h in 0..l.surfaces() {
                let n = l.track_span(c, h).map_or(0, |s| tasks.wanted.count_range(s.first_lbn, s.first_lbn + s.blocks as u64) as u32);
                self.track_wanted[(c * l.surfaces() + h) as usize] = n;
                sum += n;
            }
            self.cyl_wanted[c as usize] = sum;
        }
    }
}

impl Planner for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn configure(&mut self, settings: &PlannerSettings) {
        self.search_tracks = settings.search_tracks;
        self.seek_conservatism_ns = settings.seek_conservatism_ns;
        self.one_per_track = settings.one_per_track;
        self.firmware_one_per_track = settings.firmware_one_per_track;
    }
    fn recount(&mut self, tasks: &Tasks) {
        Greedy::recount(self, tasks)
    }
    fn plan(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg_write: bool, bg_write: bool, tasks: &Tasks) -> Plan {
        Greedy::plan(self, now, src, dst, deadline, fg_write, bg_write, tasks)
    }
    fn plan_external(&self, now: SimTime, src: (u32, u32), dst: (u32, u32), deadline: SimTime, fg: (u64, bool),
                     fg_start_behind: SimTime, bg_write: bool, tasks: &Tasks) -> Option<Background> {
        Greedy::plan_external(self, now, src, dst, deadline, fg, fg_start_behind, bg_write, tasks)
    }
    fn idle(&self, now: SimTime, at: (u32, u32), tasks: &Tasks) -> Option<(Visit, SimTime)> {
        Greedy::idle(self, now, at, tasks)
    }
    fn credit(&mut self, visit: &Visit, now: SimTime, tasks: &mut Tasks) -> u64 {
        Greedy::credit(self, visit, now, tasks)
    }
}

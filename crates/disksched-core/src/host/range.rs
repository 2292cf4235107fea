//! Range requests (Anand et al., "Avoiding File System Micromanagement with
//! Range Writes", OSDI 2008): a write that names every place it may go, or a
//! read of any one of several replicas; the drive chooses.
//!
//! A range request carries `Targets`: the start LBNs it accepts. The host
//! gives *spans* (runs of blocks the data may occupy) and an alignment; a
//! start is acceptable when it is a multiple of the alignment and the whole
//! request fits inside one span. An ordinary request is the one-start case.
//!
//! For positional scheduling the starts are kept as *runs*: arithmetic
//! progressions of starts on one track whose sectors advance with their LBNs,
//! sorted by cylinder. The least positioning time to any start of a run is
//! found without visiting them all: after the seek the head arrives at some
//! angle, and the best start is the first one at or after it (`Run::first_after`).
//!
//! Concurrent range writes must not land on the same blocks: the data of one
//! would overwrite the other's. When a range write is placed its blocks are
//! *claimed*; a claim binds every range request that arrived before the host
//! learned where the write went (its completion). Placement prefers
//! unclaimed starts and falls back to a claimed one only when a request has
//! no other (counted as an overlap).

use crate::disk::mechanics::{sector_phase, REV};
use crate::disk::{HeadState, Layout, Predictor, Target};
use crate::host::Request;
use crate::time::SimTime;

/// Acceptable starts of a range request, in runs on tracks.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    /// Sorted by (cylinder, head, first start).
    runs: Vec<Run>,
    count: u64,
    first: u64,
}

/// Starts `first_lbn + i * step` for i in 0..count, all on one track, at
/// sectors `(first_sector + i * step) mod spt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// The track's cylinder.
    pub cylinder: u32,
    /// The track's surface.
    pub head: u32,
    /// Sectors per track.
    pub spt: u32,
    /// Sector of the first start.
    pub first_sector: u32,
    /// LBN of the first start.
    pub first_lbn: u64,
    /// Starts in the run.
    pub count: u32,
    /// Blocks (and sectors) from one start to the next.
    pub step: u32,
}

impl Run {
    /// LBN of start `i`.
    pub fn lbn(&self, i: u32) -> u64 {
        self.first_lbn + i as u64 * self.step as u64
    }
    /// Where start `i` is, as a place on the track.
    pub fn target(&self, i: u32) -> Target {
        let sector = ((self.first_sector as u64 + i as u64 * self.step as u64) % self.spt as u64) as u32;
        // A place, not a request: never taken as continuing the last command
        // (so the search over a run, which times the run once, agrees).
        Target { cylinder: self.cylinder, head: self.head, phase: sector_phase(sector, self.spt), spt: self.spt, lbn: Target::ANY_LBN }
    }
    /// Index of the start whose sector is the first to pass under the head
    /// after the platter reaches `phase`.
    pub fn first_after(&self, phase: u64) -> u32 {
        let spt = self.spt as u64;
        // The first sector whose phase (sector * REV / spt, floored) is >= `phase`.
        let sector = ((phase as u128 * spt as u128).div_ceil(REV as u128) as u64) % spt;
        let offset = (sector + spt - self.first_sector as u64) % spt;
        let i = offset.div_ceil(self.step as u64);
        if i < self.count as u64 { i as u32 } else { 0 }
    }
}

/// A range request as a workload describes it: the spans its data may
/// occupy and the alignment of its start, blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeSpec {
    /// Runs of blocks [lo, hi) the data may occupy.
    pub spans: Vec<(u64, u64)>,
    /// Starts are multiples of this.
    pub align_blocks: u32,
}

impl Targets {
    /// The starts of a `blocks`-long request in `spec`, laid out on `layout`.
    /// `None` if no aligned start fits (the caller reports it).
    pub fn new(spec: &RangeSpec, blocks: u32, layout: &Layout) -> Option<Targets> {
        let align = spec.align_blocks.max(1) as u64;
        let cap = layout.capacity();
        let mut runs = Vec::new();
        let mut pieces = Vec::new();
        let (mut count, mut first) = (0u64, u64::MAX);
        for &(lo, hi) in &spec.spans {
            let hi = hi.min(cap);
            // Starts s with lo <= s, s + blocks <= hi, s % align == 0.
            let s0 = lo.next_multiple_of(align);
            let Some(last) = hi.checked_sub(blocks as u64).filter(|&l| l >= s0) else { continue };
            let last = last - (last - s0) % align;
            first = first.min(s0);
            let mut lbn = s0;
            while lbn <= last {
                let n = (last + 1 - lbn).min(u32::MAX as u64) as u32;
                layout.pieces(lbn, n, &mut pieces);
                for p in &pieces {
                    // `pieces` starts at an aligned LBN, but later pieces may not.
                    let p_lo = lbn;
                    lbn += p.blocks as u64;
                    let s = p_lo.next_multiple_of(align);
                    if s >= lbn {
                        continue;
                    }
                    let k = ((lbn - 1 - s) / align + 1) as u32;
                    count += k as u64;
                    let off = (s - p_lo) as u32;
                    if p.span_sectors == p.blocks {
                        runs.push(Run { cylinder: p.cylinder, head: p.head, spt: p.sectors_per_track,
                                        first_sector: (p.first_sector + off) % p.sectors_per_track,
                                        first_lbn: s, count: k, step: align as u32 });
                    } else {
                        // A slip inside the piece: sectors no longer follow LBNs; one run per start.
                        for i in 0..k {
                            let l = s + i as u64 * align;
                            let b = layout.lbn_to_pbn(l);
                            runs.push(Run { cylinder: b.cylinder, head: b.head, spt: p.sectors_per_track,
                                            first_sector: b.sector, first_lbn: l, count: 1, step: align as u32 });
                        }
                    }
                }
            }
        }
        if count == 0 {
            return None;
        }
        runs.sort_by_key(|r| (r.cylinder, r.head, r.first_lbn));
        Some(Targets { runs, count, first })
    }

    /// The starts, as runs sorted by (cylinder, head, first start).
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }
    /// Number of acceptable starts.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The lowest acceptable start: where a scheduler that does not place
    /// range requests believes the request is.
    pub fn first(&self) -> u64 {
        self.first
    }
    /// Every acceptable start, in run order.
    pub fn starts(&self) -> impl Iterator<Item = (u64, Target)> + '_ {
        self.runs.iter().flat_map(|r| (0..r.count).map(move |i| (r.lbn(i), r.target(i))))
    }
    /// Whether `lbn` is an acceptable start.
    pub fn contains(&self, lbn: u64) -> bool {
        self.runs.iter().any(|r| lbn >= r.first_lbn && (lbn - r.first_lbn) % r.step as u64 == 0
                             && (lbn - r.first_lbn) / (r.step as u64) < (r.count as u64))
    }
}

/// Blocks of placed range writes that other range requests must avoid.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    list: Vec<Claim>,
}

#[derive(Clone, Copy, Debug)]
struct Claim {
    lo: u64,
    hi: u64,
    seq: u64,
    /// The write completed (the host learned where it went) at this time.
    released: Option<SimTime>,
}

impl Claims {
    /// No claims.
    pub const fn new() -> Claims {
        Claims { list: Vec::new() }
    }
    /// Placing `blocks` at `lbn` for request `seq`.
    pub fn claim(&mut self, seq: u64, lbn: u64, blocks: u32) {
        self.list.push(Claim { lo: lbn, hi: lbn + blocks as u64, seq, released: None });
    }
    /// Request `seq` completed at `now`; claims that bind no live range request
    /// (none arrived before its release) are dropped. `oldest_arrival`: the
    /// arrival of the oldest live range request.
    pub fn release(&mut self, seq: u64, now: SimTime, oldest_arrival: Option<SimTime>) {
        for c in self.list.iter_mut().filter(|c| c.seq == seq) {
            c.released = Some(now);
        }
        self.list.retain(|c| c.released.is_none_or(|t| oldest_arrival.is_some_and(|a| a < t)));
    }
    /// Would `blocks` at `lbn` for `r` overlap a claim that binds it?
    #[inline]
    pub fn blocks(&self, r: &Request, lbn: u64) -> bool {
        let hi = lbn + r.blocks as u64;
        self.list.iter().any(|c| c.seq != r.seq && c.lo < hi && lbn < c.hi && c.released.is_none_or(|t| r.arrival < t))
    }
    /// Claims held.
    pub fn len(&self) -> usize {
        self.list.len()
    }
    /// Whether no claim is held.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Where a request would go: (claimed, positioning ns, seq, lbn), compared
/// in that order, so an unclaimed start always beats a claimed one and ties
/// go to the older request, then the lower address. HRS, ECS and the
/// drive's placement all minimise this same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Choice {
    /// The start overlaps a claim that binds the request.
    pub claimed: bool,
    /// Predicted positioning time to the start.
    pub positioning_ns: u64,
    /// The request's arrival order.
    pub seq: u64,
    /// The start.
    pub lbn: u64,
}

/// The best start of run `run` of request `r` from `head` (platter at
/// `phase`), if it beats `bound`.
#[inline]
pub fn best_in_run(run: &Run, r: &Request, head: &HeadState, phase: u64, predictor: &Predictor, claims: &Claims,
                   bound: Option<Choice>) -> Option<Choice> {
    let m = &predictor.model.mech;
    let to = Target { cylinder: run.cylinder, head: run.head, phase: 0, spt: run.spt, lbn: Target::ANY_LBN };
    let pos = predictor.positioning(head, phase, &to, r.is_write, r.blocks);
    // Where the platter is once overhead, seek and (writes) the data's bus transfer are behind.
    let arrive = m.phase_after(phase, pos.ready_ns());
    let i = run.first_after(arrive);
    let choice = |i: u32| Choice {
        claimed: false,
        positioning_ns: pos.ready_ns() + m.rotate_ns(arrive, run.target(i).phase),
        seq: r.seq,
        lbn: run.lbn(i),
    };
    let first = choice(i);
    if bound.is_some_and(|b| first >= b) {
        return None;
    }
    if claims.is_empty() || !claims.blocks(r, first.lbn) {
        return Some(first);
    }
    // Later starts in rotation order, until one is free.
    for k in 1..run.count {
        let j = (i + k) % run.count;
        if !claims.blocks(r, run.lbn(j)) {
            let c = choice(j);
            return bound.is_none_or(|b| c < b).then_some(c);
        }
    }
    let c = Choice { claimed: true, ..first };
    bound.is_none_or(|b| c < b).then_some(c)
}

/// Search `r`'s runs outward from the heads' cylinder, pruning by seek time,
/// for a start that beats `bound`; returns the best found.
pub fn best_start(r: &Request, targets: &Targets, head: &HeadState, phase: u64, predictor: &Predictor, claims: &Claims,
                  mut bound: Option<Choice>) -> Option<Choice> {
    let runs = &targets.runs;
    let c = head.cylinder;
    let mid = runs.partition_point(|x| x.cylinder < c);
    let (mut up, mut down) = (mid, mid);
    let mut found = None;
    loop {
        // Only an unclaimed best bounds the search: a claimed one may still be beaten by any start.
        let limit = bound.filter(|b| !b.claimed).map_or(u64::MAX, |b| b.positioning_ns);
        let up_d = (up < runs.len()).then(|| runs[up].cylinder - c).filter(|&d| predictor.seek_floor_ns(d) <= limit);
        let down_d = (down > 0).then(|| c - runs[down - 1].cylinder).filter(|&d| predictor.seek_floor_ns(d) <= limit);
        let run = match (up_d, down_d) {
            (Some(u), Some(d)) if u <= d => { up += 1; &runs[up - 1] }
            (Some(_), None) => { up += 1; &runs[up - 1] }
            (_, Some(_)) => { down -= 1; &runs[down] }
            (None, None) => break,
        };
        if let Some(ch) = best_in_run(run, r, head, phase, predictor, claims, bound) {
            bound = Some(ch);
            found = Some(ch);
        }
    }
    found
}

/// The drive's side of range requests in a run: where each one goes (at the
/// moment its drive takes it), which blocks placed writes hold, and when
/// those claims stop binding anyone.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Blocks of placed range writes (`SchedCtx::claims`).
    pub claims: Claims,
    /// Live range requests: seq -> arrival (claims bind those that arrived before a release).
    live: std::collections::BTreeMap<u64, SimTime>,
    /// Range requests placed.
    pub placed: u64,
    /// Of those, placed over a claimed start (every acceptable start was claimed).
    pub overlaps: u64,
}

impl Placement {
    /// Range request `seq` arrived at `now`.
    pub fn arrived(&mut self, seq: u64, now: SimTime) {
        self.live.insert(seq, now);
    }

    /// The drive puts range request `r` at its best start from `head` (the
    /// start a range scheduler chose it for) and claims the blocks of a
    /// write; an ordinary request is left alone.
    pub fn place(&mut self, r: &mut Request, head: &HeadState, predictor: &Predictor) -> crate::error::Result<()> {
        let Some(targets) = r.range.as_deref() else { return Ok(()) };
        let phase = predictor.phase_at(head.time);
        let c = best_start(r, targets, head, phase, predictor, &self.claims, None)
            .filter(|c| targets.contains(c.lbn))
            .ok_or_else(|| crate::error::Error::Invariant(format!("range request {} placed outside its targets", r.seq)))?;
        self.placed += 1;
        self.overlaps += c.claimed as u64;
        if r.is_write {
            self.claims.claim(r.seq, c.lbn, r.blocks);
        }
        r.lbn = c.lbn;
        r.target = predictor.target(c.lbn);
        Ok(())
    }

    /// Range request `r` completed at `now`: the host learns where it went,
    /// and claims nobody can still violate go.
    pub fn completed(&mut self, r: &Request, now: SimTime) {
        self.live.remove(&r.seq);
        if r.is_write {
            self.claims.release(r.seq, now, self.live.values().next().copied());
        }
    }
}

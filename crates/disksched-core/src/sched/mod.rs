//! The scheduler contract and the registry of algorithms.
//!
//! A `Scheduler` orders the requests of one queue: the host (device-driver)
//! queue, the controller's, or the drive's own command queue. Modelled on FreeBSD's
//! `gs_scheduler.h`. The queue's owner calls, in simulated-time order:
//!
//! - `bypass(id, ctx)` first, when a request arrives: `true` sends it straight
//!   to the level below (ignoring the queuing threshold), and the scheduler
//!   never sees it again.
//! - `insert(id, ctx)` otherwise. The scheduler
//!   takes ownership of the id until it returns it from `dispatch`. It may
//!   read the request (`ctx.reqs`) but not change it.
//! - `dispatch(ctx, force)` whenever the level below has room (the drive is
//!   idle, or fewer than the queuing threshold are outstanding). Return the
//!   request to send now, or `None` to send nothing now. A scheduler that
//!   holds requests back (anticipation) returns `None` with `force == false`
//!   and says when to ask again through `wake_at`; with `force == true` it
//!   must return a request if it holds any (work conservation).
//! - `complete(id, ctx)` when a request this scheduler dispatched has
//!   finished at the disk (the id is no longer valid afterwards).
//! - `wake_at()` after a `dispatch` that returned `None`: the time at which
//!   the owner should call `dispatch` again even if nothing else happens.
//!   A `None` with no wake time is allowed only while requests this scheduler
//!   dispatched are still in flight (their completion calls `dispatch` again);
//!   otherwise the owner forces a dispatch.
//! - `init_class(flow)` before the first `insert` of a flow (GEOM's
//!   `gs_init_class`), and again if the flow comes back after `fini_class`:
//!   set up per-flow state.
//! - `fini_class(flow)` once the flow has had nothing queued here and
//!   nothing in flight from here for `host.class_expire_ms` (GEOM's
//!   classifier expiry, `kern.geom.sched.expire_secs`): free its state. Not
//!   called for flows still live at the end of the run.
//! - `travel_first()` right after a `dispatch`: cylinders the heads must
//!   visit first (SCAN and C-SCAN sweep to the disk's edge); the drive makes
//!   the empty seeks before serving the request. Honoured at the drive's
//!   queue, and at a host or controller queue that keeps at most one
//!   request in flight below it per disk (queuing threshold 1: then its
//!   order is the arm's); ignored elsewhere.
//! - `counters()` and `timeline(end)` at the end of a run: the algorithm's own
//!   counters, and samples of its state over time (a shaper's token rates).
//! - `drain()` when the queue's algorithm is switched at run time: hand
//!   back every request held; the new scheduler gets them through `insert`
//!   (in arrival order), and completions of requests the old one dispatched
//!   are not reported to the new one.
//!
//! `ctx.head` is the predictor's belief of where the heads will be when the
//! next dispatched request starts; positional schedulers (SPTF and kin) ask
//! `ctx.predictor`, never the simulated drive. At a host or controller queue
//! over an array each disk has its own heads: a positional scheduler judges a
//! request against `ctx.head_for(request)` (its own disk's heads; `ctx.head`
//! is then disk 0's), and keeps its index per disk (`ByCylinder`'s key
//! starts with the disk). Ties are broken by arrival order (`Request::seq`)
//! so every run is deterministic.

pub mod anticipatory;
pub mod asptf;
pub mod bsptf;
pub mod clook;
pub mod cscan;
pub mod ecs;
pub mod edf;
pub mod hrs;
pub mod fcfs;
pub mod look;
pub mod mq_deadline;
pub mod rr;
pub mod scan;
pub mod scan_edf;
pub mod sptf;
pub mod sptf_cache;
pub mod sptf_sw;
mod sorted_index;
pub mod sstf;
pub mod sstf_lbn;
pub mod vscan;

use crate::disk::{HeadState, Predictor};
use crate::error::{config_err, Result};
use crate::host::range::Claims;
use crate::host::{ReqId, Request, RequestTable};
use crate::time::SimTime;

/// A positional index: requests by (disk, cylinder, seq). One disk's
/// requests are a contiguous range, walked outward from that disk's heads.
pub(crate) type CylKey = (u32, u32, u64);

/// Requests by `CylKey`: the index of SSTF, V(R) and the SPTF family.
pub(crate) type ByCylinder = sorted_index::SortedIndex<CylKey>;

/// A request's key in a positional index: its disk, its first block's cylinder, its arrival order.
#[inline]
pub(crate) fn cyl_key(r: &Request) -> CylKey {
    (r.disk, r.target.cylinder, r.seq)
}

/// The disks with requests in a positional index, in order.
#[inline]
pub(crate) fn disks_of(map: &ByCylinder) -> impl Iterator<Item = u32> + '_ {
    // (The last key's disk ends the walk without a search: one disk's index, the usual case, needs none.)
    let last = map.last_key_value().map(|(k, _)| k.0);
    std::iter::successors(map.first_key_value().map(|(k, _)| k.0), move |&d| {
        (Some(d) != last).then(|| map.range((d + 1, 0, 0)..).next().map(|k| k.0 .0)).flatten()
    })
}

/// An LBN index over the disks (`ByLbn`): requests by (disk and first block, seq).
/// Over an array a request's `lbn` is a block of its own disk, so each
/// disk's requests are one ordered run, swept on its own. The disk sits in
/// the bits above the largest LBN, keeping the key two words, as cheap to
/// compare as one disk's (LBN, seq).
pub(crate) type LbnKey = (u64, u64);

/// Requests by `LbnKey`: the index every LBN-ordered scheduler keeps.
pub(crate) type ByLbn = sorted_index::SortedIndex<LbnKey>;

const DISK_SHIFT: u32 = 40;
const _: () = assert!(crate::disk::spec::limits::MAX_BLOCKS <= 1 << DISK_SHIFT && crate::host::array::DISK_COUNT.max < (1u64 << (64 - DISK_SHIFT)) as f64);

/// Where block `lbn` of disk `disk` sorts in an LBN index.
#[inline]
pub(crate) fn lbn_at(disk: u32, lbn: u64) -> u64 {
    (disk as u64) << DISK_SHIFT | lbn
}

/// A request's key in an LBN index.
#[inline]
pub(crate) fn lbn_key(r: &Request) -> LbnKey {
    (lbn_at(r.disk, r.lbn), r.seq)
}

/// The disk and the LBN of a key of an LBN index.
#[inline]
pub(crate) fn lbn_of(k: LbnKey) -> (u32, u64) {
    ((k.0 >> DISK_SHIFT) as u32, k.0 & ((1 << DISK_SHIFT) - 1))
}

/// The disk an LBN-ordered scheduler serves next: of the disks with
/// requests, the one whose heads are believed free first (the lowest
/// number on a tie). Without per-disk heads there is one disk
/// (`SchedCtx::heads`), found without the walk.
pub(crate) fn next_disk(map: &ByLbn, ctx: &SchedCtx) -> Option<u32> {
    if ctx.heads.is_empty() {
        return map.first_key_value().map(|(&k, _)| lbn_of(k).0);
    }
    lbn_disks(map, ctx).min_by_key(|&d| (ctx.head_of(d).time, d))
}

/// The disks with requests in an LBN index, in order (the first alone
/// without per-disk heads: there is one).
pub(crate) fn lbn_disks<'a>(map: &'a ByLbn, ctx: &SchedCtx) -> impl Iterator<Item = u32> + 'a {
    let one = ctx.heads.is_empty();
    std::iter::successors(map.first_key_value().map(|(&k, _)| lbn_of(k).0), move |&d| {
        (!one).then(|| map.range((lbn_at(d + 1, 0), 0)..).next().map(|(&k, _)| lbn_of(k).0)).flatten()
    })
}

/// Disk `disk`'s next request in an LBN index from `lbn` up (`up`), or
/// below it (`!up`, nearest first): the next one in that direction of a sweep.
#[inline]
pub(crate) fn next_on_disk(map: &ByLbn, disk: u32, lbn: u64, up: bool) -> Option<LbnKey> {
    let at = (lbn_at(disk, lbn), 0);
    if up { map.range(at..).next() } else { map.range(..at).next_back() }
        .map(|(k, _)| *k)
        .filter(|&k| lbn_of(k).0 == disk)
}

/// Disk `disk`'s requests in a positional index at cylinder `cylinder` or
/// above (nearest first), and below it (nearest first).
#[inline]
pub(crate) fn outward(map: &ByCylinder, disk: u32, cylinder: u32)
    -> (impl Iterator<Item = (&CylKey, &ReqId)>, impl Iterator<Item = (&CylKey, &ReqId)>) {
    // Both sides from one search; the disk's own keys end each walk.
    let (up, down) = map.split_at(&(disk, cylinder, 0));
    (up.take_while(move |(k, _)| k.0 == disk), down.take_while(move |(k, _)| k.0 == disk))
}

/// Disk `disk`'s nearest requests at or above and below `cylinder` in a
/// positional index: the oldest at the nearest cylinder on each side.
pub(crate) fn nearest_on_disk(map: &ByCylinder, disk: u32, cylinder: u32) -> [Option<CylKey>; 2] {
    let (mut up, mut down) = outward(map, disk, cylinder);
    let up = up.next().map(|(k, _)| *k);
    // The nearest below is the newest at its cylinder; the oldest is the next
    // one down unless that one is at the cylinder too (then searched for: a
    // walk down a long run would cost as the run).
    let down = down.next().map(|(k, _)| *k).and_then(|newest| match down.next() {
        Some((k, _)) if k.1 == newest.1 => map.range((disk, newest.1, 0)..).next().map(|(k, _)| *k),
        _ => Some(newest),
    });
    [up, down]
}

/// What a scheduler may look at when it decides.
pub struct SchedCtx<'a> {
    /// The current simulated time.
    pub now: SimTime,
    /// Every request in the simulation, looked up by id.
    pub reqs: &'a RequestTable,
    /// The scheduler's belief of the drive's timing (positioning predictions).
    pub predictor: &'a Predictor,
    /// Where the heads are believed to be, and when they are free (over an
    /// array, disk 0's: a positional scheduler asks `head_for`).
    pub head: HeadState,
    /// At a host or controller queue over an array: each disk's believed
    /// heads, by `Request::disk`. Empty for one disk and at a drive's own
    /// queue, where `head` is the heads of every request.
    pub heads: &'a [HeadState],
    /// Blocks of placed range writes that range requests must avoid (see `host::range`).
    pub claims: &'a Claims,
    /// The drive's buffer as of now: given to the drive's own scheduler at
    /// `dispatch` (firmware knows its cache), `None` everywhere else.
    pub cache: Option<&'a crate::disk::cache::Cache>,
}

/// No claims: for contexts outside a simulation.
pub static NO_CLAIMS: Claims = Claims::new();

impl<'a> SchedCtx<'a> {
    /// A context outside a simulation (benchmarks, tests): the time is the
    /// heads' `head.time`, no range claims, no view of the drive's buffer.
    pub fn standalone(reqs: &'a RequestTable, predictor: &'a Predictor, head: HeadState) -> SchedCtx<'a> {
        SchedCtx { now: head.time, reqs, predictor, head, heads: &[], claims: &NO_CLAIMS, cache: None }
    }

    /// The heads a request on disk `disk` is judged against: that disk's
    /// believed heads over an array, `head` otherwise.
    #[inline]
    pub fn head_of(&self, disk: u32) -> &HeadState {
        self.heads.get(disk as usize).unwrap_or(&self.head)
    }

    /// The heads request `r` is judged against: its own disk's (`head_of`).
    #[inline]
    pub fn head_for(&self, r: &Request) -> &HeadState {
        self.head_of(r.disk)
    }
}

/// How much of the host's belief of the heads a scheduler reads
/// (`Scheduler::reads_heads`), least first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HeadsRead {
    /// Nothing: it orders by the requests alone.
    Nothing,
    /// The heads' cylinder (seek distance), not when or at what angle they
    /// are free: the belief need not time each command.
    Cylinder,
    /// Where and when the heads are, only to dispatch: `bypass` and
    /// `insert` read none of it, so a request's arrival needs no belief
    /// brought up to date.
    PositionToDispatch,
    /// Where and when the heads are (positioning predictions), at any call.
    Position,
}

/// A scheduling algorithm for one queue: the owner inserts requests, asks which to dispatch next, and reports completions.
pub trait Scheduler: Send {
    /// Registry name (= file name = CLI name).
    fn name(&self) -> &'static str;
    /// Called first when request `id` arrives at a host or controller level
    /// (never at a drive's queue): `true` sends it straight to the level
    /// below, past the queuing threshold, and this scheduler never sees it
    /// again (not even its completion).
    fn bypass(&self, _id: ReqId, _ctx: &SchedCtx) -> bool {
        false
    }
    /// Take request `id` (not bypassed): the scheduler owns the id until it
    /// returns it from `dispatch` or `drain`. It may read the request
    /// (`ctx.reqs`) but not change it.
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx);
    /// Called whenever the level below has room (the drive's mechanism is
    /// free, or fewer than the queuing threshold are outstanding): the
    /// request to send now, or `None` to send nothing now (then `wake_at`
    /// says when to ask again). With `force` it must return a request if it
    /// holds any (work conservation): the owner forces when nothing in
    /// flight would call again, and always at a drive's queue.
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId>;
    /// Request `id`, which this scheduler instance dispatched, finished at
    /// the disk (the id is no longer valid afterwards). Not called for
    /// requests it let bypass, nor for those a replaced instance dispatched.
    fn complete(&mut self, _id: ReqId, _ctx: &SchedCtx) {}
    /// After a `dispatch` that returned `None`: when the owner should call
    /// `dispatch` again even if nothing else happens. `None` with no wake
    /// time is allowed only while requests it dispatched are in flight
    /// (their completion calls `dispatch` again); otherwise the owner forces.
    fn wake_at(&self) -> Option<SimTime> {
        None
    }
    /// Give up every request held (run-time reconfiguration moves them to
    /// another scheduler, in arrival order, through its `insert`); the
    /// scheduler is left empty.
    fn drain(&mut self) -> Vec<ReqId>;
    /// Requests held.
    fn len(&self) -> usize;
    /// Whether it holds no request.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// At the end of a run: the algorithm's own counters, as (name, value).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Samples of the scheduler's own time-varying state up to `end`, as
    /// (time, name, value): a shaper's token rates.
    fn timeline(&mut self, _end: SimTime) -> Vec<(SimTime, String, f64)> {
        Vec::new()
    }
    /// Before the first `insert` of `flow` (GEOM's `gs_init_class`), and
    /// again if the flow comes back after `fini_class`: set up per-flow
    /// state. Called only if `uses_classes`.
    fn init_class(&mut self, _flow: u32) {}
    /// `flow` has had nothing queued here and nothing in flight from here
    /// for `host.class_expire_ms` (GEOM's `expire_secs`): free its state.
    /// Not called for flows still live at the end of the run.
    fn fini_class(&mut self, _flow: u32) {}
    /// Whether it keeps per-flow state (the owner tracks classes only then).
    fn uses_classes(&self) -> bool {
        false
    }
    /// What it reads of where the heads are believed to be (`ctx.head`,
    /// `ctx.heads`, positioning predictions) on one disk. A batch run keeps
    /// only as much belief as its schedulers read (`build::belief_read`);
    /// say `Position` unless the algorithm truly orders by request alone or
    /// by the heads' cylinder alone, or reads the heads in `dispatch` alone
    /// (`PositionToDispatch`). (Over an array the LBN-ordered ones
    /// read the heads' free times: `next_disk`.)
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::Position
    }
    /// Right after `dispatch`: cylinders the arm must visit, in order, before
    /// it serves the request just dispatched (SCAN's sweep to the edge).
    /// Honoured at a drive's queue, and at a level keeping at most one
    /// request in flight per disk below it; ignored elsewhere.
    fn travel_first(&mut self) -> Travel {
        Travel::NONE
    }
}

/// Cylinders the arm visits, in order, before it serves the request just
/// dispatched (`Scheduler::travel_first`): none, or up to two (C-SCAN: the
/// last cylinder, then the first). A value, not a `Vec`: asked at every dispatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Travel {
    cylinders: [u32; 2],
    len: u8,
}

impl Travel {
    /// No travel.
    pub const NONE: Travel = Travel { cylinders: [0; 2], len: 0 };
    /// To `cylinder`.
    pub fn to(cylinder: u32) -> Travel {
        Travel { cylinders: [cylinder, 0], len: 1 }
    }
    /// To `first`, then to `second`.
    pub fn via(first: u32, second: u32) -> Travel {
        Travel { cylinders: [first, second], len: 2 }
    }
    /// The cylinders, in order.
    pub fn cylinders(&self) -> &[u32] {
        &self.cylinders[..self.len as usize]
    }
}

/// The owner's side of `init_class` / `fini_class`: which flows a queue holds
/// requests of (queued or in flight from it), and since when the others
/// have been idle.
#[derive(Default)]
pub struct Classes {
    live: std::collections::HashMap<u32, u32>,
    idle_since: std::collections::HashMap<u32, SimTime>,
    /// (idle since, flow), oldest first.
    idle: std::collections::BTreeSet<(SimTime, u32)>,
    expire: crate::time::SimDuration,
}

impl Classes {
    /// Empty, freeing a flow's class once it has been idle for `expire`.
    pub fn new(expire: crate::time::SimDuration) -> Classes {
        Classes { expire, ..Default::default() }
    }
    /// A request of `flow` is about to be inserted into `s`, a scheduler
    /// that `uses_classes` (the owner asks once, not per request).
    pub fn enter(&mut self, s: &mut dyn Scheduler, flow: u32) {
        let n = self.live.entry(flow).or_insert(0);
        if *n == 0 {
            match self.idle_since.remove(&flow) {
                Some(t) => {
                    self.idle.remove(&(t, flow));
                }
                None => s.init_class(flow),
            }
        }
        *n += 1;
    }
    /// A request of `flow` that `s` held completed (or left) at `now`.
    #[inline]
    pub fn leave(&mut self, flow: u32, now: SimTime) {
        if self.live.is_empty() {
            return; // (no flow held: a scheduler without classes)
        }
        let Some(n) = self.live.get_mut(&flow) else { return };
        *n -= 1;
        if *n == 0 {
            self.live.remove(&flow);
            self.idle_since.insert(flow, now);
            self.idle.insert((now, flow));
        }
    }
    /// Free the flows idle for the expiry time.
    #[inline]
    pub fn expire(&mut self, s: &mut dyn Scheduler, now: SimTime) {
        if self.idle.is_empty() {
            return;
        }
        while let Some(&(t, flow)) = self.idle.first().filter(|(t, _)| *t + self.expire <= now) {
            self.idle.remove(&(t, flow));
            self.idle_since.remove(&flow);
            s.fini_class(flow);
        }
    }
    /// Forget every flow (the queue's scheduler was replaced: classes are
    /// set up again in the new one as requests come in).
    pub fn reset(&mut self) {
        *self = Classes::new(self.expire);
    }
}

/// A tunable parameter: name with its unit, bounds and default (GEOM_SCHED's {min, cur, max});
/// the same declaration as every other config value (`schema::Param`).
pub type Tunable = crate::schema::Param;

/// Tunable values after validation against the declarations.
#[derive(Clone, Debug, Default)]
pub struct Tunables(Vec<(&'static str, f64)>);

impl Tunables {
    /// Value of the declared tunable `name` (panics if it was not declared: a bug).
    pub fn get(&self, name: &str) -> f64 {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v).expect("declared tunable")
    }
}

/// One entry of the registry.
pub struct SchedInfo {
    /// Registry name, as used in configs and on the CLI.
    pub name: &'static str,
    /// Other names accepted for it (case-insensitive).
    pub aliases: &'static [&'static str],
    /// One-line description.
    pub summary: &'static str,
    /// Its tunables, declared with unit, bounds and default.
    pub tunables: &'static [Tunable],
    build: fn(&Tunables) -> Box<dyn Scheduler>,
}

pub(crate) const fn tunable(name: &'static str, unit: &'static str, min: f64, default: f64, max: f64, help: &'static str) -> Tunable {
    Tunable::float(name, unit, min, default, max, help)
}

/// Every scheduler, in the order the CLI lists them.
pub const REGISTRY: &[SchedInfo] = &[
    SchedInfo { name: "fcfs", aliases: &["fifo", "noop", "none"], summary: "first come, first served",
        tunables: &[], build: |_| Box::new(fcfs::Fcfs::default()) },
    SchedInfo { name: "sstf", aliases: &["sstf_cyl", "sstf-cyl"], summary: "shortest seek first, by cylinder distance",
        tunables: &[], build: |_| Box::new(sstf::Sstf::default()) },
    SchedInfo { name: "sstf_lbn", aliases: &["sstf-lbn"], summary: "shortest seek first, by LBN distance",
        tunables: &[], build: |_| Box::new(sstf_lbn::SstfLbn::default()) },
    SchedInfo { name: "scan", aliases: &[], summary: "SCAN: LOOK's order, but the arm sweeps to the disk's edge before turning",
        tunables: &[], build: |_| Box::new(scan::Scan::default()) },
    SchedInfo { name: "cscan", aliases: &["c-scan"], summary: "C-SCAN: C-LOOK's order, but the arm sweeps to the last cylinder and returns to the first",
        tunables: &[], build: |_| Box::new(cscan::CScan::default()) },
    SchedInfo { name: "look", aliases: &["elevator"], summary: "LOOK: sweep up and down in LBN order, turning at the last request",
        tunables: &[], build: |_| Box::new(look::Look::default()) },
    SchedInfo { name: "clook", aliases: &["c-look"], summary: "C-LOOK: ascending LBN sweeps, jump back to the lowest",
        tunables: &[], build: |_| Box::new(clook::CLook::default()) },
    SchedInfo { name: "vscan", aliases: &["v-r", "vr"], summary: "V(R): cylinder distance plus R x cylinders to reverse direction",
        tunables: vscan::TUNABLES,
        build: |t| Box::new(vscan::VScan::new(t)) },
    SchedInfo { name: "sptf", aliases: &["satf", "spf"], summary: "shortest positioning (seek + rotation) time first, via the predictor",
        tunables: &[], build: |_| Box::new(sptf::Sptf::default()) },
    SchedInfo { name: "sptf_cache", aliases: &["sptf-cache", "cache_aware_sptf"], summary: "cache-aware SPTF: in the drive, a read wholly in the buffer costs only the hit overhead",
        tunables: &[], build: |_| Box::new(sptf_cache::SptfCache::default()) },
    SchedInfo { name: "sptf_sw", aliases: &["sptf-sw", "sptf_swn"], summary: "SPTF-SWn: smallest seek among requests within n% of the shortest positioning time",
        tunables: sptf_sw::TUNABLES,
        build: |t| Box::new(sptf_sw::SptfSw::new(t)) },
    SchedInfo { name: "asptf", aliases: &["aged_sptf", "asatf"], summary: "aged SPTF: positioning time minus weight x waiting time",
        tunables: asptf::TUNABLES,
        build: |t| Box::new(asptf::Asptf::new(t)) },
    SchedInfo { name: "bsptf", aliases: &["batched_sptf"], summary: "batched SPTF: SPTF within batches of the requests pending at batch start",
        tunables: bsptf::TUNABLES,
        build: |t| Box::new(bsptf::Bsptf::new(t)) },
    SchedInfo { name: "hrs", aliases: &["range", "hierarchical_range"], summary: "range writes: SPTF where a range request counts its best start (hierarchical search)",
        tunables: &[], build: |_| Box::new(hrs::Hrs::default()) },
    SchedInfo { name: "ecs", aliases: &["expand_cancel"], summary: "range writes: one SPTF entry per acceptable start, the rest cancelled when one is chosen",
        tunables: &[], build: |_| Box::new(ecs::Ecs::default()) },
    SchedInfo { name: "edf", aliases: &[], summary: "earliest deadline first",
        tunables: edf::TUNABLES, build: |t| Box::new(edf::Edf::new(t)) },
    SchedInfo { name: "scan_edf", aliases: &["scan-edf"], summary: "SCAN-EDF: EDF, same-deadline-window requests in sweep order",
        tunables: scan_edf::TUNABLES,
        build: |t| Box::new(scan_edf::ScanEdf::new(t)) },
    SchedInfo { name: "mq_deadline", aliases: &["mq-deadline", "deadline"], summary: "Linux mq-deadline: sector-sorted batches, read/write expiry",
        tunables: mq_deadline::TUNABLES,
        build: |t| Box::new(mq_deadline::MqDeadline::new(t)) },
    SchedInfo { name: "rr", aliases: &["gsched_rr", "g_rr"], summary: "GEOM_SCHED round robin per client, C-SCAN within, with anticipation",
        tunables: rr::TUNABLES,
        build: |t| Box::new(rr::Rr::new(t)) },
    SchedInfo { name: "anticipatory", aliases: &["as"], summary: "Linux AS: read and write batches with expiry, C-LOOK within, idling briefly after a read for the same client's next one",
        tunables: anticipatory::TUNABLES,
        build: |t| Box::new(anticipatory::Anticipatory::new(t)) },
];

/// The registry entry whose name or alias is `name` (case-insensitive); an error listing the names otherwise.
pub fn lookup(name: &str) -> Result<&'static SchedInfo> {
    let key = name.to_ascii_lowercase();
    REGISTRY.iter().find(|s| s.name == key || s.aliases.contains(&key.as_str())).ok_or_else(|| {
        let names: Vec<_> = REGISTRY.iter().map(|s| s.name).collect();
        config_err("scheduler", format!("unknown scheduler '{name}' (expected one of: {})", names.join(", ")))
    })
}

/// Schedulers from outside the registry (plug-ins: the Python binding's).
/// Called with (what, name, settings) as `build_as` gets them (`what`: the
/// settings' place in the config, or the name); `None` if it knows no
/// scheduler of that name, which then goes to the registry. The factory
/// checks the settings against its own declared tunables (`check_tunables`).
pub type Factory = dyn Fn(&str, &str, &[(String, f64)]) -> Option<Result<Box<dyn Scheduler>>>;

thread_local! {
    // Per thread, like the record sink: a run is built on one thread, and
    // the factory need not be `Send` (the binding's holds Python objects).
    static FACTORY: std::cell::RefCell<Option<std::rc::Rc<Factory>>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with `factory` consulted before the registry by every `build` /
/// `build_as` on this thread (the previous factory, if any, comes back after).
pub fn with_factory<R>(factory: std::rc::Rc<Factory>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::rc::Rc<Factory>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            FACTORY.with(|s| *s.borrow_mut() = prev);
        }
    }
    let _restore = Restore(FACTORY.with(|s| s.borrow_mut().replace(factory)));
    f()
}

/// Build a scheduler by name with `key=value` settings checked against its tunables.
pub fn build(name: &str, settings: &[(String, f64)]) -> Result<Box<dyn Scheduler>> {
    build_as(None, name, settings)
}

/// `build`, with tunable errors naming `what.key` (e.g. `set.wait_ms`, the
/// key's place in the config) instead of `<scheduler>.key`.
pub fn build_as(what: Option<&str>, name: &str, settings: &[(String, f64)]) -> Result<Box<dyn Scheduler>> {
    if let Some(factory) = FACTORY.with(|s| s.borrow().clone()) {
        if let Some(built) = factory(what.unwrap_or(name), name, settings) {
            return built;
        }
    }
    let info = lookup(name)?;
    Ok((info.build)(&check_tunables(what.unwrap_or(info.name), info.tunables, settings)?))
}

/// `key=value` settings checked against `decls` (defaults for the rest);
/// errors name `what.key`, the value and the allowed range.
pub fn check_tunables(what: &str, decls: &'static [Tunable], settings: &[(String, f64)]) -> Result<Tunables> {
    let mut values: Vec<(&'static str, f64)> = decls.iter().map(|t| (t.name, t.default)).collect();
    for (key, value) in settings {
        let Some(t) = decls.iter().find(|t| t.name == key) else {
            let names: Vec<_> = decls.iter().map(|t| t.name).collect();
            return Err(config_err(format!("{what}.{key}"), format!(
                "unknown tunable (expected one of: {})", if names.is_empty() { "none".into() } else { names.join(", ") })));
        };
        t.check(what, *value)?;
        values.iter_mut().find(|(n, _)| *n == t.name).unwrap().1 = *value;
    }
    Ok(Tunables(values))
}

/// Dispatch decisions per second of a scheduler holding `depth` requests on
/// `model`: each decision dispatches one request and inserts a fresh random
/// one, the heads moving to each dispatched request. Requests are 8-block
/// reads, or with `range_blocks > 0` one-block range writes that accept any
/// block of a random `range_blocks`-block range (placed as the drive would).
/// For `disksched bench`.
pub fn dispatch_rate(name: &str, depth: usize, decisions: u64, range_blocks: u32,
                     model: std::sync::Arc<crate::disk::DiskModel>) -> Result<f64> {
    dispatch_rate_of(build(name, &[])?, depth, decisions, range_blocks, model)
}

/// `dispatch_rate` of a scheduler already built (a plug-in's).
pub fn dispatch_rate_of(mut s: Box<dyn Scheduler>, depth: usize, decisions: u64, range_blocks: u32,
                        model: std::sync::Arc<crate::disk::DiskModel>) -> Result<f64> {
    use crate::host::range::{best_start, RangeSpec, Targets};
    use crate::host::Request;
    use rand::{Rng, SeedableRng};
    let predictor = Predictor::exact(model.clone());
    let mut reqs = RequestTable::default();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    let cap = model.layout.capacity() - 8.max(range_blocks as u64);
    let mut seq = 0u64;
    let mut add = |reqs: &mut RequestTable, now: SimTime| {
        seq += 1;
        let lbn = rng.gen_range(0..cap);
        let r = if range_blocks == 0 {
            Request { seq, lbn, blocks: 8, target: predictor.target(lbn), arrival: now, ..Default::default() }
        } else {
            let spec = RangeSpec { spans: vec![(lbn, lbn + range_blocks as u64)], align_blocks: 1 };
            let range = Targets::new(&spec, 1, &model.layout).map(Box::new);
            Request { seq, lbn, blocks: 1, is_write: true, target: predictor.target(lbn), arrival: now, range, ..Default::default() }
        };
        reqs.insert(r)
    };
    let mut head = HeadState::default();
    for _ in 0..depth {
        let id = add(&mut reqs, head.time);
        s.insert(id, &SchedCtx::standalone(&reqs, &predictor, head));
    }
    let clock = std::time::Instant::now();
    for _ in 0..decisions {
        let ctx = SchedCtx::standalone(&reqs, &predictor, head);
        let id = s.dispatch(&ctx, true).ok_or_else(|| crate::error::Error::Invariant(format!(
            "{}: nothing from a forced dispatch holding {} requests", s.name(), s.len())))?;
        let r = reqs.remove(id);
        let target = match r.range.as_deref() {
            Some(t) => {
                let c = best_start(&r, t, &head, predictor.phase_at(head.time), &predictor, &NO_CLAIMS, None).expect("a start");
                predictor.target(c.lbn)
            }
            None => r.target,
        };
        head = HeadState { cylinder: target.cylinder, head: target.head, time: SimTime(head.time.0 + 5_000_000), ..Default::default() };
        let id = add(&mut reqs, head.time);
        s.insert(id, &SchedCtx::standalone(&reqs, &predictor, head));
    }
    Ok(decisions as f64 / clock.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SimRng;
    use rand::{Rng, SeedableRng};

    /// `nearest_on_disk` against a scan of every key: on each side the
    /// nearest cylinder's oldest request, through runs of several requests at
    /// one cylinder, several disks, and both of the index's forms.
    #[test]
    fn nearest_on_disk_is_each_sides_oldest_at_the_nearest_cylinder() {
        let mut rng = SimRng::seed_from_u64(3);
        for len in [5usize, 40, 1500] {
            let mut map = ByCylinder::new();
            for seq in 0..len as u64 {
                // Few cylinders: runs at one cylinder are common.
                map.insert((rng.gen_range(0..2), rng.gen_range(0..(len as u32 / 3).max(4)), seq), ReqId(seq as u32));
            }
            let keys: Vec<CylKey> = map.iter().map(|(k, _)| *k).collect();
            for _ in 0..300 {
                let (disk, c) = (rng.gen_range(0..2), rng.gen_range(0..(len as u32 / 3).max(4) + 2));
                let on = |up: bool| {
                    let side = keys.iter().filter(|k| k.0 == disk && if up { k.1 >= c } else { k.1 < c });
                    let nearest = side.clone().map(|k| k.1.abs_diff(c)).min()?;
                    side.filter(|k| k.1.abs_diff(c) == nearest).min_by_key(|k| k.2).copied()
                };
                assert_eq!(nearest_on_disk(&map, disk, c), [on(true), on(false)], "{len} keys, disk {disk}, cylinder {c}");
            }
        }
    }
}

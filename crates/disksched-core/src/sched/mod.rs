//! The scheduler contract; the algorithms, one file each, are listed by
//! name in `registry`.
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
//! `ctx.predictor`, never the simulated drive. The belief is kept only as
//! far as `reads_heads` says: a scheduler that reads the heads only to
//! dispatch is handed, at `bypass` and `insert`, the belief as it stood
//! before the command in service. At a host or controller queue
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
mod index;
mod classes;
mod registry;
pub mod sstf;
pub mod sstf_lbn;
pub mod vscan;

pub(crate) use index::*;
pub use classes::Classes;
pub use registry::*;

use crate::disk::{HeadState, Predictor};
use crate::host::range::Claims;
use crate::host::{ReqId, Request, RequestTable};
use crate::time::SimTime;

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

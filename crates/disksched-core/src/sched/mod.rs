//! The scheduler contract and the registry of algorithms.
//!
//! A `Scheduler` orders the requests of one queue: the host (device-driver)
//! queue, or the drive's own command queue. Modelled on FreeBSD's
//! `gs_scheduler.h`. The queue's owner calls, in simulated-time order:
//!
//! - `insert(id, ctx)` when a request arrives at this queue. The scheduler
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
//!
//! `ctx.head` is the predictor's belief of where the heads will be when the
//! next dispatched request starts; positional schedulers (SPTF and kin) ask
//! `ctx.predictor`, never the simulated drive. Ties are broken by arrival
//! order (`Request::seq`) so every run is deterministic.

pub mod clook;
pub mod fcfs;
pub mod sptf;
pub mod sstf;

use crate::disk::{HeadState, Predictor};
use crate::error::{config_err, Result};
use crate::host::{ReqId, RequestTable};
use crate::time::SimTime;

/// What a scheduler may look at when it decides.
pub struct SchedCtx<'a> {
    pub now: SimTime,
    pub reqs: &'a RequestTable,
    pub predictor: &'a Predictor,
    pub head: HeadState,
}

pub trait Scheduler: Send {
    /// Registry name (= file name = CLI name).
    fn name(&self) -> &'static str;
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx);
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId>;
    fn complete(&mut self, _id: ReqId, _ctx: &SchedCtx) {}
    fn wake_at(&self) -> Option<SimTime> {
        None
    }
    /// Requests held.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A tunable parameter: name with its unit, bounds and default (GEOM_SCHED's {min, cur, max}).
#[derive(Clone, Debug)]
pub struct Tunable {
    pub name: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub default: f64,
    pub max: f64,
    pub help: &'static str,
}

/// Tunable values after validation against the declarations.
#[derive(Clone, Debug, Default)]
pub struct Tunables(Vec<(&'static str, f64)>);

impl Tunables {
    pub fn get(&self, name: &str) -> f64 {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v).expect("declared tunable")
    }
}

/// One entry of the registry.
pub struct SchedInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub tunables: &'static [Tunable],
    build: fn(&Tunables) -> Box<dyn Scheduler>,
}

pub const REGISTRY: &[SchedInfo] = &[
    SchedInfo { name: "fcfs", aliases: &["fifo", "noop"], summary: "first come, first served",
        tunables: &[], build: |_| Box::new(fcfs::Fcfs::default()) },
    SchedInfo { name: "sstf", aliases: &[], summary: "shortest seek (cylinder distance) first",
        tunables: &[], build: |_| Box::new(sstf::Sstf::default()) },
    SchedInfo { name: "clook", aliases: &["c-look"], summary: "circular LOOK: ascending LBN sweeps, jump back to the lowest",
        tunables: &[], build: |_| Box::new(clook::CLook::default()) },
    SchedInfo { name: "sptf", aliases: &["satf", "spf"], summary: "shortest positioning (seek + rotation) time first, via the predictor",
        tunables: &[], build: |_| Box::new(sptf::Sptf::default()) },
];

pub fn lookup(name: &str) -> Result<&'static SchedInfo> {
    let key = name.to_ascii_lowercase();
    REGISTRY.iter().find(|s| s.name == key || s.aliases.contains(&key.as_str())).ok_or_else(|| {
        let names: Vec<_> = REGISTRY.iter().map(|s| s.name).collect();
        config_err("scheduler", format!("unknown scheduler '{name}' (expected one of: {})", names.join(", ")))
    })
}

/// Build a scheduler by name with `key=value` settings checked against its tunables.
pub fn build(name: &str, settings: &[(String, f64)]) -> Result<Box<dyn Scheduler>> {
    let info = lookup(name)?;
    let mut values: Vec<(&'static str, f64)> = info.tunables.iter().map(|t| (t.name, t.default)).collect();
    for (key, value) in settings {
        let Some(t) = info.tunables.iter().find(|t| t.name == key) else {
            let names: Vec<_> = info.tunables.iter().map(|t| t.name).collect();
            return Err(config_err(format!("{}.{key}", info.name), format!(
                "unknown tunable (expected one of: {})", if names.is_empty() { "none".into() } else { names.join(", ") })));
        };
        if !(value >= &t.min && value <= &t.max) {
            return Err(config_err(format!("{}.{key}", info.name), format!(
                "{value} {} is out of range [{}, {}]", t.unit, t.min, t.max)));
        }
        values.iter_mut().find(|(n, _)| *n == t.name).unwrap().1 = *value;
    }
    Ok((info.build)(&Tunables(values)))
}

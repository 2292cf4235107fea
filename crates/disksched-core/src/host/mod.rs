//! Requests and the table that owns them while they are in the system.

pub mod array;
pub mod range;

use crate::disk::{Service, Target};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Index of a live request in the `RequestTable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReqId(pub u32);

/// Service class, as GEOM_SCHED / QoS layers classify requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    #[default]
    BestEffort,
    RealTime,
    Background,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::RealTime, Class::BestEffort, Class::Background];
    /// The config name (as in `class = "real-time"`).
    pub fn name(self) -> &'static str {
        match self {
            Class::BestEffort => "best-effort",
            Class::RealTime => "real-time",
            Class::Background => "background",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Arrival order (unique over the run): the FIFO key and tie-breaker everywhere.
    pub seq: u64,
    pub client: u32,
    /// What a classifier sees (GEOM's flowid): the issuing process. Usually
    /// the client; one asynchronous job with many requests outstanding is
    /// many clients but one flow.
    pub flow: u32,
    pub class: Class,
    pub lbn: u64,
    pub blocks: u32,
    pub is_write: bool,
    pub deadline: Option<SimTime>,
    /// A range request: the starts it accepts. `lbn` is the first of them
    /// until the drive places it, then where it went.
    pub range: Option<Box<range::Targets>>,
    /// The disk of the array that serves it; `lbn` is a block of that disk.
    pub disk: u32,
    /// The workload's request this is (a piece of): its arrival number. Equal
    /// to `seq` unless the array split a request across disks.
    pub logical: u64,
    /// Index of the split this piece belongs to (see `sim`), if split.
    pub split: Option<u32>,
    /// The host / controller scheduler let it bypass its queue.
    pub bypassed: bool,
    pub ctl_bypassed: bool,
    /// Generation of the host / controller / drive scheduler that dispatched it (see run-time reconfiguration).
    pub host_gen: u32,
    pub ctl_gen: u32,
    pub disk_gen: u32,
    /// Where the first sector is, as the predictor believes (computed on arrival).
    pub target: Target,
    pub arrival: SimTime,
    /// Sent from the host queue on (to the controller's, if there is one).
    pub host_dispatched: SimTime,
    /// Sent to the disk.
    pub issued: SimTime,
    /// The drive began serving it.
    pub started: SimTime,
    pub service: Service,
}

impl Request {
    pub fn is_read(&self) -> bool {
        !self.is_write
    }
    /// First LBN past the request.
    pub fn end_lbn(&self) -> u64 {
        self.lbn + self.blocks as u64
    }
}

/// Slab of live requests: O(1) insert/remove, ids reused after completion.
#[derive(Default)]
pub struct RequestTable {
    slots: Vec<Request>,
    free: Vec<u32>,
    live: usize,
}

impl RequestTable {
    pub fn insert(&mut self, r: Request) -> ReqId {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = r;
            ReqId(i)
        } else {
            self.slots.push(r);
            ReqId(self.slots.len() as u32 - 1)
        }
    }
    pub fn remove(&mut self, id: ReqId) -> Request {
        self.live -= 1;
        self.free.push(id.0);
        std::mem::take(&mut self.slots[id.0 as usize])
    }
    #[inline]
    pub fn get(&self, id: ReqId) -> &Request {
        &self.slots[id.0 as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: ReqId) -> &mut Request {
        &mut self.slots[id.0 as usize]
    }
    pub fn live(&self) -> usize {
        self.live
    }
}

//! Requests and the table that owns them while they are in the system.

pub mod array;
pub mod range;

use crate::disk::layout::TrackPiece;
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
    /// Ordinary requests.
    #[default]
    BestEffort,
    /// Requests with deadlines (soft real-time streams).
    RealTime,
    /// Work that yields to everything else.
    Background,
}

impl Class {
    /// Every class, most urgent first.
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

/// A request as every queue level and the drive see it: what it asks for,
/// where it goes, and when each step happened. What a level knows of it
/// (bypassed, which scheduler dispatched it) is the level's (`sim::queue_level`).
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Arrival order (unique over the run): the FIFO key and tie-breaker everywhere.
    pub seq: u64,
    /// The workload's client that issued it (`sim::SUBMITTED`: submitted from outside).
    pub client: u32,
    /// What a classifier sees (GEOM's flowid): the issuing process. Usually
    /// the client; one asynchronous job with many requests outstanding is
    /// many clients but one flow.
    pub flow: u32,
    /// Its service class.
    pub class: Class,
    /// First block.
    pub lbn: u64,
    /// Blocks (sectors).
    pub blocks: u32,
    /// A write (else a read).
    pub is_write: bool,
    /// When it should be done, if it has a deadline.
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
    /// Where the first sector is, as the predictor believes (computed on arrival).
    pub target: Target,
    /// On arrival, when it lay on one track: its first LBN then and its track
    /// piece in the predictor's layout (the drive's, unless the belief has its own).
    pub mapped: Option<(u64, TrackPiece)>,
    /// Arrived at the host queue.
    pub arrival: SimTime,
    /// Sent from the host queue on (to the controller's, if there is one).
    pub host_dispatched: SimTime,
    /// Sent to the disk.
    pub issued: SimTime,
    /// The drive began serving it.
    pub started: SimTime,
    /// The drive's service of it (its breakdown and completion time).
    pub service: Service,
}

impl Request {
    /// Not a write.
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
    /// Add `r`; its id stays valid until `remove`.
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
    /// Take request `id` out (its id may be reused afterwards).
    pub fn remove(&mut self, id: ReqId) -> Request {
        std::mem::take(self.release(id))
    }
    /// Free request `id`'s slot and lend its request out as it was: it
    /// stays there, unmoved, until an `insert` reuses the slot (a
    /// completion reads it without copying it out).
    #[inline]
    pub fn release(&mut self, id: ReqId) -> &mut Request {
        self.live -= 1;
        self.free.push(id.0);
        &mut self.slots[id.0 as usize]
    }
    #[inline]
    /// Request `id`.
    pub fn get(&self, id: ReqId) -> &Request {
        &self.slots[id.0 as usize]
    }
    #[inline]
    /// Request `id`, to change.
    pub fn get_mut(&mut self, id: ReqId) -> &mut Request {
        &mut self.slots[id.0 as usize]
    }
    /// Requests in the table.
    pub fn live(&self) -> usize {
        self.live
    }
}

//! A host-side allocator that uses range writes: a log-structured writer
//! that fills the disk group by group. Every write (one `size_blocks` slot)
//! is sent as a range write naming every free slot of the current group; the
//! drive picks, and the completion tells the allocator where the data went,
//! which it records in its block map (write number -> LBN) and marks used in
//! its free-space bitmap. Several writes are outstanding at once and are
//! offered the same free space: the drive keeps them apart (`host::range`
//! claims). The allocator moves to the next group once the free slots of
//! this one are no more than the writes in flight; after the last group the
//! log wraps to group 0 as if a cleaner had freed the disk.
//!
//! A slot reported twice is a double allocation: the run fails with an error.

use super::{Generator, IoSpec, SimRng};
use crate::error::{config_err, Error, Result};
use crate::host::range::RangeSpec;
use crate::host::Class;
use crate::schema::Param;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

const SIZE_BLOCKS: Param = Param::int("size_blocks", "blocks", 1.0, 8.0, 65536.0, "write size = allocation slot");
const FIRST_GROUP: Param = Param::int("first_group", "", 0.0, 0.0, u64::MAX as f64, "the group the log starts in, on the disk");

/// `kind = "range-alloc"` keys.
pub const PARAMS: &[Param] = &[
    super::range_writes::OUTSTANDING,
    SIZE_BLOCKS,
    Param::int("group_blocks", "blocks", 1.0, 4096.0, u64::MAX as f64,
        "blocks of a group: a multiple of size_blocks, at most the disk, more slots than writes outstanding"),
    FIRST_GROUP,
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "range-alloc"`: a log-structured allocator using range writes (see the module doc).
pub struct RangeAllocConfig {
    /// Writes kept outstanding (closed-loop writers).
    pub outstanding: u32,
    /// Write size = allocation slot, blocks.
    #[serde(default = "eight")]
    pub size_blocks: u32,
    #[serde(default = "group_blocks")]
    /// Blocks of a group (default 4096).
    pub group_blocks: u64,
    #[serde(default)]
    /// The group the log starts in (default 0).
    pub first_group: u64,
}

fn eight() -> u32 {
    8
}
fn group_blocks() -> u64 {
    4096
}

/// The range-alloc generator.
pub struct RangeAlloc {
    cfg: RangeAllocConfig,
    groups: u64,
    slots_per_group: u64,
    /// One bit per slot of the disk: allocated.
    used: Vec<u64>,
    group: u64,
    free_in_group: u64,
    in_flight_in_group: u64,
    /// Write number -> LBN where it went (u64::MAX until placed).
    pub block_map: Vec<u64>,
    /// The write each client has outstanding.
    current: Vec<usize>,
    error: Option<Error>,
}

impl RangeAlloc {
    /// A generator for a disk of `capacity` blocks; an error names any key out of bounds.
    pub fn new(cfg: RangeAllocConfig, capacity: u64) -> Result<RangeAlloc> {
        super::range_writes::OUTSTANDING.check_count("workload", cfg.outstanding as u64)?;
        SIZE_BLOCKS.check_count("workload", cfg.size_blocks as u64)?;
        let size = cfg.size_blocks as u64;
        if !(cfg.group_blocks >= size && cfg.group_blocks % size == 0 && cfg.group_blocks <= capacity) {
            return Err(config_err("workload.group_blocks", format!(
                "{} must be a multiple of size_blocks ({size}) no larger than the disk ({capacity})", cfg.group_blocks)));
        }
        let slots_per_group = cfg.group_blocks / size;
        if slots_per_group <= cfg.outstanding as u64 {
            return Err(config_err("workload.group_blocks", format!(
                "{} holds {slots_per_group} slots: more than the {} writes outstanding are needed", cfg.group_blocks, cfg.outstanding)));
        }
        let groups = capacity / cfg.group_blocks;
        FIRST_GROUP.check_count_within("workload", cfg.first_group, 0.0, (groups - 1) as f64)?;
        Ok(RangeAlloc {
            used: vec![0; (groups * slots_per_group).div_ceil(64) as usize],
            group: cfg.first_group,
            free_in_group: slots_per_group,
            in_flight_in_group: 0,
            block_map: Vec::new(),
            current: vec![0; cfg.outstanding as usize],
            error: None,
            groups,
            slots_per_group,
            cfg,
        })
    }

    fn is_used(&self, slot: u64) -> bool {
        self.used[(slot / 64) as usize] & (1 << (slot % 64)) != 0
    }

    /// The next group with room, wrapping (and freeing the disk) after the last.
    fn advance(&mut self) {
        self.group += 1;
        if self.group == self.groups {
            self.group = 0;
            self.used.iter_mut().for_each(|w| *w = 0);
        }
        let first = self.group * self.slots_per_group;
        self.free_in_group = (first..first + self.slots_per_group).filter(|&s| !self.is_used(s)).count() as u64;
        self.in_flight_in_group = 0;
    }
}

impl Generator for RangeAlloc {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        (0..self.cfg.outstanding).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        while self.free_in_group <= self.in_flight_in_group {
            self.advance();
        }
        self.in_flight_in_group += 1;
        // Every free slot of the group, as maximal runs of blocks.
        let size = self.cfg.size_blocks as u64;
        let first = self.group * self.slots_per_group;
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for s in (first..first + self.slots_per_group).filter(|&s| !self.is_used(s)) {
            match spans.last_mut() {
                Some(last) if last.1 == s * size => last.1 += size,
                _ => spans.push((s * size, (s + 1) * size)),
            }
        }
        self.current[client as usize] = self.block_map.len();
        self.block_map.push(u64::MAX);
        let range = RangeSpec { spans, align_blocks: self.cfg.size_blocks };
        Some((IoSpec { lbn: 0, blocks: self.cfg.size_blocks, is_write: true, class: Class::BestEffort, deadline: None, range: Some(range), flow: None }, None))
    }
    fn placed(&mut self, client: u32, lbn: u64, _blocks: u32) {
        let slot = lbn / self.cfg.size_blocks as u64;
        if self.is_used(slot) && self.error.is_none() {
            self.error = Some(Error::Invariant(format!("range-alloc: slot at LBN {lbn} allocated twice")));
        }
        self.used[(slot / 64) as usize] |= 1 << (slot % 64);
        if slot / self.slots_per_group == self.group {
            self.free_in_group -= 1;
            self.in_flight_in_group -= 1;
        }
        self.block_map[self.current[client as usize]] = lbn;
    }
    fn completed(&mut self, now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        Some(now)
    }
    fn clients(&self) -> u32 {
        self.cfg.outstanding
    }
    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}

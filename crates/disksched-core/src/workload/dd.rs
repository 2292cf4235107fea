//! Greedy dd-like streams: each of `jobs` jobs reads (or writes) the disk
//! sequentially in `request_kb` requests with no think time, keeping `depth`
//! requests outstanding: depth 1 is synchronous `dd` (the next request is
//! issued the moment the previous one completes), depth N is asynchronous
//! I/O (`fio --ioengine=libaio --iodepth=N --rw=read`). Job 0 starts at
//! `start_lbn` if given, the others at random request-aligned blocks; a job
//! wraps to block 0 at the end of the disk.

use super::{one, kb_to_blocks, Generator, IoSpec, SimRng};
use crate::error::Result;
use crate::schema::Param;
use crate::host::Class;
use crate::time::SimTime;
use rand::Rng;
use serde::{Deserialize, Serialize};

const DEPTH: Param = Param::int("depth", "requests", 1.0, 1.0, 1024.0, "requests each job keeps outstanding (1 = synchronous)");
const JOBS: Param = Param::int("jobs", "jobs", 1.0, 1.0, 1024.0, "sequential jobs");

/// `kind = "dd"` keys.
pub const PARAMS: &[Param] = &[super::REQUEST_KB, DEPTH, JOBS, super::WRITE, super::START_LBN];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "dd"`: greedy sequential jobs (see the module doc).
pub struct DdConfig {
    /// Request size, KB.
    pub request_kb: f64,
    /// Requests each job keeps outstanding (1 = synchronous).
    #[serde(default = "one")]
    pub depth: u32,
    #[serde(default = "one")]
    /// Sequential jobs (default 1).
    pub jobs: u32,
    #[serde(default)]
    /// Writes instead of reads.
    pub write: bool,
    #[serde(default)]
    /// First block of job 0; random if absent.
    pub start_lbn: Option<u64>,
}

/// The dd generator.
pub struct Dd {
    cfg: DdConfig,
    capacity: u64,
    blocks: u64,
    /// Next block per job; client c belongs to job c / depth.
    next_lbn: Vec<u64>,
}

impl Dd {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: DdConfig, capacity: u64, sector_bytes: u32) -> Result<Dd> {
        let blocks = kb_to_blocks("workload.request_kb", cfg.request_kb, sector_bytes, capacity)?;
        DEPTH.check_count("workload", cfg.depth as u64)?;
        JOBS.check_count("workload", cfg.jobs as u64)?;
        super::check_start_lbn(cfg.start_lbn, blocks, capacity)?;
        Ok(Dd { cfg, capacity, blocks, next_lbn: vec![] })
    }
}

impl Generator for Dd {
    /// A job's `depth` outstanding requests are one process: one flow.
    fn flow(&self, client: u32) -> u32 {
        client / self.cfg.depth * self.cfg.depth
    }
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let slots = self.capacity / self.blocks;
        self.next_lbn = (0..self.cfg.jobs)
            .map(|j| match (j, self.cfg.start_lbn) {
                (0, Some(l)) => l,
                _ => rng.gen_range(0..slots) * self.blocks,
            })
            .collect();
        (0..self.clients()).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let next = &mut self.next_lbn[(client / self.cfg.depth) as usize];
        if *next + self.blocks > self.capacity {
            *next = 0;
        }
        let io = IoSpec { lbn: *next, blocks: self.blocks as u32, is_write: self.cfg.write, class: Class::BestEffort, deadline: None, range: None, flow: None };
        *next += self.blocks;
        Some((io, None))
    }
    /// Greedy: the slot is refilled the moment it frees.
    fn completed(&mut self, now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        Some(now)
    }
    fn clients(&self) -> u32 {
        self.cfg.jobs * self.cfg.depth
    }
}

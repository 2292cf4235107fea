//! Synthetic workload generators.
//!
//! A generator owns a set of clients. The simulation asks it for the initial
//! arrivals, then calls `arrive` when a client's request is due (the
//! generator describes the request and, for open-loop clients, when the next
//! one is due) and `completed` when a client's request finishes (closed-loop
//! clients answer with the time of their next request).

pub mod closed;
pub mod dd;
pub mod fio_job;
pub mod hotcold;
pub mod local;
pub mod mix;
pub mod onoff;
pub mod open;
pub mod plugin;
pub mod range_alloc;
pub mod range_writes;
pub mod replay;
pub mod schedule;
pub mod sequential;
pub mod stream;
pub mod strided;

use crate::error::{config_err, Result};
use crate::host::range::RangeSpec;
use crate::host::Class;
use crate::time::{SimDuration, SimTime};
use rand::Rng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

pub use crate::rng::SimRng;

/// One request as a workload describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct IoSpec {
    /// First block.
    pub lbn: u64,
    /// Length, blocks.
    pub blocks: u32,
    /// A write.
    pub is_write: bool,
    /// Service class.
    pub class: Class,
    /// Absolute deadline, if the request has one.
    pub deadline: Option<SimTime>,
    /// A range request: where it may go (`lbn` is then ignored).
    pub range: Option<RangeSpec>,
    /// The flow, when the workload knows it per request (a classified
    /// trace); else the client's (`Generator::flow`).
    pub flow: Option<u32>,
}

/// A source of requests: decides when each client's requests arrive and what they are.
pub trait Generator: Send {
    /// Initial arrivals as (time, client).
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)>;
    /// `client`'s request is due now: describe it, and give the client's next
    /// arrival if it is open-loop. `None`: the generator has no more requests.
    fn arrive(&mut self, now: SimTime, client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)>;
    /// `client`'s request completed now: its next arrival if it is closed-loop.
    fn completed(&mut self, now: SimTime, client: u32, rng: &mut SimRng) -> Option<SimTime>;
    /// `client`'s range request was placed at `lbn` (called at its
    /// completion, before `completed`): where the drive put it.
    fn placed(&mut self, _client: u32, _lbn: u64, _blocks: u32) {}
    /// Number of clients (client ids are 0..clients).
    fn clients(&self) -> u32;
    /// The flow (issuing process) of `client`; by default each client is one.
    fn flow(&self, client: u32) -> u32 {
        client
    }
    /// An error that stopped the generator (e.g. a malformed trace line).
    fn take_error(&mut self) -> Option<crate::error::Error> {
        None
    }
    /// Malformed input lines skipped (trace replay with skip_bad_lines).
    fn bad_lines_skipped(&self) -> u64 {
        0
    }
}

/// Workload section of a run config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Open-loop arrivals, uniform random starts.
    Open(open::OpenConfig),
    /// Closed-loop clients with a think time, uniform random starts.
    Closed(closed::ClosedConfig),
    /// Sequential streams, closed-loop.
    Sequential(sequential::SequentialConfig),
    /// Requests from a trace file.
    Trace(replay::ReplayConfig),
    /// The freeblock paper's OLTP foreground: 10 clients, 30 ms think time,
    /// 2:1 reads, exponential sizes (mean 8 KB) in 4 KB multiples, uniform.
    /// Fixed: it takes no fields (a `closed` workload varies them).
    Oltp(OltpConfig),
    /// Strided streams: `request_kb` every `stride_kb`.
    Strided(strided::StridedConfig),
    /// Closed-loop clients whose requests start near their previous one.
    Local(local::LocalConfig),
    /// Hot/cold skew: a share of the disk receives a share of the requests.
    Hotcold(hotcold::HotColdConfig),
    /// On/off bursts (a two-state Markov-modulated Poisson source).
    Onoff(onoff::OnOffConfig),
    /// Piecewise-constant Poisson rate over time.
    Schedule(schedule::ScheduleConfig),
    /// Greedy sequential jobs, `depth` requests outstanding each.
    Dd(dd::DdConfig),
    /// Constant-rate periodic readers with per-request deadlines (soft real time).
    Stream(stream::StreamConfig),
    /// Several workloads at once, each with its own clients and class.
    Mix(mix::MixConfig),
    /// Randomized range writes (Anand et al. 2008).
    RangeWrites(range_writes::RangeWritesConfig),
    /// A log-structured allocator that hands the drive every free slot of a group.
    RangeAlloc(range_alloc::RangeAllocConfig),
    /// A workload plug-in provided by the caller (Python), by name.
    Plugin(plugin::PluginConfig),
    /// The jobs of a fio job file (`job = "job.fio"`).
    Fio(fio_job::FioConfig),
}

impl WorkloadConfig {
    /// Whether its requests may be range requests (placed from the heads at
    /// dispatch): a mix or a plug-in may hold any workload. Every kind is named,
    /// so a new one must say.
    pub fn may_make_ranges(&self) -> bool {
        match self {
            WorkloadConfig::RangeWrites(_) | WorkloadConfig::RangeAlloc(_) | WorkloadConfig::Mix(_) | WorkloadConfig::Plugin(_) => true,
            WorkloadConfig::Open(_) | WorkloadConfig::Closed(_) | WorkloadConfig::Sequential(_) | WorkloadConfig::Trace(_)
            | WorkloadConfig::Oltp(_) | WorkloadConfig::Strided(_) | WorkloadConfig::Local(_) | WorkloadConfig::Hotcold(_)
            | WorkloadConfig::Onoff(_) | WorkloadConfig::Schedule(_) | WorkloadConfig::Dd(_) | WorkloadConfig::Stream(_)
            | WorkloadConfig::Fio(_) => false,
        }
    }

    /// The generator this config describes, for a disk of `capacity_blocks` blocks of `sector_bytes`; relative trace paths resolve against `base_dir`.
    pub fn build(&self, capacity_blocks: u64, sector_bytes: u32, base_dir: Option<&std::path::Path>) -> Result<Box<dyn Generator>> {
        Ok(match self {
            WorkloadConfig::Open(c) => Box::new(open::Open::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Closed(c) => Box::new(closed::Closed::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Sequential(c) => Box::new(sequential::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Trace(c) => Box::new(replay::Replay::new(c.clone(), capacity_blocks, base_dir)?),
            WorkloadConfig::Oltp(_) => Box::new(closed::Closed::new(closed::ClosedConfig::oltp(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Strided(c) => Box::new(strided::Strided::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Local(c) => Box::new(local::Local::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Hotcold(c) => Box::new(hotcold::HotCold::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Onoff(c) => Box::new(onoff::OnOff::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Schedule(c) => Box::new(schedule::Schedule::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Dd(c) => Box::new(dd::Dd::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Stream(c) => Box::new(stream::Stream::new(c.clone(), capacity_blocks, sector_bytes)?),
            WorkloadConfig::Mix(c) => Box::new(mix::Mix::new(c, capacity_blocks, sector_bytes, base_dir)?),
            WorkloadConfig::RangeWrites(c) => Box::new(range_writes::RangeWrites::new(c.clone(), capacity_blocks)?),
            WorkloadConfig::RangeAlloc(c) => Box::new(range_alloc::RangeAlloc::new(c.clone(), capacity_blocks)?),
            WorkloadConfig::Plugin(c) => plugin::build(c, capacity_blocks, sector_bytes)?,
            WorkloadConfig::Fio(c) => Box::new(fio_job::FioJobs::new(c, capacity_blocks, sector_bytes, base_dir)?),
        })
    }
}

use crate::schema::{Param, Ty};

/// The longest simulated time a config may name, ms.
pub use crate::time::MAX_TIME_MS;

/// `clients`: closed-loop clients.
pub const CLIENTS: Param = Param::int("clients", "clients", 1.0, 1.0, 1_000_000.0, "closed-loop clients");
/// `streams`: streams, each its own client.
pub const STREAMS: Param = Param::int("streams", "streams", 1.0, 1.0, 100_000.0, "streams, each its own client");
/// `think_time_ms`: mean time between a completion and the client's next request, ms.
pub const THINK_TIME_MS: Param = Param::float("think_time_ms", "ms", 0.0, 0.0, MAX_TIME_MS,
    "mean time between a completion and the client's next request");
/// `think_dist`: think-time distribution.
pub const THINK_DIST: Param = Param::other("think_dist", Ty::Choice(&["constant", "exponential"]), "constant", "think-time distribution");
/// `write`: writes instead of reads.
pub const WRITE: Param = Param::other("write", Ty::Bool, "false", "writes instead of reads");
/// `request_kb`: request size, KB.
pub const REQUEST_KB: Param = Param::float("request_kb", "KB", 0.0, f64::NAN, 262_144.0,
    "request size: a whole number of blocks, at most 65536 blocks and the disk").open_min().default_text("required");
/// `start_lbn`: first block of stream 0.
pub const START_LBN: Param = Param::int("start_lbn", "block", 0.0, f64::NAN, u64::MAX as f64,
    "first block of stream (job) 0, the request must fit on the disk; the others start at random").default_text("absent: random");
/// `size_kb`: constant size or exponential mean, KB.
pub const SIZE_KB: Param = Param::float("size_kb", "KB", 0.0, 4.0, 262_144.0,
    "constant size, or the mean of the exponential; at most 65536 blocks").open_min();
/// `size_multiple_kb`: size and alignment unit, KB.
pub const SIZE_MULTIPLE_KB: Param = Param::float("size_multiple_kb", "KB", 0.0, 4.0, 262_144.0,
    "sizes are rounded up to a multiple of this, and starts aligned to it: a whole number of blocks").open_min();
/// `read_fraction`: fraction of requests that are reads.
pub const READ_FRACTION: Param = Param::float("read_fraction", "", 0.0, 2.0 / 3.0, 1.0, "fraction of requests that are reads");

/// `RandomIo`'s keys, taken by every random generator.
pub const RANDOM_IO_PARAMS: &[Param] = &[
    SIZE_KB,
    Param::other("size_dist", Ty::Choice(&["constant", "exponential"]), "constant", "request size distribution"),
    SIZE_MULTIPLE_KB,
    READ_FRACTION,
];

/// Every workload kind: (name, summary, its keys); the reference lists them.
pub const KINDS: &[(&str, &str, &[&[Param]])] = &[
    ("open", "Open-loop arrivals (Poisson or constant gaps), uniform random starts.", &[open::PARAMS, RANDOM_IO_PARAMS]),
    ("closed", "Closed-loop clients with a think time, uniform random starts.", &[closed::PARAMS, RANDOM_IO_PARAMS]),
    ("sequential", "Sequential streams, closed-loop.", &[sequential::PARAMS]),
    ("trace", "Requests from a trace file.", &[replay::PARAMS]),
    ("oltp", "The freeblock paper's OLTP foreground: 10 clients, 30 ms think time, 2:1 reads, exponential sizes (mean 8 KB) in 4 KB multiples. Fixed.", &[]),
    ("strided", "Strided streams: `request_kb` every `stride_kb`.", &[strided::PARAMS]),
    ("local", "Closed-loop clients whose requests start near their previous one.", &[local::PARAMS, RANDOM_IO_PARAMS]),
    ("hotcold", "Hot/cold skew: a share of the disk receives a share of the requests.", &[hotcold::PARAMS, RANDOM_IO_PARAMS]),
    ("onoff", "On/off bursts (a two-state Markov-modulated Poisson source).", &[onoff::PARAMS, RANDOM_IO_PARAMS]),
    ("schedule", "Piecewise-constant Poisson rate over time.", &[schedule::PARAMS, RANDOM_IO_PARAMS]),
    ("dd", "Greedy sequential jobs, `depth` requests outstanding each.", &[dd::PARAMS]),
    ("stream", "Constant-rate readers with per-request deadlines (soft real time).", &[stream::PARAMS]),
    ("mix", "Several workloads at once, each with its own clients and class.", &[mix::PARAMS]),
    ("range-writes", "Randomized range writes (Anand et al. 2008).", &[range_writes::PARAMS]),
    ("range-alloc", "A log-structured allocator that hands the drive every free slot of a group.", &[range_alloc::PARAMS]),
    ("plugin", "A workload plug-in by name (Python `disksched.Workload`; docs/writing-a-scheduler.md).", &[plugin::PARAMS]),
    ("fio", "The jobs of a fio job file: rw, rwmixread, bs, iodepth, numjobs, size, offset, runtime, number_ios, randrepeat, randseed.", &[fio_job::PARAMS]),
];

/// `kind = "oltp"` takes no fields; this refuses any (a unit variant would
/// silently ignore `clients` or `think_time_ms`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OltpConfig {}

/// Request sizes: constant, or exponential rounded up to a multiple.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeDist {
    /// Every request `size_kb`.
    Constant,
    /// Exponential with mean `size_kb`, rounded up to a multiple of `size_multiple_kb`.
    Exponential,
}

/// Sizes and addresses shared by the random generators.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomIo {
    /// Constant size, or the mean of the exponential, KB.
    #[serde(default = "default_size_kb")]
    pub size_kb: f64,
    #[serde(default = "default_size_dist")]
    /// Constant or exponential sizes.
    pub size_dist: SizeDist,
    /// Sizes are rounded up to a multiple of this, and start blocks aligned to it, KB.
    #[serde(default = "default_multiple_kb")]
    pub size_multiple_kb: f64,
    /// Fraction of requests that are reads.
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
}

fn default_size_kb() -> f64 {
    4.0
}
fn default_size_dist() -> SizeDist {
    SizeDist::Constant
}
fn default_multiple_kb() -> f64 {
    4.0
}
fn default_read_fraction() -> f64 {
    2.0 / 3.0
}

/// Sampler built from a validated `RandomIo`.
#[derive(Clone, Debug)]
pub(crate) struct RandomIoSampler {
    capacity: u64,
    unit_blocks: u64,
    const_units: u64,
    exp_units: Option<Exp<f64>>,
    read_fraction: f64,
}

impl RandomIoSampler {
    pub fn new(c: &RandomIo, capacity: u64, sector_bytes: u32, what: &str) -> Result<RandomIoSampler> {
        let blocks_per_kb = 1024.0 / sector_bytes as f64;
        SIZE_MULTIPLE_KB.check(what, c.size_multiple_kb)?;
        let unit = c.size_multiple_kb * blocks_per_kb;
        if !(unit >= 1.0 && unit.fract() == 0.0) {
            return Err(config_err(format!("{what}.size_multiple_kb"), format!(
                "{} KB is not a positive whole number of {sector_bytes}-byte blocks", c.size_multiple_kb)));
        }
        SIZE_KB.check_within(what, c.size_kb, 0.0, 65536.0 / blocks_per_kb)?;
        READ_FRACTION.check(what, c.read_fraction)?;
        let unit_blocks = unit as u64;
        let mean_units = c.size_kb * blocks_per_kb / unit;
        Ok(RandomIoSampler {
            capacity,
            unit_blocks,
            const_units: (mean_units.ceil() as u64).max(1),
            exp_units: (c.size_dist == SizeDist::Exponential).then(|| Exp::new(1.0 / mean_units).expect("positive rate")),
            read_fraction: c.read_fraction,
        })
    }

    /// Size unit (and start alignment), blocks.
    pub fn unit_blocks(&self) -> u64 {
        self.unit_blocks
    }

    /// Like `sample`, but the start block is uniform over the aligned blocks
    /// in `[lo, hi)` where the request still fits on the disk (the request
    /// may extend past `hi`; if nothing fits, the aligned block nearest `lo`).
    pub fn sample_in(&self, rng: &mut SimRng, lo: u64, hi: u64) -> IoSpec {
        let blocks = self.draw_blocks(rng);
        let u = self.unit_blocks;
        let first = lo.div_ceil(u);
        let last = (hi.saturating_sub(1).min(self.capacity - blocks)) / u;
        let lbn = if last >= first { rng.gen_range(first..last + 1) * u } else { first.min((self.capacity - blocks) / u) * u };
        let is_write = rng.gen::<f64>() >= self.read_fraction;
        IoSpec { lbn, blocks: blocks as u32, is_write, class: Class::BestEffort, deadline: None, range: None, flow: None }
    }

    /// A size (blocks) and direction, for generators that choose addresses themselves.
    pub fn sample_size(&self, rng: &mut SimRng) -> (u32, bool) {
        let blocks = self.draw_blocks(rng);
        (blocks as u32, rng.gen::<f64>() >= self.read_fraction)
    }

    fn draw_blocks(&self, rng: &mut SimRng) -> u64 {
        let units = match &self.exp_units {
            Some(e) => (e.sample(rng).ceil() as u64).max(1),
            None => self.const_units,
        };
        (units * self.unit_blocks).min(self.capacity)
    }

    pub fn sample(&self, rng: &mut SimRng) -> IoSpec {
        let units = match &self.exp_units {
            // Round up to a whole multiple: a draw of 0.3 units is one unit.
            Some(e) => (e.sample(rng).ceil() as u64).max(1),
            None => self.const_units,
        };
        let blocks = (units * self.unit_blocks).min(self.capacity);
        let slots = (self.capacity - blocks) / self.unit_blocks + 1;
        let lbn = rng.gen_range(0..slots) * self.unit_blocks;
        let is_write = rng.gen::<f64>() >= self.read_fraction;
        IoSpec { lbn, blocks: blocks as u32, is_write, class: Class::BestEffort, deadline: None, range: None, flow: None }
    }
}

/// Draw a think time or inter-arrival time with the given mean.
pub(crate) fn draw_interval(mean_ms: f64, exponential: bool, rng: &mut SimRng) -> SimDuration {
    if exponential && mean_ms > 0.0 {
        SimDuration::from_ms(Exp::new(1.0 / mean_ms).expect("positive rate").sample(rng))
    } else {
        SimDuration::from_ms(mean_ms)
    }
}

/// Inter-arrival / think-time distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalDist {
    #[default]
    /// Every interval equals the mean.
    Constant,
    #[serde(alias = "poisson")]
    /// Exponential intervals (Poisson arrivals); `poisson` is accepted too.
    Exponential,
}

/// Serde default for counts that default to one (streams, clients, depth).
pub(crate) fn one() -> u32 {
    1
}

/// A number as a person reads it (see `schema::num`).
pub(crate) fn num(v: f64) -> String {
    crate::schema::num(v)
}

/// A request size in KB as whole blocks, 1..=min(65536, capacity).
pub(crate) fn kb_to_blocks(what: &str, kb: f64, sector_bytes: u32, capacity: u64) -> Result<u64> {
    let blocks = kb * 1024.0 / sector_bytes as f64;
    if blocks >= 1.0 && blocks.fract() == 0.0 && (blocks as u64) <= capacity.min(65536) {
        Ok(blocks as u64)
    } else {
        Err(config_err(what, format!("{kb} KB is not a whole number of {sector_bytes}-byte blocks between 1 and {}", capacity.min(65536))))
    }
}

/// `workload.start_lbn`: a request of `blocks` from it must fit on the disk.
pub(crate) fn check_start_lbn(start_lbn: Option<u64>, blocks: u64, capacity: u64) -> Result<()> {
    match start_lbn {
        Some(s) => START_LBN.check_count_within("workload", s, 0.0, (capacity - blocks) as f64).map(drop),
        None => Ok(()),
    }
}

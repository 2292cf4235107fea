//! Spatial locality: each closed-loop client's request starts near its
//! previous one. The distance (start to start) is drawn from an exponential
//! with mean `mean_distance_kb`, or a half-normal with that mean, rounded to
//! the size unit, with a random sign; a step that would leave the disk goes
//! the other way instead (so |distance| keeps its distribution). The first
//! request of a client is uniform over the disk. Sizes and read/write as
//! `RandomIo` (Ruemmler & Wilkes' observation that most requests are close
//! to the previous one of the same stream).

use super::{one, draw_interval, Generator, IntervalDist, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::Result;
use crate::host::Class;
use crate::schema::{Param, Ty};
use crate::time::SimTime;
use rand::Rng;
use rand_distr::{Distribution, Exp, Normal};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// Distribution of the distance between a client's consecutive starts.
pub enum DistanceDist {
    /// Exponential with mean `mean_distance_kb`.
    Exponential,
    /// |N(0, sigma)| with sigma chosen so the mean is `mean_distance_kb`.
    Normal,
}

const MEAN_DISTANCE_KB: Param = Param::float("mean_distance_kb", "KB", 0.0, f64::NAN, 1e12,
    "mean |start - previous start|, at most the disk's size").default_text("required");

/// `kind = "local"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[
    super::CLIENTS, super::THINK_TIME_MS, super::THINK_DIST, MEAN_DISTANCE_KB,
    Param::other("distance_dist", Ty::Choice(&["exponential", "normal"]), "exponential", "distance distribution (normal: half-normal with that mean)"),
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "local"`: closed-loop clients whose requests start near their previous one.
pub struct LocalConfig {
    #[serde(default = "one")]
    /// Closed-loop clients (default 1).
    pub clients: u32,
    #[serde(default)]
    /// Mean think time between a completion and the client's next request, ms.
    pub think_time_ms: f64,
    #[serde(default)]
    /// Think-time distribution (default constant).
    pub think_dist: IntervalDist,
    /// Mean |start - previous start|, KB.
    pub mean_distance_kb: f64,
    #[serde(default = "exponential")]
    /// Distance distribution (default exponential).
    pub distance_dist: DistanceDist,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

fn exponential() -> DistanceDist {
    DistanceDist::Exponential
}

enum Dist {
    Exp(Exp<f64>),
    HalfNormal(Normal<f64>),
    Zero,
}

/// The local generator.
pub struct Local {
    cfg: LocalConfig,
    io: RandomIoSampler,
    capacity: u64,
    dist: Dist,
    /// Previous start block per client (None before its first request).
    prev: Vec<Option<u64>>,
}

impl Local {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: LocalConfig, capacity: u64, sector_bytes: u32) -> Result<Local> {
        super::CLIENTS.check_count("workload", cfg.clients as u64)?;
        super::THINK_TIME_MS.check("workload", cfg.think_time_ms)?;
        // A mean distance beyond the disk is meaningless (and past f64's range, not a distribution).
        let disk_kb = capacity as f64 * sector_bytes as f64 / 1024.0;
        MEAN_DISTANCE_KB.check_within("workload", cfg.mean_distance_kb, 0.0, disk_kb)?;
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        let mean_blocks = cfg.mean_distance_kb * 1024.0 / sector_bytes as f64;
        let dist = match (mean_blocks > 0.0, cfg.distance_dist) {
            (false, _) => Dist::Zero,
            (true, DistanceDist::Exponential) => Dist::Exp(Exp::new(1.0 / mean_blocks).expect("positive rate")),
            // E|N(0, s)| = s * sqrt(2 / pi).
            (true, DistanceDist::Normal) => {
                Dist::HalfNormal(Normal::new(0.0, mean_blocks * (std::f64::consts::PI / 2.0).sqrt()).expect("finite sigma"))
            }
        };
        Ok(Local { prev: vec![None; cfg.clients as usize], cfg, io, capacity, dist })
    }
}

impl Generator for Local {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        (0..self.cfg.clients).map(|c| (SimTime::ZERO, c)).collect()
    }
    fn arrive(&mut self, _now: SimTime, client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let Some(prev) = self.prev[client as usize] else {
            let io = self.io.sample(rng);
            self.prev[client as usize] = Some(io.lbn);
            return Some((io, None));
        };
        let (blocks, is_write) = self.io.sample_size(rng);
        let unit = self.io.unit_blocks() as f64;
        let d = match &self.dist {
            Dist::Exp(e) => e.sample(rng),
            Dist::HalfNormal(n) => n.sample(rng).abs(),
            Dist::Zero => 0.0,
        };
        let step = ((d / unit).round() * unit) as u64;
        let u = self.io.unit_blocks();
        let top = (self.capacity - blocks as u64) / u * u; // highest aligned start that fits
        let up = rng.gen::<bool>();
        let lbn = match (up, prev.checked_add(step).filter(|&l| l <= top), prev.checked_sub(step)) {
            (true, Some(l), _) | (false, _, Some(l)) => l,
            (true, None, Some(l)) | (false, Some(l), None) => l,
            // Farther than the disk allows either way: the nearest end.
            (true, None, None) => top,
            (false, None, None) => 0,
        };
        let lbn = lbn.min(top);
        self.prev[client as usize] = Some(lbn);
        Some((IoSpec { lbn, blocks, is_write, class: Class::BestEffort, deadline: None, range: None, flow: None }, None))
    }
    fn completed(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<SimTime> {
        Some(now + draw_interval(self.cfg.think_time_ms, self.cfg.think_dist == IntervalDist::Exponential, rng))
    }
    fn clients(&self) -> u32 {
        self.cfg.clients
    }
}

//! A non-stationary Poisson source: the arrival rate is piecewise constant
//! over simulated time, `rates = [[start_ms, rate_per_s], ...]` (the first
//! piece starts at 0; each lasts until the next one starts; the last lasts
//! for the rest of the run). A rate of 0 is an idle piece. For overload
//! studies (Riska & Riedel's transient overload). Sizes and addresses as
//! `RandomIo`.

use super::{Generator, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::{config_err, Result};
use crate::schema::{Param, Ty};
use crate::time::{SimTime, NS_PER_MS, NS_PER_S};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

const PIECES: Param = Param::int("rates", "pieces", 1.0, f64::NAN, 100_000.0, "");
/// A piece's rate: 0 (idle) or at least the rate `onoff` accepts.
const RATE_PER_S: Param = Param::float("rate_per_s", "requests/s", 1e-6, f64::NAN, 1e9, "").or_zero();

/// `kind = "schedule"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[Param::other("rates", Ty::List, "required",
    "`[[start_ms, rate_per_s], ...]`: 1 to 100000 pieces; starts increase from 0 (finite ms); each rate_per_s 0 (idle) or [1e-6, 1e9]")];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "schedule"`: Poisson arrivals at a piecewise-constant rate.
pub struct ScheduleConfig {
    /// `[start_ms, rate_per_s]` pairs, starts increasing from 0.
    pub rates: Vec<[f64; 2]>,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

/// The schedule generator.
pub struct Schedule {
    io: RandomIoSampler,
    /// (start ns, gap distribution or None for rate 0).
    pieces: Vec<(f64, Option<Exp<f64>>)>,
}

impl Schedule {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: ScheduleConfig, capacity: u64, sector_bytes: u32) -> Result<Schedule> {
        PIECES.check_count_within("workload", cfg.rates.len() as u64, PIECES.min, PIECES.max)
            .map_err(|_| config_err("workload.rates", format!("{} pieces is out of range {}", cfg.rates.len(), PIECES.bounds_text())))?;
        let mut pieces = Vec::with_capacity(cfg.rates.len());
        for (i, &[start_ms, rate]) in cfg.rates.iter().enumerate() {
            let prev = if i == 0 { None } else { Some(cfg.rates[i - 1][0]) };
            let ok = match prev {
                None => start_ms == 0.0,
                Some(p) => start_ms > p && start_ms.is_finite(),
            };
            if !ok {
                return Err(config_err(format!("workload.rates[{i}].start_ms"), match prev {
                    None => format!("{start_ms} must be 0 (the schedule starts at time 0)"),
                    Some(p) => format!("{start_ms} must be finite and after the previous piece's start ({p})"),
                }));
            }
            RATE_PER_S.check(&format!("workload.rates[{i}]"), rate)?;
            let gap = (rate > 0.0).then(|| Exp::new(rate / NS_PER_S as f64).expect("positive rate"));
            pieces.push((start_ms * NS_PER_MS as f64, gap));
        }
        if pieces.iter().all(|(_, g)| g.is_none()) {
            return Err(config_err("workload.rates", "every rate is 0: no request would ever arrive"));
        }
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        Ok(Schedule { io, pieces })
    }

    /// The first arrival after `t_ns`, or None if the rate stays 0 from
    /// there on. A gap that crosses into the next piece is drawn again from
    /// that piece's start (exponential gaps are memoryless).
    fn next_after(&self, t_ns: f64, rng: &mut SimRng) -> Option<SimTime> {
        let mut i = self.pieces.partition_point(|(s, _)| *s <= t_ns).saturating_sub(1);
        let mut t = t_ns;
        loop {
            let end = self.pieces.get(i + 1).map_or(f64::INFINITY, |p| p.0);
            if let Some(gap) = &self.pieces[i].1 {
                let at = t + gap.sample(rng);
                if at < end {
                    return Some(SimTime(at.round() as u64));
                }
            }
            i += 1;
            t = self.pieces.get(i)?.0;
        }
    }
}

impl Generator for Schedule {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        self.next_after(0.0, rng).map(|t| (t, 0)).into_iter().collect()
    }
    fn arrive(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        Some((self.io.sample(rng), self.next_after(now.0 as f64, rng)))
    }
    fn completed(&mut self, _now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        None
    }
    fn clients(&self) -> u32 {
        1
    }
}

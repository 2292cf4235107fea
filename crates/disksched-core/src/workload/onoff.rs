//! On/off bursts: one open-loop source that alternates exponential on
//! periods (mean `mean_on_ms`) and exponential off periods (mean
//! `mean_off_ms`); during on periods requests arrive as a Poisson process at
//! `on_rate_per_s`, during off periods none do (the two-state
//! Markov-modulated Poisson process used for bursty traffic). The run starts
//! at the beginning of an on period. Sizes and addresses as `RandomIo`.

use super::{check_pos, Generator, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::Result;
use crate::time::{SimTime, NS_PER_MS, NS_PER_S};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    /// Poisson arrival rate during on periods, requests per second.
    pub on_rate_per_s: f64,
    pub mean_on_ms: f64,
    pub mean_off_ms: f64,
    #[serde(flatten)]
    pub io: RandomIo,
}

pub struct OnOff {
    io: RandomIoSampler,
    gap_ns: Exp<f64>,
    on_ns: Exp<f64>,
    off_ns: Exp<f64>,
    /// End of the current (or last) on period, ns.
    on_end_ns: f64,
}

impl OnOff {
    pub fn new(cfg: OnOffConfig, capacity: u64, sector_bytes: u32) -> Result<OnOff> {
        check_pos("workload.on_rate_per_s", cfg.on_rate_per_s)?;
        check_pos("workload.mean_on_ms", cfg.mean_on_ms)?;
        check_pos("workload.mean_off_ms", cfg.mean_off_ms)?;
        let io = RandomIoSampler::new(&cfg.io, capacity, sector_bytes, "workload")?;
        let rate = |mean_ns: f64| Exp::new(1.0 / mean_ns).expect("positive rate");
        Ok(OnOff {
            io,
            gap_ns: rate(NS_PER_S as f64 / cfg.on_rate_per_s),
            on_ns: rate(cfg.mean_on_ms * NS_PER_MS as f64),
            off_ns: rate(cfg.mean_off_ms * NS_PER_MS as f64),
            on_end_ns: 0.0,
        })
    }

    /// The first arrival after `t_ns` (inside the current on period or a
    /// later one). Exponential gaps are memoryless, so a gap that overruns
    /// the on period is simply drawn again from the next period's start.
    fn next_after(&mut self, t_ns: f64, rng: &mut SimRng) -> SimTime {
        let mut t = t_ns;
        loop {
            let at = t + self.gap_ns.sample(rng);
            if at < self.on_end_ns {
                return SimTime(at.round() as u64);
            }
            t = self.on_end_ns + self.off_ns.sample(rng);
            self.on_end_ns = t + self.on_ns.sample(rng);
        }
    }
}

impl Generator for OnOff {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        self.on_end_ns = self.on_ns.sample(rng);
        vec![(self.next_after(0.0, rng), 0)]
    }
    fn arrive(&mut self, now: SimTime, _client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let io = self.io.sample(rng);
        let next = self.next_after(now.0 as f64, rng);
        Some((io, Some(next)))
    }
    fn completed(&mut self, _now: SimTime, _client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        None
    }
    fn clients(&self) -> u32 {
        1
    }
}

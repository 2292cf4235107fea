//! On/off bursts: one open-loop source that alternates exponential on
//! periods (mean `mean_on_ms`) and exponential off periods (mean
//! `mean_off_ms`); during on periods requests arrive as a Poisson process at
//! `on_rate_per_s`, during off periods none do (the two-state
//! Markov-modulated Poisson process used for bursty traffic). The run starts
//! at the beginning of an on period. Sizes and addresses as `RandomIo`.

use super::{Generator, IoSpec, RandomIo, RandomIoSampler, SimRng};
use crate::error::Result;
use crate::schema::Param;
use crate::time::{SimTime, NS_PER_MS, NS_PER_S};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "onoff"`: Poisson arrivals during exponential on periods, none during off periods.
pub struct OnOffConfig {
    /// Poisson arrival rate during on periods, requests per second.
    pub on_rate_per_s: f64,
    /// Mean on period (exponential), ms.
    pub mean_on_ms: f64,
    /// Mean off period (exponential), ms.
    pub mean_off_ms: f64,
    #[serde(flatten)]
    /// Request sizes, alignment and read fraction.
    pub io: RandomIo,
}

/// Bounds of `mean_on_ms` and `mean_off_ms`, ms.
const MIN_PERIOD_MS: f64 = 1e-3;
const MAX_PERIOD_MS: f64 = 1e9;

/// `kind = "onoff"` keys besides `RandomIo`'s.
pub const PARAMS: &[Param] = &[
    Param::float("on_rate_per_s", "requests/s", 1e-6, f64::NAN, 1e9, "Poisson arrival rate during on periods").default_text("required"),
    Param::float("mean_on_ms", "ms", MIN_PERIOD_MS, f64::NAN, MAX_PERIOD_MS,
        "mean on period (exponential); it must hold 1e-6 arrivals on average").default_text("required"),
    Param::float("mean_off_ms", "ms", MIN_PERIOD_MS, f64::NAN, MAX_PERIOD_MS, "mean off period (exponential)").default_text("required"),
];

/// The on/off generator.
pub struct OnOff {
    io: RandomIoSampler,
    gap_ns: Exp<f64>,
    on_ns: Exp<f64>,
    off_ns: Exp<f64>,
    /// End of the current (or last) on period, ns.
    on_end_ns: f64,
}

impl OnOff {
    /// A generator for a disk of `capacity` blocks of `sector_bytes`; an error names any key out of bounds.
    pub fn new(cfg: OnOffConfig, capacity: u64, sector_bytes: u32) -> Result<OnOff> {
        // Periods from 1 us to about 11.6 days: shorter on periods hold almost
        // no arrival (each arrival would cost millions of empty periods), longer
        // ones overflow the nanosecond clock.
        for (p, v) in PARAMS.iter().zip([cfg.on_rate_per_s, cfg.mean_on_ms, cfg.mean_off_ms]) {
            p.check("workload", v)?;
        }
        // Each arrival is searched for period by period: bound the periods per arrival.
        let per_period = cfg.on_rate_per_s * cfg.mean_on_ms / 1e3;
        if per_period < 1e-6 {
            return Err(crate::error::config_err("workload.mean_on_ms", format!(
                "{} ms on periods at {} requests/s hold {per_period:.1e} arrivals on average; at least 1e-6 expected \
                 (a longer on period or a higher on_rate_per_s)", super::num(cfg.mean_on_ms), super::num(cfg.on_rate_per_s))));
        }
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
    /// The search stops at the clock's end (`budget::CLOCK_END`, where the
    /// run stops with an error): periods of up to 1e9 ms that hold 1e-6
    /// arrivals each would otherwise pass the u64 clock and search forever.
    fn next_after(&mut self, t_ns: f64, rng: &mut SimRng) -> SimTime {
        let mut t = t_ns;
        loop {
            if t >= crate::budget::CLOCK_END.0 as f64 {
                return crate::budget::CLOCK_END;
            }
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

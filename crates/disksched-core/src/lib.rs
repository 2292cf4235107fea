//! disksched-core: a discrete-event hard-disk simulator and I/O scheduling
//! framework. Pure Rust; the Python binding lives in `disksched-py`.
//!
//! Layout follows DESIGN.md: `time` (integer ns), `engine` (event heap),
//! `disk` (layout, mechanics, drive = truth, predictor = belief), `host`
//! (requests), `sched` (the scheduler contract and one file per algorithm),
//! `workload` (generators), `metrics`, `config` and `sim` (the wiring).

#![warn(missing_docs)]

pub mod background;
pub mod budget;
pub mod characterize;
pub mod config;
pub mod disk;
pub mod engine;
pub mod error;
pub mod host;
pub mod metrics;
pub mod qos;
pub mod reference;
pub mod sched;
pub mod schema;
pub mod scoped;
pub mod serve;
pub mod sim;
pub mod time;
pub mod validate;
pub mod watchdog;
pub mod trace;
pub mod workload;
pub mod rng;

pub use config::SimConfig;
pub use error::{Error, Result};
pub use sim::{run, RunResult, Simulation};

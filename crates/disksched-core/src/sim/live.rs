//! What a caller outside the config drives: the step-by-step API (a live
//! client, `serve` or Python's `Simulation`, submits requests, advances the
//! clock and looks at the queues between events; `Simulation::run` is the
//! batch form of the same loop) and the hooks on classification and
//! background tasks.

use super::event::Event;
use super::{Classifier, Counters, Reconfigured, RunResult, Simulation, SUBMITTED};
use crate::disk::HeadState;
use crate::error::{Error, Result};
use crate::host::Request;
use crate::time::SimTime;
use crate::workload::IoSpec;
use std::sync::{Arc, Mutex};

impl Simulation {
    /// Receive every run of background blocks as it is transferred, on every
    /// disk: (disk, task, lo, hi, time), LBNs of that disk.
    pub fn on_background_transfer(&mut self, cb: Box<dyn FnMut(u32, usize, u64, u64, SimTime) + Send>) {
        let shared = Arc::new(Mutex::new(cb));
        for (d, u) in self.units.iter_mut().enumerate() {
            let cb = shared.clone();
            u.freeblock.on_transfer(Box::new(move |task, lo, hi, t| (cb.lock().unwrap())(d as u32, task, lo, hi, t)));
        }
    }

    /// Classify every workload request on arrival with `f` (flow, class,
    /// deadline), replacing what the workload said.
    pub fn set_classifier(&mut self, f: Box<Classifier>) {
        self.classifier = Some(f);
    }

    /// Start, pause, resume or abort background task `task` now (the hook a
    /// caller outside the config, e.g. the Python binding, drives; a config
    /// does the same with `[[freeblock.events]]`).
    pub fn background_task(&mut self, action: crate::background::TaskAction, task: usize) -> Result<()> {
        let now = self.engine.now();
        for u in &mut self.units {
            u.freeblock.task(action, task, now)?;
        }
        self.background_changed(now)
    }

    /// Add background task `cfg` now (it starts at once; a prefetch or
    /// prewrite expires `deadline_ms` later); its index.
    pub fn add_background_task(&mut self, cfg: &crate::background::TaskConfig) -> Result<usize> {
        cfg.check("add_task")?;
        let now = self.engine.now();
        let mut index = 0;
        for u in &mut self.units {
            index = u.freeblock.add_task(cfg, now)?;
        }
        if let Some(d) = cfg.deadline_ms {
            self.task_events.push((now + crate::time::SimDuration::from_ms(d), crate::background::TaskAction::Expire, index));
            self.schedule(self.task_events.last().unwrap().0, Event::TaskEventDue(self.task_events.len() - 1));
        }
        self.background_changed(now)?;
        Ok(index)
    }

    /// Tasks changed: an idle drive may now have background work.
    pub(super) fn background_changed(&mut self, now: SimTime) -> Result<()> {
        for d in 0..self.units.len() {
            self.drive_start(d, now)?;
        }
        Ok(())
    }

    /// Step-by-step use (a live client): admit request `io` now (the time
    /// `run_until` last reached), as client `SUBMITTED`; its flow is
    /// `io.flow`, else `SUBMITTED`. The workload's own arrivals start only
    /// with `start`.
    pub fn submit(&mut self, io: IoSpec) -> Result<()> {
        let capacity = self.array.capacity();
        if io.blocks == 0 || io.lbn.checked_add(io.blocks as u64).is_none_or(|end| end > capacity) {
            return Err(crate::error::config_err("submit", format!(
                "{} blocks at LBN {}: expected at least 1 block, all below the capacity of {capacity} blocks", io.blocks, io.lbn)));
        }
        let now = self.engine.now();
        self.admit(SUBMITTED, io.flow.unwrap_or(SUBMITTED), &io, now)
    }

    /// Step-by-step use: handle every event up to and including `until`,
    /// leave the clock at `until`, and return the submitted requests that
    /// completed meanwhile (at their array addresses, with their times).
    pub fn run_until(&mut self, until: SimTime) -> Result<Vec<Request>> {
        while self.engine.peek().is_some_and(|t| t <= until) {
            let (now, ev) = self.engine.step().expect("peeked");
            self.check_budgets(now, &ev)?;
            self.handle(ev, now)?;
        }
        self.engine.advance_to(until);
        self.publish(until);
        Ok(std::mem::take(&mut self.completions))
    }

    /// Step-by-step use: end the run (every request must have completed)
    /// and collect its results, as `run` does.
    pub fn into_result(self) -> Result<RunResult> {
        self.finish(&mut |_, _| true)
    }

    /// The simulated time now.
    pub fn now(&self) -> SimTime {
        self.engine.now()
    }

    /// Step-by-step use: handle the next event; its time, or `None` when
    /// no event is left (the run is over). Submitted requests that complete
    /// are kept for `take_completions`.
    pub fn step(&mut self) -> Result<Option<SimTime>> {
        let Some((now, ev)) = self.engine.step() else { return Ok(None) };
        self.handle(ev, now)?;
        Ok(Some(now))
    }

    /// Step-by-step use: the time of the next event, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.engine.peek()
    }

    /// Step-by-step use: the submitted requests that completed since the
    /// last `run_until` or `take_completions`.
    pub fn take_completions(&mut self) -> Vec<Request> {
        std::mem::take(&mut self.completions)
    }

    /// Step-by-step use: requests queued at each level now, as (level,
    /// requests): "host", "controller" if any, then "disk" once per disk
    /// (the drive's command queue; the one in service not counted).
    pub fn queue_lengths(&self) -> Vec<(&'static str, usize)> {
        self.levels.iter().map(|l| (l.name, l.pending())).chain(self.units.iter().map(|u| (u.queue.name, u.queue.len()))).collect()
    }

    /// Step-by-step use: the disks with a command in service now.
    pub fn commands_in_service(&self) -> usize {
        self.units.iter().filter(|u| u.busy()).count()
    }

    /// Step-by-step use: each disk's heads as the drive has them now (cylinder, head, free at).
    pub fn heads(&self) -> Vec<HeadState> {
        let now = self.engine.now();
        self.units.iter().map(|u| u.head(now)).collect()
    }

    /// Step-by-step use: the request accounting so far.
    pub fn counters_now(&self) -> Counters {
        self.counters()
    }

    /// Step-by-step use: each queue's scheduler, as (level, name), in `queue_lengths` order.
    pub fn scheduler_names(&self) -> Vec<(&'static str, &'static str)> {
        self.levels.iter().chain(self.units.iter().map(|u| &u.queue)).map(|l| (l.name, l.sched.name())).collect()
    }

    /// Step-by-step use: switch `queue` ("host", "controller" or "disk": every
    /// disk's) to scheduler `name` with `settings`, now, through the same path
    /// as a `[[reconfigure]]` entry (queued requests move across in arrival order).
    pub fn switch_scheduler(&mut self, queue: &str, name: &str, settings: &[(String, f64)]) -> Result<()> {
        let which = match queue {
            "host" => Reconfigured::Level(0),
            "controller" if self.levels.len() > 1 => Reconfigured::Level(1),
            "disk" => Reconfigured::Disks,
            _ => return Err(crate::error::config_err("queue", format!(
                "'{queue}': expected host, {}or disk", if self.levels.len() > 1 { "controller " } else { "" }))),
        };
        let copies = if matches!(which, Reconfigured::Disks) { self.units.len() } else { 1 };
        let new = (0..copies).map(|_| crate::sched::build_as(Some("set"), name, settings)).collect::<Result<Vec<_>>>()
            .map_err(|e| match e {
                Error::Config { what, msg } => Error::Config { what: format!("{queue}.{what}"), msg },
                e => e,
            })?;
        let now = self.engine.now();
        self.reconfigure.push((now, which, new));
        self.reconfigure(self.reconfigure.len() - 1, now)
    }

    /// Blocks a submitted request may address (the array's), and bytes per block.
    pub fn capacity_blocks(&self) -> (u64, u32) {
        (self.array.capacity(), self.model.spec.sector_bytes)
    }

    /// When every write the drives have reported so far is on the media: the
    /// end of the last write-back destage (at most `now` when none is pending).
    /// A live client's FLUSH completes then.
    pub fn write_back_end(&self) -> SimTime {
        self.units.iter().filter_map(|u| u.drive.destage_end()).fold(self.engine.now(), SimTime::max)
    }
}

//! `disksched._core.Simulation`: a run driven step by step from Python (the
//! core's `Simulation::submit` / `run_until` / `step` / `switch_scheduler`),
//! with Python plug-in schedulers if given. The Python class
//! `disksched.Simulation` wraps it.

use crate::plugin_sched::{Failure, Plugins};
use crate::{err, result_tuple, ResultTuple};
use disksched_core::background::{TaskAction, TaskConfig};
use disksched_core::host::{Class, Request};
use disksched_core::time::SimTime;
use disksched_core::workload::IoSpec;
use disksched_core::{Error, SimConfig, Simulation};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// A simulation advanced from Python. Not shared across threads (it may
/// hold Python schedulers).
#[pyclass(module = "disksched._core", name = "Simulation", unsendable)]
pub struct PySimulation {
    sim: Option<Simulation>,
    plugins: Option<Plugins>,
    failure: Failure,
    /// Why the run stopped, once plug-in code raised or broke the contract or
    /// Ctrl-C came: a failed scheduler serves FCFS meanwhile, so nothing that
    /// follows may pass for the run's result.
    failed: Option<String>,
    warmup_requests: u64,
}

fn ended() -> PyErr {
    crate::DiskschedError::new_err("this simulation has ended (result() was called)")
}

/// `value` as the enum a config names it by (serde's names, as the config loader reads them); the
/// error names `what`, the value and the names expected.
fn choice<T: serde::de::DeserializeOwned>(what: &str, value: &str) -> PyResult<T> {
    serde_json::from_value(serde_json::Value::String(value.into()))
        .map_err(|e| crate::DiskschedError::new_err(format!("{what} '{value}': {e}")))
}

fn completed_dict<'py>(py: Python<'py>, r: &Request) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", r.logical)?;
    d.set_item("lbn", r.lbn)?;
    d.set_item("blocks", r.blocks)?;
    d.set_item("is_write", r.is_write)?;
    d.set_item("flow", r.flow)?;
    d.set_item("class", r.class.name())?;
    d.set_item("disk", r.disk)?;
    d.set_item("arrival_ns", r.arrival.0)?;
    d.set_item("issued_ns", r.issued.0)?;
    d.set_item("started_ns", r.started.0)?;
    d.set_item("done_ns", r.service.done.0)?;
    Ok(d)
}

impl PySimulation {
    /// The run, unless it failed or has ended.
    fn live(&self) -> PyResult<&Simulation> {
        self.usable()?;
        self.sim.as_ref().ok_or_else(ended)
    }

    fn sim(&mut self) -> PyResult<&mut Simulation> {
        self.usable()?;
        self.sim.as_mut().ok_or_else(ended)
    }

    /// Every call after a failure raises, naming it.
    fn usable(&self) -> PyResult<()> {
        match &self.failed {
            Some(why) => Err(crate::DiskschedError::new_err(format!(
                "this simulation failed earlier and cannot go on; it stopped with:\n{why}"))),
            None => Ok(()),
        }
    }

    /// The outcome of a core call that may have run plug-in code: the
    /// plug-in's error first (it caused whatever the core then reported),
    /// or Ctrl-C; either leaves the simulation failed.
    fn checked<T>(&mut self, py: Python<'_>, r: Result<T, Error>) -> PyResult<T> {
        let stored = self.failure.lock().unwrap().take();
        let Some(e) = stored.or_else(|| py.check_signals().err()) else { return r.map_err(err) };
        let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
        self.failed = Some(format!("{kind}: {}", e.value(py)));
        Err(e)
    }
}

#[pymethods]
impl PySimulation {
    /// Build a run from config text (as `run`); with `start`, the config's
    /// workload runs (else only submitted requests do).
    #[new]
    #[pyo3(signature = (config_text, origin, seed=None, schedulers=None, start=true, workloads=None, classifier=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, config_text: &str, origin: &str, seed: Option<u64>, schedulers: Option<Bound<'_, PyDict>>,
           start: bool, workloads: Option<Bound<'_, PyDict>>, classifier: Option<Bound<'_, PyAny>>) -> PyResult<PySimulation> {
        let mut cfg = if origin.ends_with(".json") { SimConfig::from_json(config_text, origin) } else { SimConfig::from_toml(config_text, origin) }
            .map_err(err)?;
        if let Some(s) = seed {
            cfg.seed = s;
        }
        let failure: Failure = Arc::default();
        let plugins = Plugins::from_arg(py, schedulers.as_ref(), workloads.as_ref(), classifier.as_ref(), &failure)?;
        let built = match &plugins {
            Some(p) => p.with(|| Simulation::new(&cfg)).map(|mut sim| {
                p.prepare(&mut sim);
                sim
            }),
            None => Simulation::new(&cfg),
        };
        let mut this = PySimulation { sim: None, plugins, failure, failed: None, warmup_requests: cfg.run.warmup_requests };
        let mut sim = this.checked(py, built)?;
        if start {
            sim.start();
        }
        this.sim = Some(sim);
        Ok(this)
    }

    /// The simulated time, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        Ok(self.live()?.now().0)
    }

    /// Admit a request now (client `SUBMITTED`): `class_` best-effort,
    /// real-time or background; `deadline_ns` absolute.
    #[pyo3(signature = (lbn, blocks, is_write=false, flow=None, class_="best-effort", deadline_ns=None))]
    fn submit(&mut self, py: Python<'_>, lbn: u64, blocks: u32, is_write: bool, flow: Option<u32>, class_: &str,
              deadline_ns: Option<u64>) -> PyResult<()> {
        let class = match class_ {
            "best-effort" => Class::BestEffort,
            "real-time" => Class::RealTime,
            "background" => Class::Background,
            other => return Err(crate::DiskschedError::new_err(format!(
                "submit: class '{other}': expected best-effort, real-time or background"))),
        };
        let io = IoSpec { lbn, blocks, is_write, class, deadline: deadline_ns.map(SimTime), range: None, flow };
        let r = self.sim()?.submit(io);
        self.checked(py, r)
    }

    /// Handle every event up to and including `until_ns` (None: until no
    /// event is left); the submitted requests completed meanwhile, as dicts.
    #[pyo3(signature = (until_ns=None))]
    fn run_until<'py>(&mut self, py: Python<'py>, until_ns: Option<u64>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let failure = self.failure.clone();
        let sim = self.sim()?;
        let until = SimTime(until_ns.unwrap_or(u64::MAX));
        let mut steps: u64 = 0;
        let mut r = Ok(());
        while sim.next_event_time().is_some_and(|t| t <= until) {
            if let Err(e) = sim.step() {
                r = Err(e);
                break;
            }
            steps += 1;
            // Ctrl-C and plug-in errors end a long run here, as in `run`.
            if steps & 0xFFFF == 0 {
                if let Err(e) = py.check_signals() {
                    crate::plugin_sched::fail(&failure, e);
                }
                if failure.lock().unwrap().is_some() {
                    break;
                }
            }
        }
        // The clock moves to `until` (nothing is left before it); without one it stays at the last event.
        let r = r.and_then(|()| match until_ns {
            Some(_) if failure.lock().unwrap().is_none() => sim.run_until(until),
            _ => Ok(sim.take_completions()),
        });
        let done = self.checked(py, r)?;
        done.iter().map(|r| completed_dict(py, r)).collect()
    }

    /// Handle the next event: its time (ns), or None when no event is left.
    fn step(&mut self, py: Python<'_>) -> PyResult<Option<u64>> {
        let r = self.sim()?.step();
        Ok(self.checked(py, r)?.map(|t| t.0))
    }

    /// Submitted requests completed since the last `run_until` or call of this.
    fn take_completions<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let done = self.sim()?.take_completions();
        done.iter().map(|r| completed_dict(py, r)).collect()
    }

    /// Requests queued at each level now: [(level, count)], host first, one "disk" entry per disk.
    fn queues(&self) -> PyResult<Vec<(&'static str, usize)>> {
        Ok(self.live()?.queue_lengths())
    }

    /// Each queue's scheduler: [(level, name)], in `queues` order.
    fn schedulers(&self) -> PyResult<Vec<(&'static str, &'static str)>> {
        Ok(self.live()?.scheduler_names())
    }

    /// Each disk's heads now: [(cylinder, head, free_at_ns)].
    fn heads(&self) -> PyResult<Vec<(u32, u32, u64)>> {
        Ok(self.live()?.heads().iter().map(|h| (h.cylinder, h.head, h.time.0)).collect())
    }

    /// The request accounting so far, as JSON.
    fn counters(&self) -> PyResult<String> {
        let c = self.live()?.counters_now();
        serde_json::to_string(&c).map_err(crate::json_err)
    }

    /// Switch `queue` (host, controller, disk) to scheduler `name` (a
    /// built-in or one of this simulation's plug-ins) with `settings` now.
    #[pyo3(signature = (queue, name, settings=None))]
    fn switch(&mut self, py: Python<'_>, queue: &str, name: &str, settings: Option<std::collections::BTreeMap<String, f64>>) -> PyResult<()> {
        let settings: Vec<(String, f64)> = settings.unwrap_or_default().into_iter().collect();
        self.usable()?;
        let sim = self.sim.as_mut().ok_or_else(ended)?;
        let r = match &self.plugins {
            Some(p) => p.with(|| sim.switch_scheduler(queue, name, &settings)),
            None => sim.switch_scheduler(queue, name, &settings),
        };
        self.checked(py, r)
    }

    /// Start, pause, resume or abort background task `task` (config order, then added ones) now.
    fn background_task(&mut self, py: Python<'_>, action: &str, task: usize) -> PyResult<()> {
        let action: TaskAction = choice("background task action", action)?;
        let r = self.sim()?.background_task(action, task);
        self.checked(py, r)
    }

    /// Add a background task to every disk, started now: `task` is a
    /// `[[freeblock.tasks]]` entry as JSON (`start_ms` ignored; `deadline_ms` from now); its index.
    fn add_background_task(&mut self, py: Python<'_>, task: &str) -> PyResult<usize> {
        let cfg: TaskConfig = serde_json::from_str(task).map_err(|e| err(disksched_core::error::config_err("add_task", e.to_string())))?;
        let r = self.sim()?.add_background_task(&TaskConfig { start_ms: 0.0, ..cfg });
        self.checked(py, r)
    }

    /// Call `callback(disk, task, lo, hi, time_ns)` for every run of background
    /// blocks transferred from now on; its exception ends the run as a plug-in's does.
    fn on_background_transfer(&mut self, callback: PyObject) -> PyResult<()> {
        let failure = self.failure.clone();
        self.sim()?.on_background_transfer(Box::new(move |disk, task, lo, hi, t| {
            if failure.lock().unwrap().is_some() {
                return;
            }
            Python::with_gil(|py| {
                if let Err(e) = callback.call1(py, (disk, task, lo, hi, t.0)) {
                    crate::plugin_sched::fail(&failure, e);
                }
            })
        }));
        Ok(())
    }

    /// End the run (every request must have completed) and return its result as `run` does.
    fn result<'py>(&mut self, py: Python<'py>) -> PyResult<ResultTuple<'py>> {
        self.usable()?;
        let sim = self.sim.take().ok_or_else(ended)?;
        let r = sim.into_result();
        let result = self.checked(py, r)?;
        result_tuple(py, result, self.warmup_requests)
    }
}

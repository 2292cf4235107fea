//! Python workloads and the Python classifier: the core's `Generator`
//! (`kind = "plugin"`, alone or as a `mix` member) and `sim::Classifier`
//! implemented by calling Python objects (see `plugin_sched` for the
//! pattern: the GIL is held, errors go to the run's `Failure`).
//!
//! A `disksched.Workload` is open (it defines `requests()`, a generator of
//! `disksched.Io` with their arrival times, one client) or closed (it defines
//! `first(client)` and `next(client, now_ms)`, each returning `(Io,
//! think_ms)`, or None from `next` when the client is done; `clients` of them).

use crate::plugin_sched::{fail, plugin_error, Failure};
use disksched_core::error::config_err;
use disksched_core::host::Class;
use disksched_core::time::SimTime;
use disksched_core::workload::{Generator, IoSpec, SimRng};
use disksched_core::Error;
use pyo3::prelude::*;

/// One request as the workload described it, arrival time aside.
struct Described {
    io: IoSpec,
    /// Deadline relative to the arrival, ns.
    deadline_after_ns: Option<u64>,
}

enum Mode {
    Open { iter: Option<Py<PyAny>>, pending: Option<(SimTime, Described)> },
    Closed { clients: u32, pending: Vec<Option<Described>> },
}

/// A closed plug-in's `clients` against the memory budget, before its per-client
/// state is allocated: per client, its pending request here and its arrival event
/// and start entry in the core.
pub fn check_clients(name: &str, clients: u32) -> Result<(), Error> {
    let per_client = (std::mem::size_of::<Option<Described>>() + 64) as u64;
    disksched_core::budget::check_memory(&format!("workload plug-in '{name}'"), format!("clients = {clients}"), clients as u64, per_client, "clients")
}

/// A Python workload behind the core's `Generator`.
pub struct PyWorkload {
    name: String,
    obj: Py<PyAny>,
    mode: Mode,
    capacity_blocks: u64,
    failure: Failure,
    failed: bool,
    /// The simulated time of the last call (for error messages).
    last_now: SimTime,
}

fn class_of(name: &str) -> Option<Class> {
    Some(match name {
        "best-effort" => Class::BestEffort,
        "real-time" => Class::RealTime,
        "background" => Class::Background,
        _ => return None,
    })
}

impl PyWorkload {
    /// `obj` (an instance of a `disksched.Workload` subclass): closed if it defines `first`, open otherwise.
    pub fn new(py: Python<'_>, name: &str, obj: Bound<'_, PyAny>, closed: bool, capacity_blocks: u64, failure: Failure)
        -> PyResult<PyWorkload> {
        let mode = if closed {
            let clients: u32 = obj.getattr("clients")?.extract()?;
            if clients == 0 {
                return Err(pyo3::exceptions::PyValueError::new_err(format!("workload plug-in '{name}': clients must be at least 1")));
            }
            check_clients(name, clients).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
            Mode::Closed { clients, pending: (0..clients).map(|_| None).collect() }
        } else {
            Mode::Open { iter: None, pending: None }
        };
        let _ = py;
        Ok(PyWorkload { name: name.to_string(), obj: obj.unbind(), mode, capacity_blocks, failure, failed: false, last_now: SimTime::ZERO })
    }

    fn raised(&mut self, py: Python<'_>, method: &str, e: PyErr) {
        self.failed = true;
        fail(&self.failure, plugin_error(py, "workload", &self.name, method, self.last_now.0, e));
    }

    fn broke(&mut self, py: Python<'_>, method: &str, msg: String) {
        self.failed = true;
        let e = match py.import("disksched.plugins").and_then(|m| m.call_method1("workload_violation",
            (self.name.as_str(), method, self.last_now.0, msg))) {
            Ok(err) => PyErr::from_value(err),
            Err(e2) => e2,
        };
        fail(&self.failure, e);
    }

    /// A `disksched.Io` read and checked: (arrival time if it gives one, the request).
    fn describe(&self, io: &Bound<'_, PyAny>) -> Result<(Option<SimTime>, Described), String> {
        let get = |k: &str| io.getattr(k).map_err(|_| format!("gave {}, expected a disksched.Io", io.repr().map(|s| s.to_string()).unwrap_or_default()));
        let num = |k: &str| -> Result<Option<f64>, String> {
            let v = get(k)?;
            if v.is_none() { Ok(None) } else { v.extract::<f64>().map(Some).map_err(|_| format!("Io.{k} = {v}: expected a number")) }
        };
        let lbn: u64 = get("lbn")?.extract().map_err(|_| "Io.lbn: expected an integer >= 0".to_string())?;
        let blocks: u32 = get("blocks")?.extract().map_err(|_| "Io.blocks: expected an integer >= 1".to_string())?;
        if blocks == 0 || lbn.checked_add(blocks as u64).is_none_or(|end| end > self.capacity_blocks) {
            return Err(format!("{blocks} blocks at LBN {lbn}: expected at least 1 block, all below the capacity of {} blocks",
                               self.capacity_blocks));
        }
        let is_write: bool = get("write")?.is_truthy().map_err(|e| e.to_string())?;
        let class_name: String = get("class_")?.extract().map_err(|_| "Io.class_: expected a string".to_string())?;
        let class = class_of(&class_name).ok_or_else(|| format!("Io.class_ = '{class_name}': expected best-effort, real-time or background"))?;
        let flow: Option<u32> = get("flow")?.extract().map_err(|_| "Io.flow: expected an integer or None".to_string())?;
        let deadline_after_ns = match num("deadline_ms")? {
            Some(ms) if ms.is_finite() && ms > 0.0 => Some((ms * 1e6).round() as u64),
            Some(ms) => return Err(format!("Io.deadline_ms = {ms}: expected a positive number of ms or None")),
            None => None,
        };
        let at = match (get("at_ns")?.extract::<Option<u64>>().map_err(|_| "Io.at_ns: expected an integer >= 0 or None".to_string())?, num("at_ms")?) {
            (Some(ns), _) => Some(SimTime(ns)),
            (None, Some(ms)) if ms.is_finite() && ms >= 0.0 => Some(SimTime((ms * 1e6).round() as u64)),
            (None, Some(ms)) => return Err(format!("Io.at_ms = {ms}: expected a time >= 0")),
            (None, None) => None,
        };
        Ok((at, Described { io: IoSpec { lbn, blocks, is_write, class, deadline: None, range: None, flow }, deadline_after_ns }))
    }

    /// The open workload's next request, or None when its generator is done.
    fn next_open(&mut self, py: Python<'_>) -> Option<(SimTime, Described)> {
        let Mode::Open { iter, .. } = &self.mode else { return None };
        let iter = iter.as_ref()?.bind(py).clone();
        match iter.call_method0("__next__") {
            Ok(io) => match self.describe(&io) {
                Ok((Some(t), d)) => Some((t, d)),
                Ok((None, _)) => {
                    self.broke(py, "requests", "an Io without at_ms or at_ns (an open workload gives every arrival time)".into());
                    None
                }
                Err(msg) => {
                    self.broke(py, "requests", msg);
                    None
                }
            },
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => None,
            Err(e) => {
                self.raised(py, "requests", e);
                None
            }
        }
    }

    /// A closed client's (request, think time) from `first` or `next`.
    fn closed_answer(&mut self, py: Python<'_>, method: &str, r: PyResult<Bound<'_, PyAny>>) -> Option<(Described, u64)> {
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                self.raised(py, method, e);
                return None;
            }
        };
        if r.is_none() {
            return None;
        }
        let Ok((io, think_ms)) = r.extract::<(Bound<PyAny>, f64)>() else {
            let shown = r.repr().map(|s| s.to_string()).unwrap_or_default();
            self.broke(py, method, format!("returned {shown}, expected (disksched.Io, think_ms) or None"));
            return None;
        };
        if !(think_ms.is_finite() && think_ms >= 0.0) {
            self.broke(py, method, format!("think_ms = {think_ms}: expected a time >= 0"));
            return None;
        }
        match self.describe(&io) {
            Ok((_, d)) => Some((d, (think_ms * 1e6).round() as u64)),
            Err(msg) => {
                self.broke(py, method, msg);
                None
            }
        }
    }
}

fn stamped(d: Described, now: SimTime) -> IoSpec {
    IoSpec { deadline: d.deadline_after_ns.map(|ns| SimTime(now.0 + ns)), ..d.io }
}

impl Generator for PyWorkload {
    fn start(&mut self, _rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        Python::with_gil(|py| {
            if matches!(self.mode, Mode::Open { .. }) {
                match self.obj.bind(py).call_method0("requests").and_then(|g| g.try_iter().map(|i| i.into_any().unbind())) {
                    Ok(it) => {
                        if let Mode::Open { iter, .. } = &mut self.mode {
                            *iter = Some(it);
                        }
                    }
                    Err(e) => {
                        self.raised(py, "requests", e);
                        return Vec::new();
                    }
                }
                let first = self.next_open(py);
                let t = first.as_ref().map(|(t, _)| *t);
                if let Mode::Open { pending, .. } = &mut self.mode {
                    *pending = first;
                }
                return t.map(|t| vec![(t, 0)]).unwrap_or_default();
            }
            let clients = match &self.mode { Mode::Closed { clients, .. } => *clients, _ => 0 };
            let mut out = Vec::new();
            for c in 0..clients {
                let r = self.obj.bind(py).call_method1("first", (c,));
                if let Some((d, think_ns)) = self.closed_answer(py, "first", r) {
                    if let Mode::Closed { pending, .. } = &mut self.mode {
                        pending[c as usize] = Some(d);
                    }
                    out.push((SimTime(think_ns), c));
                }
                if self.failed {
                    return Vec::new();
                }
            }
            out
        })
    }

    fn arrive(&mut self, now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        self.last_now = now;
        if self.failed {
            return None;
        }
        match &mut self.mode {
            Mode::Open { pending, .. } => {
                let (_, d) = pending.take()?;
                let next = Python::with_gil(|py| self.next_open(py));
                let next_at = match next {
                    Some((t, _)) if t < now => {
                        Python::with_gil(|py| self.broke(py, "requests", format!(
                            "arrival at {} ns is before the previous one at {} ns (open arrivals must not go back in time)", t.0, now.0)));
                        return None;
                    }
                    Some((t, nd)) => {
                        if let Mode::Open { pending, .. } = &mut self.mode {
                            *pending = Some((t, nd));
                        }
                        Some(t)
                    }
                    None => None,
                };
                if self.failed {
                    return None;
                }
                Some((stamped(d, now), next_at))
            }
            Mode::Closed { pending, .. } => {
                let d = pending.get_mut(client as usize)?.take()?;
                Some((stamped(d, now), None))
            }
        }
    }

    fn completed(&mut self, now: SimTime, client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        self.last_now = now;
        if self.failed || !matches!(self.mode, Mode::Closed { .. }) {
            return None;
        }
        Python::with_gil(|py| {
            let r = self.obj.bind(py).call_method1("next", (client, now.0 as f64 / 1e6));
            let (d, think_ns) = self.closed_answer(py, "next", r)?;
            if let Mode::Closed { pending, .. } = &mut self.mode {
                pending[client as usize] = Some(d);
            }
            Some(SimTime(now.0 + think_ns))
        })
    }

    fn clients(&self) -> u32 {
        match &self.mode {
            Mode::Open { .. } => 1,
            Mode::Closed { clients, .. } => *clients,
        }
    }

    fn take_error(&mut self) -> Option<Error> {
        // The run's `Failure` holds the Python error; this stops the core's result.
        self.failed.then(|| config_err(format!("workload plug-in '{}'", self.name), "failed (see the plug-in's error)"))
    }
}

/// An arriving request as the classifier sees it.
#[pyclass(module = "disksched._core", name = "Arrival", frozen, get_all)]
pub struct PyArrival {
    client: u32,
    flow: u32,
    lbn: u64,
    blocks: u32,
    is_write: bool,
    class_: &'static str,
    deadline_ns: Option<u64>,
    arrival_ns: u64,
}

/// The classifier hook: calls `f(arrival)`; None keeps the request as it
/// is, else `(flow, class, deadline_ms)` (deadline relative to the arrival,
/// or None for none).
pub fn classifier(f: Py<PyAny>, failure: Failure) -> Box<disksched_core::sim::Classifier> {
    let mut failed = false;
    Box::new(move |client, flow, io: &mut IoSpec, now: SimTime| {
        if failed {
            return flow;
        }
        Python::with_gil(|py| {
            let a = PyArrival { client, flow, lbn: io.lbn, blocks: io.blocks, is_write: io.is_write, class_: io.class.name(),
                                deadline_ns: io.deadline.map(|t| t.0), arrival_ns: now.0 };
            let r = Py::new(py, a).and_then(|a| f.bind(py).call1((a,)));
            let bad = |msg: String| -> PyErr {
                match py.import("disksched.plugins").and_then(|m| m.call_method1("classifier_violation", (now.0, msg))) {
                    Ok(err) => PyErr::from_value(err),
                    Err(e2) => e2,
                }
            };
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    failed = true;
                    fail(&failure, plugin_error(py, "classifier", "classifier", "__call__", now.0, e));
                    return flow;
                }
            };
            if r.is_none() {
                return flow;
            }
            let parsed = r.extract::<(u32, String, Option<f64>)>().map_err(|_| {
                format!("returned {}, expected None or (flow, class, deadline_ms)", r.repr().map(|s| s.to_string()).unwrap_or_default())
            }).and_then(|(flow, class, deadline_ms)| {
                let class = class_of(&class).ok_or_else(|| format!("class '{class}': expected best-effort, real-time or background"))?;
                let deadline = match deadline_ms {
                    None => None,
                    Some(ms) if ms.is_finite() && ms > 0.0 => Some(SimTime(now.0 + (ms * 1e6).round() as u64)),
                    Some(ms) => return Err(format!("deadline_ms = {ms}: expected a positive number of ms or None")),
                };
                Ok((flow, class, deadline))
            });
            match parsed {
                Ok((new_flow, class, deadline)) => {
                    io.class = class;
                    io.deadline = deadline;
                    new_flow
                }
                Err(msg) => {
                    failed = true;
                    fail(&failure, bad(msg));
                    flow
                }
            }
        })
    })
}

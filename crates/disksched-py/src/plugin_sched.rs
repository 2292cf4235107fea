//! Python schedulers: the core's `sched::Scheduler` implemented by calling a
//! `disksched.Scheduler` subclass instance (the pattern of tokenizers'
//! `CustomPreTokenizer`). The core never sees Python; it sees a factory
//! (`sched::with_factory`) that builds these by name.
//!
//! Every call goes to Python with the GIL held (a run with plug-ins keeps
//! it: releasing and taking it back per call would cost more than the call).
//! Python never gets a raw id it could break the run with: the wrapper keeps
//! the set of ids it handed in, and a `dispatch` answer outside it, or `None`
//! under `force` while holding requests, is a contract violation. An
//! exception or a violation is stored (the run's `Failure`, first one wins),
//! the wrapper falls back to FCFS over what it holds so no request is lost,
//! and the run is stopped at its next progress check and the error raised.

use disksched_core::disk::Positioning;
use disksched_core::host::{ReqId, Request};
use disksched_core::sched::{self, SchedCtx, Scheduler, Tunable};
use disksched_core::time::SimTime;
use disksched_core::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The first error raised by plug-in code in a run (or a contract
/// violation), shared by every plug-in of the run and checked by the run's
/// progress callback.
pub type Failure = Arc<Mutex<Option<PyErr>>>;

/// Record `e` as the run's failure unless one is already recorded.
pub fn fail(failure: &Failure, e: PyErr) {
    let mut slot = failure.lock().unwrap();
    if slot.is_none() {
        *slot = Some(e);
    }
}

/// The run's error for `e`, raised by plug-in code (`method` of the `kind`
/// plug-in `name`, at `now_ns`): a `PluginError` whose first line names them,
/// with the traceback of the user's code. Ctrl-C inside user code stays Ctrl-C.
pub fn plugin_error(py: Python<'_>, kind: &str, name: &str, method: &str, now_ns: u64, e: PyErr) -> PyErr {
    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        // Still an interruption (exit 130), but one that says where it happened.
        let said = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
        let said = if said.is_empty() { String::new() } else { format!(": {said}") };
        return pyo3::exceptions::PyKeyboardInterrupt::new_err(format!(
            "in plug-in {kind} '{name}', {method}() at t = {:.6} ms{said}", now_ns as f64 / 1e6));
    }
    match py.import("disksched.plugins").and_then(|m| m.call_method1("failure", (kind, name, method, now_ns, e.value(py), e.traceback(py)))) {
        Ok(err) => PyErr::from_value(err),
        Err(e2) => e2,
    }
}

/// What the context object may read during one call into Python: set just
/// before the call, cleared after, so a context kept past its call fails
/// cleanly instead of reading freed memory.
struct View {
    ctx: *const SchedCtx<'static>,
    /// The calling scheduler's held set (by id slot).
    held: *const Vec<bool>,
    /// The id the call is about (`bypass`, `complete`), if any.
    current: Option<u32>,
}

/// `View` behind a cell. Only touched with the GIL held, on the thread
/// running the simulation (the GIL serialises every access).
pub(crate) struct Window(UnsafeCell<View>);
unsafe impl Send for Window {}
unsafe impl Sync for Window {}

impl Window {
    fn new() -> Window {
        Window(UnsafeCell::new(View { ctx: std::ptr::null(), held: std::ptr::null(), current: None }))
    }
    fn open(&self, ctx: &SchedCtx, held: &Vec<bool>, current: Option<u32>) {
        // SAFETY: the pointers are cleared by `close` before `ctx` and `held` go out of scope.
        unsafe {
            *self.0.get() = View { ctx: ctx as *const SchedCtx as *const SchedCtx<'static>, held, current };
        }
    }
    fn close(&self) {
        unsafe {
            *self.0.get() = View { ctx: std::ptr::null(), held: std::ptr::null(), current: None };
        }
    }
}

/// The scheduling context a Python scheduler's hooks receive (`ctx`): the
/// time, the requests it holds, the believed head position and the
/// predictor's answers. Valid only during the call it was passed to.
#[pyclass(module = "disksched._core", name = "SchedContext", frozen)]
pub struct PyCtx {
    win: Arc<Window>,
}

fn stale() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("this scheduling context is valid only during the call it was passed to")
}

impl PyCtx {
    fn ctx(&self) -> PyResult<&SchedCtx<'static>> {
        let v = unsafe { &*self.win.0.get() };
        if v.ctx.is_null() {
            return Err(stale());
        }
        Ok(unsafe { &*v.ctx })
    }
    /// Request `id`, if the calling scheduler holds it or the call is about it.
    fn req(&self, id: u32) -> PyResult<(&SchedCtx<'static>, &Request)> {
        let ctx = self.ctx()?;
        let v = unsafe { &*self.win.0.get() };
        let held = unsafe { &*v.held };
        if v.current != Some(id) && !held.get(id as usize).copied().unwrap_or(false) {
            return Err(pyo3::exceptions::PyKeyError::new_err(format!("request id {id} is not held by this scheduler")));
        }
        Ok((ctx, ctx.reqs.get(ReqId(id))))
    }
    fn positioning(&self, id: u32) -> PyResult<(Positioning, u64)> {
        let (ctx, r) = self.req(id)?;
        let head = ctx.head_for(r);
        let p = ctx.predictor.positioning(head, ctx.predictor.phase_at(head.time), &r.target, r.is_write, r.blocks);
        // Media time of the request's sectors at its first track's density
        // (track and cylinder switches within it not counted).
        let transfer = r.blocks as u64 * ctx.predictor.model.mech.sector_ns(r.target.spt);
        Ok((p, transfer))
    }
}

/// Everything a scheduler may read of one request (a snapshot).
#[pyclass(module = "disksched._core", name = "Request", frozen, get_all)]
pub struct PyRequest {
    id: u32,
    seq: u64,
    lbn: u64,
    blocks: u32,
    is_write: bool,
    client: u32,
    flow: u32,
    class_: &'static str,
    deadline_ns: Option<u64>,
    arrival_ns: u64,
    disk: u32,
    cylinder: u32,
    surface: u32,
}

#[pymethods]
impl PyRequest {
    fn __repr__(&self) -> String {
        format!("Request(id={}, seq={}, lbn={}, blocks={}, {}, client={}, class={})", self.id, self.seq, self.lbn, self.blocks,
                if self.is_write { "write" } else { "read" }, self.client, self.class_)
    }
}

/// The predictor's answer for one request from the current head state, ns.
#[pyclass(module = "disksched._core", name = "Prediction", frozen, get_all)]
pub struct PyPrediction {
    overhead_ns: u64,
    seek_ns: u64,
    bus_wait_ns: u64,
    rotation_ns: u64,
    positioning_ns: u64,
    transfer_ns: u64,
}

#[pymethods]
impl PyPrediction {
    fn __repr__(&self) -> String {
        format!("Prediction(positioning_ns={}, seek_ns={}, rotation_ns={}, overhead_ns={}, bus_wait_ns={}, transfer_ns={})",
                self.positioning_ns, self.seek_ns, self.rotation_ns, self.overhead_ns, self.bus_wait_ns, self.transfer_ns)
    }
}

#[pymethods]
impl PyCtx {
    /// The simulated time, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        Ok(self.ctx()?.now.0)
    }
    /// The simulated time, ms.
    #[getter]
    fn now_ms(&self) -> PyResult<f64> {
        Ok(self.ctx()?.now.0 as f64 / 1e6)
    }
    /// The cylinder the heads are believed to be on when the next request
    /// starts (at a host or controller over an array: disk 0's; see `head_of`).
    #[getter]
    fn head_cylinder(&self) -> PyResult<u32> {
        Ok(self.ctx()?.head.cylinder)
    }
    /// The believed active head (surface).
    #[getter]
    fn head_surface(&self) -> PyResult<u32> {
        Ok(self.ctx()?.head.head)
    }
    /// When the heads are believed free at that position, ns.
    #[getter]
    fn head_time_ns(&self) -> PyResult<u64> {
        Ok(self.ctx()?.head.time.0)
    }
    /// Disk `disk`'s believed heads, as (cylinder, surface, free at ns): at a
    /// host or controller over an array each disk has its own; elsewhere
    /// every disk number answers the `head_*` fields. The predictor's answers
    /// (`positioning_ns` and kin) start from the request's own disk's heads.
    fn head_of(&self, disk: u32) -> PyResult<(u32, u32, u64)> {
        let h = self.ctx()?.head_of(disk);
        Ok((h.cylinder, h.head, h.time.0))
    }
    /// Request `id` (one this scheduler holds, or the one the call is about).
    fn request(&self, id: u32) -> PyResult<PyRequest> {
        let (_, r) = self.req(id)?;
        Ok(PyRequest {
            id, seq: r.seq, lbn: r.lbn, blocks: r.blocks, is_write: r.is_write, client: r.client, flow: r.flow,
            class_: r.class.name(), deadline_ns: r.deadline.map(|t| t.0), arrival_ns: r.arrival.0, disk: r.disk,
            cylinder: r.target.cylinder, surface: r.target.head,
        })
    }
    /// Arrival order of request `id` (unique; the tie-breaker of every built-in).
    fn seq(&self, id: u32) -> PyResult<u64> {
        Ok(self.req(id)?.1.seq)
    }
    /// First block of request `id`.
    fn lbn(&self, id: u32) -> PyResult<u64> {
        Ok(self.req(id)?.1.lbn)
    }
    /// Blocks of request `id`.
    fn blocks(&self, id: u32) -> PyResult<u32> {
        Ok(self.req(id)?.1.blocks)
    }
    /// Whether request `id` is a write.
    fn is_write(&self, id: u32) -> PyResult<bool> {
        Ok(self.req(id)?.1.is_write)
    }
    /// Cylinder of request `id`'s first block (as the predictor believes).
    fn cylinder(&self, id: u32) -> PyResult<u32> {
        Ok(self.req(id)?.1.target.cylinder)
    }
    /// Arrival time of request `id`, ns.
    fn arrival_ns(&self, id: u32) -> PyResult<u64> {
        Ok(self.req(id)?.1.arrival.0)
    }
    /// Deadline of request `id`, ns, or None.
    fn deadline_ns(&self, id: u32) -> PyResult<Option<u64>> {
        Ok(self.req(id)?.1.deadline.map(|t| t.0))
    }
    /// Flow (issuing process) of request `id`.
    fn flow(&self, id: u32) -> PyResult<u32> {
        Ok(self.req(id)?.1.flow)
    }
    /// Predicted time from the current head state until request `id`'s
    /// first sector passes under the head: overhead + seek + rotation, ns
    /// (what the built-in SPTF minimises).
    fn positioning_ns(&self, id: u32) -> PyResult<u64> {
        Ok(self.positioning(id)?.0.total_ns())
    }
    /// `positioning_ns` of several requests at once (one call across the boundary).
    fn positioning_ns_many(&self, ids: Vec<u32>) -> PyResult<Vec<u64>> {
        ids.into_iter().map(|id| Ok(self.positioning(id)?.0.total_ns())).collect()
    }
    /// Predicted seek (or head switch, with settle) to request `id`, ns.
    fn seek_ns(&self, id: u32) -> PyResult<u64> {
        Ok(self.positioning(id)?.0.seek_ns)
    }
    /// Predicted rotational latency of request `id` after its seek, ns.
    fn rotation_ns(&self, id: u32) -> PyResult<u64> {
        Ok(self.positioning(id)?.0.rotation_ns)
    }
    /// Predicted media transfer of request `id`: its sectors at its first
    /// track's density (track switches within it not counted), ns.
    fn transfer_ns(&self, id: u32) -> PyResult<u64> {
        Ok(self.positioning(id)?.1)
    }
    /// Every part of the prediction for request `id`.
    fn predict(&self, id: u32) -> PyResult<PyPrediction> {
        let (p, transfer_ns) = self.positioning(id)?;
        Ok(PyPrediction { overhead_ns: p.overhead_ns, seek_ns: p.seek_ns, bus_wait_ns: p.bus_wait_ns, rotation_ns: p.rotation_ns,
                          positioning_ns: p.total_ns(), transfer_ns })
    }
}

/// A registered plug-in scheduler class.
pub struct PluginClass {
    /// Registry name (as in `scheduler = "..."`).
    name: &'static str,
    /// The Python class.
    cls: Py<PyAny>,
    /// Its declared tunables (leaked: the core's declarations are `'static`).
    tunables: &'static [Tunable],
}

/// Names leaked once per distinct string (tunable and counter names must be `'static`).
fn leak(s: &str) -> &'static str {
    thread_local! { static LEAKED: std::cell::RefCell<HashMap<String, &'static str>> = Default::default(); }
    LEAKED.with(|m| *m.borrow_mut().entry(s.to_string()).or_insert_with(|| Box::leak(s.to_string().into_boxed_str())))
}

/// The plug-ins of a run: schedulers and workloads by lower-case name, and a classifier.
pub struct Plugins {
    classes: HashMap<String, Rc<PluginClass>>,
    workloads: HashMap<String, Rc<PluginClass>>,
    classifier: Option<Py<PyAny>>,
    pub failure: Failure,
    /// The simulated time, ns, as the run publishes it (`Simulation::publish_time`).
    clock: Arc<AtomicU64>,
}

/// `{name: class}` with each class's tunables read from the
/// `disksched.plugins.declarations(cls)` list of (name, unit, min, default, max, integer, help).
fn classes(py: Python<'_>, dict: Option<&Bound<'_, PyDict>>) -> PyResult<HashMap<String, Rc<PluginClass>>> {
    let helpers = py.import("disksched.plugins")?;
    let mut classes = HashMap::new();
    if let Some(dict) = dict {
        for (name, cls) in dict.iter() {
            let name: String = name.extract()?;
            let decls: Vec<(String, String, f64, f64, f64, bool, String)> = helpers.call_method1("declarations", (&cls,))?.extract()?;
            let tunables: Vec<Tunable> = decls.iter().map(|(n, unit, min, default, max, integer, help)| {
                if *integer {
                    Tunable::int(leak(n), leak(unit), *min, *default, *max, leak(help))
                } else {
                    Tunable::float(leak(n), leak(unit), *min, *default, *max, leak(help))
                }
            }).collect();
            let tunables: &'static [Tunable] = Box::leak(tunables.into_boxed_slice());
            classes.insert(name.to_ascii_lowercase(), Rc::new(PluginClass { name: leak(&name), cls: cls.unbind(), tunables }));
        }
    }
    Ok(classes)
}

impl Plugins {
    /// From `{name: class}` of schedulers (and of workloads, and a classifier function).
    pub fn new(py: Python<'_>, schedulers: &Bound<'_, PyDict>, failure: Failure) -> PyResult<Plugins> {
        Ok(Plugins { classes: classes(py, Some(schedulers))?, workloads: HashMap::new(), classifier: None, failure, clock: Arc::default() })
    }

    /// The workload factory (`kind = "plugin"`).
    fn workload_factory(&self) -> Rc<disksched_core::workload::plugin::Factory> {
        let workloads = self.workloads.clone();
        let failure = self.failure.clone();
        let clock = self.clock.clone();
        Rc::new(move |name: &str, settings: &[(String, f64)], capacity: u64, _sector_bytes: u32| {
            let class = workloads.get(&name.to_ascii_lowercase())?.clone();
            Some(build_workload(&class, settings, capacity, &failure, &clock))
        })
    }

    /// The simulation of `cfg`, built with the plug-ins (if any) it may name.
    pub fn simulation(plugins: Option<&Plugins>, cfg: &disksched_core::SimConfig) -> Result<disksched_core::Simulation, Error> {
        match plugins {
            Some(p) => {
                let mut sim = p.with(|| disksched_core::Simulation::new(cfg))?;
                p.prepare(&mut sim);
                Ok(sim)
            }
            None => disksched_core::Simulation::new(cfg),
        }
    }

    /// Install the classifier, if any, on a built simulation, and follow its time.
    pub fn prepare(&self, sim: &mut disksched_core::Simulation) {
        sim.publish_time(self.clock.clone());
        if let Some(f) = &self.classifier {
            let f = Python::with_gil(|py| f.clone_ref(py));
            sim.set_classifier(crate::plugin_workload::classifier(f, self.failure.clone()));
        }
    }

    /// The factory the core consults before its registry.
    pub fn factory(&self) -> Rc<sched::Factory> {
        let classes = self.classes.clone();
        let failure = self.failure.clone();
        let clock = self.clock.clone();
        Rc::new(move |what: &str, name: &str, settings: &[(String, f64)]| {
            let class = classes.get(&name.to_ascii_lowercase())?.clone();
            Some(build(&class, what, settings, &failure, &clock))
        })
    }

    /// Run `f` with these plug-ins buildable by name.
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        sched::with_factory(self.factory(), || disksched_core::workload::plugin::with_factory(self.workload_factory(), f))
    }

    /// One scheduler of class `name` with default tunables (for `bench`).
    pub fn build_default(&self, name: &str) -> Result<Box<dyn Scheduler>, Error> {
        let class = self.classes.get(&name.to_ascii_lowercase())
            .ok_or_else(|| disksched_core::error::config_err("scheduler", format!("no plug-in scheduler '{name}'")))?;
        build(class, name, &[], &self.failure, &self.clock)
    }
}

/// Instantiate `class` with `settings` checked against its tunables; an
/// exception in its construction is the plug-in's `__init__()` error.
fn build(class: &PluginClass, what: &str, settings: &[(String, f64)], failure: &Failure, clock: &Arc<AtomicU64>)
    -> Result<Box<dyn Scheduler>, Error> {
    let values = sched::check_tunables(what, class.tunables, settings)?;
    for t in class.tunables.iter().filter(|t| t.ty == disksched_core::schema::Ty::Int) {
        let v = values.get(t.name);
        if v.fract() != 0.0 {
            return Err(disksched_core::error::config_err(t.key(what), format!("{v} is not a whole number (expected an integer in {})", t.bounds_text())));
        }
    }
    Python::with_gil(|py| {
        let made = (|| -> PyResult<Box<dyn Scheduler>> {
            let kw = PyDict::new(py);
            for t in class.tunables {
                let v = values.get(t.name);
                if t.ty == disksched_core::schema::Ty::Int {
                    kw.set_item(t.name, v as i64)?;
                } else {
                    kw.set_item(t.name, v)?;
                }
            }
            let helpers = py.import("disksched.plugins")?;
            let (obj, hooks): (Bound<PyAny>, Vec<String>) = helpers.call_method1("instantiate", (class.cls.bind(py), kw))?.extract()?;
            Ok(Box::new(PyScheduler::new(py, class, obj, &hooks, failure.clone(), clock.clone())?))
        })();
        made.map_err(|e| {
            let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
            fail(failure, plugin_error(py, "scheduler", class.name, "__init__", clock.load(Ordering::Relaxed), e));
            disksched_core::error::config_err(format!("plug-in scheduler '{}'", class.name), msg)
        })
    })
}

/// A Python scheduler behind the core's trait (see the module doc).
pub struct PyScheduler {
    name: &'static str,
    insert: Py<PyAny>,
    dispatch: Py<PyAny>,
    complete: Option<Py<PyAny>>,
    bypass: Option<Py<PyAny>>,
    wake_at: Option<Py<PyAny>>,
    drain: Option<Py<PyAny>>,
    init_class: Option<Py<PyAny>>,
    fini_class: Option<Py<PyAny>>,
    counters: Option<Py<PyAny>>,
    ctx: Py<PyCtx>,
    win: Arc<Window>,
    /// By id slot: whether the scheduler holds that request.
    held: Vec<bool>,
    count: usize,
    failure: Failure,
    /// Its code raised or broke the contract: it serves FCFS until the run stops.
    failed: Cell<bool>,
    /// The FCFS order it then serves: (seq, id) of every request held.
    fallback: Option<std::collections::BTreeSet<(u64, u32)>>,
    /// The run's simulated time, for errors in hooks called without a context.
    clock: Arc<AtomicU64>,
}

impl PyScheduler {
    fn new(py: Python<'_>, class: &PluginClass, obj: Bound<'_, PyAny>, hooks: &[String], failure: Failure, clock: Arc<AtomicU64>)
        -> PyResult<PyScheduler> {
        let has = |m: &str| hooks.iter().any(|h| h == m);
        let get = |m: &str| -> PyResult<Option<Py<PyAny>>> { if has(m) { Ok(Some(obj.getattr(m)?.unbind())) } else { Ok(None) } };
        let win = Arc::new(Window::new());
        Ok(PyScheduler {
            name: class.name,
            insert: obj.getattr("insert")?.unbind(),
            dispatch: obj.getattr("dispatch")?.unbind(),
            complete: get("complete")?,
            bypass: get("bypass")?,
            wake_at: get("wake_at_ns")?,
            drain: get("drain")?,
            init_class: get("init_class")?,
            fini_class: get("fini_class")?,
            counters: get("counters")?,
            ctx: Py::new(py, PyCtx { win: win.clone() })?,
            win,
            held: Vec::new(),
            count: 0,
            failure,
            failed: Cell::new(false),
            fallback: None,
            clock,
        })
    }

    /// The simulated time now, ns, for hooks called without a context.
    fn now_ns(&self) -> u64 {
        self.clock.load(Ordering::Relaxed)
    }

    /// Record that `method` raised `e` at `now_ns` and switch to the fallback.
    fn failed_in(&self, py: Python<'_>, method: &str, now_ns: u64, e: PyErr) {
        self.failed.set(true);
        fail(&self.failure, plugin_error(py, "scheduler", self.name, method, now_ns, e));
    }

    /// Record that `method` broke the contract at `now_ns` (`msg` says how) and switch to the fallback.
    fn violation(&self, py: Python<'_>, method: &str, now_ns: u64, msg: String) {
        self.failed.set(true);
        let e = match py.import("disksched.plugins").and_then(|m| m.call_method1("violation", (self.name, method, now_ns, msg))) {
            Ok(err) => PyErr::from_value(err),
            Err(e2) => e2,
        };
        fail(&self.failure, e);
    }

    fn hold(&mut self, id: ReqId, seq: u64) {
        if let Some(q) = &mut self.fallback {
            q.insert((seq, id.0));
        }
        let slot = id.0 as usize;
        if slot >= self.held.len() {
            self.held.resize(slot + 1, false);
        }
        self.held[slot] = true;
        self.count += 1;
    }

    fn holds(&self, id: u32) -> bool {
        self.held.get(id as usize).copied().unwrap_or(false)
    }

    fn release(&mut self, id: u32) {
        self.held[id as usize] = false;
        self.count -= 1;
    }

    /// After a failure: the held request that arrived first (FCFS, so
    /// nothing is lost while the run winds down to its next progress check).
    fn fallback(&mut self, ctx: &SchedCtx) -> Option<ReqId> {
        let queue = self.fallback.get_or_insert_with(|| {
            let held = &self.held;
            (0..held.len() as u32).filter(|&i| held[i as usize]).map(|i| (ctx.reqs.get(ReqId(i)).seq, i)).collect()
        });
        let (_, id) = queue.pop_first()?;
        self.release(id);
        Some(ReqId(id))
    }

    /// Call `f` with the context window open on `ctx`.
    fn call<'py>(&self, py: Python<'py>, f: &Py<PyAny>, args: impl IntoPyObject<'py, Target = PyTuple>, ctx: &SchedCtx,
                 current: Option<u32>) -> PyResult<Bound<'py, PyAny>> {
        self.win.open(ctx, &self.held, current);
        let r = f.bind(py).call1(args);
        self.win.close();
        r
    }
}

impl Scheduler for PyScheduler {
    fn name(&self) -> &'static str {
        self.name
    }

    fn bypass(&self, id: ReqId, ctx: &SchedCtx) -> bool {
        let Some(f) = &self.bypass else { return false };
        if self.failed.get() {
            return false;
        }
        Python::with_gil(|py| match self.call(py, f, (id.0, self.ctx.bind(py)), ctx, Some(id.0)).and_then(|r| r.is_truthy()) {
            Ok(b) => b,
            Err(e) => {
                self.failed_in(py, "bypass", ctx.now.0, e);
                false
            }
        })
    }

    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.hold(id, ctx.reqs.get(id).seq);
        if self.failed.get() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = self.call(py, &self.insert, (id.0, self.ctx.bind(py)), ctx, None) {
                self.failed_in(py, "insert", ctx.now.0, e);
            }
        })
    }

    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId> {
        if self.failed.get() {
            return self.fallback(ctx);
        }
        Python::with_gil(|py| {
            let r = match self.call(py, &self.dispatch, (self.ctx.bind(py), force), ctx, None) {
                Ok(r) => r,
                Err(e) => {
                    self.failed_in(py, "dispatch", ctx.now.0, e);
                    return self.fallback(ctx);
                }
            };
            if r.is_none() {
                if force && self.count > 0 {
                    self.violation(py, "dispatch", ctx.now.0, format!("returned None with force=True while holding {} requests", self.count));
                    return self.fallback(ctx);
                }
                return None;
            }
            // A bool is an int to Python (True == 1): never take it for an id.
            let id = if r.is_instance_of::<PyBool>() { Err(()) } else { r.extract::<u32>().map_err(drop) };
            match id {
                Ok(id) if self.holds(id) => {
                    self.release(id);
                    Some(ReqId(id))
                }
                Ok(id) => {
                    self.violation(py, "dispatch", ctx.now.0, format!("returned request id {id}, which it does not hold"));
                    self.fallback(ctx)
                }
                Err(()) => {
                    let shown = r.repr().map(|s| s.to_string()).unwrap_or_default();
                    self.violation(py, "dispatch", ctx.now.0, format!("returned {shown}, expected a request id it holds (int) or None"));
                    self.fallback(ctx)
                }
            }
        })
    }

    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        let Some(f) = &self.complete else { return };
        if self.failed.get() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = self.call(py, f, (id.0, self.ctx.bind(py)), ctx, Some(id.0)) {
                self.failed_in(py, "complete", ctx.now.0, e);
            }
        })
    }

    fn wake_at(&self) -> Option<SimTime> {
        let f = self.wake_at.as_ref()?;
        if self.failed.get() {
            return None;
        }
        Python::with_gil(|py| match f.bind(py).call0() {
            Ok(r) => match r.extract::<Option<u64>>() {
                Ok(t) => t.map(SimTime),
                Err(_) => {
                    // NaN, a negative number, a float, a string: the contract's violation, said as such (not a bare TypeError).
                    let shown = r.repr().map(|s| s.to_string()).unwrap_or_else(|_| "?".into());
                    self.violation(py, "wake_at_ns", self.now_ns(), format!(
                        "returned {shown}, expected None or a simulated time in integer ns, 0..{}", u64::MAX));
                    None
                }
            },
            Err(e) => {
                self.failed_in(py, "wake_at_ns", self.now_ns(), e);
                None
            }
        })
    }

    fn drain(&mut self) -> Vec<ReqId> {
        if let (Some(f), false) = (&self.drain, self.failed.get()) {
            Python::with_gil(|py| {
                if let Err(e) = f.bind(py).call0() {
                    self.failed_in(py, "drain", self.now_ns(), e);
                }
            });
        }
        let ids: Vec<ReqId> = (0..self.held.len() as u32).filter(|&i| self.held[i as usize]).map(ReqId).collect();
        self.held.clear();
        self.count = 0;
        self.fallback = self.fallback.as_ref().map(|_| Default::default());
        ids
    }

    fn len(&self) -> usize {
        self.count
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let Some(f) = &self.counters else { return Vec::new() };
        Python::with_gil(|py| match f.bind(py).call0().and_then(|r| r.extract::<HashMap<String, u64>>()) {
            Ok(m) => {
                let mut v: Vec<(&'static str, u64)> = m.iter().map(|(k, v)| (leak(k), *v)).collect();
                v.sort();
                v
            }
            Err(e) => {
                self.failed_in(py, "counters", self.now_ns(), e);
                Vec::new()
            }
        })
    }

    fn init_class(&mut self, flow: u32) {
        let Some(f) = &self.init_class else { return };
        if self.failed.get() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = f.bind(py).call1((flow,)) {
                self.failed_in(py, "init_class", self.now_ns(), e);
            }
        })
    }

    fn fini_class(&mut self, flow: u32) {
        let Some(f) = &self.fini_class else { return };
        if self.failed.get() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = f.bind(py).call1((flow,)) {
                self.failed_in(py, "fini_class", self.now_ns(), e);
            }
        })
    }

    fn uses_classes(&self) -> bool {
        self.init_class.is_some() || self.fini_class.is_some()
    }
}

impl Plugins {
    /// The run's plug-ins from `run(..., schedulers=..., workloads=..., classifier=...)`: None without any.
    pub fn from_arg(py: Python<'_>, schedulers: Option<&Bound<'_, PyDict>>, workloads: Option<&Bound<'_, PyDict>>,
                    classifier: Option<&Bound<'_, PyAny>>, failure: &Failure) -> PyResult<Option<Plugins>> {
        let classifier = classifier.filter(|c| !c.is_none()).map(|c| c.clone().unbind());
        let p = Plugins { classes: classes(py, schedulers)?, workloads: classes(py, workloads)?, classifier, failure: failure.clone(),
                          clock: Arc::default() };
        Ok((!p.classes.is_empty() || !p.workloads.is_empty() || p.classifier.is_some()).then_some(p))
    }
}

/// Instantiate workload `class` with `settings` checked against its
/// tunables; an exception in its construction is the plug-in's `__init__()` error.
fn build_workload(class: &PluginClass, settings: &[(String, f64)], capacity: u64, failure: &Failure, clock: &Arc<AtomicU64>)
    -> Result<Box<dyn disksched_core::workload::Generator>, Error> {
    let values = sched::check_tunables("workload.set", class.tunables, settings)?;
    Python::with_gil(|py| {
        let mut refused: Option<Error> = None;
        let made = (|| -> PyResult<Box<dyn disksched_core::workload::Generator>> {
            let kw = PyDict::new(py);
            for t in class.tunables {
                let v = values.get(t.name);
                if t.ty == disksched_core::schema::Ty::Int {
                    kw.set_item(t.name, v as i64)?;
                } else {
                    kw.set_item(t.name, v)?;
                }
            }
            kw.set_item("capacity_blocks", capacity)?;
            let helpers = py.import("disksched.plugins")?;
            let (obj, closed): (Bound<PyAny>, bool) = helpers.call_method1("instantiate_workload", (class.cls.bind(py), kw))?.extract()?;
            // Before its per-client state is allocated: a count the memory budget refuses is the config's error, not the plug-in's failure.
            if closed {
                if let Ok(clients) = obj.getattr("clients").and_then(|c| c.extract::<u32>()) {
                    crate::plugin_workload::check_clients(class.name, clients).map_err(|e| refused.insert(e).to_string())
                        .map_err(pyo3::exceptions::PyValueError::new_err)?;
                }
            }
            Ok(Box::new(crate::plugin_workload::PyWorkload::new(py, class.name, obj, closed, capacity, failure.clone())?))
        })();
        if let Some(e) = refused {
            return Err(e);
        }
        made.map_err(|e| {
            let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
            fail(failure, plugin_error(py, "workload", class.name, "__init__", clock.load(Ordering::Relaxed), e));
            disksched_core::error::config_err(format!("workload plug-in '{}'", class.name), msg)
        })
    })
}

/// `f` with the GIL released, unless `keep` (a run calling Python plug-ins).
pub fn maybe_allow_threads<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, keep: bool, f: F) -> T {
    if keep {
        f()
    } else {
        py.allow_threads(f)
    }
}

/// Dispatch decisions per second of plug-in scheduler `name` (of
/// `schedulers`, {name: class}) holding `depth` requests on `disk`: the
/// built-ins' `dispatch_rate` (`sched::dispatch_rate_of`), for `bench`.
#[pyfunction]
pub fn plugin_dispatch_rate(py: Python<'_>, schedulers: Bound<'_, PyDict>, name: &str, depth: usize, decisions: u64, disk: &str)
    -> PyResult<f64> {
    let failure: Failure = Arc::default();
    let plugins = Plugins::new(py, &schedulers, failure.clone())?;
    let model = Arc::new(disksched_core::disk::DiskModel::new(disksched_core::disk::builtin::resolve(disk, None).map_err(crate::err)?)
        .map_err(crate::err)?);
    let rate = plugins.build_default(name).and_then(|s| sched::dispatch_rate_of(s, depth, decisions, 0, model));
    if let Some(e) = failure.lock().unwrap().take() {
        return Err(e);
    }
    rate.map_err(crate::err)
}

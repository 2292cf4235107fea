//! Thin PyO3 binding: converts types and errors, nothing else.
//! Module `disksched._core`; the Python package wraps it.

use disksched_core::disk::{builtin, DiskModel};
use disksched_core::metrics::Records;
use disksched_core::{sched, Error, SimConfig, Simulation};
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicUsize, Ordering};

mod plugin_sched;
mod plugin_workload;
mod records_parquet;
mod simulation;
mod serve;

create_exception!(_core, DiskschedError, PyValueError, "A user error: bad config, spec, tunable or file.");

/// Counts the Rust heap so benchmarks can report the simulator's own memory.
struct CountingAlloc;
static HEAP_NOW: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = HEAP_NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HEAP_NOW.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn err(e: Error) -> PyErr {
    match e {
        Error::Invariant(_) => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
        e => DiskschedError::new_err(e.to_string()),
    }
}

fn json_err(e: serde_json::Error) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
}

/// Run `run_it` with `record_sink` (a Python callable, if any) receiving each
/// chunk of records as a dict; its first exception lands in `raised` and the
/// chunks after it are dropped (the caller raises it once the run is over).
pub(crate) fn with_py_record_sink<T>(record_sink: Option<PyObject>, record_chunk_rows: usize, warmup_requests: u64,
                                     raised: &Arc<Mutex<Option<PyErr>>>, run_it: impl FnOnce() -> T) -> T {
    let Some(f) = record_sink else { return run_it() };
    let kept = raised.clone();
    let sink = Box::new(move |chunk: Records| {
        if kept.lock().unwrap().is_some() {
            return;
        }
        Python::with_gil(|py| {
            let r = records_dict(py, chunk, warmup_requests).and_then(|d| f.call1(py, (d,)).map(drop));
            if let Err(e) = r {
                *kept.lock().unwrap() = Some(e);
            }
        })
    });
    disksched_core::metrics::with_record_sink(record_chunk_rows, sink, run_it)
}

/// Per-request records as a dict of numpy columns, with `warmup` marking the
/// rows the summary leaves out (`run.warmup_requests`: the first requests by arrival order).
fn records_dict(py: Python<'_>, r: Records, warmup_requests: u64) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let warmup: Vec<bool> = r.seq.iter().map(|&s| s < warmup_requests).collect();
    d.set_item("seq", r.seq.into_pyarray(py))?;
    d.set_item("client", r.client.into_pyarray(py))?;
    d.set_item("lbn", r.lbn.into_pyarray(py))?;
    d.set_item("blocks", r.blocks.into_pyarray(py))?;
    d.set_item("disk", r.disk.into_pyarray(py))?;
    d.set_item("class", r.class.into_pyarray(py))?;
    d.set_item("is_write", r.is_write.into_pyarray(py))?;
    d.set_item("arrival_ns", r.arrival_ns.into_pyarray(py))?;
    d.set_item("host_dispatched_ns", r.host_dispatched_ns.into_pyarray(py))?;
    d.set_item("issued_ns", r.issued_ns.into_pyarray(py))?;
    d.set_item("started_ns", r.started_ns.into_pyarray(py))?;
    d.set_item("done_ns", r.done_ns.into_pyarray(py))?;
    d.set_item("seek_ns", r.seek_ns.into_pyarray(py))?;
    d.set_item("rotation_ns", r.rotation_ns.into_pyarray(py))?;
    d.set_item("transfer_ns", r.transfer_ns.into_pyarray(py))?;
    d.set_item("destage_wait_ns", r.destage_wait_ns.into_pyarray(py))?;
    d.set_item("destage_ns", r.destage_ns.into_pyarray(py))?;
    d.set_item("warmup", warmup.into_pyarray(py))?;
    Ok(d)
}

/// Run a simulation from config text (TOML, or JSON if `origin` ends in
/// `.json`: the Python package's resolved config with its overrides applied).
/// `origin` names the file (for messages and relative paths); `seed` replaces
/// the config's. With `record_sink`, per-request records (if the config keeps
/// them) are handed to it in chunks of `record_chunk_rows` as dicts of columns
/// while the run goes, and the returned records hold only the last chunk.
/// Returns (summary_json, counters_json, records or None, series or None).
#[pyfunction]
#[pyo3(signature = (config_text, origin, seed=None, progress=None, record_sink=None, record_chunk_rows=65536, schedulers=None,
                    workloads=None, classifier=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    config_text: &str,
    origin: &str,
    seed: Option<u64>,
    progress: Option<PyObject>,
    record_sink: Option<PyObject>,
    record_chunk_rows: usize,
    schedulers: Option<Bound<'py, PyDict>>,
    workloads: Option<Bound<'py, PyDict>>,
    classifier: Option<Bound<'py, PyAny>>,
) -> PyResult<(String, String, Option<Bound<'py, PyDict>>, Option<Bound<'py, PyDict>>)> {
    let mut cfg = if origin.ends_with(".json") {
        SimConfig::from_json(config_text, origin)
    } else {
        SimConfig::from_toml(config_text, origin)
    }
    .map_err(err)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    // A signal handler's exception (KeyboardInterrupt), the progress
    // callback's or the record sink's own is kept and raised, never swallowed
    // into "interrupted".
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let warmup_requests = cfg.run.warmup_requests;
    // Python plug-ins (schedulers by name): their errors land in `raised` too.
    let plugins = plugin_sched::Plugins::from_arg(py, schedulers.as_ref(), workloads.as_ref(), classifier.as_ref(), &raised)?;
    let run_it = || -> Result<_, Error> {
        let sim = plugin_sched::Plugins::simulation(plugins.as_ref(), &cfg)?;
        // A run with plug-ins keeps the GIL: they are called on every request.
        let keep_gil = plugins.is_some();
        plugin_sched::maybe_allow_threads(py, keep_gil, || {
            let mut cb = |done: u64, total: u64| -> bool {
                if raised.lock().unwrap().is_some() {
                    return false;
                }
                Python::with_gil(|py| {
                    let r = py.check_signals().and_then(|()| match &progress {
                        Some(f) => f.call1(py, (done, total)).map(drop),
                        None => Ok(()),
                    });
                    match r {
                        Ok(()) => true,
                        Err(e) => {
                            *raised.lock().unwrap() = Some(e);
                            false
                        }
                    }
                })
            };
            sim.run(&mut cb)
        })
    };
    let result = with_py_record_sink(record_sink, record_chunk_rows, warmup_requests, &raised, run_it);
    // The final progress call's result is ignored by the core: its exception
    // (or a signal that arrived after the last check) still ends the run here.
    let pending = raised.lock().unwrap().take();
    if let Some(e) = pending {
        return Err(e);
    }
    py.check_signals()?;
    let result = result.map_err(err)?;
    result_tuple(py, result, warmup_requests)
}

/// The Python side of a run's result: (summary_json, counters_json, records or None, series or None).
pub(crate) type ResultTuple<'py> = (String, String, Option<Bound<'py, PyDict>>, Option<Bound<'py, PyDict>>);

/// The schedulers' own counters into `counters`: "scheduler" ({"QUEUE.NAME": value}) and, when any
/// scheduler was switched out, "scheduler_retired" ({"QUEUE.SCHED until T ms": {NAME: value}}). The
/// disks of an array share a queue name: their counters are summed, not one disk's kept.
pub(crate) fn add_scheduler_counters(counters: &mut serde_json::Value, result: &disksched_core::sim::RunResult) {
    let mut sched = serde_json::Map::new();
    for (level, name, v) in &result.scheduler_counters {
        add_to(sched.entry(format!("{level}.{name}")).or_insert(0.into()), *v);
    }
    counters["scheduler"] = sched.into();
    if !result.retired_counters.is_empty() {
        let mut retired = serde_json::Map::new();
        for (label, name, v) in &result.retired_counters {
            let e = retired.entry(label.clone()).or_insert_with(|| serde_json::Value::Object(Default::default()));
            add_to(e.as_object_mut().expect("an object").entry(*name).or_insert(0.into()), *v);
        }
        counters["scheduler_retired"] = retired.into();
    }
}

fn add_to(slot: &mut serde_json::Value, v: u64) {
    *slot = slot.as_u64().unwrap_or(0).saturating_add(v).into();
}

/// A finished run's result as `run` returns it to Python.
pub(crate) fn result_tuple(py: Python<'_>, result: disksched_core::sim::RunResult, warmup_requests: u64) -> PyResult<ResultTuple<'_>> {
    let mut summary = serde_json::to_value(&result.summary).map_err(json_err)?;
    if let Some(f) = &result.freeblock {
        summary["freeblock"] = serde_json::to_value(f).map_err(json_err)?;
    }
    if let Some(n) = &result.disk_noise {
        summary["disk_noise"] = serde_json::to_value(n).map_err(json_err)?;
    }
    let summary = summary.to_string();
    let mut counters = serde_json::to_value(&result.counters).map_err(json_err)?;
    add_scheduler_counters(&mut counters, &result);
    let counters = counters.to_string();
    let recs = result.records.map(|r| records_dict(py, r, warmup_requests)).transpose()?;
    let series = match result.series {
        None => None,
        Some(s) => {
            let d = PyDict::new(py);
            d.set_item("window_ms", s.window_ms)?;
            d.set_item("client", s.client.into_pyarray(py))?;
            d.set_item("class", s.class)?;
            d.set_item("window", s.window.into_pyarray(py))?;
            d.set_item("bytes", s.bytes.into_pyarray(py))?;
            d.set_item("requests", s.requests.into_pyarray(py))?;
            d.set_item("deadline_requests", s.deadline_requests.into_pyarray(py))?;
            d.set_item("missed", s.missed.into_pyarray(py))?;
            d.set_item("sample_ns", s.sample_ns.into_pyarray(py))?;
            d.set_item("sample_name", s.sample_name)?;
            d.set_item("sample_value", s.sample_value.into_pyarray(py))?;
            d.set_item("task", s.task)?;
            d.set_item("task_window", s.task_window.into_pyarray(py))?;
            d.set_item("task_blocks", s.task_blocks.into_pyarray(py))?;
            d.set_item("task_done", s.task_done.into_pyarray(py))?;
            d.set_item("task_bytes", s.task_bytes.into_pyarray(py))?;
            Some(d)
        }
    };
    Ok((summary, counters, recs, series))
}

/// Check a run config without running it (`Simulation::new` does every
/// check a run does, including the disk and trace files, with the Python
/// plug-ins it may name; `check=False`: only parse it) and return it
/// resolved, with every default filled in: (TOML, JSON).
#[pyfunction]
#[pyo3(signature = (config_toml, origin, check=true, schedulers=None, workloads=None))]
fn config_resolve<'py>(py: Python<'py>, config_toml: &str, origin: &str, check: bool, schedulers: Option<Bound<'py, PyDict>>,
                       workloads: Option<Bound<'py, PyDict>>) -> PyResult<(String, String)> {
    let cfg = if origin.ends_with(".json") {
        SimConfig::from_json(config_toml, origin)
    } else {
        SimConfig::from_toml(config_toml, origin)
    }
    .map_err(err)?;
    if check {
        let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
        let built = match plugin_sched::Plugins::from_arg(py, schedulers.as_ref(), workloads.as_ref(), None, &raised)? {
            Some(p) => p.with(|| Simulation::new(&cfg).map(drop)),
            None => py.allow_threads(|| Simulation::new(&cfg).map(drop)),
        };
        // A plug-in's own exception (its __init__) is raised as it is.
        if let Some(e) = raised.lock().unwrap().take() {
            return Err(e);
        }
        built.map_err(err)?;
    }
    let json = serde_json::to_string(&cfg).map_err(json_err)?;
    let toml = toml::to_string(&cfg).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok((toml, json))
}

/// The run-config reference (Markdown: every key, type, unit, default, bounds), from the declared schema.
#[pyfunction]
fn config_reference() -> String {
    disksched_core::reference::reference_markdown()
}

/// Names of the built-in disks.
#[pyfunction]
fn disk_names() -> Vec<&'static str> {
    builtin::names()
}

/// A disk's spec as TOML, and a JSON object of derived facts.
#[pyfunction]
#[pyo3(signature = (name, base_dir=None))]
fn disk_show(name: &str, base_dir: Option<&str>) -> PyResult<(String, String)> {
    let spec = builtin::resolve(name, base_dir.map(Path::new)).map_err(err)?;
    let model = DiskModel::new(spec).map_err(err)?;
    let outer = model.media_rate_bytes_per_s(0) / 1e6;
    let inner = model.media_rate_bytes_per_s(model.spec.cylinders - 1) / 1e6;
    let facts = serde_json::json!({
        "name": model.spec.name,
        "description": model.spec.description,
        "validated": model.spec.validated,
        "source": model.spec.source,
        "capacity_blocks": model.layout.capacity(),
        "capacity_gb": model.spec.capacity_bytes() as f64 / 1e9,
        "rpm": model.spec.rpm,
        "revolution_ms": model.mech.revolution_ns() as f64 / 1e6,
        "surfaces": model.spec.surfaces,
        "cylinders": model.spec.cylinders,
        "layout": if model.layout.is_table() {
            "per-track table (DiskSim dm_layout_g4)".to_string()
        } else {
            format!("{} zones", model.spec.layout.zones.len())
        },
        "media_rate_outer_mb_s": outer,
        "media_rate_inner_mb_s": inner,
        "seek_single_cylinder_ms": model.mech.seek_ns(1) as f64 / 1e6,
        "seek_full_stroke_ms": model.mech.seek_ns(model.mech.max_seek_distance()) as f64 / 1e6,
        "head_switch_ms": model.spec.seek.head_switch_ms,
        "write_settle_ms": model.spec.seek.write_settle_ms,
    });
    Ok((model.spec.to_toml(), facts.to_string()))
}

/// Validate a disk against a DiskSim validate trace: (summary JSON, measured ms,
/// simulated ms); the two sample arrays only with `samples` (else None: a caller
/// that prints the summary alone does not pay numpy's import, most of its start-up).
#[pyfunction]
#[pyo3(signature = (disk, trace, samples=true))]
#[allow(clippy::type_complexity)]
fn validate<'py>(py: Python<'py>, disk: &str, trace: &str, samples: bool)
    -> PyResult<(String, Option<Bound<'py, numpy::PyArray1<f64>>>, Option<Bound<'py, numpy::PyArray1<f64>>>)> {
    let model = std::sync::Arc::new(DiskModel::new(builtin::resolve(disk, None).map_err(err)?).map_err(err)?);
    let v = py.allow_threads(|| disksched_core::validate::validate(model, trace)).map_err(err)?;
    let summary = serde_json::to_string(&v).map_err(json_err)?;
    if !samples {
        return Ok((summary, None, None));
    }
    Ok((summary, Some(v.measured_ms.into_pyarray(py)), Some(v.simulated_ms.into_pyarray(py))))
}

fn model_of(disk: &str) -> PyResult<DiskModel> {
    DiskModel::new(builtin::resolve(disk, None).map_err(err)?).map_err(err)
}

/// What `characterize` reads off a disk model, as JSON: geometry, zones with
/// their media rates, the seek curve at `seek_distances` (cylinders) and the
/// LBNs of each track of `cylinders` ([[first, count] by head] each) and the cylinder and sectors per track of
/// each of `lbns` (null past the end).
#[pyfunction]
#[pyo3(signature = (disk, seek_distances=vec![], cylinders=vec![], lbns=vec![]))]
fn disk_characteristics(py: Python<'_>, disk: &str, seek_distances: Vec<u32>, cylinders: Vec<u32>, lbns: Vec<u64>) -> PyResult<String> {
    use disksched_core::characterize as ch;
    let model = model_of(disk)?;
    let facts = py.allow_threads(|| serde_json::json!({
        "name": model.spec.name,
        "rpm": model.spec.rpm,
        "revolution_ms": model.mech.revolution_ns() as f64 / 1e6,
        "sector_bytes": model.spec.sector_bytes,
        "capacity_blocks": model.layout.capacity(),
        "cylinders": model.layout.cylinders(),
        "surfaces": model.layout.surfaces(),
        "max_seek_distance": model.mech.max_seek_distance(),
        // Cylinders of the first and last LBN: the reach of a seek between LBNs.
        "lbn_cylinders": [model.layout.lbn_to_pbn(0).cylinder, model.layout.lbn_to_pbn(model.layout.capacity() - 1).cylinder],
        "head_switch_ms": model.mech.head_switch_ns as f64 / 1e6,
        "average_seek_ms": ch::average_seek_ms(&model),
        "zones": ch::zones(&model),
        "seek_ms": seek_distances.iter().map(|&d| ch::seek_ms(&model, d)).collect::<Vec<_>>(),
        "cylinder_tracks": cylinders.iter().map(|&c| ch::cylinder_tracks(&model, c)).collect::<Vec<_>>(),
        "lbn_cylinder": lbns.iter().map(|&l| (l < model.layout.capacity()).then(|| model.layout.lbn_to_pbn(l).cylinder))
            .collect::<Vec<_>>(),
        // Sectors per track of each of `lbns`' tracks (a track table's differ by surface within a cylinder).
        "lbn_sectors_per_track": lbns.iter().map(|&l| (l < model.layout.capacity()).then(|| {
            let p = model.layout.lbn_to_pbn(l);
            model.layout.sectors_per_track(p.cylinder, p.head)
        })).collect::<Vec<_>>(),
    }));
    serde_json::to_string(&facts).map_err(json_err)
}

/// Import a disk (DiskSim file, or any resolvable disk) and return its spec as TOML.
/// `disk` names the `disksim_disk` (or `dm_disk`) block of a file that holds several.
#[pyfunction]
#[pyo3(signature = (path, name=None, disk=None))]
fn disk_import(path: &str, name: Option<&str>, disk: Option<&str>) -> PyResult<String> {
    let mut spec = match disk {
        Some(d) => disksched_core::disk::disksim::import(Path::new(path), name, Some(d)).map_err(err)?,
        None => builtin::resolve(path, None).map_err(err)?,
    };
    if let Some(n) = name {
        spec.name = n.to_string();
    }
    DiskModel::new(spec.clone()).map_err(err)?;
    Ok(spec.to_toml())
}

/// A disk spec (TOML) from datasheet figures given as JSON.
#[pyfunction]
fn disk_datasheet(figures_json: &str) -> PyResult<String> {
    let sheet = disksched_core::disk::datasheet::Datasheet::from_json(figures_json).map_err(err)?;
    Ok(sheet.build().map_err(err)?.to_toml())
}

fn tunables_json(ts: &[sched::Tunable]) -> Vec<serde_json::Value> {
    ts.iter().map(|t| serde_json::json!({
        "name": t.name, "unit": t.unit, "min": t.min, "default": t.default, "max": t.max, "bounds": t.bounds_text(), "help": t.help,
    })).collect()
}

/// The scheduler registry as JSON: name, aliases, summary, tunables.
#[pyfunction]
fn schedulers() -> String {
    let list: Vec<_> = sched::REGISTRY
        .iter()
        .map(|s| serde_json::json!({ "name": s.name, "aliases": s.aliases, "summary": s.summary, "tunables": tunables_json(s.tunables) }))
        .collect();
    serde_json::to_string(&list).expect("registry serializes")
}

/// The shaper's policies and tunables as JSON: {policies: [{name, summary}], policy_tunables, pipe_tunables}.
#[pyfunction]
fn shaper_info() -> String {
    use disksched_core::qos;
    serde_json::json!({
        "policies": qos::POLICIES.iter().map(|(n, s)| serde_json::json!({"name": n, "summary": s})).collect::<Vec<_>>(),
        "policy_tunables": tunables_json(qos::POLICY_TUNABLES),
        "pipe_tunables": tunables_json(qos::PIPE_TUNABLES),
    }).to_string()
}

/// Dispatch decisions per second of scheduler `name` at queue depth `depth` on a built-in disk.
#[pyfunction]
fn dispatch_rate(py: Python<'_>, name: &str, depth: usize, decisions: u64, disk: &str, range_blocks: u32) -> PyResult<f64> {
    let model = std::sync::Arc::new(DiskModel::new(builtin::resolve(disk, None).map_err(err)?).map_err(err)?);
    py.allow_threads(|| sched::dispatch_rate(name, depth, decisions, range_blocks, model)).map_err(err)
}

fn trace_format(name: Option<&str>) -> PyResult<Option<disksched_core::trace::TraceFormat>> {
    name.map(str::parse).transpose().map_err(err)
}

/// Summary of a trace file (one streaming pass) as JSON.
#[pyfunction]
#[pyo3(signature = (path, format=None, skip_bad_lines=false))]
fn trace_info(py: Python<'_>, path: &str, format: Option<&str>, skip_bad_lines: bool) -> PyResult<String> {
    let format = trace_format(format)?;
    let info = py.allow_threads(|| disksched_core::trace::info::info(path, format, skip_bad_lines)).map_err(err)?;
    serde_json::to_string(&info).map_err(json_err)
}

/// Convert a trace to format `to` at `out` (written whole or not at all); returns the records written.
#[pyfunction]
#[pyo3(signature = (path, to, out, format=None, skip_bad_lines=false))]
fn trace_convert(py: Python<'_>, path: &str, to: &str, out: &str, format: Option<&str>, skip_bad_lines: bool) -> PyResult<u64> {
    let format = trace_format(format)?;
    let to = to.parse().map_err(err)?;
    // Ctrl-C stops the conversion (the core removes its temporary) and is raised here.
    let mut raised: Option<PyErr> = None;
    let n = py.allow_threads(|| {
        disksched_core::trace::convert::convert_until(path, format, skip_bad_lines, to, out, &mut || {
            Python::with_gil(|py| match py.check_signals() {
                Ok(()) => true,
                Err(e) => {
                    raised = Some(e);
                    false
                }
            })
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    n.map_err(err)
}

/// Parsing speed of a trace format (generated file of `lines` lines), lines per second.
#[pyfunction]
fn trace_parse_rate(py: Python<'_>, format: &str, lines: u64) -> PyResult<f64> {
    let f: disksched_core::trace::TraceFormat = format.parse().map_err(err)?;
    py.allow_threads(|| disksched_core::trace::bench_parse(f, lines)).map_err(err)
}

/// (current, peak) bytes of Rust heap; `reset` sets the peak to the current.
#[pyfunction]
#[pyo3(signature = (reset=false))]
fn heap_bytes(reset: bool) -> (usize, usize) {
    let now = HEAP_NOW.load(Ordering::Relaxed);
    if reset {
        HEAP_PEAK.store(now, Ordering::Relaxed);
    }
    (now, HEAP_PEAK.load(Ordering::Relaxed))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DiskschedError", m.py().get_type::<DiskschedError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(serve::serve, m)?)?;
    m.add_function(wrap_pyfunction!(disk_names, m)?)?;
    m.add_function(wrap_pyfunction!(config_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(config_reference, m)?)?;
    m.add_function(wrap_pyfunction!(disk_show, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(shaper_info, m)?)?;
    m.add_function(wrap_pyfunction!(heap_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(dispatch_rate, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_sched::plugin_dispatch_rate, m)?)?;
    m.add_class::<simulation::PySimulation>()?;
    m.add_class::<records_parquet::RecordsParquet>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(trace_parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(disk_import, m)?)?;
    m.add_function(wrap_pyfunction!(disk_datasheet, m)?)?;
    m.add_function(wrap_pyfunction!(disk_characteristics, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    Ok(())
}

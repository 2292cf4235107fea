//! `disksched serve` in the binding: runs the core's NBD server with the GIL
//! released; Python's signal handlers are run every 100 ms (SIGINT, and
//! SIGTERM as the CLI maps it, end the session, whose result is returned).

use super::{err, json_err, records_dict};
use disksched_core::serve::{self as core_serve, Listen, ServeOptions};
use disksched_core::SimConfig;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// Serve config text as an NBD export until a signal handler raises (or
/// `should_stop()` returns true); `options_json` holds listen, allow_remote,
/// size_bytes, backing, stats, max_connections, max_request_kb, export_name,
/// catch_up, handshake_timeout_s.
/// `on_ready(address)` is called once the socket listens. Returns
/// (summary_json, counters_json, records or None, serve_stats_json, stopped_by):
/// `stopped_by` is the exception's text that ended the session, if any.
/// `schedulers` / `workloads`: Python plug-ins the config may name, as for
/// `run` (a plug-in's exception ends the session and is raised).
#[pyfunction]
#[pyo3(signature = (config_text, origin, options_json, on_ready, seed=None, record_sink=None, record_chunk_rows=65536,
                    schedulers=None, workloads=None))]
#[allow(clippy::too_many_arguments)]
pub fn serve<'py>(
    py: Python<'py>,
    config_text: &str,
    origin: &str,
    options_json: &str,
    on_ready: PyObject,
    seed: Option<u64>,
    record_sink: Option<PyObject>,
    record_chunk_rows: usize,
    schedulers: Option<Bound<'py, pyo3::types::PyDict>>,
    workloads: Option<Bound<'py, pyo3::types::PyDict>>,
) -> PyResult<(String, String, Option<Bound<'py, pyo3::types::PyDict>>, String, Option<String>)> {
    let mut cfg = if origin.ends_with(".json") { SimConfig::from_json(config_text, origin) } else { SimConfig::from_toml(config_text, origin) }.map_err(err)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let o: serde_json::Value = serde_json::from_str(options_json).map_err(json_err)?;
    let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
    // A count option as given (before any narrowing: 99999999 KB is reported as 99999999, not as a clamped value).
    let n = |k: &str, (lo, d, hi): (u32, u32, u32)| -> PyResult<u64> {
        let flag = format!("--{}", k.replace('_', "-"));
        match o.get(k) {
            None | Some(serde_json::Value::Null) => Ok(d as u64),
            Some(v) => match v.as_u64() {
                Some(x) if (lo as u64..=hi as u64).contains(&x) => Ok(x),
                _ => Err(err(disksched_core::error::config_err(format!("{flag} {v}"), format!("expected {lo}..{hi}")))),
            },
        }
    };
    let listen = Listen::parse(&s("listen").unwrap_or_default(), o.get("allow_remote").and_then(|v| v.as_bool()).unwrap_or(false)).map_err(err)?;
    let opts = ServeOptions {
        listen,
        size_bytes: o.get("size_bytes").and_then(|v| v.as_u64()),
        backing: s("backing").map(Into::into),
        stats_path: s("stats").map(Into::into),
        max_connections: n("max_connections", core_serve::MAX_CONNECTIONS)? as u32,
        max_request_bytes: (n("max_request_kb", core_serve::MAX_REQUEST_KB)? * 1024) as u32,
        export_name: s("export_name").unwrap_or_else(|| "disksched".into()),
        catch_up: o.get("catch_up").and_then(|v| v.as_bool()).unwrap_or(true),
        // Out of range (or negative) comes back as the core's one-line error.
        handshake_timeout: std::time::Duration::try_from_secs_f64(o.get("handshake_timeout_s").and_then(|v| v.as_f64()).unwrap_or(core_serve::HANDSHAKE_TIMEOUT_S.1))
            .unwrap_or(std::time::Duration::ZERO),
    };
    let warmup_requests = cfg.run.warmup_requests;
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let stopped_by: Arc<Mutex<Option<String>>> = Arc::default();
    let plugins = crate::plugin_sched::Plugins::from_arg(py, schedulers.as_ref(), workloads.as_ref(), None, &raised)?;
    let run_it = || -> Result<_, disksched_core::Error> {
        let sim = crate::plugin_sched::Plugins::simulation(plugins.as_ref(), &cfg)?;
        // Plug-ins take the GIL for each call, as the signal check does.
        py.allow_threads(|| {
            // The session ends by a signal's exception: its type's name is what stopped it.
            let stop_by = |py: Python<'_>, e: &PyErr| {
                *stopped_by.lock().unwrap() = Some(e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default());
            };
            let mut ready = |addr: &str| {
                Python::with_gil(|py| {
                    if let Err(e) = on_ready.call1(py, (addr,)) {
                        if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                            // A signal handled while the callback ran (SIGINT or SIGTERM just
                            // after the socket appeared) asks the session to stop, as at any later moment.
                            stop_by(py, &e);
                        } else {
                            *raised.lock().unwrap() = Some(e);
                        }
                    }
                })
            };
            let mut stop = || -> bool {
                if raised.lock().unwrap().is_some() || stopped_by.lock().unwrap().is_some() {
                    return true;
                }
                Python::with_gil(|py| match py.check_signals() {
                    Ok(()) => false,
                    Err(e) => {
                        // The signal is the request to stop: the session ends and its result is kept.
                        stop_by(py, &e);
                        true
                    }
                })
            };
            core_serve::serve(sim, &opts, &mut ready, &mut stop)
        })
    };
    let report = crate::with_py_record_sink(record_sink, record_chunk_rows, warmup_requests, &raised, run_it);
    if let Some(e) = raised.lock().unwrap().take() {
        return Err(e);
    }
    let report = report.map_err(err)?;
    let result = report.result;
    let mut summary = serde_json::to_value(&result.summary).map_err(json_err)?;
    if let Some(f) = &result.freeblock {
        summary["freeblock"] = serde_json::to_value(f).map_err(json_err)?;
    }
    if let Some(n) = &result.disk_noise {
        summary["disk_noise"] = serde_json::to_value(n).map_err(json_err)?;
    }
    let mut counters = serde_json::to_value(&result.counters).map_err(json_err)?;
    crate::add_scheduler_counters(&mut counters, &result);
    let recs = result.records.map(|r| records_dict(py, r, warmup_requests)).transpose()?;
    let stopped = stopped_by.lock().unwrap().take();
    Ok((summary.to_string(), counters.to_string(), recs, report.stats.to_string(), stopped))
}

"""`disksched bench`: simulator speed and memory on fixed workloads.

Each run happens in a fresh subprocess that imports only the core, so its
peak RSS is the simulator's (plus a bare interpreter), and the Rust heap
peak is reported beside it.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

from . import _core

OPEN_SCHEDULERS = ["fcfs", "clook", "sstf", "sptf"]
# Python plug-ins (disksched.pysched) on the same `open` workload: the cost of calling Python per request.
PLUGIN_SCHEDULERS = ["py_fcfs", "py_sptf"]


def bench_configs(requests: int) -> list[tuple[str, str, dict]]:
    """(workload, scheduler, config) for every benchmark run."""
    runs = []
    for sched in OPEN_SCHEDULERS + PLUGIN_SCHEDULERS:
        runs.append(("open", sched, {
            "seed": 1,
            "disk": {"model": "atlas10k"},
            "host": {"scheduler": sched, "queue_threshold": 1},
            "workload": {"kind": "open", "interarrival_ms": 10.0, "arrivals": "poisson",
                         "size_kb": 4.0, "size_dist": "constant", "read_fraction": 2 / 3},
            "run": {"requests": requests},
        }))
    def closed(clients: int, sched: str) -> dict:
        return {
            "seed": 1,
            "disk": {"model": "atlas10k"},
            "host": {"scheduler": sched, "queue_threshold": 1},
            "workload": {"kind": "closed", "clients": clients, "think_time_ms": 0.0,
                         "size_kb": 4.0, "size_dist": "constant", "read_fraction": 2 / 3},
            "run": {"requests": requests},
        }

    # Queue depth 16 (the Python plug-ins' target and their built-in twins): 16 clients that never
    # think keep 16 requests outstanding; the host (threshold 1) holds the 15 not in service.
    for sched in ["fcfs", "sptf"] + PLUGIN_SCHEDULERS:
        runs.append(("closed16", sched, closed(16, sched)))
    for clients in (32, 128):
        runs.append((f"closed{clients}", "sptf", closed(clients, "sptf")))
    runs.append(("oltp+freeblock", "sptf", {
        "seed": 1,
        "disk": {"model": "atlas10k", "scheduler": "sptf"},
        "host": {"scheduler": "fcfs", "queue_threshold": 16},
        "workload": {"kind": "oltp"},
        "run": {"requests": max(requests // 10, 1000)},
        "freeblock": {"idle": False},
    }))
    return runs


DISPATCH_DEPTHS = [16, 256, 1024]
DISPATCH_SCHEDULERS = ["sptf", "sptf_sw", "asptf"]


def dispatch_rates(decisions: int) -> list[dict]:
    """SPTF-family dispatch decisions per second at deep queues, and the
    Python plug-ins' (and their built-in twins') at depth 16."""
    rows = [{"scheduler": s, "depth": d, "decisions_per_s": _core.dispatch_rate(s, d, decisions, "atlas10k", 0)}
            for s in DISPATCH_SCHEDULERS for d in DISPATCH_DEPTHS]
    plugins = _plugin_classes()
    for s in PLUGIN_SCHEDULERS:
        if not any(r["scheduler"] == s[3:] and r["depth"] == 16 for r in rows):  # the built-in twin, once
            rows.append({"scheduler": s[3:], "depth": 16, "decisions_per_s": _core.dispatch_rate(s[3:], 16, decisions, "atlas10k", 0)})
        rows.append({"scheduler": s, "depth": 16,
                     "decisions_per_s": _core.plugin_dispatch_rate(plugins, s, 16, decisions, "atlas10k")})
    return rows


def _plugin_classes() -> dict:
    from .pysched import PyFcfs, PySptf

    return {"py_fcfs": PyFcfs, "py_sptf": PySptf}


RANGE_SCHEDULERS = ["hrs", "ecs"]


def range_dispatch_rates(decisions: int) -> list[dict]:
    """Range-write scheduling decisions per second: 64 outstanding writes of 4096 targets each (Atlas 10K)."""
    return [{"scheduler": s, "depth": 64, "targets": 4096,
             "decisions_per_s": _core.dispatch_rate(s, 64, max(decisions // (1 if s == "hrs" else 50), 20), "atlas10k", 4096)}
            for s in RANGE_SCHEDULERS]


PARSE_FORMATS = ["msr", "spc", "alibaba", "tencent", "disksim-ascii", "fio"]


def parse_rates(lines: int) -> list[dict]:
    """Trace parsing speed per format (generated files)."""
    return [{"format": f, "lines": lines, "lines_per_s": _core.trace_parse_rate(f, lines)} for f in PARSE_FORMATS]


def hpl_replay(trace: str) -> dict:
    """Replay rate of the shared HP trace (open loop, Atlas 10K, SPTF in the drive)."""
    cfg = {"disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"queue_threshold": 16},
           "workload": {"kind": "trace", "path": trace, "map": "modulo"}}
    return {"workload": "hpl-replay", "scheduler": "sptf", **run_isolated(cfg)}


def peak_rss_mb() -> float:
    """This process's own peak resident set. `ru_maxrss` is not it: a child
    started by fork and exec keeps the parent's high-water mark, so on Linux
    read `VmHWM`, which exec resets."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(config: dict) -> dict:
    """Run one config in this process and measure it."""
    _core.heap_bytes(reset=True)
    t0 = time.perf_counter()
    host = config.get("host", {}).get("scheduler", "")
    plugins = _plugin_classes() if host in PLUGIN_SCHEDULERS else None
    summary, counters, _, _ = _core.run(json.dumps(config), "<bench>.json", None, schedulers=plugins)
    wall = time.perf_counter() - t0
    completed = json.loads(counters)["completed"]
    fb = json.loads(summary).get("freeblock")
    extra = {"planner_us_per_opportunity": fb["planner_us_per_opportunity"],
             "free_mb_per_s": fb["free_mb_per_s"]} if fb else {}
    return {
        **extra,
        "requests": completed,
        "wall_s": wall,
        "requests_per_s": completed / wall,
        "peak_rss_mb": peak_rss_mb(),
        "heap_peak_mb": _core.heap_bytes()[1] / 2**20,
        "mean_response_ms": json.loads(summary)["host_response_ms"]["mean"],
    }


STARTUP_REPEATS = 5
# A run short enough that the process is its start-up: the interpreter, the imports, the config, the output.
_STARTUP_RUN = 'seed = 1\n[disk]\nmodel = "atlas10k"\n[workload]\nkind = "open"\ninterarrival_ms = 10.0\n[run]\nrequests = 10\n'


def user_shell_env() -> dict:
    """This process's environment with Python's bytecode cache on, as a user's
    shell has it: under a PYTHONDONTWRITEBYTECODE every timed `disksched`
    would compile the package's modules from source."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def startup_times(repeats: int = STARTUP_REPEATS) -> list[dict]:
    """CPU seconds (user + sys, the best of `repeats` after one to warm the
    bytecode cache) of whole `disksched` processes: `validate` on the atlas10k
    trace, whose yardstick is DiskSim's own validation run (issue 35,
    docs/performance.md), and a 10-request `run`, each printing JSON."""
    import tempfile

    from . import data

    env = user_shell_env()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "startup.toml")
        with open(config, "w") as f:
            f.write(_STARTUP_RUN)
        commands = {"validate atlas10k": ["validate", "--disk", "atlas10k", "--trace", str(data.trace_path("atlas10k")), "--json"],
                    "run of 10 requests": ["run", config, "--json"]}
        for name, args in commands.items():
            cpu = []
            for _ in range(repeats + 1):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([sys.executable, "-m", "disksched", *args], check=True, env=env, cwd=tmp,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            rows.append({"command": name, "cpu_s": min(cpu[1:]), "repeats": repeats})
    return rows


def run_isolated(config: dict) -> dict:
    out = subprocess.run([sys.executable, "-m", "disksched.bench", json.dumps(config)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run_all(requests: int, on_result=None) -> list[dict]:
    results = []
    for workload, sched, cfg in bench_configs(requests):
        r = {"workload": workload, "scheduler": sched, **run_isolated(cfg)}
        results.append(r)
        if on_result:
            on_result(r)
    return results


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))


SWEEP_RUNS = 200
SWEEP_REQUESTS = 20_000


def sweep_rates(runs: int = SWEEP_RUNS, requests: int = SWEEP_REQUESTS) -> list[dict]:
    """Runs per second of a sweep of `runs` runs (the open FCFS benchmark config,
    `requests` each, one grid point, a seed per run): a local pool of 1 and of 2
    worker processes and a 2-worker Dask LocalCluster, start-up included."""
    from . import sweep_runner as sr

    cfg = dict(bench_configs(requests)[0][2])
    specs = sr.plan(cfg, seeds=runs)
    out = []

    def timed(label: str, workers: int, go) -> None:
        done = []
        t0, cpu0 = time.perf_counter(), time.process_time()
        go(lambda s, r: done.append(s.key))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert len(set(done)) == len(specs)
        # driver_cpu_s: this process's CPU time (a LocalCluster's scheduler runs here too): the cost
        # of handing out the runs, which a machine's other load does not change as it does the wall time.
        out.append({"runner": label, "workers": workers, "runs": len(specs), "requests_per_run": requests,
                    "wall_s": wall, "runs_per_s": len(specs) / wall, "driver_cpu_s": cpu})

    for w in (1, 2):
        timed("local pool", w, lambda fin, w=w: sr._on_pool(w, specs, fin))
    client, cluster = sr.connect("local", 2)
    try:
        timed("dask LocalCluster", 2, lambda fin: sr._on_dask(client, specs, fin))
    finally:
        client.close()
        cluster.close()
    return out

"""Sweeps: one config run at every point of a grid of dotted-key overrides,
for several seeds, on a local process pool or a Dask `distributed` cluster.

A sweep is a table of runs. Each run is keyed by the hash of its resolved
config (seed included) and the disksched version; with an output folder each
finished run is written atomically to `runs/KEY.json` by the driver, so a
re-run skips what is done, a run lost with a dead worker is simply run again,
and the table has every run exactly once. Results: `runs.parquet` / `runs.csv`
(one tidy row per run: grid keys, seed, every summary figure), `points.parquet`
/ `points.csv` (per grid point: mean and 95 % confidence interval of each
figure over the seeds), `sweep.json` (what was asked and what produced it).
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import json
import math
import os
import re
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from . import DiskschedError, __version__, _core, check_seed
from .overrides import normalize, parse_value

# A run whose worker died this many times is reported, not retried again.
MAX_ATTEMPTS = 3
# Two-sided 95 % Student t quantiles t_{0.975, df}, df = 1..30 (beyond: 1.96).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


@dataclass(frozen=True)
class RunSpec:
    """One run: its grid point ({dotted key: value}), seed, and the resolved config the core reads."""

    key: str
    point: tuple  # ((dotted key, value), ...) in grid order
    seed: int
    text: str  # resolved config, JSON
    origin: str  # for relative paths and messages (ends in .json)
    plugins: tuple = ()  # ((file name, source text), ...): plug-ins every worker loads before the run


def split_values(text: str) -> list[Any]:
    """`1,2,4` or `fcfs,sptf` or `[1,2],[3]`: values split at top-level commas, each parsed as a TOML value."""
    out, depth, cur, quote = [], 0, "", None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    out.append(cur)
    return [parse_value(v.strip()) for v in out]


def parse_axes(items: Iterable[str], flag: str) -> dict[str, list]:
    """CLI `--grid key=v1,v2,...` strings as {dotted key: [values]}."""
    out: dict[str, list] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise DiskschedError(f"{flag} {item!r}: expected key.path=value1,value2,..., e.g. host.queue_threshold=1,4,16")
        normalize({key: None}, flag)  # the key's shape
        if key in out:
            raise DiskschedError(f"{flag} {key}: given twice")
        out[key] = split_values(values)
    return out


def _seeds(seeds: Any, base: int) -> list[int]:
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if not 1 <= seeds <= 10_000:
            raise DiskschedError(f"seeds {seeds}: out of range, expected a count in [1, 10000] or a list of seeds")
        return [base + i for i in range(seeds)]
    out = [check_seed(s, "seed") for s in seeds]
    if not out or len(set(out)) != len(out):
        raise DiskschedError(f"seeds {list(seeds)!r}: expected distinct seeds")
    return out


def run_key(resolved: Mapping[str, Any], origin_dir: str, plugins: Sequence[tuple[str, str]] = ()) -> str:
    """The run's identity: its resolved config (seed included), the folder its relative paths
    resolve against, the disksched version, and the text of its plug-ins (if any)."""
    what = {"config": resolved, "dir": origin_dir, "version": __version__}
    if plugins:
        what["plugins"] = [hashlib.sha256(text.encode()).hexdigest() for _, text in plugins]
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


def read_plugins(files: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """(name, source text) of each plug-in file, checked by loading it here, and made
    nameable in this process (the driver resolves the configs that name them)."""
    from .plugins import load_source, read_source, use

    out = []
    for f in files:
        text = read_source(f)
        use(*load_source(str(f), text))
        out.append((str(f), text))
    return tuple(out)


# Plug-ins this worker process has loaded, by source hash: each is loaded once per process.
_LOADED: dict[str, tuple[dict, dict]] = {}


def _worker_plugins(plugins: Sequence[tuple[str, str]]) -> tuple[Any, Any]:
    """The schedulers and workloads of a run's plug-ins, loaded in this process."""
    from .plugins import load_source

    scheds, loads = {}, {}
    for name, text in plugins:
        h = hashlib.sha256((name + chr(0) + text).encode()).hexdigest()
        if h not in _LOADED:
            _LOADED[h] = load_source(name, text)
        scheds.update(_LOADED[h][0])
        loads.update(_LOADED[h][1])
    return scheds or None, loads or None


def plan(config, grid: Optional[Mapping[str, Sequence[Any]]] = None, *, zip: Optional[Mapping[str, Sequence[Any]]] = None,
         seeds: Any = 1, overrides: Any = None, plugins: Sequence[Any] = ()) -> list[RunSpec]:
    """Every run of a sweep, in order (grid points in product order, seeds inner), each distinct run once.
    `zip`: keys whose value lists go together (all the same length), one axis beside the grid's.
    `plugins`: Python files of schedulers / workloads the configs may name; their text goes with
    every run to its worker (which need not see the files) and is part of the run's key."""
    from . import resolve

    shipped = read_plugins(plugins)

    grid = {k: list(v) for k, v in (grid or {}).items()}
    zipped = {k: list(v) for k, v in (zip or {}).items()}
    for name, axes in (("grid", grid), ("zip", zipped)):
        normalize(axes, name)
        for k, v in axes.items():
            if not v:
                raise DiskschedError(f"{name} {k}: no values")
    if len({len(v) for v in zipped.values()}) > 1:
        raise DiskschedError("zip: every key needs the same number of values ("
                             + ", ".join(f"{k}: {len(v)}" for k, v in zipped.items()) + ")")
    both = set(grid) & set(zipped)
    if both:
        raise DiskschedError(f"{sorted(both)[0]}: in both grid and zip")
    base = normalize(overrides, "overrides")
    zip_rows = [tuple(zip_pairs) for zip_pairs in _zip_rows(zipped)] or [()]
    specs, seen = [], set()
    first = resolve(config, base, check=True)
    seed_list = _seeds(seeds, int(first.config.get("seed", 0)))
    for values in itertools.product(*grid.values()):
        for zrow in zip_rows:
            point = tuple(builtins.zip(grid.keys(), values)) + zrow
            res = resolve(config, {**base, **dict(point)}, check=True, flag="grid")
            # Absolute: a worker elsewhere (a Dask cluster on a shared file system) finds relative paths too.
            origin = os.path.abspath(res.origin)
            origin_dir = os.path.dirname(origin)
            for seed in seed_list:
                resolved = {**res.config, "seed": seed}
                key = run_key(resolved, origin_dir, shipped)
                if key in seen:
                    continue
                seen.add(key)
                specs.append(RunSpec(key, point, seed, json.dumps(resolved), origin, shipped))
    return specs


def _zip_rows(zipped: Mapping[str, list]) -> list[list]:
    if not zipped:
        return []
    n = len(next(iter(zipped.values())))
    return [[(k, v[i]) for k, v in zipped.items()] for i in range(n)]


def flatten(summary: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The summary's numbers as flat columns (`host_response_ms.p99`); lists (freeblock tasks) left out."""
    out: dict[str, Any] = {}
    for k, v in summary.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, name + "."))
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, (int, float)):
            out[name] = v
    return out


def execute(spec: RunSpec) -> dict:
    """Run one spec (in a worker): its summary figures, and the wall time."""
    t0 = time.perf_counter()
    scheds, loads = _worker_plugins(spec.plugins)
    summary, _, _, _ = _core.run(spec.text, spec.origin, spec.seed, schedulers=scheds, workloads=loads)
    return {"figures": flatten(json.loads(summary)), "wall_s": time.perf_counter() - t0}


def _row(spec: RunSpec, out: Mapping[str, Any]) -> dict:
    return {"run_key": spec.key, **dict(spec.point), "seed": spec.seed, **out["figures"], "wall_s": out["wall_s"]}


class Store:
    """A sweep folder's finished runs: `runs/KEY.json`, each written whole (temporary file, rename)."""

    def __init__(self, out: Optional[Path]):
        self.dir = Path(out) / "runs" if out is not None else None
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)

    def done(self, specs: Sequence[RunSpec]) -> dict[str, dict]:
        if self.dir is None:
            return {}
        found = {}
        for s in specs:
            p = self.dir / f"{s.key}.json"
            try:
                found[s.key] = json.loads(p.read_text())["result"]
            except (OSError, ValueError, KeyError):
                continue
        return found

    def put(self, spec: RunSpec, result: dict) -> None:
        if self.dir is None:
            return
        from . import provenance
        from .output import atomic_write

        p = provenance.make(json.loads(spec.text), dict(spec.point), spec.seed)
        text = json.dumps({"key": spec.key, "point": dict(spec.point), "seed": spec.seed, "result": result,
                           "provenance": p}) + "\n"
        atomic_write(self.dir / f"{spec.key}.json", lambda tmp: Path(tmp).write_text(text))


def run_specs(specs: Sequence[RunSpec], *, workers: Optional[int] = None, client: Any = None,
              out: Optional[Path] = None, progress: Optional[Callable[[int, int], Any]] = None) -> list[dict]:
    """Run every spec not already in `out` (sequentially with workers=1, else on a
    process pool of `workers` (default: every core) or on the Dask `client`) and
    return their rows in plan order, each run exactly once."""
    store = Store(out)
    results = store.done(specs)
    todo = [s for s in specs if s.key not in results]
    total = len(specs)
    if progress:
        progress(len(results), total)

    def finished(spec: RunSpec, res: dict) -> None:
        if spec.key in results:  # a retried run that had already come back
            return
        results[spec.key] = res
        store.put(spec, res)
        if progress:
            progress(len(results), total)

    if todo:
        if client is not None:
            _on_dask(client, todo, finished)
        elif (workers or os.cpu_count() or 1) == 1:
            for s in todo:
                finished(s, execute(s))
        else:
            _on_pool(workers or os.cpu_count() or 1, todo, finished)
    return [_row(s, results[s.key]) for s in specs]


_GUARD = re.compile(r"""__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__""")
_NEEDS_GUARD = ('a script that calls disksched.sweep with a process pool must do so under `if __name__ == "__main__":` '
                "(each worker imports the script, which would start the sweep again), or pass workers=1")


def _unguarded_script() -> Optional[str]:
    """The main script, if it is a Python file without an `if __name__ == "__main__":` guard (the
    process pool's workers import it: an unguarded sweep call would run again in each of them)."""
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or not str(path).endswith(".py") or getattr(main, "__spec__", None) is not None:
        return None  # interactive, a notebook, `python -m`, the disksched command
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return None
    return None if _GUARD.search(text) else str(path)


def _in_worker_import() -> bool:
    """True while a pool worker imports the main script (multiprocessing's spawn preparation)."""
    import multiprocessing as mp

    return mp.parent_process() is not None and bool(getattr(mp.current_process(), "_inheriting", False))


def _on_pool(workers: int, todo: Sequence[RunSpec], finished: Callable[[RunSpec, dict], None]) -> None:
    """A local process pool; a pool broken by a dead worker is replaced and its unfinished runs retried."""
    import multiprocessing as mp

    script = _unguarded_script()
    if script is not None:
        raise DiskschedError(f"{script}: {_NEEDS_GUARD}")
    attempts = {id(s): 0 for s in todo}
    pending = list(todo)
    while pending:
        with ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=mp.get_context("spawn")) as pool:
            futures = {pool.submit(execute, s): s for s in pending}
            for s in pending:
                attempts[id(s)] += 1
            broken = []
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for f in done:
                    s = futures.pop(f)
                    try:
                        finished(s, f.result())
                    except BrokenProcessPool:
                        broken.append(s)
            pending = broken
        for s in pending:
            if attempts[id(s)] >= MAX_ATTEMPTS:
                raise DiskschedError(f"run {s.key} ({_describe(s)}): its worker died {attempts[id(s)]} times"
                                     + ("; " + _NEEDS_GUARD if getattr(__import__("sys").modules.get("__main__"), "__file__", None) else ""))


# Runs per Dask task: about DASK_TASKS_PER_THREAD tasks per worker thread, at most DASK_BATCH_RUNS
# runs each. A task costs the driver (and a LocalCluster's scheduler in it) ~2.5 ms of CPU, a
# 20,000-request run ~12 ms; several tasks per thread keep the load balanced, and the cap keeps a
# cluster that is still growing (dask-jobqueue) from getting its work in a few large pieces.
DASK_TASKS_PER_THREAD = 4
DASK_BATCH_RUNS = 16


def execute_batch(specs: Sequence[RunSpec]) -> list[dict]:
    """`execute` each spec in turn (one Dask task)."""
    return [execute(s) for s in specs]


def _on_dask(client: Any, todo: Sequence[RunSpec], finished: Callable[[RunSpec, dict], None]) -> None:
    """Dask futures of a few runs each; the scheduler reruns the tasks of a worker that dies (its
    `allowed-failures`), and a run that comes back twice is kept once (`finished`)."""
    from distributed import as_completed

    threads = max(1, sum(client.nthreads().values()))
    size = min(DASK_BATCH_RUNS, max(1, math.ceil(len(todo) / (threads * DASK_TASKS_PER_THREAD))))
    batches = [list(todo[i:i + size]) for i in range(0, len(todo), size)]
    futures = {client.submit(execute_batch, b, key=f"disksched-runs-{b[0].key}-{len(b)}", pure=False,
                             retries=MAX_ATTEMPTS - 1): b for b in batches}
    for f in as_completed(list(futures)):
        for s, res in builtins.zip(futures[f], f.result()):
            finished(s, res)


def _describe(s: RunSpec) -> str:
    return ", ".join(f"{k}={v}" for k, v in s.point) + f", seed {s.seed}"


def connect(dask: Optional[str], workers: Optional[int] = None):
    """A Dask client: `local` starts a LocalCluster (`workers` processes, one thread each), else a scheduler address."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - a dependency
        raise DiskschedError("--dask needs dask.distributed (pip install 'dask[distributed]')") from None
    if dask == "local":
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster
    try:
        return Client(dask, timeout=30), None
    except OSError as e:
        raise DiskschedError(f"--dask {dask}: cannot reach the scheduler: {e}") from None


def ci95(values: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, standard deviation, CI low, CI high): the 95 % Student-t interval of the mean (the point for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n == 1 or any(not math.isfinite(v) for v in values):
        return mean, 0.0, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = (T975[n - 2] if n - 1 <= len(T975) else 1.96) * sd / math.sqrt(n)
    return mean, sd, mean - half, mean + half


def aggregate(runs, keys: Sequence[str]):
    """Per grid point: runs, and for each figure its mean, sd, ci_low, ci_high over the seeds."""
    import pandas as pd

    figures = [c for c in runs.columns if c not in (*keys, "run_key", "seed", "wall_s")
               and pd.api.types.is_numeric_dtype(runs[c])]
    rows = []
    groups = runs.groupby(list(keys), sort=False, dropna=False) if keys else [((), runs)]
    for point, g in groups:
        point = point if isinstance(point, tuple) else (point,)
        row = dict(builtins.zip(keys, point))
        row["runs"] = len(g)
        for f in figures:
            m, sd, lo, hi = ci95([float(v) for v in g[f]])
            row.update({f"{f}_mean": m, f"{f}_sd": sd, f"{f}_ci_low": lo, f"{f}_ci_high": hi})
        rows.append(row)
    return pd.DataFrame(rows)


def sweep(config, grid: Optional[Mapping[str, Sequence[Any]]] = None, *, zip: Optional[Mapping[str, Sequence[Any]]] = None,
          seeds: Any = 1, overrides: Any = None, workers: Optional[int] = None, client: Any = None,
          out: Optional[Path] = None, progress: Optional[Callable[[int, int], Any]] = None, plugins: Sequence[Any] = ()):
    """Run `config` at every grid point (all combinations of `grid`'s values,
    beside `zip`'s keys taken together) for each seed (a count: the config's
    seed and the next ones; or a list), on a local process pool of `workers`
    (default every core; 1: in this process) or on a Dask `client`. With `out`,
    every run is kept in `out/runs/` (a re-run does only the missing runs) and
    the tables are written there. `plugins`: Python files of schedulers / workloads the
    config may name (shipped to every worker). Returns a pandas DataFrame, one row per run."""
    import pandas as pd

    if _in_worker_import():  # an unguarded script run again by a pool worker: one line, not a traceback per worker
        import sys

        sys.stderr.write(f"disksched.sweep: {_NEEDS_GUARD}\n")
        os._exit(1)
    specs = plan(config, grid, zip=zip, seeds=seeds, overrides=overrides, plugins=plugins)
    rows = run_specs(specs, workers=workers, client=client, out=out, progress=progress)
    runs = pd.DataFrame(rows)
    if out is not None:
        write_tables(Path(out), runs, list((grid or {}).keys()) + list((zip or {}).keys()),
                     _sweep_provenance(config, grid, zip, seeds, overrides, specs))
    return runs


def _sweep_provenance(config, grid, zip_, seeds, overrides, specs) -> dict:
    from . import provenance, resolve

    base = resolve(config, normalize(overrides, "overrides"))
    p = provenance.make(base.config, base.overrides, None)
    p.pop("seed")
    p.update({"grid": {k: list(v) for k, v in (grid or {}).items()}, "zip": {k: list(v) for k, v in (zip_ or {}).items()},
              "seeds": sorted({s.seed for s in specs}), "runs": len(specs)})
    if specs and specs[0].plugins:
        p["plugins"] = [{"file": name, "sha256": hashlib.sha256(text.encode()).hexdigest()} for name, text in specs[0].plugins]
    return p


def write_tables(out: Path, runs, keys: Sequence[str], prov: Mapping[str, Any]) -> list[str]:
    """runs.parquet/csv, points.parquet/csv (mean and 95 % CI per grid point) and sweep.json, each with its provenance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from . import provenance
    from .output import atomic_write, write_json

    points = aggregate(runs, keys)
    header = provenance.csv_header(prov)
    written = []
    for name, df in (("runs", runs), ("points", points)):
        table = pa.Table.from_pandas(df, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               provenance.KEY.encode(): provenance.to_text(prov).encode()})
        atomic_write(out / f"{name}.parquet", lambda tmp, t=table: pq.write_table(t, tmp))
        atomic_write(out / f"{name}.csv", lambda tmp, d=df: _csv(tmp, d, header))
        written += [f"{name}.parquet", f"{name}.csv"]
    write_json(out / "sweep.json", {"provenance": prov, "keys": list(keys), "runs": len(runs)})
    written.append("sweep.json")
    return written


def _csv(path: str, df, header: str) -> None:
    with open(path, "w") as f:
        f.write(header)
        df.to_csv(f, index=False)


def plot(out: Path, y: str, x: str, hue: Optional[str] = None, path: Optional[Path] = None,
         log_x: Optional[bool] = None, log_y: Optional[bool] = None) -> Path:
    """A figure of the sweep in `out` (`points.parquet`) against grid key `x`, one line per value of `hue`,
    the 95 % confidence interval as a band; log axes as `log_x`, `log_y` say (None: `plots.wants_log`)."""
    import pandas as pd

    from . import provenance
    from .plots import figure_vs_key, png_provenance

    out = Path(out)
    points = pd.read_parquet(out / "points.parquet")
    prov = provenance.read(out / "points.parquet") or {}
    keys = set(prov.get("grid", {})) | set(prov.get("zip", {}))
    if f"{y}_mean" not in points:
        figures = sorted(c[:-5] for c in points.columns if c.endswith("_mean"))
        import difflib

        near = difflib.get_close_matches(y, figures, n=1, cutoff=0.0)
        raise DiskschedError(f"--y {y}: not a figure of this sweep" + (f"; nearest: {near[0]}" if near else ""))
    keys = [k for k in points.columns if k in keys]
    for flag, k in (("--x", x), ("--hue", hue)):
        if k is not None and k not in keys:
            raise DiskschedError(f"{flag} {k}: not a grid key of this sweep (grid keys: {', '.join(keys) or 'none'})")
    path = Path(path) if path is not None else out / f"{y}_vs_{x}.png"
    # One line per combination of the other grid keys (`hue` first in the legend).
    lines = ([hue] if hue else []) + [k for k in keys if k not in (x, hue)]
    with png_provenance(prov):
        figure_vs_key(path, points, x, y, lines, f"{y} against {x}", log_x=log_x, log_y=log_y)
    return path

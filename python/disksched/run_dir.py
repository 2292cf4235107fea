"""`disksched run --out DIR [--records]` in three processes, one working at a time, so that no
process holds matplotlib (~41 MB resident once imported) beside the simulation, and this one (the
CLI: ~41 MB with typer and the pydantic it loads) holds neither, nor numpy: a first child runs the
simulation and writes summary.json and records.parquet (`records.simulate`; the Parquet writer is
the core's, so no pyarrow) and leaves the plots' accumulators in a state file; a second draws the
plots from them (`records.draw`). Measured in tests/test_records.py (the peak resident memory of
each process and of all together)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from . import DiskschedError, Result, load_config


# The child imports this very disksched: where it was found, unless that folder is on the path already
# (site-packages, an editable install), so that only a folder added by hand goes first; and, as the
# `disksched` command, nothing from the current folder (`-c` puts it first on the path).
_CHILD = ("import sys\n"
          "sys.path[:] = [p for p in sys.path if p]\n"
          "if sys.argv[1] not in sys.path: sys.path.insert(0, sys.argv[1])\n"
          "from disksched.run_dir import _main\n"
          "sys.exit(_main(sys.argv[2]))\n")


def _child(job: Mapping[str, Any], progress: Optional[Callable[[int, int], Any]]) -> Any:
    """Run `_main(JOB)` in a child process to its end; hand its `progress` lines on; return its
    `ok` value. Its `error` is raised here; Ctrl-C here stops it before the caller cleans up."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(Path(__file__).resolve().parent.parent), json.dumps(job)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    error = value = None
    try:
        for line in child.stdout:
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "progress" and progress is not None:
                progress(*map(int, rest.split()))
            elif word == "error":
                error = json.loads(rest)
            elif word == "ok":
                value = json.loads(rest)
            elif word == "interrupted":
                error = KeyboardInterrupt(json.loads(rest))
        code = child.wait()
    except BaseException:  # Ctrl-C, or an error in `progress`: the child ends before the folder is removed
        child.kill()
        child.wait()
        raise
    finally:
        child.stdout.close()
    if isinstance(error, KeyboardInterrupt):
        raise error
    if error is not None:
        raise DiskschedError(error)
    if code in (130, -signal.SIGINT):
        raise KeyboardInterrupt
    if code != 0:
        raise DiskschedError(f"run --out: the {job['step']} process ended with exit code {code}")
    return value


def run_to_dir(out: Path, config, overrides: Mapping[str, Any], seed: Optional[int],
               progress: Optional[Callable[[int, int], Any]], name: str, log_x: bool = False,
               parquet: bool = False, plugins: Sequence[Path] = (),
               fio: Optional[tuple[Sequence[float], int]] = None) -> tuple[Result, list[str], Optional[dict]]:
    """Run and write what `disksched run --out` writes into `out` (a fresh
    folder): summary.json (with provenance), plots, series and, with
    `parquet`, records.parquet. `plugins`: `--plugin` files, registered again
    in the simulation's process. `fio`: (percentiles, block bytes) of a
    `run --output-format json` report (`fio_output`). Returns the result
    (summary, counters and provenance), the names written and the report
    (None without `fio`)."""
    out = Path(out)
    state = out / f".state-{os.getpid()}.pickle"
    is_path = not isinstance(config, Mapping)
    job = {"step": "simulation", "out": str(out), "state": str(state), "config": str(config) if is_path else None,
           "config_json": None if is_path else load_config(config)[0], "overrides": dict(overrides or {}),
           "seed": seed, "parquet": parquet, "plugins": [str(Path(f).resolve()) for f in plugins],
           "fio": None if fio is None else [list(fio[0]), fio[1]], "name": name}
    try:
        fio_report = _child(job, progress)
        written = _child({"step": "plotting", "out": str(out), "state": str(state), "name": name, "log_x": log_x,
                          "parquet": parquet}, None)
    finally:
        state.unlink(missing_ok=True)
    saved = json.loads((out / "summary.json").read_text())
    return Result(saved["summary"], saved["counters"], provenance=saved["provenance"]), written, fio_report


def _main(job_text: str) -> int:
    """A child of `run_to_dir`: one step, told on stdout a line each: `progress DONE TOTAL`,
    then `ok VALUE` or `error MESSAGE` (JSON)."""
    import pickle

    job = json.loads(job_text)

    def progress(done: int, total: int) -> None:
        try:
            sys.stdout.write(f"progress {done} {total}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the parent is gone (killed): stop quietly, it removes the folder
            os._exit(130)

    try:
        if job["step"] == "simulation":
            from . import plugins
            from .records import simulate

            for f in job["plugins"]:
                plugins.use(*plugins.load_file(f))
            config = job["config"] if job["config"] is not None else json.loads(job["config_json"])
            lat = None
            if job["fio"] is not None:
                from .fio_output import Latencies

                lat = Latencies()
            result, acc, p = simulate(Path(job["out"]), config, job["overrides"], job["seed"], progress,
                                      job["parquet"], plugin_files=job["plugins"], also=None if lat is None else lat.add)
            with open(job["state"], "wb") as f:
                pickle.dump((result, acc, p), f, protocol=pickle.HIGHEST_PROTOCOL)
            value = None
            if lat is not None:
                from .fio_output import report

                value = report(lat, job["fio"][0], job["name"], job["fio"][1], p, result.counters)
        else:
            from .records import draw

            with open(job["state"], "rb") as f:
                result, acc, p = pickle.load(f)
            value = draw(Path(job["out"]), result, acc, p, job["name"], log_x=job["log_x"], parquet=job["parquet"])
    except DiskschedError as e:
        sys.stdout.write(f"error {json.dumps(str(e))}\n")
        return 2
    except KeyboardInterrupt as e:
        if str(e):  # where it happened (a plug-in's call), for the parent to say
            sys.stdout.write(f"interrupted {json.dumps(str(e))}\n")
        return 130
    sys.stdout.write(f"ok {json.dumps(value)}\n")
    return 0

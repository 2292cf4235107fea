"""The `disksched` command line (typer)."""

import contextlib
import json
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import typer

from . import DiskschedError, __version__, _core
from . import run as run_sim

app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Disk I/O scheduling on a high-fidelity hard-disk simulator.")
disks_app = typer.Typer(no_args_is_help=True, help="Built-in disk specs.")
app.add_typer(disks_app, name="disks")
trace_app = typer.Typer(no_args_is_help=True, help="Trace files: summarise, convert.")
app.add_typer(trace_app, name="trace")
try:  # typer >= 0.2x shows every option's type: a flag takes no value, so show none ("--json", not "--json <bool>").
    from typer.core import TyperOption

    _display_type = TyperOption.display_type_rich
    TyperOption.display_type_rich = lambda self, ctx: None if self.is_flag else _display_type(self, ctx)
except (ImportError, AttributeError):  # older typer: click's own help, which already shows flags bare
    pass
try:  # typer >= 0.2x writes a required argument "{CONFIG}" in the usage line; click and man pages write CONFIG.
    from typer.core import TyperArgument

    _metavar = TyperArgument.make_metavar
    TyperArgument.make_metavar = lambda self, *a, **k: re.sub(r"^\{(.*)\}$", r"\1", _metavar(self, *a, **k))
except (ImportError, AttributeError):  # older typer: click's usage line
    pass
config_app = typer.Typer(no_args_is_help=True, help="Run configs: check one, show it resolved.")
app.add_typer(config_app, name="config")


class _Console:
    """rich's Console, built on first use: importing rich is a large share of a
    command's start-up (docs/performance.md), and `--json` output and most
    errors never need it."""

    def __init__(self, **options):
        self._options, self._console = options, None

    @property
    def rich(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def print(self, *objects, **kwargs) -> None:
        self.rich.print(*objects, **kwargs)


# No markup: paths and names are printed as they are ("[brackets]" included).
console = _Console(markup=False)
err_console = _Console(stderr=True, markup=False)


def _version(value: bool) -> None:
    if value:
        print(f"disksched {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")) -> None:
    """Disk I/O scheduling on a high-fidelity hard-disk simulator."""


def _interruptible(fn, *args):
    """Call `fn(*args)` (a binding call that holds no GIL and writes nothing) in a
    worker thread so that Ctrl-C reaches the main thread at once (exit code 130)."""
    box: dict = {}

    def work() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in box:
        raise box["error"]
    return box["value"]


class Progress:
    """A progress bar that appears only once a run has taken over 2 s (and stderr is a terminal)."""

    def __init__(self, label: str):
        self.label, self.start, self.bar, self.task = label, time.monotonic(), None, None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.start < 2.0 or not sys.stderr.isatty():
                return
            from rich.markup import escape
            from rich.progress import BarColumn, Progress as Bar, TaskProgressColumn, TextColumn, TimeRemainingColumn

            # A styled column, not "[progress.description]" markup (printed literally where markup is off).
            self.bar = Bar(TextColumn("{task.description}", style="progress.description"), BarColumn(), TaskProgressColumn(),
                           TimeRemainingColumn(), console=err_console.rich, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(escape(self.label), total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


_NUMBER = re.compile(r"^[-+]?[\d,.]+(e[-+]?\d+)?\s*(%|x|ms|s|MB/s|MB|GB|KB)?$|^-$")


def _table(title: str, columns: list[str], rows: list[list[str]]):
    from rich.table import Table

    t = Table(title=title)
    for i, c in enumerate(columns):
        # Numbers right-aligned; text left, wrapped (never cut to "+0.…") to fit 80 columns.
        numeric = i > 0 and rows and all(_NUMBER.match(r[i].strip()) for r in rows if i < len(r))
        t.add_column(c, justify="right" if numeric else "left", overflow="fold", no_wrap=i == 0)
    for r in rows:
        t.add_row(*r)
    return t


@app.command()
def run(config: Path = typer.Argument(..., metavar="CONFIG", help="Run config (TOML)."),
        seed: Optional[int] = typer.Option(None, help="Override the config's seed."),
        out: Optional[Path] = typer.Option(None, help="Directory for summary.json and the plots (see README)."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
        output_format: str = typer.Option("normal", "--output-format", metavar="FORMAT",
                                          help="normal (the table) or json: fio's JSON shape (jobs[0].read/.write: io_bytes, "
                                               "bw KiB/s, iops, lat_ns/clat_ns/slat_ns with exact percentiles) for scripts."),
        percentile_list: Optional[str] = typer.Option(None, "--percentile-list", metavar="P1:P2:..",
                                                      help="Percentiles of --output-format json, as fio's --percentile_list "
                                                           "(default fio's: 1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99)."),
        set_: list[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="Override any config key by its dotted path: "
                                       "host.scheduler=rr, host.set.wait_ms=5, disk.model=cheetah9lp (repeatable)."),
        records: bool = typer.Option(False, "--records", help="Write every request to OUT/records.parquet, "
                                     "streamed in chunks (memory stays flat at any run length)."),
        force: bool = typer.Option(False, "--force", help="Write into an --out folder that already holds files."),
        log_x: bool = typer.Option(False, "--log-x", help="Response-time CDFs on a logarithmic time axis."),
        plugin: list[Path] = typer.Option([], "--plugin", metavar="FILE.py", help="A Python file defining disksched.Scheduler / Workload subclasses; "
                                          "the config may name them (repeatable; docs/writing-a-scheduler.md).")) -> None:
    """Run one simulation from a config file."""
    from contextlib import nullcontext

    from . import check_seed, resolve
    from .fio_output import FORMATS, Latencies, parse_percentile_list, report, sector_bytes
    from .output import output_dir, run_title, summary_rows
    from .overrides import parse_assignments

    _use_plugins(plugin)
    # Every mistake that does not need the run is reported before it starts.
    seed = check_seed(seed, "--seed")
    overrides = parse_assignments(set_, "--set")
    if records and out is None:
        raise DiskschedError("--records needs --out DIR (records.parquet is written there)")
    if output_format not in FORMATS:
        raise DiskschedError(f"--output-format {output_format!r}: expected one of {', '.join(FORMATS)}")
    fio = output_format == "json"
    if fio and json_out:
        raise DiskschedError("--json and --output-format json: choose one")
    if percentile_list is not None and not fio:
        raise DiskschedError("--percentile-list applies to --output-format json")
    percentiles = parse_percentile_list(percentile_list) if fio else None
    res = resolve(config, overrides)
    block_bytes = sector_bytes(res) if fio else None
    progress = Progress(f"running {config.name}")
    fio_report = None
    with (output_dir(out, force) if out is not None else nullcontext()) as tmp:
        if tmp is not None:
            from .run_dir import run_to_dir

            try:
                result, written, fio_report = run_to_dir(tmp, config, overrides, seed, progress, config.name,
                                                         log_x=log_x, parquet=records, plugins=plugin,
                                                         fio=None if not fio else (percentiles, block_bytes))
            finally:
                progress.close()
        else:
            lat = Latencies() if fio else None
            try:
                result = run_sim(config, seed=seed, overrides=list(set_), progress=progress, records=fio or None,
                                 record_sink=None if lat is None else lat.add)
                if lat is not None and result.columns is not None:
                    lat.add(result.columns)
            finally:
                progress.close()
            if plugin:
                from .provenance import plugin_files

                result.provenance["plugins"] = plugin_files(plugin)
            if lat is not None:
                fio_report = report(lat, percentiles, config.name, block_bytes, result.provenance, result.counters)
    if fio_report is not None:
        print(json.dumps(fio_report, indent=2))
    elif json_out:
        # The summary's figures at the top level (as before), with what summary.json has beside them.
        print(json.dumps({**result.summary, "counters": result.counters, "provenance": result.provenance}, indent=2))
    else:
        console.print(_table(run_title(str(config), result.provenance), ["metric", "value"],
                             [list(r) for r in summary_rows(result.summary)]))
        if out is not None:
            console.print(f"wrote {out}/: {', '.join(written)}", highlight=False)


def _use_plugins(files: list[Path]) -> None:
    """Register the schedulers of each `--plugin` file for the runs of this command."""
    from . import plugins

    for f in files:
        plugins.use(*plugins.load_file(f))


@app.command()
def serve(config: Optional[Path] = typer.Argument(None, metavar="CONFIG", help="Run config (TOML): disk, schedulers, queues; its [workload] is not run."),
          disk: Optional[str] = typer.Option(None, "--disk", help="Drive to serve (built-in name, spec .toml or DiskSim file); "
                                             "without CONFIG: that drive with the default schedulers."),
          listen: str = typer.Option("tcp:127.0.0.1:10809", help="unix:PATH or tcp:127.0.0.1:PORT (loopback unless --allow-remote)."),
          allow_remote: bool = typer.Option(False, "--allow-remote", help="Listen on a non-loopback address (no authentication!)."),
          size: Optional[str] = typer.Option(None, help="Export size in bytes (64M, 9G; powers of 1024); default: the whole drive."),
          backing: str = typer.Option("memory", help="Where the data lives: memory (sparse) or a FILE (created, extended to --size)."),
          stats: Optional[Path] = typer.Option(None, help="Rewrite live statistics (JSON) into this file each second."),
          max_connections: int = typer.Option(16, help="Most clients at once (1..1024); more are closed."),
          max_request_kb: int = typer.Option(32768, help="Largest read or write, KB (4..32768; advertised as the maximum block size)."),
          export_name: str = typer.Option("disksched", help="The export's name (the empty name selects it too)."),
          handshake_timeout_s: float = typer.Option(5.0, help="Drop a client that has not finished the handshake "
                                                    "this many seconds after connecting (0.1..600)."),
          catch_up: bool = typer.Option(True, "--catch-up/--no-catch-up", help="A request after a late reply enters the "
                                        "simulation as if that reply had been on time (docs/serve.md)."),
          seed: Optional[int] = typer.Option(None, help="Override the config's seed."),
          set_: list[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="Override any config key by its dotted path (repeatable)."),
          out: Optional[Path] = typer.Option(None, help="At exit, write what `run --out` writes (summary.json, plots) here."),
          records: bool = typer.Option(False, "--records", help="Also write OUT/records.parquet (every request)."),
          force: bool = typer.Option(False, "--force", help="Write into an --out folder that already holds files."),
          json_out: bool = typer.Option(False, "--json", help="Print the exit summary as JSON."),
          plugin: list[Path] = typer.Option([], "--plugin", metavar="FILE.py", help="A Python file defining disksched.Scheduler subclasses "
                                            "the config may name (repeatable).")) -> None:
    """Serve the simulated drive as an NBD export in real time (until Ctrl-C or SIGTERM)."""
    from contextlib import nullcontext

    from . import check_seed, resolve
    from .output import output_dir, summary_rows
    from .serve import parse_size, serve as serve_nbd, serve_overrides

    if config is None and disk is None:
        raise DiskschedError("serve needs a run CONFIG or --disk NAME")
    _use_plugins(plugin)
    seed = check_seed(seed, "--seed")
    if records and out is None:
        raise DiskschedError("--records needs --out DIR (records.parquet is written there)")
    size_bytes = parse_size(size) if size is not None else None
    source = config if config is not None else {"disk": {"model": disk}}
    overrides = serve_overrides(disk if config is not None else None, set_)
    if stats is not None:
        from .output import check_out_file

        check_out_file(stats, "--stats")

    def ready(address: str) -> None:
        err_console.print(f"disksched serve: listening on {address} (Ctrl-C or SIGTERM stops it)", highlight=False)
        sys.stderr.flush()

    kwargs = dict(listen=listen, allow_remote=allow_remote, size_bytes=size_bytes,
                  backing=None if backing == "memory" else backing, stats=str(stats) if stats else None,
                  max_connections=max_connections, max_request_kb=max_request_kb, export_name=export_name,
                  handshake_timeout_s=handshake_timeout_s, catch_up=catch_up, on_ready=ready)
    with (output_dir(out, force) if out is not None else nullcontext()) as tmp:
        if tmp is not None:
            from .records import draw, simulate

            def runner(cfg, seed=None, records=None, overrides=None, progress=None, record_sink=None,
                       record_chunk_rows=65536):
                return serve_nbd(cfg, overrides=overrides, seed=seed, records=records, record_sink=record_sink,
                                 record_chunk_rows=record_chunk_rows, **kwargs)

            # run_to_dir resolves the config as given: hand it the same overrides serve adds.
            from .serve import session_overrides

            # The server runs in this process (run --out simulates in a child): simulate, then draw.
            result, acc, p = simulate(tmp, source, session_overrides(source, overrides), seed, None,
                                      parquet=records, runner=runner)
            written = draw(tmp, result, acc, p, config.name if config is not None else str(disk), parquet=records)
        else:
            result = serve_nbd(source, overrides=overrides, seed=seed, **kwargs)
    s = result.summary["serve"]
    lat = s["lateness_ms"]
    if json_out:
        print(json.dumps(result.summary, indent=2))
        return
    rows = [list(r) for r in summary_rows(result.summary)] if result.summary["requests"] else []
    rows += [["reply lateness ms", f"p50 {lat['p50']:.3f}  p99 {lat['p99']:.3f}  max {lat['max']:.3f}  "
                                   f"({lat['over_1ms']:,} of {lat['count']:,} over 1 ms)"],
             ["schedule lag ms", f"p50 {s['schedule_lag_ms']['p50']:.3f}  p99 {s['schedule_lag_ms']['p99']:.3f}  "
                                 f"max {s['schedule_lag_ms']['max']:.3f}  (sent after the simulated completion time)"],
             ["requests refused", f"{s['total']['errors']:,}"]]
    console.print(_table(f"served {config or disk}", ["metric", "value"], rows))
    if out is not None:
        console.print(f"wrote {out}/: {', '.join(written)}", highlight=False)


class SweepProgress(Progress):
    """Runs done of all, and the time left, on stderr (a terminal only)."""

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if not sys.stderr.isatty():
                return
            from rich.markup import escape
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), "runs",
                           TimeElapsedColumn(), "left", TimeRemainingColumn(), console=err_console.rich, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(escape(self.label), total=total)
        self.bar.update(self.task, completed=done)


@app.command()
def sweep(config: Path = typer.Argument(..., metavar="CONFIG", help="Run config (TOML)."),
          grid: list[str] = typer.Option([], "--grid", metavar="KEY=V1,V2,..", help="A grid axis: key.path=v1,v2,... (repeatable; all combinations)."),
          zip_: list[str] = typer.Option([], "--zip", metavar="KEY=V1,V2,..", help="Keys whose values go together: key.path=v1,v2,... "
                                         "(repeatable; all the same length; one axis beside the grid)."),
          set_: list[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="Override for every run: key.path=value (repeatable)."),
          seeds: int = typer.Option(1, "--seeds", min=1, max=10000, help="Seeds per grid point: the config's seed and the next ones."),
          out: Path = typer.Option(..., "--out", help="Sweep folder: runs/ (one file per finished run), runs.parquet/csv, "
                                   "points.parquet/csv, sweep.json. Re-running the sweep there does only the missing runs."),
          workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Local worker processes (default: every core)."),
          dask: Optional[str] = typer.Option(None, "--dask", help="Run on a Dask cluster: a scheduler address "
                                             "(tcp://host:8786), or 'local' for a LocalCluster of --workers processes."),
          figure: list[str] = typer.Option([], "--figure", metavar="FIGURE", help="Figures to print per grid point (default: "
                                           "host_response_ms.mean, host_response_ms.p99, iops)."),
          force: bool = typer.Option(False, "--force", help="Use an --out folder that holds other files."),
          plugin: list[Path] = typer.Option([], "--plugin", metavar="FILE.py", help="A Python file defining disksched.Scheduler / Workload "
                                            "subclasses the config may name; shipped to every worker (repeatable).")) -> None:
    """Run a config at every point of a grid of overrides, for several seeds, in parallel; resumable."""
    from . import sweep_runner as sr
    from .overrides import parse_assignments

    axes = sr.parse_axes(grid, "--grid")
    zipped = sr.parse_axes(zip_, "--zip")
    overrides = parse_assignments(set_, "--set")
    if out.exists() and not out.is_dir():
        raise DiskschedError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / "runs").is_dir() and not force:
        raise DiskschedError(f"--out {out}: folder exists, is not empty and holds no sweep; use --force to write into it")
    specs = sr.plan(config, axes, zip=zipped, seeds=seeds, overrides=overrides, plugins=plugin)
    keys = list(axes) + list(zipped)
    client = cluster = None
    if dask is not None:
        client, cluster = sr.connect(dask, workers)
    progress = SweepProgress(f"sweep {config.name}")
    t0 = time.monotonic()
    try:
        import pandas as pd

        before = len(sr.Store(out).done(specs))
        rows = sr.run_specs(specs, workers=workers, client=client, out=out, progress=progress)
        runs = pd.DataFrame(rows)
        written = sr.write_tables(out, runs, keys, sr._sweep_provenance(config, axes, zipped, seeds, overrides, specs))
    finally:
        progress.close()
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    wall = time.monotonic() - t0
    points = sr.aggregate(runs, keys)
    figures = figure or ["host_response_ms.mean", "host_response_ms.p99", "iops"]
    for f in figures:
        if f"{f}_mean" not in points:
            raise DiskschedError(f"--figure {f}: not a summary figure (e.g. host_response_ms.p99, iops, mean_seek_ms)")
    from .reproductions.framework import fmt_interval

    table_rows = [[str(r[k]) for k in keys] + [str(r["runs"])]
                  + [fmt_interval(r[f"{f}_mean"], r[f"{f}_ci_low"], r[f"{f}_ci_high"]) for f in figures]
                  for _, r in points.iterrows()]
    console.print(_table(f"sweep {config}: {len(specs)} runs ({len(specs) - before} run now, {before} already done) "
                         f"in {wall:.1f} s; mean [95% CI] over seeds", keys + ["runs"] + figures, table_rows))
    console.print(f"wrote {out}/: runs/, {', '.join(written)}", highlight=False)


@app.command("sweep-plot")
def sweep_plot(sweep_dir: Path = typer.Argument(..., metavar="SWEEP_DIR", help="A sweep folder (disksched sweep --out)."),
               y: str = typer.Option(..., "--y", help="Figure, e.g. host_response_ms.mean, iops."),
               x: str = typer.Option(..., "--x", help="Grid key on the x axis."),
               hue: Optional[str] = typer.Option(None, "--hue", help="Grid key whose values are the lines "
                                                 "(default: every other grid key)."),
               path: Optional[Path] = typer.Option(None, "-o", "--output", help="PNG to write (default DIR/Y_vs_X.png)."),
               log_x: Optional[bool] = typer.Option(None, "--log-x/--linear-x", help="x axis log or linear "
                                                    "(default: log when the values span more than two decades)."),
               log_y: Optional[bool] = typer.Option(None, "--log-y/--linear-y", help="y axis likewise.")) -> None:
    """Plot a sweep's figure against a grid key: mean over seeds with its 95% confidence band."""
    from . import sweep_runner as sr

    if not (sweep_dir / "points.parquet").exists():
        raise DiskschedError(f"{sweep_dir}: no points.parquet (not a finished sweep folder)")
    written = sr.plot(sweep_dir, y, x, hue, path, log_x=log_x, log_y=log_y)
    console.print(f"wrote {written}", highlight=False)


@app.command("show-run")
def show_run(run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run folder (run --out), a sweep folder (sweep --out), "
                                            "or one result file (.json, .parquet, .csv, .png)."),
             json_out: bool = typer.Option(False, "--json", help="Print the provenance as JSON.")) -> None:
    """What produced a result: resolved config, overrides, seed, disksched version, git commit."""
    from . import provenance

    if not run_dir.exists():
        raise DiskschedError(f"{run_dir}: no such file or folder")
    if run_dir.is_dir():
        candidates = [run_dir / n for n in ("summary.json", "sweep.json")] + sorted(run_dir.iterdir())
        files = [f for f in dict.fromkeys(candidates) if f.is_file()]
    else:
        files = [run_dir]
    found = None
    for f in files:
        found = provenance.read(f)
        if found:
            source = f
            break
    if not found:
        raise DiskschedError(f"{run_dir}: no provenance found (expected summary.json, sweep.json or a result file written by disksched)")
    if json_out:
        print(json.dumps(found, indent=2))
        return
    rows = [["from", str(source)], ["disksched", found.get("disksched_version", "?")],
            ["commit", found.get("commit") or "- (not built from a git checkout)"]]
    if found.get("seed") is not None:
        rows.append(["seed", str(found["seed"])])
    if "seeds" in found:
        rows.append(["seeds", ", ".join(map(str, found["seeds"]))])
    for k in ("grid", "zip"):
        for key, values in (found.get(k) or {}).items():
            rows.append([f"{k} {key}", ", ".join(map(str, values))])
    for key, value in (found.get("overrides") or {}).items():
        rows.append([f"override {key}", json.dumps(value)])
    console.print(_table(f"provenance of {run_dir}", ["", "value"], rows))
    print("resolved config:")
    print(json.dumps(found.get("config", {}), indent=2))


@disks_app.command("list")
def disks_list(json_out: bool = typer.Option(False, "--json", help="Print a JSON list, one object per disk.")) -> None:
    """List the built-in disks."""
    facts = [json.loads(_core.disk_show(name)[1]) for name in _core.disk_names()]
    if json_out:
        print(json.dumps([{"name": n, **f} for n, f in zip(_core.disk_names(), facts)], indent=2))
        return
    rows = [[name, f["description"], f"{f['capacity_gb']:.1f}", f"{f['rpm']:.0f}",
             f"{f['media_rate_outer_mb_s']:.1f}-{f['media_rate_inner_mb_s']:.1f}"]
            for name, f in zip(_core.disk_names(), facts)]
    console.print(_table("built-in disks", ["name", "description", "GB", "RPM", "media MB/s"], rows))


@disks_app.command("show")
def disks_show(name: str = typer.Argument(..., metavar="NAME", help="Built-in disk name or spec path."),
               toml: bool = typer.Option(False, "--toml", help="Print the whole spec as TOML.")) -> None:
    """Show a disk's key figures (or its full spec with --toml)."""
    spec, facts = _core.disk_show(name)
    if toml:
        print(spec, end="")
        return
    f = json.loads(facts)
    console.print(_table(f["name"], ["property", "value"], [[k, _number(k, v)] for k, v in f.items()]))


def _g(x: float) -> str:
    """A bound or default, short: 60000, 0.5, 1e6 (not 1e+06)."""
    if float(x).is_integer() and abs(x) < 1e6:
        return str(int(x))
    text = f"{x:g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def _number(key: str, v) -> str:
    """A figure for a table cell: never in exponent form (RPM 10025, not 1.002e+04)."""
    if not isinstance(v, float):
        return str(v)
    if key == "rpm" or abs(v) >= 1000:
        return f"{v:.0f}"
    return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"


def _kb(kb: float) -> str:
    for unit, size in (("GB", 1024 ** 2), ("MB", 1024)):
        if kb >= size:
            return f"{kb / size:,.1f} {unit}"
    return f"{kb:,.1f} KB"


def _dist_row(name: str, d: dict) -> list[str]:
    return [name] + [f"{d[k]:.4g}" for k in ("mean", "p50", "p90", "p99", "max")]


@trace_app.command("info")
def trace_info(file: Path = typer.Argument(..., metavar="FILE", help="Trace file (gzip, zstd, xz are read transparently)."),
               format: Optional[str] = typer.Option(None, "--format", help="Trace format (detected if absent)."),
               skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines", help="Count and skip malformed lines."),
               json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON.")) -> None:
    """Summarise a trace in one pass: devices, duration, mix, sizes, gaps, footprint, sequentiality."""
    info = json.loads(_interruptible(_core.trace_info, str(file), format, skip_bad_lines))
    if json_out:
        print(json.dumps(info, indent=2))
        return
    devices = ", ".join(f"{d['device']} ({d['requests']:,})" for d in info["devices"][:20])
    if len(info["devices"]) > 20:
        devices += f", ... ({len(info['devices'])} devices)"
    fp = f"{_kb(info['footprint_kb'])} ({info['footprint_blocks']:,} blocks)"
    if not info["footprint_exact"]:
        fp += f", upper-bound estimate at {info['footprint_granularity_blocks']}-block regions"
    rows = [
        ["format", info["format"]],
        ["requests", f"{info['requests']:,}"],
        ["reads / writes", f"{info['reads']:,} / {info['writes']:,} ({100 * info['read_fraction']:.1f} % reads)"],
        ["devices", devices or "-"],
        ["duration", f"{info['duration_ms'] / 1000:,.3f} s"],
        ["read / written", f"{_kb(info['read_kb'])} / {_kb(info['written_kb'])}"],
        ["footprint", fp],
        ["sequential", f"{100 * info['sequential_fraction']:.1f} % ({info['sequential_requests']:,} requests)"],
        ["out-of-order arrivals", f"{info['out_of_order']:,}"],
        ["bad lines skipped", f"{info['bad_lines_skipped']:,}"],
    ]
    console.print(_table(str(file), ["property", "value"], rows))
    console.print(_table("distributions", ["", "mean", "p50", "p90", "p99", "max"],
                         [_dist_row("size KB", info["size_kb"]), _dist_row("inter-arrival ms", info["interarrival_ms"])]))


@trace_app.command("convert")
def trace_convert(file: Path = typer.Argument(..., metavar="FILE", help="Trace file to read."),
                  to: str = typer.Option(..., "--to", help="Output format."),
                  out: Path = typer.Option(..., "-o", "--out", help="Output file (written whole or not at all)."),
                  format: Optional[str] = typer.Option(None, "--format", help="Input format (detected if absent)."),
                  skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines", help="Count and skip malformed lines.")) -> None:
    """Convert a trace from any readable format to a writable one."""
    from .output import check_out_file, clean_stale

    check_out_file(out, "-o")
    clean_stale(out)  # the temporaries of conversions that were killed
    # The core writes `.NAME.tmp-PID` beside `out` and removes it on Ctrl-C (exit 130).
    n = _core.trace_convert(str(file), to, str(out), format, skip_bad_lines)
    err_console.print(f"wrote {n:,} records to {out} ({to})", highlight=False)


@disks_app.command("import")
def disks_import(path: Path = typer.Argument(..., metavar="PATH", help="DiskSim .parv / .diskspecs / .model file."),
                 out: Path = typer.Option(..., "-o", "--out", help="Spec file to write (.toml)."),
                 name: Optional[str] = typer.Option(None, help="Name for the disk (default: the file's stem)."),
                 disk: Optional[str] = typer.Option(None, "--disk", help="Which disk of a file that describes several: "
                                                                         "its DiskSim block name.")) -> None:
    """Convert a DiskSim drive description into the project's disk spec."""
    from .output import atomic_write, check_out_file

    if not path.exists() and not Path(str(path).rsplit("#", 1)[0]).exists():  # FILE.parv#NAME names one disk
        raise DiskschedError(f"{path}: no such file")
    check_out_file(out, "-o")
    try:
        text = _core.disk_import(str(path), name, disk)
    except DiskschedError as e:
        if "; name one" in str(e):
            raise DiskschedError(f"{e} (or with --disk NAME)") from None
        raise
    atomic_write(out, lambda tmp: Path(tmp).write_text(text))
    console.print(f"wrote {out}")


@disks_app.command("datasheet")
def disks_datasheet(name: str = typer.Option(...), capacity_gb: float = typer.Option(...), rpm: float = typer.Option(...),
                    outer_mb_s: float = typer.Option(..., help="Sustained media rate, outer zone, MB/s."),
                    inner_mb_s: float = typer.Option(..., help="Sustained media rate, inner zone, MB/s."),
                    track_to_track_ms: float = typer.Option(...), average_seek_ms: float = typer.Option(...),
                    full_stroke_ms: float = typer.Option(...), cache_kb: int = typer.Option(0),
                    write_cache: Optional[bool] = typer.Option(
                        None, "--write-cache/--no-write-cache",
                        help="Write-back caching. Default: on when --cache-kb is given (current drives ship with "
                             "the write cache on); --no-write-cache for a write-through drive."),
                    bus_mb_s: float = typer.Option(0.0),
                    head_switch_ms: float = typer.Option(0.8), surfaces: int = typer.Option(4),
                    zones: int = typer.Option(16),
                    out: Path = typer.Option(..., "-o", "--out", help="Spec file to write (.toml).")) -> None:
    """Build a plausible disk spec from the figures a datasheet gives."""
    figures = {k: v for k, v in locals().items() if k != "out" and v is not None}
    from .output import atomic_write, check_out_file

    check_out_file(out, "-o")
    text = _core.disk_datasheet(json.dumps(figures))
    atomic_write(out, lambda tmp: Path(tmp).write_text(text))
    console.print(f"wrote {out}")


@app.command()
def validate(disk: str = typer.Option(..., help="Built-in disk name, spec .toml or DiskSim file."),
             trace: Path = typer.Option(..., help="DiskSim validate trace measured on the real drive: a file, or a "
                                                  "built-in trace's name (atlas10k, cheetah4lp, dec_rz26, hp_c2247a, st41601n)."),
             json_out: bool = typer.Option(False, "--json", help="Print a JSON object."),
             out: Optional[Path] = typer.Option(None, help="Directory for validation.json and the CDF plot."),
             force: bool = typer.Option(False, "--force", help="Write into an --out folder that already holds files.")) -> None:
    """Compare simulated with measured access times (DiskSim's demerit figure)."""
    from contextlib import nullcontext

    from .output import output_dir

    if not trace.exists():
        from . import data

        try:
            if len(trace.parts) != 1:
                raise DiskschedError("not a name")
            trace = data.trace_path(str(trace))
        except DiskschedError:
            raise DiskschedError(f"{trace}: no such trace file, nor a built-in trace "
                                 f"(built-in: {', '.join(data.names())})") from None
    with (output_dir(out, force) if out is not None else nullcontext()) as tmp:
        # (The per-request samples only for the plot: without --out, numpy is not even imported.)
        summary, measured, simulated = _interruptible(_core.validate, disk, str(trace), tmp is not None)
        v = json.loads(summary)
        if tmp is not None:
            from .output import write_json
            from .plots import response_cdf

            write_json(tmp / "validation.json", v)
            response_cdf(tmp / "validation_cdf.png", {"measured": measured, "simulated": simulated},
                         f"{disk} vs {trace.name}: demerit {v['rms_ms']:.3f} ms", xlabel="access time (ms)")
    if json_out:
        print(json.dumps(v, indent=2))
        return
    rows = [["demerit (DiskSim's, on its histograms)", f"{v['rms_ms']:.4f} ms", ""],
            ["demerit on the unbinned samples", f"{v['rms_exact_ms']:.4f} ms", ""],
            ["requests", str(v["requests"]), ""],
            ["mean", f"{v['measured_mean_ms']:.3f}", f"{v['simulated_mean_ms']:.3f}"]]
    # The demerit compares distributions; these pair each request with its own measurement.
    e = v["per_request"]
    rows += [["per-request |sim - measured|: mean", f"{e['mean_abs_ms']:.3f} ms", ""],
             ["per-request |sim - measured|: p90", f"{e['p90_abs_ms']:.3f} ms", ""],
             ["requests within 0.5 ms", f"{100 * e['within_0_5ms_fraction']:.1f}%", ""]]
    rows += [[f"p{100 * q:g}", f"{m:.3f}", f"{s:.3f}"] for q, m, s in v["percentiles"]]
    console.print(_table(f"{disk} vs {trace}", ["", "measured ms", "simulated ms"], rows))


@app.command()
def extract(device: str = typer.Argument(..., metavar="DEVICE", help="A block device or file (O_DIRECT), nbd://HOST:PORT, "
                                                   "nbd+unix:///?socket=PATH, or sim:NAME / sim:SPEC.toml[?jitter_us=N&queue=N&order=SCHED]."),
            out: Path = typer.Option(..., "-o", "--out", help="Spec file to write (TOML)."),
            report: Optional[Path] = typer.Option(None, "--report", help="Folder for the parameter table and plots."),
            allow_writes: Optional[str] = typer.Option(None, "--allow-writes",
                                                       help="Blocks LO-HI (inclusive) the write tests may overwrite; never on a mounted device."),
            budget_min: Optional[float] = typer.Option(None, "--budget-min", help="Device minutes for the layout walk: refused at the start when its estimate is longer, "
                                                          "ended (a coarse model) when the walk runs longer."),
            walk: str = typer.Option("sampled", "--walk", help="Layout walk: sampled (stretches, checked predictions between), full (every track) or none (a coarse model from response times alone, in minutes)."),
            seed: int = typer.Option(1, help="Seed of the test's random choices (and of sim: jitter)."),
            name: Optional[str] = typer.Option(None, help="The spec's name (default: the file's stem)."),
            force: bool = typer.Option(False, "--force", help="Replace -o and write into a --report folder that holds files.")) -> None:
    """A drive model from timing alone: rotation, layout, seek curve, overheads, cache (docs/extract.md)."""
    from .extract_cli import rows_text, run as run_extract

    x = run_extract(device, out, report, allow_writes, budget_min, seed, force, name, walk=walk)
    console.print(_table(f"{device}: {x.device_s / 60:.2f} device minutes, {x.commands:,} commands, {x.wall_s:.1f} s",
                         ["parameter", "value", "unit", "confidence", "how"], rows_text(x)))
    for n in x.notes:
        err_console.print(f"note: {n}", highlight=False)
    console.print(f"wrote {out}" + (f", {report}" if report is not None else ""), highlight=False)


@app.command()
def characterize(disk: str = typer.Option(..., help="Built-in disk name, spec .toml or DiskSim .parv/.diskspecs/.model."),
                 out: Optional[Path] = typer.Option(None, help="Directory for characterize.json and the plots."),
                 json_out: bool = typer.Option(False, "--json", help="Print a JSON object."),
                 force: bool = typer.Option(False, "--force", help="Write into an --out folder that already holds files.")) -> None:
    """A drive's curves: service time and throughput vs request size, seek curve, media rate per zone."""
    from . import characterize as ch

    from contextlib import nullcontext

    from .output import output_dir

    with (output_dir(out, force) if out is not None else nullcontext()) as tmp:
        res = ch.characterize(disk, log=lambda m: err_console.print(m, highlight=False))
        if tmp is not None:
            from .output import write_json

            write_json(tmp / "characterize.json", res)
            written = [out / "characterize.json"] + [out / p.name for p in ch.plots(tmp, res)]
    if json_out:
        print(json.dumps(res, indent=2))
        return
    for title, columns, rows in ch.tables(res):
        console.print(_table(title, columns, rows))
    for note in ch.notes(res):
        console.print(f"- {note}", highlight=False)
    if out is not None:
        console.print("wrote " + ", ".join(str(p) for p in written))


@app.command()
def reproduce(name: str = typer.Argument(..., metavar="NAME", help="riska2004, anand2008, lumb2002, rizzo2009, wu2004, or all."),
              out: Path = typer.Option(Path("out/reproduce"), help="Directory for NAME.md, NAME.json and plots."),
              quick: bool = typer.Option(False, "--quick", help="Fewer requests, shorter runs, one seed."),
              check: bool = typer.Option(False, "--check", help="Exit 1 if a claim that held in the committed baseline "
                                         "does not hold now (or, with --ablate, cannot fail now)."),
              ablate: bool = typer.Option(False, "--ablate", help="Also run every claim's ablation (its mechanism "
                                          "removed) and show whether the claim then fails."),
              update_baseline: bool = typer.Option(False, "--update-baseline", help="Write each claim's status to "
                                                   "the baseline --check compares with (needs --ablate)."),
              seeds: Optional[int] = typer.Option(None, "--seeds", help="Seeds per figure (default 5; --quick: 1)."),
              claims: Optional[Path] = typer.Option(None, "--claims", help="Judge against this claims file instead "
                                                    "of the paper's (one experiment only)."),
              rejudge: bool = typer.Option(False, "--rejudge", help="Do not run: judge OUT/NAME.json again with the "
                                           "current claims file and rewrite OUT/NAME.md."),
              workers: int = typer.Option(1, "--workers", help="Processes measuring seeds in parallel (the results "
                                          "are the same for any number)."),
              dask: Optional[str] = typer.Option(None, "--dask", help="Measure the seeds on a Dask cluster: a scheduler "
                                                 "address, or 'local' for a LocalCluster of --workers processes.")) -> None:
    """Reproduce a seed paper's experiment: each claim of the paper judged at its magnitude, the paper's
    score (claims reproduced / judged), and with --ablate whether each claim fails with its mechanism removed.
    OUT is written whole or not at all: every file goes to a temporary folder first, which replaces
    its namesakes in OUT when every experiment has finished (other files in OUT are kept)."""
    from . import reproductions as rep
    from .output import output_dir, write_json
    from .provenance import source_commit
    from .reproductions.framework import (BASELINE, ClaimsError, SeedError, compare, load_baseline, markdown,
                                          text_report)

    names = rep.NAMES if name == "all" else [name]
    if name != "all" and name not in rep.NAMES:
        raise DiskschedError(f"unknown experiment '{name}' (expected one of: {', '.join(rep.NAMES)}, all)")
    if claims is not None and name == "all":
        raise DiskschedError("--claims needs one experiment, not 'all'")
    if update_baseline and (not ablate or claims is not None or rejudge):
        raise DiskschedError("--update-baseline needs --ablate (whether each claim can fail is part of the "
                             "baseline), the papers' own claims files and a run (not --rejudge)")
    n = seeds if seeds is not None else (1 if quick else 5)
    if not 1 <= n <= 31:
        raise DiskschedError(f"--seeds: {n} is out of range [1, 31]")
    if not 1 <= workers <= 64:
        raise DiskschedError(f"--workers: {workers} is out of range [1, 64]")
    mode = "quick" if quick else "full"
    try:
        baseline = load_baseline()
    except ClaimsError as e:
        raise DiskschedError(str(e)) from None
    if check and mode not in baseline:
        raise DiskschedError(f"--check: {BASELINE} has no {mode} baseline (write one with 'disksched reproduce all"
                             f"{' --quick' if quick else ''} --ablate --update-baseline')")
    failed, news, scores, wrote = [], [], [], []
    client = cluster = None
    if dask is not None and not rejudge:
        from .sweep_runner import connect

        client, cluster = connect(dask, workers)
    # Everything goes to `tmp` first; it replaces its namesakes in `out` only once every experiment has
    # finished, so an error or Ctrl-C leaves `out` as it was (and a --rejudge reads `out`, writes `tmp`).
    with output_dir(out, force=True) as tmp, _closing(client, cluster):
        for nm in names:
            # Whether a claim can fail, when the ablations do not run: the mode's baseline, else the quick one's.
            base = baseline.get(mode, {}).get(nm) or baseline.get("quick", {}).get(nm, {})
            try:
                if rejudge:
                    saved_path = out / f"{nm}.json"
                    if not saved_path.exists():
                        raise DiskschedError(f"--rejudge: {saved_path} does not exist (run the reproduction first)")
                    saved = json.loads(saved_path.read_text())
                    r = rep.judge_saved(nm, saved, claims, base)
                    cmd = saved.get("command", f"disksched reproduce {nm}")
                else:
                    commit = source_commit()  # before the run: the code it ran
                    r = rep.reproduce(nm, tmp, quick, n, claims, lambda m: err_console.print(m, highlight=False),
                                      workers, client, ablate, base)
                    cmd = (f"disksched reproduce {nm}" + (" --quick" if quick else "") + (" --ablate" if ablate else "")
                           + (f" --seeds {n}" if seeds is not None else "")
                           + (f" --workers {workers}" if workers > 1 else "") + f" --out {out}")
                    if commit:
                        cmd += f"` at commit `{commit}"
            except (ClaimsError, SeedError) as e:
                raise DiskschedError(str(e)) from None
            print(text_report(r) + "\n", flush=True)
            shown = cmd + (f"` and judged again by `disksched reproduce {nm} --rejudge --out {out}" if rejudge else "")
            (tmp / f"{nm}.md").write_text(markdown(r, shown) + "\n")
            write_json(tmp / f"{nm}.json", {**r.as_json(), "command": cmd})
            wrote += [f for f in [f"{nm}.md", f"{nm}.json"] + [f for f, _ in r.figures] if (tmp / f).exists() or rejudge]
            scores.append(f"{nm} {r.score()[0]}/{r.score()[1]}")
            if check:
                f, nw = compare(r, base, complete=claims is None)
                failed += [(nm, x) for x in f]
                news += [(nm, x) for x in nw]
            if update_baseline:
                baseline.setdefault(mode, {})[nm] = {c["id"]: c["status"] for c in r.claims}
    import textwrap

    print(textwrap.fill("scores (claims reproduced / judged): " + ", ".join(scores), 80), flush=True)
    print(textwrap.fill(f"wrote to {out}: " + ", ".join(f for f in wrote if (out / f).exists()), 80,
                        break_on_hyphens=False, break_long_words=False))
    if update_baseline:
        write_json(BASELINE, baseline)
        print(f"wrote {BASELINE}")
    for nm, x in news:
        err_console.print(f"news: {nm} {x}", highlight=False)
    if check and failed:
        for nm, x in failed:
            err_console.print(f"check failed: {nm} {x}", highlight=False)
        raise typer.Exit(1)


@contextlib.contextmanager
def _closing(*dask_objects):
    """Close a Dask client and cluster (either may be None) however the block ends."""
    try:
        yield
    finally:
        for d in dask_objects:
            if d is not None:
                d.close()


@app.command()
def schedulers(json_out: bool = typer.Option(False, "--json", help="Print a JSON object: schedulers and the shaper.")) -> None:
    """List the scheduling algorithms and their tunables."""
    if json_out:
        print(json.dumps({"schedulers": json.loads(_core.schedulers()), "shaper": json.loads(_core.shaper_info())},
                         indent=2))
        return
    rows = []
    for s in json.loads(_core.schedulers()):
        tun = ", ".join(f"{t['name']}={_g(t['default'])} {t['unit']} [{_g(t['min'])}, {_g(t['max'])}]"
                        for t in s["tunables"])
        rows.append([s["name"], ", ".join(s["aliases"]), s["summary"], tun or "-"])
    console.print(_table("schedulers", ["name", "aliases", "summary", "tunables"], rows))
    info = json.loads(_core.shaper_info())

    def tunable_rows(ts: list[dict], prefix: str) -> list[list[str]]:
        return [[prefix + t["name"], t["unit"], _g(t["default"]), f"[{_g(t['min'])}, {_g(t['max'])}]", t["help"]]
                for t in ts]

    console.print(_table("traffic shaper ([host.shaper] above the host scheduler; run --set host.shaper.policy=..., host.shaper.CLASS.KEY=...): policies",
                         ["policy", "summary"], [[p["name"], p["summary"]] for p in info["policies"]]))
    console.print(_table("shaper tunables", ["name", "unit", "default", "range", "meaning"],
                         tunable_rows(info["policy_tunables"], "set.")
                         + tunable_rows(info["pipe_tunables"], "<class>.")))


@app.command()
def demo(out: Path = typer.Option(Path("out/demo"), help="Directory for the table and plots."),
         requests: int = typer.Option(20000, min=100, help="Requests per configuration."),
         seed: int = typer.Option(1)) -> None:
    """Atlas 10K under OLTP: FCFS, C-LOOK, SSTF, SPTF in the drive at queuing thresholds 1 and 16."""
    from .experiments import demo as run_demo

    rows = []

    def show(row: dict) -> None:
        rows.append([row["scheduler"], str(row["threshold"]), f"{row['mean_ms']:.2f}", f"{row['p99_ms']:.2f}",
                     f"{row['iops']:.1f}", f"{row['seek_ms']:.2f}", f"{row['rotation_ms']:.2f}"])
        err_console.print(f"  {row['scheduler']:>5} threshold {row['threshold']:>2}: mean {row['mean_ms']:.2f} ms",
                          highlight=False)

    from .output import output_dir

    # Written whole or not at all; a rerun replaces the demo's own files and keeps any others.
    with output_dir(out, force=True) as tmp:
        run_demo(tmp, requests, seed, show)
    console.print(_table("Atlas 10K, OLTP (10 clients, 30 ms think, 2:1 reads, 8 KB mean): "
                         "algorithm in the drive, FCFS host queue",
                         ["scheduler", "threshold", "mean ms", "p99 ms", "IOPS", "seek ms", "rotation ms"], rows))
    console.print(f"wrote {out / 'demo.json'}, {out / 'demo_mean_response.png'}, {out / 'demo_response_cdf.png'}")


@app.command()
def bench(json_out: bool = typer.Option(False, "--json", help="Print a JSON list, one object per run."),
          requests: int = typer.Option(1_000_000, min=1000, help="Requests per run."),
          sweep_runs: int = typer.Option(200, "--sweep-runs", min=0, help="Runs of the sweep row (0: no sweep row).")) -> None:
    """Simulation speed (requests per wall-clock second) and peak memory."""
    from .bench import dispatch_rates, hpl_replay, parse_rates, range_dispatch_rates, run_all, startup_times, sweep_rates

    # Progress on stderr in both modes (a --json run takes minutes; stdout stays the JSON alone).
    def show(r: dict) -> None:
        err_console.print(f"  {r['workload']:>9} {r['scheduler']:>5}: {r['requests_per_s']:,.0f} req/s, "
                          f"peak RSS {r['peak_rss_mb']:.1f} MB", highlight=False)

    def step(what: str) -> None:
        err_console.print(f"  {what} ...", highlight=False)

    step(f"simulation runs of {requests:,} requests")
    results = run_all(requests, show)
    step("dispatch decisions per second")
    rates = dispatch_rates(max(requests // 10, 1000)) + range_dispatch_rates(max(requests // 100, 1000))
    step("trace parsing")
    parsing = parse_rates(requests)
    from . import data

    step("HPL trace replay (ajw.1week)")
    results.append(hpl_replay(str(data.trace_path("ajw.1week"))))
    if sweep_runs:
        step(f"sweep of {sweep_runs} runs")
    sweeps = sweep_rates(sweep_runs) if sweep_runs else []
    step("start-up")
    startup = startup_times()
    if json_out:
        print(json.dumps(results + [{"workload": "dispatch", **r} for r in rates]
                         + [{"workload": "parse", **r} for r in parsing]
                         + [{"workload": "sweep", **r} for r in sweeps]
                         + [{"workload": "startup", **r} for r in startup], indent=2))
        return
    console.print(_table(f"disksched bench ({requests:,} requests per run, Atlas 10K)",
                         ["workload", "scheduler", "wall s", "requests/s", "peak RSS MB", "Rust heap MB"],
                         [[r["workload"], r["scheduler"], f"{r['wall_s']:.2f}", f"{r['requests_per_s']:,.0f}",
                           f"{r['peak_rss_mb']:.1f}", f"{r['heap_peak_mb']:.1f}"] for r in results]))
    fb = [r for r in results if "planner_us_per_opportunity" in r]
    for r in fb:
        console.print(f"freeblock planner: {r['planner_us_per_opportunity']:.1f} us CPU per opportunity "
                      f"({r['free_mb_per_s']:.2f} MB/s free bandwidth)")
    console.print(_table("dispatch decisions per second (Atlas 10K)", ["scheduler", "queue depth", "decisions/s"],
                         [[r["scheduler"] + (f" ({r['targets']} targets each)" if "targets" in r else ""), str(r["depth"]),
                           f"{r['decisions_per_s']:,.0f}"] for r in rates]))
    console.print(_table(f"trace parsing ({requests:,} generated lines per format)", ["format", "lines/s"],
                         [[r["format"], f"{r['lines_per_s']:,.0f}"] for r in parsing]))
    if sweeps:
        one = sweeps[0]["runs_per_s"]
        console.print(_table(f"sweep: {sweeps[0]['runs']} runs of {sweeps[0]['requests_per_run']:,} requests "
                             "(open FCFS, Atlas 10K; start-up included)",
                             ["runner", "workers", "wall s", "runs/s", "x 1 worker", "driver CPU s"],
                             [[r["runner"], str(r["workers"]), f"{r['wall_s']:.2f}", f"{r['runs_per_s']:.1f}",
                               f"{r['runs_per_s'] / one:.2f}", f"{r['driver_cpu_s']:.2f}"] for r in sweeps]))
    console.print(_table(f"start-up (best of {startup[0]['repeats']})", ["whole process, printing JSON", "CPU s"],
                         [[r["command"], f"{r['cpu_s']:.3f}"] for r in startup]))


@config_app.command("check")
def config_check(config: Path = typer.Argument(..., metavar="CONFIG", help="Run config (TOML).")) -> None:
    """Check a run config (every check a run makes, disk and trace files included) without running it."""
    from . import config_resolve

    config_resolve(config)
    console.print(f"{config}: ok", highlight=False)


@config_app.command("show")
def config_show(config: Path = typer.Argument(..., metavar="CONFIG", help="Run config (TOML)."),
                json_out: bool = typer.Option(False, "--json", help="Print it as JSON.")) -> None:
    """Print a run config resolved: checked, with every default filled in."""
    from . import config_resolve

    text, resolved = config_resolve(config)
    print(json.dumps(resolved, indent=2) if json_out else text, end="\n" if json_out else "")


@config_app.command("reference")
def config_reference() -> None:
    """Print the run-config reference (Markdown): every key, type, unit, default and bounds (docs/config.md)."""
    from . import _core

    print(_core.config_reference(), end="")


def main() -> None:
    # Ctrl-C ends every command with 130, whatever typer/click make of the
    # KeyboardInterrupt (older ones: "Aborted!", exit 1).
    # SIGTERM (kill, a job scheduler, systemd) is handled as Ctrl-C: the run stops, its `--out` temporary
    # is removed, nothing is half-written; the exit code is 128 + the signal (130, 143).
    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)
        raise KeyboardInterrupt("SIGTERM" if signum == signal.SIGTERM else "")

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_signal)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_signal)

    def stop(e: Optional[BaseException]) -> None:
        said = str(e) if isinstance(e, KeyboardInterrupt) and str(e) not in ("", "SIGTERM") else ""
        if signal.SIGTERM in interrupted or (e is not None and str(e) == "SIGTERM"):
            sys.stderr.write("terminated (SIGTERM)\n")
            sys.exit(128 + signal.SIGTERM)
        sys.stderr.write(f"interrupted: {said}\n" if said else "interrupted\n")
        sys.exit(130)

    def interruption(e: Optional[BaseException]) -> Optional[BaseException]:
        """The KeyboardInterrupt typer turned into exit code 130 (a plug-in's says where it happened)."""
        seen = set()
        while e is not None and id(e) not in seen:
            if isinstance(e, KeyboardInterrupt):
                return e
            seen.add(id(e))
            e = e.__cause__ or e.__context__
        return None

    try:
        app()
    except SystemExit as e:
        if interrupted or e.code == 130:
            stop(interruption(e))
        raise
    except DiskschedError as e:
        # Plain write: one line, never wrapped to the terminal width.
        sys.stderr.write(f"error: {e}\n")
        sys.exit(2)
    except OSError as e:
        # A file this command reads or writes (not caught where it is opened): still one line.
        where = f"{e.filename}: " if e.filename else ""
        sys.stderr.write(f"error: {where}{e.strerror or e}\n")
        sys.exit(2)
    except KeyboardInterrupt as e:
        stop(e)

"""The `disksched` command line (typer)."""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

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
config_app = typer.Typer(no_args_is_help=True, help="Run configs: check one, show it resolved.")
app.add_typer(config_app, name="config")
# No markup: paths and names are printed as they are ("[brackets]" included).
console = Console(markup=False)
err_console = Console(stderr=True, markup=False)


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
            from rich.progress import BarColumn, Progress as Bar, TaskProgressColumn, TimeRemainingColumn

            self.bar = Bar("[progress.description]{task.description}", BarColumn(), TaskProgressColumn(),
                           TimeRemainingColumn(), console=err_console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(escape(self.label), total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


_NUMBER = re.compile(r"^[-+]?[\d,.]+(e[-+]?\d+)?\s*(%|x|ms|s|MB/s|MB|GB|KB)?$|^-$")


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    t = Table(title=title)
    for i, c in enumerate(columns):
        # Numbers right-aligned; text left, wrapped (never cut to "+0.…") to fit 80 columns.
        numeric = i > 0 and rows and all(_NUMBER.match(r[i].strip()) for r in rows if i < len(r))
        t.add_column(c, justify="right" if numeric else "left", overflow="fold", no_wrap=i == 0)
    for r in rows:
        t.add_row(*r)
    return t


@app.command()
def run(config: Path = typer.Argument(..., help="Run config (TOML)."),
        seed: Optional[int] = typer.Option(None, help="Override the config's seed."),
        out: Optional[Path] = typer.Option(None, help="Directory for summary.json and the response-time CDF plot."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
        sched: Optional[str] = typer.Option(None, "--sched", help="Host scheduler (overrides the config)."),
        set_: list[str] = typer.Option([], "--set", help="Host scheduler tunable, key=value (repeatable)."),
        disk_sched: Optional[str] = typer.Option(None, "--disk-sched", help="The drive's scheduler."),
        disk_set: list[str] = typer.Option([], "--disk-set", help="Drive scheduler tunable, key=value."),
        ctl_sched: Optional[str] = typer.Option(None, "--ctl-sched", help="The controller's scheduler "
                                                "(adds a controller level, threshold 1, if the config has none)."),
        ctl_set: list[str] = typer.Option([], "--ctl-set", help="Controller scheduler tunable, key=value."),
        shaper: Optional[str] = typer.Option(None, "--shaper", help="Traffic-shaper policy: fixed, optimistic, pessimistic."),
        shape: list[str] = typer.Option([], "--shape", help="Shaper tunable, key=value: cut_factor=0.5, "
                                                            "best-effort.rate_per_s=90, background.wbps=1e6 (repeatable)."),
        force: bool = typer.Option(False, "--force", help="Write into an --out folder that already holds files."),
        log_x: bool = typer.Option(False, "--log-x", help="Response-time CDFs on a logarithmic time axis.")) -> None:
    """Run one simulation from a config file."""
    from contextlib import nullcontext

    from . import check_seed, parse_settings
    from .output import output_dir, summary_rows

    # Every mistake that does not need the run is reported before it starts.
    seed = check_seed(seed, "--seed")
    settings = [parse_settings(x) for x in (set_, disk_set, shape, ctl_set)]
    progress = Progress(f"running {config.name}")
    with (output_dir(out, force) if out is not None else nullcontext()) as tmp:
        try:
            result = run_sim(config, seed=seed, records=True if out else None, progress=progress, sched=sched,
                             settings=settings[0], disk_sched=disk_sched, disk_settings=settings[1],
                             shaper=shaper, shaper_settings=settings[2],
                             ctl_sched=ctl_sched, ctl_settings=settings[3])
        finally:
            progress.close()
        if tmp is not None:
            from .plots import run_plots

            written = run_plots(tmp, result, config.name, log_x=log_x)
    if json_out:
        print(json.dumps(result.summary, indent=2))
    else:
        console.print(_table(str(config), ["metric", "value"], [list(r) for r in summary_rows(result.summary)]))
        if out is not None:
            console.print(f"wrote {out}/: {', '.join(written)}", highlight=False)


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
def disks_show(name: str = typer.Argument(..., help="Built-in disk name or spec path."),
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
def trace_info(file: Path = typer.Argument(..., help="Trace file (gzip, zstd, xz are read transparently)."),
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
def trace_convert(file: Path = typer.Argument(..., help="Trace file to read."),
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
def disks_import(path: Path = typer.Argument(..., help="DiskSim .parv / .diskspecs / .model file."),
                 out: Path = typer.Option(..., "-o", "--out", help="Spec file to write (.toml)."),
                 name: Optional[str] = typer.Option(None, help="Name for the disk (default: the file's stem)."),
                 disk: Optional[str] = typer.Option(None, "--disk", help="Which disk of a file that describes several: "
                                                                         "its DiskSim block name.")) -> None:
    """Convert a DiskSim drive description into the project's disk spec."""
    from .output import atomic_write, check_out_file

    if not path.exists():
        raise DiskschedError(f"{path}: no such file")
    check_out_file(out, "-o")
    try:
        text = _core.disk_import(str(path), name, disk)
    except DiskschedError as e:
        if str(e).endswith("name one"):
            raise DiskschedError(f"{e} with --disk NAME") from None
        raise
    atomic_write(out, lambda tmp: Path(tmp).write_text(text))
    console.print(f"wrote {out}")


@disks_app.command("datasheet")
def disks_datasheet(name: str = typer.Option(...), capacity_gb: float = typer.Option(...), rpm: float = typer.Option(...),
                    outer_mb_s: float = typer.Option(..., help="Sustained media rate, outer zone, MB/s."),
                    inner_mb_s: float = typer.Option(..., help="Sustained media rate, inner zone, MB/s."),
                    track_to_track_ms: float = typer.Option(...), average_seek_ms: float = typer.Option(...),
                    full_stroke_ms: float = typer.Option(...), cache_kb: int = typer.Option(0),
                    write_cache: bool = typer.Option(False), bus_mb_s: float = typer.Option(0.0),
                    head_switch_ms: float = typer.Option(0.8), surfaces: int = typer.Option(4),
                    zones: int = typer.Option(16),
                    out: Path = typer.Option(..., "-o", "--out", help="Spec file to write (.toml).")) -> None:
    """Build a plausible disk spec from the figures a datasheet gives."""
    figures = {k: v for k, v in locals().items() if k != "out"}
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
        summary, measured, simulated = _interruptible(_core.validate, disk, str(trace))
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
    rows = [["demerit (RMS of CDF distance)", f"{v['rms_ms']:.3f} ms", ""],
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


def _report_riska2004(res: dict) -> None:
    console.print(f"SPTF mean response, threshold 1 -> 16: {res['fig3_sptf_gain_1_to_16']:.2f}x better (paper: about 2x)")
    console.print(f"overload, first burst, threshold 4 vs 1024: {res['overload_gain']:.1f}x (paper: about 20x)")
    f3, f4, a = res["fig3_mean_response_ms"]["sptf"], res["fig4_four_disks_mean_response_ms"]["sptf"], res["fig4_analysis"]
    rows = [["one disk, 16 outstanding", f"{f3[0]:.1f}", f"{f3[-1]:.1f}", f"{f3[0] / f3[-1]:.2f}x", "about 2x"],
            ["four disks, FCFS controller, threshold per disk", f"{f4[0]:.1f}", f"{f4[-1]:.1f}",
             f"{f4[0] / f4[-1]:.2f}x", "more than 7x"],
            ["four disks, one request at the disks at q1 (serial)", f"{a['serial_q1_mean_ms']:.1f}", f"{f4[-1]:.1f}",
             f"{a['serial_gain_to_q16']:.2f}x", "-"]]
    console.print(_table("SPTF in the drives, threshold 1 -> 16: mean response, ms (closed, 4 KB random, 2:1 reads; "
                         "four disks: 64 outstanding)", ["set-up", "q1", "q16", "gain", "paper"], rows))
    g1 = res["fig3_sptf_gain_1_to_16"]
    avg = res["fig4_average_load"]
    rows = [[str(r["clients_per_disk"]), f"{r['one_disk']['think_ms']:.0f} / {r['four_disks']['think_ms']:.0f}"]
            + [f"{r[k]['outstanding']['q1']:.0f}->{r[k]['outstanding']['q16']:.0f}" for k in ("one_disk", "four_disks")]
            + [f"{r['one_disk']['gain']:.2f}x", f"{r['four_disks']['gain']:.2f}x",
               f"{r['four_disks']['gain'] / r['one_disk']['gain']:.2f}"] for r in avg]
    rows.append(["paper", "?", "16 (avg)", "64 (avg)", "~2x", ">7x", "~3.5"])
    console.print(_table("SPTF, threshold 1 -> 16, load as an average: clients that think (exponential), "
                         "16 per disk outstanding on average at threshold 1",
                         ["clients per disk", "think ms", "1 disk: out", "4 disks: out", "1 disk", "4 disks", "4 / 1"], rows))
    near = min(avg, key=lambda r: abs(r["one_disk"]["gain"] - 2.0))
    notes = [
        f"Four disks gain {f4[0] / f4[-1]:.2f}x = one disk's {g1:.2f}x x array factor {a['array_factor']:.2f}: "
        f"at threshold 1 the FIFO controller's head-of-line blocking keeps {a['disks_busy']['q1']:.2f} disks' worth "
        f"busy (single-disk throughputs), at 16 {a['disks_busy']['q16']:.2f} (on average "
        f"{a['mean_requests_at_controller']['q16']:.0f} of the 64 still wait at the controller: a disk holding 16 "
        f"blocks the head).",
        f"With a fixed 64 (no think time) the mean response is 64 / throughput, so the paper's 7x over its ~2x would "
        f"need an array factor of {a['paper_array_factor']:.1f}: about {a['paper_implied_disks_busy_q1']:.2f} disks "
        f"busy at threshold 1. With a per-disk threshold of 1 and an FCFS controller the factor is at most "
        f"{a['array_factor_if_all_four_busy_at_16']:.2f} (all four busy at 16): even with the paper's 2x for one "
        f"disk at most {2 * a['array_factor_if_all_four_busy_at_16']:.1f}x.",
        f"The paper states its load as an average ('an average of 64 outstanding requests'). If its clients think "
        f"between requests, the subsystem holds fewer once it is faster and the response gain exceeds the "
        f"throughput gain, the more so for the array: with {near['clients_per_disk']} clients per disk, where one "
        f"disk gains {near['one_disk']['gain']:.2f}x (the paper: about 2x), four disks gain "
        f"{near['four_disks']['gain']:.2f}x (the paper: more than 7x). The paper gives neither the number of "
        f"clients nor the think time, so this row is chosen by the one-disk figure, not fitted to the four-disk one.",
        f"If instead the controller let one request out to the four disks together at threshold 1 (serial, not what "
        f"the paper says), the gain with a fixed 64 is {a['serial_gain_to_q16']:.2f}x = {g1:.2f}x x "
        f"{a['disks_busy']['q16']:.2f} / {a['serial_q1_disks_busy']:.2f} ({a['serial_q1_disks_busy']:.2f} disks' "
        f"worth busy, not 1: the drive reports a write once it is in its cache and destages it while the next "
        f"request goes to another disk).",
        f"With a fixed 16 one disk gains {g1:.2f}x, not about 2x: that sets the array's gain in every reading.",
    ]
    for note in notes:
        console.print(f"- {note}", highlight=False)


def _report_anand2008(res: dict) -> None:
    for disk, d in res["disks"].items():
        c = d["checks"]
        pos = lambda r: r["seek_ms"] + r["rotation_ms"]  # noqa: E731
        rows = []
        for key, label in [("fig4_traditional", "traditional"), ("fig5_track_range", "100-block range"),
                           ("fig6_group_range", "4096-block range")]:
            for span in ("disk", "group"):
                v = d[key][span]
                rows.append([label, span] + [f"{pos(v[i]):.2f}" for i in (0, 1, 4, 6)])
        console.print(_table(f"{disk}: mean positioning (seek + rotation) per one-block write, ms",
                             ["writes", "span", "1 outstanding", "2", "16", "64"], rows))
        console.print(f"  depth 2 vs 1: x{c['depth2_over_depth1_positioning']['disk']:.2f} (paper: no better); "
                      f"64 outstanding leave {c['depth64_positioning_left']['disk']:.0%} (disk) / "
                      f"{c['depth64_positioning_left']['group']:.0%} (group) of positioning (paper: reduced, not removed)")
        console.print(f"  track-sized ranges leave {c['track_range_rotation_left']['disk']:.1%} of rotation "
                      f"(paper: nearly none); group ranges leave {c['group_range_seek_left_in_group']:.1%} of the "
                      f"in-group seek (paper: most seek removed)"
                      + (f"; the drive positions for at least {d['minimum_seek_delay_ms']} ms (its minimum seek delay)"
                         if d.get("minimum_seek_delay_ms") else ""))


def _report_lumb2002(res: dict) -> None:
    cons, paper, c = res["conservatism_ms"], res["paper"], res["checks"]
    label = {"sstf": "SSTF", "sptf": "SPTF", "sptf_sw": "SPTF-SW60"}
    short = {"sstf": "SSTF", "sptf": "SPTF", "sptf_sw": "SW60"}
    for title, cell in [("free bandwidth, MB/s", lambda p: f"{p['free_mb_s']:.2f}"),
                        ("foreground mean response vs no freeblock, %", lambda p: f"{100 * p['foreground_cost']:+.1f}")]:
        rows = [[f"{short[s]} {'fw' if mode == 'firmware' else 'ext'}"] + [cell(p) for p in d[mode]["points"]]
                for s, d in res["schedulers"].items() for mode in ("firmware", "external")]
        console.print(_table(f"{title} vs seek conservatism (fw: firmware, ext: external; "
                             f"{res['requests_per_point']:,} requests per point)",
                             [""] + [f"{x:g} ms" for x in cons], rows))
    console.print(f"disk: {res['disk']}")
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    rows = []
    for s in ("sstf", "sptf", "sptf_sw"):
        v = c[s]
        rows.append([f"{label[s]} external free bandwidth at 0.3 ms",
                     f"{v['external_free_mb_s_0.3ms']:.2f} MB/s ({pct(v['external_share_of_media_0.3ms'])} of media)",
                     paper["external_free_mb_s"]])
        rows.append([f"{label[s]} foreground cost at 0.3 / 0.4 ms",
                     f"{pct(v['foreground_cost_0.3ms'])} / " + (pct(v["foreground_cost_0.4ms"]) if "foreground_cost_0.4ms" in v else "-"),
                     f"{paper['foreground_cost_at_0.3ms']} / {paper['foreground_cost_at_0.4ms']}"])
        rows.append([f"{label[s]} external / firmware free bandwidth (0.3 ms; firmware at 0.3 / at 0)",
                     f"{v['external_over_firmware_same_conservatism_0.3ms']:.2f} / {v['external_0.3ms_over_firmware_0ms']:.2f}",
                     paper["external_over_firmware"]])
    rows.append(["SSTF / SPTF free bandwidth (external, 0.3 ms)", f"{c['sstf_over_sptf_free_bw_0.3ms']:.2f}x", paper["sstf_over_sptf_free_bw"]])
    rows.append(["SSTF foreground throughput below SPTF (response +)", f"{pct(c['sstf_foreground_below_sptf'])} "
                 f"(+{pct(c['sstf_response_over_sptf'])})", paper["sstf_foreground_below_sptf"]])
    rows.append(["SPTF-SW60 share of SSTF's free bandwidth", pct(c["sw60_share_of_sstf_free_bw_0.3ms"]), paper["sw60_share_of_sstf_free_bw"]])
    rows.append(["SPTF-SW60 foreground throughput below SPTF (response +)", f"{pct(c['sw60_foreground_below_sptf'])} "
                 f"(+{pct(c['sw60_response_over_sptf'])})", paper["sw60_foreground_below_sptf"]])
    r = res["rotational_share"]
    rows.append(["rotational latency share of head time: random / SSTF / SPTF",
                 f"{pct(r['random'])} / {pct(r['sstf'])} / {pct(r['sptf'])}", "33% / 50% / 20%"])
    e = res["prediction_error"]["random_4kb_reads"]
    pe = paper["prediction_error_random_4kb"]
    rows.append(["random 4 KB reads: within 50 us / +1 rev / -1 rev",
                 f"{pct(e['error_within_50us'])} / {pct(e['error_one_rev_longer'])} / {pct(e['error_one_rev_shorter'])}",
                 f"{pct(pe['within_50us'])} / {pct(pe['one_rev_longer'])} / {pct(pe['one_rev_shorter'])}"])
    v = res["validated_bus_sw60_0.3ms"]
    rows.append(["SPTF-SW60 0.3 ms on the built-in validated 5 MB/s bus", f"{v['free_mb_s']:.2f} MB/s, "
                 f"foreground {pct(v['foreground_cost'])}", "(not in the paper)"])
    console.print(_table("ours vs the paper (Lumb, Schindler & Ganger, FAST 2002)", ["figure", "ours", "paper"], rows))
    for note in res["notes"]:
        console.print(f"  - {note}")


def _report_rizzo2009(res: dict) -> None:
    rows = []
    for case, v in res["cases"].items():
        for sched, r in v.items():
            rows.append([case, sched, " + ".join(f"{x:.1f}" for x in r["ours"]), " + ".join(f"{x:g}" for x in r["paper"])])
    console.print(_table("greedy clients, MiB/s (first + second client)", ["case", "scheduler", "disksched", "paper"], rows))
    for note in res["notes"]:
        console.print(f"  - {note}")


def _report_wu2004(res: dict) -> None:
    rows = []
    for name, c in res["cases"].items():
        rows.append([name] + [f"{x:.2f}" for x in c["per_stream_mb_per_s"]]
                    + [f"{c['total_mb_per_s']:.2f}", f"{c['change_vs_no_boosting_pct']:+.1f}%",
                       f"{c['paper_total_mb_per_s']:.2f}", f"{c['paper_change_pct']:+.1f}%",
                       "yes" if c["stream1_held_8_mb_per_s"] else "no",
                       f"{100 * c['deadline_misses'][0] / max(c['deadline_requests'][0], 1):.1f}%"])
    d = res["disk_mb_per_s"]
    console.print(_table(f"wu2004: four 8 MB/s streams of 128 KB reads, {res['seconds']:.0f} s, host {res['host_scheduler']}; "
                         f"disk: long read {d['long_read']:.1f} MB/s, back-to-back 128 KB reads {d['sync_128kb']:.1f} MB/s",
                         ["method", "stream 1", "stream 2", "stream 3", "stream 4", "total MB/s", "vs none",
                          "paper total", "paper vs none", "stream 1 held 8?", "stream 1 misses"], rows))
    for note in res["notes"]:
        console.print(f"- {note}", highlight=False)


@app.command()
def reproduce(name: str = typer.Argument(..., help="Experiment: riska2004, anand2008, lumb2002, rizzo2009 or wu2004."),
              out: Path = typer.Option(Path("out/reproduce"), help="Directory for tables and plots."),
              quick: bool = typer.Option(False, "--quick", help="Fewer requests, shorter runs.")) -> None:
    """Reproduce a seed paper's experiment, beside the paper's figures."""
    from . import reproduce as rep

    experiments = {"riska2004": (rep.riska2004, _report_riska2004), "anand2008": (rep.anand2008, _report_anand2008),
                   "lumb2002": (rep.lumb2002, _report_lumb2002), "rizzo2009": (rep.rizzo2009, _report_rizzo2009),
                   "wu2004": (rep.wu2004, _report_wu2004)}
    if name not in experiments:
        raise DiskschedError(f"unknown experiment '{name}' (expected one of: {', '.join(experiments)})")
    out.mkdir(parents=True, exist_ok=True)
    experiment, report = experiments[name]
    report(experiment(out, quick, lambda m: err_console.print(m, highlight=False)))
    console.print(f"wrote {out}/{name}.json and plots")


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

    console.print(_table("traffic shaper ([host.shaper] above the host scheduler; run --shaper/--shape): policies",
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
          requests: int = typer.Option(1_000_000, min=1000, help="Requests per run.")) -> None:
    """Simulation speed (requests per wall-clock second) and peak memory."""
    from .bench import dispatch_rates, hpl_replay, parse_rates, range_dispatch_rates, run_all

    def show(r: dict) -> None:
        if not json_out:
            err_console.print(f"  {r['workload']:>9} {r['scheduler']:>5}: {r['requests_per_s']:,.0f} req/s, "
                              f"peak RSS {r['peak_rss_mb']:.1f} MB", highlight=False)

    results = run_all(requests, show)
    rates = dispatch_rates(max(requests // 10, 1000)) + range_dispatch_rates(max(requests // 100, 1000))
    parsing = parse_rates(requests)
    from . import data

    results.append(hpl_replay(str(data.trace_path("ajw.1week"))))
    if json_out:
        print(json.dumps(results + [{"workload": "dispatch", **r} for r in rates]
                         + [{"workload": "parse", **r} for r in parsing], indent=2))
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


@config_app.command("check")
def config_check(config: Path = typer.Argument(..., help="Run config (TOML).")) -> None:
    """Check a run config (every check a run makes, disk and trace files included) without running it."""
    from . import config_resolve

    config_resolve(config)
    console.print(f"{config}: ok", highlight=False)


@config_app.command("show")
def config_show(config: Path = typer.Argument(..., help="Run config (TOML)."),
                json_out: bool = typer.Option(False, "--json", help="Print it as JSON.")) -> None:
    """Print a run config resolved: checked, with every default filled in."""
    from . import config_resolve

    text, resolved = config_resolve(config)
    print(json.dumps(resolved, indent=2) if json_out else text, end="\n" if json_out else "")


def main() -> None:
    # Ctrl-C ends every command with 130, whatever typer/click make of the
    # KeyboardInterrupt (older ones: "Aborted!", exit 1).
    interrupted = []

    def on_sigint(signum, frame):
        interrupted.append(signum)
        signal.default_int_handler(signum, frame)

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        app()
    except SystemExit as e:
        if interrupted:
            sys.stderr.write("interrupted\n")
            sys.exit(130)
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
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)

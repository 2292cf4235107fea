"""Display (issue 36, item 5): one colour per class across plots, coinciding CDFs as one legend entry,
sweep-plot's log axes, bench --json's progress on stderr, no placeholders in any command's help."""

import json

import pytest
import typer

from conftest import cli, pixels_of
from disksched import DiskschedError
from disksched import plots
from disksched.cli import app

TAB = {"tab:blue": "#1f77b4", "tab:orange": "#ff7f0e", "tab:green": "#2ca02c", "tab:red": "#d62728"}


def test_each_class_has_one_colour_in_every_plot(tmp_path):
    out = tmp_path / "qos"
    p = cli("run", "examples/qos.toml", "--set", "run.duration_ms=4000", "--out", out)
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text())["summary"]
    assert set(summary["classes"]) == set(plots.CLASS_COLORS)
    for png in ("response_cdf_by_class.png", "throughput.png"):
        for name, colour in plots.CLASS_COLORS.items():
            assert pixels_of(out / png, TAB[colour]) > 50, (png, name)
        # matplotlib's default second colour, which some class got before: in neither plot.
        assert pixels_of(out / png, TAB["tab:orange"]) == 0, png


def test_coinciding_series_are_one_entry():
    a, b = [3.0, 1.0, 2.0], [5.0, 4.0]
    merged = dict(plots._merge_identical({"fcfs q=1": a, "sptf q=1": [2.0, 3.0, 1.0], "sptf q=16": b, "x": a}))
    assert list(merged) == ["fcfs q=1, sptf q=1, x (identical)", "sptf q=16"]
    assert merged["sptf q=16"].tolist() == [4.0, 5.0]


def test_log_axes_when_asked_or_over_two_decades(monkeypatch, tmp_path):
    assert plots.wants_log([1, 10, 101], None, "--log-x")
    assert not plots.wants_log([1, 10, 100], None, "--log-x")
    assert not plots.wants_log([0, 10, 1000], None, "--log-x")
    assert not plots.wants_log([1, 10, 1000], False, "--log-x")
    with pytest.raises(DiskschedError, match=r"--log-y: the values are not all positive \(0 \.\. 5\)"):
        plots.wants_log([0, 5], True, "--log-y")
    import pandas as pd

    table = pd.DataFrame({"rate": [1.0, 10.0, 1000.0], "iops_mean": [5.0, 6.0, 7.0],
                          "iops_ci_low": [4.0, 5.0, 6.0], "iops_ci_high": [6.0, 7.0, 8.0]})
    scales = []
    monkeypatch.setattr(plots, "_save", lambda fig, path, plt, dpi=120: scales.append(
        (fig.axes[0].get_xscale(), fig.axes[0].get_yscale())))
    plots.figure_vs_key(tmp_path / "a.png", table, "rate", "iops", [], "t")
    plots.figure_vs_key(tmp_path / "b.png", table, "rate", "iops", [], "t", log_x=False, log_y=True)
    assert scales == [("log", "linear"), ("linear", "log")]


def test_sweep_plot_log_x_on_a_named_key_is_one_line(tmp_path):
    out = tmp_path / "s"
    p = cli("sweep", "examples/oltp.toml", "--grid", "host.scheduler=fcfs,sptf", "--set", "run.requests=300",
            "--out", out, "--workers", "1")
    assert p.returncode == 0, p.stderr
    p = cli("sweep-plot", out, "--y", "iops", "--x", "host.scheduler", "--log-x")
    assert p.returncode == 2 and "--log-x: host.scheduler is not numeric (its values: fcfs, sptf)" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = cli("sweep-plot", out, "--y", "iops", "--x", "host.scheduler", "--log-y")
    assert p.returncode == 0, p.stderr


def test_bench_json_says_what_it_does_on_stderr_and_keeps_stdout_json():
    p = cli("bench", "--json", "--requests", "1000", "--sweep-runs", "0")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert {r["workload"] for r in rows} >= {"open", "dispatch", "parse"}
    for step in ("simulation runs of 1,000 requests", "open  fcfs:", "dispatch decisions per second", "trace parsing"):
        assert step in p.stderr, (step, p.stderr)


def _commands(group, path=()):
    for name, cmd in group.commands.items():
        yield path + (name,), cmd
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, path + (name,))


def test_no_placeholders_in_any_help():
    top = typer.main.get_command(app)
    paths = [()] + [p for p, _ in _commands(top)]
    assert len(paths) > 20
    for path in paths:
        p = cli(*path, "--help")
        assert p.returncode == 0, (path, p.stderr)
        for bad in ("{", "<list", "[progress"):
            assert bad not in p.stdout, (path, bad, p.stdout)

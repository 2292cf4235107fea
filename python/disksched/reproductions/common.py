"""Helpers shared by the reproductions: disk spec files, plotting with confidence intervals."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def write_spec(path: Path, text: str) -> Path:
    """Write a disk spec the runs then read: whole, in one rename, so seeds measured in
    parallel processes (`--workers`) never read one another's half-written copy."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as p

    return p


def _mean_err(v) -> tuple[float, tuple[float, float]]:
    """A metric ({"mean", "lo", "hi"}) or a plain number: the value and its error bar."""
    if isinstance(v, dict):
        return v["mean"], (v["mean"] - v["lo"], v["hi"] - v["mean"])
    return float(v), (0.0, 0.0)


def bar_panel(ax, groups: list[str], series: dict, ylabel: str, title: str, log: bool = False) -> None:
    """Grouped bars, one bar per series in each group; metrics carry 95% CI error bars."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for i, (label, values) in enumerate(series.items()):
        me = [_mean_err(v) for v in values]
        y = [m for m, _ in me]
        err = np.array([e for _, e in me]).T
        ax.bar(x + (i - (len(series) - 1) / 2) * width, y, width, yerr=err if err.any() else None, capsize=2,
               label=label)
    ax.set_xticks(x, groups, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def line_panel(ax, x: list, series: dict, xlabel: str, ylabel: str, title: str, logx: bool = False,
               styles: dict | None = None) -> None:
    """One line per series over `x`; metrics carry 95% CI error bars."""
    for label, values in series.items():
        me = [_mean_err(v) for v in values]
        y = [m for m, _ in me]
        err = np.array([e for _, e in me]).T
        ax.errorbar(x, y, yerr=err if err.any() else None, marker="o", ms=4, capsize=2, label=label,
                    **((styles or {}).get(label, {})))
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)

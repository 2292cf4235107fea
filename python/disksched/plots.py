"""Plots (matplotlib, Agg backend), each written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .output import atomic_write


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def response_cdf(path: Path, series: Mapping[str, Sequence[float]], title: str,
                 xlabel: str = "response time (ms)") -> None:
    """Empirical CDFs of response times (ms), one line per series."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, values in series.items():
        v = np.sort(np.asarray(values, dtype=float))
        if len(v):
            ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=label, lw=1.4)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of requests")
    ax.set_title(title)
    ax.set_ylim(0, 1.0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format=path.suffix.lstrip(".")))
    plt.close(fig)


def grouped_bars(path: Path, groups: Sequence[str], series: Mapping[str, Sequence[float]],
                 ylabel: str, title: str) -> None:
    """One group of bars per entry of `groups`, one bar per series."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for i, (label, values) in enumerate(series.items()):
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks(x, groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format=path.suffix.lstrip(".")))
    plt.close(fig)


def throughput(path: Path, series, rates, title: str, labels: Mapping[int, str] | None = None,
               seconds: float | None = None) -> None:
    """Throughput of each client per window over time (`Result.series()`), as
    in Wu & Brandt's figures, with the shaper's token rates (`Result.rates()`,
    requests/s) on a second axis."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    if seconds is not None:
        series = series[series.time_s < seconds]
    half = float(series.time_s.diff().max() or 1.0) / 2 if len(series) > 1 else 0.5
    for client, s in series.groupby("client"):
        ax.plot(s.time_s + half, s.mb_per_s, label=(labels or {}).get(client, f"client {client}"))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_xlim(0, seconds or float(series.time_s.max() + 2 * half))
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    per_s = rates[rates.name.str.endswith(".rate_per_s")]
    if len(per_s):
        ax2 = ax.twinx()
        for name, r in per_s.groupby("name"):
            ax2.step(r.time_s, r.value, where="post", color="grey", ls=":", label=f"{name.split('.')[0]} token rate")
        ax2.set_ylabel("tokens per second")
        ax2.set_ylim(0, float(per_s.value.max()) * 1.1)
        ax2.legend(loc="upper right", fontsize=8)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".")))
    plt.close(fig)

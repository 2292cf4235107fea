"""Plots (matplotlib, Agg backend), each written atomically."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from ._core import DiskschedError
from .output import atomic_write


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# The request classes of `Result.records()`'s `class` column (the core's Class enum order).
CLASS_NAMES = {0: "best-effort", 1: "real-time", 2: "background"}
# One colour per class in every plot that draws classes (response_cdf_by_class.png, throughput.png, ...).
CLASS_COLORS = {"best-effort": "tab:blue", "real-time": "tab:red", "background": "tab:green"}


# PNG text chunks written into every plot saved here (the provenance of a run's or sweep's plots).
_metadata: dict = {}


@contextmanager
def png_provenance(provenance: Mapping[str, Any]) -> Iterator[None]:
    """Plots saved inside carry `provenance` as a PNG text chunk (`disksched show-run` reads it)."""
    from .provenance import png_metadata

    global _metadata
    before, _metadata = _metadata, png_metadata(provenance)
    try:
        yield
    finally:
        _metadata = before


def _savefig(fig, path: Path, dpi: int) -> None:
    fmt = path.suffix.lstrip(".")
    meta = dict(_metadata) if fmt == "png" else None
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi, format=fmt, metadata=meta))


def _save(fig, path: Path, plt, dpi: int = 120) -> None:
    fig.tight_layout()
    _savefig(fig, path, dpi)
    plt.close(fig)


def response_cdf(path: Path, series: Mapping[str, Sequence[float]], title: str,
                 xlabel: str = "response time (ms)", log_x: bool = False, tail: float = 99.9) -> None:
    """Empirical CDFs of response times (ms), one line per series, drawn to the
    `tail` percentile (a single worst request would squeeze every curve into
    the left edge) with each series' maximum noted; `log_x` for a log time axis.
    Series with identical values are drawn once, their labels joined."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    right, left = 0.0, np.inf
    for label, v in _merge_identical(series):
        if not len(v):
            continue
        top = f"{v[-1]:,.1f}" if v[-1] >= 100 else f"{v[-1]:.4g}"
        ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=f"{label}: max {top} ms", lw=1.4, drawstyle="steps-post")
        right = max(right, float(np.percentile(v, tail)))
        positive = v[v > 0]
        if len(positive):
            left = min(left, float(positive[0]))
    _finish_cdf(fig, ax, path, plt, xlabel, title, tail, log_x, left, right)


def _merge_identical(series: Mapping[str, Sequence[float]]) -> list[tuple[str, np.ndarray]]:
    """(label, sorted values) per distinct series; coinciding ones as one entry "a, b (identical)"."""
    groups: list[tuple[list[str], np.ndarray]] = []
    for label, values in series.items():
        v = np.sort(np.asarray(values, dtype=float))
        same = next((g for g in groups if np.array_equal(g[1], v)), None)
        if same is not None:
            same[0].append(label)
        else:
            groups.append(([label], v))
    return [(", ".join(ls) + (" (identical)" if len(ls) > 1 else ""), v) for ls, v in groups]


def _finish_cdf(fig, ax, path: Path, plt, xlabel: str, title: str, tail: float, log_x: bool,
                left: float, right: float) -> None:
    """Axes, limits (to the p`tail` point, or log from the smallest positive time), grid, legend; save."""
    ax.set_xlabel(f"{xlabel}, drawn to p{tail:g}" + (", log scale" if log_x else ""))
    ax.set_ylabel("fraction of requests")
    ax.set_title(title)
    ax.set_ylim(0, 1.0)
    if log_x and np.isfinite(left):
        ax.set_xscale("log")
        ax.set_xlim(left, max(right, left * 10) * 1.05)
    else:
        ax.set_xlim(0, right * 1.05 if right > 0 else 1.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    _save(fig, path, plt)


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
    _savefig(fig, path, 120)
    plt.close(fig)


def throughput(path: Path, series, rates, title: str, labels: Mapping[int, str] | None = None,
               seconds: float | None = None, end_s: float | None = None, by_class: bool = False) -> None:
    """Throughput of each client per window over time (`Result.series()`), as
    in Wu & Brandt's figures, with the shaper's token rates (`Result.rates()`,
    requests/s) on a second axis. `by_class`: one line per class name (its
    clients summed). A window that runs past `end_s` (the run's end) is
    partial and left out, not drawn as a drop. `series` and `rates` are
    DataFrames or mappings of columns (`disksched.series_table`): drawn with
    numpy alone, so `run --out` plots a run's series without pandas (~45 MB)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    t, mb = np.asarray(series["time_s"], dtype=float), np.asarray(series["mb_per_s"], dtype=float)
    client = np.asarray(series["client"])
    cls = np.asarray(series["class"], dtype=object) if "class" in series else None

    def keep(rows):
        nonlocal t, mb, client, cls
        t, mb, client = t[rows], mb[rows], client[rows]
        cls = cls[rows] if cls is not None else None

    if seconds is not None:
        keep(t < seconds)
    window_s = float(np.max(np.diff(t)) or 1.0) if len(t) > 1 else 1.0
    if end_s is not None:
        keep(t + window_s <= end_s + 1e-9)
    half = window_s / 2
    if by_class:
        for name in sorted(set(cls.tolist())):
            rows = cls == name
            times, sums = _sum_by(t[rows], mb[rows])
            n = len(np.unique(client[rows]))
            ax.plot(times + half, sums, label=f"{name} ({n} client{'s' if n > 1 else ''})", color=CLASS_COLORS.get(name))
    else:
        for c in np.unique(client):
            rows = client == c
            default = f"client {c} ({cls[rows][0]})" if cls is not None else f"client {c}"
            ax.plot(t[rows] + half, mb[rows], label=(labels or {}).get(c, default))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_xlim(0, seconds or (float(t.max() + 2 * half) if len(t) else 1.0))
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    names = np.asarray(rates["name"], dtype=object)
    per_s = np.array([str(n).endswith(".rate_per_s") for n in names], dtype=bool)
    if per_s.any():
        r_t, r_v = np.asarray(rates["time_s"], dtype=float), np.asarray(rates["value"], dtype=float)
        ax2 = ax.twinx()
        for name in sorted(set(names[per_s].tolist())):
            rows = per_s & (names == name)
            ax2.step(r_t[rows], r_v[rows], where="post", color="grey", ls=":", label=f"{name.split('.')[0]} token rate")
        ax2.set_ylabel("tokens per second")
        ax2.set_ylim(0, float(r_v[per_s].max()) * 1.1)
        ax2.legend(loc="upper right", fontsize=8)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    _savefig(fig, path, 110)
    plt.close(fig)


def _sum_by(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, sum of the values of each): pandas' `groupby(...).sum()`, with its
    compensated (Kahan) summation in row order, so the same sums to the last bit."""
    uniq, group = np.unique(keys, return_inverse=True)
    total, comp = [0.0] * len(uniq), [0.0] * len(uniq)
    for g, v in zip(group.tolist(), values.tolist()):
        if v != v:
            continue
        y = v - comp[g]
        s = total[g] + y
        comp[g] = s - total[g] - y
        total[g] = s
    return uniq, np.array(total)


def lbn_time(path: Path, t_s, lbn, is_write, title: str, counts: Optional[tuple[int, int]] = None) -> None:
    """Where on the disk each request went, over time (seekwatcher's scatter).
    `counts`: (reads, writes) of the whole run when the points are a sample."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    t_s, lbn, w = np.asarray(t_s, dtype=float), np.asarray(lbn, dtype=float), np.asarray(is_write, dtype=bool)
    for i, (mask, label, color) in enumerate(((~w, "read", "tab:blue"), (w, "write", "tab:red"))):
        if mask.any():
            n = counts[i] if counts is not None else int(mask.sum())
            ax.scatter(t_s[mask], lbn[mask], s=1, lw=0, color=color, label=f"{label} ({n:,})", rasterized=True)
    ax.set_xlabel("arrival time (s)")
    ax.set_ylabel("LBN")
    ax.set_title(title)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, markerscale=6, loc="upper right")
    _save(fig, path, plt, dpi=110)


def response_cdf_hist(path: Path, hists: Mapping[str, Any], title: str, xlabel: str = "response time (ms)",
                      log_x: bool = False, tail: float = 99.9, colors: Mapping[str, str] | None = None) -> None:
    """`response_cdf` drawn from histograms (`records.Histogram`: counts in
    0.23 %-wide bins and the exact maximum) instead of values held in memory;
    `colors`: a line colour by label (the classes' `CLASS_COLORS`)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    right, left = 0.0, np.inf
    for label, h in hists.items():
        if not h.counts.sum():
            continue
        x, f = h.cdf_ms()
        top_ms = h.max_ns / 1e6
        top = f"{top_ms:,.1f}" if top_ms >= 100 else f"{top_ms:.4g}"
        ax.plot(np.concatenate([[x[0]], x]), np.concatenate([[0.0], f]), label=f"{label}: max {top} ms", lw=1.4,
                drawstyle="steps-post", color=(colors or {}).get(label))
        right = max(right, float(x[np.searchsorted(f, tail / 100)]) if f[-1] >= tail / 100 else float(x[-1]))
        left = min(left, float(x[0]))
    _finish_cdf(fig, ax, path, plt, xlabel, title, tail, log_x, left, right)


def queue_depth_curves(path: Path, curves: Mapping[str, Optional[tuple]], title: str) -> None:
    """Requests outstanding over time from per-bin sums (`records.Depth.curve()`): the mean per
    bin is exact; the shaded maximum is the largest depth at the fine bin edges."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, c in curves.items():
        if c is None:
            continue
        mid, mean, peak, overall, top = c
        line, = ax.plot(mid, mean, lw=1.2, label=f"{label} (mean {overall:.2f}, max {top})")
        ax.fill_between(mid, mean, peak, color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests outstanding (mean per bin; shaded: max)")
    ax.yaxis.label.set_size(8)
    ax.set_title(title)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    _save(fig, path, plt, dpi=110)


def wants_log(values, asked: Optional[bool], flag: str) -> bool:
    """A log axis for `values`: as `asked`, or (None) when they are positive and span more than two decades."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    positive = len(v) > 0 and bool((v > 0).all())
    if asked and not positive:
        raise DiskschedError(f"{flag}: the values are not all positive ({v.min():g} .. {v.max():g}); no log axis")
    return positive and bool(v.max() > 100 * v.min()) if asked is None else asked


def figure_vs_key(path: Path, table, x: str, y: str, lines: Sequence[str], title: str,
                  log_x: Optional[bool] = None, log_y: Optional[bool] = None) -> None:
    """A sweep's figure `y` (mean over seeds, with its 95 % confidence band)
    against grid key `x`, one line per combination of the `lines` keys
    (`sweep_runner.aggregate`'s table). `log_x`, `log_y`: log axes (None: when
    the values span more than two decades, `wants_log`)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines = list(lines)
    groups = [((), table)] if not lines else list(table.groupby(lines, sort=False))
    numeric = np.issubdtype(np.asarray(table[x]).dtype, np.number)
    cats = None if numeric else list(dict.fromkeys(table[x]))
    for value, t in groups:
        value = value if isinstance(value, tuple) else (value,)
        t = t.sort_values(x) if numeric else t.assign(_pos=[cats.index(v) for v in t[x]]).sort_values("_pos")
        xs = np.asarray(t[x], dtype=float) if numeric else np.asarray(t["_pos"], dtype=float)
        mean, lo, hi = (np.asarray(t[f"{y}_{s}"], dtype=float) for s in ("mean", "ci_low", "ci_high"))
        label = ", ".join(f"{k}={v}" for k, v in zip(lines, value)) or None
        line, = ax.plot(xs, mean, marker="o", ms=3, lw=1.4, label=label)
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    if not numeric:
        if log_x:
            raise DiskschedError(f"--log-x: {x} is not numeric (its values: {', '.join(map(str, cats))})")
        ax.set_xticks(range(len(cats)), [str(c) for c in cats])
    elif wants_log(table[x], log_x, "--log-x"):
        ax.set_xscale("log")
    if wants_log(table[f"{y}_mean"], log_y, "--log-y"):
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} (mean, 95% CI band)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if lines:
        ax.legend(fontsize=8)
    _save(fig, path, plt)

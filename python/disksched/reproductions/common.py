"""Helpers shared by the reproductions: disk spec files, plotting with confidence intervals."""

from __future__ import annotations

import contextlib
import json
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


# --- Ablations: a mechanism removed from every run an experiment makes -------------------------------------

_ABLATION: dict | None = None  # the active ablation's rules (None: the experiment as the paper describes it)
_RUNS: dict | None = None      # config -> result, while `ablating` shares them: runs an ablation leaves alone are reused


def _walk(node, path: list[str]):
    """The (parent, key) pairs a dotted path names in a config; a list on the way stands for each of its items."""
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, path)
        return
    if not isinstance(node, dict):
        return
    head, rest = path[0], path[1:]
    if not rest:
        if head in node:
            yield node, head
        return
    if head in node:
        yield from _walk(node[head], rest)


def apply_ablation(cfg: dict, rules: dict) -> dict:
    """`cfg` with an ablation's rules applied (a copy), when it matches `when` ({path = value}, all of them):
    `replace` ({path = {old = new}}: a value at `path` equal to `old` becomes `new`), `set` ({path = value}: where
    `path`'s parent exists) and `unset` ([path, ...])."""
    import copy

    for path, want in rules.get("when", {}).items():
        if not any(parent[key] == want for parent, key in _walk(cfg, path.split("."))):
            return cfg
    out = copy.deepcopy(cfg)
    for path, table in rules.get("replace", {}).items():
        for parent, key in _walk(out, path.split(".")):
            v = parent[key]
            if isinstance(v, (str, int, float, bool)) and str(v) in table:
                parent[key] = table[str(v)]
    for path, value in rules.get("set", {}).items():
        *up, last = path.split(".")
        parents = [out] if not up else [p[k] for p, k in _walk(out, up)]
        for p in parents:
            for q in (p if isinstance(p, list) else [p]):
                if isinstance(q, dict):
                    q[last] = copy.deepcopy(value)
    for path in rules.get("unset", []):
        for parent, key in list(_walk(out, path.split("."))):
            del parent[key]
    return out


def run(cfg: dict, *args, **kwargs):
    """`disksched.run` for the reproductions: with the active ablation applied to `cfg`. While an experiment is
    measured with its ablations (`ablating`), a run whose config an ablation leaves unchanged is not run again."""
    if _ABLATION is not None:
        cfg = apply_ablation(cfg, _ABLATION)
    if _RUNS is None:
        return run_unablated(cfg, *args, **kwargs)
    key = json.dumps([cfg, args, kwargs], sort_keys=True, default=str)
    if key not in _RUNS:
        _RUNS[key] = run_unablated(cfg, *args, **kwargs)
    return _RUNS[key]


def run_unablated(cfg: dict, *args, **kwargs):
    """`disksched.run` with no ablation applied: for sizing a workload on the paper's own set-up (the load a
    mechanism is measured under must stay the same when the mechanism is removed)."""
    from .. import run as run_sim

    return run_sim(cfg, *args, **kwargs)


@contextlib.contextmanager
def ablating(rules: dict | None, memo: dict | None):
    """Every `run` inside the block has `rules` applied (None: none) and shares the results in `memo`."""
    global _ABLATION, _RUNS
    saved = _ABLATION, _RUNS
    _ABLATION, _RUNS = rules, memo
    try:
        yield
    finally:
        _ABLATION, _RUNS = saved


def ablation_active() -> bool:
    """Whether the runs are being made under an ablation: an experiment may then skip a measured comparison
    that no claim reads (its metrics judge nothing there, and the ablations would run it again for nothing)."""
    return _ABLATION is not None

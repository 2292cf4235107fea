"""Anand, Sen, Krioukov et al., "Avoiding File System Micromanagement with Range Writes"
(OSDI 2008), Figures 4-6 and the targets-per-write figure: randomized one-block writes,
in-drive SPTF (traditional writes) or HRS (range writes)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from .. import _core
from .common import plt, run
from .lumb2002 import ultra2_spec

NAME = "anand2008"
DEPTHS = [1, 2, 4, 8, 16, 32, 64]
GROUP_BLOCKS = 4096
FIGS = {"trad": "traditional writes, SPTF", "track": "track-sized ranges, HRS", "group": "4096-block (group) ranges, HRS"}
PARTS = ("seek", "rot", "xfer")


def spec(disk: str) -> dict:
    return tomllib.loads(_core.disk_show(disk)[0])


def track_blocks(disk: str) -> tuple[int, int]:
    """Smallest and largest sectors per track of the disk's zones."""
    spt = [z["sectors_per_track"] for z in spec(disk)["layout"]["zones"]]
    return min(spt), max(spt)


def _config(disk: str, sched: str, depth: int, range_blocks: int, span: str, targets: int, requests: int,
            seed: int) -> dict:
    return {"seed": seed, "disk": {"model": disk, "scheduler": sched},
            "host": {"scheduler": "fcfs", "queue_threshold": depth},
            "workload": {"kind": "range-writes", "outstanding": depth, "size_blocks": 1, "range_blocks": range_blocks,
                         "targets": targets, "span": span, "group_blocks": GROUP_BLOCKS},
            "run": {"requests": requests, "warmup_requests": requests // 10}}


def _parts(summary: dict) -> dict:
    return {"seek": summary["mean_seek_ms"], "rot": summary["mean_rotation_ms"], "xfer": summary["mean_transfer_ms"]}


def disks(quick: bool, out: Path) -> dict:
    """The paper's drive had no write cache: the Atlas 10K runs with its write cache off (lumb2002's spec)."""
    d = {"hp": "hp_c2247a"}
    if not quick:
        d["atlas"] = str(ultra2_spec(out)[0])
    return d


def targets_counts(track: int) -> dict:
    return {"track": sorted({1, 2, 4, 8, 16, 32, 64, track}), "group": [1, 4, 16, 64, 256, 1024, 4096]}


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    n = 3000 if quick else 20000
    m: dict = {}
    info: dict = {"requests_per_point": n, "disks": {}}
    for key, model in disks(quick, out).items():
        lo, hi = track_blocks(model)
        m[f"{key}_track_blocks_min"], m[f"{key}_track_blocks_max"] = lo, hi
        m[f"{key}_minimum_seek_delay_ms"] = spec(model)["controller"].get("minimum_seek_delay_ms", 0.0)
        ranges = {"trad": ("sptf", 1), "track": ("hrs", hi), "group": ("hrs", GROUP_BLOCKS)}
        info["disks"][key] = {"model": model, "track_range_blocks": hi}
        for fig, (sched, rng) in ranges.items():
            for span in ("disk", "group"):
                for q in DEPTHS:
                    p = _parts(run(_config(model, sched, q, rng, span, 0, n, seed)).summary)
                    for part, v in p.items():
                        m[f"{key}_{fig}_{span}_q{q}_{part}"] = v
                    m[f"{key}_{fig}_{span}_q{q}_pos"] = p["seek"] + p["rot"]
                log(f"  {key} {fig} span={span}: " + ", ".join(
                    f"q{q}={m[f'{key}_{fig}_{span}_q{q}_pos']:.2f}" for q in DEPTHS) + " ms positioning")
        for rng_key, counts in targets_counts(hi).items():
            rng = ranges[rng_key][1]
            for k in counts:
                p = _parts(run(_config(model, "hrs", 1, rng, "group", k, n, seed)).summary)
                for part, v in p.items():
                    m[f"{key}_targets_{rng_key}_k{k}_{part}"] = v
                m[f"{key}_targets_{rng_key}_k{k}_pos"] = p["seek"] + p["rot"]
    return m, {"json": info, "quick": quick}


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt_interval

    iv = lambda k: fmt_interval(metrics[k]["mean"], metrics[k]["lo"], metrics[k]["hi"])  # noqa: E731
    out = []
    for key in ("hp", "atlas"):
        if f"{key}_track_blocks_max" not in means:
            continue
        name = {"hp": "HP C2247A", "atlas": "Atlas 10K (write cache off)"}[key]
        lo, hi = int(means[f"{key}_track_blocks_min"]), int(means[f"{key}_track_blocks_max"])
        rows = []
        for fig, label in FIGS.items():
            for span in ("disk", "group"):
                rows.append([label, span] + [iv(f"{key}_{fig}_{span}_q{q}_pos") for q in (1, 2, 16, 64)])
        out.append({"title": f"{name}: mean positioning (seek + rotation) per one-block write, ms; tracks hold "
                             f"{lo}-{hi} sectors, so the track-sized range is {hi} blocks",
                    "columns": ["writes", "span", "1 outstanding", "2", "16", "64"], "rows": rows})
    return out


def _stacked(ax, labels: list, metrics: dict, prefix: list[str], title: str, xlabel: str) -> None:
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    for part, name, color in [("seek", "seek", "tab:blue"), ("rot", "rotation", "tab:orange"),
                              ("xfer", "transfer", "tab:green")]:
        v = np.array([metrics[f"{p}_{part}"]["mean"] for p in prefix])
        ax.bar(x, v, bottom=bottom, color=color, label=name)
        bottom += v
    ax.set_xticks(x, [str(v) for v in labels])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("mean time per write (ms)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)


def plots(out: Path, metrics: dict, data: dict) -> list[tuple[str, str]]:
    p = plt()
    figs = []
    for key, name in (("hp", "HP C2247A"), ("atlas", "Atlas 10K")):
        if f"{key}_track_blocks_max" not in metrics:
            continue
        hi = int(metrics[f"{key}_track_blocks_max"]["mean"])
        fig, axes = p.subplots(3, 2, figsize=(11, 11), sharey="row")
        for row, (fk, title) in enumerate(FIGS.items()):
            if fk == "track":
                title = f"{hi}-block (track-sized) ranges, HRS"
            for col, span in enumerate(["disk", "group"]):
                _stacked(axes[row][col], DEPTHS, metrics, [f"{key}_{fk}_{span}_q{q}" for q in DEPTHS],
                         f"Fig. {4 + row}: {title}; writes spread over the {span}", "outstanding writes")
        fig.suptitle(f"{name}: randomized one-block writes (Anand et al. 2008, Figs. 4-6; means over the seeds)")
        fig.tight_layout()
        fig.savefig(out / f"anand2008_{key}_depth.png", dpi=100)
        p.close(fig)
        figs.append((f"anand2008_{key}_depth.png", f"{name}: time per write vs outstanding writes, Figs. 4-6"))
        fig, axes = p.subplots(1, 2, figsize=(11, 4))
        for ax, (rk, counts) in zip(axes, targets_counts(hi).items()):
            rng = hi if rk == "track" else GROUP_BLOCKS
            _stacked(ax, counts, metrics, [f"{key}_targets_{rk}_k{k}" for k in counts],
                     f"{name}: range {rng} blocks in a group, 1 outstanding", "targets per write")
        fig.suptitle("Scheduler flexibility: acceptable targets per range write (Anand et al. 2008)")
        fig.tight_layout()
        fig.savefig(out / f"anand2008_{key}_targets.png", dpi=100)
        p.close(fig)
        figs.append((f"anand2008_{key}_targets.png", f"{name}: time per write vs the number of acceptable targets"))
    return figs

"""Anand, Sen, Krioukov et al., "Avoiding File System Micromanagement with Range Writes"
(OSDI 2008), Figures 4-6 and the targets-per-write figure (Fig. 7): randomized one-block writes,
in-drive SPTF (traditional writes) or HRS (range writes), from 1 to 64 outstanding, on the HP C2247A
and the Atlas 10K with its write cache off."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from .. import _core
from .common import plt, run
from .lumb2002 import ultra2_spec

NAME = "anand2008"
DEPTHS = [1, 2, 4, 8, 16, 32, 64]
QUICK_DEPTHS = [1, 2, 16, 64]
# Fig. 7's two graphs: each of the write's targets is a range of this many blocks (the caption: "from 1
# (on the left) to 100 (on the right)"), all of them within one 4096-block group.
TARGET_RANGES = [1, 100]
TARGET_COUNTS = [1, 2, 4, 8, 16, 32, 64]
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
            seed: int, target_blocks: int = 1) -> dict:
    return {"seed": seed, "disk": {"model": disk, "scheduler": sched},
            "host": {"scheduler": "fcfs", "queue_threshold": depth},
            "workload": {"kind": "range-writes", "outstanding": depth, "size_blocks": 1, "range_blocks": range_blocks,
                         "targets": targets, "target_blocks": target_blocks, "span": span,
                         "group_blocks": GROUP_BLOCKS},
            "run": {"requests": requests, "warmup_requests": requests // 10}}


def _parts(summary: dict) -> dict:
    return {"seek": summary["mean_seek_ms"], "rot": summary["mean_rotation_ms"], "xfer": summary["mean_transfer_ms"]}


def disks(out: Path) -> dict:
    """The paper's drive had no write cache: the Atlas 10K runs with its write cache off (lumb2002's spec)."""
    return {"hp": "hp_c2247a", "atlas": str(ultra2_spec(out)[0])}


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    n = 3000 if quick else 20000
    depths = QUICK_DEPTHS if quick else DEPTHS
    m: dict = {}
    info: dict = {"requests_per_point": n, "depths": depths, "disks": {}}
    for key, model in disks(out).items():
        lo, hi = track_blocks(model)
        m[f"{key}_track_blocks_min"], m[f"{key}_track_blocks_max"] = lo, hi
        m[f"{key}_minimum_seek_delay_ms"] = spec(model)["controller"].get("minimum_seek_delay_ms", 0.0)
        m[f"{key}_revolution_ms"] = 60_000 / spec(model)["rpm"]
        ranges = {"trad": ("sptf", 1), "track": ("hrs", hi), "group": ("hrs", GROUP_BLOCKS)}
        info["disks"][key] = {"model": model, "track_range_blocks": hi}
        for fig, (sched, rng) in ranges.items():
            for span in ("disk", "group"):
                for q in depths:
                    p = _parts(run(_config(model, sched, q, rng, span, 0, n, seed)).summary)
                    for part, v in p.items():
                        m[f"{key}_{fig}_{span}_q{q}_{part}"] = v
                    m[f"{key}_{fig}_{span}_q{q}_pos"] = p["seek"] + p["rot"]
                log(f"  {key} {fig} span={span}: " + ", ".join(
                    f"q{q}={m[f'{key}_{fig}_{span}_q{q}_pos']:.2f}" for q in depths) + " ms positioning")
        # Fig. 7: k targets per write, each a range of `r` blocks, all in one group; 1 outstanding.
        for r in TARGET_RANGES:
            for k in TARGET_COUNTS:
                p = _parts(run(_config(model, "hrs", 1, GROUP_BLOCKS, "group", k, n, seed, target_blocks=r)).summary)
                for part, v in p.items():
                    m[f"{key}_targets_r{r}_k{k}_{part}"] = v
                m[f"{key}_targets_r{r}_k{k}_pos"] = p["seek"] + p["rot"]
    return m, {"json": info, "quick": quick}


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt_interval

    iv = lambda k: fmt_interval(metrics[k]["mean"], metrics[k]["lo"], metrics[k]["hi"]) if k in metrics else "-"  # noqa: E731
    out = []
    for key, name in (("hp", "HP C2247A"), ("atlas", "Atlas 10K (write cache off)")):
        lo, hi = int(means[f"{key}_track_blocks_min"]), int(means[f"{key}_track_blocks_max"])
        rows = [[FIGS[fig], span] + [iv(f"{key}_{fig}_{span}_q{q}_pos") for q in (1, 2, 16, 64)]
                for fig in FIGS for span in ("disk", "group")]
        out.append({"title": f"{name}: mean positioning (seek + rotation) per one-block write, ms; tracks hold "
                             f"{lo}-{hi} sectors, so the track-sized range is {hi} blocks",
                    "columns": ["writes", "span", "q1", "q2", "q16", "q64"], "rows": rows})
        out.append({"title": f"{name}, Fig. 7: mean positioning per write (ms) against the targets per write, each "
                             f"target a range of 1 or 100 blocks, all in one {GROUP_BLOCKS}-block group, 1 outstanding",
                    "columns": ["range"] + [f"k={k}" for k in TARGET_COUNTS],
                    "rows": [[f"{r}"] + [iv(f"{key}_targets_r{r}_k{k}_pos") for k in TARGET_COUNTS]
                             for r in TARGET_RANGES]})
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
    depths = [q for q in DEPTHS if f"hp_trad_disk_q{q}_pos" in metrics]
    for key, name in (("hp", "HP C2247A"), ("atlas", "Atlas 10K")):
        hi = int(metrics[f"{key}_track_blocks_max"]["mean"])
        fig, axes = p.subplots(3, 2, figsize=(11, 11), sharey="row")
        for row, (fk, title) in enumerate(FIGS.items()):
            if fk == "track":
                title = f"{hi}-block (track-sized) ranges, HRS"
            for col, span in enumerate(["disk", "group"]):
                _stacked(axes[row][col], depths, metrics, [f"{key}_{fk}_{span}_q{q}" for q in depths],
                         f"Fig. {4 + row}: {title}; writes spread over the {span}", "outstanding writes")
        fig.suptitle(f"{name}: randomized one-block writes (Anand et al. 2008, Figs. 4-6; means over the seeds)")
        fig.tight_layout()
        fig.savefig(out / f"anand2008_{key}_depth.png", dpi=100)
        p.close(fig)
        figs.append((f"anand2008_{key}_depth.png", f"{name}: time per write vs outstanding writes, Figs. 4-6"))
        fig, axes = p.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, r in zip(axes, TARGET_RANGES):
            _stacked(ax, TARGET_COUNTS, metrics, [f"{key}_targets_r{r}_k{k}" for k in TARGET_COUNTS],
                     f"{name}: each target a range of {r} block{'s' if r > 1 else ''}, in one group, 1 outstanding",
                     "targets per write")
        fig.suptitle("Fig. 7: scheduler flexibility, acceptable targets per range write (Anand et al. 2008)")
        fig.tight_layout()
        fig.savefig(out / f"anand2008_{key}_targets.png", dpi=100)
        p.close(fig)
        figs.append((f"anand2008_{key}_targets.png", f"{name}: time per write vs the number of acceptable targets "
                                                      f"(each a range of 1 or 100 blocks), Fig. 7"))
    return figs

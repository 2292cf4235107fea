"""Experiments built from runs: the demo comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from . import run
from .output import write_json
from .plots import grouped_bars, response_cdf

DEMO_SCHEDULERS = ["fcfs", "clook", "sstf", "sptf"]
DEMO_THRESHOLDS = [1, 16]


def demo_config(sched: str, threshold: int, requests: int, seed: int) -> dict:
    """Atlas 10K under the OLTP workload, as Riska & Riedel set it up: the
    algorithm schedules the drive's queue, the host queue is FCFS, and the
    queuing threshold decides how many requests the drive can choose from
    (with threshold 1 it has no choice, so every algorithm acts as FCFS)."""
    return {
        "seed": seed,
        "disk": {"model": "atlas10k", "scheduler": sched},
        "host": {"scheduler": "fcfs", "queue_threshold": threshold},
        "workload": {"kind": "oltp"},
        "run": {"requests": requests, "warmup_requests": requests // 20},
    }


def demo(out: Optional[Path], requests: int, seed: int,
         on_row: Callable[[dict], None] = lambda r: None) -> list[dict]:
    rows, cdfs = [], {}
    for threshold in DEMO_THRESHOLDS:
        for sched in DEMO_SCHEDULERS:
            r = run(demo_config(sched, threshold, requests, seed), records=out is not None)
            s = r.summary
            row = {
                "scheduler": sched, "threshold": threshold,
                "mean_ms": s["host_response_ms"]["mean"], "p99_ms": s["host_response_ms"]["p99"],
                "iops": s["iops"], "seek_ms": s["mean_seek_ms"], "rotation_ms": s["mean_rotation_ms"],
            }
            rows.append(row)
            on_row(row)
            if out is not None:
                df = r.records()
                cdfs[f"{sched} q={threshold}"] = (df.done_ns - df.arrival_ns) / 1e6
    if out is not None:
        write_json(out / "demo.json", rows)
        grouped_bars(out / "demo_mean_response.png", [f"threshold {t}" for t in DEMO_THRESHOLDS],
                     {s: [r["mean_ms"] for r in rows if r["scheduler"] == s] for s in DEMO_SCHEDULERS},
                     "mean response time (ms)", "Atlas 10K, OLTP (10 clients, 30 ms think)")
        response_cdf(out / "demo_response_cdf.png", cdfs, "Atlas 10K, OLTP: host response time")
    return rows

"""Rizzo & Checconi, GEOM_SCHED (2009), gsched_rr's performance slides: greedy dd /
fio clients, FreeBSD's default disksort (C-LOOK) vs rr with the slides' sysctl values."""

from __future__ import annotations

import json
from pathlib import Path

from .. import _core, run
from .common import bar_panel, plt, write_spec

NAME = "rizzo2009"

# A 250 GB SATA desktop drive of 2009 as its datasheet would describe it
# (the slides: 7200 RPM, 88 MB/s peak); the rest is typical of the class.
DISK = {"name": "sata250", "capacity_gb": 250, "rpm": 7200, "outer_mb_s": 88, "inner_mb_s": 45,
        "track_to_track_ms": 0.8, "average_seek_ms": 8.5, "full_stroke_ms": 17, "cache_kb": 8192,
        "write_cache": True, "bus_mb_s": 150}
GIB_BLOCKS = 2**30 // 512
# The slides' gsched_rr sysctls: wait 5 ms, quantum 8 MB / 50 ms, one request at the drive.
SCHEDULERS = {"clook": {}, "rr": {"wait_ms": 5, "bypass": 0, "w_anticipate": 1, "quantum_kb": 8192,
                                  "quantum_ms": 50, "queue_depth": 1}}
# MiB/s of (first, second) client per case and scheduler, from the slides.
PAPER = {"two_readers": {"clook": (6.8, 6.8), "rr": (27.0, 27.0)},
         "reader_writer": {"clook": (0.234, 72.3), "rr": (12.0, 40.0)},
         "two_writers": {"clook": (16.0, 16.0), "rr": (15.5, 15.5)},
         "seq_random": {"clook": (4.2, 4.2), "rr": (30.0, 4.4)}}
CASES = {"two_readers": "two sequential readers", "reader_writer": "sequential reader + greedy writer",
         "two_writers": "two greedy writers", "seq_random": "sequential reader + random reader"}


def _members(case: str) -> list[dict]:
    """The clients of one case: two files 1 GiB apart near the outer edge, 128 KB requests (MAXPHYS)."""
    a, b = 40 * GIB_BLOCKS, 41 * GIB_BLOCKS
    reader = lambda at: {"kind": "dd", "request_kb": 128, "depth": 1, "start_lbn": at}  # noqa: E731
    writer = lambda at: {"kind": "dd", "request_kb": 128, "depth": 16, "write": True, "start_lbn": at}  # noqa: E731
    random_reader = {"kind": "hotcold", "size_kb": 128, "size_multiple_kb": 128, "read_fraction": 1.0,
                     "hot_fraction": GIB_BLOCKS / (DISK["capacity_gb"] * 1e9 / 512), "hot_access_fraction": 1.0,
                     "hot_start_lbn": b}
    first, second = {"two_readers": (reader(a), reader(b)), "reader_writer": (reader(a), writer(b)),
                     "two_writers": (writer(a), writer(b)), "seq_random": (reader(a), random_reader)}[case]
    return [{**first, "flow": 0}, {**second, "flow": 1000}]


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    disk = out / "sata250.toml"
    write_spec(disk, _core.disk_datasheet(json.dumps(DISK)))
    duration_ms = 5_000 if quick else 60_000
    m: dict = {}
    for case in PAPER:
        for sched, tun in SCHEDULERS.items():
            cfg = {"seed": seed, "disk": {"model": str(disk), "scheduler": "fcfs"},
                   "host": {"scheduler": sched, "set": tun, "queue_threshold": 1},
                   "workload": {"kind": "mix", "clients": _members(case)},
                   "run": {"requests": 10_000_000, "duration_ms": duration_ms}}
            df = run(cfg, records=True).records()
            span_s = df.done_ns.max() / 1e9
            for who, sel in (("a", df.client < 1000), ("b", df.client >= 1000)):
                m[f"{case}_{sched}_{who}_mib_s"] = float((df.blocks[sel] * 512).sum() / 2**20 / span_s)
            m[f"{case}_{sched}_total"] = m[f"{case}_{sched}_a_mib_s"] + m[f"{case}_{sched}_b_mib_s"]
            log(f"  {case}, {sched}: {m[f'{case}_{sched}_a_mib_s']:.1f} + {m[f'{case}_{sched}_b_mib_s']:.1f} MiB/s")
    # The reader beside a writer under rr, measured again with the drive's write cache off:
    # what the write-back buffer does to the reader's share.
    nowc = out / "sata250_nowc.toml"
    write_spec(nowc, _core.disk_datasheet(json.dumps({**DISK, "name": "sata250-nowc", "write_cache": False})))
    cfg = {"seed": seed, "disk": {"model": str(nowc), "scheduler": "fcfs"},
           "host": {"scheduler": "rr", "set": SCHEDULERS["rr"], "queue_threshold": 1},
           "workload": {"kind": "mix", "clients": _members("reader_writer")},
           "run": {"requests": 10_000_000, "duration_ms": duration_ms}}
    df = run(cfg, records=True).records()
    span_s = df.done_ns.max() / 1e9
    for who, sel in (("a", df.client < 1000), ("b", df.client >= 1000)):
        m[f"reader_writer_rr_nowc_{who}_mib_s"] = float((df.blocks[sel] * 512).sum() / 2**20 / span_s)
    return m, {"json": {"duration_ms": duration_ms, "disk": DISK}}


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt_interval

    rows = []
    for case, label in CASES.items():
        for sched in SCHEDULERS:
            ours = [metrics[f"{case}_{sched}_{w}_mib_s"] for w in "ab"]
            rows.append([label, sched, " + ".join(fmt_interval(o["mean"], o["lo"], o["hi"]) for o in ours),
                         " + ".join(f"{x:g}" for x in PAPER[case][sched])])
    return [{"title": "Greedy clients, MiB/s (first + second client); one command at a time at the drive (ata(4), "
                      "no NCQ), 128 KB requests, two files 1 GiB apart",
             "columns": ["case", "scheduler", "disksched", "paper (slides)"], "rows": rows}]


def plots(out: Path, metrics: dict, data: dict) -> list[tuple[str, str]]:
    p = plt()
    fig, axes = p.subplots(1, 4, figsize=(16, 4))
    for ax, (case, label) in zip(axes, CASES.items()):
        groups = [f"{s} {w}" for s in SCHEDULERS for w in ("1st", "2nd")]
        ours = [metrics[f"{case}_{s}_{w}_mib_s"] for s in SCHEDULERS for w in "ab"]
        paper = [PAPER[case][s][i] for s in SCHEDULERS for i in (0, 1)]
        bar_panel(ax, groups, {"disksched": ours, "paper": paper}, "MiB/s", label)
    fig.suptitle("GEOM_SCHED slides (Rizzo & Checconi 2009): throughput of two greedy clients, C-LOOK vs gsched_rr")
    fig.tight_layout()
    fig.savefig(out / "rizzo2009_throughput.png", dpi=100)
    p.close(fig)
    return [("rizzo2009_throughput.png", "Throughput of each client per case, disksched (mean, 95% CI) beside the slides")]

"""Rizzo & Checconi, GEOM_SCHED (2009), gsched_rr's performance slides: greedy dd /
fio clients, FreeBSD's default disksort (C-LOOK) vs rr with the slides' sysctl values;
and the slides' disk characterization (part 4: latency and throughput against block
size when streaming, delay against seek distance) of their 250 GB SATA disk, measured
on the same disk model by `disksched characterize`'s module."""

from __future__ import annotations

import json
from pathlib import Path

from .. import _core, characterize
from .common import bar_panel, plt, run, write_spec

NAME = "rizzo2009"

# A 250 GB SATA desktop drive of 2009 as its datasheet would describe it
# (the slides: 7200 RPM, 88 MB/s peak); the rest is typical of the class.
DISK = {"name": "sata250", "capacity_gb": 250, "rpm": 7200, "outer_mb_s": 88, "inner_mb_s": 45,
        "track_to_track_ms": 0.8, "average_seek_ms": 8.5, "full_stroke_ms": 17, "cache_kb": 8192,
        "write_cache": True, "bus_mb_s": 150}
GIB_BLOCKS = 2**30 // 512
# The slides' gsched_rr sysctls: wait 5 ms, quantum 8 MB / 50 ms, one request at the drive;
# and gs_rr.c as it was in 2009 (FreeBSD 8.x): a slice's clock starts only at a completion
# that finds the client's queue empty while anticipating, so a greedy writer, whose queue
# never empties, keeps the disk for quantum_kb (8 MB) and a synchronous reader for quantum_ms.
SCHEDULERS = {"clook": {}, "rr": {"wait_ms": 5, "bypass": 0, "w_anticipate": 1, "quantum_kb": 8192,
                                  "quantum_ms": 50, "queue_depth": 1, "slice_start_when_idle": 1}}
# MiB/s of (first, second) client per case and scheduler, from the slides.
PAPER = {"two_readers": {"clook": (6.8, 6.8), "rr": (27.0, 27.0)},
         "reader_writer": {"clook": (0.234, 72.3), "rr": (12.0, 40.0)},
         "two_writers": {"clook": (16.0, 16.0), "rr": (15.5, 15.5)},
         "seq_random": {"clook": (4.2, 4.2), "rr": (30.0, 4.4)}}
CASES = {"two_readers": "two sequential readers", "reader_writer": "sequential reader + greedy writer",
         "two_writers": "two greedy writers", "seq_random": "sequential reader + random reader"}


# How far apart the two files start, GiB: the slides do not say. A 60 s run at the outer zone's
# 88 MB/s covers 5.3 GB, so at 6 GiB each client stays in its own file for the whole run (at
# 1 GiB, used before, a writer ran into the other's file within the full run).
FILE_GIB = 6


def _placement(seed: int) -> int:
    """Where the first file starts, GiB from the disk's start: the slides do not say. A file system
    places files by its own rules; here the seed draws it uniformly from the disk's outer half,
    since the slides' lone writer (72.3 MiB/s, 75.8 MB/s) streams faster than the middle of a disk
    falling linearly from 88 to 45 MB/s (66.5 MB/s) allows. The second file starts FILE_GIB later."""
    import random

    return random.Random(seed).randrange(0, int(DISK["capacity_gb"] * 1e9 / 2**30 / 2) - FILE_GIB)


def _members(case: str, at_gib: int = 40) -> list[dict]:
    """The clients of one case: two files FILE_GIB apart (the first at `at_gib`), 128 KB requests (MAXPHYS)."""
    a, b = at_gib * GIB_BLOCKS, (at_gib + FILE_GIB) * GIB_BLOCKS
    reader = lambda at: {"kind": "dd", "request_kb": 128, "depth": 1, "start_lbn": at}  # noqa: E731
    writer = lambda at: {"kind": "dd", "request_kb": 128, "depth": 16, "write": True, "start_lbn": at}  # noqa: E731
    random_reader = {"kind": "hotcold", "size_kb": 128, "size_multiple_kb": 128, "read_fraction": 1.0,
                     "hot_fraction": GIB_BLOCKS / (DISK["capacity_gb"] * 1e9 / 512), "hot_access_fraction": 1.0,
                     "hot_start_lbn": b}
    first, second = {"two_readers": (reader(a), reader(b)), "reader_writer": (reader(a), writer(b)),
                     "two_writers": (writer(a), writer(b)), "seq_random": (reader(a), random_reader)}[case]
    return [{**first, "flow": 0}, {**second, "flow": 1000}]


# The slides' streaming figure names the disk's peak: "250GB SATA, 7200 RPM, peak 88MB/s".
SLIDES_PEAK_MB_S = 88.0
_CHARACTERIZED: dict = {}


def characterization(disk: Path, log) -> dict:
    """The slides' part 4 on this disk: `characterize`'s request-size and seek-distance
    curves. They use the characterization's own fixed seed, so they are measured once per
    process and are the same for every seed of the reproduction."""
    key = disk.read_text()
    if key not in _CHARACTERIZED:
        log("  characterizing the disk (request sizes, seek distances)")
        _CHARACTERIZED[key] = characterize.characterize(str(disk))
    return _CHARACTERIZED[key]


def characterization_metrics(res: dict) -> dict:
    sizes = {r["request_kb"]: r for r in res["sizes"]}
    seeks = [s for s in res["seek"] if s["read_service_ms"] is not None]
    m = {"char_dd_peak_mb_s": max(r["dd_read"]["mb_per_s"] for r in sizes.values()),
         "char_outer_media_mb_s": res["zones"][0]["media_rate_mb_s"],
         "char_seek_near_cyl": seeks[0]["distance_cylinders"], "char_seek_far_cyl": seeks[-1]["distance_cylinders"],
         "char_read_near_ms": seeks[0]["read_service_ms"], "char_read_far_ms": seeks[-1]["read_service_ms"],
         "char_seek_near_ms": seeks[0]["read_seek_ms"], "char_seek_far_ms": seeks[-1]["read_seek_ms"],
         "char_revolution_ms": res["revolution_ms"]}
    m["char_dd_peak_pct_of_media"] = 100 * m["char_dd_peak_mb_s"] / m["char_outer_media_mb_s"]
    for kb, r in sizes.items():
        m[f"char_seq_{kb}kb_ms"] = r["sequential_read"]["service_ms"]
        m[f"char_dd_{kb}kb_mb_s"] = r["dd_read"]["mb_per_s"]
    return m


def _turns(df, m: dict, key: str) -> None:
    """How rr shared the disk: the clients' turns (runs of consecutive dispatches of one client),
    MiB and ms per turn for each, and the time between turns that no data moved (the
    anticipation wait and the seek and rotation to the other file)."""
    df = df.sort_values("host_dispatched_ns")
    side = (df.client >= 1000).to_numpy()
    starts = [0] + [i for i in range(1, len(side)) if side[i] != side[i - 1]]
    ends = starts[1:] + [len(side)]
    done, first_done, xfer = df.done_ns.to_numpy(), df.host_dispatched_ns.to_numpy(), df.transfer_ns.to_numpy()
    blocks = df.blocks.to_numpy()
    for who, flag in (("a", False), ("b", True)):
        runs = [(a, b) for a, b in zip(starts, ends) if side[a] == flag][1:-1]  # whole turns only
        m[f"{key}_{who}_turns"] = float(len(runs))
        m[f"{key}_{who}_mib_per_turn"] = (sum(int(blocks[a:b].sum()) for a, b in runs) * 512 / 2**20 / len(runs)
                                          if runs else float("nan"))
        m[f"{key}_{who}_turn_ms"] = (sum(done[b - 1] - first_done[a] for a, b in runs) / 1e6 / len(runs)
                                     if runs else float("nan"))
    gaps = [done[a] - done[a - 1] - xfer[a] for a in starts[1:]]
    m[f"{key}_switch_ms"] = sum(gaps) / 1e6 / len(gaps) if gaps else float("nan")


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    disk = out / "sata250.toml"
    write_spec(disk, _core.disk_datasheet(json.dumps(DISK)))
    char = characterization(disk, log)
    duration_ms = 5_000 if quick else 60_000
    at_gib = _placement(seed)
    m: dict = {"first_file_gib": float(at_gib)}
    for case in PAPER:
        for sched, tun in SCHEDULERS.items():
            cfg = {"seed": seed, "disk": {"model": str(disk), "scheduler": "fcfs"},
                   "host": {"scheduler": sched, "set": tun, "queue_threshold": 1},
                   "workload": {"kind": "mix", "clients": _members(case, at_gib)},
                   "run": {"requests": 10_000_000, "duration_ms": duration_ms}}
            df = run(cfg, records=True).records()
            span_s = df.done_ns.max() / 1e9
            for who, sel in (("a", df.client < 1000), ("b", df.client >= 1000)):
                m[f"{case}_{sched}_{who}_mib_s"] = float((df.blocks[sel] * 512).sum() / 2**20 / span_s)
            m[f"{case}_{sched}_total"] = m[f"{case}_{sched}_a_mib_s"] + m[f"{case}_{sched}_b_mib_s"]
            if sched == "rr":
                _turns(df, m, f"{case}_{sched}")
            log(f"  {case}, {sched}: {m[f'{case}_{sched}_a_mib_s']:.1f} + {m[f'{case}_{sched}_b_mib_s']:.1f} MiB/s")
    # The sequential and the random reader under rr once more, with rr anticipating the random
    # reader too (gs_rr's seek-distance test off): what that test does to the random reader's share.
    cfg = {"seed": seed, "disk": {"model": str(disk), "scheduler": "fcfs"},
           "host": {"scheduler": "rr", "set": {**SCHEDULERS["rr"], "seek_dist_bytes": 1e12}, "queue_threshold": 1},
           "workload": {"kind": "mix", "clients": _members("seq_random", at_gib)},
           "run": {"requests": 10_000_000, "duration_ms": duration_ms}}
    df = run(cfg, records=True).records()
    span_s = df.done_ns.max() / 1e9
    for who, sel in (("a", df.client < 1000), ("b", df.client >= 1000)):
        m[f"seq_random_rr_noseek_{who}_mib_s"] = float((df.blocks[sel] * 512).sum() / 2**20 / span_s)
    # C-LOOK alternates the two readers: the time one pair of their 128 KB reads takes.
    m["seq_random_clook_pair_ms"] = 2 * 0.125 / max(m["seq_random_clook_total"] / 2, 1e-9) * 1000
    # The reader beside a writer under rr, measured again with the drive's write cache off:
    # what the write-back buffer does to the reader's share.
    nowc = out / "sata250_nowc.toml"
    write_spec(nowc, _core.disk_datasheet(json.dumps({**DISK, "name": "sata250-nowc", "write_cache": False})))
    cfg = {"seed": seed, "disk": {"model": str(nowc), "scheduler": "fcfs"},
           "host": {"scheduler": "rr", "set": SCHEDULERS["rr"], "queue_threshold": 1},
           "workload": {"kind": "mix", "clients": _members("reader_writer", at_gib)},
           "run": {"requests": 10_000_000, "duration_ms": duration_ms}}
    df = run(cfg, records=True).records()
    span_s = df.done_ns.max() / 1e9
    for who, sel in (("a", df.client < 1000), ("b", df.client >= 1000)):
        m[f"reader_writer_rr_nowc_{who}_mib_s"] = float((df.blocks[sel] * 512).sum() / 2**20 / span_s)
    m.update(characterization_metrics(char))
    curves = {"sizes": [{"request_kb": r["request_kb"], "sequential_read_ms": r["sequential_read"]["service_ms"],
                         "sequential_read_mb_s": r["sequential_read"]["mb_per_s"], "dd_read_mb_s": r["dd_read"]["mb_per_s"]}
                        for r in char["sizes"]],
              "seek": char["seek"], "method": {k: char["method"][k] for k in ("sequential", "dd_read", "seek")}}
    return m, {"json": {"duration_ms": duration_ms, "disk": DISK, "characterization": curves}}


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt_interval

    rows = []
    for case, label in CASES.items():
        for sched in SCHEDULERS:
            ours = [metrics[f"{case}_{sched}_{w}_mib_s"] for w in "ab"]
            rows.append([label, sched, " + ".join(fmt_interval(o["mean"], o["lo"], o["hi"]) for o in ours),
                         " + ".join(f"{x:g}" for x in PAPER[case][sched])])
    iv = lambda k: fmt_interval(metrics[k]["mean"], metrics[k]["lo"], metrics[k]["hi"])  # noqa: E731
    kbs = sorted(int(k.split("_")[2][:-2]) for k in metrics if k.startswith("char_seq_") and k.endswith("kb_ms"))
    sizes = [[f"{kb}", iv(f"char_seq_{kb}kb_ms"), iv(f"char_dd_{kb}kb_mb_s")] for kb in kbs]
    return [{"title": "Greedy clients, MiB/s (first + second client); one command at a time at the drive (ata(4), "
                      f"no NCQ), 128 KB requests, two files {FILE_GIB} GiB apart",
             "columns": ["case", "scheduler", "disksched", "paper (slides)"], "rows": rows},
            {"title": "Slides part 4, \"latency vs blocksize, streaming\" (250 GB SATA, peak 88 MB/s): sequential "
                      "reads from LBN 0, one outstanding (disksched characterize; the slides' curve is a figure "
                      "without numbers beyond the peak)",
             "columns": ["block KB", "latency ms", "dd read MB/s"], "rows": sizes}]


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
    figs = [("rizzo2009_throughput.png", "Throughput of each client per case, disksched (mean, 95% CI) beside the slides")]
    char = data.get("json", {}).get("characterization")
    if char:
        figs.append(characterization_plot(p, out, char))
    return figs


def characterization_plot(p, out: Path, char: dict) -> tuple[str, str]:
    """The slides' two characterization figures on the simulated disk."""
    fig, (a1, a2) = p.subplots(1, 2, figsize=(13, 4.5))
    kb = [r["request_kb"] for r in char["sizes"]]
    a1.plot(kb, [r["sequential_read_ms"] for r in char["sizes"]], "o-", color="tab:blue", label="latency (left axis)")
    a1.set_xscale("log", base=2)
    a1.set_xticks(kb, [str(k) for k in kb])
    a1.set_xlabel("block size (KB)")
    a1.set_ylabel("latency per request (ms)")
    a1.set_ylim(bottom=0)
    a1.grid(alpha=0.3)
    t = a1.twinx()
    t.plot(kb, [r["dd_read_mb_s"] for r in char["sizes"]], "s--", color="tab:orange", label="dd read MB/s (right axis)")
    t.axhline(SLIDES_PEAK_MB_S, color="grey", ls=":", label=f"slides: peak {SLIDES_PEAK_MB_S:g} MB/s")
    t.set_ylabel("throughput (MB/s)")
    t.set_ylim(0, SLIDES_PEAK_MB_S * 1.15)
    h1, l1 = a1.get_legend_handles_labels()
    h2, l2 = t.get_legend_handles_labels()
    a1.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
    a1.set_title("slides part 4: latency vs blocksize, streaming (250 GB SATA)", fontsize=10)
    s = [q for q in char["seek"] if q["read_service_ms"] is not None]
    d = [q["distance_cylinders"] for q in s]
    a2.plot(d, [q["read_service_ms"] for q in s], "s-", label="one-block read: service time")
    a2.plot(d, [q["read_seek_ms"] for q in s], "o-", label="its seek part (model seek curve)")
    a2.set_xscale("log")
    a2.set_xlabel("seek distance (cylinders)")
    a2.set_ylabel("delay (ms)")
    a2.set_ylim(bottom=0)
    a2.grid(alpha=0.3)
    a2.legend(fontsize=8)
    a2.set_title("slides part 4: delay vs seek distance (250 GB SATA)", fontsize=10)
    fig.suptitle("GEOM_SCHED slides (Rizzo & Checconi 2009), disk characterization, on the simulated 250 GB disk")
    fig.tight_layout()
    fig.savefig(out / "rizzo2009_characterize.png", dpi=100)
    p.close(fig)
    return ("rizzo2009_characterize.png", "The slides' disk characterization measured on the simulated disk "
            "(disksched characterize): streaming latency and throughput vs block size; delay vs seek distance")

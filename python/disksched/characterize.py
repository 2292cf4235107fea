"""`disksched characterize`: a drive's curves, as the GEOM_SCHED slides measure
them on real disks and DIXtrac extracts them: service time and throughput
against request size (random and sequential reads and writes, one request
outstanding, and a `dd`-like synchronous reader), service time against seek
distance, and the media rate of every zone.

The curves come from simulation runs of the existing workloads (`closed` with
one client, `sequential` with one stream, `dd` with depth 1, a generated trace
for seek distances); the zone table and the model's own seek curve are read
off the disk model through the binding (`_core.disk_characteristics`). Nothing
here computes disk timing itself."""

from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path
from typing import Callable, Optional

import json

from . import _core
from . import run as run_sim

SIZES_KB = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
# Requests per point. Random points: enough for a mean within a few percent
# (service times vary by about a revolution); sequential ones: enough to cross
# many tracks. The first WARMUP_REQUESTS of each run are left out (cold cache,
# heads at cylinder 0).
RANDOM_REQUESTS = 1000
SEQUENTIAL_REQUESTS = 600
WARMUP_REQUESTS = 50
# The dd reader reads this much from LBN 0, like `dd bs=SIZE count=DD_MB/SIZE`.
DD_MB = 32
# Seek curve: reads of one block at pairs of cylinders this far apart.
SEEK_PAIRS = 200
SEEK_POINTS = 16
# Per-zone check: a dd of this request size and volume at each zone's first LBN.
ZONE_DD_KB = 256
ZONE_DD_MB = 8
MAX_ZONE_RUNS = 64

CURVES = ("random_read", "random_write", "sequential_read", "sequential_write")


def _disk_ref(disk: str) -> str:
    """A path that exists is passed absolute (run configs resolve it from no base directory)."""
    p = Path(disk)
    return str(p.resolve()) if p.suffix and p.exists() else disk


def _run(disk: str, workload: dict, requests: int, warmup: int, records: bool = False):
    cfg = {"seed": 1, "disk": {"model": disk}, "host": {"queue_threshold": 1}, "workload": workload,
           "run": {"requests": requests, "warmup_requests": warmup}}
    return run_sim(cfg, records=records)


def _point(summary: dict) -> dict:
    d = summary["disk_response_ms"]
    return {"service_ms": d["mean"], "service_p90_ms": d["p90"], "mb_per_s": summary["mb_per_s"],
            "seek_ms": summary["mean_seek_ms"], "rotation_ms": summary["mean_rotation_ms"],
            "transfer_ms": summary["mean_transfer_ms"], "overhead_ms": summary["mean_overhead_ms"]}


def size_curves(disk: str, sizes_kb=SIZES_KB, log: Callable[[str], None] = lambda m: None) -> list[dict]:
    """One row per request size: each curve's service time and throughput, and the dd reader's MB/s."""
    rows = []
    for kb in sizes_kb:
        log(f"  {kb} KB")
        row: dict = {"request_kb": kb}
        for write in (False, True):
            w = {"kind": "closed", "clients": 1, "think_time_ms": 0, "size_kb": kb, "size_multiple_kb": 4,
                 "read_fraction": 0.0 if write else 1.0}
            row["random_write" if write else "random_read"] = _point(
                _run(disk, w, RANDOM_REQUESTS + WARMUP_REQUESTS, WARMUP_REQUESTS).summary)
            s = {"kind": "sequential", "streams": 1, "request_kb": kb, "write": write, "start_lbn": 0}
            row["sequential_write" if write else "sequential_read"] = _point(
                _run(disk, s, SEQUENTIAL_REQUESTS + WARMUP_REQUESTS, WARMUP_REQUESTS).summary)
        n = max(DD_MB * 1024 // kb, 16)
        dd = _run(disk, {"kind": "dd", "request_kb": kb, "depth": 1, "start_lbn": 0}, n, 0).summary
        row["dd_read"] = {"mb_per_s": dd["mb_per_s"], "requests": n, "mb": n * kb / 1024}
        rows.append(row)
    return rows


def seek_distances(reach: int, max_distance: int, points: int = SEEK_POINTS) -> list[int]:
    """Log-spaced cylinder distances from 1 to `reach` (the farthest two LBNs are apart), and the
    full stroke `max_distance` (cylinders beyond the last LBN hold none, so it is the model's only)."""
    ds = {max(1, round(math.exp(i * math.log(reach) / (points - 1)))) for i in range(points)} if reach >= 1 else set()
    return sorted(ds | ({1, reach} if reach >= 1 else set()) | ({max_distance} if max_distance >= 1 else set()))


def seek_curve(disk: str, facts: dict, distances: list[int]) -> list[dict]:
    """Per distance: the model's seek time, and the simulated one-block read at that distance
    (mean service time and its seek part), from a generated trace replayed with one outstanding.
    Each pair reads a random block of cylinder c then one of c + d (c random), so the second
    read seeks exactly d cylinders; only the second reads are measured, and only where neither
    read of the pair was a cache hit (`reads` counts them)."""
    rng = random.Random(1)
    lo, hi = facts["lbn_cylinders"]
    pairs: list[tuple[int, int, int]] = []  # (distance index, from cylinder, to cylinder)
    for i, d in enumerate(distances):
        if d > hi - lo:
            continue  # past the last LBN: no read can seek this far
        for _ in range(SEEK_PAIRS):
            c = rng.randrange(lo, hi - d + 1)
            a, b = (c, c + d) if rng.random() < 0.5 else (c + d, c)
            pairs.append((i, a, b))
    wanted = sorted({c for _, a, b in pairs for c in (a, b)})
    tracks = dict(zip(wanted, json.loads(_core.disk_characteristics(disk, [], wanted))["cylinder_tracks"]))

    def block_on(c: int) -> Optional[int]:
        """A random LBN on cylinder c: a random track holding LBNs, a random block of it."""
        held = [(f, n) for f, n in tracks[c] if n > 0]
        if not held:
            return None  # spare or unmapped cylinder
        f, n = held[rng.randrange(len(held))]
        return f + rng.randrange(n)

    picks = []  # (distance index, from cylinder, LBN, to cylinder, LBN)
    for i, a, b in pairs:
        la, lb = block_on(a), block_on(b)
        if la is not None and lb is not None:
            picks.append((i, a, la, b, lb))
    # An LBN within a cylinder's range may live elsewhere (a defect remapped to a spare): keep
    # only pairs whose blocks are on the cylinders meant.
    where = json.loads(_core.disk_characteristics(disk, [], [], [x for p in picks for x in (p[2], p[4])]))["lbn_cylinder"]
    lines, measured = [], []
    for k, (i, a, la, b, lb) in enumerate(picks):
        if where[2 * k] == a and where[2 * k + 1] == b:
            lines.append(f"0 0 {la} 1 1")
            lines.append(f"0 0 {lb} 1 1")
            measured.append(i)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "seek.trace"
        path.write_text("\n".join(lines) + "\n")
        w = {"kind": "trace", "path": str(path), "format": "disksim-ascii", "mode": "closed", "outstanding": 1}
        df = _run(disk, w, len(lines), 0, records=True).records().sort_values("seq")
    # A pair counts only if both reads went to the media: a cache hit leaves the heads where they
    # were, so the next read would seek from elsewhere (a hit has neither seek nor rotation).
    media = ((df.seek_ns + df.rotation_ns) > 0).to_numpy()
    first_ok, second_ok = media[0::2], media[1::2]
    second = df.iloc[1::2]
    out = []
    for i, d in enumerate(distances):
        sel = second[[m == i and a and b for m, a, b in zip(measured, first_ok, second_ok)]]
        svc = (sel.done_ns - sel.issued_ns) / 1e6
        out.append({"distance_cylinders": d, "model_seek_ms": facts["seek_ms"][i], "reads": len(sel),
                    "read_service_ms": float(svc.mean()) if len(sel) else None,
                    "read_seek_ms": float((sel.seek_ns / 1e6).mean()) if len(sel) else None})
    return out


def zone_rates(disk: str, facts: dict, log: Callable[[str], None] = lambda m: None) -> list[dict]:
    """The model's zones and media rates, each with a dd's throughput at its first LBN."""
    zones = facts["zones"]
    out = []
    n = max(ZONE_DD_MB * 1024 // ZONE_DD_KB, 4)
    for k, z in enumerate(zones):
        row = dict(z, zone=k)
        if len(zones) <= MAX_ZONE_RUNS:
            block_kb = facts["sector_bytes"] / 1024
            start = z["first_lbn"]
            blocks = n * ZONE_DD_KB / block_kb
            if start + blocks <= facts["capacity_blocks"]:
                dd = _run(disk, {"kind": "dd", "request_kb": ZONE_DD_KB, "depth": 1, "start_lbn": start}, n, 0).summary
                row["dd_mb_per_s"] = dd["mb_per_s"]
        out.append(row)
    return out


def characterize(disk: str, log: Callable[[str], None] = lambda m: None) -> dict:
    """All of a drive's curves as one JSON-ready dict."""
    disk = _disk_ref(disk)
    probe = json.loads(_core.disk_characteristics(disk))
    lo, hi = probe["lbn_cylinders"]
    distances = seek_distances(hi - lo, probe["max_seek_distance"])
    facts = json.loads(_core.disk_characteristics(disk, distances))
    log(f"characterizing {facts['name']}: request sizes")
    sizes = size_curves(disk, log=log)
    log("seek distances")
    seeks = seek_curve(disk, facts, distances)
    log("zones")
    zones = zone_rates(disk, facts, log)
    return {
        "disk": facts["name"],
        "rpm": facts["rpm"], "revolution_ms": facts["revolution_ms"], "capacity_blocks": facts["capacity_blocks"],
        "cylinders": facts["cylinders"], "surfaces": facts["surfaces"], "sector_bytes": facts["sector_bytes"],
        "head_switch_ms": facts["head_switch_ms"], "average_seek_ms": facts["average_seek_ms"],
        "method": {
            "random": f"closed, 1 client, no think time, uniform random aligned starts; {RANDOM_REQUESTS} requests "
                      f"after {WARMUP_REQUESTS}",
            "sequential": f"sequential, 1 stream from LBN 0, no think time; {SEQUENTIAL_REQUESTS} requests after "
                          f"{WARMUP_REQUESTS}",
            "dd_read": f"dd, depth 1, from LBN 0, {DD_MB} MB (at least 16 requests); MB/s = bytes / elapsed",
            "service_ms": "mean time from issue to the disk to completion (one outstanding: the service time)",
            "mb_per_s": "10^6 bytes per simulated second",
            "seek": f"{SEEK_PAIRS} pairs of one-block reads per distance, the second read measured",
            "zones": f"media rate = sectors per track x sector bytes x RPM / 60; dd {ZONE_DD_KB} KB x "
                     f"{ZONE_DD_MB} MB from the zone's first LBN",
        },
        "sizes": sizes,
        "seek": seeks,
        "zones": zones,
    }


# ---- output -------------------------------------------------------------------

_SHORT = {"random_read": "rand R", "random_write": "rand W", "sequential_read": "seq R", "sequential_write": "seq W"}


def tables(res: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, columns, rows) for the terminal, each under 80 columns."""
    sizes = res["sizes"]
    svc = [[f"{r['request_kb']}"] + [f"{r[c]['service_ms']:.2f}" for c in CURVES] for r in sizes]
    thr = [[f"{r['request_kb']}"] + [f"{r[c]['mb_per_s']:.1f}" for c in CURVES] + [f"{r['dd_read']['mb_per_s']:.1f}"]
           for r in sizes]
    seek = [[f"{s['distance_cylinders']:,}", f"{s['model_seek_ms']:.3f}",
             "-" if s["read_seek_ms"] is None else f"{s['read_seek_ms']:.3f}",
             "-" if s["read_service_ms"] is None else f"{s['read_service_ms']:.3f}", str(s["reads"])]
            for s in res["seek"]]
    zones = [[str(z["zone"]), f"{z['first_cylinder']}-{z['last_cylinder']}", f"{z['sectors_per_track']:g}",
              f"{z['first_lbn']:,}", f"{z['media_rate_mb_s']:.2f}",
              f"{z['dd_mb_per_s']:.2f}" if "dd_mb_per_s" in z else "-"] for z in res["zones"]]
    name = res["disk"]
    return [
        (f"{name}: service time, ms", ["KB"] + [_SHORT[c] for c in CURVES], svc),
        (f"{name}: throughput, MB/s", ["KB"] + [_SHORT[c] for c in CURVES] + ["dd R"], thr),
        (f"{name}: one-block reads vs seek distance, ms", ["cylinders", "model seek", "read seek", "read service", "reads"], seek),
        (f"{name}: zones, MB/s",
         ["zone", "cylinders", "spt", "first LBN", "MB/s", f"dd {ZONE_DD_KB}K"], zones),
    ]


def notes(res: dict) -> list[str]:
    """What the columns mean, one short line each."""
    return [
        "One request outstanding. rand: uniform random aligned starts; seq: from LBN 0; "
        f"dd R: a synchronous dd reader, {DD_MB} MB from LBN 0 (bytes / elapsed).",
        f"Seek: the model's curve; read seek / service: simulated one-block reads {SEEK_PAIRS} times per distance. "
        f"Average seek (random cylinder pairs) {res['average_seek_ms']:.3f} ms; revolution {res['revolution_ms']:.3f} ms.",
        f"Zones: media rate = sectors per track x {res['sector_bytes']} B x RPM / 60; "
        f"dd {ZONE_DD_KB}K: {ZONE_DD_MB} MB read from the zone's first LBN.",
    ]


def plots(out: Path, res: dict) -> list[Path]:
    """Four PNGs under `out`; returns their paths."""
    from .output import atomic_write
    from .plots import _plt

    plt = _plt()
    name, sizes = res["disk"], res["sizes"]
    kb = [r["request_kb"] for r in sizes]
    label = {"random_read": "random read", "random_write": "random write",
             "sequential_read": "sequential read", "sequential_write": "sequential write"}
    written = []

    def save(fig, fname: str) -> None:
        path = out / fname
        fig.tight_layout()
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
        plt.close(fig)
        written.append(path)

    def size_plot(key: str, ylabel: str, what: str):
        """The four curves' `key` against request size, on a log-2 size axis."""
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for c in CURVES:
            ax.plot(kb, [r[c][key] for r in sizes], marker="o", label=label[c])
        ax.set_xscale("log", base=2)
        ax.set_xticks(kb, [str(k) for k in kb])
        ax.set_xlabel("request size (KB)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {what} vs request size, 1 outstanding")
        ax.grid(alpha=0.3)
        return fig, ax

    def finish(ax) -> None:
        """The y axis from 0 to above every line drawn (set last: limits set earlier would leave a later
        line off the scale with its legend entry still shown), and the legend."""
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)

    fig, ax = size_plot("service_ms", "mean service time (ms)", "service time")
    finish(ax)
    save(fig, "characterize_service_time.png")

    fig, ax = size_plot("mb_per_s", "throughput (MB/s)", "throughput")
    ax.plot(kb, [r["dd_read"]["mb_per_s"] for r in sizes], marker="s", ls="--", label="dd read (synchronous)")
    if res["zones"]:
        ax.axhline(res["zones"][0]["media_rate_mb_s"], color="grey", ls=":", label="outer-zone media rate")
    finish(ax)
    save(fig, "characterize_throughput.png")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    s = res["seek"]
    d = [p["distance_cylinders"] for p in s]
    ax.plot(d, [p["model_seek_ms"] for p in s], marker="o", label="model seek curve")
    ax.plot(d, [p["read_seek_ms"] for p in s], marker="x", ls="", label="simulated read: seek part")
    ax.plot(d, [p["read_service_ms"] for p in s], marker="s", label="simulated read: service time")
    ax.set_xscale("log")
    ax.set_xlabel("seek distance (cylinders)")
    ax.set_ylabel("time (ms)")
    ax.set_title(f"{name}: one-block reads vs seek distance")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "characterize_seek.png")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    z = res["zones"]
    ax.step([q["first_cylinder"] for q in z] + [z[-1]["last_cylinder"] + 1] if z else [],
            [q["media_rate_mb_s"] for q in z] + [z[-1]["media_rate_mb_s"]] if z else [], where="post",
            label="media rate (model)")
    dd = [q for q in z if "dd_mb_per_s" in q]
    if dd:
        ax.plot([q["first_cylinder"] for q in dd], [q["dd_mb_per_s"] for q in dd], marker="o", ls="",
                label=f"dd {ZONE_DD_KB} KB at the zone's first LBN")
    ax.set_xlabel("cylinder")
    ax.set_ylabel("rate (MB/s)")
    ax.set_title(f"{name}: media rate per zone")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "characterize_zones.png")
    return written

"""Round trips: an extracted model against the true drive it was extracted
from (the `sim:` truth). This module reads the truth; the extractor
(`disksched.extract`) never does. Used by tests/test_extract.py and
docs/extract.md."""

from __future__ import annotations

import bisect
import json
import math
import random
import time
from pathlib import Path
from typing import Optional

import numpy as np

from . import _core


def _truth_spec(disk: str) -> dict:
    import tomllib

    return tomllib.loads(_core.disk_show(disk)[0])


def _true_tracks(disk: str) -> np.ndarray:
    """First LBN of every true track, sorted."""
    facts = json.loads(_core.disk_characteristics(disk, [1], [], []))
    ncyl = facts["cylinders"]
    firsts = []
    step = 2000
    for c0 in range(0, ncyl, step):
        r = json.loads(_core.disk_characteristics(disk, [1], list(range(c0, min(c0 + step, ncyl))), []))
        for cyl in r["cylinder_tracks"]:
            for first, n in cyl:
                if n > 0:
                    firsts.append(first)
    return np.unique(np.array(firsts, dtype=np.int64))


def layout_match(disk: str, tracks: list, blocks: int) -> float:
    """Fraction of LBNs on the true track: each extracted track is matched to
    the true track it overlaps most; an LBN counts if its true track is that one."""
    tf = _true_tracks(disk)
    ef = np.array([t.first for t in tracks] + [blocks], dtype=np.int64)
    tb = np.append(tf, blocks)
    good = 0
    for i in range(len(ef) - 1):
        a, b = ef[i], ef[i + 1]
        # true tracks overlapping [a, b)
        j0 = int(np.searchsorted(tb, a, side="right") - 1)
        j1 = int(np.searchsorted(tb, b, side="left"))
        best = 0
        for j in range(max(j0, 0), min(j1, len(tb) - 1)):
            ov = min(b, tb[j + 1]) - max(a, tb[j])
            best = max(best, ov)
        good += best
    return good / blocks


def angle_match(true_disk: str, spec_path: str, samples: int = 3000, seed: int = 5) -> dict:
    """Fraction of sampled LBNs whose sector passes the head within one sector
    of the true one: each LBN read (a miss, far from the last) on the truth and
    on the model, the completion phase under each drive's own period, one
    constant offset (the unobservable index) removed."""
    from .simulation import Simulation

    rng = random.Random(seed)
    out = []
    specs = [_truth_spec(true_disk), _spec_dict(spec_path)]
    periods = [60e9 / s["rpm"] for s in specs]
    blocks = specs[0]["blocks"]
    # ascending order: short seeks on both; a random order adds the truth's seek-dependent completion
    # delays (disconnect, reselect, minimum seek delay), which are timing, not the layout's angles.
    # No two samples within two of the truth's longest tracks of each other: each must be a miss, and a
    # sample next to the last one is a hit on one drive and a miss a turn later on the other where their
    # caches differ (the angles are not at issue): in ascending order, a few blocks past the last, where
    # the truth's read-ahead had reached it when the request came and the model's, whose completion comes
    # sooner after its sector (the reconnection and data preparation the extractor cannot split off sit in
    # its read overhead), had not (HP C2247A: 4 of its 5 samples off by more than a sector, gaps of 3-4
    # blocks; HP C2249A: 2 of 3, gaps of 2); in descending order, blocks the truth read on the track before
    # the last sample's sector (IBM 18ES: 23 of 2,000, 35-195 blocks below the last)
    zones = json.loads(_core.disk_characteristics(true_disk, [1], [], []))["zones"]
    gap = 2 * max([int(z["sectors_per_track"]) for z in zones] or [1])
    taken: list = []
    while len(taken) < samples:
        x = rng.randrange(blocks)
        k = bisect.bisect_left(taken, x)
        if (k == 0 or x - taken[k - 1] >= gap) and (k == len(taken) or taken[k] - x >= gap) \
                or len(taken) * gap * 2 > blocks:     # (a disk too small for that: take it)
            taken.insert(k, x)
    lbns = taken
    for disk, T in zip((true_disk, spec_path), periods):
        sim = Simulation({"disk": {"model": disk}, "host": {"scheduler": "fcfs", "queue_threshold": 1},
                          "workload": {"kind": "dd", "request_kb": 4}, "run": {"requests": 1}}, workload=False)
        ph, resp = [], []
        for x in lbns:
            t0 = sim.now_ns
            sim.submit(x, 1)
            while True:
                sim.step()
                d = sim.completions()
                if d:
                    break
            ph.append((d[-1]["done_ns"] / T) % 1.0)
            resp.append(d[-1]["done_ns"] - t0)
        out.append((np.array(ph), np.array(resp)))
    (p0, r0), (p1, r1) = out
    # sectors per track of each sample's track on the truth (for the one-sector tolerance; a track table's
    # differ by surface, where its zones' are means)
    facts = json.loads(_core.disk_characteristics(true_disk, [1], [], lbns))
    spt = np.array([n or 0 for n in facts["lbn_sectors_per_track"]], dtype=float)
    d = (p1 - p0) % 1.0
    # the common offset: the mode of the differences (a circular mean is pulled by a zone that is off)
    h, edges = np.histogram(d, bins=400, range=(0, 1))
    k = int(np.argmax(h))
    c = edges[k] + 0.00125
    near = d[np.abs(((d - c) + 0.5) % 1.0 - 0.5) < 0.005]
    off = float(np.angle(np.mean(np.exp(2j * np.pi * near))) / (2 * np.pi)) % 1.0
    err = ((d - off + 0.5) % 1.0) - 0.5      # revolutions
    err_sectors = np.abs(err) * spt
    keep = (r0 > 0) & (r1 > 0)
    return {"within_one_sector": float(np.mean(err_sectors[keep] <= 1.0 + 1e-6)), "median_error_sectors": float(np.median(err_sectors[keep])),
            "samples": int(keep.sum())}


def _spec_dict(path: str) -> dict:
    import tomllib

    return tomllib.loads(Path(path).read_text())


# The fixed costs of a read miss besides its seek: the command overhead before it, the reconnection and data
# preparation before the data and the completion after. A read's timing shows only their sum with the seek (the
# extractor folds what it cannot split off into its seek curve), so that sum is what the seek errors compare.
READ_MISS_FIXED = ("read_overhead_after_read_ms", "first_reselect_overhead_ms", "data_preparation_overhead_ms",
                   "read_completion_overhead_ms")


def _first_lbns(disk: str, cylinders: list) -> dict:
    """First LBN of each cylinder that holds any (cylinder -> LBN)."""
    r = json.loads(_core.disk_characteristics(disk, [1], cylinders, []))
    out = {}
    for c, cyl in zip(cylinders, r["cylinder_tracks"]):
        firsts = [first for first, n in cyl if n > 0]
        if firsts:
            out[c] = min(firsts)
    return out


def seek_errors(true_disk: str, spec_path: str, pairs: int = 8, seed: int = 11) -> dict:
    """The model's seek against the truth's at every distance the truth tabulates (8 for a formula curve), as
    a read miss between two blocks pays it: for `pairs` pairs of the truth's cylinders that distance apart, the
    first blocks of the two, their cylinders on the model, and the model's seek over its own distance between
    them (its cylinders may be numbered otherwise: spare cylinders, surfaces it could not count); each side's
    seek with its `READ_MISS_FIXED` costs added. Per distance the median of the pairs' model times against the
    truth's time, relative."""
    ts, es = _truth_spec(true_disk), _spec_dict(spec_path)
    table = ts["seek"].get("table")
    dists = [int(d) for d, _ in table] if table else [1, 2, 5, 10, 50, 100, 500, 1000]
    ncyl = int(ts["cylinders"])
    dists = [d for d in dists if 1 <= d <= ncyl - 1]
    rng = random.Random(seed)
    # candidates three times over: a cylinder of spares holds no block
    want = {d: sorted({(c, c + d) for c in (rng.randrange(ncyl - d) for _ in range(3 * pairs))}) for d in dists}
    first = _first_lbns(true_disk, sorted({c for ps in want.values() for p in ps for c in p}))
    want = {d: [p for p in ps if p[0] in first and p[1] in first][:pairs] for d, ps in want.items()}
    dists = [d for d in dists if want[d]]
    lbns = sorted(set(first.values()))
    model_cyl = dict(zip(lbns, json.loads(_core.disk_characteristics(spec_path, [1], [], lbns))["lbn_cylinder"]))
    model_d = {d: [abs(model_cyl[first[a]] - model_cyl[first[b]]) for a, b in want[d]] for d in dists}
    md = sorted({x for v in model_d.values() for x in v} | {1})
    f_t = sum(ts["controller"].get(k, 0.0) for k in READ_MISS_FIXED)
    f_e = sum(es["controller"].get(k, 0.0) for k in READ_MISS_FIXED)
    t = dict(zip(dists, json.loads(_core.disk_characteristics(true_disk, dists, [], []))["seek_ms"]))
    e = dict(zip(md, json.loads(_core.disk_characteristics(spec_path, md, [], []))["seek_ms"]))
    rows = []
    for d in dists:
        tt = t[d] + f_t
        ee = float(np.median([e[x] if x else 0.0 for x in model_d[d]])) + f_e
        rows.append((d, tt, ee, abs(ee - tt) / tt))
    rel = np.array([r[3] for r in rows])
    hs_t = ts["seek"].get("head_switch_ms", 0.0) + f_t
    hs_e = es["seek"].get("head_switch_ms", 0.0) + f_e
    return {"distances": len(dists), "max_rel": float(rel.max()), "median_rel": float(np.median(rel)),
            "within_5pct": float(np.mean(rel <= 0.05)), "head_switch_true_ms": hs_t, "head_switch_model_ms": hs_e,
            "cylinders_true": ncyl, "cylinders_model": int(es["cylinders"]),
            "rows": [[d, round(tt, 4), round(ee, 4)] for d, tt, ee, _ in rows]}


# Added to a read hit's overhead as a host times it (DiskSim's data preparation before the data phase and the
# completion overhead after it): a hit has no positioning, so its response is their sum and no timing splits it.
READ_HIT_FIXED = ("data_preparation_overhead_ms", "read_completion_overhead_ms")


def same_track_read_ms(disk: str, spec: dict) -> float:
    """The same-track cost a read miss on the heads' own track pays: the spec's `seek.same_track_read_ms`, or
    the simulator's rule when absent (2 t(1) - t(2), at most the head switch and t(1))."""
    v = spec["seek"].get("same_track_read_ms")
    if v is not None:
        return float(v)
    t1, t2 = json.loads(_core.disk_characteristics(disk, [1, 2], [], []))["seek_ms"]
    return max(min(2 * t1 - t2, spec["seek"].get("head_switch_ms", 0.0), t1), 0.0)


def overhead_errors(true_disk: str, spec_path: str) -> dict:
    """|model - truth| in us of each overhead the extractor measures, as a host times it: the read-hit overhead
    with `READ_HIT_FIXED` added on both sides; a read miss's overhead (after a read, after a write) with the rest
    of `READ_MISS_FIXED` and the same-track cost (`same_track_read_ms`) added on both sides, the time a read to
    the track the heads are on takes before its rotational wait and besides its transfer (no timing splits the
    command overhead from the settling it waits for, nor from the reconnection and completion around the data);
    the bus time and the write-through write overheads (after a write, after a read) as the fields say, and the
    write after a write as a host times it (`write_after_write_timed_ms`)."""
    ts, es = _truth_spec(true_disk), _spec_dict(spec_path)
    st_t, st_e = same_track_read_ms(true_disk, ts), same_track_read_ms(spec_path, es)

    def seen(s: dict, same_track_ms: float, k: str) -> float:
        c = s["controller"]
        if k.startswith("read_hit_"):
            return c.get(k, 0.0) + sum(c.get(f, 0.0) for f in READ_HIT_FIXED)
        if k.startswith("read_overhead_"):
            return c.get(k, 0.0) + sum(c.get(f, 0.0) for f in READ_MISS_FIXED[1:]) + same_track_ms
        return c.get(k, 0.0)

    out = {k: abs(seen(es, st_e, k) - seen(ts, st_t, k)) * 1000 for k in
           ("read_hit_overhead_after_read_ms", "bus_sector_ms", "read_overhead_after_read_ms", "read_overhead_after_write_ms",
            "write_overhead_after_write_ms", "write_overhead_after_read_ms")}
    out["write_after_write_timed_ms"] = abs(write_after_write_timed_ms(es) - write_after_write_timed_ms(ts)) * 1000
    return {k.replace("_ms", "_err_us"): v for k, v in out.items()}


def write_after_write_timed_ms(spec: dict) -> float:
    """What a write-through 1-block write after a write that it continues takes besides its rotational wait and
    its sector, as a host times it (the path on which the drive charges `write_overhead_after_write_ms`: on the
    HP drives with `Extra write disconnect` a write after a write that does not continue it takes another):
    the overhead, the positioning on the heads' own track (at least the minimum seek delay, and no sooner than
    its first block is in: data preparation and one block's bus time), then after its sector the reselect and
    the write completion overhead. No timing splits the overhead from the rest: every sector is seen through
    a completion, so a write's costs after its sector only as their difference from a read's."""
    c = spec["controller"]
    bus_ms = c.get("bus_write_sector_ms") or c.get("bus_sector_ms", 0.0)
    return (c.get("write_overhead_after_write_ms", 0.0)
            + max(c.get("minimum_seek_delay_ms", 0.0), c.get("data_preparation_overhead_ms", 0.0) + bus_ms)
            + c.get("first_reselect_overhead_ms", 0.0) + c.get("write_completion_overhead_ms", 0.0))


def policies(true_disk: str, spec_path: str) -> dict:
    ts, es = _truth_spec(true_disk)["controller"], _spec_dict(spec_path)["controller"]
    t_ra = ts.get("caching_enabled", False) and (ts.get("read_ahead_max_blocks", 0) > 0 or ts.get("continuous_read", 0) > 0)
    e_ra = es.get("caching_enabled", False) and es.get("continuous_read", 0) > 0
    t_when = ts.get("read_ahead_when", "every-read") if t_ra else "none"
    e_when = es.get("read_ahead_when", "every-read") if e_ra else "none"
    t_wb = ts.get("fast_write_level", 0) > 0
    e_wb = es.get("fast_write_level", 0) > 0
    return {"read_ahead_true": t_when, "read_ahead_model": e_when, "read_ahead_ok": t_when == e_when,
            "write_back_true": t_wb, "write_back_model": e_wb, "write_back_ok": t_wb == e_wb,
            "segments_true": ts.get("cache_segments", 0), "segments_model": es.get("cache_segments", 0),
            "idle_hit_true": bool(t_ra and ts.get("read_ahead_on_idle_hit", False)),
            "idle_hit_model": bool(e_ra and es.get("read_ahead_on_idle_hit", False))}


def demerit(true_disk: str, spec_path: str, requests: int = 3000, seed: int = 3) -> dict:
    """Random and sequential reads on the truth and on the model: DiskSim's
    demerit (RMS distance between the response-time distributions, ms) and the
    mean throughput's relative difference."""
    import disksched

    loads = {"random": {"kind": "closed", "clients": 1, "size_kb": 4, "read_fraction": 1.0},
             "sequential": {"kind": "sequential", "request_kb": 64, "streams": 1}}
    out = {}
    for name, w in loads.items():
        rs = []
        for disk in (true_disk, spec_path):
            r = disksched.run({"disk": {"model": disk}, "workload": w,
                               "run": {"requests": requests, "records": True}}, seed=seed)
            rec = r.records()
            rec = rec[~rec["warmup"]]
            rs.append(((rec["done_ns"] - rec["arrival_ns"]).to_numpy() / 1e6, r.summary["mb_per_s"]))
        q = np.linspace(0.005, 0.995, 100)
        a, b = np.quantile(rs[0][0], q), np.quantile(rs[1][0], q)
        out[name] = {"demerit_ms": float(np.sqrt(np.mean((a - b) ** 2))),
                     "throughput_rel": float(abs(rs[1][1] - rs[0][1]) / rs[0][1]),
                     "mean_true_ms": float(rs[0][0].mean()), "mean_model_ms": float(rs[1][0].mean())}
    return out

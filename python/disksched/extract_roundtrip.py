"""Round trips: an extracted model against the true drive it was extracted
from (the `sim:` truth). This module reads the truth; the extractor
(`disksched.extract`) never does. Used by tests/test_extract.py and
docs/extract.md."""

from __future__ import annotations

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
    # delays (disconnect, reselect, minimum seek delay), which are timing, not the layout's angles
    lbns = sorted(rng.randrange(blocks) for _ in range(samples))
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
    # sectors per track of each sample on the truth (for the one-sector tolerance)
    facts = json.loads(_core.disk_characteristics(true_disk, [1], [], lbns))
    zones = facts["zones"]
    cyl = np.array([c if c is not None else 0 for c in facts["lbn_cylinder"]])
    spt = np.zeros(len(lbns))
    for z in zones:
        m = (cyl >= z["first_cylinder"]) & (cyl <= z["last_cylinder"])
        spt[m] = z["sectors_per_track"]
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


def seek_errors(true_disk: str, spec_path: str) -> dict:
    """The model's seek (its curve + its read overhead, which the extractor folds
    into it) against the truth's at every distance the truth tabulates."""
    ts = _truth_spec(true_disk)
    table = ts["seek"].get("table")
    dists = [int(d) for d, _ in table] if table else [1, 2, 5, 10, 50, 100, 500, 1000]
    es = _spec_dict(spec_path)
    maxd = int(es["cylinders"]) - 1
    dists = [d for d in dists if 1 <= d <= maxd]
    t = json.loads(_core.disk_characteristics(true_disk, dists, [], []))["seek_ms"]
    e = json.loads(_core.disk_characteristics(spec_path, dists, [], []))["seek_ms"]
    o_t = ts["controller"].get("read_overhead_after_read_ms", 0.0)
    o_e = es["controller"].get("read_overhead_after_read_ms", 0.0)
    rel = np.array([abs((ee + o_e) - (tt + o_t)) / (tt + o_t) for tt, ee in zip(t, e)])
    hs_t = ts["seek"].get("head_switch_ms", 0.0) + o_t
    hs_e = es["seek"].get("head_switch_ms", 0.0) + o_e
    return {"distances": len(dists), "max_rel": float(rel.max()), "median_rel": float(np.median(rel)),
            "within_5pct": float(np.mean(rel <= 0.05)), "head_switch_true_ms": hs_t, "head_switch_model_ms": hs_e}


# Added to a read hit's overhead as a host times it (DiskSim's data preparation before the data phase and the
# completion overhead after it): a hit has no positioning, so its response is their sum and no timing splits it.
# (A miss's overheads are compared as the fields say: what of them the extractor cannot split off goes into its
# seek curve, so their sum with positioning is what it gets right.)
READ_HIT_FIXED = ("data_preparation_overhead_ms", "read_completion_overhead_ms")


def overhead_errors(true_disk: str, spec_path: str) -> dict:
    """|model - truth| in us of each overhead the extractor measures: the read-hit overhead as a host sees it
    (with `READ_HIT_FIXED` added on both sides), the others as the fields say."""
    ts, es = _truth_spec(true_disk)["controller"], _spec_dict(spec_path)["controller"]

    def seen(c: dict, k: str) -> float:
        return c.get(k, 0.0) + (sum(c.get(f, 0.0) for f in READ_HIT_FIXED) if k.startswith("read_hit_") else 0.0)

    out = {k: abs(seen(es, k) - seen(ts, k)) * 1000 for k in
           ("read_hit_overhead_after_read_ms", "bus_sector_ms", "read_overhead_after_read_ms", "read_overhead_after_write_ms",
            "write_overhead_after_write_ms")}
    return {k.replace("_ms", "_err_us"): v for k, v in out.items()}


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

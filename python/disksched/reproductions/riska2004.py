"""Riska & Riedel, "It's not fair - evaluating efficient disk scheduling" (MASCOTS 2003 /
2004): queue more at the disk, schedule unfairly. Cheetah 9LP (the paper's drive).

Set-up choices where the paper gives no number (also in the claims file's `setup`):
- Figs. 3-8, 12, 13: a closed population (16 per disk): the paper varies the threshold "for a given system load",
  the number outstanding. Random 4 KB requests, 2:1 reads (the paper gives neither size nor mix).
- Fig. 4: one FCFS controller queue in front of the four disks (the paper's Figs. 1-2 and Section 6), the threshold
  per disk. With a fixed 64 outstanding no controller can gain more than 4 x X_SPTF(16) / X_FCFS(1) (one disk's
  throughputs); the run computes that bound and shows it beside the paper's "more than 7x".
- Figs. 9-11: the HP ajw.1week trace (CELLO'96 is not available), disk 0 only (the paper simulates one disk),
  its source disk's address space (the trace header's HP 335H geometry) stretched onto the Cheetah 9LP, a window
  from a seeded starting point, at the trace's own arrival times sped up until the time-averaged load at threshold
  1 is the paper's "25 outstanding" (a calibration on the paper's stated load, on the unablated set-up).
- Figs. 14-15: Poisson arrivals; bursts of 8 and 5 minutes (the paper); bursts hold half the requests (the paper);
  collapse = a burst's mean response at the minute mark (the paper's words); base rate half FCFS's capacity (a
  choice); burst rate calibrated so that threshold 4 sustains one burst (`overload_rates`)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from ..data import trace_path
from .common import line_panel, plt, run, run_unablated

NAME = "riska2004"
DISK = "cheetah9lp"
THRESHOLDS = [1, 2, 4, 8, 16]
TRACE_THRESHOLDS = [1, 2, 4, 8, 16, 32]
TRACE_OUTSTANDING = 25  # the paper: "the average load in the system is 25 outstanding requests"; the replay keeps
# the trace's own arrival times, sped up until that is the time-averaged load at threshold 1
TRACE = "ajw.1week"  # HP Labs' workstation trace, shipped in the package (disksched.data)
TRACE_DEVICE = 0  # the trace's disk 0 (95% of its requests; disk 1 is a swap disk): the paper simulates one disk


def _closed(host: str, drive: str, threshold: int, clients: int, n: int, seed: int, think_ms: float = 0.0) -> dict:
    """One disk: the driver's queue (`host`) holds what the disk's threshold keeps back;
    random 4 KB requests, 2:1 reads, a fixed population (the paper's load)."""
    w = {"kind": "closed", "clients": clients, "think_time_ms": think_ms, "size_kb": 4, "read_fraction": 2 / 3}
    if think_ms:
        w["think_dist"] = "exponential"
    return {"seed": seed, "disk": {"model": DISK, "scheduler": drive},
            "host": {"scheduler": host, "queue_threshold": threshold}, "workload": w,
            "run": {"requests": n, "warmup_requests": n // 10}}


def _array(drive: str, per_disk: int, clients: int, n: int, seed: int, total: int = 0) -> dict:
    """Four disks behind one FCFS controller queue that lets at most `per_disk` out to each
    disk (the paper's Sections 3 and 6); the driver passes every request on. `total` > 0
    also caps the requests at all disks together (a serial reading, not the paper's)."""
    cfg = _closed("fcfs", drive, clients, clients, n, seed)
    cfg["disk"].update({"count": 4, "array": "concat"})
    cfg["controller"] = {"scheduler": "fcfs", "queue_threshold": total or per_disk * 4, "per_disk_threshold": per_disk}
    return cfg


def _trace(drive: str, host: str, threshold: int, n: int, skip: int, seed: int, speed: float) -> dict:
    """The HP trace's disk 0 replayed at its own arrival times sped up `speed` times, starting `skip` requests in
    (from the seed); its addresses stretched from the source disk (the trace header's HP 335H) onto the Cheetah 9LP."""
    w = {"kind": "trace", "path": str(trace_path(TRACE)), "device": TRACE_DEVICE, "map": "scale",
         "source_blocks": source_blocks(), "skip_requests": skip, "mode": "open", "speed": speed}
    return {"seed": seed, "disk": {"model": DISK, "scheduler": drive},
            "host": {"scheduler": host, "queue_threshold": threshold}, "workload": w, "run": {"requests": n}}


def seen(df) -> float:
    """Mean requests in the system found by an arriving request: those that arrived before it (in the trace's order
    when several arrive at the same instant, as a burst of writes does) and are not done."""
    arr = df.sort_values(["arrival_ns", "seq"]).arrival_ns.to_numpy()
    done = np.sort(df.done_ns.to_numpy())
    return float((np.arange(len(arr)) - np.searchsorted(done, arr, side="right")).mean())


def outstanding(df) -> float:
    """Time-averaged requests in the system (Little: the sum of response times over the span)."""
    span = df.done_ns.max() - df.arrival_ns.min()
    return float((df.done_ns - df.arrival_ns).sum() / span) if span > 0 else 0.0


@functools.lru_cache(maxsize=None)
def trace_speed(n: int, skip: int, seed: int, by: str = "time") -> float:
    """The speed-up at which the trace window's load at threshold 1 (where every scheduler at the disk is FCFS) is
    the paper's 25 outstanding: averaged over time (`by` = "time", the experiment's reading) or over what arriving
    requests find ("seen", shown beside it); geometric bisection to 1%, on the paper's set-up (never an ablated
    one: the workload stays the same when a mechanism is removed)."""
    average = outstanding if by == "time" else seen

    def load(speed: float) -> float:
        return average(run_unablated(_trace("fcfs", "fcfs", 1, n, skip, seed, speed), records=True).records())

    lo, hi = 1.0, 2.0
    if load(lo) >= TRACE_OUTSTANDING:
        return lo
    while load(hi) < TRACE_OUTSTANDING:
        lo, hi = hi, hi * 2
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if load(mid) < TRACE_OUTSTANDING else (lo, mid)
    return math.sqrt(lo * hi)


def source_blocks() -> int:
    """The trace's disk 0 in 512-byte blocks, from the trace header (nspt * ntpc * ncyl sectors of `sectorsize`
    bytes: the HP 335H the trace was taken on)."""
    import lzma
    import re

    with lzma.open(trace_path(TRACE)) as f:
        head = f.read(16384).decode("latin-1")
    # The `disks` block: "0 -> {" and "1 -> {" open each disk on a line of their own.
    disk0 = head[re.search(r"\n\s*0 -> \{\s*\n", head).end():re.search(r"\n\s*1 -> \{\s*\n", head).start()]
    geo = {k: int(re.search(rf"\b{k}\s*=\s*(\d+)", disk0).group(1)) for k in ("nspt", "ntpc", "ncyl", "sectorsize")}
    return geo["nspt"] * geo["ntpc"] * geo["ncyl"] * geo["sectorsize"] // 512


def trace_requests() -> int:
    """Requests of the trace's disk 0."""
    import json

    from .. import _core

    info = json.loads(_core.trace_info(str(trace_path(TRACE)), None, False))
    return next(d["requests"] for d in info["devices"] if d["device"] == TRACE_DEVICE)


def cylinders(lbns: np.ndarray) -> np.ndarray:
    """The Cheetah 9LP's cylinder of each LBN (from the disk model's layout)."""
    import json

    from .. import _core

    return np.array(json.loads(_core.disk_characteristics(DISK, [], [], [int(x) for x in lbns]))["lbn_cylinder"])


def capacity_blocks() -> int:
    import json

    from .. import _core

    return int(json.loads(_core.disk_characteristics(DISK))["capacity_blocks"])


def _times(df) -> tuple[np.ndarray, np.ndarray]:
    return ((df.done_ns - df.issued_ns) / 1e6).to_numpy(), ((df.done_ns - df.arrival_ns) / 1e6).to_numpy()


def faster_share(a: np.ndarray, b: np.ndarray) -> float:
    """Where the tails cross (Figs. 5/6): the highest quantile, in %, at which `a` (SPTF or SSTF) is still strictly
    faster than `b` (FCFS), on a 0.1% grid; 0 when it is faster nowhere."""
    qs = np.linspace(0.001, 0.999, 999)
    faster = np.quantile(a, qs) < np.quantile(b, qs)
    return 100 * float(qs[np.nonzero(faster)[0][-1]]) if faster.any() else 0.0


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    n = 4000 if quick else 40000
    m: dict = {}
    data: dict = {"tails": {}, "trace_tails": {}, "overload": {}}
    # Fig. 3: mean response vs threshold, FCFS / SSTF / SPTF at the disk, 16 outstanding.
    for sched in ("fcfs", "sstf", "sptf"):
        for t in THRESHOLDS:
            s = run(_closed("fcfs", sched, t, 16, n, seed)).summary
            m[f"fig3_{sched}_q{t}_ms"] = s["host_response_ms"]["mean"]
            m[f"one_{sched}_q{t}_iops"] = s["iops"]
    # Fig. 4: four disks, 64 outstanding.
    for sched in ("fcfs", "sptf"):
        for t in THRESHOLDS:
            s = run(_array(sched, t, 64, n, seed)).summary
            m[f"fig4_{sched}_q{t}_ms"] = s["host_response_ms"]["mean"]
            m[f"four_{sched}_q{t}_iops"] = s["iops"]
    # Where the array's gain comes from (closed: mean response = N / throughput): its
    # throughput in single-disk equivalents at thresholds 1 and 16.
    for t in (1, 16):
        m[f"four_busy_q{t}"] = m[f"four_sptf_q{t}_iops"] / m[f"one_sptf_q{t}_iops"]
    m["four_serial_q1_ms"] = run(_array("sptf", 1, 64, n, seed, total=1)).summary["host_response_ms"]["mean"]
    # With 64 always outstanding, mean response = 64 / throughput: no controller can make threshold 1 slower than
    # one disk serving alone in FCFS order, nor threshold 16 faster than four disks each running SPTF over 16.
    m["fig4_fixed_population_bound"] = 4 * m["one_sptf_q16_iops"] / m["one_fcfs_q1_iops"]
    # The load as an average: 28 clients per disk that think, tuned so that 16 per disk
    # are outstanding on average at threshold 1 (Z = (M - 16) / X(1)); see the notes.
    m28 = 28
    for key, disks, x1 in (("one", 1, m["one_sptf_q1_iops"]), ("four", 4, m["four_sptf_q1_iops"])):
        think = (disks * m28 - disks * 16) / x1 * 1000
        for t in (1, 16):
            cfg = (_closed("fcfs", "sptf", t, m28, n, seed, think) if disks == 1
                   else _array("sptf", t, 4 * m28, n, seed))
            if disks == 4:
                cfg["workload"].update({"think_time_ms": think, "think_dist": "exponential"})
            m[f"avg28_{key}_q{t}_ms"] = run(cfg).summary["host_response_ms"]["mean"]
        m[f"avg28_{key}_gain"] = m[f"avg28_{key}_q1_ms"] / m[f"avg28_{key}_q16_ms"]
    # Figs. 5-8: response-time tails at the disk and at the driver. Figs. 5 and 6 set FCFS, SSTF and SPTF side by
    # side at thresholds 8 and 16; Figs. 7 and 8 follow FCFS and SPTF over the thresholds.
    times: dict = {}
    for sched, ts in (("fcfs", (4, 8, 16)), ("sptf", (4, 8, 16)), ("sstf", (8, 16))):
        for t in ts:
            times[sched, t] = _times(run(_closed("fcfs", sched, t, 16, n, seed), records=True).records())
            for where, v in zip(("disk", "host"), times[sched, t]):
                m[f"tail_{sched}_q{t}_{where}_p99_ms"] = float(np.percentile(v, 99))
            if seed == 1:
                data["tails"][f"{sched} q{t}"] = {"disk": times[sched, t][0], "host": times[sched, t][1]}
    for t in (8, 16):
        for sched in ("sptf", "sstf"):
            m[f"fig56_{sched}_q{t}_faster_pct"] = faster_share(times[sched, t][0], times["fcfs", t][0])
        m[f"fig56_sptf_q{t}_p99_vs_fcfs"] = m[f"tail_sptf_q{t}_disk_p99_ms"] / m[f"tail_fcfs_q{t}_disk_p99_ms"]
    for t in (4, 8, 16):
        m[f"fig8_sptf_q{t}_host_p99_vs_fcfs"] = m[f"tail_sptf_q{t}_host_p99_ms"] / m[f"tail_fcfs_q{t}_host_p99_ms"]
    # Fig. 12 and 13: FCFS / SSTF / VSCAN at the driver, SPTF at the disk.
    for host in ("fcfs", "sstf", "vscan"):
        for t in THRESHOLDS:
            m[f"fig12_{host}_q{t}_ms"] = run(_closed(host, "sptf", t, 16, n, seed)).summary["host_response_ms"]["mean"]
    for t in (1, 4, 16):
        _, host_ms = _times(run(_closed("sstf", "sptf", t, 16, n, seed), records=True).records())
        m[f"fig13_q{t}_host_p99_ms"] = float(np.percentile(host_ms, 99))
        if seed == 1:
            data.setdefault("fig13", {})[f"q{t}"] = host_ms
    # Figs. 9-11: the HP trace's disk 0, a window of `tn` requests starting at a point drawn from the seed, replayed
    # at its own arrival times sped up to the paper's load (25 outstanding on average at threshold 1).
    total = trace_requests()
    tn = min(10_000 if quick else 30_000, total)
    skip = int(np.random.default_rng(seed).integers(0, total - tn + 1))
    m["trace_skip_requests"] = skip
    m["trace_speed"] = speed = trace_speed(tn, skip, seed)
    for sched in ("fcfs", "sptf"):
        for t in TRACE_THRESHOLDS:
            r = run(_trace(sched, "fcfs", t, tn, skip, seed, speed), records=True)
            m[f"fig10_{sched}_q{t}_ms"] = r.summary["host_response_ms"]["mean"]
            df = r.records()
            _, host_ms = _times(df)
            m[f"fig11_{sched}_q{t}_host_p99_ms"] = float(np.percentile(host_ms, 99))
            m[f"fig11_{sched}_q{t}_host_max_s"] = float(host_ms.max() / 1000)
            m[f"trace_{sched}_q{t}_iops"] = r.summary["iops"]
            m[f"trace_{sched}_q{t}_outstanding"] = outstanding(df)
            if seed == 1 and t in (1, 4, 32):
                data["trace_tails"][f"{sched} q{t}"] = host_ms
            if t in (1, 32):
                # Fig. 9: seek distance (cylinders, from the disk's layout) between consecutive requests in service
                # order, in classes of 500 tracks.
                cyl = cylinders(df.sort_values("started_ns").lbn.to_numpy())
                steps = np.abs(np.diff(cyl))
                m[f"trace_{sched}_q{t}_near500_pct"] = 100 * float((steps < 500).mean())
                if seed == 1:
                    data.setdefault("trace_seeks", {})[f"{sched.upper()}, threshold {t}"] = steps
            if sched == "fcfs" and t == 1:
                m["trace_near500_pct"] = m["trace_fcfs_q1_near500_pct"]
                m["trace_fcfs_q1_seen"] = seen(df)
                # The same requests where the trace put them (its 335 MB at the start of the disk, not stretched).
                own = cylinders(df.sort_values("started_ns").lbn.to_numpy() * source_blocks() // capacity_blocks())
                m["trace_own_place_near500_pct"] = 100 * float((np.abs(np.diff(own)) < 500).mean())
                cyl_all = cylinders(df.lbn.to_numpy())
                m["trace_cylinders_spanned"] = float(cyl_all.max() - cyl_all.min() + 1)
                m["trace_service_ms"] = 1000 / r.summary["iops"]
    m["fig11_sptf_vs_fcfs_q32_p99"] = m["fig11_sptf_q32_host_p99_ms"] / m["fig11_fcfs_q32_host_p99_ms"]
    # The other reading of "25 outstanding on average": what arriving requests find (shown in the notes).
    m["trace_seen25_speed"] = speed25 = trace_speed(tn, skip, seed, "seen")
    res = {}
    for sched, t in (("fcfs", 1), ("sptf", 32)):
        df = run(_trace(sched, "fcfs", t, tn, skip, seed, speed25), records=True).records()
        res[sched] = _times(df)[1]
    m["trace_seen25_gain"] = float(res["fcfs"].mean() / res["sptf"].mean())  # threshold 1: SPTF is FCFS there
    m["trace_seen25_p99_vs_fcfs"] = float(np.percentile(res["sptf"], 99) / np.percentile(res["fcfs"], 99))
    overload(m, data, seed, quick)
    log(f"  riska2004 seed {seed}: SPTF 1->16 {m['fig3_sptf_q1_ms'] / m['fig3_sptf_q16_ms']:.2f}x, "
        f"four disks {m['fig4_sptf_q1_ms'] / m['fig4_sptf_q16_ms']:.2f}x, burst {m['burst_rate_per_s']:.0f}/s")
    return m, data


# Figs. 14-15. The paper: two overloads, "about 8 minutes" and "less than 5 minutes" (5 taken), holding "about half"
# the requests; under FCFS "the average response time reaches the minute mark" (collapse); SPTF at threshold 1024
# sustains both, at threshold 4 only one. Its rates are not given.
BURSTS_S = (480, 300)
MINUTE_MARK_S = 60


def overload_rates(seed: int, quick: bool) -> dict:
    """The overload's schedule, sized on the paper's set-up (never on an ablated one: the workload stays the same
    when a mechanism is removed). Base rate: half of FCFS's capacity (a choice: the paper gives none). Burst rate:
    above the capacity of SPTF at threshold 4 (c4) by the fraction k at which, in the fluid model (a backlog
    growing at rate - c4 through a burst of length L, so its arrivals wait k * L / 2 on average), the minute mark
    lies midway between the two bursts' mean responses: k * (L1 + L2) / 4 = 60 s (calibrated: the paper says
    threshold 4 sustains one of the two). Base periods: bursts hold half the requests (the paper), the base time
    split evenly before, between and after them. Quick runs the whole timeline at 1/4 scale (and the minute mark
    with it)."""
    # Capacities: closed runs that keep the disk saturated (64 outstanding, 60,000 requests: long enough that the
    # start-up transient of a deeper population no longer shows), FCFS with all 64 at the disk, SPTF at threshold 4.
    cap = {key: run_unablated(_closed("fcfs", sched, t, 64, 60_000, seed)).summary["iops"]
           for key, sched, t in (("fcfs", "fcfs", 64), ("sptf_q4", "sptf", 4))}
    n = 4000 if quick else 40000
    cap["sptf_q1024"] = run_unablated(_closed("fcfs", "sptf", 1024, 1024, n, seed)).summary["iops"]  # shown only
    scale = 0.25 if quick else 1.0
    l1, l2 = (x * scale for x in BURSTS_S)
    mark = MINUTE_MARK_S * scale
    k = 4 * mark / (l1 + l2)
    burst = cap["sptf_q4"] * (1 + k)
    base = 0.5 * cap["fcfs"]
    base_s = burst * (l1 + l2) / base  # base arrivals = burst arrivals
    gap = base_s / 3
    b1, e1 = gap, gap + l1
    b2, e2 = e1 + gap, e1 + gap + l2
    end = e2 + gap
    ms = lambda x: 1000 * x  # noqa: E731
    return {"cap": cap, "scale": scale, "k": k, "burst": burst, "base": base, "mark_s": mark,
            "bursts_ms": [(ms(b1), ms(e1)), (ms(b2), ms(e2))], "end_ms": ms(end),
            "rates": [[0, base], [ms(b1), burst], [ms(e1), base], [ms(b2), burst], [ms(e2), base]]}


def overload(m: dict, data: dict, seed: int, quick: bool) -> None:
    o = overload_rates(seed, quick)
    for key, v in o["cap"].items():
        m[f"ceiling_{key}_per_s"] = v
    m["burst_rate_per_s"], m["base_rate_per_s"], m["burst_over_q4"] = o["burst"], o["base"], 1 + o["k"]
    data["overload_rates"], data["overload_end_ms"] = o["rates"], o["end_ms"]
    for key, sched, t in (("sptf_q4", "sptf", 4), ("sptf_q1024", "sptf", 1024), ("fcfs_q1024", "fcfs", 1024)):
        df = run({"seed": seed, "disk": {"model": DISK, "scheduler": sched},
                  "host": {"scheduler": "fcfs", "queue_threshold": t},
                  "workload": {"kind": "schedule", "rates": o["rates"], "size_kb": 4, "read_fraction": 2 / 3},
                  "run": {"requests": 10_000_000, "duration_ms": o["end_ms"]}}, records=True).records()
        arr, done = df.arrival_ns.to_numpy() / 1e6, df.done_ns.to_numpy() / 1e6
        resp = done - arr
        sustained = 0
        in_bursts = 0
        for i, (lo, hi) in enumerate(o["bursts_ms"], 1):
            sel = (arr >= lo) & (arr < hi)
            in_bursts += int(sel.sum())
            mean_s = float(resp[sel].mean()) / 1000
            m[f"ov_{key}_burst{i}_mean_ms"] = 1000 * mean_s
            # On the paper's time scale (quick runs at 1/4: its waits scaled back), in minutes.
            m[f"ov_{key}_burst{i}_mean_min"] = mean_s / o["scale"] / 60
            m[f"ov_{key}_burst{i}_backlog"] = int(((arr < hi) & (done > hi)).sum())
            ok = mean_s < o["mark_s"]  # the paper's collapse: the average response reaches the minute mark
            m[f"ov_{key}_burst{i}_sustained"] = float(ok)
            sustained += ok
        m[f"ov_{key}_sustained"] = sustained
        m[f"ov_{key}_max_s"] = float(resp.max() / 1000)
        if key == "sptf_q4":
            m["ov_burst_share_pct"] = 100 * in_bursts / len(arr)
        if seed == 1:
            keep = np.arange(0, len(arr), max(1, len(arr) // 40000))
            data["overload"][key] = (arr[keep], resp[keep])
            if key == "sptf_q4":
                data["overload_arrivals_ms"] = arr


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt_interval

    iv = lambda k: fmt_interval(metrics[k]["mean"], metrics[k]["lo"], metrics[k]["hi"]) if k in metrics else "-"  # noqa: E731
    out = [{"title": "Figs. 3, 4, 12: mean response (ms) vs the queuing threshold at the disk (closed, random 4 KB, "
                     "2:1 reads; 16 outstanding per disk)",
            "columns": ["set-up"] + [f"q{t}" for t in THRESHOLDS],
            "rows": [[f"Fig. 3: one disk, {s.upper()} at the disk"] + [iv(f"fig3_{s}_q{t}_ms") for t in THRESHOLDS]
                     for s in ("fcfs", "sstf", "sptf")]
                    + [[f"Fig. 4: four disks, FCFS controller, {s.upper()} at the disks"] +
                       [iv(f"fig4_{s}_q{t}_ms") for t in THRESHOLDS] for s in ("fcfs", "sptf")]
                    + [[f"Fig. 12: {h.upper()} at the driver, SPTF at the disk"] +
                       [iv(f"fig12_{h}_q{t}_ms") for t in THRESHOLDS] for h in ("fcfs", "sstf", "vscan")]}]
    out.append({"title": f"Figs. 9-11: the HP trace (ajw.1week, disk 0) at its arrival times sped up "
                         f"{means['trace_speed']:.0f}x: {TRACE_OUTSTANDING} outstanding on average at threshold 1",
                "columns": ["figure"] + [f"q{t}" for t in TRACE_THRESHOLDS],
                "rows": [[f"Fig. 10: mean response, {s.upper()} at the disk, ms"] +
                         [iv(f"fig10_{s}_q{t}_ms") for t in TRACE_THRESHOLDS] for s in ("fcfs", "sptf")]
                        + [[f"Fig. 11: driver p99, {s.upper()} at the disk, ms"] +
                           [iv(f"fig11_{s}_q{t}_host_p99_ms") for t in TRACE_THRESHOLDS] for s in ("fcfs", "sptf")]
                        + [[f"Fig. 9: seeks under 500 tracks, {s.upper()}, %"] +
                           [iv(f"trace_{s}_q{t}_near500_pct") if t in (1, 32) else "-" for t in TRACE_THRESHOLDS]
                           for s in ("fcfs", "sptf")]})
    out.append({"title": "Figs. 5-8, 13: response-time p99 (ms) at the disk and at the driver, 16 outstanding; "
                         "faster = the quantile (%) up to which the scheduler beats FCFS at the disk",
                "columns": ["set-up", "disk p99", "driver p99", "faster"],
                "rows": [[f"{s.upper()} at the disk, threshold {t}", iv(f"tail_{s}_q{t}_disk_p99_ms"),
                          iv(f"tail_{s}_q{t}_host_p99_ms"),
                          iv(f"fig56_{s}_q{t}_faster_pct") if s != "fcfs" and t in (8, 16) else "-"]
                         for s, ts in (("fcfs", (4, 8, 16)), ("sstf", (8, 16)), ("sptf", (4, 8, 16))) for t in ts]
                        + [[f"Fig. 13: SSTF driver, SPTF disk, threshold {t}", "-", iv(f"fig13_q{t}_host_p99_ms"), "-"]
                           for t in (1, 4, 16)]})
    keys = ("fcfs_q1024", "sptf_q4", "sptf_q1024")
    rows = [["capacity (closed: 64 outstanding; SPTF q1024: 1024), requests/s", iv("ceiling_fcfs_per_s"), iv("ceiling_sptf_q4_per_s"),
             iv("ceiling_sptf_q1024_per_s")]]
    for i in (1, 2):
        rows.append([f"burst {i}: mean response, ms"] + [iv(f"ov_{k}_burst{i}_mean_ms") for k in keys])
        rows.append([f"burst {i}: mean response, minutes (paper's time scale)"] + [iv(f"ov_{k}_burst{i}_mean_min") for k in keys])
        rows.append([f"burst {i}: backlog at its end, requests"] + [iv(f"ov_{k}_burst{i}_backlog") for k in keys])
    rows.append(["bursts sustained (of 2)"] + [iv(f"ov_{k}_sustained") for k in keys])
    out.append({"title": f"Figs. 14-15: overload; base {means['base_rate_per_s']:.0f} requests/s (half FCFS's capacity), "
                         f"bursts of 8 and 5 minutes at {means['burst_rate_per_s']:.0f} requests/s "
                         f"({means['burst_over_q4']:.3f} x SPTF's capacity at threshold 4), holding "
                         f"{means['ov_burst_share_pct']:.0f}% of the requests; sustained = the burst's mean response "
                         "under the minute mark",
                "columns": ["", "FCFS, threshold 1024", "SPTF, threshold 4", "SPTF, threshold 1024"], "rows": rows})
    return out


def plots(out: Path, metrics: dict, data: dict) -> list[tuple[str, str]]:
    p = plt()
    figs = []
    ms = lambda k: metrics[k]  # noqa: E731
    fig, axes = p.subplots(1, 3, figsize=(16, 4.2))
    line_panel(axes[0], THRESHOLDS, {s.upper(): [ms(f"fig3_{s}_q{t}_ms") for t in THRESHOLDS] for s in ("fcfs", "sstf", "sptf")},
               "queuing threshold at the disk", "mean response (ms)", "Fig. 3: one disk, 16 outstanding", logx=True)
    line_panel(axes[1], THRESHOLDS, {s.upper(): [ms(f"fig4_{s}_q{t}_ms") for t in THRESHOLDS] for s in ("fcfs", "sptf")},
               "queuing threshold at each disk", "mean response (ms)", "Fig. 4: four disks, 64 outstanding", logx=True)
    line_panel(axes[2], THRESHOLDS, {f"{h.upper()} driver": [ms(f"fig12_{h}_q{t}_ms") for t in THRESHOLDS]
                                     for h in ("fcfs", "sstf", "vscan")},
               "queuing threshold at the disk", "mean response (ms)", "Fig. 12: scheduler at the driver, SPTF at the disk",
               logx=True)
    fig.suptitle("Riska & Riedel: mean response vs queuing threshold (Cheetah 9LP; mean, 95% CI)")
    fig.tight_layout()
    fig.savefig(out / "riska2004_thresholds.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_thresholds.png", "Figs. 3, 4 and 12: mean response vs the queuing threshold"))

    def ccdf(ax, series: dict, xlabel: str, title: str, logx: bool | None = None) -> None:
        wide = False
        for label, v in series.items():
            v = np.sort(v)
            ax.semilogy(v, 1 - np.arange(len(v)) / len(v), label=label)
            wide |= v[-1] > 50 * max(np.median(v), 1e-9)
        if logx if logx is not None else wide:  # a tail far beyond the body: log time, or the body is one line
            ax.set_xscale("log")
            xlabel += ", log scale"
        ax.set_xlabel(xlabel)
        ax.set_ylabel("P(response > x)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)

    t = data["tails"]
    fig, axes = p.subplots(1, 2, figsize=(12, 4.2))
    for ax, q, n in ((axes[0], 8, 5), (axes[1], 16, 6)):
        ccdf(ax, {s.upper(): t[f"{s} q{q}"]["disk"] for s in ("fcfs", "sstf", "sptf")}, "response at the disk (ms)",
             f"Fig. {n}: threshold {q}; SPTF faster up to the {ms(f'fig56_sptf_q{q}_faster_pct')['mean']:.0f}th "
             f"percentile", logx=False)
        ax.axhline(0.01, color="grey", lw=0.8, ls=":")
    fig.suptitle("Riska & Riedel, Figs. 5-6: tails at the disk, 16 outstanding (seed 1): the crossover with FCFS")
    fig.tight_layout()
    fig.savefig(out / "riska2004_fig5_6.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_fig5_6.png", "Figs. 5-6: FCFS, SSTF and SPTF at the disk, thresholds 8 and 16"))

    fig, axes = p.subplots(2, 2, figsize=(12, 8))
    for col, s, n in ((0, "fcfs", 7), (1, "sptf", 8)):
        for row, where in ((0, "disk"), (1, "host")):
            ccdf(axes[row, col], {f"threshold {q}": t[f"{s} q{q}"][where] for q in (4, 8, 16)},
                 f"response at the {'disk' if where == 'disk' else 'driver'} (ms)",
                 f"Fig. {n} ({'upper' if row == 0 else 'lower'}): {s.upper()} at the disk, "
                 f"{'disk' if where == 'disk' else 'driver'}", logx=False)
    fig.suptitle("Riska & Riedel, Figs. 7-8: tails at the disk and at the driver, 16 outstanding (seed 1)")
    fig.tight_layout()
    fig.savefig(out / "riska2004_tails.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_tails.png", "Figs. 7-8: response-time tails at the disk and at the driver"))

    fig, axes = p.subplots(1, 4, figsize=(18, 4))
    seeks = data["trace_seeks"]
    width = 500 / (len(seeks) + 1)
    top = max(int(v.max()) for v in seeks.values())
    edges = np.arange(0, top + 500, 500)
    for i, (label, v) in enumerate(seeks.items()):
        counts, _ = np.histogram(v, edges)
        axes[0].bar(edges[:-1] + i * width, 100 * counts / len(v), width=width, align="edge", label=label)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("seek distance (tracks), classes of 500")
    axes[0].set_ylabel("% of requests")
    axes[0].set_title(f"Fig. 9: {ms('trace_near500_pct')['mean']:.0f}% under 500 tracks, FCFS (paper: ~90%)", fontsize=10)
    axes[0].legend(fontsize=8)
    line_panel(axes[1], TRACE_THRESHOLDS, {s.upper(): [ms(f"fig10_{s}_q{t}_ms") for t in TRACE_THRESHOLDS]
                                           for s in ("fcfs", "sptf")},
               "queuing threshold at the disk", "mean response (ms)",
               f"Fig. 10: the HP trace, {TRACE_OUTSTANDING} outstanding on average", logx=True)
    tt = data["trace_tails"]
    ccdf(axes[2], {k: v for k, v in tt.items() if k.startswith("fcfs")}, "response at the driver (ms)", "Fig. 11 (upper): FCFS at the disk")
    ccdf(axes[3], {k: v for k, v in tt.items() if k.startswith("sptf")}, "response at the driver (ms)", "Fig. 11 (lower): SPTF at the disk")
    fig.suptitle("Riska & Riedel, Figs. 9-11: the HP trace's disk 0 stretched onto the Cheetah 9LP, at its arrival "
                 f"times sped up {metrics['trace_speed']['values'][0]:.0f}x (seed 1)")
    fig.tight_layout()
    fig.savefig(out / "riska2004_trace.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_trace.png", "Figs. 9-11: the HP trace, 25 outstanding on average"))

    fig, ax = p.subplots(figsize=(7, 4))
    ccdf(ax, {k: v for k, v in data["fig13"].items()}, "response at the driver (ms)",
         "Riska & Riedel, Fig. 13: SSTF at the driver, SPTF at the disk (seed 1)")
    fig.tight_layout()
    fig.savefig(out / "riska2004_fig13.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_fig13.png", "Fig. 13: tails at the driver, SSTF driver over SPTF disk"))

    fig, axes = p.subplots(2, 1, figsize=(9, 7), sharex=True)
    arr = data["overload_arrivals_ms"]
    bins = np.arange(0, data["overload_end_ms"] + 500, 500)
    counts, _ = np.histogram(arr, bins)
    axes[0].step(bins[:-1] / 1000, counts, where="post", label="arrivals per 500 ms")
    axes[0].set_ylabel("requests per 500 ms")
    axes[0].set_title(f"Fig. 14: arrivals; bursts at {metrics['burst_rate_per_s']['values'][0]:.0f}/s, "
                      f"{metrics['ov_burst_share_pct']['values'][0]:.0f}% of the requests", fontsize=10)
    axes[0].legend(fontsize=8)
    axes[0].grid(alpha=0.3)
    for key, label in (("fcfs_q1024", "FCFS, threshold 1024"), ("sptf_q4", "SPTF, threshold 4"),
                       ("sptf_q1024", "SPTF, threshold 1024")):
        a, r = data["overload"][key]
        axes[1].semilogy(a / 1000, r / 1000, ".", ms=1, label=label)
    axes[1].set_xlabel("arrival time (s)")
    axes[1].set_ylabel("response time (s)")
    axes[1].set_title("Fig. 15: response time vs arrival time (seed 1)", fontsize=10)
    axes[1].legend(fontsize=8, markerscale=8)
    axes[1].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "riska2004_overload.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_overload.png", "Figs. 14-15: the non-stationary overload"))
    return figs

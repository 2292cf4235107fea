"""Riska & Riedel, "It's not fair - evaluating efficient disk scheduling" (MASCOTS 2003 /
2004): queue more at the disk, schedule unfairly. Cheetah 9LP (the paper's drive)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..data import trace_path
from .common import line_panel, plt, run

NAME = "riska2004"
DISK = "cheetah9lp"
THRESHOLDS = [1, 2, 4, 8, 16]
TRACE_THRESHOLDS = [1, 2, 4, 8, 16, 32]
TRACE_OUTSTANDING = 25  # the paper: "the average load in the system is 25 outstanding requests"
TRACE = "ajw.1week"  # HP Labs' workstation trace, shipped in the package (disksched.data)


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


def _trace(drive: str, host: str, threshold: int, n: int | None) -> dict:
    w = {"kind": "trace", "path": str(trace_path(TRACE)), "map": "modulo", "mode": "closed", "outstanding": TRACE_OUTSTANDING}
    cfg = {"disk": {"model": DISK, "scheduler": drive}, "host": {"scheduler": host, "queue_threshold": threshold},
           "workload": w}
    if n:
        cfg["run"] = {"requests": n}
    return cfg


def blocks_per_cylinder() -> float:
    """The disk's mean blocks per cylinder (zones without spares): LBN distance to cylinders, for Fig. 9."""
    from .anand2008 import spec

    sp = spec(DISK)
    zones = sp["layout"]["zones"]
    blocks = sum((z["last_cylinder"] - z["first_cylinder"] + 1) * sp["surfaces"] * z["sectors_per_track"] for z in zones)
    return blocks / (zones[-1]["last_cylinder"] + 1)


def _times(df) -> tuple[np.ndarray, np.ndarray]:
    return ((df.done_ns - df.issued_ns) / 1e6).to_numpy(), ((df.done_ns - df.arrival_ns) / 1e6).to_numpy()


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
    # Figs. 5-8: response-time tails at the disk and at the driver, thresholds 8 and 16.
    for t in (8, 16):
        for sched in ("fcfs", "sptf"):
            disk_ms, host_ms = _times(run(_closed("fcfs", sched, t, 16, n, seed), records=True).records())
            for where, v in (("disk", disk_ms), ("host", host_ms)):
                m[f"tail_{sched}_q{t}_{where}_p99_ms"] = float(np.percentile(v, 99))
            if seed == 1:
                data["tails"][f"{sched} q{t}"] = {"disk": disk_ms, "host": host_ms}
    # Fig. 12 and 13: FCFS / SSTF / VSCAN at the driver, SPTF at the disk.
    for host in ("fcfs", "sstf", "vscan"):
        for t in THRESHOLDS:
            m[f"fig12_{host}_q{t}_ms"] = run(_closed(host, "sptf", t, 16, n, seed)).summary["host_response_ms"]["mean"]
    for t in (1, 4, 16):
        _, host_ms = _times(run(_closed("sstf", "sptf", t, 16, n, seed), records=True).records())
        m[f"fig13_q{t}_host_p99_ms"] = float(np.percentile(host_ms, 99))
        if seed == 1:
            data.setdefault("fig13", {})[f"q{t}"] = host_ms
    # Figs. 9-11: the HP trace, closed replay at 25 outstanding (the paper's load).
    tn = 10_000 if quick else None
    for sched in ("fcfs", "sptf"):
        for t in TRACE_THRESHOLDS:
            r = run(_trace(sched, "fcfs", t, tn), records=True)
            m[f"fig10_{sched}_q{t}_ms"] = r.summary["host_response_ms"]["mean"]
            df = r.records()
            _, host_ms = _times(df)
            m[f"fig11_{sched}_q{t}_host_p99_ms"] = float(np.percentile(host_ms, 99))
            m[f"fig11_{sched}_q{t}_host_max_s"] = float(host_ms.max() / 1000)
            m[f"trace_{sched}_q{t}_iops"] = r.summary["iops"]
            m[f"trace_{sched}_q{t}_outstanding"] = r.summary["host_response_ms"]["mean"] * r.summary["iops"] / 1000
            if seed == 1 and t in (1, 4, 32):
                data["trace_tails"][f"{sched} q{t}"] = host_ms
            if seed == 1 and sched == "fcfs" and t == 1:
                # Fig. 9: LBN distance between consecutive requests in service order,
                # in units of the disk's mean blocks per cylinder.
                order = df.sort_values("started_ns")
                data["trace_lbn_steps"] = np.abs(np.diff(order.lbn.to_numpy().astype(np.int64)))
                data["trace_lbn_max"] = int(order.lbn.max())
            if sched == "fcfs" and t == 1:
                steps = np.abs(np.diff(df.sort_values("started_ns").lbn.to_numpy().astype(np.int64)))
                m["trace_near500_pct"] = 100 * float((steps < 500 * blocks_per_cylinder()).mean())
                m["trace_service_ms"] = 1000 / r.summary["iops"]
    # Figs. 14-15: non-stationary overload. The burst rate is derived from the disk's
    # capacity: 90% of SPTF's throughput with 1024 requests at the disk; the base rate is
    # half of FCFS's. Closed runs with 1024 outstanding measure the ceilings.
    big = 1024
    for key, sched, t in (("fcfs", "fcfs", big), ("sptf_q4", "sptf", 4), ("sptf_q1024", "sptf", big)):
        m[f"ceiling_{key}_per_s"] = run(_closed("fcfs", sched, t, big, n, seed)).summary["iops"]
    burst = 0.9 * m["ceiling_sptf_q1024_per_s"]
    base = 0.5 * m["ceiling_fcfs_per_s"]
    m["burst_rate_per_s"], m["base_rate_per_s"] = burst, base
    scale = 0.25 if quick else 1.0
    b1, e1, b2, e2, end = (x * scale for x in (60_000, 540_000, 900_000, 1_200_000, 1_500_000))
    rates = [[0, base], [b1, burst], [e1, base], [b2, burst], [e2, base]]
    data["overload_rates"] = rates
    data["overload_end_ms"] = end
    for key, sched, t in (("sptf_q4", "sptf", 4), ("sptf_q1024", "sptf", big), ("fcfs_q1024", "fcfs", big)):
        df = run({"seed": seed, "disk": {"model": DISK, "scheduler": sched},
                  "host": {"scheduler": "fcfs", "queue_threshold": t},
                  "workload": {"kind": "schedule", "rates": rates, "size_kb": 4, "read_fraction": 2 / 3},
                  "run": {"requests": 10_000_000, "duration_ms": end}}, records=True).records()
        arr, done = df.arrival_ns.to_numpy() / 1e6, df.done_ns.to_numpy() / 1e6
        resp = done - arr
        sustained = 0
        for i, (lo, hi) in enumerate(((b1, e1), (b2, e2)), 1):
            sel = (arr >= lo) & (arr < hi)
            m[f"ov_{key}_burst{i}_mean_ms"] = float(resp[sel].mean())
            # Backlog when the burst ends: requests that arrived and are not done.
            backlog = int(((arr < hi) & (done > hi)).sum())
            m[f"ov_{key}_burst{i}_backlog"] = backlog
            ok = backlog < 10 * burst  # less than 10 s of the burst's arrivals still waiting
            m[f"ov_{key}_burst{i}_sustained"] = float(ok)
            sustained += ok
        m[f"ov_{key}_sustained"] = sustained
        m[f"ov_{key}_max_s"] = float(resp.max() / 1000)
        if seed == 1:
            keep = np.arange(0, len(arr), max(1, len(arr) // 40000))
            data["overload"][key] = (arr[keep], resp[keep])
            data["overload_arrivals_ms"] = arr if key == "sptf_q4" else data.get("overload_arrivals_ms")
    log(f"  riska2004 seed {seed}: SPTF 1->16 {m['fig3_sptf_q1_ms'] / m['fig3_sptf_q16_ms']:.2f}x, "
        f"four disks {m['fig4_sptf_q1_ms'] / m['fig4_sptf_q16_ms']:.2f}x, burst {burst:.0f}/s")
    return m, data


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
    if "fig10_sptf_q1_ms" in metrics:
        out.append({"title": f"Figs. 10-11: the HP trace (ajw.1week), closed replay at {TRACE_OUTSTANDING} outstanding",
                    "columns": ["figure"] + [f"q{t}" for t in TRACE_THRESHOLDS],
                    "rows": [[f"Fig. 10: mean response, {s.upper()} at the disk, ms"] +
                             [iv(f"fig10_{s}_q{t}_ms") for t in TRACE_THRESHOLDS] for s in ("fcfs", "sptf")]
                            + [[f"Fig. 11: driver p99, {s.upper()} at the disk, ms"] +
                               [iv(f"fig11_{s}_q{t}_host_p99_ms") for t in TRACE_THRESHOLDS] for s in ("fcfs", "sptf")]})
    out.append({"title": "Figs. 5-8, 13: response-time p99 (ms) at the disk and at the driver",
                "columns": ["set-up", "disk p99", "driver p99"],
                "rows": [[f"{s.upper()} at the disk, threshold {t}", iv(f"tail_{s}_q{t}_disk_p99_ms"),
                          iv(f"tail_{s}_q{t}_host_p99_ms")] for s in ("fcfs", "sptf") for t in (8, 16)]
                        + [[f"Fig. 13: SSTF driver, SPTF disk, threshold {t}", "-", iv(f"fig13_q{t}_host_p99_ms")]
                           for t in (1, 4, 16)]})
    rows = [["capacity (closed, 1024 outstanding), requests/s", iv("ceiling_fcfs_per_s"), iv("ceiling_sptf_q4_per_s"),
             iv("ceiling_sptf_q1024_per_s")]]
    for i in (1, 2):
        rows.append([f"burst {i}: mean response, ms"] + [iv(f"ov_{k}_burst{i}_mean_ms") for k in ("fcfs_q1024", "sptf_q4", "sptf_q1024")])
        rows.append([f"burst {i}: backlog at its end, requests"] + [iv(f"ov_{k}_burst{i}_backlog") for k in ("fcfs_q1024", "sptf_q4", "sptf_q1024")])
    rows.append(["bursts sustained (of 2)"] + [iv(f"ov_{k}_sustained") for k in ("fcfs_q1024", "sptf_q4", "sptf_q1024")])
    out.append({"title": f"Figs. 14-15: overload; base {means['base_rate_per_s']:.0f} requests/s (half FCFS's capacity), "
                         f"bursts at {means['burst_rate_per_s']:.0f} requests/s (90% of SPTF's capacity with 1024 at "
                         "the disk); sustained = less than 10 s of burst arrivals still waiting when the burst ends",
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

    def ccdf(ax, series: dict, xlabel: str, title: str) -> None:
        wide = False
        for label, v in series.items():
            v = np.sort(v)
            ax.semilogy(v, 1 - np.arange(len(v)) / len(v), label=label)
            wide |= v[-1] > 50 * max(np.median(v), 1e-9)
        if wide:  # a tail far beyond the body: log time, or the body is one vertical line
            ax.set_xscale("log")
            xlabel += ", log scale"
        ax.set_xlabel(xlabel)
        ax.set_ylabel("P(response > x)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)

    t = data["tails"]
    fig, axes = p.subplots(1, 4, figsize=(18, 4))
    ccdf(axes[0], {k: v["disk"] for k, v in t.items() if k.startswith("fcfs")}, "response at the disk (ms)", "Fig. 7 (upper): FCFS at the disk")
    ccdf(axes[1], {k: v["host"] for k, v in t.items() if k.startswith("fcfs")}, "response at the driver (ms)", "Fig. 7 (lower): FCFS, driver")
    ccdf(axes[2], {k: v["disk"] for k, v in t.items() if k.startswith("sptf")}, "response at the disk (ms)", "Figs. 5, 6, 8 (upper): SPTF at the disk")
    ccdf(axes[3], {k: v["host"] for k, v in t.items() if k.startswith("sptf")}, "response at the driver (ms)", "Fig. 8 (lower): SPTF, driver")
    fig.suptitle("Riska & Riedel, Figs. 5-8: response-time tails, 16 outstanding, thresholds 8 and 16 (seed 1)")
    fig.tight_layout()
    fig.savefig(out / "riska2004_tails.png", dpi=100)
    p.close(fig)
    figs.append(("riska2004_tails.png", "Figs. 5-8: response-time tails at the disk and at the driver"))

    if data.get("trace_tails"):
        fig, axes = p.subplots(1, 4, figsize=(18, 4))
        steps = data["trace_lbn_steps"]
        cap = data["trace_lbn_max"] + 1
        bpc = blocks_per_cylinder()
        cls = (steps / bpc // 500).astype(int)
        counts = np.bincount(cls)
        axes[0].bar(np.arange(len(counts)) * 500, counts, width=450, align="edge", label="FCFS, threshold 1")
        axes[0].set_yscale("log")
        axes[0].set_xlabel("seek distance (cylinders = LBN distance / mean blocks per cylinder)")
        axes[0].set_ylabel("requests")
        axes[0].set_title(f"Fig. 9: {100 * counts[0] / counts.sum():.0f}% below 500 cylinders (paper: ~90%)", fontsize=10)
        axes[0].legend(fontsize=8)
        line_panel(axes[1], TRACE_THRESHOLDS, {s.upper(): [ms(f"fig10_{s}_q{t}_ms") for t in TRACE_THRESHOLDS]
                                               for s in ("fcfs", "sptf")},
                   "queuing threshold at the disk", "mean response (ms)",
                   f"Fig. 10: the HP trace at {TRACE_OUTSTANDING} outstanding", logx=True)
        tt = data["trace_tails"]
        ccdf(axes[2], {k: v for k, v in tt.items() if k.startswith("fcfs")}, "response at the driver (ms)", "Fig. 11 (upper): FCFS at the disk")
        ccdf(axes[3], {k: v for k, v in tt.items() if k.startswith("sptf")}, "response at the driver (ms)", "Fig. 11 (lower): SPTF at the disk")
        fig.suptitle(f"Riska & Riedel, Figs. 9-11: the HP trace ({cap:,} blocks mapped modulo the disk), closed replay")
        fig.tight_layout()
        fig.savefig(out / "riska2004_trace.png", dpi=100)
        p.close(fig)
        figs.append(("riska2004_trace.png", "Figs. 9-11: the HP trace at 25 outstanding"))

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
    axes[0].set_title(f"Fig. 14: arrivals; bursts at {metrics['burst_rate_per_s']['values'][0]:.0f}/s = 90% of SPTF's "
                      "capacity at threshold 1024", fontsize=10)
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

"""Wu & Brandt, "QoS support for intelligent storage devices" (ISW 2004): token-bucket
shaping of best-effort traffic lets a boosted 8 MB/s stream keep its rate."""

from __future__ import annotations

import json
from pathlib import Path

from .. import _core
from ..plots import throughput
from .common import bar_panel, plt, run, write_spec

NAME = "wu2004"

# Total throughput of the four 8 MB/s streams (MB/s) per method, from the slides.
PAPER = {"none": 16.80, "fixed90": 17.25, "fixed50": 14.71, "optimistic": 15.85, "pessimistic": 14.48}
LABELS = {"none": "no boosting", "fixed90": "fixed 90/s", "fixed50": "fixed 50/s", "optimistic": "optimistic",
          "pessimistic": "pessimistic"}

# A 7200 RPM desktop drive of 2003-04 (the class of the paper's test disk, whose
# sequential read maximum was 27.59 MB/s): 40 GB, 8.9 ms average seek, 2 MB
# buffer, ATA-100. The outer media rate, 30.5 MB/s, is chosen so that a long
# sequential read where the streams' files lie measures about 27.6 MB/s (the
# paper's stated maximum); head switches and skews take the rest.
DISK = {"name": "wu2004_7200", "capacity_gb": 40, "rpm": 7200, "outer_mb_s": 30.5, "inner_mb_s": 17.0,
        "track_to_track_ms": 1.0, "average_seek_ms": 8.9, "full_stroke_ms": 18.0, "cache_kb": 2048,
        "bus_mb_s": 100.0, "surfaces": 4}
HOST = "anticipatory"  # Linux 2.6's default elevator; queue threshold 1 (an IDE disk, no command queueing)


def _config(disk: Path, host: str, seconds: float, boosted: bool, shaper: dict | None, seed: int) -> dict:
    """Four 8 MB/s streams of 128 KB reads (Linux 2.6's largest readahead), one
    after another on the disk like four files written in turn, 1.5 GB apart."""
    spacing = 1_500_000_000 // 512 // 256 * 256
    streams = [{"kind": "stream", "mb_per_s": 8, "request_kb": 128, "start_lbn": i * spacing,
                "class": "real-time" if boosted and i == 0 else "best-effort"} for i in range(4)]
    host_cfg: dict = {"scheduler": host, "queue_threshold": 1}
    if shaper is not None:
        host_cfg["shaper"] = shaper
    return {"seed": seed, "disk": {"model": str(disk)}, "host": host_cfg,
            "workload": {"kind": "mix", "clients": streams},
            "run": {"requests": 100_000_000, "duration_ms": seconds * 1000, "series_window_ms": 1000}}


def _per_stream(r, seconds: float) -> list[float]:
    """MB/s of each stream over the run's first `seconds` (whole 1 s windows)."""
    df = r.series()
    df = df[df.window < int(seconds)]
    return [float(df[df.client == c].mb_per_s.sum() / int(seconds)) for c in range(4)]


def measure(seed: int, quick: bool, out: Path, log) -> tuple[dict, dict]:
    seconds = 30.0 if quick else 180.0
    disk = out / "wu2004_disk.toml"
    write_spec(disk, _core.disk_datasheet(json.dumps(DISK)))
    m: dict = {}
    for label, kb, n in [("long_read", 32768, 4), ("sync_128kb", 128, 2000)]:
        m[f"disk_{label}_mb_s"] = run({"seed": seed, "disk": {"model": str(disk)},
                                       "workload": {"kind": "sequential", "request_kb": kb, "start_lbn": 0},
                                       "run": {"requests": n}}).summary["mb_per_s"]
    # Feedback starts unthrottled: the disk's sequential maximum in 128 KB requests.
    be_max = round(m["disk_long_read_mb_s"] * 1e6 / 131072)
    m["feedback_start_rate_per_s"] = be_max
    cases = {"none": (False, None),
             "fixed90": (True, {"policy": "fixed", "best-effort": {"rate_per_s": 90}}),
             "fixed50": (True, {"policy": "fixed", "best-effort": {"rate_per_s": 50}}),
             "optimistic": (True, {"policy": "optimistic", "best-effort": {"rate_per_s": be_max}}),
             "pessimistic": (True, {"policy": "pessimistic", "best-effort": {"rate_per_s": be_max}})}
    data: dict = {"seconds": seconds, "series": {}, "rates": {}}
    for key, (boosted, shaper) in cases.items():
        r = run(_config(disk, HOST, seconds, boosted, shaper, seed))
        per = _per_stream(r, seconds)
        df = r.series()
        for c in range(4):
            m[f"{key}_s{c + 1}_mb_s"] = per[c]
        m[f"{key}_total_mb_s"] = sum(per)
        s1 = df[df.client == 0]
        m[f"{key}_s1_late_pct"] = 100 * float(s1.missed.sum()) / max(float(s1.deadline_requests.sum()), 1.0)
        rates = r.rates()
        be = rates[rates.name == "best-effort.rate_per_s"].value
        m[f"{key}_be_final_rate_per_s"] = float(be.iloc[-1]) if len(be) else float("nan")
        m[f"{key}_be_mean_rate_per_s"] = float(be.mean()) if len(be) else float("nan")
        data["series"][key] = df
        data["rates"][key] = rates
        log(f"  {LABELS[key]}: " + ", ".join(f"{x:.2f}" for x in per) + f" MB/s, total {sum(per):.2f}")
    # C-LOOK, unboosted, for comparison: no anticipation, a seek between streams on every request.
    r = run(_config(disk, "clook", seconds, False, None, seed))
    m["clook_none_total_mb_s"] = sum(_per_stream(r, seconds))
    for key in cases:
        m[f"{key}_change_pct"] = 100 * (m[f"{key}_total_mb_s"] / m["none_total_mb_s"] - 1)
    return m, data


def tables(means: dict, metrics: dict) -> list[dict]:
    from .framework import fmt, fmt_interval

    iv = lambda k: fmt_interval(metrics[k]["mean"], metrics[k]["lo"], metrics[k]["hi"])  # noqa: E731
    rows = []
    for key, label in LABELS.items():
        rows.append([label] + [iv(f"{key}_s{c}_mb_s") for c in range(1, 5)] + [
            iv(f"{key}_total_mb_s"), iv(f"{key}_change_pct") if key != "none" else "",
            fmt(PAPER[key]), f"{100 * (PAPER[key] / PAPER['none'] - 1):+.1f}" if key != "none" else "",
            iv(f"{key}_s1_late_pct")])
    return [{"title": "Four 8 MB/s streams of 128 KB reads, MB/s (stream 1 boosted in the shaped cases); "
                      f"host {HOST}, queue threshold 1",
             "columns": ["method", "stream 1", "stream 2", "stream 3", "stream 4", "total", "vs none %", "paper total",
                         "paper vs none %", "stream 1 late %"], "rows": rows},
            {"title": "The disk and the comparison runs",
             "columns": ["figure", "disksched", "paper"],
             "rows": [["long sequential read, MB/s", iv("disk_long_read_mb_s"), "27.59"],
                      ["back-to-back 128 KB reads, MB/s", iv("disk_sync_128kb_mb_s"), "-"],
                      ["C-LOOK instead of anticipatory, no boosting, total MB/s", iv("clook_none_total_mb_s"), "-"],
                      ["feedback policies' starting best-effort rate, requests/s", iv("feedback_start_rate_per_s"), "-"]]}]


def plots(out: Path, metrics: dict, data: dict) -> list[tuple[str, str]]:
    figs = []
    seconds = data["seconds"]
    for key, label in LABELS.items():
        boosted = key != "none"
        labels = {c: f"stream {c + 1} (8 MB/s)" + (" boosted" if boosted and c == 0 else "") for c in range(4)}
        f = f"wu2004_{key}.png"
        throughput(out / f, data["series"][key], data["rates"][key],
                   f"Wu & Brandt 2004, {label} (seed 1): total {metrics[f'{key}_total_mb_s']['values'][0]:.2f} MB/s "
                   f"(paper {PAPER[key]:.2f})", labels, seconds)
        figs.append((f, f"Throughput of each stream per second, {label} (seed 1), with the best-effort token rate"))
    p = plt()
    fig, axes = p.subplots(1, 2, figsize=(12, 4))
    bar_panel(axes[0], list(LABELS.values()), {"disksched": [metrics[f"{k}_total_mb_s"] for k in LABELS],
                                               "paper": [PAPER[k] for k in LABELS]},
              "total MB/s", "Total throughput of the four streams")
    bar_panel(axes[1], list(LABELS.values()), {"stream 1 (boosted when shaped)": [metrics[f"{k}_s1_mb_s"] for k in LABELS],
                                               "mean of streams 2-4": [
                                                   {q: sum(metrics[f"{k}_s{c}_mb_s"][q] for c in (2, 3, 4)) / 3
                                                    for q in ("mean", "lo", "hi")} for k in LABELS]},
              "MB/s", "Per-stream throughput (streams 2-4: mean of their CIs' ends)")
    axes[1].axhline(8, color="grey", ls=":", lw=1)
    fig.suptitle("Wu & Brandt 2004: four 8 MB/s streams; stream 1 boosted by shaping best-effort traffic")
    fig.tight_layout()
    fig.savefig(out / "wu2004_totals.png", dpi=100)
    p.close(fig)
    figs.insert(0, ("wu2004_totals.png", "Totals per method, disksched (mean, 95% CI) beside the paper"))
    return figs

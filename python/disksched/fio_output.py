"""`disksched run --output-format json`: a run's figures in the shape of fio's JSON output
(`fio --output-format=json`), so that scripts written for fio read them: `jobs[0].read` and
`jobs[0].write` with io_bytes, bw (KiB/s), iops, runtime (ms) and the latencies `lat_ns` (arrival
to completion: fio's total latency), `slat_ns` (arrival to issue to the drive: the host's queueing)
and `clat_ns` (issue to completion), each with min/max/mean/stddev/N and, for lat and clat, a
`percentile` map keyed as fio keys it ("99.000000").

The figures are exact, from every measured request (the warm-up left out, as in the summary):
fio's percentiles come from a log-linear histogram, these are the nearest-rank value of the sorted
latencies (the smallest value with at least p% of the requests at or below it)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ._core import DiskschedError

# numpy is imported where the figures are computed: `run` imports this module to check its options,
# and its process otherwise holds no numpy (run_dir.py; tests/test_records.py measures its memory).

# fio's default `--percentile_list`.
DEFAULT_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
                       99.95, 99.99)
FORMATS = ("normal", "json")


def parse_percentile_list(text: Optional[str]) -> tuple[float, ...]:
    """fio's `--percentile_list` syntax, `50:90:99:99.9`: each in (0, 100], at most 64 of them."""
    if text is None:
        return DEFAULT_PERCENTILES
    out = []
    for part in text.split(":"):
        try:
            p = float(part)
        except ValueError:
            raise DiskschedError(f"--percentile-list {text!r}: {part!r} is not a number "
                                 "(expected percentiles separated by ':', e.g. 50:90:99:99.9)") from None
        if not 0 < p <= 100:
            raise DiskschedError(f"--percentile-list {text!r}: {part} is outside (0, 100]")
        out.append(p)
    if len(out) > 64:
        raise DiskschedError(f"--percentile-list: {len(out)} percentiles, at most 64")
    return tuple(sorted(set(out)))


class Latencies:
    """Per direction (read, write): bytes moved and the three latencies of every measured request,
    fed chunk by chunk from a run's record sink (32 bytes kept per request: its blocks and three latencies)."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[tuple]] = {"read": [], "write": []}
        self.first_arrival_ns: Optional[int] = None
        self.last_done_ns = 0

    def add(self, cols: Mapping[str, Any]) -> None:
        import numpy as np

        measured = ~np.asarray(cols["warmup"], bool)
        if not measured.any():
            return
        arrival = np.asarray(cols["arrival_ns"], np.int64)[measured]
        issued = np.asarray(cols["issued_ns"], np.int64)[measured]
        done = np.asarray(cols["done_ns"], np.int64)[measured]
        blocks = np.asarray(cols["blocks"], np.int64)[measured]
        write = np.asarray(cols["is_write"], bool)[measured]
        first = int(arrival.min())
        self.first_arrival_ns = first if self.first_arrival_ns is None else min(self.first_arrival_ns, first)
        self.last_done_ns = max(self.last_done_ns, int(done.max()))
        for name, sel in (("read", ~write), ("write", write)):
            if sel.any():
                self.chunks[name].append((blocks[sel], done[sel] - arrival[sel], issued[sel] - arrival[sel],
                                          done[sel] - issued[sel]))

    def runtime_ns(self) -> int:
        """First measured arrival to last measured completion (the summary's IOPS span)."""
        return 0 if self.first_arrival_ns is None else self.last_done_ns - self.first_arrival_ns

    def direction(self, name: str, percentiles: Sequence[float], sector_bytes: int) -> dict:
        import numpy as np

        parts = self.chunks[name]
        blocks, lat, slat, clat = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, np.int64)
                                   for i in range(4))
        runtime_s = self.runtime_ns() / 1e9
        io_bytes = int(blocks.sum()) * sector_bytes
        per_s = (lambda x: x / runtime_s) if runtime_s > 0 else (lambda x: 0.0)
        return {"io_bytes": io_bytes, "io_kbytes": io_bytes // 1024, "bw_bytes": per_s(io_bytes),
                "bw": per_s(io_bytes / 1024), "iops": per_s(len(lat)), "runtime": round(self.runtime_ns() / 1e6),
                "total_ios": len(lat), "slat_ns": stats(slat), "clat_ns": stats(clat, percentiles),
                "lat_ns": stats(lat, percentiles)}


def stats(ns, percentiles: Sequence[float] = ()) -> dict:
    """fio's latency block of `ns` (a numpy array): min, max, mean, stddev (population, as fio's), N and,
    with `percentiles`, the nearest-rank percentile map."""
    import numpy as np

    n = len(ns)
    if not n:
        out = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
        return {**out, "percentile": {_key(p): 0 for p in percentiles}} if percentiles else out
    v = np.sort(ns)
    mean = float(v.mean())
    out = {"min": int(v[0]), "max": int(v[-1]), "mean": mean, "stddev": float(np.sqrt(np.mean((v - mean) ** 2))), "N": n}
    if percentiles:
        out["percentile"] = {_key(p): int(v[max(math.ceil(p / 100 * n), 1) - 1]) for p in percentiles}
    return out


def _key(p: float) -> str:
    return f"{p:.6f}"


def report(lat: Latencies, percentiles: Sequence[float], jobname: str, block_bytes: int,
           provenance: Mapping[str, Any], counters: Mapping[str, Any]) -> dict:
    """The whole document: fio's top-level keys, one job, and disksched's provenance and counters beside."""
    return {
        "disksched version": provenance.get("version"),
        "global options": {"percentile_list": ":".join(f"{p:g}" for p in percentiles)},
        "jobs": [{"jobname": jobname, "groupid": 0, "error": 0,
                  "job_runtime": round(lat.runtime_ns() / 1e6),
                  "read": lat.direction("read", percentiles, block_bytes),
                  "write": lat.direction("write", percentiles, block_bytes)}],
        "disksched": {"latency": "lat_ns: arrival to completion; slat_ns: arrival to issue to the drive; "
                                 "clat_ns: issue to completion. Percentiles: nearest rank over every measured request",
                      "counters": counters, "provenance": provenance},
    }


def sector_bytes(res) -> int:
    """The block size of a resolved config's drive (`disksched.resolve`; every disk of an array is the same
    model): a built-in name as it is, a relative spec path from the config's folder, as the core finds it."""
    from . import _core, disks

    model = str(res.config["disk"]["model"])
    if model.lower() not in {d.lower() for d in disks()}:
        path, hash_, disk = model.partition("#")
        if not Path(path).is_absolute():
            path = str(Path(res.origin).parent / path)
        model = path + hash_ + disk
    return int(json.loads(_core.disk_characteristics(model))["sector_bytes"])

"""`disksched run --out DIR [--records]`: a run whose per-request records are
streamed in chunks (never all in memory) into `records.parquet` and into the
accumulators the plots are drawn from, so memory stays flat at any run length:
the response-time CDFs come from histograms, the LBN scatter from an evenly
thinned sample, the queue depth from per-bin sums."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from . import CLASS_NAMES, Result, rates_table, series_table, tasks_table
from ._core import RecordsParquet
from . import run as run_sim
from .provenance import KEY, to_text

# Response-time histogram bins: 1000 per decade of nanoseconds (0.23 % wide), 1 ns to 10^13 ns.
BINS_PER_DECADE = 1000
DECADES = 13
# Most points of the LBN-against-time scatter; beyond, every k-th request (k a power of two).
SCATTER_POINTS = 200_000
# Fine time bins of the queue-depth sums (merged in pairs as the run grows).
DEPTH_BINS = 4096
# Rows per chunk handed out of the run, and per row group of records.parquet: 16,384 rows (2.4 MB of
# columns) keep the chunk and the Parquet writer's buffers small.
CHUNK_ROWS = 16_384


class Histogram:
    """Counts of values (ns) in log-spaced bins, and the exact maximum."""

    def __init__(self) -> None:
        self.counts = np.zeros(BINS_PER_DECADE * DECADES + 1, dtype=np.int64)
        self.max_ns = 0

    def add(self, ns: np.ndarray) -> None:
        if not len(ns):
            return
        v = np.maximum(np.asarray(ns, dtype=np.float64), 1.0)
        idx = np.minimum(np.ceil(np.log10(v) * BINS_PER_DECADE).astype(np.int64), len(self.counts) - 1)
        self.counts += np.bincount(idx, minlength=len(self.counts))
        self.max_ns = max(self.max_ns, int(np.max(ns)))

    def cdf_ms(self) -> tuple[np.ndarray, np.ndarray]:
        """(upper bin edges in ms, fraction of values at or below each), nonempty bins only."""
        total = self.counts.sum()
        keep = self.counts > 0
        edges_ns = 10.0 ** (np.arange(len(self.counts)) / BINS_PER_DECADE)
        edges_ns[-1] = max(edges_ns[-1], self.max_ns)
        frac = np.cumsum(self.counts) / max(total, 1)
        return edges_ns[keep] / 1e6, frac[keep]


class Thinned:
    """Every k-th row (k doubling) of (arrival s, lbn, is_write), at most `points` of them, kept in
    arrays allocated once (rows kept are those of index 0, k, 2k, ...: halving keeps every other)."""

    def __init__(self, points: int = SCATTER_POINTS) -> None:
        self.k, self.seen, self.n = 1, 0, 0
        self._t = np.empty(points)
        self._lbn = np.empty(points, np.uint64)
        self._w = np.empty(points, bool)
        self.reads = self.writes = 0

    t = property(lambda self: self._t[:self.n])
    lbn = property(lambda self: self._lbn[:self.n])
    w = property(lambda self: self._w[:self.n])

    def add(self, t_s: np.ndarray, lbn: np.ndarray, w: np.ndarray) -> None:
        n = len(t_s)
        writes = int(np.count_nonzero(w))
        self.writes += writes
        self.reads += n - writes
        while True:
            first = -self.seen % self.k  # the chunk's first row whose run index is a multiple of k
            take = len(range(first, n, self.k))
            if self.n + take <= len(self._t):
                break
            half = (self.n + 1) // 2
            for a in (self._t, self._lbn, self._w):
                a[:half] = a[:self.n:2]
            self.n, self.k = half, self.k * 2
        rows = slice(first, n, self.k)
        for a, v in ((self._t, t_s), (self._lbn, lbn), (self._w, w)):
            a[self.n:self.n + take] = v[rows]
        self.n += take
        self.seen += n


class Depth:
    """Requests outstanding over time from (enter, leave) times, kept as per-bin
    counts and sums: the time integral of the depth up to a bin edge e is
    sum(e - enter, enter < e) - sum(e - leave, leave < e), exact at every edge."""

    def __init__(self) -> None:
        self.width_s = 1.0 / DEPTH_BINS  # bins cover [0, 1 s) at first, doubling as needed
        self.cnt = np.zeros((2, DEPTH_BINS), np.int64)
        self.sum = np.zeros((2, DEPTH_BINS))
        self.first_s, self.last_s = np.inf, 0.0

    def add(self, enter_s: np.ndarray, leave_s: np.ndarray) -> None:
        if not len(enter_s):
            return
        self.first_s = min(self.first_s, float(enter_s.min()))
        self.last_s = max(self.last_s, float(leave_s.max()))
        while self.last_s >= self.width_s * DEPTH_BINS:
            self.cnt = np.concatenate([self.cnt.reshape(2, -1, 2).sum(axis=2), np.zeros((2, DEPTH_BINS // 2), np.int64)], 1)
            self.sum = np.concatenate([self.sum.reshape(2, -1, 2).sum(axis=2), np.zeros((2, DEPTH_BINS // 2))], 1)
            self.width_s *= 2
        for row, t in enumerate((enter_s, leave_s)):
            b = np.minimum((t / self.width_s).astype(np.int64), DEPTH_BINS - 1)
            self.cnt[row] += np.bincount(b, minlength=DEPTH_BINS)
            self.sum[row] += np.bincount(b, weights=t, minlength=DEPTH_BINS)

    def curve(self, bins: int = 400) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray, float, int]]:
        """(bin middles s, mean depth per bin, depth at the fine edges' max per bin, overall mean, max at the edges)."""
        if not np.isfinite(self.first_s) or self.last_s <= self.first_s:
            return None
        used = int(np.ceil(self.last_s / self.width_s)) + 1
        edges = np.arange(used + 1) * self.width_s
        c = np.concatenate([np.zeros((2, 1), np.int64), np.cumsum(self.cnt[:, :used], 1)], 1)
        s = np.concatenate([np.zeros((2, 1)), np.cumsum(self.sum[:, :used], 1)], 1)
        integral = (edges * c[0] - s[0]) - (edges * c[1] - s[1])
        depth = c[0] - c[1]
        g = max(1, used // bins)
        sel = np.arange(0, used + 1, g)
        e, I = edges[sel], integral[sel]
        mean = np.diff(I) / np.diff(e)
        peak = np.maximum.reduceat(depth[:sel[-1] + 1], sel[:-1]) if len(sel) > 1 else depth[:1]
        return (e[:-1] + e[1:]) / 2, mean, np.maximum(peak, mean), float(integral[-1] / (self.last_s - self.first_s)), int(depth.max())


class Accumulator:
    """What the plots and records.parquet need, fed chunk by chunk."""

    def __init__(self, parquet: Optional[Path], provenance: Mapping[str, Any]):
        # records.parquet is written by the core's writer (no pyarrow in this process: ~50 MB resident).
        self.writer = None if parquet is None else RecordsParquet(str(parquet), KEY, to_text(provenance), CLASS_NAMES)
        self.rows = 0
        self.host, self.disk = Histogram(), Histogram()
        self.by_class = {c: Histogram() for c in range(len(CLASS_NAMES))}
        self.warmup_rows = 0
        self.scatter = Thinned()
        self.depth_system, self.depth_disk = Depth(), Depth()

    def add(self, cols: Mapping[str, np.ndarray]) -> None:
        n = len(cols["seq"])
        if not n:
            return
        self.rows += n
        if self.writer is not None:
            self.writer.write(cols)
        arrival, issued, done = cols["arrival_ns"], cols["issued_ns"], cols["done_ns"]
        measured = ~np.asarray(cols["warmup"], bool)
        self.warmup_rows += n - int(measured.sum())
        host_ns = (done - arrival)[measured]
        self.host.add(host_ns)
        self.disk.add((done - issued)[measured])
        cls = np.asarray(cols["class"])[measured]
        for c, h in self.by_class.items():
            h.add(host_ns[cls == c])
        self.scatter.add(arrival / 1e9, np.asarray(cols["lbn"]), np.asarray(cols["is_write"], bool))
        self.depth_system.add(arrival / 1e9, done / 1e9)
        self.depth_disk.add(issued / 1e9, done / 1e9)

    def close(self) -> None:
        """The file's footer (a run with no completed request: the schema and no rows); what is
        left is the plots' data (pickled by `run_dir`)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def simulate(out: Path, config, overrides: Mapping[str, Any], seed: Optional[int],
             progress: Optional[Callable[[int, int], Any]], parquet: bool = False,
             runner: Optional[Callable[..., Result]] = None, plugin_files: Sequence[Any] = (),
             also: Optional[Callable[[Mapping[str, np.ndarray]], Any]] = None) -> tuple[Result, Accumulator, dict]:
    """The run of `disksched run --out` (in its own process, see `run_dir`): records streamed
    into the accumulators and, with `parquet`, into `out`/records.parquet; summary.json written.
    Returns the result (without records), the accumulators (the plots' data) and the provenance.
    `runner` replaces `disksched.run` (same arguments): `disksched serve` writes its session this way.
    `also` is handed every chunk too (`run --output-format json`'s latencies)."""
    from . import provenance as prov
    from . import resolve
    from .output import write_json

    out = Path(out)
    # The provenance is known before the run (the resolved config): the Parquet schema carries it from the first chunk.
    res = resolve(config, overrides)
    effective = seed if seed is not None else res.config.get("seed", 0)
    p = prov.make({**res.config, "seed": effective}, res.overrides, effective)
    if plugin_files:
        p["plugins"] = prov.plugin_files(plugin_files)
    acc = Accumulator(out / "records.parquet" if parquet else None, p)

    def sink(cols: Mapping[str, np.ndarray]) -> None:
        acc.add(cols)
        if also is not None:
            also(cols)

    try:
        result = (runner or run_sim)(config, seed=seed, records=True, overrides=overrides, progress=progress,
                         record_sink=sink, record_chunk_rows=CHUNK_ROWS)
        if result.columns is not None:
            sink(result.columns)
            result.columns = None
    finally:
        acc.close()
    write_json(out / "summary.json", {"summary": result.summary, "counters": result.counters, "provenance": p})
    return result, acc, p


def draw(out: Path, result: Result, acc: Accumulator, p: Mapping[str, Any], name: str, log_x: bool = False,
         parquet: bool = False) -> list[str]:
    """The plots and series of `disksched run --out` from what `simulate` left; the names written."""
    import textwrap

    from . import provenance as prov
    from .output import atomic_write, run_title
    from .plots import CLASS_COLORS, lbn_time, png_provenance, queue_depth_curves, response_cdf_hist, throughput

    out = Path(out)
    head = run_title(name, p)

    def title(what: str) -> str:
        """Every plot's title names the schedulers and overrides (wrapped: the plots are 7-8 inches wide)."""
        return textwrap.fill(f"{head}: {what}", 70)

    written = ["summary.json"] + (["records.parquet"] if parquet else [])
    note = " (warm-up left out)" if acc.warmup_rows else ""
    with png_provenance(p):
        response_cdf_hist(out / "response_cdf.png", {"host": acc.host, "disk": acc.disk},
                          title(f"response time{note}"), log_x=log_x)
        written.append("response_cdf.png")
        present = {c: h for c, h in acc.by_class.items() if h.counts.sum()}
        if len(present) > 1:
            labels = {c: f"{CLASS_NAMES[c]} ({int(h.counts.sum()):,})" for c, h in present.items()}
            response_cdf_hist(out / "response_cdf_by_class.png", {labels[c]: h for c, h in present.items()},
                              title(f"host response time by class{note}"), log_x=log_x,
                              colors={labels[c]: CLASS_COLORS[CLASS_NAMES[c]] for c in present})
            written.append("response_cdf_by_class.png")
        if acc.rows:
            sc = acc.scatter
            thinned = f" (every {sc.k}th request drawn)" if sc.k > 1 else ""
            lbn_time(out / "lbn_time.png", sc.t, sc.lbn, sc.w, title(f"LBN against time{thinned}"),
                     counts=(sc.reads, sc.writes))
            queue_depth_curves(out / "queue_depth.png",
                               {"in the system (arrival to completion)": acc.depth_system.curve(),
                                "at the disk (issued to completion)": acc.depth_disk.curve()},
                               title("queue depth over time"))
            written += ["lbn_time.png", "queue_depth.png"]
        if result.series_columns is not None:
            # Columns, not DataFrames: pandas (~43 MB resident, and pyarrow for its strings) stays out.
            series, rates = series_table(result.series_columns), rates_table(result.series_columns)
            tables = [("series.csv", series), ("rates.csv", rates)]
            if len(result.series_columns["task"]):
                tables.append(("tasks.csv", tasks_table(result.series_columns)))
            header = prov.csv_header(p)
            for fname, cols in tables:
                atomic_write(out / fname, lambda tmp, cols=cols: _csv(tmp, cols, header))
            throughput(out / "throughput.png", series, rates, title("throughput by class"),
                       end_s=result.summary["sim_time_ms"] / 1000, by_class=True)
            written += [t[0] for t in tables] + ["throughput.png"]
    return written


def _csv(path: str, cols: Mapping[str, Any], header: str) -> None:
    """`header`, then the columns as pandas' `to_csv(index=False)` writes them: floats by `repr`
    (the shortest exact form; NaN empty), quoting only where needed, one line per row."""
    import csv

    def texts(values) -> list[str]:
        a = np.asarray(values)
        if a.dtype.kind == "f":
            return ["" if v != v else repr(v) for v in a.tolist()]
        return [str(v) for v in (values if isinstance(values, list) else a.tolist())]

    names = list(cols)
    with open(path, "w", newline="") as f:
        f.write(header)
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        w.writerows(zip(*(texts(cols[k]) for k in names)))

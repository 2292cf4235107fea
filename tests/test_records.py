"""`run --records`: records.parquet streamed in chunks, with flat memory, equal to `records()`."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import disksched
from disksched.records import Histogram

from conftest import ROOT

BIG = """seed = 1
[disk]
model = "atlas10k"
[host]
scheduler = "fcfs"
queue_threshold = 1
[workload]
kind = "open"
interarrival_ms = 10.0
size_kb = 4.0
[run]
requests = {n}
warmup_requests = 1000
"""

# Runs `disksched run CONFIG --out OUT --records` (the installed command, as a user would) and
# reports the peak resident memory: of the largest process (RUSAGE_CHILDREN's ru_maxrss, what
# /usr/bin/time reports), of the command and each of its `run_dir` children (each one's own high-water
# mark, VmHWM, so a late sample does not miss it) and of all processes together (VmRSS sampled every
# 5 ms from /proc). Other processes (the provenance's `git`, or a fork before its exec, which shows its
# parent's memory) count in the sum only.
MEASURE = """
import json, os, resource, subprocess, sys, time
def children(pid):
    out = []
    try:
        for t in os.listdir(f'/proc/{pid}/task'):
            out += [int(c) for c in open(f'/proc/{pid}/task/{t}/children').read().split()]
    except OSError:
        pass
    return out
def status_mb(pid, key):
    try:
        for line in open(f'/proc/{pid}/status'):
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
def is_step(pid, parent):
    try:
        return (int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]) == parent
                and b'disksched.run_dir' in open(f'/proc/{pid}/cmdline', 'rb').read())
    except (OSError, ValueError, IndexError):
        return False
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
peak, together = {}, 0.0
while p.poll() is None:
    pids = [p.pid]
    for q in pids:
        pids += children(q)
    together = max(together, sum(status_mb(q, 'VmRSS:') for q in pids))
    for q in pids:
        if q == p.pid or is_step(q, p.pid):
            peak[q] = max(peak.get(q, 0.0), status_mb(q, 'VmHWM:'))
    time.sleep(0.005)
print(json.dumps({'rc': p.returncode, 'stderr': p.stderr.read(), 'max_process_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  'together_mb': together, 'processes_mb': [peak.pop(p.pid, 0.0)] + [peak[q] for q in sorted(peak)]}))
"""
EXE = Path(sys.executable).parent / "disksched"


def _measure(tmp_path, n):
    cfg = tmp_path / f"open{n}.toml"
    cfg.write_text(BIG.format(n=n))
    out = tmp_path / f"out{n}"
    p = subprocess.run([sys.executable, "-c", MEASURE, str(EXE), "run", str(cfg), "--out", str(out), "--records"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)
    assert m["rc"] == 0, m["stderr"]
    return cfg, out, m


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads resident sizes from /proc")
def test_records_parquet_of_2m_requests_under_100_mb_equal_to_records(tmp_path):
    _, _, small = _measure(tmp_path, 20_000)
    cfg, out, big = _measure(tmp_path, 2_000_000)
    # Flat: the command, the child that simulates and the child that plots each hold no more at 2 M
    # requests than at 20 thousand (chunks of 16,384 rows, plots from histograms, a sample of at most
    # 200,000 points).
    assert len(big["processes_mb"]) == len(small["processes_mb"]) == 3, (big, small)
    assert all(b - s < 12 for b, s in zip(big["processes_mb"], small["processes_mb"])), (big, small)
    f = pq.ParquetFile(out / "records.parquet")
    assert f.metadata.num_rows == 2_000_000 and f.metadata.num_row_groups == -(-2_000_000 // 16_384)
    prov = json.loads(f.metadata.metadata[b"disksched"])
    assert prov["config"]["run"]["requests"] == 2_000_000 and prov["seed"] == 1
    from disksched import provenance

    assert provenance.read(out / "records.parquet") == prov
    want = disksched.run(cfg, records=True).records()
    got = pd.read_parquet(out / "records.parquet")
    # The file's `class` dictionary holds the names that occur (a Parquet dictionary page holds the values
    # written); `records()` has every class name as a category.
    assert list(got["class"].cat.categories) == ["best-effort"]
    got["class"] = got["class"].cat.set_categories(disksched.CLASS_NAMES)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert sorted(p.name for p in out.iterdir()) == ["lbn_time.png", "queue_depth.png", "records.parquet",
                                                     "response_cdf.png", "summary.json"]
    # The bound: no process of `run --out --records` at 2 M requests peaks at 100 MB resident, all
    # together under 140 MB.
    assert big["max_process_mb"] < 100 and big["together_mb"] < 140, big


def test_records_arrow_schema_is_the_one_records_gives():
    # records.parquet's Arrow schema is stored as bytes made from `records()`'s types (the Rust writer has no
    # Arrow layer): stale bytes would read `class` or an integer column back as another type.
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "records_arrow_schema.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_thinned_keeps_every_kth_row_for_the_smallest_power_of_two_k():
    from disksched.records import Thinned

    rng = np.random.default_rng(3)
    for n, points, chunks in ((1000, 64, 7), (1000, 1000, 3), (5, 8, 2), (4097, 256, 40)):
        t, lbn, w = rng.random(n), rng.integers(0, 10**9, n).astype(np.uint64), rng.random(n) < 0.3
        s = Thinned(points)
        for part in np.array_split(np.arange(n), chunks):
            s.add(t[part], lbn[part], w[part])
        k = 1
        while -(-n // k) > points:  # independently: the fewest rows kept, every k-th from the first
            k *= 2
        assert s.k == k and np.array_equal(s.t, t[::k]) and np.array_equal(s.lbn, lbn[::k]) and np.array_equal(s.w, w[::k])
        assert (s.reads, s.writes) == (int((~w).sum()), int(w.sum()))


def test_histogram_cdf_matches_the_values():
    rng = np.random.default_rng(5)
    ns = rng.exponential(5e6, 100_000).astype(np.int64) + 1
    h = Histogram()
    for part in np.array_split(ns, 7):
        h.add(part)
    x_ms, frac = h.cdf_ms()
    # Each bin's cumulative fraction is the share of values at or below its upper edge (bins 0.23 % wide).
    for q in (0.1, 0.5, 0.9, 0.99):
        i = np.searchsorted(frac, q)
        exact = np.quantile(ns, q) / 1e6
        assert abs(x_ms[i] - exact) <= exact * 0.0024 + 1e-6
    assert h.max_ns == ns.max() and h.counts.sum() == len(ns)


def test_queue_depth_sums_give_the_exact_time_weighted_mean():
    from disksched.records import Depth

    r = disksched.run({"seed": 2, "disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"queue_threshold": 4},
                       "workload": {"kind": "open", "interarrival_ms": 6.0, "size_kb": 8.0}, "run": {"requests": 5000}},
                      records=True)
    df = r.records()
    enter, leave = df.arrival_ns.to_numpy() / 1e9, df.done_ns.to_numpy() / 1e9
    d = Depth()
    for part in np.array_split(np.arange(len(df)), 9):
        d.add(enter[part], leave[part])
    mid, mean, peak, overall, top = d.curve(bins=50)
    # Independently: the depth is a step function; integrate it exactly from the sorted events.
    t = np.concatenate([enter, leave])
    step = np.concatenate([np.ones(len(enter)), -np.ones(len(leave))])
    order = np.lexsort((step, t))
    t, depth = t[order], np.cumsum(step[order])
    integral = np.sum(depth[:-1] * np.diff(t))
    assert overall == pytest.approx(integral / (t[-1] - enter.min()), rel=1e-9)
    assert 0 < top <= depth.max()  # the largest depth at the fine bin edges: a sample of the true maximum
    half = (mid[1] - mid[0]) / 2
    lo, hi = mid[10] - half, mid[10] + half
    inside = np.clip(np.minimum(leave, hi) - np.maximum(enter, lo), 0, None).sum()
    assert mean[10] == pytest.approx(inside / (hi - lo), rel=1e-9)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads resident sizes from /proc")
def test_run_out_with_series_under_100_mb_and_csvs_as_pandas_writes_them(tmp_path):
    out = tmp_path / "qos"
    p = subprocess.run([sys.executable, "-c", MEASURE, str(EXE), "run", str(ROOT / "examples/qos.toml"), "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    m = json.loads(p.stdout)
    assert m["rc"] == 0, m["stderr"]
    # series.csv, rates.csv and throughput.png are made without pandas (with it the plotting process took 155 MB).
    assert m["max_process_mb"] < 100, m
    r = disksched.run(ROOT / "examples/qos.toml")
    for name, df in (("series.csv", r.series()), ("rates.csv", r.rates())):
        head, table = (out / name).read_text().split("\n", 1)
        assert head.startswith("# disksched: ") and table == df.to_csv(index=False)


def test_csv_writes_what_pandas_writes(tmp_path):
    from disksched.records import _csv

    cols = {"n": np.array([1, 2, 3], np.uint32), "name": ["a", "b,c", 'd"e'],
            "x": np.array([0.1, np.nan, 1e16]), "y": np.array([-0.0, np.inf, 2.0 ** -30])}
    _csv(str(tmp_path / "t.csv"), cols, "# h\n")
    assert (tmp_path / "t.csv").read_text() == "# h\n" + pd.DataFrame(cols).to_csv(index=False)


def test_sum_by_is_pandas_groupby_sum_to_the_last_bit():
    from disksched.plots import _sum_by

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"k": rng.integers(0, 5, 10_000).astype(float),
                       "v": rng.random(10_000) * 10.0 ** rng.integers(-8, 8, 10_000)})
    want = df.groupby("k", as_index=False).v.sum()
    keys, sums = _sum_by(df.k.to_numpy(), df.v.to_numpy())
    assert np.array_equal(keys, want.k.to_numpy()) and np.array_equal(sums, want.v.to_numpy())

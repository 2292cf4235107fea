"""`run --records`: records.parquet streamed in chunks, with flat memory, equal to `records()`."""

import json
import subprocess
import sys

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

# In a child: what `disksched run --out --records` imports, its resident size then, the run, the peak.
MEASURE = """
import json, sys
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key + ':'):
            return int(line.split()[1]) / 1024
import disksched.cli, pyarrow.parquet, matplotlib.pyplot
base = status('VmRSS')
sys.argv = ['disksched', 'run', sys.argv[1], '--out', sys.argv[2], '--records']
try:
    disksched.cli.main()
except SystemExit as e:
    assert not e.code, e.code
print(json.dumps({'base_mb': base, 'peak_mb': status('VmHWM'), 'pandas': 'pandas' in sys.modules}))
"""


def _measure(tmp_path, n):
    cfg = tmp_path / f"open{n}.toml"
    cfg.write_text(BIG.format(n=n))
    out = tmp_path / f"out{n}"
    p = subprocess.run([sys.executable, "-c", MEASURE, str(cfg), str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return cfg, out, json.loads(p.stdout.strip().splitlines()[-1])


def test_records_parquet_of_2m_requests_flat_memory_equal_to_records(tmp_path):
    cfg, out, big = _measure(tmp_path, 2_000_000)
    _, _, small = _measure(tmp_path, 20_000)
    # The run adds under 100 MB to what the process holds after its imports, and no more
    # at 2 M requests than at 20 thousand (chunks of 65,536 rows; plots from histograms).
    assert big["peak_mb"] - big["base_mb"] < 100, big
    assert big["peak_mb"] - small["peak_mb"] < 25, (big, small)
    assert not big["pandas"]
    f = pq.ParquetFile(out / "records.parquet")
    assert f.metadata.num_rows == 2_000_000 and f.metadata.num_row_groups == -(-2_000_000 // 65_536)
    prov = json.loads(f.schema_arrow.metadata[b"disksched"])
    assert prov["config"]["run"]["requests"] == 2_000_000 and prov["seed"] == 1
    want = disksched.run(cfg, records=True).records()
    got = pd.read_parquet(out / "records.parquet")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got["class"].cat.categories) == ["best-effort", "real-time", "background"]


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

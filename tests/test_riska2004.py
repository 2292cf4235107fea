"""riska2004's set-up pieces: the trace's source disk read from its header, the trace replay sped up to the paper's
load, and the crossover of two response-time tails (Figs. 5/6)."""

import numpy as np

import disksched
from disksched.reproductions import riska2004 as r


def test_the_source_disk_is_the_trace_headers_hp335h_and_holds_every_request():
    # nspt 113 x ntpc 8 x ncyl 1449 sectors of 256 bytes, in 512-byte blocks.
    assert r.source_blocks() == 113 * 8 * 1449 * 256 // 512
    cfg = r._trace("fcfs", "fcfs", 1, 5000, 0, 1, 1.0)
    cfg["workload"]["map"] = "none"
    del cfg["workload"]["source_blocks"]
    lbn = disksched.run(cfg, records=True).records().lbn.to_numpy()
    assert lbn.max() < r.source_blocks()


def test_the_trace_is_sped_up_to_25_outstanding_on_average_and_its_window_comes_from_the_seed():
    n, skip = 3000, 1234
    speed = r.trace_speed(n, skip, 1)
    assert speed > 1
    df = disksched.run(r._trace("fcfs", "fcfs", 1, n, skip, 1, speed), records=True).records()
    assert abs(r.outstanding(df) - r.TRACE_OUTSTANDING) < 0.03 * r.TRACE_OUTSTANDING
    later = disksched.run(r._trace("fcfs", "fcfs", 1, n, skip + 1, 1, speed), records=True).records()
    assert later.lbn.iloc[0] == df.lbn.iloc[1]  # skip_requests: the window starts one request later


def test_faster_share_finds_where_the_tails_cross():
    rng = np.random.default_rng(1)
    fcfs = rng.uniform(90, 110, 10_000)
    assert r.faster_share(fcfs, fcfs) == 0  # the same distribution is faster nowhere
    sptf = np.concatenate([rng.uniform(0, 50, 9_000), rng.uniform(200, 300, 1_000)])
    assert 89 <= r.faster_share(sptf, fcfs) <= 90

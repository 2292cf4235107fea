"""Traffic shaping from Python: time-series DataFrames, shaper overrides."""

import json

import pytest

import disksched
from conftest import cli


def _cfg(shaper=None, seconds=20, stream_mb_per_s=2.048, readers=4):
    """A 2.048 MB/s stream of 64 KB reads (one every 32 ms) beside greedy 8 KB readers, on the Atlas 10K."""
    clients = [{"kind": "stream", "mb_per_s": stream_mb_per_s, "request_kb": 64, "start_lbn": 0, "class": "real-time"}]
    if readers:
        clients.append({"kind": "closed", "clients": readers, "think_time_ms": 0, "size_kb": 8, "read_fraction": 1.0})
    host = {"scheduler": "clook", "queue_threshold": 1}
    if shaper is not None:
        host["shaper"] = shaper
    return {"seed": 4, "disk": {"model": "atlas10k"}, "host": host, "workload": {"kind": "mix", "clients": clients},
            "run": {"requests": 10_000_000, "duration_ms": seconds * 1000, "series_window_ms": 1000}}


def test_series_dataframe_of_a_stream_alone():
    r = disksched.run(_cfg(readers=0))
    df = r.series()
    assert list(df.columns) == ["client", "class", "window", "time_s", "mb_per_s", "requests", "deadline_requests", "missed"]
    assert (df["class"] == "real-time").all() and (df.client == 0).all()
    assert df.window.tolist() == list(range(len(df))) and (df.time_s == df.window * 1.0).all()
    # 31.25 requests of 65536 B per second: 31 or 32 per full window, 2.048 MB/s on average.
    full = df[(df.window >= 1) & (df.window < 19)]
    assert full.requests.isin([31, 32]).all()
    assert full.mb_per_s.mean() == pytest.approx(2.048, rel=0.02)
    assert (df.mb_per_s * 1e6 == df.requests * 65536).all()
    assert df.missed.sum() == 0 and df.deadline_requests.sum() == df.requests.sum()
    # No shaper: no rate samples.
    assert len(r.rates()) == 0


def test_rates_and_overrides():
    base = _cfg({"policy": "fixed", "best-effort": {"rate_per_s": 40}})
    r = disksched.run(base)
    rates = r.rates()
    assert list(rates.columns) == ["time_s", "name", "value"]
    be = rates[rates.name == "best-effort.rate_per_s"]
    assert (be.value == 40).all() and be.time_s.tolist()[:3] == [0.0, 1.0, 2.0]
    df = r.series()
    readers = df[df.client > 0].groupby("window").requests.sum()
    # At most 40 per second plus the one-request burst.
    assert readers.max() <= 41 and readers.iloc[1:-1].mean() > 35
    # Overrides from Python: a tighter rate, then the feedback policy.
    r = disksched.run(base, overrides={"host.shaper.best-effort.rate_per_s": 10})
    assert r.series().query("client > 0").groupby("window").requests.sum().max() <= 11
    r = disksched.run(base, overrides={"host.shaper.policy": "optimistic", "host.shaper.set.cut_factor": 0.8})
    assert r.counters["scheduler"]["host.shaper_rate_cuts"] >= 0
    assert set(r.rates().name) == {"best-effort.rate_per_s"}


def test_boosting_helps_the_stream():
    # Beside eight greedy readers under C-LOOK the stream gets a fraction of its 2.048 MB/s;
    # with feedback shaping of the readers it gets all of it (full windows 1..19 s).
    plain = disksched.run(_cfg(readers=8))
    shaped = disksched.run(_cfg({"policy": "optimistic", "best-effort": {"rate_per_s": 300}}, readers=8))
    got = [r.series().query("client == 0 and 1 <= window < 19").mb_per_s.mean() for r in (plain, shaped)]
    assert got[0] < 0.5 * 2.048 and got[1] == pytest.approx(2.048, rel=0.03)


def test_bad_shaper_settings_are_one_line_errors(tmp_path):
    with pytest.raises(disksched.DiskschedError, match=r"^overrides host\.shaper\.gold\.rate_per_s: unknown key "
                                                       r"'host\.shaper\.gold'; nearest valid key: host\.shaper\.background"):
        disksched.run(_cfg(), overrides={"host.shaper.gold.rate_per_s": 1})
    with pytest.raises(disksched.DiskschedError, match="set run.series_window_ms"):
        disksched.run({**_cfg(), "run": {"requests": 10}}).series()
    cfg = tmp_path / "qos.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 100\n')
    p = cli("run", cfg, "--set", "host.shaper.best-effort.rate_per_s=-1")
    assert p.returncode == 2
    assert p.stderr == "error: host.shaper.best-effort.rate_per_s: -1 requests/s is out of range 0 or [0.001, 10000000]\n"
    p = cli("run", cfg, "--set", "host.shaper.policy=greedy")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "unknown policy 'greedy'" in p.stderr


def test_run_out_writes_series_and_throughput(tmp_path):
    cfg = tmp_path / "qos.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 3000\nseries_window_ms = 500\n')
    p = cli("run", cfg, "--out", tmp_path / "out", "--set", "host.shaper.best-effort.rate_per_s=50")
    assert p.returncode == 0, p.stderr
    # A provenance comment, then the table.
    head, table = (tmp_path / "out/series.csv").read_text().split("\n", 1)
    assert head.startswith("# disksched: ") and table.startswith("client,class,window,time_s,mb_per_s")
    assert (tmp_path / "out/throughput.png").stat().st_size > 10_000
    assert not (tmp_path / "out/tasks.csv").exists(), "no freeblock tasks, no tasks.csv"


def test_run_out_writes_the_freeblock_tasks_progress(tmp_path):
    import pandas as pd

    cfg = tmp_path / "fb.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\nscheduler = "sptf"\n[workload]\nkind = "oltp"\n[run]\nrequests = 3000\n'
                   'series_window_ms = 500\n[freeblock]\n[[freeblock.tasks]]\nname = "scan"\n')
    p = cli("run", cfg, "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    t = pd.read_csv(tmp_path / "out/tasks.csv", comment="#")
    assert list(t.columns) == ["task", "window", "time_s", "blocks", "done", "mb_per_s"]
    summary = json.loads((tmp_path / "out/summary.json").read_text())["summary"]["freeblock"]
    assert t["blocks"].sum() == t["done"].iloc[-1] == summary["tasks"][0]["blocks_done"] > 0

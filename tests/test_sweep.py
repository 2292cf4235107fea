"""Sweeps: the same table sequentially, on a local pool and on a Dask LocalCluster;
loss-free when a worker dies; resumable; provenance; the override syntax."""

import json
import os
import signal
import threading

import pandas as pd
import pytest

import disksched
from disksched import sweep_runner as sr

from conftest import ROOT, cli

CFG = ROOT / "examples/oltp.toml"
GRID = {"host.queue_threshold": [1, 8], "disk.scheduler": ["fcfs", "sptf"]}
SMALL = {"run.requests": 2000, "run.warmup_requests": 100}


def _figures(df):
    return df.drop(columns=["wall_s"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def sequential():
    return disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, workers=1)


def test_one_row_per_run_equal_to_single_runs(sequential):
    df = sequential
    assert len(df) == 8 and df.run_key.is_unique
    assert list(df.columns[:4]) == ["run_key", "host.queue_threshold", "disk.scheduler", "seed"]
    # Each row is the run of that grid point and seed by itself, bit for bit.
    for _, row in df.iterrows():
        point = {k: row[k] for k in GRID}
        r = disksched.run(CFG, seed=int(row.seed), overrides={**SMALL, **point})
        assert row["host_response_ms.mean"] == r.summary["host_response_ms"]["mean"]
        assert row["iops"] == r.summary["iops"] and row["mean_seek_ms"] == r.summary["mean_seek_ms"]
    # Seeds are the config's and the next; different seeds give different runs.
    assert sorted(df.seed.unique()) == [1, 2]
    assert df.groupby(list(GRID))["host_response_ms.mean"].nunique().eq(2).all()


def test_local_pool_and_dask_local_cluster_give_the_same_table(sequential, monkeypatch):
    pool = disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, workers=2)
    pd.testing.assert_frame_equal(_figures(pool), _figures(sequential), check_exact=True)
    client, cluster = sr.connect("local", 2)
    try:
        assert len(client.scheduler_info()["workers"]) == 2
        on_dask = disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, client=client)
        # Several runs per Dask task: 8 runs in tasks of 3, 3 and 2.
        monkeypatch.setattr(sr, "DASK_TASKS_PER_THREAD", 1)
        monkeypatch.setattr(sr, "DASK_BATCH_RUNS", 3)
        batched = disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, client=client)
    finally:
        client.close()
        cluster.close()
    pd.testing.assert_frame_equal(_figures(on_dask), _figures(sequential), check_exact=True)
    pd.testing.assert_frame_equal(_figures(batched), _figures(sequential), check_exact=True)


def _kill_a_worker_after_first_result(kill):
    fired = threading.Event()

    def progress(done, total):
        if done >= 1 and not fired.is_set():
            fired.set()
            kill()
    return progress, fired


def test_a_worker_killed_mid_sweep_leaves_every_run_once(tmp_path, monkeypatch):
    import psutil

    grid = {"host.queue_threshold": [1, 2, 4, 8, 16, 32]}
    over = {"run.requests": 20000}
    want = disksched.sweep(CFG, grid, seeds=1, overrides=over, workers=1)

    def kill():  # a pool worker process of this test (spawned: a child running multiprocessing's spawn main)
        kids = [p for p in psutil.Process().children() if "multiprocessing" in " ".join(p.cmdline())
                and "resource_tracker" not in " ".join(p.cmdline())]
        assert kids, "no pool worker to kill"
        os.kill(kids[0].pid, signal.SIGKILL)

    progress, fired = _kill_a_worker_after_first_result(kill)
    got = disksched.sweep(CFG, grid, seeds=1, overrides=over, workers=2, out=tmp_path / "pool", progress=progress)
    assert fired.is_set()
    assert got.run_key.is_unique and len(got) == len(want)
    pd.testing.assert_frame_equal(_figures(got), _figures(want), check_exact=True)
    assert len(list((tmp_path / "pool/runs").glob("*.json"))) == len(want)

    client, cluster = sr.connect("local", 2)
    try:
        pids = list(client.run(os.getpid).values())
        monkeypatch.setattr(sr, "DASK_TASKS_PER_THREAD", 2)  # 6 runs in 3 tasks of 2: the killed worker's task reruns
        progress, fired = _kill_a_worker_after_first_result(lambda: os.kill(pids[0], signal.SIGKILL))
        got = disksched.sweep(CFG, grid, seeds=1, overrides=over, client=client, progress=progress)
    finally:
        client.close()
        cluster.close()
    assert fired.is_set()
    assert got.run_key.is_unique and len(got) == len(want)
    pd.testing.assert_frame_equal(_figures(got), _figures(want), check_exact=True)


def test_an_interrupted_sweep_resumed_runs_only_the_missing_runs(tmp_path, monkeypatch, sequential):
    out = tmp_path / "sweep"
    ran = []
    real = sr.execute

    def counting(spec):
        ran.append(spec.key)
        return real(spec)

    monkeypatch.setattr(sr, "execute", counting)

    def interrupt(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, workers=1, out=out, progress=interrupt)
    assert len(ran) == 3 and len(list((out / "runs").glob("*.json"))) == 3
    first = set(ran)
    ran.clear()
    df = disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, workers=1, out=out)
    assert len(ran) == 5 and not first & set(ran)
    pd.testing.assert_frame_equal(_figures(df), _figures(sequential), check_exact=True)
    # Nothing left to do; a third seed runs only its own runs.
    ran.clear()
    disksched.sweep(CFG, GRID, seeds=2, overrides=SMALL, workers=1, out=out)
    assert ran == []
    df3 = disksched.sweep(CFG, GRID, seeds=3, overrides=SMALL, workers=1, out=out)
    assert len(ran) == 4 and len(df3) == 12
    # The tables say what produced them.
    prov = json.loads((out / "sweep.json").read_text())["provenance"]
    assert prov["grid"] == GRID and prov["seeds"] == [1, 2, 3] and prov["overrides"] == SMALL
    assert prov["disksched_version"] == disksched.__version__
    from disksched import provenance

    for f in ("runs.parquet", "points.parquet", "runs.csv", "points.csv"):
        assert provenance.read(out / f) == prov, f
    runs = pd.read_csv(out / "runs.csv", comment="#")
    assert len(runs) == 12


def test_points_have_mean_and_t_interval(sequential):
    pts = sr.aggregate(sequential, list(GRID))
    assert len(pts) == 4 and (pts.runs == 2).all()
    row, g = pts.iloc[0], sequential[(sequential["host.queue_threshold"] == 1) & (sequential["disk.scheduler"] == "fcfs")]
    a, b = g["host_response_ms.mean"]
    mean, half = (a + b) / 2, 12.706 * abs(a - b) / 2 ** 0.5 / 2 ** 0.5  # t_{0.975,1} * sd / sqrt(2), sd = |a-b|/sqrt(2)
    assert row["host_response_ms.mean_mean"] == pytest.approx(mean)
    assert row["host_response_ms.mean_ci_high"] - mean == pytest.approx(half)


def test_grid_with_an_unknown_key_names_the_nearest():
    with pytest.raises(disksched.DiskschedError, match=r"^grid host\.queue_treshold: unknown key 'host\.queue_treshold'; "
                                                       r"nearest valid key: host\.queue_threshold "):
        sr.plan(CFG, {"host.queue_treshold": [1, 2]})
    with pytest.raises(disksched.DiskschedError, match="zip: every key needs the same number of values"):
        sr.plan(CFG, zip={"host.queue_threshold": [1, 2], "disk.scheduler": ["fcfs"]})


def test_sweep_cli_resumes_plots_and_shows_provenance(tmp_path):
    out = tmp_path / "s"
    args = ["sweep", CFG, "--grid", "host.queue_threshold=1,8", "--zip", "disk.scheduler=fcfs,sptf",
            "--zip", "disk.count=1,2", "--set", "run.requests=1500", "--seeds", "2", "--out", out, "--workers", "2"]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    assert "8 runs (8 run now, 0 already done)" in " ".join(p.stdout.split())
    p = cli(*args)
    assert "8 runs (0 run now, 8 already done)" in " ".join(p.stdout.split()), p.stdout
    runs = pd.read_parquet(out / "runs.parquet")
    assert set(zip(runs["disk.scheduler"], runs["disk.count"])) == {("fcfs", 1), ("sptf", 2)}
    p = cli("sweep-plot", out, "--y", "iops", "--x", "host.queue_threshold")
    assert p.returncode == 0, p.stderr
    png = out / "iops_vs_host.queue_threshold.png"
    from disksched import provenance

    assert provenance.read(png)["grid"] == {"host.queue_threshold": [1, 8]}
    p = cli("sweep-plot", out, "--y", "iopz", "--x", "host.queue_threshold")
    assert p.returncode == 2 and "nearest: iops" in p.stderr
    p = cli("show-run", out, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["zip"] == {"disk.scheduler": ["fcfs", "sptf"], "disk.count": [1, 2]}


def test_run_out_carries_provenance(tmp_path):
    out = tmp_path / "r"
    p = cli("run", CFG, "--seed", "7", "--set", "run.requests=1000", "--set", "host.scheduler=sstf", "--out", out)
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    prov = s["provenance"]
    assert prov["seed"] == 7 and prov["config"]["seed"] == 7
    assert prov["overrides"] == {"run.requests": 1000, "host.scheduler": "sstf"}
    assert prov["config"]["host"]["scheduler"] == "sstf" and prov["config"]["run"]["requests"] == 1000
    # The resolved config runs again to the same summary.
    again = disksched.run(prov["config"])
    assert again.summary == s["summary"]
    from disksched import provenance

    assert provenance.read(out / "response_cdf.png") == prov
    p = cli("show-run", out)
    assert p.returncode == 0 and "override host.scheduler" in p.stdout and '"sstf"' in p.stdout


def test_reproduction_seeds_on_dask_give_the_same_metrics(tmp_path):
    from disksched import reproductions as rep

    seq = rep.reproduce("rizzo2009", tmp_path / "a", True, 2, log=lambda m: None)
    client, cluster = sr.connect("local", 2)
    try:
        par = rep.reproduce("rizzo2009", tmp_path / "b", True, 2, log=lambda m: None, client=client)
    finally:
        client.close()
        cluster.close()
    assert par.metrics == seq.metrics and [c["mean"] for c in par.claims] == [c["mean"] for c in seq.claims]


def test_a_plugin_scheduler_sweeps_on_workers_that_never_see_its_file(tmp_path):
    from disksched.plugins import load_source

    src = (ROOT / "examples/plugins/capped_sptf.py").read_text()
    f = tmp_path / "capped.py"
    f.write_text(src)
    grid = {"host.set.max_wait_ms": [0, 60000]}
    over = {**SMALL, "host.scheduler": "capped_sptf", "host.queue_threshold": 8}
    specs = sr.plan(CFG, grid, overrides=over, plugins=[f])
    f.unlink()  # the workers load the text each run carries
    df = pd.DataFrame(sr.run_specs(specs, workers=2))
    scheds, _ = load_source("capped.py", src)
    for _, row in df.iterrows():
        point = {"host.set.max_wait_ms": int(row["host.set.max_wait_ms"])}
        r = disksched.run(CFG, seed=int(row.seed), overrides={**over, **point}, schedulers=scheds)
        assert row["host_response_ms.mean"] == r.summary["host_response_ms"]["mean"]
    # A cap of 0 is FCFS, one of 60 s SPTF.
    assert df["host_response_ms.mean"].nunique() == 2
    # The plug-in's text is part of each run's key: edited, every run is new.
    f.write_text(src + "\n# edited\n")
    assert {s.key for s in sr.plan(CFG, grid, overrides=over, plugins=[f])}.isdisjoint(s.key for s in specs)


def test_sweep_cli_plugin(tmp_path):
    plugin = ROOT / "examples/plugins/capped_sptf.py"
    args = ["sweep", CFG, "--out", tmp_path / "s", "--workers", "2", "--grid", "host.set.max_wait_ms=0,60000",
            "--set", "host.scheduler=capped_sptf", "--set", "run.requests=1000"]
    p = cli(*args, "--plugin", plugin)
    assert p.returncode == 0, p.stderr
    prov = json.loads((tmp_path / "s" / "sweep.json").read_text())["provenance"]
    assert prov["plugins"][0]["file"].endswith("capped_sptf.py") and len(prov["plugins"][0]["sha256"]) == 64
    # Without the plug-in the name is unknown: one line, exit 2.
    p = cli(*[a if a != tmp_path / "s" else tmp_path / "t" for a in args])
    assert p.returncode == 2 and "capped_sptf" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr

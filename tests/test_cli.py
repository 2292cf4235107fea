"""The command line: run, disks, schedulers, demo, bench, and user errors."""

import json
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import pytest

import disksched

from conftest import ROOT, cli


def test_run_prints_table_and_json(tmp_path):
    p = cli("run", ROOT / "examples/oltp.toml", "--seed", "5", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["requests"] == 200000 and s["host_response_ms"]["p99"] >= s["host_response_ms"]["p50"]
    p = cli("run", ROOT / "examples/oltp.toml", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "host response ms" in p.stdout
    summary = json.loads((tmp_path / "o/summary.json").read_text())
    assert summary["counters"]["completed"] == 200000
    assert (tmp_path / "o/response_cdf.png").stat().st_size > 10_000
    # No temporary files left behind.
    assert sorted(f.name for f in (tmp_path / "o").iterdir()) == ["lbn_time.png", "queue_depth.png",
                                                                  "response_cdf.png", "summary.json"]
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]


def test_user_errors_are_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[disk]\nmodel = "atlas10k"\n[host]\nscheduler = "quantum-leap"\n[workload]\nkind = "oltp"\n')
    syntax = tmp_path / "syntax.toml"
    syntax.write_text('[disk]\nmodel = "atlas10k"\n[workload\nkind = "oltp"\n')
    for args, want in [
        (["run", bad], "unknown scheduler 'quantum-leap'"),
        (["run", tmp_path / "missing.toml"], "no such config file"),
        (["run", syntax], "syntax.toml"),
        (["disks", "show", "floppy"], "unknown disk 'floppy'"),
    ]:
        p = cli(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and want in lines[0], p.stderr


def test_dotted_set_overrides_the_config():
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "host.scheduler=sptf_sw", "--set", "host.set.window_pct=30",
            "--json")
    assert p.returncode == 0, p.stderr
    fcfs = json.loads(cli("run", ROOT / "examples/oltp.toml", "--set", "host.scheduler=fcfs", "--json").stdout)
    assert json.loads(p.stdout)["host_response_ms"]["mean"] < fcfs["host_response_ms"]["mean"]
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "host.scheduler=sptf_sw", "--set", "host.set.window_pct=5000")
    assert p.returncode == 2 and "host.set.window_pct: 5000 % is out of range [0, 1000]" in p.stderr
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "oops")
    assert p.returncode == 2 and "expected key.path=value" in p.stderr


def test_a_set_value_of_the_wrong_type_names_its_key():
    # The overrides reach the core as JSON with no lines: the error names the override instead.
    for setting, expected in [("run.requests=-5", "integer `-5`, expected u64"),
                              ("host.queue_threshold=abc", 'string "abc", expected u32'),
                              ("run.requests=2.5", "floating point `2.5`, expected u64")]:
        p = cli("run", ROOT / "examples/oltp.toml", "--set", setting)
        key = setting.split("=")[0]
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert p.stderr.startswith(f"error: --set {key}="), p.stderr
        assert expected in p.stderr, p.stderr


def test_unknown_dotted_key_names_the_nearest_key():
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "host.schedular=rr")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("error: --set host.schedular: unknown key 'host.schedular'; "
                               "nearest valid key: host.scheduler ("), p.stderr
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "hots.queue_threshold=4")
    assert p.returncode == 2 and "nearest valid key: host (" in p.stderr, p.stderr
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "host.scheduler=rr", "--set", "host.set.wait_msec=5")
    assert p.returncode == 2 and p.stderr.rstrip().endswith("; nearest: wait_ms"), p.stderr


def test_disks_and_schedulers():
    p = cli("disks", "list")
    assert p.returncode == 0 and "atlas10k" in p.stdout
    p = cli("disks", "show", "atlas10k")
    assert p.returncode == 0 and "17966953" in p.stdout and "10042" in p.stdout
    p = cli("disks", "show", "atlas10k", "--toml")
    assert p.returncode == 0 and "rpm = 10025.0" in p.stdout
    p = cli("schedulers")
    assert p.returncode == 0 and all(n in p.stdout for n in ["fcfs", "sstf", "clook", "sptf", "mq_deadline", "rr", "wait_ms"])


def test_demo_writes_table_and_plots(tmp_path):
    p = cli("demo", "--requests", "2000", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "demo.json").read_text())
    assert {(r["scheduler"], r["threshold"]) for r in rows} == {(s, t) for s in ["fcfs", "clook", "sstf", "sptf"] for t in [1, 16]}
    by = {(r["scheduler"], r["threshold"]): r["mean_ms"] for r in rows}
    # Threshold 1 leaves the drive no choice; at 16 positional scheduling pays.
    assert by[("sptf", 16)] < by[("fcfs", 16)]
    assert by[("sptf", 1)] == by[("fcfs", 1)]
    for f in ["demo_mean_response.png", "demo_response_cdf.png"]:
        assert (tmp_path / f).stat().st_size > 10_000


def test_bench_json_has_every_run():
    p = cli("bench", "--json", "--requests", "2000", "--sweep-runs", "8")
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)
    sweeps = [r for r in runs if r["workload"] == "sweep"]
    assert [(r["runner"], r["workers"], r["runs"]) for r in sweeps] == [
        ("local pool", 1, 8), ("local pool", 2, 8), ("dask LocalCluster", 2, 8)]
    assert all(r["runs_per_s"] > 0 and r["requests_per_run"] == 20_000 and r["driver_cpu_s"] >= 0 for r in sweeps)
    startup = [r for r in runs if r["workload"] == "startup"]
    assert [r["command"] for r in startup] == ["validate atlas10k", "run of 10 requests"]
    assert all(0 < r["cpu_s"] < 30 and r["repeats"] == 5 for r in startup)
    sims = [r for r in runs if r["workload"] not in ("dispatch", "parse", "hpl-replay", "sweep", "startup")]
    assert [(r["workload"], r["scheduler"]) for r in sims] == [
        ("open", "fcfs"), ("open", "clook"), ("open", "sstf"), ("open", "sptf"), ("open", "py_fcfs"), ("open", "py_sptf"),
        ("closed16", "fcfs"), ("closed16", "sptf"), ("closed16", "py_fcfs"), ("closed16", "py_sptf"),
        ("closed32", "sptf"), ("closed128", "sptf"),
        ("oltp+freeblock", "sptf")]
    for r in sims:
        assert r["requests"] >= 1000 and r["wall_s"] > 0 and r["requests_per_s"] > 0 and r["peak_rss_mb"] > 0
    assert sims[-1]["planner_us_per_opportunity"] > 0
    dispatch = [r for r in runs if r["workload"] == "dispatch"]
    assert {(r["scheduler"], r["depth"]) for r in dispatch} >= {("sptf", 16), ("sptf", 256), ("sptf", 1024),
                                                                ("py_fcfs", 16), ("py_sptf", 16)}
    assert all(r["decisions_per_s"] > 0 for r in dispatch)
    assert {(r["scheduler"], r.get("targets")) for r in dispatch} >= {("hrs", 4096), ("ecs", 4096)}
    parse = {r["format"]: r["lines_per_s"] for r in runs if r["workload"] == "parse"}
    assert set(parse) >= {"msr", "spc", "alibaba", "tencent"} and all(v > 0 for v in parse.values())
    hpl = [r for r in runs if r["workload"] == "hpl-replay"]
    assert len(hpl) == 1 and hpl[0]["requests"] == 44519


def test_the_closed16_bench_rows_keep_16_requests_outstanding():
    from disksched import bench

    for sched in ("fcfs", "py_sptf"):
        cfg = next(c for w, s, c in bench.bench_configs(2000) if (w, s) == ("closed16", sched))
        sim = disksched.Simulation(cfg, schedulers=bench._plugin_classes())
        for t in range(50, 2000, 37):
            sim.run(until_ms=t)
            # One in service at the drive, the other 15 held by the host scheduler.
            assert sim.queues() == {"host": 15, "disk": [0]}, t


def test_freeblock_run_reports_free_bandwidth():
    p = cli("run", ROOT / "examples/freeblock.toml", "--json")
    assert p.returncode == 0, p.stderr
    f = json.loads(p.stdout)["freeblock"]
    assert f["free_blocks"] > 0 and f["free_mb_per_s"] > 0 and f["tasks"][0]["name"] == "scan"
    p = cli("run", ROOT / "examples/freeblock.toml")
    assert "free bandwidth" in p.stdout and "task scan" in p.stdout


def test_validate_prints_demerit_and_writes_plot(tmp_path):
    from conftest import SHARED

    p = cli("validate", "--disk", "atlas10k", "--trace", SHARED / "disksim/atlas10k.trace", "--json", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)
    assert v["requests"] == 10000 and 0 < v["rms_ms"] <= 0.268 and 0 < v["rms_exact_ms"] <= 0.268
    assert abs(v["measured_mean_ms"] - 3.893) < 0.001  # the trace's own column 5
    assert (tmp_path / "validation_cdf.png").stat().st_size > 10_000
    p = cli("validate", "--disk", "atlas10k", "--trace", tmp_path / "nope.trace")
    assert p.returncode == 2 and "no such trace file" in p.stderr


def test_validate_json_imports_neither_numpy_nor_rich():
    """The summary alone needs no per-request arrays and no table: numpy's import
    was most of `validate`'s start-up, and rich's a large share of what was left
    (issue 35: no slower than DiskSim's own validation run; docs/performance.md)."""
    import subprocess
    import sys

    code = ("import sys; from disksched import cli; sys.argv = ['disksched', 'validate', '--disk', 'atlas10k', "
            "'--trace', 'atlas10k', '--json']\ntry:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('numpy', 'rich') if m in sys.modules], file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert json.loads(p.stdout)["requests"] == 10000, p.stderr
    assert p.stderr.strip().splitlines()[-1] == "[]"
    # The table still prints (rich, loaded on first use).
    table = cli("validate", "--disk", "atlas10k", "--trace", "atlas10k")
    assert table.returncode == 0 and "demerit" in table.stdout and "─" in table.stdout, table.stderr


def test_disks_import_writes_a_spec_that_runs(tmp_path):
    from conftest import SHARED

    out = tmp_path / "c9.toml"
    p = cli("disks", "import", SHARED / "disksim/cheetah9LP.parv", "-o", out, "--name", "mycheetah")
    assert p.returncode == 0, p.stderr
    assert 'name = "mycheetah"' in out.read_text() and "cylinders = 6962" in out.read_text()
    cfg = tmp_path / "run.toml"
    cfg.write_text(f'[disk]\nmodel = "{out}"\n[workload]\nkind = "oltp"\n[run]\nrequests = 500\n')
    p = cli("run", cfg, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["requests"] == 500
    bad = tmp_path / "bad.diskspecs"
    bad.write_text("disksim_disk X {\n  Model = source nothere.model,\n}\n")
    p = cli("disks", "import", bad, "-o", tmp_path / "x.toml")
    assert p.returncode == 2 and "bad.diskspecs:2:" in p.stderr and not (tmp_path / "x.toml").exists()


def test_datasheet_disk_runs(tmp_path):
    out = tmp_path / "d.toml"
    args = ["disks", "datasheet", "--name", "wu", "--capacity-gb", "18", "--rpm", "7200", "--outer-mb-s", "27.6",
            "--inner-mb-s", "16", "--track-to-track-ms", "1", "--average-seek-ms", "8.5", "--full-stroke-ms", "17",
            "--cache-kb", "2048", "-o", out]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    p = cli("disks", "show", out)
    assert p.returncode == 0 and "27.6" in p.stdout  # outer media rate, MB/s
    # A cache makes a write-back drive (current drives ship with the write cache on); --no-write-cache turns it off.
    assert tomllib.loads(out.read_text())["controller"]["fast_write_level"] == 2
    p = cli(*args[:-1], tmp_path / "wt.toml", "--no-write-cache")
    assert p.returncode == 0, p.stderr
    assert tomllib.loads((tmp_path / "wt.toml").read_text())["controller"].get("fast_write_level", 0) == 0
    bad = [a if a != "16" else "40" for a in args[:-1]] + [tmp_path / "bad.toml"]
    p = cli(*bad)
    assert p.returncode == 2 and "inner_mb_s: 40 must not exceed outer_mb_s (27.6)" in p.stderr
    assert not (tmp_path / "bad.toml").exists()


def test_external_freeblock_example_runs_and_bad_noise_is_one_line(tmp_path):
    p = cli("run", ROOT / "examples/freeblock_external.toml", "--json")
    assert p.returncode == 0, p.stderr
    e = json.loads(p.stdout)["freeblock"]["external"]
    assert e["background_commands"] + e["merged_reads"] > 0
    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "examples/freeblock_external.toml").read_text().replace("seek_jitter_us = 20", "seek_jitter_us = 5000"))
    p = cli("run", bad)
    assert p.returncode == 2
    assert "freeblock.noise.seek_jitter_us: 5000 us is out of range [0, 1000]" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_ctl_sched_and_set_choose_the_controller_queue():
    p = cli("run", ROOT / "examples/controller.toml", "--set", "controller.scheduler=mq_deadline",
            "--set", "controller.set.fifo_batch=8", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["max_controller_queue"] > 16
    p = cli("run", ROOT / "examples/oltp.toml", "--json")
    assert p.returncode == 0 and "controller" not in p.stdout
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "controller.scheduler=rr", "--set", "controller.set.wait_ms=99")
    assert p.returncode == 2 and p.stderr.strip() == "error: controller.set.wait_ms: 99 ms is out of range [0, 30]"


def test_bench_peak_rss_is_the_childs_own():
    # A child started by fork+exec keeps its parent's ru_maxrss; the figure must
    # not grow with what the parent holds.
    from disksched import bench

    cfg = bench.bench_configs(2000)[0][2]
    before = bench.run_isolated(cfg)["peak_rss_mb"]
    ballast = bytearray(300 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page
    after = bench.run_isolated(cfg)["peak_rss_mb"]
    del ballast
    assert after < before + 50, (before, after)
    assert after < 200


def test_disk_noise_and_seek_shapes_from_the_command_line(tmp_path):
    # [disk.noise] in any run: the summary reports the drive's noise and the exact belief's error.
    reads = tmp_path / "reads.toml"
    reads.write_text('[disk]\nmodel = "atlas10k"\n[host]\nscheduler = "sptf"\n'
                     '[workload]\nkind = "closed"\nclients = 4\nsize_kb = 4\nread_fraction = 1.0\n[run]\nrequests = 3000\n')
    base = ["run", reads]
    p = cli(*base, "--set", "disk.noise.seek_bias_us=150", "--set", "disk.noise.seek_jitter_us=0",
            "--set", "disk.noise.seek_tail_pct=0", "--json")
    assert p.returncode == 0, p.stderr
    n = json.loads(p.stdout)["disk_noise"]
    assert abs(n["seek_error_mean_us"] - 150) < 1 and n["commands"] > 2900
    assert "disk_noise" not in json.loads(cli(*base, "--json").stdout)
    assert "belief error" in cli(*base, "--set", "disk.noise.seek_bias_us=150").stdout
    # A seek-curve shape and a sampled curve at the host.
    p = cli(*base, "--set", "host.belief.seek_sample_points=4", "--set", "host.belief.seek_error_points=[[1, 10], [500, -5]]", "--json")
    assert p.returncode == 0, p.stderr
    for args, want in [
        (["--set", "disk.noise.seek_bias_us=5000"], "disk.noise.seek_bias_us: 5000 us is out of range [-1000, 1000]"),
        (["--set", "host.belief.seek_sample_points=1"], "host.belief.seek_sample_points: 1 is out of range 0 or [2, 100000]"),
        (["--set", "host.belief.seek_error_points=[[50, 1], [5, 2]]"], "host.belief.seek_error_points[1]"),
    ]:
        p = cli(*base, *args)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and want in lines[0], p.stderr

"""The command line: run, disks, schedulers, demo, bench, and user errors."""

import json

import pytest

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


def test_sched_and_set_override_the_config():
    p = cli("run", ROOT / "examples/oltp.toml", "--sched", "sptf_sw", "--set", "window_pct=30", "--json")
    assert p.returncode == 0, p.stderr
    fcfs = json.loads(cli("run", ROOT / "examples/oltp.toml", "--sched", "fcfs", "--json").stdout)
    assert json.loads(p.stdout)["host_response_ms"]["mean"] < fcfs["host_response_ms"]["mean"]
    p = cli("run", ROOT / "examples/oltp.toml", "--sched", "sptf_sw", "--set", "window_pct=5000")
    assert p.returncode == 2 and "host.set.window_pct: 5000 % is out of range [0, 1000]" in p.stderr
    p = cli("run", ROOT / "examples/oltp.toml", "--set", "oops")
    assert p.returncode == 2 and "expected key=number" in p.stderr


def test_disks_and_schedulers():
    p = cli("disks", "list")
    assert p.returncode == 0 and "atlas10k" in p.stdout
    p = cli("disks", "show", "atlas10k")
    assert p.returncode == 0 and "17938986" in p.stdout and "10042" in p.stdout
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
    p = cli("bench", "--json", "--requests", "2000")
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)
    sims = [r for r in runs if r["workload"] not in ("dispatch", "parse", "hpl-replay")]
    assert [(r["workload"], r["scheduler"]) for r in sims] == [
        ("open", "fcfs"), ("open", "clook"), ("open", "sstf"), ("open", "sptf"), ("closed32", "sptf"), ("closed128", "sptf"),
        ("oltp+freeblock", "sptf")]
    for r in sims:
        assert r["requests"] >= 1000 and r["wall_s"] > 0 and r["requests_per_s"] > 0 and r["peak_rss_mb"] > 0
    assert sims[-1]["planner_us_per_opportunity"] > 0
    dispatch = [r for r in runs if r["workload"] == "dispatch"]
    assert {(r["scheduler"], r["depth"]) for r in dispatch} >= {("sptf", 16), ("sptf", 256), ("sptf", 1024)}
    assert all(r["decisions_per_s"] > 0 for r in dispatch)
    assert {(r["scheduler"], r.get("targets")) for r in dispatch} >= {("hrs", 4096), ("ecs", 4096)}
    parse = {r["format"]: r["lines_per_s"] for r in runs if r["workload"] == "parse"}
    assert set(parse) >= {"msr", "spc", "alibaba", "tencent"} and all(v > 0 for v in parse.values())
    hpl = [r for r in runs if r["workload"] == "hpl-replay"]
    assert len(hpl) == 1 and hpl[0]["requests"] == 44519


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
    assert v["requests"] == 10000 and 0 < v["rms_ms"] <= 0.268
    assert abs(v["measured_mean_ms"] - 3.893) < 0.001  # the trace's own column 5
    assert (tmp_path / "validation_cdf.png").stat().st_size > 10_000
    p = cli("validate", "--disk", "atlas10k", "--trace", tmp_path / "nope.trace")
    assert p.returncode == 2 and "no such trace file" in p.stderr


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
    bad = [a if a != "16" else "40" for a in args[:-1]] + [tmp_path / "bad.toml"]
    p = cli(*bad)
    assert p.returncode == 2 and "inner_mb_s: 40 must not exceed outer_mb_s (27.6)" in p.stderr
    assert not (tmp_path / "bad.toml").exists()


def test_reproduce_riska2004_quick(tmp_path):
    p = cli("reproduce", "riska2004", "--quick", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "riska2004.json").read_text())
    fig3 = res["fig3_mean_response_ms"]
    # Threshold 1 leaves the drive no choice; 2 (one in service, one queued) no more;
    # deeper queues let SPTF help, and more than FCFS.
    assert fig3["sptf"][0] == fig3["fcfs"][0] == fig3["sptf"][1]
    assert fig3["sptf"][-1] < 0.8 * fig3["sptf"][0] and fig3["fcfs"][-1] == fig3["fcfs"][0]
    assert res["overload_gain"] > 1.0
    # Four disks behind one FCFS controller queue (the [controller] level), threshold per disk:
    # at most 1 (4 in all) and 16 (64) requests at the disks.
    a, cfg = res["fig4_analysis"], res["fig4_config"]
    assert cfg["controller"] == {"scheduler": "fcfs", "queue_threshold": 64, "per_disk_threshold": 16}
    assert cfg["host"]["queue_threshold"] == 64 and cfg["disk"]["count"] == 4
    assert a["max_requests_at_disks"]["q1"] == 4 and 16 < a["max_requests_at_disks"]["q16"] <= 64
    # The paper's qualitative claim: the array gains more than one disk, because at threshold 1
    # the FIFO controller also idles disks (head-of-line blocking), and less so at 16.
    assert res["fig4_sptf_gain_1_to_16"] > res["fig3_sptf_gain_1_to_16"]
    assert a["disks_busy"]["q1"] < a["disks_busy"]["q16"] <= 4
    gain1, gain4 = res["fig3_sptf_gain_1_to_16"], res["fig4_sptf_gain_1_to_16"]
    assert gain4 == pytest.approx(gain1 * a["array_factor"], rel=0.03)  # closed: mean response = N / throughput
    # A controller that lets one request out in total at threshold 1 idles more disks still.
    assert a["serial_q1_disks_busy"] < a["disks_busy"]["q1"] and a["serial_gain_to_q16"] > gain4
    # The load as an average (clients that think, 16 per disk outstanding on average at threshold 1):
    # the first row has no think time (the runs above); thinking widens the array's lead.
    avg = res["fig4_average_load"]
    assert avg[0]["one_disk"]["think_ms"] == 0 and avg[0]["four_disks"]["gain"] == pytest.approx(gain4, rel=0.02)
    for r in avg:
        assert r["one_disk"]["outstanding"]["q1"] == pytest.approx(16, rel=0.1)
        assert r["four_disks"]["outstanding"]["q1"] == pytest.approx(64, rel=0.1)
        assert r["four_disks"]["gain"] > r["one_disk"]["gain"]
    ratios = [r["four_disks"]["gain"] / r["one_disk"]["gain"] for r in avg]
    assert ratios == sorted(ratios) and ratios[-1] > 2 * ratios[0]
    for f in ["riska2004_thresholds.png", "riska2004_tails.png", "riska2004_overload.png"]:
        assert (tmp_path / f).stat().st_size > 10_000
    p = cli("reproduce", "nobody2099")
    assert p.returncode == 2 and "unknown experiment 'nobody2099'" in p.stderr


def test_reproduce_anand2008_quick(tmp_path):
    p = cli("reproduce", "anand2008", "--quick", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads((tmp_path / "anand2008.json").read_text())["disks"]["hp_c2247a"]
    pos = [r["seek_ms"] + r["rotation_ms"] for r in d["fig4_traditional"]["disk"]]
    assert len(pos) == 7 and pos[1] == pos[0] and pos[-1] < pos[2] < pos[0]
    # More targets per write never hurt much, and all of them beat one.
    for v in d["fig7_targets"].values():
        p_t = [r["seek_ms"] + r["rotation_ms"] for r in v["rows"]]
        assert p_t[-1] < 0.5 * p_t[0]
    assert d["fig5_track_range"]["disk"][0]["rotation_ms"] < 0.1 * d["fig4_traditional"]["disk"][0]["rotation_ms"]
    for f in ["anand2008_hp_c2247a_depth.png", "anand2008_hp_c2247a_targets.png"]:
        assert (tmp_path / f).stat().st_size > 10_000


def test_reproduce_lumb2002_quick(tmp_path):
    p = cli("reproduce", "lumb2002", "--quick", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "lumb2002.json").read_text())
    assert set(res["schedulers"]) == {"sstf", "sptf", "sptf_sw"}
    n = len(res["conservatism_ms"])
    for s, d in res["schedulers"].items():
        fw, ext = d["firmware"]["points"], d["external"]["points"]
        assert len(fw) == len(ext) == n
        # In firmware background work costs the foreground nothing; outside it
        # yields less free bandwidth than inside at the same conservatism.
        assert all(p["foreground_cost"] == 0 for p in fw)
        assert all(e["free_mb_s"] < f["free_mb_s"] for e, f in zip(ext, fw)), s
        # No margin: background work makes foreground requests late; 1 ms: hardly ever.
        assert ext[0]["late_fraction_after_background"] > 0.2
        assert ext[-1]["late_fraction_after_background"] < 0.02
        assert ext[0]["foreground_cost"] > ext[-1]["foreground_cost"]
    # Seek-reducing SSTF leaves more rotational latency, hence more free bandwidth, than SPTF.
    r = res["rotational_share"]
    assert r["sstf"] > r["sptf"]
    assert res["checks"]["sstf_over_sptf_free_bw_0.3ms"] > 1
    assert res["prediction_error"]["random_4kb_reads"]["error_within_50us"] > 0.9
    for f in ["lumb2002_conservatism.png", "lumb2002_prediction_error.png", "atlas10k_ultra2.toml"]:
        assert (tmp_path / f).stat().st_size > 1_000


def test_external_freeblock_example_runs_and_bad_noise_is_one_line(tmp_path):
    p = cli("run", ROOT / "examples/freeblock_external.toml", "--json")
    assert p.returncode == 0, p.stderr
    e = json.loads(p.stdout)["freeblock"]["external"]
    assert e["background_commands"] + e["merged_reads"] > 0
    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "examples/freeblock_external.toml").read_text().replace("seek_jitter_us = 20", "seek_jitter_us = 5000"))
    p = cli("run", bad)
    assert p.returncode == 2
    assert "freeblock.noise.seek_jitter_us: 5000 is out of range [0, 1000] us" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_reproduce_rizzo2009_quick(tmp_path):
    p = cli("reproduce", "rizzo2009", "--quick", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    cases = json.loads((tmp_path / "rizzo2009.json").read_text())["cases"]
    assert set(cases) == {"two readers", "reader + writer", "two writers", "sequential + random reader"}
    two = cases["two readers"]
    # Anticipation keeps each reader streaming: far more than C-LOOK's alternation, and shared fairly.
    assert sum(two["rr"]["ours"]) > 3 * sum(two["clook"]["ours"])
    assert min(two["rr"]["ours"]) > 0.8 * max(two["rr"]["ours"])
    # A greedy asynchronous writer captures a C-LOOK disk from a synchronous reader.
    rw = cases["reader + writer"]["clook"]["ours"]
    assert rw[0] < 0.05 * rw[1]
    assert "paper" in p.stdout


def test_ctl_sched_and_set_choose_the_controller_queue():
    p = cli("run", ROOT / "examples/controller.toml", "--ctl-sched", "mq_deadline", "--ctl-set", "fifo_batch=8", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["max_controller_queue"] > 16
    p = cli("run", ROOT / "examples/oltp.toml", "--json")
    assert p.returncode == 0 and "controller" not in p.stdout
    p = cli("run", ROOT / "examples/oltp.toml", "--ctl-sched", "rr", "--ctl-set", "wait_ms=99")
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

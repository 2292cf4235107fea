"""What `run` shows (issue 36, items 2-4): a per-class block and missed deadlines on screen and in --json,
the starvation report, the exact maximum and the percentiles' precision, --json with counters and provenance,
the schedulers and overrides in the title, the provenance of `run --plugin` and of `Simulation.switch()`.
Each CLI call runs in a subprocess with a timeout."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import disksched
from conftest import ROOT

EXE = Path(sys.executable).parent / "disksched"

MIX = textwrap.dedent("""\
    seed = 1
    [disk]
    model = "atlas10k"
    [workload]
    kind = "mix"
    clients = [
      { kind = "sequential", request_kb = 64, think_time_ms = 10, class = "real-time", deadline_ms = 50 },
      { kind = "oltp", class = "best-effort", flow = 100 },
      { kind = "dd", request_kb = 256, depth = 1, class = "background" },
    ]
    [run]
    requests = 5000
    """)


def cli(*args, timeout=120):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def test_the_mix_shows_its_classes_and_missed_deadlines_on_screen_and_in_json(tmp_path):
    (tmp_path / "mix.toml").write_text(MIX)
    j = cli("run", tmp_path / "mix.toml", "--json")
    assert j.returncode == 0, j.stderr
    s = json.loads(j.stdout)
    rt = s["classes"]["real-time"]
    assert rt["deadline_requests"] > 0 and rt["deadline_misses"] > 0, rt
    assert sum(c["requests"] for c in s["classes"].values()) == s["requests"]
    p = cli("run", tmp_path / "mix.toml")
    assert p.returncode == 0, p.stderr
    pct = 100 * s["deadline_misses"] / s["deadline_requests"]
    assert f"missed {s['deadline_misses']:,} of {s['deadline_requests']:,} ({pct:.1f}%)" in p.stdout, p.stdout
    for name in ("real-time ms", "best-effort ms", "background ms"):
        assert name in p.stdout, p.stdout


def test_json_carries_counters_and_provenance_beside_the_figures(tmp_path):
    p = cli("run", "examples/oltp.toml", "--set", "run.requests=2000", "--json")
    s = json.loads(p.stdout)
    assert s["counters"]["completed"] == s["counters"]["arrived"] == 2000
    assert s["provenance"]["overrides"] == {"run.requests": 2000}
    assert s["provenance"]["config"]["host"]["scheduler"] == "sptf"
    assert s["host_response_ms"]["max"] >= s["host_response_ms"]["p999"]
    assert s["percentile_significant_digits"] == 3


def test_starvation_is_reported_with_the_longest_wait_and_the_title_names_schedulers_and_overrides():
    p = cli("run", "examples/oltp.toml", "--set", "run.requests=20000", "--set", "disk.scheduler=sptf",
            "--set", "host.queue_threshold=16")
    assert p.returncode == 0, p.stderr
    s = json.loads(cli("run", "examples/oltp.toml", "--set", "run.requests=20000", "--set", "disk.scheduler=sptf",
                       "--set", "host.queue_threshold=16", "--json").stdout)["starvation"]
    assert s["waited_over_10x_mean"] > 0, s
    assert f"longest wait {s['longest_wait_ms']:,.3f} ms" in p.stdout, p.stdout
    assert f"{s['waited_over_10x_mean']:,} requests waited over 10x the mean" in p.stdout
    assert "max exact" in p.stdout
    title = p.stdout.splitlines()[0]
    assert "host sptf" in title and "disk sptf" in title and "host.queue_threshold=16" in title, title


PLUGIN = textwrap.dedent("""\
    import disksched

    class Lifo(disksched.Scheduler):
        name = "lifo36"
        def __init__(self):
            self.stack = []
        def insert(self, id, ctx):
            self.stack.append(id)
        def dispatch(self, ctx, force):
            return self.stack.pop() if self.stack else None
    """)


def test_run_plugin_records_the_files_name_and_hash(tmp_path):
    f = tmp_path / "lifo.py"
    f.write_text(PLUGIN)
    want = {"file": str(f), "sha256": hashlib.sha256(PLUGIN.encode()).hexdigest()}
    args = ["examples/oltp.toml", "--plugin", f, "--set", "host.scheduler=lifo36", "--set", "run.requests=500"]
    p = cli("run", *args, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["provenance"]["plugins"] == [want]
    p = cli("run", *args, "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]["plugins"] == [want]


def test_switch_is_in_the_provenance_and_the_switched_out_counters_are_kept():
    sim = disksched.Simulation("examples/oltp.toml", overrides={"run.requests": 3000, "host.scheduler": "rr"})
    sim.run(until_ms=2000)
    sim.switch("host", "fcfs")
    sim.run()
    r = sim.result()
    (sw,) = r.provenance["switches"]
    assert (sw["at_ms"], sw["queue"], sw["from"], sw["to"]) == (2000.0, "host", "rr", "fcfs")
    retired = r.counters["scheduler_retired"]
    assert list(retired) == ["host.rr until 2000.000 ms"], retired
    # rr's own counters (queues it created, anticipation) up to the switch; the run's counters hold fcfs's only.
    assert retired["host.rr until 2000.000 ms"], retired


def test_every_plot_title_names_the_schedulers_and_overrides(tmp_path, monkeypatch):
    from disksched import plots, records

    titles = []
    for f in ("response_cdf_hist", "lbn_time", "queue_depth_curves", "throughput"):
        # Each plot's title is its first text argument after the path.
        monkeypatch.setattr(plots, f, lambda path, *a, **k: titles.append((path.name, next(x for x in a if isinstance(x, str)))))
    over = {"host.scheduler": "sptf_sw", "host.set.window_pct": 30, "run.requests": 500, "run.series_window_ms": 1000}
    result, acc, p = records.simulate(tmp_path, ROOT / "examples/oltp.toml", over, None, None)
    records.draw(tmp_path, result, acc, p, "oltp.toml")
    names = [n for n, _ in titles]
    assert names == ["response_cdf.png", "lbn_time.png", "queue_depth.png", "throughput.png"], names
    for name, title in titles:
        flat = " ".join(title.split())
        assert flat.startswith("oltp.toml (host sptf_sw, disk fcfs,") and "host.set.window_pct=30" in flat \
            and "seed 1)" in flat, (name, title)


def test_a_plugins_own_counters_reach_every_output(tmp_path):
    # The worked example's counter (requests the cap sent first), as the Python API reports it.
    from disksched.plugins import load_file

    f = ROOT / "examples/plugins/capped_sptf.py"
    over = {"host.scheduler": "capped_sptf", "host.set.max_wait_ms": 50, "run.requests": 1500}
    want = disksched.run(ROOT / "examples/oltp.toml", schedulers=load_file(f)[0], overrides=over).counters["scheduler"]
    assert list(want) == ["host.capped"] and want["host.capped"] > 0
    args = ["run", "examples/oltp.toml", "--plugin", f] + [a for k, v in over.items() for a in ("--set", f"{k}={v}")]
    p = cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["counters"]["scheduler"] == want
    p = cli(*args, "--output-format", "json", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["disksched"]["counters"]["scheduler"] == want
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["counters"]["scheduler"] == want

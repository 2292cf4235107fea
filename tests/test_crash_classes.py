"""The crash classes of issue 36 (an independent fuzzer's finds), each run in a subprocess with a timeout and,
where memory was the failure, an address-space limit: a hang, an abort, a traceback or a half-written folder
fails the test. The configs are also in the core's fuzz corpus (crates/disksched-core/tests/fixtures/fuzz/configs)."""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT

EXE = Path(sys.executable).parent / "disksched"
CORPUS = ROOT / "crates/disksched-core/tests/fixtures/fuzz/configs"
# Far above what a run of these configs needs (about 0.6 GB of address space), far below what the crashes took.
ADDRESS_SPACE_BYTES = 3 << 30


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


def cli(*args, timeout=90, limit=True, cwd=ROOT):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          preexec_fn=_limit_memory if limit else None)


def one_line_error(p, *wanted, code=2):
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr[-2000:]
    for w in wanted:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def test_h1_onoff_periods_that_hold_no_arrival_end_at_the_clocks_end():
    # on_rate 1/s in 1 us on periods every ~11.6 days: each arrival needs ~1e6 periods, ~1e21 ns, past the u64 clock.
    t0 = time.monotonic()
    line = one_line_error(cli("run", CORPUS / "h1_onoff_no_progress.toml"), "workload:", "past the clock's end")
    assert time.monotonic() - t0 < 60, line


def test_h2_a_shaper_series_over_a_24_day_think_time_stops_before_sampling_gigabytes():
    line = one_line_error(cli("run", CORPUS / "h2_series_long_think.toml"), "run.series_window_ms:",
                          "choose a window of at least")
    # 4,000,000 rows at one shaper rate per 100 ms window: the bound is reached at t = 400,000 s.
    assert "at t = 400000.000 s" in line, line


@pytest.mark.parametrize("think", ["1e9", "1e12", "2147483648"])
def test_h2_every_reported_think_time_ends_with_the_same_error(tmp_path, think):
    text = (CORPUS / "h2_series_long_think.toml").read_text().replace("2147483648", think)
    (tmp_path / "c.toml").write_text(text)
    one_line_error(cli("run", tmp_path / "c.toml"), "run.series_window_ms:")


def test_a_series_that_outgrows_its_rows_stops_the_run_when_it_does(tmp_path):
    # 10 clients in 1 ms windows pass 4,000,000 rows at t = 400 s: the run stops there, not after 10^8 requests.
    cfg = tmp_path / "c.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 100000000\nseries_window_ms = 1\n')
    t0 = time.monotonic()
    one_line_error(cli("run", cfg), "run.series_window_ms:", "more than 4000000 series rows")
    assert time.monotonic() - t0 < 60


def test_a_series_too_large_for_the_runs_duration_is_refused_before_the_run(tmp_path):
    # 10 clients x (3,600,000 ms / 1 ms + 1) windows: known before anything runs.
    cfg = tmp_path / "c.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 100000000\n'
                   'duration_ms = 3600000\nseries_window_ms = 1\n')
    p = cli("config", "check", cfg, timeout=30)
    # 10 rows x 3,600,001 windows = 36,000,010 rows; 4,000,000 rows allow 400,000 windows: 9 ms each (3,600,000 / 400,000).
    one_line_error(p, "run.series_window_ms:", "3600001 windows x 10 rows", "at least 9 ms")


def test_a3_a_workload_plugin_with_a_billion_clients_is_refused_by_the_memory_budget(tmp_path):
    line = one_line_error(cli("run", CORPUS / "a3_plugin_clients.toml", "--plugin", CORPUS / "a3_plugin_clients.py"),
                          "clients = 1000000000", "memory budget", "expected at most")
    assert "Rust" not in line and "backtrace" not in line


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400"])
def test_t1_non_finite_overrides_are_one_line_errors_everywhere(tmp_path, value):
    want = "not a finite number"
    one_line_error(cli("run", "examples/oltp.toml", "--set", f"run.warmup_requests={value}"), want, "run.warmup_requests")
    one_line_error(cli("sweep", "examples/oltp.toml", "--grid", f"host.queue_threshold=1,{value}", "--out",
                       tmp_path / "sw"), want)
    one_line_error(cli("serve", "--disk", "atlas10k", "--set", f"host.queue_threshold={value}",
                       "--listen", f"unix:{tmp_path}/s.sock"), want)
    code = ("import disksched, sys\n"
            f"try: disksched.run('examples/oltp.toml', overrides={{'run.requests': float('{value}')}})\n"
            "except disksched.DiskschedError as e: print(e); sys.exit(2)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and want in p.stdout and "Traceback" not in p.stderr, (p.stdout, p.stderr)


def test_m1_a_device_as_a_spec_or_config_file_is_refused_after_the_cap(tmp_path):
    one_line_error(cli("run", "examples/oltp.toml", "--set", "disk.model=/dev/zero", timeout=60),
                   "/dev/zero: larger than 64.0 MB, the most a disk spec may be")
    one_line_error(cli("run", "/dev/zero", timeout=60), "/dev/zero: larger than 64 MB, the most a run config may be")
    one_line_error(cli("validate", "--disk", "/dev/zero.parv", "--trace", "atlas10k", timeout=60), "/dev/zero")


def _start(args, tmp_path, ignore_sigint=False):
    def pre():
        if ignore_sigint:  # as a shell starts a background job (`serve &` in a script)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    return subprocess.Popen([str(EXE), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, preexec_fn=pre)


def _wait_for(cond, what, seconds=60):
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_s1_sigterm_ends_run_out_like_ctrl_c_and_leaves_nothing(tmp_path):
    huge = tmp_path / "huge.toml"
    huge.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 100000000\n')
    p = _start(["run", huge, "--out", tmp_path / "out"], tmp_path)
    _wait_for(lambda: (tmp_path / f".out.tmp-{p.pid}").exists(), "no temporary folder")
    time.sleep(1)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err.strip().splitlines() == ["terminated (SIGTERM)"], err
    assert sorted(f.name for f in tmp_path.iterdir()) == ["huge.toml"]


def test_s1_a_killed_serves_temporary_is_cleaned_by_the_next_run(tmp_path):
    sock = tmp_path / "s.sock"
    p = _start(["serve", "--disk", "atlas10k", "--listen", f"unix:{sock}", "--out", tmp_path / "out"], tmp_path)
    try:
        _wait_for(sock.exists, "serve did not listen")
        assert (tmp_path / f".out.tmp-{p.pid}").is_dir()
    finally:
        p.kill()
        p.communicate(timeout=30)
    small = tmp_path / "small.toml"
    small.write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "oltp"\n[run]\nrequests = 2000\n')
    r = cli("run", small, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert sorted(f.name for f in tmp_path.iterdir() if f.name != "s.sock") == ["out", "small.toml"]


def test_item7_serve_started_with_sigint_ignored_still_stops_on_sigint(tmp_path):
    sock = tmp_path / "s.sock"
    p = _start(["serve", "--disk", "atlas10k", "--listen", f"unix:{sock}", "--json"], tmp_path, ignore_sigint=True)
    try:
        _wait_for(sock.exists, "serve did not listen")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    except BaseException:
        p.kill()
        raise
    assert p.returncode == 0, err
    assert json.loads(out)["serve"]["stopped_by"] == "KeyboardInterrupt", out


def test_minor_max_request_kb_is_reported_as_given(tmp_path):
    one_line_error(cli("serve", "--disk", "atlas10k", "--listen", f"unix:{tmp_path}/s.sock", "--max-request-kb", "99999999"),
                   "--max-request-kb 99999999: expected 4..32768")


PLUGINS = textwrap.dedent("""\
    import math
    import disksched

    class Wake(disksched.Scheduler):
        name = "wake"
        answer = None
        def __init__(self):
            self.q = []
        def insert(self, id, ctx):
            self.q.append(id)
        def dispatch(self, ctx, force):  # waits to be woken (or forced): wake_at_ns is asked
            return self.q.pop(0) if self.q and force else None
        def wake_at_ns(self):
            return self.answer

    class WakeNan(Wake):
        name = "wake_nan"
        answer = math.nan

    class WakeNegative(Wake):
        name = "wake_negative"
        answer = -5

    class Interrupts(Wake):
        name = "interrupts"
        def dispatch(self, ctx, force):
            raise KeyboardInterrupt
    """)


@pytest.mark.parametrize("name, shown", [("wake_nan", "returned nan"), ("wake_negative", "returned -5")])
def test_minor_wake_at_ns_out_of_contract_is_a_plugin_error(tmp_path, name, shown):
    (tmp_path / "p.py").write_text(PLUGINS)
    one_line_error(cli("run", "examples/oltp.toml", "--plugin", tmp_path / "p.py", "--set", f"host.scheduler={name}",
                       "--set", "run.requests=200"),
                   f"plug-in scheduler '{name}': wake_at_ns() broke the scheduler contract", shown)


def test_minor_a_plugin_raising_keyboardinterrupt_says_where(tmp_path):
    (tmp_path / "p.py").write_text(PLUGINS)
    p = cli("run", "examples/oltp.toml", "--plugin", tmp_path / "p.py", "--set", "host.scheduler=interrupts",
            "--set", "run.requests=200")
    assert p.returncode == 130, p.stderr
    assert p.stderr.strip().splitlines() == ["interrupted: in plug-in scheduler 'interrupts', dispatch() at t = 0.000000 ms"], p.stderr

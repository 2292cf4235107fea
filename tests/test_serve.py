"""`disksched serve` against real NBD clients (fio, nbdinfo, nbdcopy from
Debian's fio and libnbd-bin; `make test` installs them when missing), and the
fio job-file workload. The fio jobs run for real against a served Atlas 10K
and, in simulation, through `disksched run` of the same job file: mean
latency and IOPS must agree within 5 %."""

import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import cli

EXE = Path(sys.executable).parent / "disksched"
CLIENTS = ("fio", "nbdinfo", "nbdcopy")


@pytest.fixture(scope="module", autouse=False)
def clients():
    missing = [c for c in CLIENTS if shutil.which(c) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: `make test` installs them (apt-get install -y fio libnbd-bin)")


class Served:
    """A `disksched serve` process on a unix socket, stopped by a signal."""

    def __init__(self, tmp: Path, *args: str):
        self.sock = tmp / "nbd.sock"
        self.uri = f"nbd+unix:///?socket={self.sock}"
        self.p = subprocess.Popen([str(EXE), "serve", *args, "--listen", f"unix:{self.sock}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
        self.err: list[str] = []
        ready = threading.Event()

        def pump() -> None:
            for line in self.p.stderr:
                self.err.append(line)
                if "listening on" in line:
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(60):
            self.p.kill()
            pytest.fail(f"serve did not start: {''.join(self.err)}")

    def stop(self, sig=signal.SIGTERM) -> str:
        self.p.send_signal(sig)
        out, _ = self.p.communicate(timeout=120)
        assert self.p.returncode == 0, f"exit {self.p.returncode}: {''.join(self.err)}"
        return out


def test_nbdinfo_and_nbdcopy_round_trip(tmp_path, clients):
    srv = Served(tmp_path, "--disk", "atlas10k", "--size", "64M", "--stats", str(tmp_path / "stats.json"),
                 "--out", str(tmp_path / "out"))
    try:
        info = subprocess.run(["nbdinfo", "--size", srv.uri], capture_output=True, text=True, timeout=60)
        assert info.stdout.strip() == str(64 * 1024 * 1024), info.stderr
        pattern = os.urandom(64 * 1024 * 1024)
        (tmp_path / "in.bin").write_bytes(pattern)
        subprocess.run(["nbdcopy", str(tmp_path / "in.bin"), srv.uri], check=True, timeout=300)
        subprocess.run(["nbdcopy", srv.uri, str(tmp_path / "back.bin")], check=True, timeout=300)
        assert (tmp_path / "back.bin").read_bytes() == pattern
        stats = json.loads((tmp_path / "stats.json").read_text())
        assert stats["total"]["writes"] > 0 and stats["total"]["reads"] > 0
    finally:
        out = srv.stop(signal.SIGINT)
    # Stopped by Ctrl-C: the session's summary written as `run --out` writes it.
    assert "reply lateness ms" in out
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    s = doc["summary"]
    assert s["serve"]["stopped_by"] == "KeyboardInterrupt"
    assert s["bytes_written"] if "bytes_written" in s else s["writes"] > 0
    assert s["reads"] > 0 and doc["counters"]["completed"] == s["reads"] + s["writes"]
    assert (tmp_path / "out" / "response_cdf.png").exists()


JOBS = {
    "randread-4k-qd1": "rw=randread\nbs=4k\niodepth=1\nruntime=15\n",
    "randread-4k-qd8": "rw=randread\nbs=4k\niodepth=8\nruntime=15\n",
    "read-128k": "rw=read\nbs=128k\niodepth=1\nruntime=10\n",
}
# The served drive: the Atlas 10K with SPTF in its command queue and up to 8 requests at it.
CONFIG = 'seed = 1\n[disk]\nmodel = "atlas10k"\nscheduler = "sptf"\n[host]\nqueue_threshold = 8\n'


def _fio_read(text: str) -> dict:
    # fio's nbd engine prints a line before the JSON document.
    return json.loads(text[text.index("{"):])["jobs"][0]["read"]


def _fio_vs_simulation(tmp_path: Path, srv: "Served", name: str, body: str) -> tuple:
    """(name, fio IOPS, simulated IOPS, fio mean latency ms, simulated ms) of one job."""
    import disksched

    job = tmp_path / f"{name}.fio"
    job.write_text(f"[{name}]\n{body}")
    real = subprocess.run(["fio", "--ioengine=nbd", f"--uri={srv.uri}", "--output-format=json", str(job)],
                          capture_output=True, text=True, timeout=120)
    assert real.returncode == 0, real.stderr
    r = _fio_read(real.stdout)
    (tmp_path / f"{name}.toml").write_text(
        CONFIG + f'[workload]\nkind = "fio"\njob = "{job.name}"\n[run]\nwarmup_requests = 0\n')
    # fio's offsets are one sample; the simulation's mean over 5 seeds takes its own sampling noise out.
    sims = [disksched.run(tmp_path / f"{name}.toml", seed=s).summary for s in range(1, 6)]
    sim_iops = sum(x["iops"] for x in sims) / len(sims)
    sim_ms = sum(x["host_response_ms"]["mean"] for x in sims) / len(sims)
    return name, r["iops"], sim_iops, r["lat_ns"]["mean"] / 1e6, sim_ms


def _table(rows) -> str:
    return "\n".join(f"{n}: IOPS fio {fi:.1f} sim {si:.1f}; mean latency ms fio {fl:.3f} sim {sl:.3f}"
                     for n, fi, si, fl, sl in rows)


# How late replies may be on a shared 2-core machine (p99, max in ms; the share over 1 ms): at load 3-5
# these jobs gave p99 0.1-2.9 ms, max 1-61 ms, 0.2-1.6 % over 1 ms (docs/serve.md). A server that replies
# 1.2 ms late throughout passes the means of the fio comparison (catch-up) but fails the share.
LATE_P99_MS, LATE_MAX_MS, LATE_OVER_1MS = 4.0, 250.0, 0.05


def _check_timing(serve: dict, table: str) -> None:
    # Lateness (against what the client is owed) and the schedule lag (against the simulated completion
    # time alone, which catch-up does not repay in the figure).
    for what in ("lateness_ms", "schedule_lag_ms"):
        f = serve[what]
        assert f["p99"] < LATE_P99_MS and f["max"] < LATE_MAX_MS, f"{what}: {f}\n{table}"
        assert f["over_1ms"] < LATE_OVER_1MS * serve["lateness_ms"]["count"], f"{what}: {f}\n{table}"


def test_fio_against_the_server_matches_the_simulation(tmp_path, clients):
    (tmp_path / "serve.toml").write_text(CONFIG)
    srv = Served(tmp_path, str(tmp_path / "serve.toml"), "--stats", str(tmp_path / "stats.json"), "--json")
    try:
        rows = [_fio_vs_simulation(tmp_path, srv, name, body) for name, body in JOBS.items()]
    finally:
        summary = json.loads(srv.stop())
    table = _table(rows)
    print(table)
    for name, fio_iops, sim_iops, fio_ms, sim_ms in rows:
        assert abs(fio_iops / sim_iops - 1) < 0.05, f"{name}: IOPS\n{table}"
        assert abs(fio_ms / sim_ms - 1) < 0.05, f"{name}: mean latency\n{table}"
    # Catch-up lets a late reply's lag cancel out of the means above: the server's own figures show it.
    serve = summary["serve"]
    print("lateness ms", serve["lateness_ms"], "schedule lag ms", serve["schedule_lag_ms"])
    assert serve["lateness_ms"]["count"] == summary["requests"] > 1000
    _check_timing(serve, table)


def test_fio_without_catch_up_waits_only_the_simulated_response(tmp_path, clients):
    # Without catch-up every reply comes at or after its arrival plus its simulated response, and a late one
    # delays the next request: lateness shows in fio's mean and in its IOPS, not only in the server's figures.
    (tmp_path / "serve.toml").write_text(CONFIG)
    srv = Served(tmp_path, str(tmp_path / "serve.toml"), "--no-catch-up", "--json")
    try:
        name, fio_iops, sim_iops, fio_ms, _ = _fio_vs_simulation(
            tmp_path, srv, "randread-4k-qd1", "rw=randread\nbs=4k\niodepth=1\nruntime=10\n")
    finally:
        summary = json.loads(srv.stop())
    served_ms = summary["host_response_ms"]["mean"]
    table = f"{name}: IOPS fio {fio_iops:.1f} sim {sim_iops:.1f}; mean latency ms fio {fio_ms:.3f} served {served_ms:.3f}"
    print(table, "lateness ms", summary["serve"]["lateness_ms"])
    assert fio_ms >= served_ms, table
    assert fio_ms / served_ms - 1 < 0.05, f"mean latency over the served requests' simulated response\n{table}"
    assert abs(fio_iops / sim_iops - 1) < 0.05, f"IOPS\n{table}"
    _check_timing(summary["serve"], table)


def test_fio_job_options_outside_the_simulated_set_are_named(tmp_path):
    (tmp_path / "j.fio").write_text("[global]\nbs=4k\n\n[a]\nrw=randread\ndirect=1\n")
    (tmp_path / "c.toml").write_text('[disk]\nmodel = "atlas10k"\n[workload]\nkind = "fio"\njob = "j.fio"\n')
    r = cli("run", tmp_path / "c.toml")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "j.fio:6: fio option 'direct' is not simulated" in lines[0], r.stderr


def test_fio_job_runs_its_number_of_ios(tmp_path):
    import disksched

    (tmp_path / "j.fio").write_text("[global]\nrw=randrw\nrwmixread=75\nbs=8k\nnumber_ios=300\n[a]\niodepth=4\n[b]\nnumjobs=2\n")
    s = disksched.run({"disk": {"model": "atlas10k"}, "workload": {"kind": "fio", "job": str(tmp_path / "j.fio")},
                       "run": {"warmup_requests": 0}}, records=True)
    df = s.records()
    assert len(df) == 3 * 300  # job a, and job b's two clones, 300 I/Os each
    assert (df["blocks"] == 16).all() and (df["lbn"] % 16 == 0).all()
    assert 0.70 < (~df["is_write"]).mean() < 0.80


def test_serve_refuses_a_non_loopback_address_without_allow_remote():
    r = cli("serve", "--disk", "atlas10k", "--listen", "tcp:0.0.0.0:10809")
    assert r.returncode == 2 and "--allow-remote" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _recv(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError(f"closed after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def _nbd_open(sock: Path) -> socket.socket:
    """A client in the transmission phase (NBD_OPT_EXPORT_NAME, the default export; from the protocol document)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(str(sock))
    assert _recv(s, 18)[:16] == b"NBDMAGICIHAVEOPT"
    s.sendall(struct.pack(">I", 3) + b"IHAVEOPT" + struct.pack(">II", 1, 0))  # fixed newstyle, no zeroes
    _recv(s, 10)  # export size and transmission flags
    return s


def test_sigterm_answers_the_requests_in_flight_and_writes_the_summary(tmp_path):
    srv = Served(tmp_path, "--disk", "atlas10k", "--size", "1G", "--out", str(tmp_path / "out"))
    s = _nbd_open(srv.sock)
    rng = random.Random(5)
    n = 64  # random 4 KB reads at once: about half a second of drive time
    for handle in range(n):
        s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, handle, rng.randrange(2 ** 30 // 4096) * 4096, 4096))
    replies = []

    def reply() -> None:
        magic, error, handle = struct.unpack(">IIQ", _recv(s, 16))
        assert magic == 0x67446698 and error == 0, (magic, error, handle)
        _recv(s, 4096)
        replies.append((handle, time.monotonic()))

    reply()
    srv.p.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    for _ in range(n - 1):
        reply()
    assert sorted(h for h, _ in replies) == list(range(n)), "every request in flight is answered once"
    assert replies[-1][1] - signalled > 0.05, "requests were still in flight when the signal came"
    assert s.recv(1) == b"", "the server closes the connection after its last reply"
    out, _ = srv.p.communicate(timeout=120)
    assert srv.p.returncode == 0, "".join(srv.err)
    assert "reply lateness ms" in out
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert doc["summary"]["serve"]["stopped_by"] == "KeyboardInterrupt"
    assert doc["counters"]["completed"] == doc["summary"]["reads"] == n


def test_a_stats_file_that_cannot_be_written_costs_one_warning(tmp_path, clients):
    gone = tmp_path / "gone"
    gone.mkdir()
    srv = Served(tmp_path, "--disk", "atlas10k", "--size", "64M", "--stats", str(gone / "stats.json"))
    try:
        deadline = time.monotonic() + 10
        while not (gone / "stats.json").exists():
            assert time.monotonic() < deadline, "no stats file written"
            time.sleep(0.05)
        shutil.rmtree(gone)
        time.sleep(2.5)  # two rewrites fail
        info = subprocess.run(["nbdinfo", "--size", srv.uri], capture_output=True, text=True, timeout=60)
        assert info.stdout.strip() == str(64 * 1024 * 1024), info.stderr
    finally:
        srv.stop()
    warnings = [line for line in srv.err if "warning" in line]
    assert len(warnings) == 1 and "--stats not written" in warnings[0], "".join(srv.err)


def test_a_python_scheduler_serves(tmp_path):
    # The host queue of the served drive is a plug-in (the worked example): reads come back, and the
    # plug-in's own counters show it decided.
    cfg = tmp_path / "capped.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[host]\nscheduler = "capped_sptf"\nqueue_threshold = 1\n')
    plugin = Path(__file__).parent.parent / "examples" / "plugins" / "capped_sptf.py"
    srv = Served(tmp_path, str(cfg), "--plugin", str(plugin), "--size", "64M", "--out", str(tmp_path / "out"))
    try:
        socks = [_nbd_open(srv.sock) for _ in range(4)]
        for i, s in enumerate(socks):  # four reads at once: the host queue orders them
            s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 0, i, random.randrange(16384) * 4096, 4096))
        for s in socks:
            magic, error, _ = struct.unpack(">IIQ", _recv(s, 16))
            assert (magic, error) == (0x67446698, 0)
            assert len(_recv(s, 4096)) == 4096
            s.close()
    finally:
        srv.stop()
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert doc["counters"]["completed"] == 4
    assert "host.capped" in doc["counters"]["scheduler"], doc["counters"]["scheduler"]  # the plug-in's own counter
    # Without --plugin the name is unknown: one line, exit 2.
    p = cli("serve", str(cfg), "--listen", f"unix:{tmp_path / 'x.sock'}")
    assert p.returncode == 2 and "capped_sptf" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr

def test_a_signal_while_the_ready_callback_runs_stops_the_session_cleanly(tmp_path):
    """SIGINT or SIGTERM can arrive just as the socket appears, while `on_ready` (Python) runs: the
    handler's KeyboardInterrupt then comes out of the callback. It is the request to stop, as at any
    later moment: the session ends with its result, not with the exception (a CLI `serve` so
    stopped exited 130, "interrupted: SIGINT", where the same signal a moment later gives 0)."""
    from disksched.serve import serve

    def ready(address):
        raise KeyboardInterrupt("SIGINT")

    res = serve({"disk": {"model": "atlas10k"}}, listen=f"unix:{tmp_path / 's.sock'}", on_ready=ready)
    assert res.summary["serve"]["stopped_by"] == "KeyboardInterrupt"

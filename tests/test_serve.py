"""`disksched serve` against real NBD clients (fio, nbdinfo, nbdcopy from
Debian's fio and libnbd-bin; `make test` installs them when missing), and the
fio job-file workload. The fio jobs run for real against a served Atlas 10K
and, in simulation, through `disksched run` of the same job file: mean
latency and IOPS must agree within 5 %."""

import json
import os
import shutil
import signal
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


def test_fio_against_the_server_matches_the_simulation(tmp_path, clients):
    import disksched

    (tmp_path / "serve.toml").write_text(CONFIG)
    rows = []
    srv = Served(tmp_path, str(tmp_path / "serve.toml"), "--stats", str(tmp_path / "stats.json"))
    try:
        for name, body in JOBS.items():
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
            rows.append((name, r["iops"], sim_iops, r["lat_ns"]["mean"] / 1e6, sim_ms))
    finally:
        srv.stop()
    table = "\n".join(f"{n}: IOPS fio {fi:.1f} sim {si:.1f}; mean latency ms fio {fl:.3f} sim {sl:.3f}"
                      for n, fi, si, fl, sl in rows)
    print(table)
    for name, fio_iops, sim_iops, fio_ms, sim_ms in rows:
        assert abs(fio_iops / sim_iops - 1) < 0.05, f"{name}: IOPS\n{table}"
        assert abs(fio_ms / sim_ms - 1) < 0.05, f"{name}: mean latency\n{table}"


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

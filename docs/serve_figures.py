"""The measured figures of docs/serve.md: `.venv/bin/python docs/serve_figures.py [OUTDIR]` (about 3
minutes; needs fio: `make nbd-clients`). Each fio job runs for real against a fresh `disksched serve`
(stopped by SIGTERM, its `--json` summary read) and in simulation (`disksched.run` of the same job file,
mean of 5 seeds). Prints markdown: (a) fio vs simulation against the Atlas 10K of tests/test_serve.py,
with (b) the server's reply lateness per job; (c) a 15,000 RPM datasheet drive with a deep queue, where
the load is raised until replies are late. The load average is printed before and after."""
import json, os, signal, subprocess, sys
from pathlib import Path

import disksched

EXE = Path(sys.executable).parent / "disksched"
out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/serve_figures")
out.mkdir(parents=True, exist_ok=True)
ATLAS = 'seed = 1\n[disk]\nmodel = "atlas10k"\nscheduler = "sptf"\n[host]\nqueue_threshold = 8\n'
# A Cheetah 15K.5-like drive from its datasheet figures; SPTF over up to 128 commands at the drive.
FAST_SPEC = ["--name", "fast15k", "--capacity-gb", "300", "--rpm", "15000", "--outer-mb-s", "125", "--inner-mb-s", "73",
             "--track-to-track-ms", "0.2", "--average-seek-ms", "3.5", "--full-stroke-ms", "7.4", "--cache-kb", "16384",
             "--bus-mb-s", "320"]
FAST = 'seed = 1\n[disk]\nmodel = "fast15k.toml"\nscheduler = "sptf"\n[host]\nqueue_threshold = 128\n'


def row(config: str, name: str, body: str) -> str:
    (out / "serve.toml").write_text(config)
    job = out / f"{name}.fio"
    job.write_text(f"[{name}]\n{body}")
    sock = out / "nbd.sock"
    srv = subprocess.Popen([str(EXE), "serve", str(out / "serve.toml"), "--listen", f"unix:{sock}", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in srv.stderr:
        if "listening on" in line:
            break
    real = subprocess.run(["fio", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}", "--group_reporting",
                           "--output-format=json", str(job)],
                          capture_output=True, text=True, check=True)
    srv.send_signal(signal.SIGTERM)
    summary = json.loads(srv.communicate()[0])
    served = summary["serve"]
    r = json.loads(real.stdout[real.stdout.index("{"):])["jobs"][0]["read"]
    (out / f"{name}.toml").write_text(config + f'[workload]\nkind = "fio"\njob = "{job.name}"\n[run]\nwarmup_requests = 0\n')
    sims = [disksched.run(out / f"{name}.toml", seed=s).summary for s in range(1, 6)]
    sim_iops = sum(x["iops"] for x in sims) / len(sims)
    sim_ms = sum(x["host_response_ms"]["mean"] for x in sims) / len(sims)
    late, lag = served["lateness_ms"], served["schedule_lag_ms"]
    return (f"| {name} | {r['iops']:.1f} | {sim_iops:.1f} | {r['lat_ns']['mean'] / 1e6:.3f} | {sim_ms:.3f} | {summary['host_response_ms']['mean']:.3f} "
            f"| {late['p50']:.3f} / {late['p99']:.3f} / {late['max']:.3f} | {lag['p50']:.3f} / {lag['p99']:.3f} / {lag['max']:.3f} "
            f"| {lag['over_1ms'] / max(late['count'], 1):.1%} |")


# "served": the simulated mean response of the requests the server received (time lost before a request
# reaches the server shows as fio's mean above it, not as lateness).
HEAD = ("| job | IOPS fio | IOPS simulated | mean ms fio | mean ms simulated | mean ms served "
        "| lateness ms p50 / p99 / max | schedule lag ms p50 / p99 / max | lag over 1 ms |\n|---|---|---|---|---|---|---|---|---|")
print(f"load average before: {os.getloadavg()}", flush=True)
print("\n(a, b) Atlas 10K, SPTF, host.queue_threshold = 8\n\n" + HEAD, flush=True)
for name, body in [("randread-4k-qd1", "rw=randread\nbs=4k\niodepth=1\nruntime=15\n"),
                   ("randread-4k-qd8", "rw=randread\nbs=4k\niodepth=8\nruntime=15\n"),
                   ("read-128k", "rw=read\nbs=128k\niodepth=1\nruntime=10\n")]:
    print(row(ATLAS, name, body), flush=True)
subprocess.run([str(EXE), "disks", "datasheet", *FAST_SPEC, "--out", str(out / "fast15k.toml")], check=True, capture_output=True)
print("\n(c) datasheet 15,000 RPM drive, SPTF, host.queue_threshold = 128\n\n" + HEAD, flush=True)
for qd in (32, 64, 128):
    print(row(FAST, f"randread-4k-qd{qd}", f"rw=randread\nbs=4k\niodepth={qd}\nruntime=10\n"), flush=True)
# Sequential 4 KB reads are mostly read-ahead cache hits: more jobs (one connection each), more IOPS, until
# the drive's 0.1 ms command overhead caps them (about 8,800 IOPS).
for jobs in (1, 4, 16):
    print(row(FAST, f"read-4k-qd32x{jobs}", f"rw=read\nbs=4k\niodepth=32\nnumjobs={jobs}\nruntime=10\n"), flush=True)
# The same drive with a tenth of the command overheads: the server and fio (on the same 2 cores) are the limit.
spec = (out / "fast15k.toml").read_text()
(out / "fast15k_lo.toml").write_text(spec.replace("overhead_time_scale = 1.0", "overhead_time_scale = 0.1", 1))
print("\n(c) the same drive, overhead_time_scale = 0.1\n\n" + HEAD, flush=True)
for jobs in (1, 2, 4, 8, 16):
    print(row(FAST.replace("fast15k.toml", "fast15k_lo.toml"), f"read-4k-qd32x{jobs}",
              f"rw=read\nbs=4k\niodepth=32\nnumjobs={jobs}\nruntime=10\n"), flush=True)
print(f"\nload average after: {os.getloadavg()}")

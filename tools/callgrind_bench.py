#!/usr/bin/env python3
"""Instructions per request in the run loop, the load-independent speed measure (issue 35).

For each `disksched bench` workload asked for, runs the bench config twice under
callgrind, with 10,000 and with 60,000 requests, through the core's `quick`
example (release profile and the product's profile-guided build, no Python), and prints

    (instructions of the 60,000-request run - those of the 10,000-request run) / 50,000

Start-up, config parsing and the summary cancel out in the difference; what is
left is the cost of one request in the run loop. Instruction counts do not
depend on the machine's load, so every change to the hot path can report them.

    .venv/bin/python tools/callgrind_bench.py              # open FCFS and open SPTF
    .venv/bin/python tools/callgrind_bench.py --all        # the six bench workloads
    .venv/bin/python tools/callgrind_bench.py open:clook   # one workload:scheduler
    .venv/bin/python tools/callgrind_bench.py --startup    # whole commands, start-up included

`--startup` counts the instructions of whole `disksched` processes instead
(the interpreter, the imports, the run and the output): `validate` on the
atlas10k trace and a 10-request `run` of examples/oltp.toml, each printing
JSON. The bytecode cache is on and warmed by a run before, as in a user's
shell; Python's hash seed is fixed (it moves the count by a little).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from disksched.bench import bench_configs, user_shell_env  # noqa: E402  (the same configs `disksched bench` runs)

SHORT, LONG = 10_000, 60_000
DEFAULT = ["open:fcfs", "open:sptf"]
# The six workloads issue 35 compares with DiskSim.
ALL = ["open:fcfs", "open:clook", "open:sstf", "open:sptf", "closed32:sptf", "closed128:sptf"]
QUICK = ROOT / "target" / "release" / "examples" / "quick"


def toml(config: dict) -> str:
    """The bench config (scalars, one level of tables) as TOML."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v + '"'
        return repr(v)
    lines = [f"{k} = {value(v)}" for k, v in config.items() if not isinstance(v, dict)]
    for k, v in config.items():
        if isinstance(v, dict):
            lines += [f"\n[{k}]"] + [f"{kk} = {value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def build_quick(extra_rustflags: str = "", target_dir: Path | None = None) -> None:
    """Build the `quick` example as `make build` builds the product: with the profile-guided optimization's flags."""
    flags = subprocess.run(["make", "-s", "--no-print-directory", "pgo-flags"], check=True, cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    env = {**os.environ, "RUSTFLAGS": f"{flags} {extra_rustflags}".strip()}
    if target_dir is not None:
        env["CARGO_TARGET_DIR"] = str(target_dir)
    subprocess.run(["cargo", "build", "--quiet", "--release", "--example", "quick", "-p", "disksched-core"],
                   check=True, cwd=ROOT, env=env)


def config_file(config: dict, requests: int, tmp: Path) -> Path:
    """`config` with `requests` requests, written as TOML into `tmp`."""
    path = tmp / f"bench_{requests}.toml"
    path.write_text(toml({**config, "run": {**config.get("run", {}), "requests": requests}}))
    return path


def instructions(config: dict, requests: int, tmp: Path, binary: Path = QUICK) -> int:
    """Total instructions (callgrind's Ir) of one run of `config` with `requests` requests."""
    return callgrind_total([str(binary), str(config_file(config, requests, tmp))], tmp / f"callgrind_{requests}.out")


def callgrind_total(cmd: list[str], out: Path, env: dict | None = None) -> int:
    """Total instructions (callgrind's Ir) of running `cmd`, its profile written to `out`."""
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {out}")


STARTUP = {
    "validate atlas10k": ["validate", "--disk", "atlas10k", "--trace", "atlas10k", "--json"],
    "run oltp, 10 requests": ["run", str(ROOT / "examples" / "oltp.toml"), "--set", "run.requests=10", "--json"],
}


def startup(python: Path) -> None:
    """Instructions of each STARTUP command as a whole process."""
    env = user_shell_env() | {"PYTHONHASHSEED": "0"}
    print(f"{'command':>24}  instructions (callgrind, whole process)")
    with tempfile.TemporaryDirectory() as d:
        for name, args in STARTUP.items():
            cmd = [str(python), "-m", "disksched", *args]
            subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)  # the bytecode cache, warm
            total = callgrind_total(cmd, Path(d) / "callgrind.out", env)
            print(f"{name:>24}  {total / 1e6:,.0f} M", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workloads", nargs="*", help="workload:scheduler pairs of `disksched bench` (default: open:fcfs open:sptf)")
    ap.add_argument("--all", action="store_true", help="the six workloads of issue 35")
    ap.add_argument("--no-build", action="store_true", help="use target/release/examples/quick as it is")
    ap.add_argument("--binary", type=Path, help="another build of the quick example (an older commit's, to compare); implies --no-build")
    ap.add_argument("--startup", action="store_true", help="whole validate and run commands instead (start-up included)")
    ap.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python", help="with --startup: the project's Python")
    args = ap.parse_args()
    if args.startup:
        return startup(args.python)
    wanted = ALL if args.all else (args.workloads or DEFAULT)
    if not (args.no_build or args.binary):
        build_quick()
    configs = {f"{w}:{s}": c for w, s, c in bench_configs(SHORT)}
    unknown = [w for w in wanted if w not in configs]
    if unknown:
        sys.exit(f"unknown workload {', '.join(unknown)}; expected one of {', '.join(configs)}")
    print(f"{'workload':>16}  instructions/request  (callgrind: ({LONG:,} - {SHORT:,} requests) / {LONG - SHORT:,})")
    with tempfile.TemporaryDirectory() as d:
        for w in wanted:
            short = instructions(configs[w], SHORT, Path(d), args.binary or QUICK)
            long = instructions(configs[w], LONG, Path(d), args.binary or QUICK)
            print(f"{w:>16}  {(long - short) / (LONG - SHORT):,.0f}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()

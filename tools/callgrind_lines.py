#!/usr/bin/env python3
"""Where one request's instructions go, by source line, in the profile-guided build (issue 35).

    .venv/bin/python tools/callgrind_lines.py [WORKLOAD:SCHEDULER] [--top N] [--callers FUNCTION]

`tools/callgrind_bench.py` counts the instructions of a request; this says
where they are. With the profile nearly the whole run loop inlines into a
handful of functions, so a per-function profile says little and callgrind's
own line view names the innermost frame only (a bounds check in
`slice/index.rs`, not the line that indexed). Here:

1. the `quick` example is built as `make build` builds the product, with the
   profile, plus line tables (`-Cdebuginfo=line-tables-only -Cstrip=none` in
   RUSTFLAGS leave the crate's hash and so the profile's match alone: the
   count is the one `callgrind_bench.py` gives), in target/callgrind-lines;
2. the bench config runs under callgrind with 10,000 and with 60,000
   requests, counted per instruction address;
3. each address's inline chain comes from `addr2line -i`, and the
   difference per request is summed by the innermost line of the core's own
   source on the chain (`by line`) and by each core function on the chain
   (`by function`, inclusive of what inlined into it: the functions overlap).

`--callers F` lists, for the function named F (as `by function` prints it),
the frames it inlined into with the line, which `by line` cannot tell apart.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from callgrind_bench import LONG, ROOT, SHORT, build_quick, config_file

sys.path.insert(0, str(ROOT / "python"))
from disksched.bench import bench_configs  # noqa: E402

TARGET = ROOT / "target" / "callgrind-lines"
QUICK = TARGET / "release" / "examples" / "quick"
CORE_SRC = "disksched-core/src/"


def per_address(config: dict, requests: int, tmp: Path) -> collections.Counter:
    """Instructions by address of the `quick` binary in one run of `config` with `requests` requests."""
    out = tmp / f"callgrind_{requests}.out"
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--dump-line=no", f"--callgrind-out-file={out}",
                    str(QUICK), str(config_file(config, requests, tmp))], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return parse(out, str(QUICK))


def parse(path: Path, binary: str) -> collections.Counter:
    """Self cost by instruction address of `binary`'s code in a callgrind file (`--dump-instr=yes`)."""
    names: dict[str, str] = {}
    cost: collections.Counter = collections.Counter()
    ob, addr, after_call = None, 0, False
    for line in path.read_text().splitlines():
        if not line:
            continue
        if line[0] in "0123456789+-*":
            pos, *rest = line.split()
            if pos[0] in "+-":
                addr += int(pos[0] + "1") * int(pos[1:], 0)  # relative: "+31" decimal, "+0x1f" hex
            elif pos != "*":
                addr = int(pos, 0)
            if after_call:  # the inclusive cost of the call on the line before: not this address's own
                after_call = False
            elif ob == binary and rest:
                cost[addr] += int(rest[0])
            continue
        key, _, value = line.partition("=")
        if key in ("ob", "cob"):
            m = re.match(r"\((\d+)\)(?:\s+(.*))?", value)
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if key == "ob":
                ob = names[m.group(1)]
        elif key == "calls":
            after_call = True
    return cost


def inline_chains(addresses: list[int]) -> dict[int, list[tuple[str, str]]]:
    """Each address's (function, file:line) frames, innermost first (`addr2line -i`)."""
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-C", "-e", str(QUICK)],
                         input="".join(f"{a:#x}\n" for a in addresses), capture_output=True, text=True, check=True).stdout
    chains: dict[int, list[tuple[str, str]]] = {}
    lines, i, current = out.splitlines(), 0, None
    while i < len(lines):
        if re.fullmatch(r"0x[0-9a-f]+", lines[i]):
            current = int(lines[i], 16)
            chains[current] = []
            i += 1
            continue
        chains[current].append((lines[i], lines[i + 1].split(" (")[0]))
        i += 2
    return chains


def short(location: str) -> str:
    return location.split(CORE_SRC)[-1] if CORE_SRC in location else location.rsplit("/", 1)[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload", nargs="?", default="open:fcfs", help="a workload:scheduler of `disksched bench` (default open:fcfs)")
    ap.add_argument("--top", type=int, default=40, help="rows of each table")
    ap.add_argument("--callers", metavar="FUNCTION", help="where FUNCTION was inlined, by line")
    ap.add_argument("--no-build", action="store_true", help=f"use {QUICK.relative_to(ROOT)} as it is")
    args = ap.parse_args()
    configs = {f"{w}:{s}": c for w, s, c in bench_configs(SHORT)}
    if args.workload not in configs:
        sys.exit(f"unknown workload {args.workload}; expected one of {', '.join(configs)}")
    if not args.no_build:
        # (Line tables in RUSTFLAGS leave the crate's hash, and so the profile's match, alone.)
        build_quick("-Cdebuginfo=line-tables-only -Cstrip=none", TARGET)
    with tempfile.TemporaryDirectory() as d:
        short_run = per_address(configs[args.workload], SHORT, Path(d))
        long_run = per_address(configs[args.workload], LONG, Path(d))
    per_request = {a: (c - short_run.get(a, 0)) / (LONG - SHORT) for a, c in long_run.items()}
    per_request = {a: c for a, c in per_request.items() if c > 0.005}
    chains = inline_chains(sorted(per_request))
    by_line: collections.Counter = collections.Counter()
    by_function: collections.Counter = collections.Counter()
    callers: collections.Counter = collections.Counter()
    for a, c in per_request.items():
        chain = chains.get(a) or [("??", "??")]
        core = [(f, loc) for f, loc in chain if CORE_SRC in loc]
        by_line[short((core or chain)[0][1])] += c
        for f in {f for f, _ in core}:
            by_function[f] += c
        for k, (f, loc) in enumerate(chain):
            if f == args.callers:
                outer = chain[k + 1] if k + 1 < len(chain) else ("(called, not inlined)", "")
                callers[f"{short(loc)} in {outer[0]} at {short(outer[1])}"] += c
                break
    print(f"{args.workload}: {sum(per_request.values()):,.0f} instructions a request in the binary's own code "
          f"(callgrind: ({LONG:,} - {SHORT:,} requests) / {LONG - SHORT:,})")
    tables = [("by line (innermost line of the core's source)", by_line), ("by function (inclusive of its inlined code)", by_function)]
    if args.callers:
        tables.append((f"where {args.callers} was inlined", callers))
    for title, table in tables:
        print(f"\n{title}")
        for key, c in table.most_common(args.top):
            print(f"{c:8.1f}  {key[:160]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Side-by-side speed of DiskSim 4.0 and disksched on the six `disksched bench` workloads (issue 35).

    .venv/bin/python tools/disksim_side_by_side.py PATH/TO/STABLE/DiskSim_Linux_Generic_2.01.016

PATH is the DiskSim source tree of Western Digital's 64-bit DiskSim 4.0 copy
(`STABLE/DiskSim_Linux_Generic_2.01.016` of its repository; this script fetches
nothing and the tree is only read). The script

1. copies the tree into a temporary folder and builds it there with `make -j1`
   at -O2 (the Makefiles' `-g` becomes `-O2`; DiskSim's own `-DASSERTS` is
   kept), with `-DDISKSIM_NO_SIMRESULT_LOG`: a few lines added to three source
   files make DiskSim's per-request result log (`disksim_simresult.c`, added by
   Western Digital) compile to nothing under that flag. The log writes each
   request into a 200,000-entry global array, on every completion of a request
   that found the drive's queue list non-empty it searches that array linearly
   (`simresult_getSimResultContainsEndTagID`), and at the end it writes the
   array out as log_sim_results.csv. It also stops any run past 200,000 drive
   requests (`ddbg_assert2(tagIDBegin < MAX_NUM_SIM_RESULTS)`). Nothing else
   reads it: the simulated results are the same with or without it;
2. checks the build on DiskSim's own Atlas 10K validation (`valid/atlas10k.parv`
   with its trace): rms must be 0.267525; then times that validation run against
   `disksched validate --disk atlas10k --trace atlas10k`, each as a whole process
   (best of `--repeats`; disksched's includes the interpreter's start-up);
3. writes one DiskSim parameter file per workload (templates in
   tools/disksim_side_by_side/), driven by DiskSim's synthetic generator;
4. times each workload on both simulators (CPU time, user + sys), `--repeats`
   pairs each, alternating, and keeps the best of each, then prints
   workload, DiskSim req/s, disksched req/s and the ratio.

disksched's side is the `disksched bench` config itself (`bench_configs`), run
in a fresh process of the project's Python (`--python`, default .venv/bin/python);
its CPU time is that of the run call (`_core.run`), without the interpreter's
start-up and imports (the whole process's CPU time is printed beside it). With `--quick`, the core's
`quick` example binary runs the config instead, timed as a whole process. DiskSim is
timed as a whole process (its start-up, parsing and the final statistics are
included: a few milliseconds).

Needs gcc/g++, make, bison and flex (Debian: `apt-get install bison flex`).
Options: --requests N (default 1,000,000), --repeats R (default 2),
--workloads open:fcfs,... (default all six), --keep DIR (build and outputs kept
there instead of a temporary folder), --json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from callgrind_bench import ROOT, toml  # noqa: E402  (the bench config as TOML)
from disksched.bench import user_shell_env  # noqa: E402

TEMPLATES = Path(__file__).resolve().parent / "disksim_side_by_side"
EXPECTED_RMS = "0.267525"

# workload:scheduler as `disksched bench` names them -> (DiskSim ioqueue policy, its name in
# the manual's Table 1, generators, closed?). disksched's sstf is by cylinder distance, its
# clook ascends in LBN order, its sptf is shortest positioning (seek + rotation) time first.
WORKLOADS = {
    "open:fcfs": (1, "FCFS", 1, False),
    "open:clook": (3, "CYCLE LBN (C-LOOK)", 1, False),
    "open:sstf": (7, "SSTF CYL", 1, False),
    "open:sptf": (8, "SPTF OPT (shortest positioning time first, full positioning)", 1, False),
    "closed32:sptf": (8, "SPTF OPT (shortest positioning time first, full positioning)", 32, True),
    "closed128:sptf": (8, "SPTF OPT (shortest positioning time first, full positioning)", 128, True),
}

# The log-disabling source edits: text replacements whose anchors must each occur exactly once.
FLAG = "DISKSIM_NO_SIMRESULT_LOG"
NOOPS = ["initializeSimResults", "dumpSimResult", "saveSimResults", "set_seekResultIndex",
         "add_new_request", "update_diskBlocksXferred", "update_diskCacheHitStatus",
         "update_mechanicalstate", "update_diskInfo", "update_diskCtlrQueueDepth",
         "update_diskCtlrQueueDepthEnd", "update_diskCtlrTimeBegin", "update_diskCtlrTimeEnd",
         "update_mech_acctimes"]
HEADER_NOOPS = (f"\n/* {FLAG}: the result log compiles to nothing outside disksim_simresult.c */\n"
                f"#if defined({FLAG}) && !defined(DISKSIM_SIMRESULT_IMPL)\n"
                + "".join(f"#define simresult_{n}(...) ((void)0)\n" for n in NOOPS)
                + "#endif\n")
COMPLETION_START = "    simresult_update_diskCtlrTimeEnd( curr->tagID, simtime );\n"
COMPLETION_END = ("        DISKSIM_SIM_RESULT_LIST[simResultTagID].qCCT = DISKSIM_SIM_RESULT_LIST[simResultTagID]"
                  ".diskCtlrTimeEnd - DISKSIM_SIM_RESULT_LIST[tagID].diskCtlrTimeEnd;\n    }\n")
ARRIVE_ASSERT = ('            ddbg_assert2 ( disksim->tagIDBegin < MAX_NUM_SIM_RESULTS, '
                 '"Need to increase size of Sim Results");\n')


def edit(path: Path, anchor: str, replacement: str) -> None:
    text = path.read_text(errors="surrogateescape")
    n = text.count(anchor)
    if n != 1:
        sys.exit(f"{path}: expected one occurrence of {anchor!r}, found {n} (not the 2.01.016 tree?)")
    path.write_text(text.replace(anchor, replacement), errors="surrogateescape")


def patch_tree(tree: Path) -> None:
    """-O2 instead of -g, and the result log behind -DDISKSIM_NO_SIMRESULT_LOG."""
    for mk in ["libddbg", "libparam", "diskmodel", "diskmodel/modules", "diskmodel/tests", "src", "src/modules"]:
        path = tree / mk / "Makefile"
        text = path.read_text()
        new = re.sub(r"^(\s*(?:CFLAGS|CXXFLAGS|DEBUG_OFLAGS)\s*=\s*)-g\b", r"\1-O2", text, flags=re.M)
        if new == text:
            sys.exit(f"{path}: no '-g' compile flags found to replace")
        path.write_text(new)
    edit(tree / "src/Makefile", "DEBUG_OFLAGS = -O2 -DASSERTS", f"DEBUG_OFLAGS = -O2 -DASSERTS -D{FLAG}")
    h = tree / "src/disksim_simresult.h"
    text = h.read_text()
    i = text.rindex("#endif")
    h.write_text(text[:i] + HEADER_NOOPS + "\n" + text[i:])
    c = tree / "src/disksim_simresult.c"
    c.write_text("#define DISKSIM_SIMRESULT_IMPL\n" + c.read_text())
    ctlr = tree / "src/disksim_diskctlr.c"
    text = ctlr.read_text(errors="surrogateescape")
    a, b = text.count(COMPLETION_START), text.count(COMPLETION_END)
    if a != 1 or b != 1:
        sys.exit(f"{ctlr}: disk_completion's result-log block not found as expected ({a}, {b})")
    edit(ctlr, COMPLETION_START, f"#ifndef {FLAG}\n" + COMPLETION_START)
    edit(ctlr, COMPLETION_END, COMPLETION_END + "#endif\n")
    edit(ctlr, ARRIVE_ASSERT, f"#ifndef {FLAG}\n" + ARRIVE_ASSERT + "#endif\n")


def build(src: Path, work: Path) -> Path:
    for tool in ["gcc", "g++", "make", "bison", "flex"]:
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (Debian: apt-get install build-essential bison flex)")
    if not (src / "src" / "disksim_simresult.c").is_file():
        sys.exit(f"{src} is not STABLE/DiskSim_Linux_Generic_2.01.016 (no src/disksim_simresult.c)")
    tree = work / "disksim"
    shutil.copytree(src, tree, symlinks=True)
    patch_tree(tree)
    log = work / "build.log"
    t0 = time.time()
    with open(log, "w") as f:
        r = subprocess.run(["make", "-j1"], cwd=tree, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0 or not (tree / "src" / "disksim").is_file():
        sys.exit(f"DiskSim build failed; see {log}")
    print(f"built DiskSim at -O2 -D{FLAG} in {time.time() - t0:.0f} s ({tree / 'src' / 'disksim'})", flush=True)
    return tree


def run_timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, str]:
    """(user + sys CPU seconds of cmd as a whole process, its stdout)."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, r.stdout


def disksim_validate(tree: Path) -> float:
    """CPU seconds of DiskSim's own Atlas 10K validation run, as a whole process."""
    cpu, _ = run_timed([str(tree / "src/disksim"), "atlas10k.parv", "atlas10k.outv", "validate", "atlas10k.trace", "0"],
                       tree / "valid")
    return cpu


def disksched_validate(python: str, work: Path) -> float:
    """CPU seconds of `disksched validate` on the same trace and drive, as a whole process
    (the interpreter's start-up, imports, parsing, the run and the comparison included)."""
    exe = Path(python).with_name("disksched")
    # As a user's shell runs it, the bytecode cache on; the best of the repeats has it warm.
    cpu, _ = run_timed([str(exe), "validate", "--disk", "atlas10k", "--trace", "atlas10k", "--json"], work, user_shell_env())
    return cpu


def check_rms(tree: Path) -> str:
    valid = tree / "valid"
    disksim_validate(tree)
    _, out = run_timed([str(tree / "src/rms"), "atlas10k.outv", "atlas10k.outv", "-1", "-1", "1"], valid)
    m = re.search(r"rms\s*=\s*([0-9.]+)", out)
    if not m:
        sys.exit(f"no rms in the rms tool's output: {out!r}")
    rms = m.group(1)
    print(f"atlas10k validation: rms = {rms} (expected {EXPECTED_RMS})", flush=True)
    if rms != EXPECTED_RMS:
        sys.exit("the DiskSim build is not sane: atlas10k rms differs")
    return rms


def fill(template: str, values: dict) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


def write_parv(valid: Path, workload: str, requests: int) -> Path:
    policy, policy_name, gens, closed = WORKLOADS[workload]
    gen = fill((TEMPLATES / "generator.parv.in").read_text(),
               {"time_critical": "1.0" if closed else "0.0", "interarrival_ms": "0.0" if closed else "10.0"})
    body = fill((TEMPLATES / "bench.parv.in").read_text(), {
        "workload": workload, "policy": policy, "policy_name": policy_name, "processors": gens,
        "requests": requests, "generators": ",\n".join([gen.rstrip("\n")] * gens),
    })
    path = valid / f"bench_{workload.replace(':', '_')}.parv"
    path.write_text(body)
    return path


def disksim_run(tree: Path, parv: Path) -> dict:
    out = parv.with_suffix(".outv")
    cpu, _ = run_timed([str(tree / "src/disksim"), parv.name, out.name, "ascii", "0", "1"], parv.parent)
    text = out.read_text()
    handled = int(re.search(r"IOdriver Total Requests handled:\s*(\d+)", text).group(1))
    resp = float(re.search(r"IOdriver Response time average:\s*([0-9.]+)", text).group(1))
    return {"cpu_s": cpu, "requests": handled, "mean_response_ms": resp}


# Run in the project's Python: the bench config (with any section's keys overridden by argv[4], JSON), timed
# around the core's run call only.
CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[3])
from disksched import _core
from disksched.bench import bench_configs
workload, sched = sys.argv[1].split(":")
cfg = next(c for w, s, c in bench_configs(int(sys.argv[2])) if (w, s) == (workload, sched))
for section, values in json.loads(sys.argv[4]).items():
    cfg[section].update(values)
r0 = resource.getrusage(resource.RUSAGE_SELF)
summary, counters, _, _ = _core.run(json.dumps(cfg), "<bench>.json", None)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                  "requests": json.loads(counters)["completed"],
                  "mean_response_ms": json.loads(summary)["host_response_ms"]["mean"]}))
"""


def disksched_run(python: str, quick: Path | None, workload: str, requests: int, work: Path,
                  overrides: dict | None = None) -> dict:
    if quick is None:
        child = [python, "-c", CHILD, workload, str(requests), str(ROOT / "python"), json.dumps(overrides or {})]
        whole, out = run_timed(child, work)
        r = json.loads(out.strip().splitlines()[-1])
        r["process_cpu_s"] = whole
        return r
    # The quick example: a whole process, config as TOML (configs from the project's Python).
    get = ("import json,sys; sys.path.insert(0, sys.argv[3]); from disksched.bench import bench_configs; "
           "w, s = sys.argv[1].split(':'); "
           "print(json.dumps(next(c for a, b, c in bench_configs(int(sys.argv[2])) if (a, b) == (w, s))))")
    cfg = json.loads(subprocess.run([python, "-c", get, workload, str(requests), str(ROOT / "python")],
                                    check=True, capture_output=True, text=True).stdout)
    path = work / f"disksched_{workload.replace(':', '_')}.toml"
    path.write_text(toml(cfg))
    cpu, out = run_timed([str(quick), str(path)], work)
    summary = json.loads(out[:out.rindex("}") + 1]) if out.strip() else {}
    return {"cpu_s": cpu, "requests": requests, "process_cpu_s": cpu,
            "mean_response_ms": summary.get("host_response_ms", {}).get("mean", float("nan"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("disksim_src", type=Path, help="STABLE/DiskSim_Linux_Generic_2.01.016 of the DiskSim repository")
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2, help="timed pairs per workload; the best of each is kept")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated workload:scheduler")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="the project's Python")
    ap.add_argument("--quick", type=Path, help="time the core's quick example binary instead of the run call")
    ap.add_argument("--keep", type=Path, help="build and run in this (new or empty) folder and keep it")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON")
    args = ap.parse_args()
    wanted = args.workloads.split(",")
    for w in wanted:
        if w not in WORKLOADS:
            sys.exit(f"unknown workload {w}; expected one of {', '.join(WORKLOADS)}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        if any(args.keep.iterdir()):
            sys.exit(f"{args.keep} is not empty")
        work = args.keep.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="disksim-side-by-side-"))
    try:
        tree = build(args.disksim_src.resolve(), work)
        rms = check_rms(tree)
        # The validation trace end to end, each simulator as a whole process (issue 35: no slower than DiskSim).
        ds_v = min(disksim_validate(tree) for _ in range(args.repeats))
        us_v = min(disksched_validate(args.python, work) for _ in range(args.repeats))
        print(f"atlas10k validation trace, best of {args.repeats} (CPU, whole process): DiskSim {ds_v:.3f} s, "
              f"disksched validate {us_v:.3f} s ({ds_v / us_v:.2f}x)", flush=True)
        rows = []
        print(f"\n{args.requests:,} requests per run, best of {args.repeats} runs each (CPU time, user + sys)", flush=True)
        for w in wanted:
            parv = write_parv(tree / "valid", w, args.requests)
            ds, us = [], []
            for _ in range(args.repeats):
                ds.append(disksim_run(tree, parv))
                us.append(disksched_run(args.python, args.quick, w, args.requests, work))
            d = min(ds, key=lambda r: r["cpu_s"])
            u = min(us, key=lambda r: r["cpu_s"])
            row = {"workload": w, "disksim_req_per_s": d["requests"] / d["cpu_s"],
                   "disksched_req_per_s": u["requests"] / u["cpu_s"],
                   "disksim": ds, "disksched": us}
            row["ratio"] = row["disksched_req_per_s"] / row["disksim_req_per_s"]
            rows.append(row)
            print(f"  {w:15} DiskSim {d['cpu_s']:7.2f} s ({d['requests']:,} done, mean response {d['mean_response_ms']:.2f} ms)"
                  f"   disksched {u['cpu_s']:6.2f} s in the run, {u['process_cpu_s']:6.2f} s as a process"
                  f" ({u['requests']:,} done, mean response {u['mean_response_ms']:.2f} ms)", flush=True)
        print(f"\nDiskSim 4.0 (2.01.016, -O2, no result log; atlas10k rms {rms}) vs disksched\n")
        print("| workload | DiskSim req/s | disksched req/s | ratio |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| {r['workload']} | {r['disksim_req_per_s']:,.0f} | {r['disksched_req_per_s']:,.0f} | {r['ratio']:.1f}x |")
        if args.json:
            print(json.dumps({"rms": rms, "requests": args.requests, "rows": rows,
                              "validate_cpu_s": {"disksim": ds_v, "disksched": us_v}}, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()

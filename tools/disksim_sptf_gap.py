#!/usr/bin/env python3
"""Why DiskSim's SPTF gives longer responses than disksched's on the same drive (issue 35's side by side).

    .venv/bin/python tools/disksim_sptf_gap.py PATH/TO/STABLE/DiskSim_Linux_Generic_2.01.016 [--requests N]

On the side by side's closed SPTF workload (32 clients, no think time, 4 KB, Atlas 10K,
DiskSim's driver-level SPTF, one request at a time in the drive) DiskSim's mean response
is several percent longer than disksched's, while FCFS, C-LOOK and SSTF agree. DiskSim's
driver estimates each request's positioning (`disk_buffer_estimate_servtime`, via
`dm_acctime`) from the drive's `mech_state` as it stands: its angle is the one at the
drive's last internal event (`currtime`), not at the decision's `simtime`, and a write's
command overhead, which passes before the heads move, is not in it. disksched's SPTF
predicts from the phase at the decision time, after the command overhead. This script
builds DiskSim as the side by side does (tools/disksim_side_by_side.py) and runs the
workload as the side by side has it (2/3 reads, the drive's write-back), with all reads,
and with 2/3 reads on the drive without write-back, on DiskSim, on DiskSim with the
estimate's angle advanced by `simtime - currtime`, on DiskSim with that and a write's
overhead (Write miss over. after read / after write) before its positioning, and on
disksched, and prints the mean responses.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disksim_side_by_side import ROOT, build, check_rms, disksched_run, disksim_run, edit, write_parv  # noqa: E402

WORKLOAD = "closed32:sptf"
# The estimate's access time from the angle at the decision time instead of the drive's last event's.
ANGLE_AT = """            nsecs = currdisk->model->mech->dm_acctime(currdisk->model,
                    &currdisk->mech_state, &pbn, curr->bcount,"""
ANGLE_NOW = """            struct dm_mech_state now_state = currdisk->mech_state;
            dm_time_t elapsed_i = dm_time_dtoi(simtime - currdisk->currtime);
            now_state.theta += currdisk->model->mech->dm_rotate(currdisk->model, &elapsed_i);
            nsecs = currdisk->model->mech->dm_acctime(currdisk->model,
                    &now_state, &pbn, curr->bcount,"""
# And a write's command overhead before its positioning, counted in its estimate.
OVERHEAD_TOO = """            struct dm_mech_state now_state = currdisk->mech_state;
            double overhead_ms = (curr->flags & READ) ? 0.0 : ((currdisk->lastflags & READ)
                    ? currdisk->overhead_command_writemiss_afterread : currdisk->overhead_command_writemiss_afterwrite);
            dm_time_t elapsed_i = dm_time_dtoi(simtime - currdisk->currtime + overhead_ms);
            now_state.theta += currdisk->model->mech->dm_rotate(currdisk->model, &elapsed_i);
            nsecs = dm_time_dtoi(overhead_ms) + currdisk->model->mech->dm_acctime(currdisk->model,
                    &now_state, &pbn, curr->bcount,"""
# (label, read fraction, write-back) of each run.
SETUPS = [("2/3 reads, write-back (the side by side's)", 2 / 3, True), ("all reads", 1.0, True),
          ("2/3 reads, write-through", 2 / 3, False)]


def set_once(text: str, pattern: str, value: str, where: str) -> str:
    text, n = re.subn(pattern, value, text)
    if n == 0:
        sys.exit(f"{where}: {pattern!r} not found")
    return text


def parv_for(tree: Path, requests: int, k: int, read_fraction: float, write_back: bool) -> Path:
    """The side by side's parameter file with the read fraction set and, without write-back, the drive's
    `Fast write level` 0 (a copy of atlas10k.diskspecs)."""
    valid = tree / "valid"
    parv = write_parv(valid, WORKLOAD, requests)
    text = set_once(parv.read_text(), r"Probability of read access = [0-9.]+", f"Probability of read access = {read_fraction!r}", str(parv))
    if not write_back:
        specs = set_once((valid / "atlas10k.diskspecs").read_text(), r"Fast write level = 2", "Fast write level = 0", "atlas10k.diskspecs")
        (valid / "atlas10k_write_through.diskspecs").write_text(specs)
        text = set_once(text, r"source atlas10k\.diskspecs", "source atlas10k_write_through.diskspecs", str(parv))
    out = parv.with_name(f"{parv.stem}_{k}.parv")
    out.write_text(text)
    return out


def write_through_spec(work: Path) -> str:
    """disksched's atlas10k without write-back (`fast_write_level = 0`)."""
    path = work / "atlas10k_write_through.toml"
    text = (ROOT / "crates/disksched-core/disks/atlas10k.toml").read_text()
    path.write_text(set_once(text, r"(?m)^fast_write_level = 2$", "fast_write_level = 0", "atlas10k.toml"))
    return str(path)


def rebuild(tree: Path, work: Path) -> None:
    with open(work / "build.log", "a") as f:
        if subprocess.run(["make", "-j1"], cwd=tree, stdout=f, stderr=subprocess.STDOUT).returncode != 0:
            sys.exit(f"the edited DiskSim did not build; see {work / 'build.log'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("disksim_src", type=Path, help="STABLE/DiskSim_Linux_Generic_2.01.016 of the DiskSim repository")
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="the project's Python")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="disksim-sptf-gap-"))
    try:
        tree = build(args.disksim_src.resolve(), work)
        rms = check_rms(tree)
        parvs = [parv_for(tree, args.requests, k, f, wb) for k, (_, f, wb) in enumerate(SETUPS)]
        runs = {"disksim": [disksim_run(tree, p)["mean_response_ms"] for p in parvs]}
        ctlr = tree / "src/disksim_diskctlr.c"
        original = ctlr.read_text(errors="surrogateescape")
        for name, edited in [("angle_now", ANGLE_NOW), ("angle_now_write_overhead", OVERHEAD_TOO)]:
            ctlr.write_text(original, errors="surrogateescape")
            edit(ctlr, ANGLE_AT, edited)
            rebuild(tree, work)
            runs[name] = [disksim_run(tree, p)["mean_response_ms"] for p in parvs]
        wt = write_through_spec(work)
        runs["disksched"] = [disksched_run(args.python, None, WORKLOAD, args.requests, work,
                                           {"workload": {"read_fraction": f}, **({} if wb else {"disk": {"model": wt}})}
                                           )["mean_response_ms"] for _, f, wb in SETUPS]
        print(f"\n{WORKLOAD}, {args.requests:,} requests, mean response ms (DiskSim 2.01.016 at -O2, atlas10k rms {rms})\n")
        print("| run | DiskSim | DiskSim, the estimate's angle at the decision time | and a write's overhead before it | disksched |")
        print("|---|---|---|---|---|")
        for k, (label, _, _) in enumerate(SETUPS):
            d = runs["disksched"][k]
            cells = [f"{runs[n][k]:.2f} ({runs[n][k] / d - 1:+.1%})" for n in ("disksim", "angle_now", "angle_now_write_overhead")]
            print(f"| {label} | {' | '.join(cells)} | {d:.2f} |")
        print(json.dumps({"requests": args.requests, "setups": SETUPS, **runs}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Outputs a hot-path change must leave byte-identical (issue 35), written to one folder.

    .venv/bin/python tools/identity_outputs.py OUT [--no-repro]

writes OUT/<example>.json for every examples/*.toml (`disksched run --json`),
OUT/validate.json (`disksched validate --disk atlas10k --trace atlas10k --json`)
and OUT/reproduce/*.json (`disksched reproduce all --quick`), each with the
fields that measure the host's CPU time (not the simulation) removed. Run it
before and after a change and compare: `diff -r BEFORE AFTER` must print nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / ".venv" / "bin" / "disksched")
# CPU-time measurements and provenance (the command line, with its commit): they differ from run to run by nature.
VOLATILE = ("_us_per_", "wall", "cpu_s", "elapsed", "created", "git", "duration_s", "timestamp", "command", "commit")


def scrub(x):
    """`x` without the volatile fields, at any depth."""
    if isinstance(x, dict):
        return {k: scrub(v) for k, v in x.items() if not any(s in k for s in VOLATILE)}
    if isinstance(x, list):
        return [scrub(v) for v in x]
    if isinstance(x, str) and x.startswith("/"):
        return Path(x).name  # a file in the run's temporary output folder
    return x


def write(path: Path, text: str) -> None:
    path.write_text(json.dumps(scrub(json.loads(text)), indent=1, sort_keys=True) + "\n")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for ex in sorted((ROOT / "examples").glob("*.toml")):
        r = subprocess.run([CLI, "run", str(ex), "--json"], check=True, capture_output=True, text=True, cwd=ROOT)
        write(out / f"{ex.stem}.json", r.stdout)
    r = subprocess.run([CLI, "validate", "--disk", "atlas10k", "--trace", "atlas10k", "--json"],
                       check=True, capture_output=True, text=True, cwd=ROOT)
    write(out / "validate.json", r.stdout)
    if "--no-repro" not in sys.argv:
        tmp = out / "reproduce.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([CLI, "reproduce", "all", "--quick", "--out", str(tmp)], check=True, capture_output=True, cwd=ROOT)
        (out / "reproduce").mkdir(exist_ok=True)
        for j in sorted(tmp.glob("*.json")):
            write(out / "reproduce" / j.name, j.read_text())
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write pgo/disksched.profdata.xz: the profile the release build is optimized with (PGO).

The release build (`make build`, `make test`, `tools/callgrind_bench.py`) passes
`-Cprofile-use` with this profile to rustc, so LLVM lays out and inlines the
code by how often each branch and call ran in real runs (docs/performance.md,
"Profile-guided build"). This script makes that profile:

1. builds the Python extension and the core's `quick` example with
   `-Cprofile-generate` (a separate target folder: the normal build is untouched);
2. runs the training set with them: through the extension (the product, as a
   user runs it) every example config, `validate` on the five built-in
   measured traces, `reproduce all --quick`, and `disksched bench`'s six
   workloads; through `quick` (what `tools/callgrind_bench.py` counts) the
   same six workloads and the examples;
3. merges the counts (`llvm-profdata merge --sparse`) and writes them
   xz-compressed (Python's own lzma decompresses them in the Makefile), and
   pgo/llvm-version, the major version of rustc's LLVM that wrote them.

Needs `llvm-profdata` of the toolchain's own LLVM version
(`rustup component add llvm-tools`). A stale profile is safe: a function whose
code changed since is compiled without profile data, as without PGO; run this
again after changes to the hot path.

    .venv/bin/python tools/pgo_profile.py
"""

from __future__ import annotations

import glob
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "pgo" / "disksched.profdata.xz"
LLVM_VERSION = ROOT / "pgo" / "llvm-version"
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools"))

from disksched.bench import bench_configs  # noqa: E402
from callgrind_bench import toml  # noqa: E402

TRACES = ["atlas10k", "cheetah4lp", "dec_rz26", "hp_c2247a", "st41601n"]
BENCH = ["open:fcfs", "open:clook", "open:sstf", "open:sptf", "closed32:sptf", "closed128:sptf"]
REQUESTS = 100_000


def rustc_version(field: str) -> str:
    """A field of `rustc -vV` ("host", "LLVM version")."""
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(l.split(": ", 1)[1] for l in out.splitlines() if l.startswith(field + ": "))


def llvm_profdata() -> str:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    host = rustc_version("host")
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.exists():
        sys.exit(f"{tool} missing: run 'rustup component add llvm-tools' (llvm-profdata of rustc's own LLVM version)")
    return str(tool)


def main() -> None:
    profdata = llvm_profdata()
    work = Path(tempfile.mkdtemp(prefix="disksched-pgo-"))
    raw = work / "raw"
    env = {**os.environ, "RUSTFLAGS": f"-Cprofile-generate={raw}", "CARGO_TARGET_DIR": str(work / "target")}
    # The extension as maturin builds it (the same crate features, so the same symbol names as the product's).
    subprocess.run([str(ROOT / ".venv" / "bin" / "maturin"), "build", "--release", "--quiet", "-o", str(work / "wheel")],
                   check=True, cwd=ROOT, env=env)
    subprocess.run(["cargo", "build", "--quiet", "--release", "--example", "quick", "-p", "disksched-core"], check=True, cwd=ROOT, env=env)
    wheel = next((work / "wheel").glob("*.whl"))
    site = work / "site"
    shutil.copytree(ROOT / "python" / "disksched", site / "disksched", ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    subprocess.run([sys.executable, "-m", "zipfile", "-e", str(wheel), str(work / "unpacked")], check=True)
    so = next((work / "unpacked" / "disksched").glob("_core*.so"))
    shutil.copy(so, site / "disksched" / so.name)
    run_env = {**os.environ, "PYTHONPATH": str(site), "LLVM_PROFILE_FILE": str(raw / "py-%p-%m.profraw")}
    quick_env = {**os.environ, "LLVM_PROFILE_FILE": str(raw / "quick-%p-%m.profraw")}
    quick = str(work / "target" / "release" / "examples" / "quick")
    cli = [sys.executable, "-m", "disksched"]

    def run(args: list, env: dict) -> None:
        print("  " + " ".join(str(a) for a in args), flush=True)
        subprocess.run(args, check=True, cwd=work, stdout=subprocess.DEVNULL, env=env)

    configs = {f"{w}:{s}": c for w, s, c in bench_configs(REQUESTS)}
    examples = sorted((ROOT / "examples").glob("*.toml"))
    for ex in examples:
        run(cli + ["run", str(ex), "--json"], run_env)
        run([quick, str(ex)], quick_env)
    for trace in TRACES:
        run(cli + ["validate", "--disk", trace, "--trace", trace, "--json"], run_env)
    run(cli + ["reproduce", "all", "--quick", "--out", str(work / "repro")], run_env)
    for w in BENCH:
        path = work / f"{w.replace(':', '_')}.toml"
        path.write_text(toml(configs[w]))
        run(cli + ["run", str(path), "--json"], run_env)
        run([quick, str(path)], quick_env)
    merged = work / "merged.profdata"
    subprocess.run([profdata, "merge", "--sparse", "-o", str(merged)] + sorted(glob.glob(str(raw / "*.profraw"))), check=True)
    OUT.parent.mkdir(exist_ok=True)
    tmp = OUT.with_suffix(".xz.part")
    with open(merged, "rb") as src, lzma.open(tmp, "wb", preset=9) as dst:
        shutil.copyfileobj(src, dst)
    tmp.replace(OUT)
    # The Makefile uses the profile only with a rustc whose LLVM is at least this one (it reads older formats).
    LLVM_VERSION.write_text(rustc_version("LLVM version").split(".")[0] + "\n")
    print(f"{OUT.relative_to(ROOT)}: {OUT.stat().st_size:,} bytes ({merged.stat().st_size:,} uncompressed)")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()

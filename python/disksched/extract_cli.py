"""`disksched extract DEVICE -o spec.toml [--report DIR] [--allow-writes LO-HI] [--budget-min N]`:
opens the device (disksched.extract_devices), runs the extractor (disksched.extract),
writes the spec whole or not at all, and the report."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Optional

from ._core import DiskschedError

_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


def parse_range(text: str, blocks: int) -> tuple[int, int]:
    """"LO-HI" (blocks, inclusive) or "all" -> [lo, hi)."""
    if text.strip().lower() == "all":
        return 0, blocks
    m = _RANGE.match(text)
    if not m:
        raise DiskschedError(f"--allow-writes {text}: expected LO-HI (blocks, inclusive), e.g. 1000000-1999999, or all")
    lo, hi = int(m.group(1)), int(m.group(2))
    if lo > hi:
        raise DiskschedError(f"--allow-writes {text}: {lo} is after {hi}")
    if hi >= blocks:
        raise DiskschedError(f"--allow-writes {text}: block {hi} is past the device's last block {blocks - 1}")
    if hi - lo + 1 < 64:
        raise DiskschedError(f"--allow-writes {text}: the write tests need at least 64 blocks")
    return lo, hi + 1


class _Stages:
    """One progress bar per stage (only on a terminal, after 2 s)."""

    def __init__(self, quiet: bool):
        self.quiet, self.stage, self.bar = quiet, None, None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from .cli import Progress

        if stage != self.stage:
            if self.bar is not None:
                self.bar.close()
            self.stage, self.bar = stage, Progress(f"extract: {stage}")
            self.bar.start -= 2.0  # show at once: each stage is long
        self.bar(done, total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(device: str, out: Path, report: Optional[Path], allow_writes: Optional[str], budget_min: Optional[float],
        seed: int, force: bool, name: Optional[str], quiet: bool = False, walk: str = "sampled") -> tuple:
    from .extract.device import DeviceError
    from .extract.run import extract
    from .extract.spec import to_toml
    from .extract_devices import open_device
    from .output import atomic_write, check_out_file, output_dir

    check_out_file(out, "-o")
    if out.exists() and not force:
        raise DiskschedError(f"-o {out}: exists; use --force to replace it")
    if budget_min is not None and budget_min <= 0:
        raise DiskschedError(f"--budget-min {budget_min:g}: must be above 0")
    from .extract.run import WALK_MODES
    if walk not in WALK_MODES:
        raise DiskschedError(f"--walk {walk}: must be one of {', '.join(WALK_MODES)}")
    try:
        dev = open_device(device, want_writes=allow_writes is not None, seed=seed)
    except DeviceError as e:
        raise DiskschedError(str(e)) from None
    stages = _Stages(quiet)
    try:
        writes = None
        if allow_writes is not None:
            writes = parse_range(allow_writes, dev.blocks)
            dev.allow_writes(*writes)
        from contextlib import nullcontext

        with (output_dir(report, force, "--report") if report is not None else nullcontext()) as tmp:
            try:
                x = extract(dev, seed=seed, progress=stages, budget_min=budget_min, writes=writes,
                            name=name or Path(out).stem, walk_mode=walk)
            except DeviceError as e:
                raise DiskschedError(str(e)) from None
            finally:
                stages.close()
            header = (f"Extracted by `disksched extract {device}` from timing alone: {x.device_s / 60:.2f} device "
                      f"minutes, {x.commands:,} commands, {x.wall_s:.1f} s wall.\n"
                      "The values the --report table lists were measured (each with its confidence); the others are "
                      "the spec format's defaults or settings no timing test here tells (docs/extract.md, Not built).")
            text = to_toml(x.spec, header)
            _check_spec(text)  # the spec must load as any other, before anything is written
            if tmp is not None:
                write_report(tmp, x, device)
            atomic_write(out, lambda p: Path(p).write_text(text))
    finally:
        dev.close()
    return x


def _check_spec(text: str) -> None:
    import tempfile

    from . import _core

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "extracted.toml"
        p.write_text(text)
        try:
            _core.disk_show(str(p))
        except Exception as e:  # a spec the simulator refuses is a bug of the extractor: one line
            raise DiskschedError(f"the extracted spec does not load: {e}") from None


def rows_text(x) -> list[list[str]]:
    out = []
    for name, value, unit, conf, how in x.parameters:
        v = f"{value:.6g}" if isinstance(value, float) else str(value)
        out.append([name, v, unit, f"{conf:.2f}", how])
    return out


def write_report(d: Path, x, device: str) -> None:
    from .output import write_json

    rows = rows_text(x)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["parameter", "value", "unit", "confidence", "how"])
    w.writerows(rows)
    (d / "parameters.csv").write_text(buf.getvalue())
    write_json(d / "extraction.json", {
        "device": device, "device_minutes": x.device_s / 60, "wall_s": x.wall_s, "commands": x.commands,
        "parameters": [dict(zip(["name", "value", "unit", "confidence", "how"], r)) for r in x.parameters],
        "layout_stats": x.geometry.stats, "zones": x.geometry.zones,
        "seek_leads": [{"distance": d_, "lead_ms": m, "spread_ms": s} for d_, m, s in x.seek],
        "seek_ms": x.seek_emitted, "notes": x.notes})
    md = ["# disksched extract: " + device, "",
          f"{x.device_s / 60:.2f} device minutes, {x.commands:,} commands, {x.wall_s:.1f} s wall.", "",
          "| parameter | value | unit | confidence | how |", "|---|---|---|---|---|"]
    md += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows]
    if x.notes:
        md += ["", "Notes:", ""] + [f"- {n}" for n in x.notes]
    (d / "report.md").write_text("\n".join(md) + "\n")
    plots(d, x)


def plots(d: Path, x) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.scatter(np.array(x.phases["lbn"]) / 1e6, x.phases["phase"], s=2)
    ax.set_xlabel("LBN (millions)")
    ax.set_ylabel("rotational phase of the track's first block (turns)")
    ax.set_title("rotational positions measured (a sample of tracks)")
    fig.tight_layout()
    fig.savefig(d / "rotational_scatter.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    dd = [r[0] for r in x.seek_emitted]
    ax.plot(dd, [r[1] for r in x.seek_emitted], marker=".", label="seek (as written)")
    ax.plot(dd, [r[1] for r in x.seek], ".", alpha=0.5, label="lead measured (overhead + seek + sector + bus)")
    ax.set_xscale("symlog")
    ax.set_xlabel("distance (cylinders)")
    ax.set_ylabel("ms")
    ax.legend()
    ax.set_title("seek curve")
    fig.tight_layout()
    fig.savefig(d / "seek_curve.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    for z in x.geometry.zones:
        ax.plot([z["first_cylinder"], z["last_cylinder"] + 1], [z["spt"], z["spt"]], lw=3)
    ax.set_xlabel("cylinder")
    ax.set_ylabel("sectors per track")
    ax.set_title(f"zone map: {len(x.geometry.zones)} zones")
    fig.tight_layout()
    fig.savefig(d / "zone_map.png", dpi=110)
    plt.close(fig)

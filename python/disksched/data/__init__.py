"""Traces shipped inside the package, compressed (every trace reader reads
.zst, .xz and .gz directly), so `validate`, `bench` and the reproductions
work from an installed package. From DiskSim 4.0's validation set (CMU
Parallel Data Lab, BSD-3-Clause; see README.md beside this file).

    >>> from disksched import data
    >>> data.trace_path("atlas10k")          # doctest: +SKIP
    PosixPath('.../disksched/data/atlas10k.trace.zst')
"""

from __future__ import annotations

from pathlib import Path

from .._core import DiskschedError

DIR = Path(__file__).resolve().parent

# name -> file: real-drive validation traces (DiskSim "validate" format, one per
# drive, named after the built-in disk) and HP Labs' one-week workstation trace.
TRACES = {
    "atlas10k": "atlas10k.trace.zst",
    "cheetah4lp": "cheetah4LP.trace.zst",
    "dec_rz26": "dec_rz26.trace.zst",
    "hp_c2247a": "hp_c2247a.trace.zst",
    "st41601n": "st41601n.trace.zst",
    "ajw.1week": "ajw.1week.srt.xz",
}
# lumb2002's drive (atlas10k, Ultra2 bus, write cache off) as `disksched extract` found it through
# `sim:`: host timing jitter (us) -> spec file; the external scheduler's belief in lumb2002's
# extracted-model runs. Written by tools/extract_lumb2002_belief.py, never by hand.
LUMB2002_BELIEFS = {
    0: "atlas10k_ultra2_extracted.toml",
    20: "atlas10k_ultra2_extracted_jitter20us.toml",
}
# Other spellings: the original file names.
_ALIASES = {"cheetah4LP": "cheetah4lp", "ajw.1week.srt": "ajw.1week", "ajw": "ajw.1week"}


def lumb2002_belief_path(jitter_us: int) -> Path:
    """The shipped spec extracted from lumb2002's drive with `jitter_us` of host timing jitter."""
    if jitter_us not in LUMB2002_BELIEFS:
        raise DiskschedError(f"no extracted lumb2002 belief at {jitter_us} us of jitter (have: "
                             f"{', '.join(str(j) for j in LUMB2002_BELIEFS)})")
    path = DIR / LUMB2002_BELIEFS[jitter_us]
    if not path.exists():
        raise DiskschedError(f"{path} is missing from this installation (tools/extract_lumb2002_belief.py writes it)")
    return path


def names() -> list[str]:
    """Names of the built-in traces."""
    return list(TRACES)


def trace_path(name: str) -> Path:
    """Path of the built-in trace `name` (e.g. "atlas10k", "ajw.1week"; a trailing
    ".trace" and the original spellings are accepted)."""
    key = name[:-len(".trace")] if name.endswith(".trace") else name
    key = _ALIASES.get(key, key)
    key = key if key in TRACES else key.lower()
    if key not in TRACES:
        raise DiskschedError(f"unknown built-in trace '{name}' (expected one of: {', '.join(TRACES)})")
    path = DIR / TRACES[key]
    if not path.exists():
        raise DiskschedError(f"built-in trace '{name}': {path} is missing from this installation")
    return path

"""Which extracted parameter costs a model its demerit: for two extracted specs
of one drive (say, without and with host jitter), each scalar setting in which
they differ is put, alone, from the second into the first, and the result is
compared with the truth as the round trips do (`extract_roundtrip.demerit`:
random 4 KB and sequential 64 KB reads, RMS distance of the response-time
distributions, ms). The layout's tables (zones, slips) move as one block.

    .venv/bin/python docs/extract_attribution.py TRUE_DISK BASE OTHER

BASE and OTHER: spec files, or a catalogue drive's name (its spec; the
truth itself as BASE asks which of a model's settings cost it most). Prints
one row per setting in which they differ: BASE with it, then BASE with
OTHER's layout and cylinder count, then OTHER whole. A setting only one of
them writes is put in, or taken out to the simulator's default ("(default)").
"""

from __future__ import annotations

import sys
import tempfile
import tomllib
from pathlib import Path

from disksched import _core
from disksched import extract_roundtrip as rt
from disksched.extract.spec import to_toml


def _scalars(spec: dict, prefix: str = "") -> dict:
    """Every scalar and list setting outside [layout], by dotted name."""
    out = {}
    for k, v in spec.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            if name != "layout":
                out.update(_scalars(v, name + "."))
        elif k not in ("name", "description", "source", "validated"):
            out[name] = v
    return out


_UNSET = object()  # a setting one spec leaves to the simulator's default


def _with(spec: dict, name: str, value) -> dict:
    """`spec` with the dotted setting `name` set to `value`, or without it (`_UNSET`: the default) (a copy, the
    tables it passes through copied)."""
    out = dict(spec)
    node, parts = out, name.split(".")
    for p in parts[:-1]:
        node[p] = dict(node[p])
        node = node[p]
    if value is _UNSET:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return out


def _demerits(disk: str, spec: dict, folder: Path, label: str) -> str:
    """'random | sequential' demerit (ms) of `spec` against `disk`, or why the mixed spec is not one."""
    path = folder / f"{label}.toml"
    path.write_text(to_toml(spec))
    try:
        d = rt.demerit(disk, str(path))
    except _core.DiskschedError as e:
        # (settings that hold only together, as a read-ahead mode and its segment size)
        return "not a valid spec alone: " + str(e).split(": ", 1)[-1] + " |"
    return f"{d['random']['demerit_ms']:.3f} | {d['sequential']['demerit_ms']:.3f}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    disk, base_path, other_path = argv
    base, other = (tomllib.loads(Path(p).read_text() if Path(p).exists() else _core.disk_show(p)[0]) for p in (base_path, other_path))
    a, b = _scalars(base), _scalars(other)
    # (the cylinder count goes with the layout; a setting in one spec only is put in, or taken out to the
    # simulator's default: the truth's catalogue specs leave some out, as `read_ahead_on_idle_hit`)
    changed = [k for k in sorted(set(a) | set(b)) if a.get(k, _UNSET) != b.get(k, _UNSET) and k != "cylinders"]
    print(f"{disk}: {Path(base_path).name} with one setting of {Path(other_path).name} (demerit random / sequential, ms)\n")
    print("| setting | base | other | demerit random | demerit sequential |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        short = (lambda v: "[...]" if isinstance(v, list) else "(default)" if v is _UNSET else v)
        print(f"| (none: the base) | | | {_demerits(disk, base, folder, 'base')} |")
        for k in changed:
            va, vb = a.get(k, _UNSET), b.get(k, _UNSET)
            print(f"| {k} | {short(va)} | {short(vb)} | {_demerits(disk, _with(base, k, vb), folder, 'one')} |")
        laid = {**base, "layout": other["layout"], "cylinders": other["cylinders"]}
        print(f"| [layout] and cylinders | | | {_demerits(disk, laid, folder, 'layout')} |")
        print(f"| (all: the other) | | | {_demerits(disk, other, folder, 'other')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

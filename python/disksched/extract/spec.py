"""The extracted drive as a disk spec (TOML) that `run`, `validate`,
`characterize` and `serve` read. Written from measured values only."""

from __future__ import annotations

import math

import numpy as np
from typing import Any

from .layout import Geometry


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(round(v, 6))
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(type(v))


def to_toml(spec: dict, header: str = "") -> str:
    lines = [f"# {h}" for h in header.splitlines()] if header else []
    tables = []
    for k, v in spec.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            tables.append((k, v))
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    for k, v in tables:
        if isinstance(v, dict):
            lines.append("")
            lines.append(f"[{k}]")
            sub = []
            for kk, vv in v.items():
                if isinstance(vv, list) and vv and isinstance(vv[0], dict):
                    sub.append((kk, vv))
                else:
                    lines.append(f"{kk} = {_toml_value(vv)}")
            for kk, rows in sub:
                for row in rows:
                    lines.append("")
                    lines.append(f"[[{k}.{kk}]]")
                    lines += [f"{a} = {_toml_value(b)}" for a, b in row.items()]
    return "\n".join(lines) + "\n"


# The most zones a spec may list (the simulator's `disk::spec::limits::MAX_ZONES`; tests/test_extract.py checks they agree).
SPEC_MAX_ZONES = 1 << 16


def layout_section(g: Geometry, shift_sectors_of_spt) -> tuple[dict, dict]:
    """[layout]: one zone per run of cylinders of one sectors-per-track and
    skews, spares at each zone's end (DiskSim's sectors-per-zone), every
    track slot the heads pass without a block (slipped or empty tracks),
    every slipped sector and the unused last sectors of every short track
    listed as slips. Returns (layout dict, notes).
    `shift_sectors_of_spt(spt)`: sectors from a completion's phase back to
    its sector's start."""
    tracks, S = g.tracks, g.surfaces
    # the same spare sectors at the end of every track (DiskSim's sectors-per-track): every track but
    # each zone's last one short by the same count
    lasts = {z["first_track"] - 1 for z in g.zones} | {len(tracks) - 1}
    short = [t.spt - t.count - len(t.slips) for i, t in enumerate(tracks) if i not in lasts]
    k, share = 0, 0.0
    if short:
        vals, cnt = np.unique(short, return_counts=True)
        k, share = int(vals[np.argmax(cnt)]), float(cnt.max()) / len(short)
    per_track = k if k > 0 and share >= 0.95 else 0
    zones = []
    zone_starts = [z["first_track"] for z in g.zones] + [len(tracks)]
    unplaced = 0
    shift = 0  # cylinders added to earlier zones (a zone whose blocks overflow its slots gets more)
    for zi, z in enumerate(g.zones):
        t0, t1 = zone_starts[zi], zone_starts[zi + 1]
        n = z["spt"]
        c0 = z["first_cylinder"]
        ncyl = z["last_cylinder"] - c0 + 1
        ts = float(z["track_skew"] or 0)
        cs = float(z["cylinder_skew"] if z["cylinder_skew"] is not None else ts)
        blocks = sum(t.count for t in tracks[t0:t1])
        used = set()
        slips = []
        last_slot = -1
        for t in tracks[t0:t1]:
            j = (t.cyl - c0) * S + t.head
            used.add(j)
            last_slot = max(last_slot, j)
            for k, off in enumerate(sorted(t.slips)):
                slips.append(j * n + off + k)
            # a track short of its sectors (spares at the end of a cylinder or of a range of cylinders, the
            # sparing of Cheetah 4LP, Barracuda, ST41601N): its last sectors hold no block, so the next track's
            # first block starts on that track's first sector, where the walk saw it
            if t is not tracks[t1 - 1]:
                slips.extend(range(j * n + t.count + len(t.slips), (j + 1) * n))
        for j in range(last_slot):
            if j not in used:
                slips.extend(range(j * n, (j + 1) * n))
        slips.sort()
        # the zone's first-block angle: what each track's first block says once its slot's skews are taken
        # off, the circular median over the zone's tracks (one track's level can be sectors off by noise)
        res = []
        for t in tracks[t0:t1]:
            j = (t.cyl - c0) * S + t.head
            res.append(((t.level + t.first) % n - (j - j // S) * ts - (j // S) * cs) / n)
        ang = np.exp(2j * np.pi * np.array(res))
        ref = float(np.angle(ang.mean()) / (2 * np.pi))
        sigma = (ref + float(np.median((np.array(res) - ref + 0.5) % 1.0 - 0.5))) * n - shift_sectors_of_spt(n)
        slots = ncyl * S * n
        need = blocks + (per_track * ncyl * S if per_track else len(slips))
        extra = 0
        if need > slots:  # a misplaced boundary made a track longer than a track: keep every block
            extra = -(-(need - slots) // (S * n))
            unplaced += need - slots
            ncyl += extra
            slots = ncyl * S * n
        if per_track:
            # slips of whole tracks stay (each a track's sectors); sector slips would turn later tracks
            sector_slips = sum(len(t.slips) for t in tracks[t0:t1])
            unplaced += sector_slips
            unplaced += len([x for x in slips if (x // n) not in used]) // n  # skipped tracks: not expressible here
            slips = []
            spares = per_track
        else:
            # slips push the zone's blocks into its spare space: the spares are every slot without a block
            spares = slots - blocks
            if spares < len(slips):
                unplaced += len(slips) - spares
            if spares < 0:
                unplaced += -spares
                spares = 0
        zones.append({"first_cylinder": c0 + shift, "last_cylinder": z["last_cylinder"] + shift + extra, "sectors_per_track": n,
                      "first_block_offset_sectors": float(round(sigma % n, 3)), "track_skew_sectors": ts,
                      "cylinder_skew_sectors": cs, "spares": int(spares), "slips": slips})
        shift += extra
    sparing = "sectors-per-track" if per_track else "sectors-per-zone"
    return ({"mapping": "cylinder-major", "sparing": sparing, "sparing_range_cylinders": 1, "zones": zones},
            {"sparing": sparing, "slips_not_expressed": unplaced})

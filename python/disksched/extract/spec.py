"""The extracted drive as a disk spec (TOML) that `run`, `validate`,
`characterize` and `serve` read. Written from measured values only."""

from __future__ import annotations

import math
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


def layout_section(g: Geometry, shift_sectors_of_spt) -> tuple[dict, dict]:
    """[layout] with one zone per run of cylinders of one sectors-per-track and
    skew; returns (layout dict, notes). `shift_sectors_of_spt(spt)`: sectors to
    subtract from every measured first-LBN sector (completion -> sector start)."""
    tracks, S = g.tracks, g.surfaces
    full = [t.count + len(t.slips) == t.spt for t in tracks]
    per_track = None
    # sparing: spares at each zone's end (most drives), or the same spares on every track
    short = [t.spt - t.count - len(t.slips) for t in tracks]
    inner = short[:-1] if len(short) > 1 else short
    if inner and all(s == inner[0] for s in inner) and inner[0] > 0:
        per_track = inner[0]
    sparing = "sectors-per-track" if per_track else "sectors-per-zone"
    zones = []
    cyl_of_track = []
    starts = g.cylinders + [len(tracks)]
    for c in range(len(g.cylinders)):
        cyl_of_track += [c] * (starts[c + 1] - starts[c])
    zone_starts = [z["first_track"] for z in g.zones] + [len(tracks)]
    unplaced = 0
    for zi, z in enumerate(g.zones):
        t0, t1 = zone_starts[zi], zone_starts[zi + 1]
        n = z["spt"]
        ncyl = z["last_cylinder"] - z["first_cylinder"] + 1
        blocks = sum(t.count for t in tracks[t0:t1])
        slips = []
        for j, t in enumerate(tracks[t0:t1]):
            for k, off in enumerate(sorted(t.slips)):
                slips.append(j * n + off + k)
        first = tracks[t0]
        sigma = (first.level + first.first) % n - shift_sectors_of_spt(n)
        row = {"first_cylinder": z["first_cylinder"], "last_cylinder": z["last_cylinder"], "sectors_per_track": n,
               "first_block_offset_sectors": float(round(sigma % n, 3)),
               "track_skew_sectors": float(z["track_skew"] if z["track_skew"] is not None else 0),
               "cylinder_skew_sectors": float(z["cylinder_skew"] if z["cylinder_skew"] is not None
                                               else (z["track_skew"] or 0))}
        slots = ncyl * S * n
        if per_track:
            row["spares"] = per_track
            row["slips"] = []
            unplaced += len(slips)
        else:
            spares = slots - blocks - len(slips)
            if spares < 0:  # the zone's cylinders hold more tracks than the surfaces say: keep every LBN
                unplaced += -spares
                spares = 0
            row["spares"] = spares
            row["slips"] = slips
        zones.append(row)
    return ({"mapping": "cylinder-major", "sparing": sparing, "sparing_range_cylinders": 1, "zones": zones},
            {"sparing": sparing, "slips_not_expressed": unplaced})

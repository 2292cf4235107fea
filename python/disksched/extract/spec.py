"""The extracted drive as a disk spec (TOML) that `run`, `validate`,
`characterize` and `serve` read. Written from measured values only."""

from __future__ import annotations

import math

import numpy as np
from typing import Any, Optional

from .layout import Geometry, _mode


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
            sub, nested = [], []
            for kk, vv in v.items():
                if isinstance(vv, list) and vv and isinstance(vv[0], dict):
                    sub.append((kk, vv))
                elif isinstance(vv, dict):
                    nested.append((kk, vv))     # ([layout.g4]: a banded serpentine's track table)
                else:
                    lines.append(f"{kk} = {_toml_value(vv)}")
            for kk, vv in nested:
                lines.append("")
                lines.append(f"[{k}.{kk}]")
                lines += [f"{a} = {_toml_value(b)}" for a, b in vv.items()]
            for kk, rows in sub:
                for row in rows:
                    lines.append("")
                    lines.append(f"[[{k}.{kk}]]")
                    lines += [f"{a} = {_toml_value(b)}" for a, b in row.items()]
    return "\n".join(lines) + "\n"


# The most zones a spec may list (the simulator's `disk::spec::limits::MAX_ZONES`; tests/test_extract.py checks they agree).
SPEC_MAX_ZONES = 1 << 16


def _angle_residuals(tracks: list, c0: int, S: int, n: int, ts: float, cs: float,
                     slots: Optional[list] = None) -> np.ndarray:
    """Each track's first-block sector with its slot's skews (from cylinder `c0`, head 0) taken off, in
    revolutions: one value over a zone whose angle never turns. `slots`: (zone-relative track slot, first LBN of
    the slot) of each track where the spec lays its blocks, when not the track's own (cylinder, head) and first
    LBN: the sector the track's level puts that LBN on."""
    res = []
    for i, t in enumerate(tracks):
        j, first = ((t.cyl - c0) * S + t.head, t.first) if slots is None else slots[i]
        res.append(((t.level + first) % n - (j - j // S) * ts - (j // S) * cs) / n)
    return np.array(res)


def _spec_slots(tracks: list, firsts: np.ndarray, lbn0: int, cap_tracks: int, per: int, n: int) -> tuple[list, list]:
    """Under sparing per track the spec lays a zone's blocks in order over every slot of its cylinders, `per`
    blocks to a track from its first LBN `lbn0`: a slot the model leaves without a block (a cylinder of a zone
    the assembly ended a few tracks in, then the next zone on the next cylinder) is not expressible, and the
    blocks the model puts after it are in the spec's slots before it. The tracks of `n` sectors whose middle
    block the spec lays in the zone's `cap_tracks` slots, and (slot, the slot's first LBN) of each. `firsts`: the
    tracks' first LBNs."""
    lo = int(np.searchsorted(firsts, lbn0, side="right")) - 1
    out, slots = [], []
    for t in tracks[max(lo, 0):]:
        mid = t.first + t.count // 2
        if mid < lbn0:
            continue
        j = (mid - lbn0) // per
        if j >= cap_tracks:
            break
        if t.spt == n and t.count > 0:
            out.append(t)
            slots.append((j, lbn0 + j * per))
    return out, slots


# A turn of a zone's angle is believed over at least this many cylinders and tracks (a cylinder or a few tracks a
# sector off are a level misread under noise, or slips in cylinders one after another: left to the zone around).
TURN_MIN_CYLINDERS, TURN_MIN_TRACKS = 2, 8


def _turned_zones(g: Geometry) -> list:
    """g.zones, each cut where its tracks' first-block angle turns for good after a slip, so that the spec's one
    angle per zone holds. A drive that slips a sector in a cylinder (or track) unit turns every later unit of
    the zone one sector further (DiskSim's sectors-per-cylinder sparing: ST41601N's 26 slips in 7 zones);
    without noise that skew, one sector over the cylinder switch's, starts a new zone where the tracks are
    placed, but under noise it is within a switch's tolerance, and the zone's one angle, the median over its
    tracks, left the cylinders on one side of each slip a sector or more off (ST41601N at 20 us: whole zones
    1-2 sectors off, two thirds of its blocks within one sector). The angle is each cylinder's median residual
    to the sector; a zone is cut where it turns on by as many sectors as the cylinders just before hold slips
    (listed, or blocks missing from a track that is not its cylinder's last, over the zone's usual), and holds
    over TURN_MIN_CYLINDERS cylinders and TURN_MIN_TRACKS tracks. (A turn without slips is levels misread:
    HP C2490A at 20 us has a stretch of predicted tracks a sector off, which the zone's median outvotes.)"""
    tracks, S = g.tracks, g.surfaces
    starts = [z["first_track"] for z in g.zones] + [len(tracks)]
    out = []
    for zi, z in enumerate(g.zones):
        t0, t1, n = starts[zi], starts[zi + 1], z["spt"]
        ts = float(z["track_skew"] or 0)
        cs = float(z["cylinder_skew"] if z["cylinder_skew"] is not None else ts)
        res = _angle_residuals(tracks[t0:t1], z["first_cylinder"], S, n, ts, cs)
        ref = float(np.angle(np.exp(2j * np.pi * res).mean()) / (2 * np.pi))
        sectors = ((res - ref + 0.5) % 1.0 - 0.5) * n
        # slips: the blocks a track that is not its cylinder's last lacks, over the zone's usual
        inner = [k for k in range(t0, t1 - 1) if tracks[k + 1].cyl == tracks[k].cyl]
        usual = _mode([n - tracks[k].count for k in inner], 0)
        # (only where the zone's cylinders hold spare sectors, a cylinder's last track or every track short of its
        # sectors: a slip turns the later cylinders where it pushes its cylinder's blocks into the cylinder's own
        # spares, DiskSim's sectors per cylinder or per track; a drive whose cylinders hold none spares at the
        # zone's or the disk's end, and its slips turn nothing. Atlas III at 20 us, seed 3: a track a block short
        # of a slip, the levels predicted after it a sector late, was cut into a zone of its own 26 cylinders long
        # whose angle was a sector off)
        lasts = [k for k in range(t0, t1 - 1) if tracks[k + 1].cyl != tracks[k].cyl]
        spared = usual > 0 or _mode([n - tracks[k].count - len(tracks[k].slips) for k in lasts], 0) > 0
        slips = np.zeros(t1 - t0 + 1, dtype=np.int64)
        for k in inner if spared else []:
            slips[k - t0 + 1] = max(n - tracks[k].count - usual, 0)
        slips = np.cumsum(slips)     # slips[k - t0]: in the zone's tracks before k
        # runs of cylinders of one angle: [first track, end track, angle in whole sectors]
        runs: list = []
        k = t0
        while k < t1:
            e = k
            while e < t1 and tracks[e].cyl == tracks[k].cyl:
                e += 1
            v = int(np.round(np.median(sectors[k - t0:e - t0])))
            if runs and runs[-1][2] == v:
                runs[-1][1] = e
            else:
                runs.append([k, e, v])
            k = e
        kept: list = []
        since = t0    # first track of the last cylinder of the last run believed: its slips turn what follows
        last_v = None  # the angle of that run, kept as a zone of its own or not
        for f, e, v in runs:
            held = e - f >= TURN_MIN_TRACKS and tracks[e - 1].cyl - tracks[f].cyl + 1 >= TURN_MIN_CYLINDERS
            # a turn is the step from the run believed just before, not from the last zone cut: a turn left
            # uncut (a slip the layout missed: no slips before it) must not make every later turn of the zone
            # look as large as the two together (ST41601N at 20 us: a slip missed at cylinder 1,004 refused the
            # next slip's turn, and 33 cylinders were left 2 sectors off)
            if not kept or held and kept[-1][3] and 0 < v - last_v <= slips[f - t0] - slips[since - t0]:
                kept.append([f, e, v, held])
            else:
                kept[-1][1] = e          # too short to believe, or no slips to turn it: the run before's
                if not held:
                    continue
                if not kept[-1][3]:
                    kept[-1][2:] = [v, True]    # (the zone's first run too short: its angle this one's)
            if held or last_v is None:
                last_v = v
            since = next(m for m in range(e - 1, t0 - 1, -1) if m == t0 or tracks[m - 1].cyl != tracks[e - 1].cyl)
        # a track that holds more blocks than its sectors (a boundary misplaced under noise, not mended) pushes
        # every later block of its zone that many sectors on in the spec, which lays a zone's blocks in order over
        # its sectors: the zone is cut at the next cylinder, so the push ends with the over-full track's cylinder
        # (ST41601N at 20 us: a track of 67 blocks in a zone of 65 left 47 cylinders' tracks a few blocks off)
        cuts = {f for f, _, _, _ in kept}
        for k in range(t0, t1 - 1):
            if tracks[k].count + len(tracks[k].slips) > n:
                m = next((m for m in range(k + 1, t1) if tracks[m].cyl != tracks[k].cyl), None)
                if m is not None and not any(k < c <= m for c in cuts):
                    cuts.add(m)
        firsts = sorted(cuts)
        for a, f in enumerate(firsts):
            last = tracks[firsts[a + 1]].cyl - 1 if a + 1 < len(firsts) else z["last_cylinder"]
            out.append(dict(z, first_track=f, first_cylinder=z["first_cylinder"] if a == 0 else tracks[f].cyl,
                            last_cylinder=last))
    return out if len(out) <= SPEC_MAX_ZONES else list(g.zones)


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
    turned = _turned_zones(g)
    zone_starts = [z["first_track"] for z in turned] + [len(tracks)]
    unplaced = 0
    shift = 0  # cylinders added to earlier zones (a zone whose blocks overflow its slots gets more)
    spec_lbn = 0  # (sparing per track) the first LBN the spec lays in the zone
    firsts = np.array([t.first for t in tracks]) if per_track else None
    for zi, z in enumerate(turned):
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
        slots = ncyl * S * n
        need = blocks + (per_track * ncyl * S if per_track else len(slips))
        extra = 0
        if need > slots:  # a misplaced boundary made a track longer than a track: keep every block
            extra = -(-(need - slots) // (S * n))
            unplaced += need - slots
            ncyl += extra
            slots = ncyl * S * n
        # the zone's first-block angle: what each track's first block says once its slot's skews are taken
        # off, the circular median over the zone's tracks (one track's level can be sectors off by noise)
        # (under sparing per track, the slots the spec itself lays the blocks on, `_spec_slots`: the model's
        # (cylinder, head) only while every earlier zone's slots hold a block each. DEC RZ26 at 20 us, seed 3: a
        # zone the assembly ended two tracks into a cylinder took the cylinder's twelve other slots in the spec, the
        # next zone's first twelve tracks; the next zone's angle, fitted to the model's slots of its tracks, was
        # 14 sectors off the slots the spec gave them)
        res = None
        if per_track:
            own, own_slots = _spec_slots(tracks, firsts, spec_lbn, ncyl * S, n - per_track, n)
            if own:
                res = _angle_residuals(own, c0, S, n, ts, cs, own_slots)
            spec_lbn += ncyl * S * (n - per_track)
        if res is None:
            res = _angle_residuals(tracks[t0:t1], c0, S, n, ts, cs)
        ang = np.exp(2j * np.pi * res)
        ref = float(np.angle(ang.mean()) / (2 * np.pi))
        sigma = (ref + float(np.median((res - ref + 0.5) % 1.0 - 0.5))) * n - shift_sectors_of_spt(n)
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

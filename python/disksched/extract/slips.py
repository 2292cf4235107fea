"""Slips placed inside their tracks under timing noise.

Without noise the walk places every slipped sector to the block (`layout.tracks_of_walk`). With noise wider
than a sector it sees only that a track holds fewer blocks than its neighbours, and the spec puts the
missing sectors at the track's end: the blocks between the true slip and the end lie a sector later than
the model says (Cheetah 9LP at 20 us of jitter: 34 of its first zone's tracks).

Timing noise only ever makes a completion late, so the earliest of repeated reads of a block tends to
its true phase. Each short track's first block (before any slip) and last block (after all of them) are
read `REFERENCE_READS` times, the earliest of each giving the two levels; the first block at each level
after the first is then found by bisection, each probe read again while it looks like the later level
(`layout.search`'s `confirm`), as many times as the references' own spread says make a late read of the
earlier level unlikely (`rereads_for`).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import numpy as np

from .device import Device
from .layout import Geometry, Prober, _fold1, _mode, search
from .timing import Clock

#: reads of a short track's first and last block; the earliest of each is its level (with 20 us of
#: exponential noise the earliest of 8 is about 2.5 us late, a tenth of a 10,000 rpm drive's sector)
REFERENCE_READS = 8
#: the chance a bisection step takes the earlier level for the later one, that the rereads aim below
STEP_ERROR = 1e-3
#: a track short by more (and by more than a sixteenth of its sectors) ends a range of cylinders whose spares
#: lie at its end (the sparing of Cheetah 4LP and Barracuda: hundreds of such tracks): not searched
MAX_MISSING = 3
#: rereads of a probe that looks like the later level: at least, at most
MIN_REREADS, MAX_REREADS = 3, 30


def short_tracks(g: Geometry) -> list:
    """(track index, sectors missing): tracks with no slip placed holding a few blocks fewer than the
    zone's tracks on the same surface commonly do (a cylinder's spare sectors at its last track are common
    to that surface, so not missing)."""
    out = []
    starts = [z["first_track"] for z in g.zones] + [len(g.tracks)]
    for z0, z1 in zip(starts, starts[1:]):
        tracks = range(z0, z1)
        held = defaultdict(list)   # by surface: blocks and placed slips of each track
        for i in tracks:
            held[g.tracks[i].head].append(g.tracks[i].count + len(g.tracks[i].slips))
        common = {head: _mode(v) for head, v in held.items()}
        for i in tracks:
            t = g.tracks[i]
            missing = common[t.head] - t.count - len(t.slips)
            if 0 < missing <= max(MAX_MISSING, t.spt // 16) and t.count >= 3 and not t.slips:
                out.append((i, missing))
    return out


def rereads_for(late_share: float) -> int:
    """Rereads that leave a probe of the earlier level read late every time with chance under
    `STEP_ERROR`, when `late_share` of single reads are over half a sector late."""
    if late_share <= 0.0:
        return MIN_REREADS
    if late_share >= 1.0:
        return MAX_REREADS
    return int(min(max(math.ceil(math.log(STEP_ERROR) / math.log(late_share)), MIN_REREADS), MAX_REREADS))


def _earliest(x: int, reads: int, phases: list):
    """Generator: `reads` reads of block `x`; returns the earliest phase (each kept in `phases`)."""
    best = yield x
    phases.append(best)
    for _ in range(reads - 1):
        ph = yield x
        phases.append(ph)
        if _fold1(ph - best, 1.0) < 0:
            best = ph
    return best


def _references(first: int, last: int, spt: int, out: dict, key: int):
    """Generator: the levels of blocks `first` and `last` (earliest of `REFERENCE_READS` each), and each
    read's lateness past its block's earliest, in sectors, into `out[key]`."""
    p0, p1 = [], []
    e0 = yield from _earliest(first, REFERENCE_READS, p0)
    e1 = yield from _earliest(last, REFERENCE_READS, p1)
    # (each block's earliest read is its reference, not a draw of the lateness)
    late = sorted(_fold1(p - e0, 1.0) * spt for p in p0)[1:] + sorted(_fold1(p - e1, 1.0) * spt for p in p1)[1:]
    out[key] = (e0 * spt - first, e1 * spt - last, late)


def _place(first: int, last: int, spt: int, level0: float, jumps: int, rereads: int):
    """Generator: the offsets from `first` of the first block at each of the `jumps` levels after
    `level0` (the track's slips, as `Track.slips` holds them)."""
    offs = []
    a = first
    for k in range(1, jumps + 1):
        pos = yield from search(a, last, (level0 + k - 1, spt), (level0 + k, spt), confirm=rereads)
        offs.append(pos - first)
        a = max(a, pos - 1)
    return offs


def place_slips(dev: Device, g: Geometry, clock: Clock, rng: random.Random, spread: int) -> dict:
    """Place the unplaced slips of `g`'s short tracks (under timing noise) in place, `spread` tracks at a
    time (each track's searches over a short time: the phase of a late read drifts with any error of the
    period). Returns counts for the stats."""
    todo = short_tracks(g)
    prober = Prober(dev, clock, rng, spread=spread)
    stats = {"short_tracks": len(todo), "short_tracks_inconsistent": 0, "slips_placed": 0, "slips_at_end": 0, "slip_rereads": 0}
    for b in range(0, len(todo), spread):
        batch = todo[b:b + spread]
        refs: dict = {}
        prober.run([_references(g.tracks[i].first, g.tracks[i].first + g.tracks[i].count - 1, g.tracks[i].spt, refs, i)
                    for i, _ in batch])
        late = np.concatenate([refs[i][2] for i, _ in batch])
        rereads = rereads_for(float(np.mean(late > 0.5)))
        stats["slip_rereads"] = max(stats["slip_rereads"], rereads)
        tasks, which = [], []
        for i, missing in batch:
            t = g.tracks[i]
            level0, level1, _ = refs[i]
            jumps = int(round(_fold1(level1 - level0, t.spt)))
            if not 0 <= jumps <= missing:
                # more sectors turned than the track misses (HP C2490A at 20 us: 12 for 1, a track a block
                # off its boundary, its last block on the next track): nothing to place
                stats["short_tracks_inconsistent"] += 1
                jumps = 0
            stats["slips_at_end"] += missing - jumps
            if jumps:
                tasks.append(_place(t.first, t.first + t.count - 1, t.spt, level0, jumps, rereads))
                which.append(i)
        for i, offs in zip(which, prober.run(tasks)):
            g.tracks[i].slips = sorted(g.tracks[i].slips + offs)
            stats["slips_placed"] += len(offs)
    stats["slip_probes"] = prober.probes
    return stats

"""The sampled layout walk (`--walk sampled`): Skippy's walk on stretches only,
DIXtrac-style prediction in between.

Within a zone the layout is regular: every track holds the same number of
LBNs, and the first block of the next track sits one track skew (or, after
the last surface, one cylinder skew) further round. So a dense walk over a
stretch of tracks (`layout.tracks_of_walk`, the same code as the whole-disk
walk) gives the zone's LBNs per track, its two skews and where the heads are;
from there every later track's first LBN and its level (sector - LBN, the
angle of its first block) are predicted, and checked at sparse checkpoints:
two single-block probes, the predicted first LBN of a track (it must show the
track's level) and the LBN just before it (the previous track's level). A
checkpoint that disagrees (a slip, a short track, a skipped track, a zone
boundary, a change of skew) is bracketed by the last one that agreed; the
first disagreeing track is found by bisection with the same two-probe check,
and a dense stretch from a few tracks before it to a few dozen after places
what changed exactly (slips to the block, boundaries, the new zone's
parameters) before the prediction resumes.

What it can miss: whatever leaves every checkpoint in agreement. A slip and a
later compensating shift between two checkpoints (an extra sector, which
DiskSim layouts do not have) would hide; so would a change that moves no
boundary of the checked tracks (a slip in the last sector of a track whose
next track starts where predicted). Slips under timing noise wider than a
sector are not seen by a dense walk either; the check then relies on the
boundary's LBN, which a slip moves, and the slip is placed inside its track
after the other tests (`slips.place_slips`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .device import Device, DeviceError
from .layout import ZONE_MIN_PAIRS, Track, _assemble, _fold, _mode, _place, _skews_of, pair_spt, tracks_of_walk, walk
from .spec import SPEC_MAX_ZONES
from .timing import Clock, refine_period


class NotZoned(DeviceError):
    """The walk needed more dense stretches than a spec may list zones (each stretch may begin one), or the
    tracks it has walked so far assemble into zones at a rate that would put more than a spec may list on
    the whole disk, or into zones of a few tracks each: the layout is not zones of cylinders it can follow.
    (maxtor300g's DiskSim 4 track table never reaches the first: its walk takes 524 device minutes without
    reaching it, and the zones it assembles, 262,243, say so only at the end; its first 44 tracks already
    assemble into 37 zones, about 427,000 on the whole disk.)"""


#: the walk assembles the tracks it has so far (`_zones_projected`) once it has this many: each time they change
#: while fewer than 16 times as many (each assembly a few milliseconds), then each time their number doubles
PROJECT_FROM_TRACKS = 32
#: ... and gives up only on a rate measured over at least this many zones (a few zones in a disk's first tracks,
#: a zone change or two that noise made, carried over a disk of a million tracks, are no rate: desk250 at 20 us,
#: 4 zones in its first 22,846 tracks, 9,216 projected; the most any zoned catalogue drive showed, 15, HP C2247A
#: at 20 us in 4,898 tracks)
PROJECT_MIN_ZONES = 16
#: ... or on zones that hold fewer tracks than this on average: a zone of cylinders holds whole cylinders, the
#: catalogue's hundreds of tracks at the least, and no early check on its zoned drives sees PROJECT_MIN_ZONES zones at
#: all. A banded serpentine of a few surfaces on a smaller disk stays under the spec's limit (2 surfaces in bands of
#: 64 cylinders, 120,000 tracks: about 47,600 zones projected, walked for hours) but not under this: its first 120
#: tracks assemble into 44 zones, 2.7 tracks each (at most 3.7 at any of its checks)
ZONE_MIN_TRACKS = 8
#: ... while they cover at most this part of the disk (1/4): past it the walk is no longer early, and the assembly of
#: the whole walk decides (each check costs an assembly of the tracks so far: desk250's, 276,000 tracks at a quarter,
#: two seconds)
PROJECT_UNTIL = 4
#: the least tolerance of a checkpoint's level under timing noise, sectors (see `sampled_layout`)
CHECK_TOL_SECTORS = 0.6


def _zones_projected(tracks: list, exact: bool, end: int, surfaces: Optional[int] = None) -> tuple[int, float]:
    """The zones the tracks walked so far assemble into (`layout._assemble` on a copy: what the finished walk's
    tracks go through), with the surfaces the walk found when it found them, and that rate carried over the
    disk's `end` blocks. (The assembly's own count of surfaces, the commonest gap between cylinder skews, took
    Atlas 10K's first 21,095 tracks for one surface: a change of its head skew, 63 to 62 sectors, outnumbered
    its cylinder skew in them, and they assembled into 15,846 zones, about 41,000 on the disk.)"""
    covered = tracks[-1].first + tracks[-1].count
    own = []
    for t in tracks:    # (the assembly mends and places the tracks it is given: copies, the walk's own untouched)
        c = Track(t.first, t.count, t.spt, t.level, list(t.slips), exact=t.exact, cyl=t.cyl, head=t.head)
        if getattr(t, "predicted", False):
            c.predicted = True
        own.append(c)
    z = len(_assemble(own, {"exact_mode": exact}, surfaces).zones)
    return z, z * end / max(covered, 1)


@dataclass
class _Zone:
    """What predicts the next tracks: the last known track and the zone's regularity."""
    spt: int
    count: int          # LBNs on a full track
    track_skew: int     # sectors from one track's first block to the next's (head switch)
    cyl_skew: int       # the same across a cylinder switch
    surfaces: int
    head: int           # head of the last known track (0: first of its cylinder)
    last: Track
    last_count: Optional[int] = None   # LBNs on a cylinder's last track, where spares end each cylinder


def _sigma(t: Track) -> float:
    """Sector of the track's first block (level + first LBN, mod spt)."""
    return (t.level + t.first) % t.spt


def _skews(tail: list) -> list:
    return [int(round(_sigma(b) - _sigma(a))) % b.spt for a, b in zip(tail, tail[1:])]


def _switch_positions(tracks: list, slack: int) -> list:
    """Indices of the skews more than `slack` sectors from the commonest (the head switch's)."""
    sk = _skews(tracks)
    if len(sk) < 4:
        return []
    ts = _mode(sk)
    return [i for i, v in enumerate(sk) if abs(float(_fold(np.array(v - ts), tracks[i + 1].spt))) > slack]


def surfaces_of(tracks: list, slack: int = 0) -> Optional[int]:
    """Tracks between cylinder switches (skews more than `slack` sectors from
    the commonest, the head switch's): the mode of the gaps, if at least half
    of them agree; None if not seen three times."""
    at = _switch_positions(tracks, slack)
    if len(at) < 3:
        return None
    gaps = np.diff(at)
    m = int(_mode(gaps))
    return m if 2 * int(np.sum(gaps == m)) >= len(gaps) else None


def _head_from(sk: list, at: list, ts: int, cs: int, S: int, n: int) -> int:
    """Head of the last track (0: the first of its cylinder) from the skews `sk` between the tracks, where a
    skew within two sectors of the cylinder skew `cs` may also be two or three head switches `ts` over a
    skipped track: counted from each candidate cylinder switch in `at` (the last eight cylinders'), a
    skew that is both is a cylinder switch only where the count has reached the last surface. The count that
    breaks the pattern least (a cylinder switch before the last surface, a head past it) wins; on a tie
    the earliest (the longest count)."""
    def near(v, w, tol):
        return abs(float(_fold(np.array(v - w), n))) <= tol
    lo = max(0, len(sk) - 8 * S)
    best = None
    for a in [i for i in at if i >= lo] or at[-1:]:
        h, bad = 0, 0
        for v in sk[a + 1:]:
            m = next((m for m in range(1, S + 1) if near(v, m * ts, 0.5)), None)
            if m is not None and h + m <= S - 1:
                h += m
            elif near(v, cs, 2):
                bad += h != S - 1
                h = 0
            else:
                bad += 1                   # past the last surface, or nothing explains it (a slip)
                h = (h + (m or 1)) % S
        if best is None or bad < best[0]:
            best = (bad, h)
    return best[1]


def _cylinder_end_count(tail: list, sk: list, at, cs: int, count: int, slack: int = 0) -> Optional[int]:
    """LBNs on a cylinder's last track where spares end each cylinder (ST41601N: 6 sectors, its last track 79
    LBNs of 85), from the tracks before the cylinder switches among skews `at` (a skew within `slack` sectors
    of the cylinder skew `cs`, neither track slipped): their commonest count, if it is not `count` and most
    agree; else None. Predicted full, every cylinder's last track disagreed with its checkpoint and was
    bisected and walked (ST41601N exact: 2,099 anomalies, 18.7 device minutes, against 77 and 4.1; at 20 us
    of jitter 1,956 anomalies and 38.4 of its 42.8 device minutes in the walk). With noise (`slack`) at least
    three, and fewer LBNs than a full track (Cheetah 4LP, whose spares end a range of cylinders, showed two
    ends of 357 LBNs, two tracks joined, beside its 155)."""
    n = tail[-1].spt
    ends = [tail[i].count for i in at if abs(float(_fold(np.array(sk[i] - cs), n))) <= slack
            and not tail[i].slips and not tail[i + 1].slips]
    if len(ends) >= (3 if slack else 2):
        m = int(_mode(ends))
        if (m < count if slack else m != count) and 2 * ends.count(m) > len(ends):
            return m
    return None


def zone_state(tracks: list, surfaces: Optional[int], min_tracks: int = 8, slack: int = 0,
               need_head: bool = True, short_ends: bool = False) -> Optional[_Zone]:
    """The predictor after the last track of `tracks` (its trailing run of one
    sectors-per-track), or None when that run is too short to say. With timing
    noise levels can be a sector or two off: skews within `slack` sectors of
    the head switch's are head switches; a cylinder's short last track is
    predicted only with `short_ends` (noise under a sector, where a check sees
    the slips that a predicted track would hide)."""
    n = tracks[-1].spt
    tail = []
    for t in reversed(tracks):
        if t.spt != n or len(tail) >= 400:
            break
        tail.append(t)
    tail.reverse()
    if len(tail) < min_tracks:
        return None
    sk = _skews(tail)
    # with noise, the skews the walk measured (between two tracks neither of them predicted) only, when there
    # are a few: a predicted track repeats the skews it was predicted with, and after a change of skew inside
    # a zone (IBM 18ES's cylinder skew, 97 sectors, is 96 from about cylinder 1,024 on) hundreds of them
    # outvoted the few measured tracks after it. Its checks (a level within 5.7 sectors agrees there) saw the
    # angle drift a sector a cylinder only six cylinders on, and the short stretch walked there was predicted
    # on with the old skew again: 10-20% of its blocks more than a sector off their angle
    # (nor one out of a track much shorter than the next: its level comes from fewer walk reads, and noise puts
    # it late more often: Cheetah 4LP at 20 us, the skews out of a range's short last track, 87 blocks of 195,
    # 4 of 9 a sector or two short against 2 of 79 out of full tracks; two of the last three measured cylinder
    # switches at 36 for 37 made the predictor's cylinder skew 36, and the angle drifted a sector a cylinder,
    # 2-4 sectors before a check saw it)
    measured = [i for i, (a, b) in enumerate(zip(tail, tail[1:]))
                if not getattr(a, "predicted", False) and not getattr(b, "predicted", False)
                and 10 * a.count >= 9 * b.count] if slack else []
    meas = [sk[i] for i in measured]
    src = meas if len(meas) >= 4 else sk
    ts = int(_mode(src))

    def switch(v):
        return abs(float(_fold(np.array(v - ts), n))) > 2 * slack
    # the cylinder skew: the commonest other skew, more than twice the slack from the head switch's (with
    # noise a track's slips or a level a sector or two off make skews a few sectors short of a head switch:
    # Cheetah 9LP's 94 for 97 at 20 us of jitter, taken for its cylinder skew, 133, and kept by every track
    # predicted with it; its true pairs lie 5 or more apart)
    far = [v for v in src if switch(v)]
    recent = src is meas and len(far) >= 3
    if len(far) < 2:
        # (too few measured cylinder switches: a short stretch of DEC RZ26's 14 surfaces holds none, and the
        # cylinder skew fell to the head switch's; the whole tail's then)
        far = [v for v in sk if switch(v)]
    vals, cnt = np.unique(far, return_counts=True) if far else (np.array([ts]), np.array([0]))
    cs = int(vals[np.argmax(cnt)]) if cnt.max() >= 2 else ts
    if recent:
        # (and the latest measured cylinder switches decide: two of the last three)
        lv, lc = np.unique(far[-3:], return_counts=True)
        if lc.max() >= 2:
            cs = int(lv[np.argmax(lc)])
    if slack and cs != ts:
        # A new zone of the same sectors per track starts its angle afresh (IBM 18ES's bands, an empty cylinder
        # between, the cylinder skew a sector less from some band on): the tail's switches from the band before
        # outvoted the few after it, and the predicted tracks drifted a sector a cylinder (seed 1 at 20 us: 2-6
        # sectors). Such a boundary is a skew no switch explains between two full measured tracks; after it the
        # measured cylinder switches decide, two alike (a tie: the latest), the walk measuring on till it has
        # two. Next to a short track (a zone's spares, as Atlas 10K's; a slip) the whole tail decides as before:
        # applied there too, Atlas 10K at seed 1 fell from 99.95 to 99.60% within a sector.
        full = int(_mode([t.count for t in tail if not t.slips], tail[-1].count))

        def firm(i):
            a, b = tail[i], tail[i + 1]
            return a.count == full == b.count and not a.slips and not b.slips

        def explained(v):
            return any(abs(float(_fold(np.array(v - w), n))) <= slack + 3
                       for w in (ts, cs, 2 * ts, 3 * ts, cs + ts, cs + 2 * ts))
        brk = max((i for i in measured if firm(i) and not explained(sk[i])), default=None)
        if brk is not None:
            after = [sk[i] for i in measured if i > brk and switch(sk[i])]
            av, ac = np.unique(after, return_counts=True)
            if len(ac) and ac.max() >= 2:
                top = [int(v) for v, c in zip(av, ac) if c == ac.max()]
                cs = next(v for v in reversed(after) if v in top)     # (on a tie the latest)
            elif need_head:
                return None
    S = surfaces or surfaces_of(tail, slack) or 1
    head = 0
    if cs != ts and slack == 0:
        # the last cylinder switch (a skew within two sectors of the cylinder skew: next to a short track
        # or a slip the walk may put a level a sector or two off): sk[i] leads into tail[i + 1], head 0.
        # Each later skew is as many head switches as track skews make it (two over a skipped track)
        at = [i for i, v in enumerate(sk) if abs(float(_fold(np.array(v - cs), n))) <= 2]
        if not at and need_head:
            return None
        head = 0
        for v in (sk[at[-1] + 1:] if at else []):
            head += next((m for m in range(1, S + 1) if abs(float(_fold(np.array(m * ts - v), n))) < 0.5), 1)
        if head >= S and need_head:
            return None               # the cylinder pattern broke near the end: measure on
        head %= S
        if at and S > 1 and any(abs(float(_fold(np.array(m * ts - cs), n))) <= 2 for m in (2, 3)):
            # two or three head switches over a skipped (slipped) track make a skew within two sectors of the
            # cylinder skew (HP C2490A's 36 is two of its 18; HP C2247A's 22 two of its 11, beside its 24): the
            # last such skew need not be the last cylinder switch. Counted from one that was a skipped track,
            # every later predicted cylinder switch fell a few tracks off (till the next track the walk
            # measured), and the checkpoints, 32 tracks apart, rarely fell in between (0.2% of HP C2490A's
            # blocks and 0.1% of HP C2247A's a dozen sectors off). Here each such skew is a cylinder switch
            # only where the heads counted since the last one reach the last surface, else head switches over
            # a skipped slot; counted from each candidate in the last eight cylinders, the one whose count
            # breaks the pattern least (on a tie the earliest: the longest count) gives the head
            head = _head_from(sk, at, ts, cs, S, n)
    elif cs != ts and S > 1:
        # with noise: the heads of the last few cylinders' tracks by the least-cost assignment that explains
        # their skews (`layout._place`, as the whole layout is assembled), not by counting tracks: a dense
        # stretch can hold a one-block sliver cut off a track, or a range's short last track joined to the
        # next (both seen on Cheetah 4LP at 20 us of jitter), and counting them put every later cylinder
        # switch a track off, which checkpoints a multiple of the surfaces apart never saw
        # Tracks the walk measured decide, where they show a cylinder switch: predicted ones only repeat
        # the phase they were predicted with (a wrong one never corrected itself: each of its cylinders
        # cost the assignment as much as the few measured tracks after it)
        m = 0
        while m < len(tail) and not getattr(tail[-1 - m], "predicted", False):
            m += 1
        win = tail[-min(len(tail), 4 * S + 1):]
        fc: list = []
        placed, pos, *_ = _place(win, _skews_of(win), S, lambda i: [(ts, cs)], False, fc)
        # a phase no better than another: the last few tracks' skews fit two placements alike (HP C2247A's skipped
        # track, two head switches of 14 sectors, 28, beside a cylinder switch of 32, one after the trailing
        # tracks the walk measured: as a skipped slot or as an unexplained skew, a cost of 1 either way)
        fc.sort()
        ambiguous = len(fc) > 1 and fc[1] - fc[0] < 0.5
        if m >= 2:
            own = tail[-m:][-(4 * S + 1):]
            placed_o, pos_o, *_ = _place(own, _skews_of(own), S, lambda i: [(ts, cs)], False)
            sk_own = _skews_of(placed_o)
            sw = [v for a, b, v in zip(pos_o, pos_o[1:], sk_own[1:])
                  if v is not None and b[1] == 0 and b[0] == a[0] + 1 and abs(float(_fold(np.array(v - cs), n))) <= slack]
            if sw:
                if pos_o[-1][1] != pos[-1][1] and all(any(abs(float(_fold(np.array(v - k * ts), n))) <= slack
                                                          for k in (2, 3)) for v in sw):
                    # every cylinder switch the measured tracks show could as well be two or three head switches
                    # over a skipped slot (HP C2490A's 36 sectors are two of its 18): placed alone, the few tracks
                    # take the skipped slot for a cylinder switch (their first head is free) and every later
                    # predicted cylinder switch fell 7 tracks off; neither they nor the tracks before decide
                    ambiguous = True
                else:
                    placed, pos, ambiguous = placed_o, pos_o, False
                    win = None
        if ambiguous and need_head:
            return None                   # measure on, till the measured tracks show the phase
        head = pos[-1][1]
        if need_head and win is not None and sum(1 for c, h in pos if h == 0) < 2:
            return None
        count = int(_mode([t.count for t in tail[:-1] if not t.slips], tail[-1].count))
        # (the measured tracks' cylinder switches only: a predicted track repeats the count it was predicted with).
        # Only where the noise is under a sector: wider, the walk does not place slips, and the tracks a zone's
        # slips shorten at its cylinders' ends (Cheetah 9LP: three slips near the end of each of a zone's
        # cylinders, 242 LBNs for 245) were walked for each anomaly; predicted, its model's cylinders came out
        # 7,019 for the truth's 6,962 (seed 1)
        last_count = _cylinder_end_count(tail, sk, measured, cs, count, slack) if short_ends else None
        last = placed[-1]
        # one track's level can be a few sectors off: carry each placed track's first block forward by the
        # switches between its slot and the last one's, and take the median (a track the skews do not
        # place near that, a spare area or a level far off, left out)
        c1, h1 = pos[-1]
        proj = []
        for t, (c, h) in zip(placed, pos):
            d = (c1 - c) * S + h1 - h
            acc = (d - (c1 - c)) * ts + (c1 - c) * cs
            v = float(_fold(np.array(_sigma(t) + acc - _sigma(last)), n))
            if abs(v) <= slack + 3:
                proj.append(v)
        base = _sigma(last) + (float(np.median(proj)) if proj else 0.0)
        last = Track(last.first, last.count, n, float((base - last.first) % n), list(last.slips), exact=last.exact)
        return _Zone(n, count, ts, cs, S, head, last, last_count)
    count = int(_mode([t.count for t in tail[:-1] if not t.slips], tail[-1].count))
    last = tail[-1]
    last_count = _cylinder_end_count(tail, sk, range(len(sk)), cs, count) if cs != ts and slack == 0 and S > 1 else None
    if slack:
        # with noise one track's level can be a few sectors off: carry each of the last few tracks' first
        # block forward by the zone's skews to the last track and take the median, back only as far as the
        # skews follow the zone's pattern (a spare area or skipped track before that would bias them all)
        m = min(len(tail), 4 * S)
        proj, acc = [], 0.0
        for j in range(len(tail) - 1, len(tail) - 1 - m, -1):
            proj.append(float(_fold(np.array(_sigma(tail[j]) + acc - _sigma(last)), n)))
            h = (head - (len(tail) - 1 - j)) % S          # head of tail[j]
            want = cs if h == 0 else ts                      # the skew into tail[j] from tail[j - 1]
            if j == 0 or abs(float(_fold(np.array(sk[j - 1] - want), n))) > slack + 3:
                break
            acc += want
        base = _sigma(last) + float(np.median(proj))
        last = Track(last.first, last.count, n, float((base - last.first) % n), list(last.slips), exact=last.exact)
    return _Zone(n, count, ts, cs, S, head, last, last_count)


def predict(z: _Zone, k: int) -> Track:
    """The k-th track after z.last (k >= 1), were the zone regular to there."""
    last = z.last
    switches = (z.head + k) // z.surfaces        # cylinder switches among the k steps
    sig = _sigma(last) + switches * z.cyl_skew + (k - switches) * z.track_skew
    first = last.first + last.count + (k - 1) * z.count
    count = z.count
    if z.last_count is not None:
        # the tracks between hold a cylinder's last track (head S - 1) every S tracks
        i0 = (z.surfaces - 1 - z.head) % z.surfaces or z.surfaces
        if k - 1 >= i0:
            first -= (1 + (k - 1 - i0) // z.surfaces) * (z.count - z.last_count)
        if (z.head + k) % z.surfaces == z.surfaces - 1:
            count = z.last_count
    t = Track(first, count, z.spt, float((sig - first) % z.spt))
    t.predicted = True
    return t


def repair(tracks: list, skews: tuple, count: int, spt: int, max_shift: int = 2) -> list:
    """A short stretch can place a boundary a block or two off (its level is
    right, its first LBN not). A track's first block lies a zone skew past the
    previous one's: where it lies d sectors short of that, moving the boundary
    by d brings the previous track's LBN count closer to the zone's, and the
    track after then lies a skew on too (an unplaced slip near a track's start
    puts its level, not its boundary, a sector off: the next skew disagrees),
    move it. Only in the zone the skews are from (`spt`); the first two tracks
    are where the stretch began: their boundary was checked."""
    def off(a, b):
        return min((float(_fold(np.array(_sigma(b) - _sigma(a) - sk), b.spt)) for sk in set(skews)), key=abs)

    for i in range(1, len(tracks) - 1):
        p, t = tracks[i], tracks[i + 1]
        if not p.spt == t.spt == spt or min(p.count, t.count) * 4 < spt:
            continue                  # another zone, or a sliver (merge_split's business)
        e = off(p, t)
        d = -int(round(e))
        want = count - len(p.slips)
        if not (1 <= abs(d) <= max_shift and abs(e + d) < 0.3 and abs(p.count + d - want) < abs(p.count - want)
                and p.count + d + len(p.slips) <= spt and t.count - d >= 1):
            continue
        moved = Track(t.first + d, t.count - d, t.spt, t.level, [x - d for x in t.slips if x - d > 0], exact=t.exact)
        u = tracks[i + 2] if i + 2 < len(tracks) else None
        if u is not None and u.spt == spt and u.count * 4 >= spt and abs(off(moved, u)) >= 0.3:
            continue
        p.count += d
        tracks[i + 1] = moved
    return tracks


def merge_split(tracks: list, skews: tuple, skipped: tuple = (), max_slips: int = 3) -> list:
    """A short stretch can cut a track at its slips: two neighbours of one
    sectors-per-track, together no longer than a track, where the second begins
    the first's count + k sectors on (k slips, as many as the two leave
    unused, up to a sixteenth of the track), are one track. It can also cut a sliver (a block or two, its level read off one
    probe) off the start of a track that holds a slip. A track far shorter than
    the next, of one sectors-per-track, is the start of the next when the
    previous track's first block + a zone skew + the sliver + k slipped sectors
    (0 <= k <= max_slips) is where the rest begins: one track, k slips where
    the rest began (k = 0: the slip is further on, not placed). A sliver after a
    skipped track is tried with `skipped` (two switches' skews) when no single
    switch fits."""
    out: list = []
    for t in tracks:
        if out and out[-1].spt == t.spt:
            # a track cut at its slips: the rest begins the cut part's count + k sectors on
            a = out[-1]
            # sectors the two leave unused; more than a sixteenth of a track slipped is taken for two tracks
            room = min(t.spt - a.count - t.count - len(a.slips) - len(t.slips), max(max_slips, t.spt // 16))
            ks = [k for k in range(1, room + 1)
                  if abs(float(_fold(np.array(_sigma(a) + a.count + len(a.slips) + k - _sigma(t)), t.spt))) < 0.5]
            if len(ks) == 1:
                out[-1] = Track(a.first, a.count + t.count, a.spt, a.level,
                                a.slips + [a.count] * ks[0] + [a.count + x for x in t.slips], exact=a.exact)
                continue
        if len(out) >= 2:
            p, a = out[-2], out[-1]
            if a.spt == t.spt == p.spt and a.count * 4 < t.count and a.count + t.count <= t.spt:
                fit = []
                for group in (skews, skipped):   # one switch; else two (over a skipped track)
                    fit = fit or [(sk, k) for sk in set(group) for k in range(0, max_slips + 1)
                                  if abs(float(_fold(np.array(_sigma(p) + sk + a.count + k - _sigma(t)), t.spt))) < 0.5]
                if len(fit) == 1 and a.count + t.count + fit[0][1] <= t.spt:
                    sk, k = fit[0]
                    out[-1] = Track(a.first, a.count + t.count, a.spt, float((_sigma(p) + sk - a.first) % a.spt),
                                    [a.count] * k + [a.count + x for x in t.slips], exact=a.exact)
                    continue
        out.append(t)
    return out


def _tidy(tracks: list, z: _Zone) -> list:
    """A stretch's tracks after the last known one: slivers joined back, then
    boundaries moved to where the skews put them (a sliver's level would
    mislead the skews), then slivers again (a moved boundary can make one).
    A sliver may follow a skipped track: two switches' skews count too."""
    one = (z.track_skew, z.cyl_skew)
    two = tuple((a + b) % z.spt for a in one for b in one)
    return merge_split(repair(merge_split(tracks, one, two), one, z.count, z.spt), one, two)


class _Checker:
    """Single-block probes that must miss the cache: a response no longer than a
    hit was served from the buffer, and is read again after far-away reads."""

    def __init__(self, dev: Device, clock: Clock, rng: random.Random, tol: float, flush: int, retries: int,
                 mid_track: bool = False):
        self.dev, self.clock, self.rng = dev, clock, rng
        self.tol, self.flush, self.retries = tol, flush, retries
        self.mid_track = mid_track
        self.probes = 0
        self.checks = 0

    def _level(self, x: int, spt: int) -> float:
        for _ in range(3):
            t0 = self.dev.now_ns()
            t = self.dev.read(x)
            self.probes += 1
            if self.clock.hit_ns == 0 or t - t0 > self.clock.hit_bound_ns:
                break
            for _ in range(self.flush):
                self.dev.read(self.rng.randrange(self.dev.blocks))
        return (self.clock.phase(t) * spt - x) % spt

    def _agrees(self, x: int, level: float, spt: int) -> bool:
        # with noise a completion may be late: a probe that disagrees by being late is read again (the
        # closest wins); noise never makes one early, so one early by more than the tolerance disagrees
        for _ in range(1 + self.retries):
            v = float(_fold(np.array(self._level(x, spt) - level), spt))
            if abs(v) <= self.tol:
                return True
            if v < 0:
                return False
        return False

    def boundary(self, prev: Track, nxt: Track) -> bool:
        """Does `nxt` start where predicted, right after `prev`'s last LBN? The
        first LBN is read before the one ahead of it (read-ahead runs forward)."""
        self.checks += 1
        if nxt.first >= self.dev.blocks:
            return True
        if self.mid_track and nxt.count >= 4:
            # (read first: the two blocks behind it then miss the buffer as well)
            mid = nxt.first + nxt.count // 2
            if mid < self.dev.blocks and not self._agrees(mid, nxt.level, nxt.spt):
                return False
        if not self._agrees(nxt.first, nxt.level, nxt.spt):
            return False
        return self._agrees(nxt.first - 1, prev.level + len(prev.slips), prev.spt)


def _one_period(tracks: list, measured: list, period_ns: float) -> None:
    """Every track's level under one period, the final one. A level is a phase (time / period, mod 1) times
    the sectors per track: read at time t under a period P, it is t (1/P' - 1/P) turns off under the final
    P'. The period is refitted as the walk goes on (each time the span since the last fit has doubled), and
    a stretch read early keeps the error of the period of its time. A predicted track is under the period
    of the stretch it was predicted from (the last one before it). With noise only: without it the period is
    exact to a few parts in a billion, and the shifts it made (hundredths of a sector) moved the lead
    searches' probes enough to move HP C2247A's read-miss overhead error from 22 to 51 us."""
    if not measured:
        return
    los = [m[0] for m in measured]
    for t in tracks:
        k = int(np.searchsorted(los, t.first, side="right")) - 1
        if k < 0:
            continue
        _, when, p = measured[k]
        t.level = float((t.level + when * (1.0 / period_ns - 1.0 / p) * t.spt) % t.spt)


def sampled_layout(dev: Device, clock: Clock, rng: random.Random, stride: int, spt_hint: int, *,
                   segments: int = 24, spread: int = 24, progress: Optional[Callable] = None,
                   check_every_tracks: int = 32, calib_tracks: int = 48, back_tracks: int = 16,
                   ahead_tracks: int = 32, short_tracks: int = 6, calib_per_zone: int = 40) -> tuple[list, dict]:
    """The tracks of the whole disk, walking densely only where prediction fails.
    Returns (tracks, stats) for `layout._assemble`."""
    end = dev.blocks
    t_start = dev.now_ns()
    refined_at = [max(t_start, 1)]
    stats = {"walk": "sampled", "walk_probes": 0, "probes": 0, "runs": 0, "boundary_windows": 0, "slip_windows": 0,
             "calibrated": 0, "search_rounds": 0, "suspect_hits": 0, "dense_stretches": 0, "dense_tracks": 0,
             "predicted_tracks": 0, "checks": 0, "anomalies": 0, "check_probes": 0,
             "stretches_escalated": 0}
    first_stats: dict = {}

    def maybe_refine():
        # the period's error grows with the time since it was measured: refit each time that span doubles
        if clock.anchor_blocks and dev.now_ns() > 2 * refined_at[0]:
            refine_period(dev, clock)
            refined_at[0] = dev.now_ns()

    def dense(lo: int, hi: int, spt: Optional[int] = None) -> Optional[list]:
        """Tracks of [lo, hi) by a walk; with `spt`, a short stretch assumed to stay in
        that zone: None if its own phase steps say otherwise."""
        hi = min(hi, end)
        assumed = spt is None and lo > 0 and (hi - lo) // stride < ZONE_MIN_PAIRS
        if assumed:
            # too few reads to tell a zone by (the disk's last blocks): the last zone's, as `zones_of_walk`
            # joins a run of fewer pairs to its neighbour (HP C2247A's last two tracks, five reads, came out
            # one track of 43 sectors, a dozen sectors off; one read shows no phase step at all)
            spt = tracks[-1].spt
        if not exact:
            # the checks just read next to `lo` and the drive may still be reading ahead there: a walk read
            # it catches up with completes on the read-ahead's timing, not a miss's, which noise can put
            # sectors late (ST41601N). Two far-away reads first end that read-ahead.
            for k in (2, 3):
                dev.read((lo + end // k) % end)
        w = walk(dev, lo, hi, stride)
        if exact and len(w.x) and w.resp[0] <= clock.hit_ns + 1000.0:   # (a read within a hit's time)
            # without noise the walk keeps its first read (the track's first block), and the checks' segments
            # answered it: read again once as many far-away reads as the cache has segments, and one more,
            # have replaced them all (a level read off a hit was a one-block sliver, joined back with a slip
            # where it ended: Atlas 10K, slips 1 and 13 sectors early). A level is its own read's phase.
            for k in range(2, segments + 3):
                dev.read((lo + end // k) % end)
            t0 = dev.now_ns()
            w.t[0] = dev.read(lo)
            w.resp[0] = w.t[0] - t0
        if spt is not None and not assumed and len(w.x) > 7:
            # most pairs lie on one track, where the phase step gives the sectors per track: each half of
            # the stretch must give the zone's (a short track's unused sectors move only a pair or two)
            ps = pair_spt(w, clock)
            h = len(ps) // 2
            # (without noise a same-track pair gives the sectors per track exactly, and the median of each
            # half is one: a zone a sector apart, ST41601N's 79 and 78, must escalate too; at 1 it did not,
            # and its tracks were read with the old zone's sectors per track)
            tol = 0.5 if clock.noiseless else max(1.0, spt * (0.005 if exact else 0.03))
            if any(abs(float(np.median(part)) - spt) > tol for part in (ps[:h], ps[h:])):
                stats["stretches_escalated"] += 1
                return None
        trs, st = tracks_of_walk(dev, clock, rng, w, lo, hi, refine=maybe_refine, calib_per_zone=calib_per_zone,
                                 spread=spread, spt=spt)
        # the period its levels were read under, and when: re-expressed under the final period at the end
        while measured and measured[-1][0] >= lo:
            measured.pop()
        measured.append((lo, float(np.median(w.t)) if len(w.t) else float(dev.now_ns()), clock.period_ns))
        if not first_stats:
            first_stats.update(st)
        for k in ("walk_probes", "probes", "runs", "boundary_windows", "slip_windows", "calibrated", "search_rounds",
                  "suspect_hits"):
            stats[k] += int(st.get(k, 0))
        stats["dense_stretches"] += 1
        if stats["dense_stretches"] > SPEC_MAX_ZONES:
            raise NotZoned(f"the layout walk needed over {SPEC_MAX_ZONES:,} dense stretches (more than a spec holds zones)")
        if hi < end and len(trs) > 1:
            trs = trs[:-1]        # the last track is cut at `hi`
        stats["dense_tracks"] += len(trs)
        return trs

    exact = True
    measured: list = []     # (first LBN of a dense stretch, when it was read, the period its levels are under)
    tracks = dense(0, calib_tracks * spt_hint)
    exact = bool(first_stats.get("exact_mode", True))
    surfaces = surfaces_of(tracks, slack=0 if exact else 2)
    while surfaces is None and 0 < len(_switch_positions(tracks, 0 if exact else 2)) < 3 \
            and len(tracks) < 8 * calib_tracks and tracks[-1].first + tracks[-1].count < end:
        # one or two cylinder switches seen (many surfaces): walk on until three show. None seen: the
        # cylinder skew is the track skew's, and the surfaces do not matter to the prediction
        lo = tracks[-1].first + tracks[-1].count
        tracks += dense(lo, lo + calib_tracks * max(tracks[-1].count, 1))
        surfaces = surfaces_of(tracks, slack=0 if exact else 2)
    # A check should see a whole sector: a slip inside a predicted track, or the turn a slip gives every later
    # track (ST41601N), moves the checked levels by one. The walk's tolerance (at least 1.5 sectors) did not,
    # and every predicted track after such a slip was a sector off till the next anomaly (ST41601N at 20 us:
    # 88.3% of its round-trip samples within a sector once its cylinders' short last tracks were predicted,
    # and so no longer walked). Where the noise's spread (`Clock.noise_ns`, its 10th to 90th percentile) is
    # under a sector (`tight`), a cylinder's short last track is predicted under noise too (`zone_state`'s
    # `short_ends`), and a check's tolerance is 0.6 sector: noise is only ever late, and a late read is read
    # again (the fast drives' sectors, 18-45 us, lie inside the spread at 20 us, 81 us: a tolerance of
    # 0.6-0.97 sector there took Atlas III from 9.0 to 21.2 device minutes, its sequential demerit from 0.003
    # to 0.206 ms). A level a sector or two early can still agree when its read comes that late (ST41601N,
    # seed 1: one read 2 sectors late passed a boundary a block early, and a zone's angle came out a sector
    # off over 44 cylinders), so there a check also reads the predicted track's middle block, first (the
    # blocks behind it then miss the buffer): three reads in that band, not two.
    tight = not exact and clock.noise_ns < clock.period_ns / float(max(t.spt for t in tracks))
    z0 = zone_state(tracks, surfaces, slack=0 if exact else 2, need_head=False, short_ends=tight)
    if z0 is not None:
        tracks = _tidy(tracks, z0)
    tol = float(first_stats.get("level_tolerance_sectors", 0.5))
    if tight:
        tol = min(tol, CHECK_TOL_SECTORS)
    chk = _Checker(dev, clock, rng, tol, flush=segments + 1, retries=0 if exact else 2, mid_track=tight)
    batch = 4
    ahead = ahead_tracks
    checked = 0
    while True:
        last = tracks[-1]
        nxt_first = last.first + last.count
        if nxt_first >= end:
            break
        n_tr = len(tracks)
        if n_tr >= PROJECT_FROM_TRACKS and nxt_first <= end // PROJECT_UNTIL and \
                (n_tr >= 2 * checked or n_tr < 16 * PROJECT_FROM_TRACKS and n_tr != checked):
            # A layout that is not zones of cylinders (maxtor300g's banded serpentine: a few dozen tracks on one
            # surface, each surface its own sectors per track) would be walked densely track after track, and only
            # the zones assembled at the end would say so: the tracks so far are assembled each time they change
            # while they are few, then at each doubling (the constants above say what the other drives show).
            # (Checked only from 256 tracks on, maxtor300g's walk at 20 us went back and forth over its first
            # hundred tracks and was given up after 48 device minutes; its whole extraction now takes 6.4.)
            checked = n_tr
            nz, proj = _zones_projected(tracks, exact, end, surfaces)
            stats["zones_projected"] = int(proj)
            if nz >= PROJECT_MIN_ZONES and (proj > SPEC_MAX_ZONES or n_tr < ZONE_MIN_TRACKS * nz):
                why = ("more than a spec holds" if proj > SPEC_MAX_ZONES else
                       f"zones of fewer than {ZONE_MIN_TRACKS} tracks: no zones of cylinders")
                raise NotZoned(f"the first {n_tr:,} tracks walked ({nxt_first:,} blocks) assembled into {nz:,} "
                               f"zones ({n_tr / nz:.1f} tracks a zone), about {proj:,.0f} on the whole disk ({why})")
        if progress:
            progress(nxt_first, end)
        z = zone_state(tracks, surfaces, slack=0 if exact else 2, short_ends=tight)
        if z is None or end - nxt_first < 2 * ahead * last.count:
            # too few tracks of this zone to predict from, or near the end: walk on (tidied by the skews
            # of the tracks so far, when they say any)
            more = dense(nxt_first, nxt_first + ahead * max(last.count, 1) if end - nxt_first >= 2 * ahead * last.count
                         else end)
            zl = zone_state(tracks, surfaces, min_tracks=2, slack=0 if exact else 2, need_head=False, short_ends=tight)
            n0 = len(tracks) - 1
            tracks[n0:] = _tidy(tracks[n0:] + more, zl) if zl is not None else tracks[n0:] + more
            continue
        maybe_refine()
        # checkpoints C, 2C, ... tracks ahead, in LBN order; the first that disagrees ends the batch. With
        # noise C is prime to the surfaces, so that the checkpoints fall on every head in turn: a predicted
        # phase of the cylinder switches a track off moves the level of some of them (C a multiple of the
        # surfaces, as 32 is of Cheetah 4LP's 8, saw every checkpoint at the same head, and a wrong phase
        # never). Without noise the phase is counted exactly and C stays (33 for HP C2490A's 18 surfaces
        # moved its checkpoints, and 0.5% of its blocks, a few cylinders a track off, lost their angle)
        C = check_every_tracks
        while not exact and math.gcd(C, z.surfaces) != 1:
            C += 1
        ks = [C * i for i in range(1, batch + 1)]
        ks = [k for k in ks if predict(z, k).first + z.count < end] or [1]
        lo, hi = 0, None
        for k in ks:
            if chk.boundary(predict(z, k - 1) if k > 1 else last, predict(z, k)):
                lo = k
            else:
                hi = k
                break
        if hi is None:
            tracks += [predict(z, k) for k in range(1, lo)]   # track lo's end is not checked yet
            batch = min(batch * 2, 64)
            ahead = ahead_tracks
            continue
        stats["anomalies"] += 1
        batch = 4
        # the first track whose start disagrees: bisection (the checks agree up to it and disagree after)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if chk.boundary(predict(z, mid - 1) if mid > 1 else last, predict(z, mid)):
                lo = mid
            else:
                hi = mid
        # tracks 1..hi-1 start where predicted (the check at hi-1 agreed); the change is in track hi-1 or at
        # its end. Most changes keep the zone (a slip, a short track): a short stretch of it, walked in that
        # zone; else (its phase steps say another zone) a longer one from `back_tracks` before.
        good = [predict(z, k) for k in range(1, hi - 1)]
        tracks += good
        redo_from = tracks[-1].first + tracks[-1].count
        small = dense(redo_from, redo_from + short_tracks * z.count, spt=z.spt) if ahead == ahead_tracks else None
        if small is not None and len(small) > 1:
            n0 = len(tracks) - 1
            tracks[n0:] = _tidy(tracks[n0:] + small, z)
        else:
            # each side of a zone change needs twice the pairs zones_of_walk calls a zone (fewer join the
            # neighbouring zone and take its sectors per track)
            side = max(1, int(np.ceil(2 * ZONE_MIN_PAIRS * stride / max(z.count, 1))))
            back, on = max(back_tracks, side), max(ahead, side)
            keep = max(len(tracks) - back, 1)
            redo_from = tracks[keep].first if keep < len(tracks) else redo_from
            del tracks[keep:]
            n0 = len(tracks) - 1
            tracks[n0:] = _tidy(tracks[n0:] + dense(redo_from, redo_from + (back + on) * z.count), z)
        # changes one after another (no regular stretch to predict over): walk further each time
        ahead = min(ahead * 2, 512) if hi <= 2 else ahead_tracks
    if clock.anchor_blocks:
        refine_period(dev, clock)
    if not exact:
        _one_period(tracks, measured, clock.period_ns)
    stats["checks"], stats["check_probes"] = chk.checks, chk.probes
    stats["probes"] += chk.probes
    out = dict(first_stats)
    out.update(stats)
    out["exact_mode"] = exact
    out["surfaces_seen"] = surfaces
    out["predicted_tracks"] = sum(1 for t in tracks if getattr(t, "predicted", False))
    return tracks, out

"""Seek curve, head switch, overheads and bus rate from timing, on the extracted layout.

Positioning times are measured as DIXtrac measures them: from the completion
of a read on the source track, a read is sent at once to a sector of the
destination track chosen to pass the head `g` after that completion; the
smallest `g` that does not cost an extra revolution (found by binary search,
several track pairs side by side so that no probe hits the cache) is the
overhead + positioning + one sector + completion time.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Optional

import numpy as np

from .device import Device
from .layout import Geometry, Prober, insert_empty_cylinders
from .timing import Clock

# The distances DIXtrac measures (and DiskSim's seek tables list): every one to
# 10, then ever wider steps.
def seek_distances(max_distance: int) -> list[int]:
    """DIXtrac's distances. Past 500 cylinders by 100, or on a drive of over
    12,800 cylinders by the multiple of 100 that keeps that part near 128
    distances (a 250 GB disk's 112,000 cylinders by 100 cost most of its
    extraction; the far curve is smooth)."""
    far = 100 * max(1, max_distance // 12800)
    d = list(range(1, 11)) + list(range(12, 21, 2)) + list(range(25, 51, 5)) + list(range(60, 101, 10)) \
        + list(range(125, 501, 25)) + list(range(600, max_distance + 1, far))
    d = [x for x in d if x <= max_distance]
    if max_distance not in d:
        d.append(max_distance)
    return d


class Geo:
    """LBN <-> (cylinder, track, sector) on the extracted geometry."""

    def __init__(self, g: Geometry):
        self.g = g
        self.first = np.array([t.first for t in g.tracks], dtype=np.int64)
        starts = g.cylinders + [len(g.tracks)]
        self.cyl_first_track = g.cylinders
        self.track_cyl = np.zeros(len(g.tracks), dtype=np.int64)
        for c in range(len(g.cylinders)):
            self.track_cyl[starts[c]:starts[c + 1]] = c

    def track_of(self, lbn: int) -> int:
        return int(np.searchsorted(self.first, lbn, side="right") - 1)

    def sector_of(self, lbn: int) -> float:
        """Measured sector (completion phase x spt) of an LBN."""
        t = self.g.tracks[self.track_of(lbn)]
        off = lbn - t.first
        extra = sum(1 for s in t.slips if s <= off)
        return (t.level + lbn + extra) % t.spt

    def lbn_at(self, track: int, sector: float) -> int:
        """The LBN of `track` whose completion phase is nearest after `sector`."""
        t = self.g.tracks[track]
        s0 = (t.level + t.first) % t.spt
        k = int(np.ceil((sector - s0) % t.spt - 1e-6)) % t.spt
        if k >= t.count:  # spare slots: the next LBN is the track's first one, a turn later
            k = 0
        return t.first + k


def _passing(geo: Geo, clock: Clock, y: int, track: int, sent: float, near: float) -> float:
    """When block `y` of `track` passes the head, ns after a command `sent`: its read-completion phase on the
    layout, in the turn nearest `near` (the gap a probe asked for, or its response, late by the noise)."""
    T = clock.period_ns
    u = ((geo.sector_of(y) / geo.g.tracks[track].spt - clock.phase(sent)) % 1.0) * T
    return u + T * round((near - u) / T)


def _lead_search(src: list, dst: list, geo: Geo, clock: Clock, rng: random.Random,
                 steps: int = 10, write: bool = False, offset: float = 0.5,
                 source_block: Optional[Callable] = None, settle_turns: int = 0):
    """Generator: yields (op, lbn, write) and receives completion times; returns
    the minimal lead g (ns) from a read on a track of `src` to one on the
    matching track of `dst` (each step on the next pair of tracks, so that a
    track is read again only after the others: no cache hits).

    The probe is sent `offset` of a destination sector after the read's
    completion (op "idle"), and the lead returned less that: a completion
    falls on a sector's end, so without it the heads are ready at the same
    point of a sector in every search of a zone, and the sector they wait for
    adds the same fraction of one to all of them; searches with offsets
    spread over a sector add fractions spread over it, whose median is the
    half a sector the caller takes off (Atlas III's head switch came out
    23 us, 0.6 of a sector, long: its model's sequential reads lost turns).

    Under timing noise (`Clock.noisy`), with an offset, three things differ, each so that a probe
    meets the sector grid where the same search without noise would: the idle
    is counted from where the source block's sector ended, not from the
    completion as learned (`delay_after`); the first probe waits its idle too;
    and the bounds are when the probes' blocks passed (the layout's phases),
    not their responses, the next probe asking for a block half a sector past
    a whole number of sectors from the floor. The lead returned is then its
    block's passing plus the noise's median (`Clock.noise_median_ns`), on the
    terms of a response as the callers take it.

    With `settle_turns`, each probe (the first too) waits that many whole turns more, so that the source read's
    read-ahead has ended when it comes (`seek_curve`'s head-switch searches); the offset's point of the sector
    grid is kept."""
    T = clock.period_ns
    k = rng.randrange(len(src))

    def pair():
        nonlocal k
        k = (k + 1) % len(src)
        return geo.g.tracks[src[k]], dst[k]

    def source(t):
        return source_block(t, rng) if source_block else t.first + rng.randrange(t.count)

    # (what follows under noise is for searches whose probes go after an idle: one sent at once, as the read-ahead's
    # switch wants its probes (`readahead_switch_stall`, whose wait takes the noise's median as it is), is as before)
    grid = clock.noisy and offset != 0.0
    wait = int(settle_turns * T)
    waits = grid or wait > 0   # every probe waits its idle, and its response is taken less it

    def delay_after(c_a: float, src_lbn: int, d) -> int:
        """The idle before a probe: `offset` of a destination sector after the source read's completion. Under
        timing noise that completion is learned late by the noise, and a probe sent `offset` after the learned
        time meets the sector grid at a random point, not the one chosen: the idle is counted from where the
        source block's sector ended (its completion phase on the layout), the part of a sector by which the
        completion was learned late taken off. (Before, each probe of a search met the grid at its own random
        point, `offset` plus its noise: a search's least response came from the probe whose noise moved its
        block's passing earliest, and the leads of DEC RZ26's head switch at 20 us came out 30-55 us short on
        three noise seeds of six.)"""
        s_dst = T / d.spt
        if not grid:
            return int(offset * s_dst)
        st = geo.g.tracks[geo.track_of(src_lbn)]
        late = ((clock.phase(c_a) * st.spt - geo.sector_of(src_lbn)) % 1.0) * T / st.spt
        return int((offset * s_dst - late) % s_dst)

    t, dtr = pair()
    d = geo.g.tracks[dtr]
    src_lbn = source(t)
    c_a = yield ("read", src_lbn, False)
    delay = delay_after(c_a, src_lbn, d) + wait
    # Under noise the first probe waits its idle too, its response on the same terms as the others'. (Sent at
    # once, its response had the idle taken off all the same: a lead up to a sector short where it stayed the
    # search's least, one of DEC RZ26's 16 head-switch leads at 20 us, noise seed 1, 2.557 ms where the others'
    # were 2.62-2.82. Without noise it is still sent at once, so that exact extractions stay as they were: 3 of
    # DEC RZ26's searches exact, none of them a head switch's; with `settle_turns` it waits, exact too, else it would
    # find the read-ahead running.)
    if delay and waits:
        yield ("idle", delay, False)
    y = d.first + rng.randrange(d.count)
    c_b = yield ("read", y, write)
    v = c_b - c_a - (delay if waits else 0)

    # A first read that took no longer than a buffer hit may have been one (a block the searches before this one
    # read ahead on its track), which bounds nothing: the bracket is then two turns, with two more steps (before,
    # it became the upper bound and pinned every later probe below it: Atlas 10K's full stroke came out 6.0 ms
    # for 10.8 at 20 us, noise seed 2, half its four searches starting on a hit at 0.3 ms). Not later probes:
    # a short head switch's lead is no longer than a hit (Atlas 10K's), and they are judged by their gap.
    if v <= clock.hit_bound_ns and not write:
        lo, hi, steps = 0.0, 2.0 * T, steps + 2
    else:
        if grid:   # (when the first probe's block passed, made in that turn or not, bounds the lead)
            v = _passing(geo, clock, y, dtr, c_a + delay, v)
        lo, hi = max(v - T, 0.0), v
    if not waits:
        # (the bounds from here on are leads from the probe's command, the idle before it taken off)
        lo, hi = lo - delay, hi - delay
    for _ in range(steps):
        t, dtr = pair()
        d = geo.g.tracks[dtr]
        sector = T / d.spt
        if waits:
            # Under noise the bounds are blocks' passings (below), whole sectors apart on a track: the probe asks
            # for the block half a sector after a whole number of sectors past the floor, about half-way to the
            # bound. (Before, the bounds were responses, late by their noise, and the midpoint of two bounds two
            # sectors apart lay past the middle block's passing: the search skipped the block it needed, asked
            # the same midpoint to the end and came out a sector long, or not, with the draw: DEC RZ26's
            # head-switch leads in two clusters a sector, 193 us, apart.) Exact, with `settle_turns`, the same: the
            # bounds are then blocks' completions, and the midpoint of two a whole number of sectors apart is a
            # block's own, which `Geo.lbn_at` gave as that block or the next by the rounding of the phase three
            # turns on (Atlas III exact: two head-switch searches of eight asked a block's completion four times
            # and came out a sector long).
            g = lo + sector * max(1, round((hi - lo) / (2 * sector))) - sector / 2
        else:
            g = (lo + hi) / 2
        src_lbn = source(t)
        c_a = yield ("read", src_lbn, False)
        delay = delay_after(c_a, src_lbn, d) + wait
        y = geo.lbn_at(dtr, clock.phase(c_a + delay + g) * d.spt)
        if delay:
            yield ("idle", delay, False)
        c_b = yield ("read", y, write)
        got = c_b - c_a - delay
        if got < g - 2 * sector:
            # Done before its block passed: served from the buffer (the full stroke has one pair of
            # cylinders, and its searches run on the same tracks), which says nothing of the lead.
            continue
        at = _passing(geo, clock, y, dtr, c_a + delay, got) if grid else got
        if got < g + T / 2:   # made it: the lead needed is at most what this one took
            hi = min(hi, at)
        else:                 # an extra turn: it needs more than the block's own lead
            floor = at - round((at - g) / T) * T
            if clock.noisy:
                # ... which passed within a sector after g (`Geo.lbn_at`): the floor is at most g + a sector. (It
                # was the response less the turns, which carries the probe's noise, and a floor above the lead pins
                # every later probe over it: a miss in the noise's tail, 200 us on average at 20 us of jitter,
                # raised a search's floor that far, and IBM 18ES's 3,400-cylinder seek, a notch of 1.278 ms in its
                # table, came out 1.44 ms when three of its four searches had floors so raised. Now the floor is
                # its block's passing, which the cap leaves as it is but where the layout's phase is a sector off.)
                floor = min(floor, g + sector)
            lo = max(lo, floor)
        if hi - lo < 1000:
            break
    # (under noise a passing, which the noise does not move: the callers take the noise's median off every lead)
    return hi + clock.noise_median_ns if grid else hi


def positioning(dev: Device, geo: Geo, clock: Clock, rng: random.Random, pairs: list, steps: int = 10,
                write: bool = False, fill: int = 0, first: int = 0, of: Optional[int] = None,
                slots: Optional[list] = None, source_block: Optional[Callable] = None,
                offset: Optional[float] = None, settle_turns: int = 0) -> list[float]:
    """Minimal lead (ns) for each (source tracks, destination tracks) task; the
    searches run interleaved (each step a positioning read and a probe, back to
    back), `fill` far-away reads after each round. The tasks' probes are sent
    at offsets spread over a sector (`_lead_search`): task i the (first + i)-th of `of` (or the slots[i]-th).
    `source_block(track, rng)`: the block each positioning read reads (default: any of its track's); `offset`:
    every probe sent that fraction of a sector after the completion (0: at once); `settle_turns`: whole turns more
    before each probe (`_lead_search`)."""
    slots = slots if slots is not None else [first + i for i in range(len(pairs))]
    tasks = [_lead_search(a, b, geo, clock, rng, steps, write,
                          offset=((slots[i] + 0.5) / (of or len(pairs))) % 1.0 if offset is None else offset,
                          source_block=source_block, settle_turns=settle_turns)
             for i, (a, b) in enumerate(pairs)]
    results = [None] * len(tasks)
    ops = {}
    for i, tk in enumerate(tasks):
        ops[i] = next(tk)
    while ops:
        for i in list(ops):
            done = 0
            while done < 2:
                op, lbn, w = ops[i]
                if op == "idle":
                    dev.idle(lbn)
                    t = None
                else:
                    t = dev.write(lbn) if w else dev.read(lbn)
                    done += 1
                try:
                    ops[i] = tasks[i].send(t)
                except StopIteration as e:
                    results[i] = e.value
                    del ops[i]
                    break
        for _ in range(fill):
            dev.read(rng.randrange(dev.blocks))
    return results


def _round(dev: Device, geo: Geo, clock: Clock, rng: random.Random, tasks: list, segments: int, write: bool = False,
           first: int = 0, of: Optional[int] = None, slots: Optional[list] = None,
           source_block: Optional[Callable] = None, offset: Optional[float] = None) -> list[float]:
    """One lead per task (`positioning`), with enough far-away reads before and after each round that a track is
    read again only after `segments` others (no cache hits)."""
    distinct = sum(2 * len(a) for a, _ in tasks)
    rounds = max(min(len(a) for a, _ in tasks), 1)   # a track comes round again after this many rounds
    fill = -(-max(segments + 2 - distinct, 0) // rounds)
    for _ in range(fill):
        dev.read(rng.randrange(dev.blocks))
    return positioning(dev, geo, clock, rng, tasks, write=write, fill=fill, first=first, of=of, slots=slots,
                       source_block=source_block, offset=offset)


def _tracks_of_cyl(g: Geometry, c: int) -> list:
    end = g.cylinders[c + 1] if c + 1 < len(g.cylinders) else len(g.tracks)
    return list(range(g.cylinders[c], end))


def seek_curve(dev: Device, g: Geometry, clock: Clock, rng: random.Random, distances: list[int], per_distance: int = 4,
               progress: Optional[Callable] = None, write: bool = False, segments: int = 16,
               head_switch: bool = True, readahead_blocks: int = 0) -> tuple[list, list, list]:
    """(distance, minimal lead ms median, spread ms) per distance; and the head-switch leads (ns), with `head_switch`,
    and their destination tracks' sectors (ns). Each lead is put on the median track's sector (`_on_median_sector`).

    `readahead_blocks`: how far the drive reads ahead after a read (0: not after a single read). The head-switch
    searches then send each probe once that read-ahead has ended, from source tracks far enough from their
    cylinder's last that it ends on the cylinder. A command that stops a read-ahead finds the heads busy, and a
    drive that finishes the sector under the head first (DiskSim's "Stop prefetch in sector", whose stop
    `settle_readahead` in the simulator models) starts the switch at that sector's end, a point of the sector grid
    that the destination track, on the same cylinder, shares: the heads then land on it the switch rounded up to
    whole sectors later, at every offset, and the lead holds that rounding, which no offset spreads (the sector and
    a half taken off assumes the heads ready at a point spread over a sector). Atlas III's, on eight of its nine
    zones: switch rounded up + a sector + 107-109 us; its switch + overhead came out 1.018-1.020 ms on three noise
    seeds of six against the truth's 0.999, over a threshold of its sequential reads. With the read-ahead ended
    the heads are idle and leave after the overhead alone, as on a drive that stops at once."""
    geo = Geo(g)
    ncyl = len(g.cylinders)
    on_median = _on_median_sector(g, clock)
    out = []
    for k, d in enumerate(distances):
        # Distinct cylinder pairs: searches on the same tracks side by side hit each other's read-ahead (at the
        # full stroke there is one pair, and four searches on it once measured 0.15 ms). Where fewer pairs exist
        # than samples wanted, the searches on them run one after another.
        pairs = set()
        for _ in range(50 * per_distance):
            if len(pairs) >= per_distance:
                break
            c0 = rng.randrange(0, max(ncyl - d, 1))
            c1 = min(c0 + d, ncyl - 1)
            if _tracks_of_cyl(g, c0) and _tracks_of_cyl(g, c1):
                pairs.add((c0, c1))
        tasks = []
        for c0, c1 in sorted(pairs):
            if rng.random() < 0.5:
                c0, c1 = c1, c0
            a, b = _tracks_of_cyl(g, c0), _tracks_of_cyl(g, c1)
            n = min(len(a), len(b))
            tasks.append((a[:n], b[:n]))
        leads = []
        while tasks and len(leads) < per_distance:
            leads += on_median(_round(dev, geo, clock, rng, tasks, segments, write=write, first=len(leads), of=per_distance),
                               tasks)
        v = np.array(leads, dtype=float)
        out.append((d, float(np.median(v)) / 1e6, float(v.max() - v.min()) / 1e6))
        if progress:
            progress(k + 1, len(distances))
    if not head_switch:
        return out, [], []
    # head switch: to the previous track of the same cylinder
    # (the tracks a read-ahead from inside a track crosses into, and whole turns enough for it: its sectors, and
    # a switch per track, each under a turn, doubled)
    spt_min = min(t.spt for t in g.tracks)
    ahead = -(-readahead_blocks // spt_min) if readahead_blocks > 0 else 0
    settle = 2 * ahead + 1 if ahead else 0
    # (16: under timing noise the median of 8 moved by 40 us between runs of DEC RZ26 at 20 us; and the stretch
    # that the leads' sector-grid bounds share (`run.py`) narrows with the offsets: exact, Atlas III's 8 left one
    # 13 us wide, its middle 4 us short of the truth's 0.999 ms, and its sequential reads on the knife edge's
    # low side, 0.236 ms of demerit)
    roomy, plain = [], []
    for j in range(max(per_distance, 16)):
        c = rng.randrange(ncyl)
        tr = _tracks_of_cyl(g, c)
        if len(tr) < 2:
            continue
        plain.append((tr[1:], tr[:-1]))
        # source track i + 1, destination i; with a read-ahead, sources at least `ahead` tracks before the last
        n = len(tr) - 1 - ahead
        if n >= 1:
            roomy.append((tr[1:1 + n], tr[:n]))
    # (where no cylinder has room for the read-ahead, as without one)
    tasks, settle = (roomy, settle) if settle and roomy else (plain, 0)
    hs = on_median(positioning(dev, geo, clock, rng, tasks, write=write, settle_turns=settle,
                               fill=max(segments + 2 - 2 * sum(len(a) for a, _ in tasks), 0)),
                   tasks) if tasks else []
    return out, hs, [clock.period_ns / geo.g.tracks[b[0]].spt for _, b in tasks] if hs else []


def readahead_switch_stall(dev: Device, g: Geometry, clock: Clock, rng: random.Random, segments: int = 16,
                           pairs: Optional[int] = None) -> Optional[dict]:
    """How long a read sent at once after a read of a track's last block waits for the head switch that the
    read-ahead began at that block's end (ms).

    Such a read leaves the read-ahead (where there is one) switching to the cylinder's next track at once; a
    command that arrives during a switch waits for its end (a switch under way is finished) or for its own
    overhead, whichever is later. The lead from that read to a far track, less the lead from a read in the first
    half of the same track (whose read-ahead is still on the track when the probe comes, and stops there), is
    the wait: max(0, head switch - (what the drive does between the first read's sector and its completion) -
    read overhead). The head-switch lead gives the overhead + the switch; this their difference where it is
    over 0. The probe goes out at once (sent later, it would find less of the switch left: at offsets spread
    over a sector, HP C2249A's 0.088 ms came out 0.034), on a track of another sectors per track where there
    is one, so that the two leads' sector grids fall apart at random (a lead lands up to a sector late):
    the mean of the pairs' differences, with its standard error. None where no cylinder has two full tracks
    one after the other. `pairs`: 16, 32 under timing noise (each lead carries its probes' noise: with 16, HP
    C2249A's 88 us at 20 us of jitter came out 4 us in one draw; with 32, 53-84 us over four)."""
    if pairs is None:
        pairs = 32 if clock.noisy else 16
    geo = Geo(g)
    ncyl = len(g.cylinders)
    tasks = []
    for _ in range(50 * pairs):
        if len(tasks) >= pairs:
            break
        c = rng.randrange(ncyl)
        tr = _tracks_of_cyl(g, c)
        # sources: full tracks followed on the cylinder by the next track in LBN order (the read-ahead's switch)
        src = [i for i in tr[:-1] if g.tracks[i].count == g.tracks[i].spt
               and g.tracks[i + 1].first == g.tracks[i].first + g.tracks[i].count]
        if len(src) < 2:
            continue
        dst = []
        for _ in range(20):
            c2 = (c + ncyl // 3 + rng.randrange(max(ncyl // 3, 1))) % ncyl
            dst = _tracks_of_cyl(g, c2)
            if dst and g.tracks[dst[0]].spt != g.tracks[src[0]].spt:
                break
        n = min(len(src), len(dst))
        if n < 2:
            continue
        tasks.append((src[:n], dst[:n]))
    if len(tasks) < 2:
        return None
    end = _round(dev, geo, clock, rng, tasks, segments, offset=0.0, source_block=lambda t, r: t.first + t.count - 1)
    mid = _round(dev, geo, clock, rng, tasks, segments, offset=0.0,
                 source_block=lambda t, r: t.first + r.randrange(max(t.count // 2, 1)))
    d = np.sort(np.array(end, dtype=float) - np.array(mid, dtype=float))
    k = len(d) // 8  # a trimmed mean: a lead that met something else (a late completion) is left out
    kept = d[k:len(d) - k]
    mean = float(kept.mean())
    # its standard error from the winsorized spread (the trimmed values' own spread understates it: at 20 us of
    # jitter IBM 18ES, whose switch is under its overhead, once gave 24 us at 3.4 of those errors, 0-2 us with
    # other draws)
    wins = np.clip(d, kept[0], kept[-1]) if len(kept) else d
    se = float(wins.std(ddof=1)) / ((len(kept) / len(d)) * np.sqrt(len(d))) if len(kept) > 1 else float("inf")
    return {"stall_ms": max(mean, 0.0) / 1e6, "stall_se_ms": se / 1e6, "differences_ms": [float(x) / 1e6 for x in d]}


def _on_median_sector(g: Geometry, clock: Clock) -> Callable[[list, list], list]:
    """A lead holds a sector and a half of its destination track (its own sector, and half of one landing late on
    average), which the caller takes off as the median track's (`lead_to_seek` in `extract/run.py`): each lead
    moved by the difference, so that leads on other zones' tracks compare. Atlas III's head switch, measured on
    tracks of 168-256 sectors (a sector of 33-50 us) and taken off as its median track's, came out 24 us long, on
    the wrong side of a threshold of its sequential reads (a track's crossing a turn late: 0.21 ms of demerit)."""
    med = float(np.median([t.spt for t in g.tracks]))

    def move(leads: list, tasks: list) -> list:
        return [v - 1.5 * clock.period_ns * (1.0 / g.tracks[b[0]].spt - 1.0 / med) for v, (_, b) in zip(leads, tasks)]
    return move


def lead_after_write(dev: Device, g: Geometry, clock: Clock, rng: random.Random, lo: int, hi: int,
                     write: bool = False, switch: bool = False, steps: int = 12, offset: float = 0.5,
                     on_read_phases: bool = False, after_read: Optional[Callable[[float], bool]] = None,
                     interval: Optional[list] = None, late: Optional[list] = None) -> Optional[float]:
    """Minimal lead (ns) of a command to the track the head is already on
    (overhead + one sector + completion, no positioning: DIXtrac's MTBRC idea
    without its cache-disabling mode page), or with `switch` to the previous
    track of its cylinder (+ a head switch). A write to a track inside
    the writable range [lo, hi) puts the head there (no read-ahead follows a
    write, so the track's other blocks are not in the buffer); after three
    idle turns (any buffered write has reached the media) a read (or a
    `write`) is sent to the block that passes the head `g` later. Each probe
    on another track; a probe that hit the buffer (responded before its
    block passed) is not counted. None when the range holds no whole track
    (with `switch`: no two of one cylinder). The idle turns end `offset` of a
    sector past whole turns, so that searches with offsets spread over a
    sector see the heads ready at points spread over it (`_lead_search`).

    With `on_read_phases` the search bisects on the probes' blocks'
    read-completion phases (when after t0 a read of the block would report)
    rather than on their responses: a write reports after its block by its
    own completion costs, a read by a read's, so a write's response is off
    its block's read phase by their difference, and a search that picks
    blocks by phase and bisects on responses skips a block whenever that
    difference is not 0 (DEC RZ26's writes, which report 42 us after a read
    would, came out a sector long in three searches of five). It returns the
    least response that made it in the turn, as without. For write probes:
    it drops no probe as a buffer hit.

    With `after_read` (a read-hit test) the head is put on the track by a
    read instead, from the track's first half (its read-ahead stays on the
    track until the probe stops it) and the probe follows it at once; a
    step whose read hit the buffer (the head did not go there) is skipped.

    With `interval` (a list, and `on_read_phases`) the search also appends (lo, hi): the latest read phase
    less its track's sector that missed, the earliest that made it (ns after t0): the command's overhead and
    positioning and the completion after a block lie between, whatever point of the sector grid the probe
    met. (Under timing noise that point is random: the idle turns are counted from a completion learned
    late, so the offsets chosen spread nothing; the intervals of several searches still narrow it.) With
    `late` (a list) it also appends, for each probe that made it, how much later than its block's read phase
    its response came: the host's noise, and for a write how much later a write reports than a read."""
    geo = Geo(g)
    whole = {i for i, t in enumerate(g.tracks) if t.count >= 16 and lo <= t.first and t.first + t.count <= hi}
    starts = set(g.cylinders)
    inside = [(i, i - switch) for i in sorted(whole) if not switch or (i - 1 in whole and i not in starts)]
    if not inside:
        return None
    T = clock.period_ns
    lo_g, hi_g = 0.0, 1.5 * T
    best = hi_g
    v_lo, v_hi = -math.inf, math.inf
    for _ in range(steps):
        gap = (lo_g + hi_g) / 2
        k, kd = inside[rng.randrange(len(inside))]
        t = g.tracks[k]
        if after_read is not None:
            w = t.first + rng.randrange(max(t.count // 2, 1))
            t_r = dev.now_ns()
            if after_read(dev.read(w) - t_r):
                continue
            dev.idle(int(offset * T / t.spt))
        else:
            w = t.first + rng.randrange(t.count)
            dev.write(w)
            dev.idle(int(3 * T + offset * T / t.spt))
        t0 = dev.now_ns()
        y = geo.lbn_at(kd, clock.phase(t0 + gap) * g.tracks[kd].spt)
        if y == w:  # the block just written is in the buffer: take the next one (a sector later)
            y = w + 1 if w + 1 < t.first + t.count else t.first
            gap += T / t.spt
        got = (dev.write(y) if write else dev.read(y)) - t0
        if on_read_phases:
            # the block's read-completion phase after t0, in the turn of the gap asked for (within a sector of it)
            due = _passing(geo, clock, y, kd, t0, gap)
            if not write and got < due - T / g.tracks[kd].spt - 2 * clock.noise_ns - 1000:
                continue   # a buffer hit (as below)
            sector = T / g.tracks[kd].spt
            if got < due + T / 2:
                hi_g, best = min(hi_g, due), min(best, got)
                v_hi = min(v_hi, due - sector)
                if late is not None:
                    late.append(got - due)
            else:
                lo_g = max(lo_g, due)
                v_lo = max(v_lo, due - sector)
            if hi_g - lo_g < 1000:
                break
            continue
        # A read done over a sector before its block passed was a buffer hit: it says nothing of the miss
        # path. (Not a write: a write-through drive writes its block as it passes, and reports sooner after
        # it than a read, which still sends the block on the bus; the times here are reads' completion phases.)
        if not write and got < gap - T / t.spt - 2 * clock.noise_ns - 1000:
            continue
        if got < gap + T / 2:
            hi_g = min(hi_g, got)
        else:
            lo_g = max(lo_g, got - round((got - gap) / T) * T)
        if hi_g - lo_g < 1000:
            break
    if interval is not None and on_read_phases and math.isfinite(v_lo) and math.isfinite(v_hi):
        interval.append((v_lo, v_hi))
    return best if on_read_phases else hi_g


def vote(intervals: list) -> Optional[float]:
    """The middle of the stretch that the most intervals (lo, hi) cover (a few wrong ones outvoted)."""
    if not intervals:
        return None
    edges = sorted({x for iv in intervals for x in iv})
    best, where = -1, None
    for a, b in zip(edges, edges[1:]):
        m = (a + b) / 2
        n = sum(lo <= m <= hi for lo, hi in intervals)
        if n > best:
            best, where = n, [a, b]
        elif n == best and where is not None and a == where[1]:
            where[1] = b
    return (where[0] + where[1]) / 2 if where else float(np.median([(lo + hi) / 2 for lo, hi in intervals]))


def write_report_after_read(dev: Device, g: Geometry, clock: Clock, rng: random.Random, lo: int, hi: int,
                            hit: Callable[[float], bool], samples: int = 15) -> Optional[float]:
    """How much later (ns; negative: sooner) a write-through write after a write reports than a read of the same
    block: the difference of their costs after the block's sector (a write's reselect and completion; a
    read's reselect, data preparation, bus time and completion), the only part of them timing shows, since a
    sector is seen only through a completion. Each sample on a block of another whole track in [lo, hi): a
    read of it (a miss, after a read elsewhere; a hit is dropped), a write to another track of the range (so
    that the write after it comes after a write, as in the write lead searches), then the write of the block;
    the two completions' difference within half a turn. The median: host noise delays both alike. None when
    the range holds fewer than two whole tracks or every read hit."""
    whole = [t for t in g.tracks if t.count >= 16 and lo <= t.first and t.first + t.count <= hi]
    if len(whole) < 2:
        return None
    T = clock.period_ns
    out = []
    for _ in range(samples):
        t, other = rng.sample(whole, 2)
        b = t.first + rng.randrange(t.count)
        dev.read(rng.randrange(dev.blocks))
        t0 = dev.now_ns()
        c_r = dev.read(b)
        if hit(c_r - t0):
            continue
        dev.write(other.first + rng.randrange(other.count))
        c_w = dev.write(b)
        out.append((c_w - c_r + T / 2) % T - T / 2)
    return float(np.median(out)) if out else None


# Seeks across a zone boundary: (cylinders before it, cylinders after it) of each source and destination
# (distances 1, 2, 2, 3, 4, 4, 5 and 7 with no empty cylinder between). Mostly short ones: the curve is steepest
# there, so they tell one gap from the next by the most (IBM 18ES: 56 us between 2 and 3 cylinders, 8 between 6
# and 7); with four, at 1, 3, 5 and 7, one lead a sector off chose two empty cylinders for one at four of its
# 60 boundaries.
GAP_SIDES = ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2), (3, 3))
# The part of the curve measured before the gaps (they are found against it, up to this less 7 cylinders wide).
GAP_CURVE_MAX = 100


def _full_tracks(g: Geometry, c: int) -> list:
    """The tracks of cylinder c that hold blocks on at least half their sectors: a probe to a spare sector of a
    short one reads its first block a turn later (`Geo.lbn_at`), and the searches on Cheetah 9LP's one-track
    zone of 28 blocks found a gap where there was none."""
    return [i for i in _tracks_of_cyl(g, c) if 2 * g.tracks[i].count >= g.tracks[i].spt]


def zone_gaps(dev: Device, g: Geometry, clock: Clock, rng: random.Random, curve: list, segments: int = 16,
              progress: Optional[Callable] = None) -> list[tuple[int, int, float]]:
    """Empty cylinders before each zone, inserted into `g`'s numbering. The layout walk sees the next zone begin
    on the cylinder after the last one holding blocks, but spare cylinders (a zone's spare tracks, cylinders
    outside every zone) lie between them, and a seek across them pays their distance. At each zone boundary in
    turn (the cylinders before it already renumbered), leads from cylinders before it to cylinders of the zone
    after it (`GAP_SIDES`, the destination side cut to that zone's cylinders), distances D on the model's
    numbering, against the measured curve (`curve`: (distance, lead ms, spread) on cylinders mostly within
    zones): the gap is the g whose curve at D + g matches them best (median absolute difference), 0 unless that
    fits within a sector and twice as well as no gap, and better by over half a sector. Each lead is put on the
    curve's sector, the median track's (`_on_median_sector`, as `seek_curve` puts the curve's), and the
    boundary's leads have their probe offsets spread over a sector, as the curve's have.
    Returns (zone index, gap, median difference ms) per zone measured."""
    dist = np.array([d for d, _, _ in curve], dtype=float)
    lead = np.array([v for _, v, _ in curve], dtype=float)
    on_median = _on_median_sector(g, clock)
    out = []
    for zi in range(1, len(g.zones)):
        b_z = g.zones[zi]
        if not b_z.get("gap_possible", True):
            continue   # the skews carry on into it from the cylinder before (a zone begun for its angle)
        cb = b_z["first_cylinder"]
        sides = {}
        for a, b in GAP_SIDES:
            c0, c1 = cb - 1 - a, cb + min(b, b_z["last_cylinder"] - cb)
            if c0 >= 0 and _full_tracks(g, c0) and _full_tracks(g, c1):
                sides[(c0, c1)] = None
        # each round's searches on distinct tracks (side by side on one they hit each other's read-ahead)
        rounds: list = []
        for c0, c1 in sides:
            r = next((r for r in rounds if all(c1 != y and c0 != x for x, y in r)), None)
            if r is None:
                rounds.append([])
                r = rounds[-1]
            r.append((c0, c1))
        if len(sides) < 2:
            continue
        geo = Geo(g)
        ds, v = [], []
        order = {side: k for k, side in enumerate(sides)}
        # (with timing noise each side twice, the other way round the second time: the signed median of 8 leads put
        # one of IBM 18ES's gaps, at cylinder 4,369, at 2 cylinders where its exact extraction's and the truth's are 1)
        for rep, r in [(rep, r) for rep in range(2 if clock.noisy else 1) for r in rounds]:
            tasks = []
            for k, (c0, c1) in enumerate(r):
                ta, tb = _full_tracks(g, c0), _full_tracks(g, c1)
                n = min(len(ta), len(tb))
                tasks.append((ta[:n], tb[:n]) if (k + rep) % 2 == 0 else (tb[:n], ta[:n]))   # both directions
                ds.append(c1 - c0)
            # each lead's probe offset its own of those spread over a sector across the boundary's leads (the
            # curve's leads are so spread): a lead lands up to a sector late, by a fraction its offset sets
            v += on_median(_round(dev, geo, clock, rng, tasks, segments, slots=[order[side] for side in r], of=len(sides)),
                           tasks)
        v = np.array(v) / 1e6
        x = np.array(ds, dtype=float)
        err = [float(np.median(np.abs(v - np.interp(x + k, dist, lead)))) for k in range(0, int(dist.max() - x.max()) + 1)]
        # No gap unless the best fits within a sector (median residual), and at least twice as well as none (its
        # median residual is the leads' own scatter) and by over half a sector. (Before: by a sector and twice
        # the host's noise, over 0.18 ms at 20 us of jitter, which refused every one of IBM 18ES's gaps there,
        # and exact refused those whose no-gap fit was 26-38 us, about a sector, off.)
        half_sector = 0.5 * clock.period_ns / b_z["spt"] / 1e6
        if clock.noisy:
            # With timing noise, the median of the signed differences: each lead carries its probe's noise (late
            # only, as the curve's own leads do), and the median absolute difference of IBM 18ES's 8 leads a
            # boundary at 20 us of jitter was 15-35 us at the right gap, at times over the sector the rule below
            # asks for (a gap of one refused at five of its boundaries, where the signed median was within 15 us
            # of the curve's against 45-80 us with none, and put at two at two more; its model then had 11,471
            # cylinders, the truth 11,474, and missed the one-cylinder spike at 3,400 by 15%)
            # The curve rises with distance: the gap is where the signed median crosses zero (the first
            # crossing: further on the curve's bumps cross it again)
            sgn = [float(np.median(v - np.interp(x + k, dist, lead))) for k in range(len(err))]
            err = [abs(e) for e in sgn]
            up = next((k for k, e in enumerate(sgn) if e <= 0), len(sgn) - 1)
            gap = up - 1 if up > 0 and err[up - 1] < err[up] else up
        else:
            gap = int(np.argmin(err))
        if err[0] <= max(2 * err[gap], err[gap] + half_sector) or err[gap] >= 2 * half_sector:
            gap = 0   # no seek says otherwise
        if gap:
            insert_empty_cylinders(g, [(zi, gap)])
        out.append((zi, gap, err[gap]))
        if progress:
            progress(zi, len(g.zones) - 1)
    return out

"""The buffer cache and the command overheads, from hits and misses (DIXtrac's tests).

A hit is recognised by its response: a read of data the drive holds
completes a fixed time after it is sent (the hit overhead plus the bus
transfer), whatever the platter's angle; `is_hit` compares with that time.
"""

from __future__ import annotations

import math
import random
from typing import Optional

import numpy as np

from .device import Device
from .timing import Clock


def _fresh(dev: Device, rng: random.Random, span: int = 0) -> int:
    return rng.randrange(0, dev.blocks - span - 1)


def _fastest_hit(dev: Device, rng: random.Random, n: int, reps: int, readahead_wait_ns: int = 0,
                 turn_ns: float = 0.0) -> float:
    """The fastest of `reps` read hits of `n` blocks (noise is only ever late: the lower envelope); the
    hits as `hit_line` makes them. With `turn_ns` (the rotation period) `reps` hits, up to 4 x `reps`
    tries: a re-read that misses (read-ahead has pushed the read's first blocks out of a segment, the
    likelier the later the re-read comes) waits most of a turn; counting tries, the larger sizes' fastest
    came from fewer hits and sat later (the minimum of fewer samples of the noise), and the slope with it."""
    rs: list = []
    while len(rs) < (4 * reps if turn_ns else reps):
        x = _fresh(dev, rng, n + 1)
        if readahead_wait_ns:
            dev.read(x)
            dev.idle(readahead_wait_ns)
            x += 1
        else:
            dev.read(x, n)
        t0 = dev.now_ns()
        rs.append(dev.read(x, n) - t0)
        if turn_ns:
            fastest = min(rs)
            if sum(r < fastest + turn_ns / 4 for r in rs) >= reps:
                break
    return float(min(rs))


def _fit_hits(sizes, mins) -> dict:
    slope, icpt = np.polyfit(np.array(sizes, float), np.array(mins, float), 1)
    resid = np.array(mins) - (slope * np.array(sizes) + icpt)
    return {"bus_ns_per_block": float(slope), "hit_overhead_ns": float(icpt),
            "fit_residual_ns": float(np.abs(resid).max()), "sizes": list(sizes), "min_response_ns": list(mins)}


def hit_line(dev: Device, rng: random.Random, sizes=(1, 2, 4, 8, 16, 32), reps: int = 5, readahead_wait_ns: int = 0) -> dict:
    """Response of a read hit against its size: slope = bus time per block,
    intercept = hit overhead (+ completion). A write hit is not measured.
    The hits are re-reads of the blocks just read, or with `readahead_wait_ns`
    (a drive that reads a re-read block from the media again) the blocks after
    one just read, that long after it: the read-ahead's data."""
    return _fit_hits(sizes, [_fastest_hit(dev, rng, n, reps, readahead_wait_ns) for n in sizes])


def two_point_hits(dev: Device, rng: random.Random, hl: dict, hits: int, readahead_wait_ns: int = 0, turn_ns: float = 0.0,
                   ladder=(48, 64, 96, 128, 192, 256), tol_ns: float = 50_000.0) -> dict:
    """`hl` with its slope (the bus time per block) from the fastest of `hits` hits of one block and of
    the largest size the buffer serves whole (the first of `ladder` whose fastest of 20 lies over `tol_ns`
    off the line ends it: a re-read larger than a segment, or than the read-ahead brings, misses and
    waits for the media). Under timing noise the slope's error is the two minima's scatter over the
    sizes' range: spread over six sizes up to 32, 80 hits each left Atlas III's bus time 217 ppm long
    at 20 us, which alone put its sequential 64 KB reads 0.4 ms of demerit off (docs/extract.md)."""
    top = max(hl["sizes"])
    for n in ladder:
        if n >= dev.blocks // 4:
            break
        m = _fastest_hit(dev, rng, n, 20, readahead_wait_ns, turn_ns)
        if m > hl["hit_overhead_ns"] + hl["bus_ns_per_block"] * n + tol_ns:
            break
        top = n
    known = dict(zip(hl["sizes"], hl["min_response_ns"]))
    m1, mt = (min(_fastest_hit(dev, rng, n, hits, readahead_wait_ns, turn_ns), known.get(n, math.inf)) for n in (1, top))
    slope = max((mt - m1) / (top - 1), 0.0)   # (a bus time of 0, HP C2249A's, comes out a hair either side)
    return {**hl, "bus_ns_per_block": slope, "hit_overhead_ns": m1 - slope, "two_point_sizes": [1, top]}


def merge_hit_lines(a: dict, b: dict) -> dict:
    """Two `hit_line` results over the same sizes as one: the faster of each size's minima, fitted again."""
    return _fit_hits(a["sizes"], np.minimum(a["min_response_ns"], b["min_response_ns"]).tolist())


class HitTest:
    def __init__(self, clock: Clock, hit1_ns: float, bus_ns: float):
        self.clock, self.hit1, self.bus = clock, hit1_ns, bus_ns
        self.tol = 3000 + 2.0 * clock.noise_ns

    def __call__(self, response_ns: float, blocks: int = 1) -> bool:
        expect = self.hit1 + (blocks - 1) * self.bus
        return response_ns <= expect + self.tol


def read_ahead(dev: Device, clock: Clock, rng: random.Random, hit: HitTest, track_starts=None, track_len: int = 0,
               max_blocks: int = 4096, wait_turns: int = 4, tracks=None) -> dict:
    """How far the drive reads ahead after one read miss, given time (it idles
    `wait_turns` revolutions): the largest k for which block x+k then hits
    (binary search, each trial at a fresh place: the same offset into another
    track). Measured from a track's first block and from its middle: the same
    reach from both is a fixed amount; a reach that ends at the track's end is
    "to the end of the track". If x+1 does not hit, the same after three
    sequential reads (a stream): `read_ahead_when`.

    With `tracks` (consecutive tracks' (first LBN, LBNs), in LBN order), two
    more: the reach from 10 blocks before a track's end (a drive that stops at
    the track's end reads 9, one with a fixed reach reads on into the next
    track), and after a read that crosses into the next track, whether the
    read-ahead goes on to the end of the track after that (DiskSim's
    continuous read 4: one track further when the segment began on an earlier
    track) or stops at the end of the track it is on (1)."""

    def place(off: int, span: int) -> int:
        if track_starts is not None and len(track_starts) > 2:
            i = rng.randrange(len(track_starts) - 2)
            return int(track_starts[i]) + off
        return _fresh(dev, rng, span) + off

    def probe(x: int, first_blocks: int, stream: int, k: int, turns: float = 0.0) -> bool:
        x = min(x, dev.blocks - (stream + first_blocks + k + 2))
        dev.read(x, first_blocks)
        for i in range(1, stream + 1):
            dev.read(x + first_blocks - 1 + i)
        # time for the read-ahead to reach x+k: its tracks at a turn and a half each (switches included)
        more_turns = 1.5 * k / track_len if track_len else 0.0
        dev.idle(int((wait_turns + more_turns + turns) * clock.period_ns))
        t0 = dev.now_ns()
        return hit(dev.read(x + first_blocks - 1 + stream + k) - t0)

    def confirmed(new_x, first_blocks: int, stream: int, k: int) -> bool:
        """`probe` at a place `new_x()` gives; under timing noise a hit is probed again at another place, half a
        turn later: the noise widens what counts as a hit until a miss whose block was about to pass under the
        head (a head switch and no rotational wait) counts too, and no miss is that quick twice half a turn
        apart (Atlas 10K at 20 us read 68 blocks of reach from 10 before a track's end, where it stops at 9)."""
        if not probe(new_x(), first_blocks, stream, k):
            return False
        return clock.noise_ns == 0 or probe(new_x(), first_blocks, stream, k, turns=0.5)

    def trial(off: int, k: int, stream: int) -> bool:
        return confirmed(lambda: place(off, max_blocks + stream + 2), 1, stream, k)

    def largest(ok, hi: int) -> int:
        """The largest k in [1, hi] with ok(k) (majority of 3), by bisection (1 at the least)."""
        lo = 1
        if sum(ok(hi) for _ in range(2)) == 2:
            return hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if sum(ok(mid) for _ in range(3)) >= 2:
                lo = mid
            else:
                hi = mid
        return lo

    def reach(off: int, stream: int) -> int:
        return largest(lambda k: trial(off, k, stream), max_blocks)

    out: dict = {}
    for stream, name in ((0, "every-read"), (2, "stream")):
        votes = [trial(0, 1, stream) for _ in range(5)]
        if sum(votes) >= 4:
            r0 = reach(0, stream)
            mid = track_len // 2 if track_len else 0
            r1 = reach(mid, stream) if mid else r0
            to_end = bool(track_len) and abs((r0 + 1 + stream) - track_len) <= 1 and abs((r1 + 1 + stream + mid) - track_len) <= 1
            out.update(when=name, blocks=r0, blocks_from_mid_track=r1, to_track_end=to_end, confidence=sum(votes) / 5)
            if tracks is not None and len(tracks) > 3:
                out.update(_track_end_reach(tracks, rng, probe, confirmed, largest, stream, max_blocks, r0))
            return out
    out.update(when="none", blocks=0, to_track_end=False, confidence=1.0)
    return out


def _track_end_reach(tracks, rng: random.Random, probe, confirmed, largest, stream: int, max_blocks: int, r0: int) -> dict:
    """`read_ahead`'s track-end probes (see there); `tracks` as there, `r0`
    the reach from a track's first block."""
    before_end = 10
    # Tracks followed by two more in LBN order, long enough for the probes.
    usable = [i for i in range(len(tracks) - 3) if tracks[i][1] >= 2 * before_end and tracks[i + 1][1] >= 8
              and tracks[i][0] + tracks[i][1] == tracks[i + 1][0] and tracks[i + 1][0] + tracks[i + 1][1] == tracks[i + 2][0]]
    if not usable:
        return {}

    def at_end(k: int) -> bool:
        def x() -> int:
            first, n = tracks[rng.choice(usable)]
            return first + n - before_end - stream
        return confirmed(x, 1, stream, k)

    def votes(trial) -> bool:
        return sum(trial(rng.choice(usable)) for _ in range(5)) >= 3

    r_end = largest(at_end, max_blocks)
    # (Under timing noise a track's boundary may be a block or two off.)
    out = {"blocks_from_track_end": r_end, "stops_at_track_end": r_end <= before_end + 2 < r0}
    if not out["stops_at_track_end"]:
        return out
    # From a track's first block, to its last? (Else a cap below a track stops it: the reach from the start.)
    out["whole_track"] = votes(lambda i: probe(tracks[i][0], 1, stream, tracks[i][1] - 1 - stream))

    # A read of a track's last 2 blocks and the next track's first 2 (then a stream's reads); hit at `target`?
    def crossing(i: int, target: int) -> bool:
        (first, n) = tracks[i]
        last = first + n + 1 + stream  # the crossing read's last block
        return probe(first + n - 2, 4, stream, target - last)

    def crossing_reaches(k: int) -> bool:
        i = rng.choice(usable)
        return crossing(i, tracks[i][0] + tracks[i][1] + 1 + stream + k)

    # Past the next track's end (DiskSim's continuous read 4), and then to the end of the track after it?
    out["one_track_further"] = votes(lambda i: crossing(i, tracks[i + 2][0]))
    if out["one_track_further"]:
        out["two_tracks_whole"] = votes(lambda i: crossing(i, tracks[i + 2][0] + tracks[i + 2][1] - 1))
        if not out["two_tracks_whole"]:
            # A cap inside the two tracks: the segment (the read-ahead stays within a segment of the request's end).
            out["blocks_after_crossing"] = largest(crossing_reaches, max_blocks)
    return out


def resumes_on_hit(dev: Device, clock: Clock, rng: random.Random, hit: HitTest, ra: dict, segments: int,
                   track_starts=None, track_len: int = 0, wait_turns: int = 4, trials: int = 5,
                   control_apart: bool = False) -> dict:
    """Whether a hit that finds the mechanism idle restarts the read-ahead
    (DiskSim's `Read-ahead on idle hit`). After one read and its read-ahead
    (`ra`, from `read_ahead`: it reaches `ra["blocks"]` past the read), the
    read-ahead's last block is read (a hit); `wait_turns` idle revolutions
    (and more for a reach of several tracks of `track_len`) later the block
    just past it hits only if that hit started a new read-ahead. Each trial
    has a control at the same place (after reads elsewhere have pushed it
    out of the `segments` segments): the block past the reach, read without
    the hit before it, must miss, else the reach is longer there and the
    trial is void. Fewer than 3 trials not void: not measured (no). Under
    timing noise a control's miss is provisional (a hit learned late reads
    as a miss): `confirm_idle_hit_controls` reads each one again.
    `control_apart` (the segment test counted no end to the segments, so
    the reads between cannot push a block out): each control at a track
    start of its own, since one at the trial's place leaves the block past
    the reach in a segment for the trial to hit (maxtor300g's 2,048
    segments, 64 counted: every trial voted "resumes", wrong). Exact only:
    such a control is not read again."""
    if ra["when"] == "none" or ra["blocks"] <= 0:
        return {"resumes": False, "confidence": 1.0, "note": "no read-ahead"}
    stream = 2 if ra["when"] == "stream" else 0
    past = stream + ra["blocks"] + 1  # the first block past the reach, from the first read
    # (as `read_ahead` waits: a turn and a half per track read ahead)
    wait_ns = int((wait_turns + (1.5 * past / track_len if track_len else 0)) * clock.period_ns)
    places = []

    def place() -> int:
        if track_starts is not None and len(track_starts) > 1:
            x = int(track_starts[rng.randrange(len(track_starts) - 1)])
        else:
            x = _fresh(dev, rng, 2 * past)
        return min(x, dev.blocks - past - 1)

    for _ in range(trials * 3):
        if len(places) == trials:
            break
        x = place()
        xc = place() if control_apart else x
        _idle_hit_start(dev, rng, xc, stream, segments, wait_ns)
        if _hits(dev, hit, xc + past):
            continue  # the read-ahead reaches further here: no trial
        _idle_hit_start(dev, rng, x, stream, segments, wait_ns)
        if not _hits(dev, hit, x + past - 1):
            continue  # or not as far
        dev.idle(wait_ns)
        places.append((x, _hits(dev, hit, x + past)))
    out = _idle_hit_verdict(places)
    out["_control"] = {"past": past, "stream": stream, "wait_ns": wait_ns, "segments": segments,
                       "places": places, "confirmed": not clock.noisy or control_apart}
    return out


def _idle_hit_start(dev: Device, rng: random.Random, x: int, stream: int, segments: int, wait_ns: int) -> None:
    """The idle-hit test's start at `x`: `segments` + 1 far reads (none of its blocks left in a segment), the
    read at `x` (and the `stream` after it), then `wait_ns` idle for the read-ahead."""
    for _ in range(segments + 1):
        dev.read(_fresh(dev, rng))
    for i in range(stream + 1):
        dev.read(x + i)
    dev.idle(wait_ns)


def _hits(dev: Device, hit: HitTest, lbn: int) -> bool:
    t0 = dev.now_ns()
    return hit(dev.read(lbn) - t0)


def _idle_hit_verdict(places: list) -> dict:
    """`resumes_on_hit`'s answer from its trials' (place, vote) pairs."""
    valid, votes = len(places), sum(v for _, v in places)
    if valid < 3:
        # One or two places where the controls held is noise letting a control through (Atlas 10K at 20 us of
        # jitter: one trial of 15, voting "resumes", wrong; every drive exact or at 20 us has 5 or none).
        return {"resumes": False, "confidence": 0.0, "trials": valid,
                "note": "no place where the read-ahead ends at its reach" if not valid else
                        f"controls held at {valid} place(s) only: not measured"}
    resumes = votes * 2 > valid
    return {"resumes": resumes, "confidence": (votes if resumes else valid - votes) / valid, "trials": valid}


def confirm_idle_hit_controls(dev: Device, clock: Clock, rng: random.Random, hit: HitTest, idle_hit: dict) -> dict:
    """`resumes_on_hit`'s answer with each trial's control read again under timing noise: the block past the
    reach, after the same start, must miss again, else the trial is void. A hit learned late by the noise's
    tail reads as a miss (noise is only ever late; a miss read twice is a miss), and a control that only
    seemed to miss let through a trial whose block past the reach was in the buffer anyway: it voted
    "resumes" (Cheetah 9LP at 20 us, noise seed 2: three controls of 15 let through at 264-570 us against a
    hit bound of 248 us, three votes "resumes", wrong, and its model's sequential reads 0.65 ms of demerit).
    Called last in an extraction, as the other tests that add commands under noise, so that its commands
    move no other test's noise draws; without noise, or with no trial, it reads nothing."""
    c = idle_hit.get("_control")
    if c is None or c["confirmed"] or not c["places"]:
        return idle_hit
    kept = []
    for x, vote in c["places"]:
        _idle_hit_start(dev, rng, x, c["stream"], c["segments"], c["wait_ns"])
        if not _hits(dev, hit, x + c["past"]):
            kept.append((x, vote))
    out = _idle_hit_verdict(kept)
    out["_control"] = dict(c, places=kept, confirmed=True)
    out["controls_reread_hit"] = len(c["places"]) - len(kept)
    return out


def segments(dev: Device, rng: random.Random, hit: HitTest, max_segments: int = 64, readahead_wait_ns: int = 0) -> dict:
    """Number of cache segments: read x, then n other far-apart blocks, then x
    again; x still hits while n < segments (LRU). With `readahead_wait_ns` (a
    drive that reads a re-read block from the media again), x is left that
    long to read ahead and x+1, the read-ahead's data, is the block read again."""
    def holds(n: int) -> bool:
        x = _fresh(dev, rng, 2)
        dev.read(x)
        if readahead_wait_ns:
            dev.idle(readahead_wait_ns)
            x += 1
        for _ in range(n):
            dev.read(_fresh(dev, rng))
        t0 = dev.now_ns()
        return hit(dev.read(x) - t0)

    if not holds(0):
        return {"segments": 0, "confidence": 1.0}
    lo, hi = 0, max_segments
    if holds(hi):
        return {"segments": max_segments, "confidence": 0.5, "note": f"more than {max_segments}"}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(holds(mid) for _ in range(3)) >= 2:
            lo = mid
        else:
            hi = mid
    return {"segments": lo + 1, "confidence": 0.9}


MISSES_AT_END = 16   # misses in a row that end `many_segments`' re-reads


def many_segments(dev: Device, rng: random.Random, hit: HitTest, reach: int, first: int = 256,
                  most: int = 16384) -> dict:
    """Number of cache segments past what `segments` counts, in one pass: N
    one-block reads that each miss, then the same blocks again from the last
    back. The buffer keeps the last S of them (LRU) and a hit allocates
    nothing, so the re-reads hit back to the S-th and miss from there on.
    Each read costs the rotation to a block `gap` blocks before the last, not
    a seek and half a turn: maxtor300g's 2,048 segments in device seconds,
    where `segments`' bisection over far reads would take device minutes.

    Each read lies below the last, out of reach of its read-ahead (`reach`
    blocks, `read_ahead`'s): a segment that also keeps blocks before its read
    (the sectors passed while waiting for it) then shows as a hit on the next
    read, and a quarter of them hitting doubles the gap and starts again (read
    upward, such segments held earlier reads unseen: 4 blocks apart, Atlas
    10K's 10 came out as more than 16,384). A read that hits the first time
    (fewer: a block an earlier test left in a segment, many on a small disk)
    takes no segment, and is taken off the count. Under timing noise a hit
    can read as a miss (at 20 us, one in eight of maxtor300g's), and a host's
    late tail lets a read-ahead reach the read before (one in a hundred): S
    is where the re-reads change from hits to misses, the split that the
    fewest of them contradict, once `MISSES_AT_END` miss in a row. Under
    noise it can still come out low: a read-ahead that a late host lets run a
    segment past its read leaves that read's block out, so it misses among
    the hits and takes a segment (maxtor300g at 20 us, seeds 1-20: 2,041 to
    2,048; exact, 2,048 on each). N grows fourfold from `first` to `most`, or
    to as many as the disk holds that far apart. Meant for counts past
    `segments`' cap: with only a few segments two reads late at the start of
    the re-reads leave none."""
    gap = max(2 * reach + 2, 64)
    n = first
    while True:
        fit = dev.blocks // gap - 2     # (a small disk holds fewer reads that far apart)
        if fit < MISSES_AT_END + 1:
            return {"segments": 0, "confidence": 0.0, "note": f"the disk holds too few reads {gap} blocks apart"}
        n = min(n, fit)
        x0 = _fresh(dev, rng, (n + 1) * gap)
        xs = [x0 + i * gap for i in reversed(range(n))]
        was_hit = [_hits(dev, hit, x) for x in xs]
        if sum(was_hit) > n // 4:
            if gap >= 1 << 16:
                return {"segments": 0, "confidence": 0.0, "note": f"reads {gap} blocks apart still hit"}
            gap *= 2
            continue
        seen: list = []
        for x in reversed(xs):
            seen.append(_hits(dev, hit, x))
            if len(seen) >= MISSES_AT_END and not any(seen[-MISSES_AT_END:]):
                # hits before the split plus misses after it, largest at the split
                held = int(np.argmax(np.cumsum([0] + [1 if h else -1 for h in seen])))
                # less the reads among them that hit the first time: they took no segment
                held -= sum(was_hit[::-1][:held])
                return {"segments": held, "confidence": 0.9, "gap_blocks": gap, "reads": n}
        if n >= min(most, fit):
            return {"segments": n, "confidence": 0.5, "note": f"more than {n}", "gap_blocks": gap, "reads": n}
        n *= 4


def write_behaviour(dev: Device, clock: Clock, rng: random.Random, lo: int, hi: int, bus_ns: float) -> dict:
    """With writes allowed in [lo, hi): a write that is reported in less than
    a fraction of a turn was reported from the buffer (write-back). Its
    response against size gives the write bus time and write overhead."""
    sizes = (1, 2, 4, 8, 16)
    resp = {n: [] for n in sizes}
    for n in sizes:
        for _ in range(5):
            x = rng.randrange(lo, max(hi - n, lo + 1))
            dev.idle(int(3 * clock.period_ns))  # let any earlier write destage
            t0 = dev.now_ns()
            resp[n].append(dev.write(x, n) - t0)
    mins = np.array([min(resp[n]) for n in sizes])
    med1 = float(np.median(resp[1]))
    spread1 = float(np.max(resp[1]) - np.min(resp[1]))
    # write-through: the response carries the rotational latency (spread ~ a turn); write-back: constant
    back = spread1 < 0.25 * clock.period_ns and med1 < 0.5 * clock.period_ns
    slope, icpt = np.polyfit(np.array(sizes, float), mins, 1)
    out = {"write_back": bool(back), "write_response_1_ns": med1, "spread_1_ns": spread1,
           "bus_write_ns_per_block": float(slope), "write_overhead_ns": float(icpt)}
    if back:
        # destage: a read right after a reported write waits for the write to reach the media
        x = rng.randrange(lo, hi - 1)
        waits = []
        for _ in range(5):
            dev.idle(int(3 * clock.period_ns))
            dev.write(x)
            t0 = dev.now_ns()
            waits.append(dev.read(rng.randrange(dev.blocks)) - t0)
        base = []
        for _ in range(5):
            dev.idle(int(3 * clock.period_ns))
            t0 = dev.now_ns()
            base.append(dev.read(rng.randrange(dev.blocks)) - t0)
        out["read_after_write_extra_ms"] = float(np.mean(waits) - np.mean(base)) / 1e6
    return out

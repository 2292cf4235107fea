"""Geometry from timing alone (Skippy's idea, Talagala et al. 1999, with DIXtrac's
bookkeeping): the LBN-to-track map, sectors per track, skews, zones, slips.

The walk reads one block every `stride` blocks across the disk, each command
sent the moment the previous one completes. A read that misses the cache
completes a fixed time after its sector passes the head, so the phase of its
completion (time modulo the rotation period) is the angle of its sector plus a
constant. Within a track, `stride` LBNs further is `stride` sectors further;
where that fails, a track boundary (a skew) or a slipped sector lies between
the two reads. Boundaries are then placed exactly by the track's LBN count
(found by binary search with single-block probes where the count is not yet
known or the prediction falls outside the window the walk saw), and checked by
the skews they imply.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .device import Device
from .timing import Clock


@dataclass
class Walk:
    stride: int
    x: np.ndarray       # LBN read
    t: np.ndarray       # completion time, ns
    resp: np.ndarray    # response time, ns


@dataclass
class Track:
    first: int          # first LBN
    count: int          # LBNs on the track
    spt: int            # physical sectors per track
    level: float        # sector of LBN 0 were the whole disk one track of this spt (o = sector - lbn), mod spt
    slips: list = field(default_factory=list)   # LBN offsets (from first) after which one sector is skipped
    exact: bool = False  # boundary found by probing (else predicted from the LBN count and checked by the walk)
    cyl: int = 0         # physical position, set when cylinders are assembled
    head: int = 0


def walk(dev: Device, start: int, end: int, stride: int, progress: Optional[Callable] = None) -> Walk:
    n = max((end - start) // stride, 1)
    xs = np.arange(start, start + n * stride, stride, dtype=np.int64)
    ts = np.zeros(n, dtype=np.float64)
    rs = np.zeros(n, dtype=np.float64)
    every = max(n // 200, 1)
    for i, x in enumerate(xs):
        t0 = dev.now_ns()
        t = dev.read(int(x))
        ts[i], rs[i] = t, t - t0
        if progress and i % every == 0:
            progress(i, n)
    return Walk(stride, xs, ts, rs)


def _fold(v: np.ndarray, n) -> np.ndarray:
    """v mod n, in (-n/2, n/2]."""
    return v - n * np.round(v / n)


def _fold1(v: float, n) -> float:
    """`_fold` of one number."""
    return v - n * round(v / n)


def pair_spt(w: Walk, clock: Clock) -> np.ndarray:
    """Sectors per track implied by each consecutive pair (right for pairs on one track)."""
    dp = ((np.diff(w.t) / clock.period_ns) % 1.0)
    with np.errstate(divide="ignore"):
        return np.where(dp > 0, w.stride / dp, np.inf)


ZONE_MIN_PAIRS = 40   # a run of fewer pairs of one sectors-per-track joins its neighbour


def zones_of_walk(w: Walk, clock: Clock, min_pairs: int = ZONE_MIN_PAIRS, rel_tol: float = 0.0) -> list[tuple[int, int, int]]:
    """Runs of pairs with one sectors-per-track: (first pair, last pair + 1, spt).
    spt per run = stride / mean phase step over the run's same-track pairs.
    With timing noise (`rel_tol` > 0) neighbouring runs whose estimates differ
    by less than that fraction are one zone (the mean over a whole zone is
    exact to a fraction of a sector; a 31-pair median is not)."""
    n = pair_spt(w, clock)
    npairs = len(n)
    win = 31 if rel_tol == 0 else 101
    pad = np.pad(n, (win // 2, win // 2), mode="edge")
    from numpy.lib.stride_tricks import sliding_window_view

    roll = np.median(sliding_window_view(pad, win), axis=1)[:npairs]
    est = np.round(roll).astype(np.int64)
    # runs of equal rounded estimate; tiny runs (noise) join their neighbour
    runs = []
    i = 0
    while i < npairs:
        j = i
        while j < npairs and abs(est[j] - est[i]) <= max(1, est[i] // 200, rel_tol * est[i]):
            j += 1
        runs.append([i, j, int(np.median(est[i:j]))])
        i = j
    merged: list = []
    for r in runs:
        if merged and (r[1] - r[0] < min_pairs or abs(r[2] - merged[-1][2]) <= max(1, r[2] // 200, rel_tol * r[2])):
            merged[-1][1] = r[1]
        else:
            merged.append(r)
    if len(merged) > 1 and merged[0][1] - merged[0][0] < min_pairs:
        merged[1][0] = 0
        merged.pop(0)
    dp = (np.diff(w.t) / clock.period_ns) % 1.0

    def measured(zs):
        out = []
        for a, b, e in zs:
            seg = dp[a:b]
            # same-track pairs: about the median step (track boundaries step further), within 3 MADs
            med = float(np.median(seg))
            mad = float(np.median(np.abs(seg - med)))
            same = seg[np.abs(seg - med) <= 3 * mad + 1e-9 * med]
            spt = int(round(w.stride / float(np.mean(same)))) if len(same) else e
            out.append((a, b, spt))
        return out
    out = measured(merged)
    if rel_tol > 0:
        # each of the median's edges moved where the steps change, and each zone's sectors per track measured
        # between its own edges, twice (measured over the median's, a new zone's took in the old one's last
        # pairs: ST41601N's zone of 65 read as 64, and its edge moved by 64's steps two reads early)
        for _ in range(2):
            out = measured(_edges_by_steps(out, dp, w.stride, win))
        # the noisy median joins zones a sector or two apart (ST41601N's 83 and 82): the mean step of a
        # zone's same-track pairs is exact to a fraction of a sector, so split where the two sides' differ
        out = [z for a, b, n in out for z in _split_zone(dp, w.stride, a, b, n, min_pairs)]
        # (and each side of a split measured on its own pairs: the split's estimates take the same-track pairs
        # of the whole, and two zones the median had joined, 65 and 63, came out 63 and 61)
        out = measured(out)
        joined: list = []
        for a, b, n in out:      # (sides that measure alike are one zone)
            if joined and joined[-1][2] == n:
                joined[-1] = (joined[-1][0], b, n)
            else:
                joined.append((a, b, n))
        out = joined
    elif clock.noiseless:
        out = _edges_at_tracks(_split_exact(out, n), n, w.stride)
    return out


def _split_exact(zones: list, v: np.ndarray, min_same: int = 8) -> list:
    """Without noise a pair of reads on one track gives its sectors per track exactly (an integer; a pair
    across a boundary or a slip gives another number): a zone whose same-track pairs hold runs of two values,
    each of `min_same` pairs or more, is two zones. The rolling median's runs joined neighbours a sector
    apart (ST41601N's 79 and 78, 83 and 82, 73 and 72, 69 and 68, 63 and 62), and the old zone's last
    cylinder, read with the new zone's sectors per track, came out a track of 1,337 LBNs and a cylinder of
    tracks a block short, up to 20 sectors off."""
    out = []
    for a, b, n in zones:
        seg = v[a:b]
        iv = np.round(np.where(np.isfinite(seg), seg, -1.0))
        same = np.isfinite(seg) & (np.abs(seg - iv) < 0.05)
        runs: list = []    # [first pair, last pair, value, pairs]
        for i in np.flatnonzero(same):
            val = int(iv[i])
            if runs and runs[-1][2] == val:
                runs[-1][1] = int(i)
                runs[-1][3] += 1
            else:
                runs.append([int(i), int(i), val, 1])
        big: list = []
        for r in runs:
            if r[3] < min_same:
                continue
            if big and big[-1][2] == r[2]:
                big[-1][1] = r[1]
                big[-1][3] += r[3]
            else:
                big.append(list(r))
        if len(big) < 2:
            out.append((a, b, n))
            continue
        cuts = [a] + [a + r[1] + 1 for r in big[:-1]] + [b]
        out += [(c0, c1, r[2]) for c0, c1, r in zip(cuts, cuts[1:], big)]
    return out


def _edges_at_tracks(zones: list, v: np.ndarray, stride: int) -> list:
    """Without noise: each change of zone moved to the track boundary where it lies. The rolling median put it
    up to two tracks early, inside the old zone's last tracks (HP C2249A: at each of its seven changes), whose
    reads then took the new zone's sectors per track: the walk made one track of the two, or of one and a
    piece, with more LBNs than the new zone's track holds, and the assembly's repairs left the old zone's last
    cylinder's last tracks a few to 40 sectors off (0.1% of HP C2249A's blocks). A pair of reads on one track
    gives its sectors per track exactly (`v`): the new zone begins after the first pair past the old zone's
    last such pair that gives neither zone's (crosses a track boundary), if the new zone's pairs all come
    after it."""
    out = [list(z) for z in zones]
    for k in range(1, len(out)):
        a0, _, nA = out[k - 1]
        a1, b1, nB = out[k]
        if nA == nB:
            continue
        K = 4 * (max(nA, nB) // max(stride, 1) + 2)
        lo, hi = max(a0 + 1, a1 - K), min(b1 - 1, a1 + K)
        if hi - lo < 4:
            continue
        seg = v[lo:hi]
        isA = np.abs(seg - nA) < 0.05
        isB = np.abs(seg - nB) < 0.05
        if not isA.any() or not isB.any():
            continue
        p = int(np.flatnonzero(isA)[-1])
        after = np.flatnonzero(~isA[p + 1:] & ~isB[p + 1:])
        if not len(after) or int(np.flatnonzero(isB)[0]) <= p:
            continue                      # the two zones' pairs interleave: leave the edge
        e = lo + p + 1 + int(after[0]) + 1   # the first read past that boundary
        if out[k - 1][0] < e < out[k][1]:
            out[k - 1][1] = e
            out[k][0] = e
    return [tuple(z) for z in out]


def _edges_by_steps(zones: list, dp: np.ndarray, stride: int, reach: int) -> list:
    """With noise: each change of zone moved to where the same-track pairs' phase steps change from the old
    zone's to the new one's. The rolling median of the pairs' sectors per track flips early: a third of a
    zone's pairs cross a track boundary and read low (ST41601N's zone of 65: 59; of 63: 57), so a window a
    quarter in the new zone already has its median there (ST41601N at 20 us: the change from 65 to 63 sectors
    placed 29 reads, 9 tracks, early, the old zone's last tracks walked as the new one's: tracks of 348 and
    221 blocks, the cylinder's blocks up to 16 sectors off). Within `reach` pairs of the edge each pair whose
    step lies within the two zones' steps' difference of one of them is that zone's (a pair across a
    boundary steps further: neither); the edge is the pair that leaves the fewest on the wrong side (the
    nearest to the median's of those), put at the nearest read that begins a track (within 8). Only where the
    two steps lie further apart than a pair typically lies from the nearer of them."""
    out = [list(z) for z in zones]
    for k in range(1, len(out)):
        a0, _, nA = out[k - 1]
        a1, b1, nB = out[k]
        if nA == nB or min(nA, nB) <= 0:
            continue
        sA, sB = (stride / nA) % 1.0, (stride / nB) % 1.0
        gap = abs(sA - sB)
        lo, hi = max(a0 + 1, a1 - reach), min(b1 - 1, a1 + reach)
        if hi - lo < 4 or gap <= 0:
            continue
        seg = dp[lo:hi]
        dA, dB = np.abs(_fold(seg - sA, 1.0)), np.abs(_fold(seg - sB, 1.0))
        if gap <= float(np.median(np.minimum(dA, dB))):
            # (steps nearer each other than a pair typically lies from the nearer: the noise's, not two zones'
            # to tell apart, as IBM 18ES's 350 and 351 at 20 us; the edge stays the median's)
            continue
        isA = (dA < dB) & (dA <= gap)
        isB = (dB <= dA) & (dB <= gap)
        # cost of an edge before pair lo + m: B-like pairs before it, A-like ones from it on
        cost = np.concatenate(([0], np.cumsum(isB))) + (int(isA.sum()) - np.concatenate(([0], np.cumsum(isA))))
        best = np.flatnonzero(cost == cost.min())
        m = lo + int(best[np.argmin(np.abs(lo + best - a1))])
        cross = [lo + i + 1 for i in np.flatnonzero(~isA & ~isB) if abs(lo + i + 1 - m) <= 8]
        m = min(cross, key=lambda j: abs(j - m)) if cross else m
        if a0 < m < b1:
            out[k - 1][1] = m
            out[k][0] = m
    return [tuple(z) for z in out]


def _same_track_steps(seg: np.ndarray, win: int = 31) -> np.ndarray:
    """The phase steps of pairs on one track: within 3 MADs of the median (a boundary steps further), and of
    the median of the `win` steps about each. About each too: over a whole stretch that holds two zones,
    ST41601N's 85 and 83, the median and its spread lay between the two, the steps across the first zone's
    track boundaries passed for same-track ones, and the split found no change where it was plain. (Not about
    each alone: a stretch's last few steps, a run of outliers, are their own local median; Atlas 10K at 20 us.)"""
    med = float(np.median(seg))
    ok = np.abs(seg - med) <= 3 * float(np.median(np.abs(seg - med))) + 1e-9 * med
    if len(seg) < win:
        return ok
    from numpy.lib.stride_tricks import sliding_window_view

    loc = np.median(sliding_window_view(np.pad(seg, (win // 2, win // 2), mode="edge"), win), axis=1)[:len(seg)]
    d = np.abs(seg - loc)
    return ok & (d <= 3 * float(np.median(d)) + 1e-9 * np.abs(loc))


def _split_zone(dp: np.ndarray, stride: int, a: int, b: int, n: int, min_pairs: int, depth: int = 3) -> list:
    """[(a, b, spt)]: the pairs [a, b) as one zone, or split in two (recursively) where the sectors per
    track of the two sides' same-track steps round to different values, each side holding `min_pairs`."""
    if depth == 0 or b - a < 2 * min_pairs:
        return [(a, b, n)]
    seg = dp[a:b]
    ok = _same_track_steps(seg)
    v = np.where(ok, seg, 0.0)
    cs, cn = np.cumsum(v), np.cumsum(ok)
    # a step's noise, as sectors per track: the two sides' estimates must differ by four standard errors
    sd = float(np.std(seg[ok])) / max(float(np.mean(seg[ok])), 1e-12) * stride / max(float(np.mean(seg[ok])), 1e-12)
    best = None
    for m in range(min_pairs, b - a - min_pairs + 1, 4):
        nl, nr = cn[m - 1], cn[-1] - cn[m - 1]
        if nl < min_pairs // 2 or nr < min_pairs // 2:
            continue
        sl, sr = stride / (cs[m - 1] / nl), stride / ((cs[-1] - cs[m - 1]) / nr)
        score = abs(sl - sr) * np.sqrt(nl * nr / (nl + nr))
        if best is None or score > best[0]:
            best = (score, m, sl, sr)
    if best is None or round(best[2]) == round(best[3]) or abs(best[2] - best[3]) < 0.6 or best[0] < 4 * sd:
        return [(a, b, n)]
    # the zones meet at a track boundary: the nearest pair that steps further than a track's (read m begins
    # the new zone's track)
    m = a + best[1]
    jumps = [a + i + 1 for i in np.flatnonzero(~ok) if abs(a + i + 1 - m) <= 8]
    m = min(jumps, key=lambda j: abs(j - m)) if jumps else m
    return (_split_zone(dp, stride, a, m, int(round(best[2])), min_pairs, depth - 1)
            + _split_zone(dp, stride, m, b, int(round(best[3])), min_pairs, depth - 1))


def levels(w: Walk, clock: Clock, spt_of_probe: np.ndarray) -> np.ndarray:
    """o = sector - LBN (mod spt) of each probe, sectors, from its completion phase."""
    ph = (w.t / clock.period_ns) % 1.0
    return (ph * spt_of_probe - w.x) % spt_of_probe


def segment(o: np.ndarray, spt: np.ndarray, tol: float, confirm: int = 2, earliest_ref: bool = False) -> list[tuple[int, int, float]]:
    """Runs of probes with one level: (first member, last member, level). A
    probe that differs alone (a late completion) is an outlier, in no run.
    With timing noise (`earliest_ref`) a run's reference is its earliest member."""
    runs = []
    n = len(o)
    i = 0
    while i < n:
        ref = o[i]
        members = [i]
        j = i + 1
        while j < n:
            d = abs(_fold(np.array(o[j] - ref), spt[j]))
            if d <= tol and spt[j] == spt[i]:
                members.append(j)
                # completions are only ever late: the earliest member is the reference (a late first read
                # would otherwise reach the next track's level, a head switch of two sectors away)
                if earliest_ref and _fold(np.array(o[j] - ref), spt[j]) < 0:
                    ref = o[j]
                j += 1
                continue
            # a new level if another of the next three reads agrees with this one and the next two do
            # not return to the old level; else this read is an outlier (a late completion)
            ahead = o[j + 1:j + 4]
            if len(ahead) == 0 or spt[j] != spt[i]:
                break
            agree = np.abs(_fold(ahead - o[j], spt[j])) <= tol
            if not earliest_ref:
                # without noise a read the next ones follow one sector on is a level of its own, a slip
                # after it (a late completion, never early, is not followed by reads a sector later): alone
                # when a track's only read before its slip (IBM 18ES: a slip 25 sectors into a track, walk
                # reads at 15 and 36, missed, and 30 tracks a block off)
                agree |= np.abs(_fold(ahead - o[j] - 1, spt[j])) <= tol
            back = np.abs(_fold(ahead[:2] - ref, spt[j])) <= tol
            if agree.any() and not back.any():
                break
            j += 1
        vals = o[members]
        # completions are only ever late: the level is a low quantile (circular about ref)
        rel = _fold(vals - ref, spt[i])
        level = float((ref + rel.min()) % spt[i])
        runs.append((members[0], members[-1], level))
        i = j
    return _clean(runs, o, spt, tol)


def _snap(runs: list, spt: np.ndarray) -> list:
    """Every level of one sectors-per-track has the same fraction of a sector
    (the completion's fixed delay): find it (the mode, noise being only late)
    and put each level on it, so that sums of levels stay whole sectors."""
    out = list(runs)
    for n in np.unique(spt):
        idx = [i for i, r in enumerate(runs) if spt[r[0]] == n]
        if len(idx) < 5:
            continue
        fr = np.array([runs[i][2] % 1.0 for i in idx])
        h, edges = np.histogram(fr, bins=40, range=(0, 1))
        k = int(np.argmax(h))
        near = fr[np.abs(((fr - (edges[k] + 0.0125)) + 0.5) % 1.0 - 0.5) < 0.05]
        f = float(np.angle(np.mean(np.exp(2j * np.pi * near))) / (2 * np.pi)) % 1.0
        for i in idx:
            a, b, lev = runs[i]
            out[i] = (a, b, float((np.round(lev - f) + f) % n))
    return out


def _clean(runs: list, o: np.ndarray, spt: np.ndarray, tol: float) -> list:
    """Merge what noise split: a short run between two of one level, and
    neighbours of one level."""
    def same(a, b):
        return spt[a[0]] == spt[b[0]] and abs(_fold(np.array(a[2] - b[2]), spt[b[0]])) <= tol

    def lower(a, b):  # completions are only late: the earlier of two levels
        n = spt[b[0]]
        return float((a[2] + min(0.0, float(_fold(np.array(b[2] - a[2]), n)))) % n)

    out: list = []
    for r in runs:
        if len(out) >= 2 and out[-1][1] - out[-1][0] < 2 and same(out[-2], r):
            out.pop()
            a = out.pop()
            r = (a[0], r[1], lower(a, r))
        if out and same(out[-1], r):
            a = out.pop()
            r = (a[0], r[1], lower(a, r))
        out.append(r)
    return out


class Prober:
    """Single-block probes that must miss the cache: searches run side by side,
    one probe of each in turn, with far-away filler reads when fewer than
    `spread` are active, so a block is never read soon after a neighbour; a
    probe answered in a hit's time is read again after `spread` fillers."""

    def __init__(self, dev: Device, clock: Clock, rng: random.Random, spread: int = 24, rereads: int = 2):
        self.dev, self.clock, self.rng, self.spread, self.rereads = dev, clock, rng, spread, rereads
        self.probes = 0
        self.suspect_hits = 0
        self.reads = 0

    def _filler(self) -> None:
        self.dev.read(self.rng.randrange(self.dev.blocks))
        self.reads += 1

    def _probe(self, x: int) -> int:
        """Completion time of a read of `x` that missed the cache, as far as `rereads` more tries get one."""
        for k in range(1 + self.rereads):
            t0 = self.dev.now_ns()
            t = self.dev.read(x)
            self.probes += 1
            self.reads += 1
            if abs((t - t0) - self.clock.hit_ns) >= 2000 + self.clock.noise_ns * 0.25:
                break
            self.suspect_hits += 1
            # served from a segment the reads between did not replace (neighbouring probes that share one
            # replace fewer than they number: Atlas 10K, 10 segments, hits 11 reads on): its phase says
            # nothing of the sector
            if k < self.rereads:
                for _ in range(self.spread):
                    self._filler()
        return t

    def run(self, tasks: list) -> list:
        """`tasks`: generators that yield an LBN and receive its completion phase
        (revolutions); returns each generator's return value."""
        results = [None] * len(tasks)
        pending = {}
        for i, g in enumerate(tasks):
            try:
                pending[i] = next(g)
            except StopIteration as e:
                results[i] = e.value
        last = {i: self.reads - self.spread for i in pending}   # the read that was each search's last probe
        while pending:
            order = list(pending)
            fill = max(self.spread - len(order), 0)
            for k, i in enumerate(order):
                if fill and k < fill:
                    self._filler()
                # a round of `spread` reads keeps a search's probes `spread` - 1 reads apart only while the
                # order holds: where a search before this one ended, it comes up sooner (Atlas 10K: 9 reads
                # between for its 10 segments, a hit taken for the next track's level, boundaries a block off)
                while self.reads - last[i] < self.spread:
                    self._filler()
                t = self._probe(pending[i])
                last[i] = self.reads - 1
                try:
                    pending[i] = tasks[i].send(self.clock.phase(t))
                except StopIteration as e:
                    results[i] = e.value
                    del pending[i]
            for _ in range(fill - len(order)):
                self._filler()
        return results


def _closer_to_new(phase: float, y: int, old: tuple[float, int], new: tuple[float, int]) -> bool:
    (lo, so), (ln, sn) = old, new
    d_old = abs(_fold(np.array((phase * so - y) - lo), so))
    d_new = abs(_fold(np.array((phase * sn - y) - ln), sn))
    return bool(d_new < d_old)


def search(a: int, b: int, old: tuple[float, int], new: tuple[float, int], confirm: int = 0):
    """Generator: the first LBN in (a, b] at the `new` level (a is at `old`, b at `new`).
    With timing noise (`confirm` > 0) a probe that reads the later of the two
    levels may be a late completion of the earlier: it is read again, up to
    `confirm` times, and the earliest completion counts (noise is never early;
    one late probe would misplace the boundary by half the window)."""
    later_new = old[1] != new[1] or _fold(np.array(new[0] - old[0]), new[1]) > 0
    lo, hi = a, b
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ph = yield mid
        for _ in range(confirm):
            if _closer_to_new(ph, mid, old, new) != later_new:
                break
            ph2 = yield mid
            if _fold(np.array(ph2 - ph), 1.0) < 0:
                ph = ph2
        if _closer_to_new(ph, mid, old, new):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass
class Geometry:
    tracks: list            # Track, in LBN order
    cylinders: list         # index of the first track of each cylinder
    surfaces: int
    zones: list             # dicts: first_cylinder, last_cylinder, spt, first_track, track_skew, cylinder_skew, gap_possible
    stats: dict


def _mode(vals, default=None):
    if not len(vals):
        return default
    v, c = np.unique(np.asarray(vals), return_counts=True)
    return v[np.argmax(c)].item()


def extract_layout(dev: Device, clock: Clock, rng: random.Random, stride: int, start: int = 0, end: Optional[int] = None,
                   progress: Optional[Callable] = None, calib_per_zone: int = 40, debug: bool = False,
                   spread: int = 24) -> Geometry:
    """The whole-disk walk: every track read (`--walk full`)."""
    end = dev.blocks if end is None else end
    w = walk(dev, start, end, stride, progress)

    def refine():
        if clock.anchor_blocks:
            from .timing import refine_period
            refine_period(dev, clock)  # the walk took many revolutions: refit the period over the whole span
    tracks, stats = tracks_of_walk(dev, clock, rng, w, start, end, refine=refine, calib_per_zone=calib_per_zone,
                                   debug=debug, spread=spread)
    return _assemble(tracks, stats)


def tracks_of_walk(dev: Device, clock: Clock, rng: random.Random, w: Walk, start: int, end: int,
                   refine: Optional[Callable] = None, calib_per_zone: int = 40, debug: bool = False,
                   spread: int = 24, spt: Optional[int] = None, zones: Optional[list] = None) -> tuple[list, dict]:
    """The tracks of [start, end) from a walk over it (`start` must be a track's
    first LBN; the last track ends at `end`, cut short if `end` is inside it),
    boundaries and slips placed by single-block probes. `spt`: the sectors per
    track of the whole stretch, when already known (a stretch too short to
    tell zones apart); `zones`: the walk's reads' sectors per track, (first
    read, last read, spt), when known (else `zones_of_walk`'s)."""
    # timing noise, as a fraction of one pair's phase step
    stride = w.stride
    w0 = w
    noise_frac = 2 * clock.noise_ns / clock.period_ns / max(stride / 400.0, 1e-9)
    zr = (zones if zones is not None else zones_of_walk(w, clock, rel_tol=0.0 if noise_frac < 0.02 else 0.02)) \
        if spt is None else [(0, len(w.x) - 1, spt)]
    sp = np.zeros(len(w.x), dtype=np.int64)
    for a, b, n in zr:
        sp[a:b + 1] = n
    exact_mode = clock.noise_ns < 0.25 * clock.period_ns / float(sp.max())
    tol = 0.5 if exact_mode else max(1.5, 1.5 * clock.noise_ns / (clock.period_ns / float(sp.max())))
    if refine is not None:
        refine()
    # a read that completed about one hit time after it was sent was served from the buffer (the drive
    # read ahead while the host was late): its phase says nothing; leave it out
    buffered = w.resp <= clock.hit_bound_ns
    if clock.hit_ns == 0 and not exact_mode:
        # a drive whose re-reads miss (ST41601N) has no hit time to compare with, but serves a walk's
        # first read from what an earlier probe read ahead: answered in under half the walk's usual time
        buffered |= w.resp <= 0.5 * float(np.median(w.resp))
    keep = ~buffered
    if not exact_mode:
        # the read after a buffered one reaches a drive still reading ahead, not the walk's steady state:
        # with noise its completion can be sectors late (ST41601N)
        keep &= ~np.concatenate(([False], buffered[:-1]))
    keep[0] = keep[0] or exact_mode or not keep.any()
    w = Walk(w.stride, w.x[keep], w.t[keep], w.resp[keep])
    sp = sp[keep]
    o = levels(w, clock, sp.astype(float))
    runs = segment(o, sp, tol, earliest_ref=not exact_mode)
    if not exact_mode:
        # with noise, a run of one or two reads where a track holds five or more is noise (or buffered reads)
        per_track = float(np.median(sp)) / stride
        if per_track >= 5:
            long_runs = [r for r in runs if r[1] - r[0] >= 2 or sp[r[0]] != sp[max(r[0] - 1, 0)]]
            runs = _clean(long_runs, o, sp, tol) if long_runs else runs   # (a stretch of a few reads: keep them)
        runs = _snap(runs, sp)
    X = w.x
    # windows between runs: slips (level +1, same spt) and track boundaries
    bounds = []   # (a, b, run index after)
    tight = []    # (a, b) between the two runs' reads (bounds: with noise, a read wider)
    slipw = []    # (a, b, run before, run after)
    for r in range(1, len(runs)):
        f0, l0, lev0 = runs[r - 1]
        f1, l1, lev1 = runs[r]
        same = sp[l0] == sp[f1]
        D = float(_fold(np.array(lev1 - lev0), sp[f1])) if same else None
        if same and exact_mode and abs(D - 1) < 0.5:
            slipw.append((int(X[l0]), int(X[f1]), r - 1, r))
        elif exact_mode:
            bounds.append((int(X[l0]), int(X[f1]), r))
            tight.append(bounds[-1][:2])
        else:
            # with noise the new run's first read may be a late read of the old track (and, were the new
            # level the earlier, the old run's last one of the new): searches get one read more on each
            # side; a boundary placed by the skews must still fall between the two runs
            bounds.append((int(X[l0 - 1 if l0 > f0 else l0]), int(X[f1 + 1 if f1 < l1 else f1]), r))
            tight.append((int(X[l0]), int(X[f1])))
    prober = Prober(dev, clock, rng, spread=spread)

    def lv(r):
        return (runs[r][2], int(sp[runs[r][0]]))

    # exact slips
    confirm = 0 if exact_mode else 1
    slip_pos = prober.run([search(a, b, lv(r0), lv(r1)) for a, b, r0, r1 in slipw])
    slips_at = sorted(zip(slip_pos, [s_[2] for s_ in slipw]))
    # calibration: the first windows of each zone, exactly
    nb = len(bounds)
    B = [None] * nb
    zone_of = [int(sp[runs[r][0]]) for _, _, r in bounds]
    calib = []
    taken = 0   # windows calibrated in the zone so far
    for k in range(nb):
        if k == 0 or zone_of[k] != zone_of[k - 1]:
            taken = 0
        if taken < calib_per_zone:
            calib.append(k)
            taken += 1
    # the run before window k's "after" run is the last run of the previous track
    def prev_run(k):
        return bounds[k][2] - 1

    res = prober.run([search(bounds[k][0], bounds[k][1], lv(prev_run(k)), lv(bounds[k][2]), confirm) for k in calib])
    for k, v in zip(calib, res):
        B[k] = v
    # first-LBN sectors: sigma(track) = level of its first run + its first LBN
    first_lbn = [start] + [None] * nb    # track t starts at first_lbn[t]; track t+1 begins at window t
    run_of_track = [0] + [bounds[k][2] for k in range(nb)]

    sig_store: dict = {}   # with noise: first-LBN sectors carried along the chain by whole skews

    def sigma(t):
        if t in sig_store:
            return sig_store[t]
        lev, n = lv(run_of_track[t])
        return (lev + first_lbn[t]) % n

    # skews per zone from the calibrated windows (consecutive exact boundaries)
    for k in range(nb):
        if B[k] is not None:
            first_lbn[k + 1] = B[k]
    skews: dict = {}
    for k in range(nb):
        t = k + 1
        if first_lbn[t] is not None and first_lbn[t - 1] is not None and zone_of[k] == (zone_of[k - 1] if k else zone_of[k]) \
                and (k > 0):
            n = zone_of[k]
            skews.setdefault(n, []).append(int(round(sigma(t) - sigma(t - 1))) % n)
    zone_skews = {}
    for n, v in skews.items():
        vals, cnt = np.unique(v, return_counts=True)
        order = np.argsort(-cnt)
        main = [int(vals[i]) for i in order[:2] if cnt[i] >= 1]
        zone_skews[n] = main
    # full-track LBN count per zone (mode of the calibrated counts)
    counts: dict = {}
    for k in range(1, nb):
        if B[k] is not None and B[k - 1] is not None and zone_of[k] == zone_of[k - 1]:
            counts.setdefault(zone_of[k], []).append(B[k] - B[k - 1])
    zone_count = {n: _mode(v) for n, v in counts.items()}
    # the commonest LBN count of a track before each skew (a cylinder's last track before the cylinder skew, where
    # spares end each cylinder), from the calibrated windows
    by_skew: dict = {}
    for k in range(1, nb):
        t = k + 1
        if B[k] is not None and B[k - 1] is not None and first_lbn[t - 1] is not None and zone_of[k] == zone_of[k - 1]:
            n = zone_of[k]
            by_skew.setdefault((n, int(round(sigma(t) - sigma(t - 1))) % n), []).append(B[k] - B[k - 1])
    skew_count = {key: _mode(v) for key, v in by_skew.items()}
    # chain: place each remaining boundary by the skews; search where none fits
    rounds = 0
    streak: list = []
    B_d: dict = {}
    while True:
        todo = []
        for k in range(nb):
            if B[k] is not None:
                continue
            t = k + 1
            if first_lbn[t - 1] is None:
                continue
            (_, _, r), (a, b) = bounds[k], tight[k]
            n = zone_of[k]
            if k == 0 or zone_of[k - 1] != n or n not in zone_skews:
                todo.append(k)
                continue
            lev = runs[r][2]
            cands = []
            sk_of = {}
            for sk in zone_skews[n]:
                target = (sigma(t - 1) + sk - lev) % n
                cand = a + 1 + int(round(target - (a + 1))) % n
                if a < cand <= b:
                    cands.append(cand)
                    sk_of[cand] = sk
            if not cands:
                todo.append(k)
                continue
            if len(cands) > 1 and n in zone_count:
                cands.sort(key=lambda c: abs(c - first_lbn[t - 1] - zone_count[n]))
            if exact_mode and n in zone_count:
                # a skew can land in the window by chance (two switches over a skipped track look like
                # another skew a few sectors off): take it only where the LBN count agrees, else search
                nsl = sum(1 for sp_, _ in slips_at if first_lbn[t - 1] < sp_ < cands[0])
                if cands[0] != first_lbn[t - 1] + zone_count[n] - nsl:
                    todo.append(k)
                    continue
            if not exact_mode and (n not in zone_count or abs(cands[0] - first_lbn[t - 1] - zone_count[n]) > 1):
                # with noise too, a skew places a boundary only where the track it ends holds the zone's count (to a
                # block: the count rule below decides): a skew puts the boundary where the usual count of its kind
                # ends, and a cylinder's last track, where spares end each cylinder, holds as many more as the
                # cylinder's tracks have slips (ST41601N: 60 or 73 blocks for 59 or 72, and the level jump across
                # the cylinder switch, 17 sectors, the same: the cylinder skew put the boundary a block early and the
                # count carried it over the next cylinder); nor does a skew the window cannot tell from another
                # (ST41601N at 20 us: a stretch whose calibrated skews were 2 and 3, its cylinder switches placed
                # by a head switch, 51 blocks for 59). Searched instead: across a switch of more than the levels'
                # noise its probes decide
                todo.append(k)
                continue
            B[k] = cands[0]
            if not exact_mode:
                sig_store[t] = (sigma(t - 1) + sk_of[cands[0]]) % n
            if not exact_mode and n in zone_count:
                # with noise a level can be a sector off; the LBN count of a track is not: keep the count
                # unless the skews say otherwise three tracks in a row (a slip the noise hid)
                c2 = first_lbn[t - 1] + zone_count[n]
                d = cands[0] - c2
                if debug and a < debug <= b:
                    print("DBG", k, a, b, cands, c2, d, streak, first_lbn[t - 1], sigma(t - 1), runs[r][2])
                if abs(d) <= 1 and a < c2 <= b:
                    B[k] = c2
                    streak = streak + [k] if d != 0 and (not streak or (B_d.get(streak[-1]) == d and streak[-1] == k - 1)) else ([k] if d else [])
                    B_d[k] = d
                    if len(streak) >= 3:
                        for kk in streak:
                            nb_ = B[kk] + B_d[kk]
                            if bounds[kk][0] < nb_ <= bounds[kk][1]:
                                B[kk] = nb_
                                first_lbn[kk + 1] = nb_
                        streak = []
            first_lbn[t] = B[k]
        if not todo:
            break
        rounds += 1
        res = prober.run([search(bounds[k][0], bounds[k][1], lv(prev_run(k)), lv(bounds[k][2]), confirm) for k in todo])
        for k, v in zip(todo, res):
            B[k] = v
            first_lbn[k + 1] = v
            t = k + 1
            n = zone_of[k]
            if not exact_mode and k > 0 and zone_of[k - 1] == n and n in zone_skews and first_lbn[t - 1] is not None:
                # keep the chain's whole-sector first-LBN sector where a skew explains the measured one (or the skew
                # with the blocks the track holds over the usual count before it: a cylinder's last track one block
                # over, a slip in the cylinder, puts the next first block a sector further on)
                meas = sigma(t)
                best = None
                for sk_ in zone_skews[n]:
                    dc = v - first_lbn[t - 1] - skew_count.get((n, sk_), v - first_lbn[t - 1])
                    for dc in {0, dc if abs(dc) <= 2 else 0}:
                        e = float(_fold(np.array(meas - (sigma(t - 1) + sk_ + dc)), n))
                        if abs(e) <= 2.5 and (best is None or abs(e) < abs(best[1])):
                            best = ((sigma(t - 1) + sk_ + dc) % n, e)
                if best is not None:
                    sig_store[t] = best[0]
    # noise can put a boundary one block off: a track one short next to one one long (and no slip) is that
    if not exact_mode and zone_count:
        moved = 0
        for k in range(1, nb - 1):
            n = zone_of[k]
            L = zone_count.get(n)
            if L is None or zone_of[k - 1] != n or zone_of[k + 1] != n:
                continue
            c0, c1 = B[k] - B[k - 1], B[k + 1] - B[k]
            e = L - c0
            if e != 0 and abs(e) <= 2 and c1 == L + e and bounds[k][0] < B[k] + e <= bounds[k][1]:
                B[k] += e
                first_lbn[k + 1] = B[k]
                moved += 1
    # tracks
    ends = [B[k] for k in range(nb)] + [int(X[-1]) + 1 if end is None else end]
    ends[-1] = end
    tracks = []
    sp_run = [int(sp[r[0]]) for r in runs]
    si = 0
    for t in range(nb + 1):
        n = sp_run[run_of_track[t]]
        tr = Track(first_lbn[t], ends[t] - first_lbn[t], n, runs[run_of_track[t]][2], [], exact=(t == 0 or B[t - 1] is not None))
        while si < len(slips_at) and slips_at[si][0] < ends[t]:
            if slips_at[si][0] > tr.first:
                tr.slips.append(slips_at[si][0] - tr.first)
            si += 1
        tracks.append(tr)
    if not exact_mode and spt is None and zones is None:
        # with noise the walk's sectors per track can be a sector off, or a blend of two zones': the LBN counts
        # of the tracks say so; walked again under the counts' zones (the searches with them)
        by_count = _zones_by_counts(tracks, 0.02, _spt_by_drift(tracks, w, clock))
        if by_count != [t.spt for t in tracks]:
            zr2 = _read_zones(w0, tracks, by_count)
            trs2, st2 = tracks_of_walk(dev, clock, rng, w0, start, end, refine=refine, calib_per_zone=calib_per_zone,
                                       debug=debug, spread=spread, zones=zr2)
            st2["probes"] += prober.probes
            st2["suspect_hits"] += prober.suspect_hits
            st2["spt_settled"] = st2.get("spt_settled", 0) + sum(1 for t, n in zip(tracks, by_count) if t.spt != n)
            return trs2, st2
    split = 0 if exact_mode else _split_overlong(tracks, prober, tol, confirm)
    stats = {"walk_probes": int(len(X)), "stride": stride, "runs": len(runs), "boundary_windows": nb, "split_overlong": split,
             "slip_windows": len(slipw), "calibrated": len(calib), "search_rounds": rounds, "spt_settled": 0,
             "probes": prober.probes, "suspect_hits": prober.suspect_hits, "exact_mode": bool(exact_mode),
             "level_tolerance_sectors": tol, "zone_skews": {str(k): v for k, v in zone_skews.items()},
             "zone_track_count": {str(k): v for k, v in zone_count.items()}}
    return tracks, stats


def _runs_of_spt(tracks: list) -> list:
    """[a, b): runs of consecutive tracks of one sectors-per-track."""
    out, i = [], 0
    while i < len(tracks):
        j = i
        while j < len(tracks) and tracks[j].spt == tracks[i].spt:
            j += 1
        out.append((i, j))
        i = j
    return out


def _spt_by_drift(tracks: list, w: Walk, clock: Clock, min_tracks: int = 8) -> list:
    """With timing noise, each run of one sectors-per-track checked by its tracks' levels: read under n sectors a
    track of n' has its levels drift by (n - n') / n' a block, half a sector a half track for one sector off.
    Noise is only late, so each half of a track's walk reads gives its earliest level; the median over the run's
    whole tracks of the second half's less the first's is (n - n') / 2 (its noise a tenth of a sector over
    eight tracks of IBM 18ES at 20 us of jitter), where the mean phase step's standard error is half a sector
    (`_zones_by_counts`: 339 read for 338, which its counts, 338 on every track, cannot tell from a spare sector
    a track). Returns each track's sectors per track, the run's corrected where the drift says a whole
    sector or two."""
    out = [t.spt for t in tracks]
    ph = (w.t / clock.period_ns) % 1.0
    for i, j in _runs_of_spt(tracks):
        n = tracks[i].spt
        d = []
        for t in tracks[i:min(j, len(tracks) - 1)]:
            if t.count < 0.9 * n:
                continue
            m = (w.x >= t.first) & (w.x < t.first + t.count)
            if m.sum() < 4:
                continue
            x = w.x[m]
            o = (ph[m] * n - x) % n
            rel = _fold(o - float(np.median(o)), n)
            h = x >= t.first + t.count // 2
            if h.any() and (~h).any():
                # (per block, over the distance between the two halves' mean LBNs)
                d.append((float(rel[h].min()) - float(rel[~h].min())) / max(float(x[h].mean() - x[~h].mean()), 1.0) * n)
        if len(d) >= min_tracks:
            est = float(np.median(d))
            k = int(round(est))
            if k and abs(est - k) < 0.35 and abs(k) <= 2:
                out[i:j] = [n - k] * (j - i)
    return out


def _zones_by_counts(tracks: list, rel: float, spt0: Optional[list] = None) -> list:
    """With timing noise, the sectors per track of a stretch's tracks by their LBN counts, which the boundary
    probes give exactly. A zone's sectors per track from the walk is stride / the mean phase step of its
    same-track pairs: under 20 us of jitter (a step's noise a tenth of it) its standard error over a 48-track
    stretch is about half a sector, and rounding read IBM 18ES's 364 as 363 and 351 as 350; a short run of
    pairs split off a zone, or across a zone change (the noisy median cannot place it to the pair), gives a
    few tracks a value a sector or two off, or between the two zones' (380 between 390 and 374). Every later
    track of the zone was predicted under that value, each check and short stretch inherited it, and the
    assembly made a zone, and a cylinder, at each change: IBM 18ES's model had 32 cylinders more than its
    exact extraction, and whole zones' angles a sector or two off.
    The rules, each on runs of tracks of one sectors-per-track (a run's count: the commonest LBNs + slips of
    its tracks, the stretch's last, cut short, left out): a track cannot hold more than it has sectors, so a
    run whose count is above its sectors per track, by no more than `rel` of it, has that many (never
    lowered: a zone may keep spare sectors on each track); neighbouring runs within `rel` of each other with
    one count are one zone, of that count where it lies between the two (the walk cannot tell them apart),
    else of the longer run's; and a run's partial tracks before its first full one, after another run, that
    fit on one track of that run together, are that run's (a zone's short last track, cut in pieces where
    the blend's sectors per track moved its level). Returns each track's sectors per track."""
    new = list(spt0) if spt0 is not None else [t.spt for t in tracks]
    if len(tracks) < 2:
        return new
    last = len(tracks) - 1          # cut at the stretch's end: not a full track

    def held(k):
        return tracks[k].count + len(tracks[k].slips)

    def runs():
        out, i = [], 0
        while i < len(new):
            j = i
            while j < len(new) and new[j] == new[i]:
                j += 1
            v = [held(k) for k in range(i, j) if k != last]
            out.append([i, j, new[i], int(_mode(v)) if v else None])
            i = j
        return out

    for a, b, n, c in runs():
        if c is not None and n < c <= n + max(1.0, rel * n):
            new[a:b] = [c] * (b - a)
    merged = True
    while merged:
        merged = False
        rs = runs()
        for (a, b, n, c), (a2, b2, n2, c2) in zip(rs, rs[1:]):
            if c is not None and c == c2 and abs(n - n2) <= rel * max(n, n2):
                v = c if min(n, n2) <= c <= max(n, n2) else (n if b - a >= b2 - a2 else n2)
                new[a:b2] = [v] * (b2 - a)
                merged = True
                break
    rs = runs()
    for (_, _, p, pc), (a, b, n, c) in zip(rs, rs[1:]):
        if c is None or pc is None or pc == c:
            continue
        # the zone change placed a track or two late: the run's first tracks, up to its first full one, pieces
        # (a track cut where the other sectors per track moved its level) or holding the run before's count
        # where that is more than this run has sectors, all no more than a track of the run before
        k = a
        while k < b and k != last and (held(k) < c or held(k) == pc > n) and held(k) <= pc:
            k += 1
        if k > a and k < b and held(k) == c:
            new[a:k] = [p] * (k - a)
    for (a, b, n, c), (_, _, q, qc) in zip(rs, rs[1:]):
        if c is None or qc is None or qc == c:
            continue
        # placed a track or two early: the run's last tracks holding the next run's count where that is more
        # than this run has sectors
        k = b
        while k > a and k - 1 != last and held(k - 1) == qc > n:
            k -= 1
        if k < b:
            new[k:b] = [q] * (b - k)
    return new


def _read_zones(w: Walk, tracks: list, spt_of_track: list) -> list:
    """(first read, last read, sectors per track) of a walk's reads, each on its track's."""
    firsts = np.array([t.first for t in tracks], dtype=np.int64)
    k = np.clip(np.searchsorted(firsts, w.x, side="right") - 1, 0, len(tracks) - 1)
    n = np.array(spt_of_track, dtype=np.int64)[k]
    out, i = [], 0
    while i < len(n):
        j = i
        while j + 1 < len(n) and n[j + 1] == n[i]:
            j += 1
        out.append((i, j, int(n[i])))
        i = j + 1
    return out


def _earliest(phases: list) -> float:
    """The earliest of a block's completion phases (revolutions): noise is only ever late."""
    out = phases[0]
    for p in phases[1:]:
        if _fold(np.array(p - out), 1.0) < 0:
            out = p
    return out


def _split_at_last(t: Track, tol: float, confirm: int):
    """Generator: where the track after `t` begins inside it (None if `t`'s first
    and last blocks both show `t`'s own level): the last block's level (earliest
    of 1 + `confirm` reads), then a search for the first block at that level;
    else the same from the first block. Returns (boundary, the second part's
    level, the first part's)."""
    x, n = t.first + t.count - 1, t.spt
    phs = []
    for _ in range(1 + confirm):
        phs.append((yield x))
    lev = float((_earliest(phs) * n - x) % n)
    if abs(float(_fold(np.array(lev - t.level), n))) <= tol:
        # the last block shows the track's level: the boundary missed may be near its start instead (a
        # range's short last track that no walk read fell on, then the next track, whose level the run
        # shows: Cheetah 4LP's 87 blocks before 108 spares at 20 us of jitter). The first block's level
        # (earliest of as many reads) and a search for where the run's level begins; the first part
        # keeps the first block's level
        phs = []
        for _ in range(1 + confirm):
            phs.append((yield t.first))
        lev0 = float((_earliest(phs) * n - t.first) % n)
        if abs(float(_fold(np.array(lev0 - t.level), n))) <= tol:
            return None
        b = yield from search(t.first, x, (lev0, n), (t.level, n), confirm)
        return b, t.level, lev0
    b = yield from search(t.first, x, (t.level, n), (lev, n), confirm)
    return b, lev, t.level


def _split_overlong(tracks: list, prober: "Prober", tol: float, confirm: int, rounds: int = 3) -> int:
    """A track holding more LBNs than it has sectors is two (a boundary the walk
    missed, or a late read that put one in the wrong window): split it where its
    last block's level begins, and again while any is too long. The stretch's last
    track (cut at its end) is left alone. Returns the number of splits."""
    done = 0
    for _ in range(rounds):
        long_ = [i for i, t in enumerate(tracks[:-1]) if t.count + len(t.slips) > t.spt]
        if not long_:
            break
        res = prober.run([_split_at_last(tracks[i], tol, confirm) for i in long_])
        for i, r in sorted(zip(long_, res), reverse=True):
            if r is None:
                continue
            t = tracks[i]
            b, lev, lev0 = r
            head = Track(t.first, b - t.first, t.spt, lev0, [x for x in t.slips if x < b - t.first], exact=t.exact)
            tail = Track(b, t.first + t.count - b, t.spt, lev, [x - (b - t.first) for x in t.slips if x > b - t.first],
                         exact=True)
            tracks[i:i + 1] = [head, tail]
            done += 1
    return done


def _skews_of(tracks: list) -> list:
    """Sectors from each track's first block to the next's (None where the sectors per track change)."""
    sk = [None]
    for a, b in zip(tracks, tracks[1:]):
        sk.append(None if a.spt != b.spt else int(round((b.level + b.first) % b.spt - (a.level + a.first) % a.spt)) % b.spt)
    return sk


def _join_slivers(tracks: list) -> list:
    """A zone's last track cut in two by a change of sectors per track: a sliver (under a quarter of its
    sectors per track) of the next zone's sectors per track that still fits on the track before it, followed by
    the next zone's tracks, is that track's rest (its level, read as the next zone's, says nothing). Left apart
    it made a cylinder of its own: one cylinder too many at each of Atlas 10K's zone changes."""
    out = []
    for i, t in enumerate(tracks):
        a = out[-1] if out else None
        if (a is not None and a.spt != t.spt and 4 * t.count < t.spt and i + 1 < len(tracks)
                and tracks[i + 1].spt == t.spt and a.count + len(a.slips) + t.count + len(t.slips) <= a.spt):
            out[-1] = Track(a.first, a.count + t.count, a.spt, a.level, a.slips + [a.count + x for x in t.slips],
                            exact=a.exact)
            continue
        out.append(t)
    return out


def _short_tracks_back(tracks: list, head_skew: dict, cyl_skew: dict, tol: float) -> int:
    """A zone's last track that the walk gave the next zone's sectors per track (a few reads cannot tell them
    apart), short (spares after its blocks) or with more blocks than the next zone's tracks hold (HP C2490A's):
    where its first block lies one head or cylinder switch of the zone before after that zone's last track, it
    is that zone's. Its level was read under the other sectors per
    track, off by up to its count x the difference over a turn: that much more slack. Left in the next zone it
    began a cylinder of its own there (Barracuda's zones). Returns how many were moved back."""
    moved = 0
    for i in range(1, len(tracks) - 1):
        a, t, b = tracks[i - 1], tracks[i], tracks[i + 1]
        # short (spares after its blocks), or holding more blocks than the next zone's tracks have sectors
        if a.spt == t.spt or b.spt != t.spt or t.count + len(t.slips) == t.spt or t.count + len(t.slips) > a.spt:
            continue
        sig = ((t.level + t.first) % t.spt) * a.spt / t.spt      # its first block's phase, in a's sectors
        d = sig - (a.level + a.first) % a.spt
        slack = tol + t.count * abs(a.spt - t.spt) / t.spt
        if any(v is not None and abs(float(_fold(np.array(d - v), a.spt))) <= slack
               for v in (head_skew.get(a.spt), cyl_skew.get(a.spt))):
            t.spt, t.level = a.spt, float((sig - t.first) % a.spt)
            moved += 1
    return moved


def _cylinder_starts(tracks: list, ncyl: int) -> list:
    """First track of every cylinder (an empty cylinder repeats the next one's)."""
    starts = [0] * ncyl
    k = len(tracks)
    for c in range(ncyl - 1, -1, -1):
        while k > 0 and tracks[k - 1].cyl >= c:
            k -= 1
        starts[c] = k
    return starts


def insert_empty_cylinders(g: Geometry, gaps: list) -> int:
    """Renumber the cylinders with `gaps` ((zone index, empty cylinders before it, ...), from
    `mechanics.zone_gaps`) inserted: each zone and every later one moved on. Returns the cylinders added."""
    before = {zi: k for zi, k, *_ in gaps if k > 0}
    shift = 0
    for zi, z in enumerate(g.zones):
        shift += before.get(zi, 0)
        end = g.zones[zi + 1]["first_track"] if zi + 1 < len(g.zones) else len(g.tracks)
        for t in g.tracks[z["first_track"]:end]:
            t.cyl += shift
        z["first_cylinder"] += shift
        z["last_cylinder"] += shift
    g.cylinders = _cylinder_starts(g.tracks, g.tracks[-1].cyl + 1)
    return shift


def _mend_overfull(tracks: list, head_skew: dict) -> list:
    """A track holding more blocks than it has sectors has a boundary misplaced by the excess (a zone's first
    track a block or two early, its last track short by as many): the excess goes to the neighbour with room
    for it, the one before first (its first blocks), else the one after (its last). A track that also holds
    the end of the zone or range before (Cheetah 9LP: a zone's short last track, 34 blocks, then the next
    zone's first 245; HP C2247A: the rest of a track, a whole track of 72, then the first 64; Barracuda: a
    range's last track, 38 blocks before its 88 spares, then the next range's first 126) is cut where the rest
    is one track: the rest of the track before (where the walk saw a level change), then tracks of the zone
    before, each placed a head switch on (no walk read told their angle). Left over-full, the spec gave its
    zone a cylinder more and moved every later zone on (IBM 18ES: 9 cylinders), or laid every later block of
    its zone that much too far round (Cheetah 9LP: 34 sectors)."""
    out = []
    for i, t in enumerate(tracks):
        k = t.count + len(t.slips) - t.spt
        a = out[-1] if out else None
        b = tracks[i + 1] if i + 1 < len(tracks) else None
        if t.count > t.spt and k < t.count:   # (more blocks and slips than sectors only: a slip misplaced)
            if a is not None and a.spt == t.spt and a.count + len(a.slips) + k <= a.spt and not any(x < k for x in t.slips):
                a.count += k
                t.first, t.count, t.slips = t.first + k, t.count - k, [x - k for x in t.slips]
            elif b is not None and b.spt == t.spt and b.count + len(b.slips) + k <= b.spt and not any(x >= t.count - k for x in t.slips):
                t.count -= k
                b.first, b.count, b.slips = b.first - k, b.count + k, [x + k for x in b.slips]
            elif a is not None and head_skew.get(a.spt) is not None:
                # cut where the rest fills the track exactly (a level change there read as a slip goes with it)
                cut = next((c for c in range(1, t.count) if t.count - c + sum(1 for x in t.slips if x > c) == t.spt), None)
                # what comes before it: the rest of the track before (where the walk saw a level change as far on
                # as that track has room), then tracks of the zone before, each a head switch on
                room = a.spt - a.count - len(a.slips)
                take = room if cut is not None and 0 < room <= cut and any(abs(x - room) <= 1 for x in t.slips) else 0
                # (within a zone only a piece of a sixteenth of a track or more, as `merge_split` judges slips: a
                # block or two over is a boundary a noisy walk misplaced, desk250's 50,000 at 20 us of jitter)
                if cut is not None and (a.spt != t.spt or 16 * (cut - take) >= a.spt):
                    a.count += take
                    first, left = t.first + take, cut - take
                    while left > 0:
                        prev = out[-1]
                        sig = (prev.level + prev.first) % a.spt + head_skew[a.spt]
                        out.append(Track(first, min(left, a.spt), a.spt, float((sig - first) % a.spt), exact=t.exact))
                        first, left = first + min(left, a.spt), left - min(left, a.spt)
                    t.first, t.count, t.slips = t.first + cut, t.count - cut, [x - cut for x in t.slips if x > cut]
        out.append(t)
    return out


def _mend_early_boundaries(tracks: list, chain: int = 256) -> None:
    """A track holding a few more blocks than its place holds (under a sixteenth of a track; its place: a
    cylinder's last track or another, each the commonest count of its kind), after the assembly joined the
    pieces on its slot and placed the cylinders: a boundary placed that many blocks early further back, which the
    count carried on to every track after it (predicted, or each checked only at its level) until a check saw the
    excess (ST41601N at 20 us: 70, 72, ..., its cylinder's short last track, 72, then 74, 18 tracks on; or a
    cylinder's last track 60 for 62, the next cylinder's 64; the spec, which lays a zone's blocks in order, laid
    every later block of the zone two sectors on). The track it cut short is the nearest short of its place by
    exactly the excess in the run of one sectors-per-track before (up to `chain` tracks, none with slips after
    it; none where the excess recurs as the commonest shortfall there: spares at the end of each range of
    cylinders, the layout's); not one in the cylinder whose last track holds
    the excess (a slip, whose block its cylinder's spares took: the layout's). It gets its blocks back and every
    track after it up to the over-full one begins that much later. In place; `tracks` placed on cylinders."""
    def last(m):
        return m + 1 == len(tracks) or tracks[m + 1].cyl != tracks[m].cyl
    held: dict = {}
    for m, u in enumerate(tracks):
        if not u.slips:
            held.setdefault((u.spt, last(m)), []).append(u.count)
    usual = {key: _mode(v) for key, v in held.items()}

    def over(m):   # blocks (and slips) over what its place usually holds
        u = tracks[m]
        return u.count + len(u.slips) - min(usual.get((u.spt, last(m)), u.spt), u.spt)
    for i, t in enumerate(tracks):
        k = over(i)
        if k <= 0 or 16 * k >= t.spt or t.slips:
            continue
        short: dict = {}
        for m in range(i - 1, max(i - 1 - chain, -1), -1):
            if tracks[m].spt != t.spt or over(m) > 0:
                break
            if over(m) < 0:
                short.setdefault(-over(m), []).append(m)
        if k not in short or len(short[k]) > 1 and _mode([d for d, ms in short.items() for _ in ms]) == k:
            continue
        j = short[k][0]
        if any(u.slips for u in tracks[j + 1:i]) or last(i) and tracks[j].cyl == t.cyl:
            continue
        tracks[j].count += k
        for u in tracks[j + 1:i]:
            u.first += k
        t.first, t.count = t.first + k, t.count - k


def _zone_changes_by_counts(tracks: list, rel: float = 0.02, tail: int = 4) -> list:
    """With timing noise, the whole layout's runs of one sectors-per-track by their LBN counts, as
    `_zones_by_counts` does a dense stretch's (a short stretch walked in the zone before cannot tell a new
    zone's first tracks from it, nor a predicted run its sectors per track from one off): neighbouring runs
    within `rel` of each other whose tracks hold one count are one zone (of that count, where it lies between
    them; levels scaled by the angle); and a run's last few tracks that do not hold its count (or hold slips)
    but together hold a whole number of the next run's tracks are that run's first tracks, each a switch
    before the next (`_back_skews`; IBM 18ES at 20 us: a new zone's first 374-block track walked as one of
    390 with 7 slips, a 286 as a 312; each began a cylinder of its own at the change of sectors per track)."""
    def common(ts, a, b):
        v = [t.count for t in ts[a:b] if not t.slips]
        return int(_mode(v)) if v else None

    out = list(tracks)
    changed = True
    while changed:
        changed = False
        rs = _runs_of_spt(out)
        for (a, b), (a2, b2) in zip(rs, rs[1:]):
            n, n2 = out[a].spt, out[a2].spt
            c, c2 = common(out, a, b), common(out, a2, b2)
            if c is None or c != c2 or abs(n - n2) > rel * max(n, n2) or c > max(n, n2):
                continue
            v = c if min(n, n2) <= c <= max(n, n2) else (n if b - a >= b2 - a2 else n2)
            prev = None     # (the track before: its sector under the old sectors per track, and the new)
            for t in out[a:b2]:
                if t.spt != v:
                    m = t.spt
                    sig = (t.level + t.first) % m
                    if getattr(t, "predicted", False) and prev is not None and prev[0] == m:
                        # a predicted track is its predictor's whole skews on from the track before, counted in the
                        # old sectors: whole skews in the new ones (scaled, 54 sectors of 365 drifted 0.15 a track)
                        new = prev[2] + round(float(_fold1(sig - prev[1], m)) * v / m)
                    else:
                        new = sig * v / m
                    prev = (m, sig, new)
                    t.spt, t.level = v, float((new - t.first) % v)
                else:
                    prev = None
            changed = True
            break
    rs = _runs_of_spt(out)
    for (a, b), (a2, b2) in reversed(list(zip(rs, rs[1:]))):
        c, c2 = common(out, a, b), common(out, a2, min(b2, a2 + 50))
        u = out[a2]
        if c2 is None or u.count != c2 or u.slips:
            continue
        # (the skews of one sectors-per-track only: an earlier change may have given this run's last
        # tracks the next run's)
        raw = _skews_of(out[a2:min(b2, a2 + 50)])       # raw[j]: the skew into out[a2 + j]
        sk = [k for k in raw[1:] if k is not None]
        if len(sk) < 3:
            continue
        ts = int(_mode(sk))
        back = _back_skews(raw, ts, u.spt)
        k0 = b
        while k0 > max(a + 1, b - tail) and (out[k0 - 1].count != c or out[k0 - 1].slips):
            k0 -= 1
        # the most of them that hold a whole number of the next run's tracks
        while k0 < b and sum(t.count for t in out[k0:b]) % c2:
            k0 += 1
        if k0 == b:
            continue
        tot = sum(t.count for t in out[k0:b])
        k = tot // c2
        n2, first = u.spt, out[k0].first
        sig_u = (u.level + u.first) % n2
        out[k0:b] = [Track(first + m * c2, c2, n2, float((sig_u - back(k - m) - first - m * c2) % n2), exact=out[k0].exact)
                     for m in range(k)]
    return out


def _back_skews(raw: list, ts: int, n: int, slack: int = 2) -> Callable:
    """Sectors from the track d tracks before a run's first track to that first track, by the run's skews (`raw`:
    `_skews_of` the run's first tracks): d head switches `ts`, but where the run shows its cylinder switches (a
    skew more than `slack` from `ts`, the commonest such, every S tracks by the commonest gap between them, at
    least two gaps and most of them agreeing) the steps into a head 0 are cylinder switches, the heads counted
    back from the phase most of the switches give. Counted as head switches only, the tracks before the first
    one's cylinder lay the cylinder skew less the track skew off (IBM 18ES at 20 us, seed 2: a new zone's first
    cylinder 40 sectors off, a zone of its own, and a seek across its boundary made 19 empty cylinders of it)."""
    far = [(j, int(v)) for j, v in enumerate(raw) if j >= 1 and v is not None and abs(_fold1(v - ts, n)) > slack]
    if far:
        cs = int(_mode([v for _, v in far]))
        at = [j for j, v in far if abs(_fold1(v - cs, n)) <= slack]
        gaps = np.diff(at)
        S = int(_mode(gaps)) if len(gaps) >= 2 else 0
        if S > 1 and 2 * int(np.sum(gaps == S)) > len(gaps):
            h0 = int(_mode([(-j) % S for j in at]))          # the run's first track's head
            return lambda d: sum(cs if (h0 - i + 1) % S == 0 else ts for i in range(1, d + 1))
    return lambda d: d * ts


def _regroup_pieces(tracks: list, longest: int = 8, chain: int = 256) -> list:
    """With timing noise, pieces between two whole tracks: a run of tracks of one sectors-per-track between two
    tracks of one count L (without slips), whose counts (not all L) add up to k L, is k tracks of L (the
    slips a stretch's tidying put where it joined pieces go: the noise hides slips). A noisy
    walk's boundary searches can cut a track at a late probe (IBM 18ES at 20 us: 301, 92 and 231 blocks for
    two tracks of 312; a one-block sliver, the first block of a track, before the other 363), and each piece
    took a track slot, or began a cylinder, in the assembly: a cylinder too many each time. Each track's level
    is that of the largest piece that begins on it (a track's LBNs share one level; a piece beginning on the
    track before carries that one's)."""
    out = list(tracks)
    # the counts the layout holds again and again (a zone's full tracks, a cylinder's short last track)
    held: dict = {}
    for t in out:
        if not t.slips:
            held.setdefault(t.spt, []).append(t.count)
    common = {n: {c for c, k in zip(*np.unique(v, return_counts=True)) if k >= max(3, 0.02 * len(v))}
              for n, v in held.items()}
    i = 1
    while i < len(out) - 1:
        a = out[i - 1]
        L, n = a.count, a.spt
        if a.slips or out[i].spt != n or out[i].count == L or L > n:
            i += 1
            continue
        done = False
        tot = 0
        # (a first piece over-full, more blocks than sectors, or a sliver is a boundary placed late: the chain of
        # boundaries the count carried after it runs on to the short track that makes up for it, HP C2490A's
        # one-block sliver ... 71, 89 tracks on, which the assembly then joined to the track before, 73 blocks
        # on 72 sectors, and the spec laid every later block of the zone a sector on; else a few pieces only:
        # ST41601N's short last track of each cylinder and a later one made up whole tracks by chance, and 5% of
        # its blocks left their true track); past `longest` pieces the chain runs on over whole tracks only. So
        # does a first piece of a count the layout does not hold again and again: a boundary placed early
        # (a search's late probe, ST41601N at 20 us: 73 blocks of 78, the next seven tracks 78 each from there,
        # then the 5 that make up for it)
        odd = out[i].count not in common.get(n, ())
        reach = chain if out[i].count + len(out[i].slips) > n or 16 * out[i].count <= n or odd else longest
        for j in range(i, min(i + reach, len(out) - 1)):
            t = out[j]
            if t.spt != n:
                break
            tot += t.count
            b = out[j + 1]
            if tot % L == 0 and b.count == L and b.spt == n and not b.slips:
                k = tot // L
                first = out[i].first
                new = []
                for m in range(k):
                    F = first + m * L
                    inside = [t2 for t2 in out[i:j + 1] if F <= t2.first < F + L and t2.count >= 4]
                    src = max(inside, key=lambda t2: min(t2.first + t2.count, F + L) - t2.first) if inside else None
                    if src is None:
                        src = max(out[i:j + 1], key=lambda t2: min(t2.first + t2.count, F + L) - max(t2.first, F))
                    new.append(Track(F, L, n, src.level, [], exact=src.exact))
                out[i:j + 1] = new
                i += k
                done = True
                break
            if tot > reach * L or j - i + 1 >= longest and t.count != L:
                break
        if not done:
            i += 1
    return out


def _assemble(tracks: list, stats: dict, surfaces: Optional[int] = None) -> Geometry:
    """Cylinders and zones. Each zone's head-switch skew is its most common
    skew and its cylinder skew the next; the surfaces are the tracks between
    cylinder skews. Each track's cylinder and head are the assignment that
    explains the skews at the least cost (`_place`): one switch, or more where
    whole tracks were skipped (slipped tracks, or tracks left empty before the
    first block); a cylinder's first track whose skew no switch explains
    starts a new zone (spare space at a zone's end, then the next zone's own
    offset). Cylinders holding no block between zones are not seen here
    (`mechanics.zone_gaps` counts them by seeks). `surfaces`: the surfaces
    when known already (else the commonest gap between cylinder skews)."""
    exact = bool(stats.get("exact_mode", True))
    if not exact:
        tracks = _zone_changes_by_counts(tracks)
    tracks = _join_slivers(tracks)
    sk = _skews_of(tracks)
    by_spt: dict = {}
    for i, v in enumerate(sk):
        if v is not None:
            by_spt.setdefault(tracks[i].spt, []).append(v)
    head_skew, cyl_skew = {}, {}
    for n, v in by_spt.items():
        vals, cnt = np.unique(v, return_counts=True)
        order = np.argsort(-cnt)
        head_skew[n] = int(vals[order[0]])
        cyl_skew[n] = int(vals[order[1]]) if len(order) > 1 and cnt[order[1]] >= max(2, 0.02 * len(v)) else None
    _short_tracks_back(tracks, head_skew, cyl_skew, 0.5 if exact else 2.5)
    tracks = _mend_overfull(tracks, head_skew)
    if not exact:
        # (again: an over-full track cut into tracks of the zone before can end in one of the next zone's)
        tracks = _regroup_pieces(_zone_changes_by_counts(tracks))
    sk = _skews_of(tracks)
    # zones of one sectors-per-track may differ in skews: the two commonest skews of each stretch of
    # CHUNK boundaries (a boundary is judged by its own stretch's pair, or a neighbour's)
    # (with noise, per sectors-per-track: a stretch across a change of zone holds both zones' skews, and a
    # new zone's first track has no skew of its own to choose its pair by)
    CHUNK = 240
    pairs = []
    for c0 in range(0, len(sk), CHUNK):
        by = {}
        for i in range(c0, min(c0 + CHUNK, len(sk))):
            if sk[i] is not None:
                by.setdefault(0, []).append(sk[i])
                if not exact:
                    by.setdefault(tracks[i].spt, []).append(sk[i])
        pc = {}
        for key, vv in by.items():
            if len(vv) < 12:
                continue
            vals, cnt = np.unique(vv, return_counts=True)
            order = np.argsort(-cnt)
            ts_ = int(vals[order[0]])
            # the cylinder skew: the commonest other value not next to the head-switch skew (a stretch that
            # spans a change of skew holds both 63 and 62, say: not a pair)
            rest = [int(vals[i]) for i in order[1:] if cnt[i] >= 2 and abs(int(vals[i]) - ts_) > 2]
            pc[key] = (ts_, rest[0] if rest else ts_)
        pairs.append(pc)

    def pairs_for(i):
        # its own sectors-per-track's pair first (with noise), then the whole stretch's (a zone too short
        # to have twelve skews of its own in a stretch)
        k = i // CHUNK
        out = []
        for key in ((tracks[i].spt, 0) if not exact else (0,)):
            for kk in (k, k - 1, k + 1):
                if 0 <= kk < len(pairs) and key in pairs[kk] and pairs[kk][key] not in out:
                    out.append(pairs[kk][key])
        return out
    # surfaces: tracks between cylinder skews (mode)
    gaps, last = [], None
    for i, v in enumerate(sk):
        n = tracks[i].spt
        if v is not None and cyl_skew.get(n) is not None and v == cyl_skew[n]:
            if last is not None:
                gaps.append(i - last)
            last = i
    S = surfaces or int(_mode(gaps, 1))
    # place every track: (cylinder, head), and the zones

    cands_of: dict = {}

    def cands(i):
        if i in cands_of:
            return cands_of[i]
        out = cands_of[i] = []
        for ts_, cs_ in pairs_for(i) + [(head_skew.get(tracks[i].spt), cyl_skew.get(tracks[i].spt))]:
            p_ = (ts_, ts_ if cs_ is None else cs_)
            if ts_ is not None and p_ not in out:
                out.append(p_)
        return out
    tracks, pos, zone_first, zone_pair, phantom_total, gap_possible = _place(tracks, sk, S, cands, exact)
    sk = _skews_of(tracks)   # tracks continued on one slot are joined
    zone_cyl = [pos[f][0] for f in zone_first]
    breaks = zone_first[1:]
    cyl = pos[-1][0]
    ncyl = cyl + 1
    for t, (c, h) in zip(tracks, pos):
        t.cyl, t.head = c, h
    if not exact:   # (without noise every boundary was probed: a count over its place's is the layout's, a slip's)
        _mend_early_boundaries(tracks)
    cyl_starts = _cylinder_starts(tracks, ncyl)
    zones = []
    for zi, f in enumerate(zone_first):
        end = zone_first[zi + 1] if zi + 1 < len(zone_first) else len(tracks)
        n = tracks[f].spt
        ts_, cs_ = zone_pair[zi] if zone_pair[zi] and zone_pair[zi][0] is not None else (head_skew.get(n), cyl_skew.get(n))
        zones.append({"first_cylinder": zone_cyl[zi], "last_cylinder": pos[end - 1][0], "spt": n, "first_track": f,
                      "track_skew": ts_, "cylinder_skew": cs_ if cs_ is not None else ts_,
                      "gap_possible": gap_possible[zi]})
    sizes = np.diff(cyl_starts + [len(tracks)])
    odd = int(np.sum(sizes != S))
    stats = dict(stats, odd_cylinders=odd, phantom_tracks=phantom_total, zone_breaks=len(breaks), skew_matches=float(np.mean([
        v in (head_skew.get(tracks[i].spt), cyl_skew.get(tracks[i].spt)) for i, v in enumerate(sk) if v is not None]) if len(sk) > 1 else 1.0))
    return Geometry(tracks, cyl_starts, S, zones, stats)


# Costs of the placement (in units of one unexplained skew): a skew no switch explains (a slip, a level a sector or
# two off, a new zone's own offset) 1; each track slot skipped without a block 1; a jump to the next cylinder's
# first head past empty slots (a zone's spare tracks, then the next zone) 2; a track continued on the slot of the
# one before it (a stretch that cut one track in two) 1. A phase of the cylinder switches that holds over the zone
# costs nothing per cylinder; a wrong one costs at least 1 per cylinder, so one slip or odd skew never turns it.
_UNEXPLAINED, _SKIP, _JUMP, _CONTINUED = 1.0, 1.0, 2.0, 1.0
_MAX_SLOTS = 3   # a step over at most two empty track slots


def _place(tracks: list, sk: list, S: int, cands, exact: bool, final_cost: Optional[list] = None) -> tuple:
    """(cylinder, head) of every track: the assignment that explains the skews at the least cost (Viterbi over the
    head of each track). A track's skew from the one before is one head switch (track skew), a cylinder switch
    (cylinder skew, after the last surface) or a sum of them over empty slots; the heads' phase is chosen over the
    whole run of one sectors-per-track, not carried switch by switch (a single unexplained skew once made the
    sequential count wrong for the rest of a zone: every later cylinder skew read as a cylinder switch plus four
    skipped tracks, Barracuda's model had 22% more cylinders than the truth). A change of sectors per track starts
    a new cylinder. Returns (tracks, pos, zone_first, zone_pair, skipped slots, whether empty cylinders may lie
    before each zone): tracks with those continued on the previous one's slot joined to it. `final_cost`, a list,
    receives the least cost of an assignment ending at each head of the last track."""
    tol = 0.5 if exact else 2.5
    hs = np.arange(S)
    kinds, prevs, wraps = [], [], []
    cost = None
    matched: dict = {}
    for i, t in enumerate(tracks):
        v = sk[i]
        if i == 0 or v is None:
            # a new run: any first head (the first zone's first block may lie past empty tracks); 0 on a tie
            # (the run before ends at its cheapest head)
            prevs.append(np.full(S, int(np.argmin(cost)) if cost is not None else 0))
            cost = 1e-3 * hs
            kinds.append(np.full(S, -1))
            wraps.append(np.zeros(S, dtype=np.int64))
            continue
        n = t.spt
        new = np.full(S, np.inf)
        kind = np.full(S, 1)
        prev = np.zeros(S, dtype=np.int64)
        wr = np.zeros(S, dtype=np.int64)

        def offer(c, h2, k, w, src):
            better = c < new[h2]
            h2b = h2[better]
            new[h2b] = c[better]
            kind[h2b] = k
            prev[h2b] = src[better]
            wr[h2b] = w[better] if np.ndim(w) else w
        key = (v, n, tuple(cands(i)))
        if key not in matched:
            # the steps of 1 to _MAX_SLOTS slots, from each head, that the skew fits (the same for most tracks)
            matched[key] = []
            for ts, cs in key[2]:
                for m in range(1, _MAX_SLOTS + 1):
                    w = (hs + m) // S
                    ok = np.abs(_fold(v - (m - w) * ts - w * cs, n)) <= tol
                    if ok.any():
                        matched[key].append((hs[ok], (hs[ok] + m) % S, w[ok], (m - 1) * _SKIP))
        for src, dst, w, extra in matched[key]:
            offer(cost[src] + extra, dst, 0, w, src)
        offer(cost + _UNEXPLAINED, (hs + 1) % S, 1, (hs + 1) // S, hs)
        j = int(np.argmin(cost))
        offer(np.array([cost[j] + _JUMP]), np.array([0]), 2, np.array([1]), np.array([j]))
        a = tracks[i - 1]
        both = a.count + len(a.slips) + t.count + len(t.slips)
        # (or a sector or two more where its first block lies right after the last of the one before: a noisy
        # walk's sectors per track one short, Cheetah 9LP's 245-block tracks read as 244 and a one-block sliver)
        if a.spt == n and (both <= n or both <= n + 2 and abs(_fold1(v - a.count - len(a.slips), n)) <= tol):
            offer(cost + _CONTINUED, hs, 3, np.zeros(S, dtype=np.int64), hs)
        cost = new
        kinds.append(kind)
        prevs.append(prev)
        wraps.append(wr)
    if final_cost is not None and cost is not None:
        final_cost.extend(float(c) for c in cost)
    # back from the cheapest last head
    N = len(tracks)
    head = [0] * N
    kd, wv = [0] * N, [0] * N
    h = int(np.argmin(cost))
    for i in range(N - 1, -1, -1):
        head[i] = h
        kd[i], wv[i] = int(kinds[i][h]), int(wraps[i][h])
        h = int(prevs[i][h])
    # cylinders; zones break at a new run, a jump, and a cylinder's first track whose skew no switch of the
    # zone's pairs explains (a new zone's own offset) or only another pair explains. A skew nothing explains
    # inside a cylinder (the angle turned there: a slip, DiskSim's skews after a slipped track) starts a new zone
    # at that cylinder, so that the spec's one angle per zone is wrong for a few tracks only (kept in one zone,
    # HP C2247A's model with 20 us of jitter had 63% of its blocks within a sector, against 93%). Not where one
    # track's level alone is off. A zone's pair: the one that explains all its switches (a head switch alone
    # fits every pair with that track skew: the cylinder switches choose among them).
    out, pos, orig, zone_first, zone_orig, zone_pairs, gap_possible = [], [], [], [], [], [], []
    cyl, skipped, zp = -1, 0, None

    def sig(t):
        return (t.level + t.first) % t.spt

    def steps_skew(h0, h1, p):
        # the skew of the switches from head h0 to head h1 (one to S slots on)
        m = (h1 - h0) % S or S
        w = (h0 + m) // S
        return (m - w) * p[0] + w * p[1]

    def fits(i, p):
        # does pair p explain the step into track i (from head[i - 1] to head[i])?
        return abs(_fold1(sig(tracks[i]) - sig(tracks[i - 1]) - steps_skew(head[i - 1], head[i], p), tracks[i].spt)) <= tol

    def level_off(i):
        # one track's own level off (noise, a slip at its start), not a turn of the angle: the track after it
        # lies where the zone's switches put it from the one before it (this track off), or this one from the
        # track two before (the one before off)
        p = zp[0] if zp else (cands(i)[:1] or [None])[0]
        if p is None:
            return False
        n = tracks[i].spt
        return any(0 <= x and y < N and kd[y] in (0, 1) and kd[x + 1] in (0, 1) and tracks[x].spt == tracks[y].spt == n
                   and abs(_fold1(sig(tracks[y]) - sig(tracks[x]) - steps_skew(head[x], head[x + 1], p)
                                  - steps_skew(head[x + 1], head[y], p), n)) <= tol
                   for x, y in ((i - 1, i + 1), (i - 2, i)))

    def far(i):
        # a skew far from the zone's switches (a new zone's own offset, a turn of the angle, not a level a few
        # sectors off); no pair to judge by (a zone just begun): not far
        p = zp[0] if zp else (cands(i)[:1] or [None])[0]
        return p is not None and abs(_fold1(sig(tracks[i]) - sig(tracks[i - 1]) - steps_skew(head[i - 1], head[i], p),
                                            tracks[i].spt)) > 3 * tol

    def start_zone(at, i, possible):
        zone_first.append(at)
        zone_orig.append(i)
        zone_pairs.append(None)
        gap_possible.append(possible)
    for i, t in enumerate(tracks):
        k = kd[i]
        if k == 3:   # the rest of the track before
            a = out[-1]
            out[-1] = Track(a.first, a.count + t.count, a.spt, a.level, a.slips + [a.count + x for x in t.slips],
                            exact=a.exact)
            if getattr(a, "predicted", False):
                out[-1].predicted = True
            continue
        cyl += 1 if k == -1 else wv[i]
        ok = [p for p in cands(i) if fits(i, p)] if k == 0 else []
        if k == 0:
            skipped += ((head[i] - head[i - 1]) % S or S) - 1
        keep = [p for p in ok if p in zp] if zp else ok
        if k in (-1, 2) or head[i] == 0 and (k == 1 and not level_off(i) or k == 0 and zp and not keep):
            start_zone(len(out), i, k in (-1, 2) or k == 1 and far(i))
            zp = zone_pairs[-1] = ok or None
        elif k == 1 and (exact or far(i)) and not level_off(i):
            # the angle turned inside this cylinder: a new zone from its first track (with noise only by more
            # than noise turns it: desk250 with 20 us of jitter once had 51,163 zones, and a cylinder more for
            # each that held an over-full track)
            f = len(out)
            while f > 0 and pos[f - 1][0] == cyl:
                f -= 1
            if f > zone_first[-1]:
                start_zone(f, orig[f], False)
                zp = None
        elif k == 0 and keep:
            zp = zone_pairs[-1] = keep
        out.append(t)
        pos.append((cyl, head[i]))
        orig.append(i)
    # no switch of its own matched: its first track's candidates
    zone_pair = [(zp_ or cands(i)[:1] or [None])[0] for zp_, i in zip(zone_pairs, zone_orig)]
    if not exact:
        zone_first, zone_pair, gap_possible = _own_skews(out, pos, S, zone_first, zone_pair, gap_possible)
    return out, pos, zone_first, zone_pair, skipped, gap_possible


def _own_skews(out: list, pos: list, S: int, zone_first: list, zone_pair: list, gap_possible: list) -> tuple:
    """With timing noise, each zone's skews are the commonest of its own switches (a track one slot after the
    one before: a head switch on one cylinder, a cylinder switch from the last head to the first), and a zone
    whose cylinder switches change their skew for good (the same new value at three or more in a row, up to its
    end or the next change) is split at the first of them. A switch fits a pair within 2.5 sectors, so (51, 87)
    and (51, 88) both fit every switch of IBM 18ES's zone from cylinder 3,598 (88 to 3,853, then 87), and the
    spec took the first candidate: its angle drifted a sector a cylinder, and a quarter of the zone's blocks
    lay 5 sectors off. The tracks the walk measured hold their skews exactly but for one in a hundred, and the
    predicted ones exactly. Returns (zone_first, zone_pair, gap_possible)."""
    zf, zpair, gp = [], [], []
    for zi, f in enumerate(zone_first):
        e = zone_first[zi + 1] if zi + 1 < len(zone_first) else len(out)
        heads, cyls = [], []
        for j in range(f + 1, e):
            a, b = out[j - 1], out[j]
            if a.spt != b.spt:
                continue
            (c0, h0), (c1, h1) = pos[j - 1], pos[j]
            v = int(round((b.level + b.first) % b.spt - (a.level + a.first) % a.spt)) % b.spt
            if c1 == c0 and h1 == h0 + 1:
                heads.append(v)
            elif c1 == c0 + 1 and h1 == 0 and h0 == S - 1:
                cyls.append((j, v))
        # a change of the cylinder skew for good: three or more in a row of a value, after three or more of another
        cuts = []
        vals = [v for _, v in cyls]
        k = 0
        while k < len(vals):
            m = k
            while m < len(vals) and vals[m] == vals[k]:
                m += 1
            if m - k >= 3 and cuts and vals[k] != cuts[-1][1] or m - k >= 3 and not cuts:
                cuts.append((k, vals[k]))
            k = m
        starts = [f] + [cyls[k][0] for k, _ in cuts[1:]]
        for si, st in enumerate(starts):
            en = starts[si + 1] if si + 1 < len(starts) else e
            p = zone_pair[zi]
            ts = int(_mode(heads)) if len(heads) >= 3 else (p[0] if p else None)
            own = [v for j, v in cyls if st <= j < en]
            cs = int(_mode(own)) if len(own) >= 2 else (p[1] if p else None)
            zf.append(st)
            zpair.append((ts, cs) if ts is not None else p)
            gp.append(gap_possible[zi] if si == 0 else True)   # (empty cylinders may lie at the change: seeks tell)
    return zf, zpair, gp

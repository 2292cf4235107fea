"""Timing primitives on a `Device`: hit time, the rotation period, the phase of a completion.

Everything here is measured; nothing is assumed about the drive but that it
spins at a constant rate and that a read which misses its cache completes a
fixed time after its last sector passes under the head.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .device import Device, DeviceError


NOISELESS_NS = 100.0   # a hit's spread under this: no timing noise (a simulated drive); same-track pairs are exact
NOISY_NS = 1000.0      # a hit spread from here on is a host's timing noise (see Clock.noisy)


@dataclass
class Clock:
    """What the timing tests learned first: hit response, noise, rotation."""
    hit_ns: float = 0.0           # response of a 1-block read hit (median)
    hit_spread_ns: float = 0.0    # its spread (p90 - p10): the host's timing noise
    noise_median_ns: float = 0.0  # its median less its least: how late a completion is typically learned
    period_ns: float = 0.0        # rotation period
    period_confidence: float = 0.0
    anchors: int = 0
    notes: list = field(default_factory=list)
    anchor_blocks: list = field(default_factory=list)
    anchor_times: list = field(default_factory=list)

    def phase(self, t_ns: float) -> float:
        """Rotational phase of a time, revolutions in [0, 1)."""
        return (t_ns / self.period_ns) % 1.0

    @property
    def noise_ns(self) -> float:
        return max(self.hit_spread_ns, 0.0)

    @property
    def noiseless(self) -> bool:
        """No timing noise at all (a simulated drive's exact times; see NOISELESS_NS)."""
        return self.noise_ns < NOISELESS_NS

    @property
    def hit_bound_ns(self) -> float:
        """A response at most this long was served from the buffer: a hit, and the host's noise over
        it (at least a microsecond)."""
        return self.hit_ns + max(self.noise_ns, 1000.0)

    @property
    def noisy(self) -> bool:
        """Timing noise of a microsecond or more (a host's, as against a simulated drive's
        none): the tests that vote or take the least of repeats take more of them."""
        return self.noise_ns >= NOISY_NS


def hit_time(dev: Device, rng: random.Random, n: int = 24, keep: Optional[Clock] = None) -> tuple[float, float]:
    """Read a block, then the same block again at once (a cache hit on any drive
    with a read cache): the median and p10-p90 spread of the second response.
    With `keep`, its `noise_median_ns`: the median less the least (a hit takes
    a fixed time, and the host learns of it late by its noise, never early)."""
    out = []
    for _ in range(n):
        x = rng.randrange(dev.blocks)
        t = dev.read(x)
        out.append(dev.read(x) - t)
    a = np.array(out, dtype=float)
    if keep is not None:
        keep.noise_median_ns = float(np.median(a) - a.min())
    return float(np.median(a)), float(np.percentile(a, 90) - np.percentile(a, 10))


def _coherence(deltas: list[np.ndarray], periods: np.ndarray) -> np.ndarray:
    """For each candidate period, mean over anchors of |mean exp(2 pi i dt / P)|."""
    score = np.zeros(len(periods))
    for d in deltas:
        ph = np.exp(2j * np.pi * np.outer(1.0 / periods, d))
        score += np.abs(ph.mean(axis=1))
    return score / len(deltas)


def _fit_period(deltas: list, p: float, k: Optional[int] = None, tol: float = 0.3) -> float:
    """Least squares of completion time on revolution count with an intercept per
    anchor (its first completion's own noise), reads off by more than `tol` turns
    (disturbed) left out; then again without the worst 5% of residuals."""
    use = [d[:k] if k else d for d in deltas]
    for it in range(3):
        num = den = 0.0
        res = []
        for d in use:
            m = np.round(d / p)
            ok = np.abs(d / p - m) < tol
            if ok.sum() < 2:
                continue
            mm, dd = m[ok], d[ok]
            if it == 2 and cut is not None:
                r = dd - mm * p
                r = r - np.median(r)
                keep = np.abs(r) <= cut
                mm, dd = mm[keep], dd[keep]
                if len(mm) < 2:
                    continue
            mc, dc = mm - mm.mean(), dd - dd.mean()
            num += float((mc * dc).sum())
            den += float((mc * mc).sum())
            r = dd - mm * p
            res.extend((r - np.median(r)).tolist())
        if den > 0:
            p = num / den
        cut = float(np.quantile(np.abs(res), 0.95)) if res else None
    return p


def _revisits(dev: Device, rng: random.Random, anchors: int, rounds: int, drop_hits: bool,
              progress: Optional[Callable]) -> Optional[tuple[list, list]]:
    """`anchors` far-apart blocks read in turn `rounds` times, each round in a
    new random order: (blocks, completion times of each). A revisit that
    answered faster than nine in ten first reads (each a seek to a far block;
    not the fastest, which timing noise can shorten) was a cache hit, which
    says nothing of the platter: None if most of the first revisits were,
    and with `drop_hits` such times are left out."""
    step = dev.blocks // anchors
    blocks = [i * step + rng.randrange(max(step // 2, 1)) for i in range(anchors)]
    times = [[] for _ in blocks]
    last = dev.now_ns()
    first_reads, hit_below = [], 0.0
    for r in range(rounds):
        order = list(range(anchors))
        rng.shuffle(order)
        quick = 0
        for i in order:
            t = dev.read(blocks[i])
            if r == 0:
                first_reads.append(t - last)
            hit = r > 0 and t - last < hit_below
            quick += hit
            if not (hit and drop_hits):
                times[i].append(t)
            last = t
        if r == 0:
            hit_below = float(np.percentile(first_reads, 10))
        if r == 1 and quick > anchors // 2:
            return None
        if progress:
            progress(r + 1, rounds)
    return blocks, times


def _fit_gaps(gaps: np.ndarray, p: float, tol: float = 0.3) -> float:
    """Least squares of `gaps` (each a whole number of turns) on their turn
    counts, those off by more than `tol` turns or under one turn left out."""
    for _ in range(2):
        m = np.round(gaps / p)
        ok = (np.abs(gaps / p - m) < tol) & (m > 0)
        if ok.any():
            p = float((m[ok] * gaps[ok]).sum() / (m[ok] ** 2).sum())
    return p


def _period_from_first_revisits(deltas: list, p: float) -> float:
    """Refine `p` on the differences between anchors' first revisits (each a
    whole number of turns too), nearest in time first and then twice as far
    apart at each step, so each step's turn counts are unambiguous from the
    last: the long revisits of many anchors then fit without a periodogram
    over their whole span."""
    firsts = np.sort([float(d[1]) for d in deltas])
    lag = 1
    while lag < len(firsts):
        p = _fit_gaps(firsts[lag:] - firsts[:-lag], p)
        lag *= 2
    return p


def rotation_period(dev: Device, rng: random.Random, anchors: int = 48, rounds: int = 8,
                    min_ms: float = 1.5, max_ms: float = 25.0, progress: Optional[Callable] = None,
                    keep: Optional[Clock] = None, max_anchors: int = 16384) -> tuple[float, float, int]:
    """The rotation period from revisits of `anchors` far-apart blocks, read in
    turn `rounds` times (more anchors than the cache has segments, so each read
    misses): every read of one block completes a whole number of revolutions
    after its first. The period is the longest one under which every anchor's
    completions agree in phase (a periodogram; shorter submultiples agree too),
    refined by least squares on the revolution counts. Where most first
    revisits answer faster than nine in ten first reads (a cache of more
    segments than anchors, as a 2,048-segment drive's, serves them), the test starts
    again with twice the anchors and half the rounds (at least 4: each round
    spans longer), up to `max_anchors`. Returns (period ns, confidence = the
    coherence at it, revolutions spanned)."""
    first_try = anchors
    while (got := _revisits(dev, rng, anchors, rounds, anchors > first_try, progress)) is None:
        if 2 * anchors > max_anchors:
            raise DeviceError(f"the cache still holds {anchors} far-apart blocks read in turn: no revisit reaches the platter")
        anchors, rounds = 2 * anchors, max(4, rounds // 2)
    blocks, times = got
    retried = anchors > first_try
    # (An anchor read back too soon, still in a segment, keeps only its misses; one with no revisit left is out.)
    deltas = [np.array(t, dtype=float) - t[0] for t in times if len(t) >= 2]
    # coarse: first revisit only (span ~ a few hundred revolutions), grid fine enough for it; after a retry the
    # revisits span too many turns for that grid, so the periodogram is over the gaps between first revisits
    # (each a few turns) and the period is then carried up to the revisits' span (`_period_from_first_revisits`)
    lo, hi = min_ms * 1e6, max_ms * 1e6
    if not retried:
        first = [d[:2] for d in deltas]
        span = max(float(d[1]) for d in first)
        coherence = lambda periods: _coherence(first, periods)  # noqa: E731
    else:
        # the gaps of up to 8 of the slowest turns, at most 512 of them (a pair's coherence is |cos(pi gap / P)|)
        gaps = np.diff(np.sort([float(d[1]) for d in deltas]))
        gaps = gaps[(gaps > 0) & (gaps <= 8 * hi)]
        gaps = gaps[::max(1, len(gaps) // 512)]
        if len(gaps) == 0:
            raise DeviceError("no rotation period found (the anchors' revisits came back all at once)")
        span = float(gaps.max())
        coherence = lambda periods: np.abs(np.cos(np.pi * np.outer(1.0 / periods, gaps))).mean(axis=1)  # noqa: E731
    dp = 0.02 * lo * lo / span
    grid = np.arange(lo, hi, dp)
    sc = np.concatenate([coherence(grid[i:i + 4000]) for i in range(0, len(grid), 4000)])
    good = grid[sc >= 0.9 * sc.max()]
    if retried:
        # gaps of a turn or two stay coherent over a wide band around each peak: only the peaks are candidates
        peak = (sc >= 0.9 * sc.max()) & (sc >= np.roll(sc, 1)) & (sc >= np.roll(sc, -1))
        good = grid[peak]
    # the longest coherent period (shorter submultiples are coherent too); refine with all revisits
    best = None
    for cand in sorted(good, reverse=True)[:50]:
        p = _period_from_first_revisits(deltas, float(cand)) if retried else float(cand)
        for k in range(2, rounds + 1):  # one more revisit at a time: the revolution counts stay unambiguous
            p = _fit_period(deltas, p, k, 0.02 if k == rounds else 0.3)
        c = float(_coherence(deltas, np.array([p]))[0])
        if best is None or c > best[1] + 0.05 or (abs(c - best[1]) <= 0.05 and p > best[0] * 1.5):
            best = (p, c)
        if c > 0.97:
            break
    if best is None:
        raise DeviceError("no rotation period found (the device's timing shows no revolution)")
    revs = int(max(float(d[-1]) for d in deltas) / best[0])
    if keep is not None:
        keep.anchor_blocks, keep.anchor_times = blocks, times
    return best[0], best[1], revs


def refine_period(dev: Device, clock: Clock) -> int:
    """Read the anchors once more (long after they were first read) and refit
    the period over the whole span: its error shrinks with the span. Returns
    the revolutions spanned."""
    for b, ts in zip(clock.anchor_blocks, clock.anchor_times):
        ts.append(dev.read(b))
    p = clock.period_ns
    deltas = [np.array(t, dtype=float) - t[0] for t in clock.anchor_times if len(t) >= 2]
    p = _fit_period(deltas, p, None, 0.1)
    clock.period_ns = p
    return int(max(float(d[-1]) for d in deltas) / p)

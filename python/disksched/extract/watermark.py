"""The read water mark: how much of a read miss is buffered before its data
starts out on the bus (DiskSim's `High (read) water mark`, by request size).

A read of n blocks from a track's first block, after the same far read and
the same pause, positions and rotates exactly as every other size does; only
its data phase differs. Its response over the 1-block read's is

    D(n) = max(n s + b, m(n) s + K + n b) - (s + K + b)

where s is a sector's time on that track, b the bus time of a block (the
read-hit line's slope), m(n) = floor(w n) (at least 1) the blocks buffered
before the drive reconnects, and K what the reconnection costs (reselect
and data preparation). The first term is the head setting the pace (each
block sent as it is read), the second the mark: a drive that waits for
three quarters of an 8-block read before it sends anything answers
(6 - 1) s later than one that sends from the first block. w and K are
fitted to D(n) over sizes up to a track; where the head sets the pace at
every size the mark does not show in the timing, and the smallest w that
fits (0) is as good as any.

Under host timing noise the far read's completion is learned late by a
random amount, and the read of x sent at once meets its sector after a
rotational wait shorter by that much: the least of the repeats took the
latest-learned far read, not the least noise, and the sizes' differences
scattered by the noise's tail (lumb2002's Atlas 10K at 20 us: 149 us for 2
blocks in one run, 13 in another; a fit to the mark of 1.0, truth 0.0, and
the host's belief then predicted 64.6% of its reads within 50 us). There
the read of x is sent once the read-ahead after the far read is over (four
turns) and at the same rotational phase every time, so x's wait is the same
for every size and repeat and the noise only adds to a response; and a
mark fits only where it explains the sizes better than the smallest by more
than a response's typical noise (there 0.71 and 0 came within 1.5 us a size).
"""

from __future__ import annotations

from collections import Counter
import math
import random

import numpy as np

from .cache import _fresh
from .device import Device

SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
MARKS = np.round(np.arange(0, 101) / 100, 2)  # fractions of the request
RESELECT_NS = np.arange(0, 3_000_001, 2_000)  # the reconnection cost K searched, ns


def model_extra_ns(sizes, w: float, k_ns, s_ns: float, b_ns: float):
    """D(n) of the module doc for each size (rows) and each K (columns)."""
    n = np.asarray(sizes, dtype=float)[:, None]
    m = np.clip(np.floor(w * n + 1e-9), 1, n)
    k = np.asarray(k_ns, dtype=float)[None, :]
    return np.maximum(n * s_ns + b_ns, m * s_ns + k + n * b_ns) - (s_ns + k + b_ns)


def fit(sizes, extra_ns, s_ns: float, b_ns: float, tol_ns: float = 0.0) -> dict:
    """The (w, K) whose D(n) is nearest the measured `extra_ns` (sum of absolute
    errors; on a tie the smallest w, then the smallest K). `tol_ns`: the noise
    a size's figure may carry: the smallest w whose mean error is within it of
    the least is taken (a mark that the timing does not show is 0)."""
    obs = np.asarray(extra_ns, dtype=float)[:, None]
    fits = []
    for w in MARKS:
        err = np.abs(model_extra_ns(sizes, w, RESELECT_NS, s_ns, b_ns) - obs).sum(axis=0)
        j = int(np.argmin(err))
        fits.append((float(err[j]), float(w), float(RESELECT_NS[j])))
    least = min(f[0] for f in fits)
    best = next(f for f in fits if f[0] <= least + 1e-6 + tol_ns * len(sizes))
    # K shows where the mark lets the head pace the last blocks of a read: its data then waits for the head,
    # not the reconnection, and a 1-block read (whose reconnection follows its sector) pays K more than the
    # longer reads do; elsewhere (a bus slower than the media, or the mark setting the pace at every size: HP
    # C2247A) every size pays it alike and any K fits. Shown: K = 0 explains the sizes worse than the fitted K
    # by more than a size's noise (at least a microsecond a size). Where only a least K shows (past it every size
    # waits for its mark), the fit's tie goes to the smallest, which times every size as any larger one would.
    err0 = float(np.abs(model_extra_ns(sizes, best[1], [0.0], s_ns, b_ns) - obs).sum())
    shows = err0 > best[0] + max(tol_ns, 1000.0) * len(sizes)
    return {"read_water_mark": best[1], "reselect_ns": best[2], "mean_error_ns": best[0] / len(sizes),
            "reselect_shows": bool(shows and best[2] > 0)}


def read_water_mark(dev: Device, rng: random.Random, tracks: list, period_ns: float, bus_ns: float,
                    segments: int, repeats: int = 3, lock_phase: bool = False, tol_ns: float = 0.0) -> dict:
    """{"read_water_mark", "reselect_ns", "mean_error_ns", "confidence", "sizes", "extra_ns"} or, where it cannot
    be measured, {"read_water_mark": 0.0, "confidence": 0.0, "why": ...}."""
    if segments > 32:
        return {"read_water_mark": 0.0, "confidence": 0.0,
                "why": f"{segments} cache segments: a read cannot be made to miss again at the same place"}
    # A track whose LBN count is not its zone's commonest is one whose boundary the walk may have misplaced (under
    # noise, DEC RZ26's 57-block tracks: one of 58 that began a block early, on the track before's last block, the
    # only "full" track; read from there, every size but 1 crossed a head switch and the skew, and the mark came out
    # 1.0, truth 0): the candidates are tracks of the commonest count for their sectors per track, the one nearest
    # the middle first.
    common: dict = {}
    for (spt, count), _ in Counter((u.spt, u.count) for u in tracks).most_common():   # (ties in the tracks' order)
        common.setdefault(spt, count)
    long = [t for t in tracks if t.count >= SIZES[-1] + 1 and t.count == t.spt and t.count == common[t.spt]]
    if not long:
        long = [t for t in tracks if t.count >= 4]
    if not long:
        return {"read_water_mark": 0.0, "confidence": 0.0, "why": "no track of 4 blocks"}
    typical = [i for i, u in enumerate(long) if u.count == common[u.spt]] or list(range(len(long)))
    order = sorted(typical, key=lambda i: (abs(i - len(long) // 2), i))
    f = _measure(dev, rng, long[order[0]], period_ns, bus_ns, segments, repeats, lock_phase, tol_ns)
    if f["confidence"] < 0.5 and len(order) > 1:
        # The sizes' data phases fit no mark (a mean error over half a sector): the track is not what the layout
        # says, or a read met something else (a repeat on another track; the better explained of the two is kept).
        g = _measure(dev, rng, long[order[len(order) // 2]], period_ns, bus_ns, segments, repeats, lock_phase, tol_ns)
        g["repeated_after"] = f["track_first"]
        f = min((f, g), key=lambda h: h["mean_error_ns"])
    return f


def _measure(dev: Device, rng: random.Random, t, period_ns: float, bus_ns: float, segments: int, repeats: int,
             lock_phase: bool, tol_ns: float) -> dict:
    """The sizes' data phases read from track `t`'s first block, and their fit."""
    sizes = [n for n in SIZES if n <= t.count]
    x = t.first
    far = (x + dev.blocks // 2) % (dev.blocks - 1)

    def response(n: int) -> int:
        # Each read a miss from the same state: the segments flushed, then the same far read, then x at once.
        best = None
        for _ in range(repeats):
            for _ in range(segments + 2):
                dev.read(_fresh(dev, rng))
            dev.read(far)
            if lock_phase:
                # (the module doc: after the read-ahead, at phase 0 of the rotation)
                dev.idle(int(4 * period_ns))
                dev.idle_until(int(math.ceil(dev.now_ns() / period_ns) * period_ns))
            t0 = dev.now_ns()
            r = dev.read(x, n) - t0
            best = r if best is None else min(best, r)  # the host's delays only add
        return best

    times = [response(n) for n in sizes]
    extra = [tn - times[0] for tn in times]
    s_ns = period_ns / t.spt
    f = fit(sizes, extra, s_ns, bus_ns, tol_ns)
    # confidence: how well the fitted model explains the sizes, against a sector's time
    f["confidence"] = round(max(0.0, 1.0 - f["mean_error_ns"] / s_ns), 3)
    f.update(sizes=sizes, extra_ns=extra, sector_ns=s_ns, track_first=x)
    return f

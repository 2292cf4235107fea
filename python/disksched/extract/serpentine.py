"""Following a banded serpentine from timing alone (maxtor300g's DiskSim 4 track table).

A banded serpentine lays its blocks a band at a time: `W` tracks on one surface,
cylinder after cylinder (one way), then the same cylinders on the next surface
(back the other way), ..., `S` surfaces, then the next `W` cylinders; each
surface has its own sectors per track. Within a band the layout is as regular
as a zone of one surface: every track holds `spt` slots, and the next track's
first slot lies one skew further round. So each band is measured on its own,
by single-block probes (each a miss: its completion phase, `Clock.phase`, times
the sectors per track, less its LBN, is its track's *level*; a block of the
next track shows a level one skew on):

- its sectors per track, from two probes on its first track (the phase step
  between them is their LBN distance over the sectors per track);
- its skew and its tracks: the predicted first blocks of tracks 1, 2, 4, 8, ...
  (each must show the level the skew so far predicts, unwrapped a step at a
  time) up to the band's end (the first that does not: the band's width,
  bisected while it is not yet known, then predicted);
- its slips: the band's end (the first block of the next band) is found by
  reading down from where it would lie without slips; the slips in between are
  put on their tracks by bisection (block `first(j) - m` lies on track `j` only
  if `m` slips precede it) and in the track by bisection on the level (a block
  after a slip lies a sector further on).

The bands' surfaces and cylinders are not seen by the angle: the surfaces are
the period of the bands' sectors per track (a serpentine of `S` surfaces visits
them in one order and back: the sequence is a palindrome of period `2 S`), and
the cylinders follow (band `b` of a group of `S` on the group's `W` cylinders,
down and up in turn). `to_g4` writes the `[layout.g4]` table: one run of tracks
per band (its offset and skew in micro-revolutions, as DiskSim 4's), a track
pattern per sectors per track, and the slips.

Only without timing noise so far (a simulated drive's exact completions): with
noise each level is a few sectors late, and the walk says so (`NotSerpentine`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .device import Device, DeviceError
from .layout import Track
from .timing import Clock, refine_period

UREV = 1_000_000
#: slips a band may hold before its end is taken for something else (maxtor300g: 14,693 slips over about
#: 16,000 bands, at most a few in one)
MAX_BAND_SLIPS = 12
#: a level within this many sectors (beyond what the slips so far explain) of the prediction is on the track
LEVEL_TOL = 5.0
#: tracks the walk may guess (one track of the last band's sectors where nothing it follows fits), as a share of
#: the bands, before it gives up
MAX_GUESSED_SHARE = 0.10
#: ... or in a row (the walk has lost the layout: maxtor300g's odd track tables, 46 million blocks in)
MAX_GUESS_RUN = 8
#: far reads before the walk, at least (a cache of more segments than its test finds)
FLUSH_READS = 2048
#: ... and in the walk where probes answered from the cache hid what it needed (each about 16 device seconds)
MAX_FLUSHES = 4


class NotSerpentine(DeviceError):
    """The layout is not a banded serpentine this walk follows."""


def _on_track(offset: int, d: float, n: int, reach: float) -> bool:
    """Whether a block `offset` blocks after a track's first block, its level `d` sectors after that block's,
    lies on that track: its level a run of at most `reach` slips on, and its slot (offset plus those slips)
    still on the track. The next track's first blocks lie a skew plus this track's slips on, which the reach
    alone allows where the skew is small (maxtor300g's bands of three slips a track and a 9-sector skew)."""
    return -0.5 <= d <= reach + 0.5 and offset + d <= n - 0.5


def _track_end(lo: int, hi: int, on: Callable[[int], Optional[bool]]) -> Optional[int]:
    """The first block past a track, by bisection: `on(lo)` holds, `on(hi)` does not; None when a probe says
    nothing (`on` None: answered from the cache)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = on(mid)
        if r is None:
            return None
        lo, hi = (mid, hi) if r else (lo, mid)
    return hi


def _fold(v: float, n: float) -> float:
    """v mod n, in (-n/2, n/2]."""
    return v - n * round(v / n)


def _fold_arr(v: np.ndarray, n: float) -> np.ndarray:
    """`_fold` of each."""
    return v - n * np.round(v / n)


@dataclass
class Band:
    first: int                 # first LBN
    spt: int
    tracks: int                # tracks in the band
    count: int                 # LBNs in the band
    v0: float                  # measured sector (+ the constant of the completion phase) of track 0's first slot
    skew: float                # sectors from one track's first slot to the next's
    slips: list = field(default_factory=list)     # slot offsets from the band's first slot, sorted
    first_lbns: list = field(default_factory=list)  # first LBN of each track
    v0_raw: Optional[float] = None                  # track 0's first block's level + its LBN, as read
    per_track: Optional[list] = None                # each track's own first-slot sector (walked track by track, or
                                                    # read after the walk: `_track_angles`), else None
    guessed: bool = False                           # one track the walk could not measure, of the last band's
                                                    # sectors: its end is where the next band is found to begin

    def sector(self, j: int) -> float:
        """Track j's first-slot sector: its own, or on the band's line."""
        return self.per_track[j] if self.per_track is not None else self.v0 + j * self.skew


class _Prober:
    """Single-block reads, each a miss (a response within a hit's time is a cache hit: not a level)."""

    def __init__(self, dev: Device, clock: Clock):
        self.dev, self.clock = dev, clock
        self.seen: dict = {}
        self.probes = 0
        self.hits = 0
        self.refined_at = max(dev.now_ns(), 1)

    def phase(self, x: int) -> Optional[float]:
        if x in self.seen:
            return self.seen[x]
        t0 = self.dev.now_ns()
        t = self.dev.read(x)
        self.probes += 1
        if self.clock.hit_ns and t - t0 <= self.clock.hit_bound_ns:
            self.hits += 1
            self.seen[x] = None
            return None
        # the time, not the phase: the phase is taken under the period known at the end
        self.seen[x] = float(t)
        return float(t)

    def level(self, x: int, n: int) -> Optional[float]:
        t = self.phase(x)
        if t is None:
            return None
        return (self.clock.phase(t) * n - x) % n

    def level_here(self, x: int, n: int) -> Optional[float]:
        """`level` of x, or where x was answered from the cache (the block after one probed before) of the block
        after it: on x's track unless x ends it, so the same level."""
        lv = self.level(x, n)
        return lv if lv is not None else self.level(x + 1, n)

    def maybe_refine(self):
        if self.clock.anchor_blocks and self.dev.now_ns() > 2 * self.refined_at:
            refine_period(self.dev, self.clock)
            self.refined_at = self.dev.now_ns()


def _spt_of(p: _Prober, L: int, guess: Optional[int], lo_spt: int) -> Optional[int]:
    """Sectors per track of the track that begins at L: two blocks of it, the later read first (the
    read-ahead runs forward), their phase step is their distance (plus slips between) over it. (A block
    answered from the cache, the one after a block probed before: the block after it stands for it.)"""
    if p.phase(L) is None:
        L += 1
    if guess:
        d = guess // 2
        a, b = p.level_here(L + d, guess), p.level(L, guess)
        if a is not None and b is not None and abs(_fold(a - b, guess)) < 0.3:
            return guess
    found: list = []     # (two pairs must agree: one across a track's end can fit a wrong count by chance)
    for d in (max(lo_spt // 2, 2), max(lo_spt // 3, 2), max(lo_spt // 5, 2), max(lo_spt // 7, 2)):
        ta, tb = p.phase(L + d), p.phase(L)
        if ta is None:
            d += 1
            ta = p.phase(L + d)
        if ta is None or tb is None:
            continue
        dphi = (p.clock.phase(ta) - p.clock.phase(tb)) % 1.0
        if dphi <= 0:
            continue
        best = None
        for k in range(0, 13):          # slips between the two
            n = (d + k) / dphi
            e = abs(n - round(n))
            if best is None or e < best[0]:
                best = (e, int(round(n)))
        # (a phase off by 1e-7 turns, the period's error over the walk, puts n off by n^2 1e-7 / d)
        if best[0] < 3e-7 * best[1] ** 2 / d + 1e-4 and best[1] >= 2 * lo_spt:
            found.append(best[1])
            if found.count(best[1]) >= 2:
                return best[1]
    return None


def _place_slips(p: _Prober, f: int, count: int, k: int, n: int) -> list:
    """LBN offsets on the track that begins at f (`count` blocks) before which its k slips lie, in order
    (a run of slipped sectors: the same offset repeated), by bisection on the level (a block after m slips
    lies m sectors further on); [] when the first block is not read."""
    base = p.level_here(f, n)         # (no slip before the second block: the first is the track's own)
    if base is None:
        return []
    shift: dict = {0: 0.0}

    def at(o: int) -> Optional[float]:
        if o not in shift:
            lv = p.level(f + o, n)
            shift[o] = None if lv is None else _fold(lv - base, n)
        return shift[o]

    placed: list = []
    for m in range(1, k + 1):
        lo = placed[-1] if placed else 0
        if placed and (at(lo) or 0.0) >= m - 0.5:
            placed.append(lo)          # a run of slips before the same block
            continue
        last = at(count - 1)
        if last is not None and last < m - 0.5:
            return placed + [count] * (k - m + 1)     # the rest after the track's last block (unused slots)
        hi = count
        while hi - lo > 1:
            mid = (lo + hi) // 2
            v = at(mid)
            if v is None and mid + 1 < hi:
                mid += 1
                v = at(mid)
            if v is None:
                break
            if v >= m - 0.5:
                hi = mid
            else:
                lo = mid
        placed.append(hi)
    return placed


def _walk_band(p: _Prober, L: int, end: int, n_guess: Optional[int], W: Optional[int], skew_guess: Optional[float],
               lo_spt: int, short: bool = False) -> Band:
    """Measure the band that begins at L (a track's first block)."""
    n = _spt_of(p, L, n_guess, lo_spt)
    if n is None:
        raise NotSerpentine(f"no sectors per track at block {L:,}")
    lv0 = p.level_here(L, n)
    if lv0 is None:
        raise NotSerpentine(f"block {L:,} answered from the cache")
    v0 = (lv0 + L) % n

    def same_track(x: int, lv_ref: float) -> Optional[bool]:
        lv = p.level(x, n)
        if lv is None:
            lv = p.level(x - 1, n)      # (a hit: x - 1 was probed, and lies where x does unless x begins a track)
        if lv is None:
            return None
        return -0.5 <= _fold(lv - lv_ref, n) <= MAX_BAND_SLIPS + 0.5

    def track_end(f: int, lv_ref: float) -> int:
        """First block after the track that begins at f: read down from a whole track on."""
        for x in range(min(f + n, end) - 1, f, -1):
            if x < f + n - 2 * MAX_BAND_SLIPS:
                break
            if same_track(x, lv_ref):
                return x + 1
        raise NotSerpentine(f"the track at block {f:,} ends nowhere near {f + n:,}")

    # LBNs on a track: its sectors, or fewer (a track pattern of fewer slots than sectors: maxtor300g's
    # surface 6 at cylinders 608-639, 1,036 blocks on 1,040 sectors); a slip on the first track makes it
    # one short too, so the second track's count decides where they differ
    # (the sectors per track, unless `short`: the first two tracks' count, when they agree; slips on both
    # give that too, so the caller tries the sectors per track first)
    c = n
    if short:
        k0 = track_end(L, lv0) - L
        lv1 = p.level_here(L + k0, n)
        if lv1 is None or L + k0 + n >= end:
            raise NotSerpentine(f"no second track at block {L + k0:,}")
        k1 = track_end(L + k0, lv1) - (L + k0)
        if k0 != k1 or k0 >= n:
            raise NotSerpentine(f"tracks of {k0} and {k1} blocks at block {L:,}")
        c = k0

    def dev_at(x: int, j: int, b: float) -> Optional[float]:
        """How far block x's level lies from track j's predicted one (no slips), in sectors."""
        lv = p.level(x, n)
        if lv is None:
            return None
        v = (lv + L + j * c) % n
        return _fold(v - (v0 + j * b), n)

    def member(x: int, j: int, b: float, tol: float) -> Optional[bool]:
        d = dev_at(x, j, b)
        if d is None:
            return None
        return -tol <= d <= MAX_BAND_SLIPS + tol

    # the skew, unwrapped over tracks 1, 2, 4, ... (each predicted by the skew so far): ys[j] is track j's
    # measured first-slot sector less track 0's, unwrapped (slips before the track make it larger)
    ys = {0: 0.0}
    b = skew_guess
    strict_ok: set = set()

    def tol_at(j: int) -> float:
        return LEVEL_TOL + 0.15 * j

    def fit() -> float:
        js = np.array(sorted(ys), dtype=float)
        yv = np.array([ys[k] for k in sorted(ys)])
        return float(js @ yv / (js @ js))

    def test(j: int, strict: bool = False) -> bool:
        """Track j (its predicted first block) is in the band: record it. `strict`: and a block half a
        track on shows the same level (the next band's first track can lie where this band's next
        would: maxtor300g's first band switch is a head switch one track skew on, 4.8 sectors off it)."""
        nonlocal b
        x = L + j * c
        if strict and b is not None and x + n // 2 < end:
            la, lx = p.level(x + n // 2, n), p.level(x, n)
            if la is None or lx is None or abs(_fold(la - lx, n)) > 1.5:
                return False
        if b is None:
            lv = p.level_here(x, n)
            if lv is None:
                return False
            b = ((lv + L + j * c) % n - v0) % n / j
            ys[j] = b * j
            if strict:
                strict_ok.add(j)
            return True
        d = dev_at(x, j, b)
        for k in (1, 2):
            # (a hit: the block after one probed before, read with it; the next block of the track will do)
            if d is None:
                d = dev_at(x + k, j, b)
        if d is None or not (-tol_at(j) <= d <= MAX_BAND_SLIPS + tol_at(j)):
            return False
        ys[j] = j * b + d
        b = fit()
        if strict:
            strict_ok.add(j)
        return True

    j, last_in, first_out = 1, 0, None
    limit = W if W else 1 << 20
    while j < limit and L + j * c < end:
        if j == 1 and skew_guess is not None and not test(j, strict=W is None):
            b = None         # (the guess, another band's skew, does not hold here: measured)
        if j in ys or test(j, strict=W is None):
            last_in = j
        else:
            first_out = j
            break
        j *= 2
    if first_out is None and W and last_in < W - 1 and L + (W - 1) * c < end:
        # the band's last track (when the width is known), then its end is searched below
        if test(W - 1, strict=True):
            last_in = W - 1
            first_out = W
        else:
            first_out = W - 1
    if first_out is None:
        first_out = last_in + 1
        while L + first_out * n < end and first_out < limit:
            first_out += 1
    # bisect: the last track of the band; it must hold its level half a track on too (a band switch can
    # continue the skew: the next band's first track passes the one-probe test)
    while True:
        while first_out - last_in > 1:
            mid = (first_out + last_in) // 2
            if L + mid * c < end and test(mid, strict=True):
                last_in = mid
            else:
                first_out = mid
        if last_in == 0 or last_in in strict_ok or test(last_in, strict=True):
            break
        first_out, last_in = last_in, max([k for k in strict_ok if k < last_in], default=0)
    ntr = last_in + 1
    if b is None:
        b = 0.0          # a band of one track
    # the band's end: the first block of the next band, read down from where it lies without slips
    nominal = min(L + ntr * c, end)
    E = None
    tol_end = tol_at(ntr - 1)
    for k in range(1, MAX_BAND_SLIPS + 2):
        x = nominal - k
        if x < L + (ntr - 1) * c - MAX_BAND_SLIPS:
            break
        m = member(x, ntr - 1, b, tol_end)
        if m is None:
            continue
        if m:
            E = x + 1
            break
    if E is None:
        raise NotSerpentine(f"the band at block {L:,} ends nowhere near {nominal:,}")
    if nominal >= end:
        E = end
    elif ntr > 1 and E - 1 - n // 2 >= L + (ntr - 1) * c:
        # the end holds the last track's level half a track back too (more slips than MAX_BAND_SLIPS, one run
        # on every track, keep each track's first blocks on their tracks: the end read down from where it
        # would lie is then the next band's, and may show the last track's level by chance)
        la, lb = p.level(E - 1, n), p.level(E - 1 - n // 2, n)
        if la is not None and lb is not None and not (-0.5 <= _fold(la - lb, n) <= MAX_BAND_SLIPS + 0.5):
            raise NotSerpentine(f"the band at block {L:,} ends short of {E:,} by more slips than it holds")
    slips_total = L + ntr * c - E if E < end else 0
    # the tracks' first blocks: s(j) = slips before track j, nondecreasing; block first(j) - m is on track j
    # only if s(j) >= m
    s = [0] * ntr

    def on_track1(x: int, j: int) -> Optional[bool]:
        dj = dev_at(x, j, b)
        dp = dev_at(x, j - 1, b)
        if dj is None or dp is None:
            return None
        return bool(abs(dj - np.clip(dj, 0, slips_total)) <= abs(dp - np.clip(dp, 0, slips_total)))

    def on_track(x: int, j: int) -> bool:
        # on track j rather than j - 1: its level is track j's (within the slips). A hit (the block after
        # one probed before): the block before it on track j says yes, the block after it on track j - 1 no
        r = on_track1(x, j)
        if r is None:
            r = True if on_track1(x - 1, j) else (False if on_track1(x + 1, j) is False else None)
        return bool(r)

    for m in range(1, slips_total + 1):
        # the smallest track j with s(j) >= m (none: the slip is on the last track)
        lo, hi = 0, ntr        # s(lo) < m (track 0 has none before it); s(hi) >= m by convention
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if on_track(L + mid * c - m, mid):
                hi = mid
            else:
                lo = mid
        for j in range(hi, ntr):
            s[j] = max(s[j], m)
    first_lbns = [L + j * c - s[j] for j in range(ntr)]
    counts = [(first_lbns[j + 1] if j + 1 < ntr else E) - first_lbns[j] for j in range(ntr)]
    # refit the skew (and track 0's sector) with each probed track's slips taken off
    for k in [k for k in ys if k >= ntr]:
        del ys[k]
    js = np.array(sorted(ys), dtype=float)
    yv = np.array([ys[k] - s[k] for k in sorted(ys)])
    if len(js) >= 3:
        b, icpt = (float(v) for v in np.polyfit(js, yv, 1))
        v0 = (v0 + icpt) % n
    elif len(js) == 2:
        b = float(yv[1] / js[1])
    # each track's slips inside it: bisection on the level (a block after a slip lies a sector further on)
    slips = []
    for j in range(ntr):
        # (tracks of fewer blocks than sectors: where their unused slots lie too, runs of slips at one angle
        # on track after track as in maxtor300g's, or the track's last slots)
        k = (n if short else c) - counts[j] if j < ntr - 1 or E < end else 0
        if k <= 0:
            slips.extend(j * n + counts[j] + i for i in range(n - counts[j]) if j < ntr - 1 or E < end)
            continue
        f = first_lbns[j]
        placed = _place_slips(p, f, counts[j], k, n)
        # slot offsets: the k-th slip lies before LBN offset placed[k] (a slip at the end: unused last slots)
        for i, o in enumerate(placed):
            if o >= counts[j]:
                slips.append(j * n + counts[j] + i)
            else:
                slips.append(j * n + o + i)
        for i in range(len(placed), n - counts[j]):
            slips.append(j * n + counts[j] + i)
    return Band(L, n, ntr, E - L, v0, b, sorted(slips), first_lbns, (lv0 + L) % n)


def _walk_tracks(p: _Prober, L: int, end: int, n_guess: Optional[int], W: Optional[int], skew_guess: Optional[float],
                 lo_spt: int, reach: int = 64) -> Band:
    """A band track by track (where the band walk cannot predict it: runs of slips on track after track,
    maxtor300g's four-sector slips): each track's end read down from a whole track on, the next track's
    first block its level, and in the band while it shows the same sectors per track half a track on and
    lies one skew on (at most W tracks)."""
    n = _spt_of(p, L, n_guess, lo_spt)
    if n is None:
        raise NotSerpentine(f"no sectors per track at block {L:,}")
    firsts, counts, vs = [], [], []
    f = L
    lv = p.level_here(f, n)
    if lv is None:
        raise NotSerpentine(f"block {L:,} answered from the cache")
    b = None

    def on_track(x: int, v: Optional[float]) -> bool:
        """Whether block x, of level v, lies on the track that begins at f (level lv)."""
        return v is not None and _on_track(x - f, _fold(v - lv, n), n, reach)

    while f < end and (W is None or len(firsts) < W):
        e = None
        for x in range(min(f + n, end) - 1, max(f, f + n - reach) - 1, -1):
            if on_track(x, p.level(x, n)):
                e = x + 1
                break
        if e is None:
            # the walk begins inside a track (the band before ended early: maxtor300g's tables whose tracks
            # all lie at one angle hide their ends from the levels): its end by bisection, the first block
            # that shows another level, checked a block on
            def same(x: int) -> bool:
                v = p.level(x, n)
                return on_track(x, v) if v is not None else on_track(x - 1, p.level(x - 1, n))  # (a hit: the block before, read with it)

            hi = _track_end(f, min(f + n - reach, end), same)
            if firsts or hi >= end or same(hi) or same(hi + 1) or not same(hi - 1):
                if firsts:
                    break
                raise NotSerpentine(f"the track at block {f:,} ends nowhere near {f + n:,}")
            e = hi
        firsts.append(f)
        counts.append(e - f)
        vs.append((lv + f) % n)
        if e >= end:
            break
        # the next track: in this band if it holds the level half a track on and lies a skew on
        la, lx = p.level(min(e + n // 2, end - 1), n), p.level_here(e, n)
        if la is None or lx is None or not (-0.5 <= _fold(la - lx, n) <= reach + 0.5):
            break
        # and it has this band's sectors per track (the half-track test above allows runs of slips, so a
        # track of other sectors passes it: maxtor300g's last cylinder before a zone, one track a surface)
        # (unknown, a probe answered from the cache: the half-track test decides alone)
        m = _spt_of(p, e, n, lo_spt)
        if m is not None and m != n:
            break
        # (no skew asked for: in maxtor300g's odd track tables each track has its own angle)
        f, lv = e, lx
    ntr = len(firsts)
    E = firsts[-1] + counts[-1]
    js = np.arange(ntr, dtype=float)
    if ntr >= 2:
        un = np.unwrap(np.array(vs) * 2 * np.pi / n) * n / (2 * np.pi)
        b, icpt = (float(v) for v in np.polyfit(js, un, 1))
        v0 = icpt % n
    else:
        v0 = vs[0]
        b = b if b is not None else 0.0
    slips = []
    for j in range(ntr):
        k = n - counts[j] if E < end or j < ntr - 1 else 0
        if k <= 0:
            continue
        placed = _place_slips(p, firsts[j], counts[j], k, n)
        for i, o in enumerate(placed):
            slips.append(j * n + min(o, counts[j]) + i)
        for i in range(len(placed), k):
            slips.append(j * n + counts[j] + i)
    return Band(L, n, ntr, E - L, v0, b, sorted(slips), firsts, vs[0], per_track=list(vs))


def _predicted(bands: list, S: Optional[int], W: Optional[int], L: int, end: int) -> Optional[Band]:
    """The band at L as the serpentine's period predicts it: the band 2 S back (the same surface, the same
    place in its group of cylinders), its sectors per track, skew and count, turned on by as much as that
    band turned from the one 2 S before it; None where those two differ or hold slips."""
    if not S or not W:
        return None
    P = 2 * S
    if len(bands) < 2 * P:
        return None
    a, r = bands[-P], bands[-2 * P]
    if a.per_track is not None or r.per_track is not None:
        return None
    if not (a.spt == r.spt and a.tracks == r.tracks == W and a.count == r.count == W * a.spt and not a.slips
            and not r.slips and abs(a.skew - r.skew) < 0.05):
        return None
    if L + a.count > end:
        return None
    n = a.spt
    v0 = (a.v0 + _fold(a.v0 - r.v0, n)) % n
    v0_raw = None if a.v0_raw is None or r.v0_raw is None else (a.v0_raw + _fold(a.v0_raw - r.v0_raw, n)) % n
    return Band(L, n, W, a.count, v0, a.skew, [], [L + j * n for j in range(W)], v0_raw)


def _verify(p: _Prober, b: Band) -> bool:
    """Two probes: the band's first block lies where predicted, and its last block on its last track where
    predicted (a slip in the band moves that block onto the next band; other sectors per track or another
    skew move its level). (A third, the first track half a track on, checked the sectors per track again:
    without it the 6 x 8 serpentine's walk takes a quarter less device time, and its spec is the same.)"""
    n, L = b.spt, b.first
    l0 = p.level(L, n)
    if l0 is None:
        return False
    raw = (l0 + L) % n
    # (each band's first sector is a whole one: the prediction, from two such, is a sector off at times)
    if abs(_fold(raw - b.v0, n)) > 1.5:
        return False
    b.v0 = b.v0_raw = raw
    x = L + b.count - 1
    lx = p.level(x, n)
    j = b.tracks - 1
    if lx is None or abs(_fold((lx + b.first_lbns[j]) % n - (b.v0 + j * b.skew), n)) > 1.5:
        return False
    return True


def _track_start(p: _Prober, L: int, prev: Band, lo_spt: int) -> int:
    """The first block of the track that holds L, or of the track after it: L's band begins at L when the
    block before L lies on the previous band's last track and L does not. If L shows the block before it's
    level under the previous band's sectors per track (that band's end was placed early, or guessed), the
    first block past that track; if the block before L shows L's level under L's own (placed late), the first
    block of L's track. Each by bisection over a track's length (the levels of one track agree, a few slips
    apart; the next track's lie a skew off)."""
    def same(x: int, ref: float, n: int) -> Optional[bool]:
        v = p.level_here(x, n)
        return None if v is None else -0.5 <= _fold(v - ref, n) <= MAX_BAND_SLIPS + 0.5

    m = prev.spt
    lp, lq, lr = p.level(L - 1, m), p.level(L, m), p.level(L + m // 3, m)
    # (two blocks of L's track, L and a third of a track on, must show the level of the block before L: one
    # alone does so by chance once in a hundred, and moved a band's end 37 blocks early)
    if lp is not None and lq is not None and lr is not None and -0.5 <= _fold(lq - lp, m) <= MAX_BAND_SLIPS + 0.5 \
            and -0.5 <= _fold(lr - lp, m) <= MAX_BAND_SLIPS + 0.5:
        e = _track_end(L, L + m, lambda x: same(x, lp, m))      # (L on the track before, L + m past it)
        return L if e is None else e
    # L a few blocks early (the band before ended at a slip it took for one too many): L shows the block
    # before's level and its slot still fits on that track; unless that band's tracks lie at one angle, the
    # next track's first block does neither (a skew on). Its end by bisection up to a track from its start.
    F = prev.first_lbns[-1] if prev.first_lbns else None
    lf = p.level_here(F, m) if F is not None and F < L else None

    def fits(x: int) -> Optional[bool]:
        v = p.level_here(x, m)
        return None if v is None else _on_track(x - F, _fold(v - lf, m), m, MAX_BAND_SLIPS)

    if lf is not None and abs(_fold(prev.skew, m)) > MAX_BAND_SLIPS + 1 and fits(L) and fits(L - 1):
        e = _track_end(L, F + m, fits)
        return L if e is None else e
    n = _spt_of(p, L, None, lo_spt)
    if n is None:
        return L
    lv = p.level(L, n)
    if lv is None:
        return L
    v, v2 = p.level(L - 1, n), p.level(L - 1 - n // 3, n)
    if v is None or v2 is None or not (-MAX_BAND_SLIPS - 0.5 <= _fold(lv - v, n) <= 0.5) \
            or not (-MAX_BAND_SLIPS - 0.5 <= _fold(lv - v2, n) <= 0.5):
        return L
    def before(x: int) -> Optional[bool]:
        """Whether x lies before L's track (None: answered from the cache)."""
        w = p.level_here(x, n)
        return None if w is None else not -MAX_BAND_SLIPS - 0.5 <= _fold(lv - w, n) <= 0.5

    e = _track_end(L - n, L - 1, before)            # (L - n before L's track, L - 1 on it)
    return L if e is None else e


def _end_at(b: Band, E: int) -> int:
    """Let band `b` end at LBN `E` (its last track longer or shorter, or tracks fewer): its tracks, count and
    slips follow (the slots its tracks hold less its LBNs are its slips; those added or taken off, at its
    last track's end; a band walked track by track keeps an angle a track). Returns E."""
    b.first_lbns = [f for f in b.first_lbns if f < E] or [b.first]
    while E - b.first > len(b.first_lbns) * b.spt:
        b.first_lbns.append(b.first_lbns[-1] + b.spt)
    b.tracks = len(b.first_lbns)
    b.count = E - b.first
    if b.per_track is not None:
        # (a track added lies a skew on; `_track_angles` reads it)
        b.per_track = b.per_track[:b.tracks]
        while len(b.per_track) < b.tracks:
            b.per_track.append((b.per_track[-1] + b.skew) % b.spt)
    slots = b.tracks * b.spt
    slips = [x for x in b.slips if x < slots]
    taken = set(slips)
    free = (x for x in range(slots - 1, (b.tracks - 1) * b.spt - 1, -1) if x not in taken)
    while len(slips) > slots - b.count:
        slips.pop()
    while len(slips) < slots - b.count:
        slips.append(next(free))
    b.slips = sorted(slips)
    return E


def _next_track_near(p: _Prober, L: int, m: int) -> Optional[int]:
    """Where the walk at L found nothing: the first block after L not on the track of the block before L,
    when L shows that track's level (`m` sectors) and the block a third of a track on does not (the band
    before ended early by less than a third of a track, too little for `_track_start`'s test); else None."""
    lp, lq, lr = p.level(L - 1, m), p.level(L, m), p.level(L + m // 3, m)
    if lp is None or lq is None or lr is None:
        return None
    near = lambda a, b: -0.5 <= _fold(a - b, m) <= MAX_BAND_SLIPS + 0.5  # noqa: E731  (b's track, or past its slips)
    if not near(lq, lp) or near(lr, lp):
        return None
    def on(x: int) -> Optional[bool]:
        v = p.level_here(x, m)
        return None if v is None else near(v, lp)

    return _track_end(L, L + m // 3, on)            # (L on the track before, L + m // 3 past it)


def _flush(dev: Device, end: int, reads: int, seed: int) -> None:
    frng = random.Random(end + seed)
    for _ in range(reads):
        dev.read(end - 1 - frng.randrange(max(end // 10, 1)))


def serpentine_walk(dev: Device, clock: Clock, spt_hint: int, progress: Optional[Callable] = None,
                    max_bands: Optional[int] = None, keep: Optional[list] = None, segments: int = 0) -> tuple[list, dict]:
    """Every band of the disk, in LBN order. Returns (bands, stats)."""
    if not clock.noiseless:
        raise NotSerpentine("timing noise: the band walk needs exact completions (not built under noise)")
    p = _Prober(dev, clock)
    end = dev.blocks
    # the zone walk before this one left the disk's first blocks in the cache (a probe answered from it shows
    # no level): more reads than the cache has segments, from the disk's last tenth (the segment test stops
    # at 64, and maxtor300g has 2,048: 2,049 reads, about 16 device seconds)
    _flush(dev, end, max(segments, FLUSH_READS) + 1, 0)
    bands: list = [] if keep is None else keep
    L = 0
    lo_spt = max(spt_hint // 4, 16)
    t0 = dev.busy_ns
    W = None
    stats_tracks = [0]
    guessed = [0]
    predicted = [0]
    flushes = [0]
    resyncs = [0]
    guess_run = [0]
    S_now: list = [None]

    def walk_at(L: int, guess: Optional[int], skew: Optional[float]) -> tuple[Optional[Band], bool]:
        """The band that begins at L, or None; and whether it was walked track by track too."""
        bnd = None
        for short in (False, True):
            # each track holding a block a sector, else fewer (maxtor300g's 1,036 on 1,040 sectors): the band
            # that comes out longer (with the wrong count per track the levels run off the prediction)
            try:
                got = _walk_band(p, L, end, guess, W, skew, lo_spt, short=short)
            except NotSerpentine:
                continue
            if bnd is None or got.tracks > bnd.tracks:
                bnd = got
            if W is None or bnd.tracks >= W:
                return bnd, False
        if bnd is not None and (not W or bnd.first + bnd.count >= end):
            return bnd, False
        # track by track (runs of slips the prediction does not follow); the longer band wins
        try:
            got = _walk_tracks(p, L, end, guess, W, skew, lo_spt)
        except NotSerpentine:
            return bnd, True
        return (got if bnd is None or got.tracks > bnd.tracks else bnd), True

    def take(band) -> bool:
        """Append `band` to the walk; whether the walk has all the bands it was asked for."""
        bands.append(band)
        p.maybe_refine()
        if progress:
            progress(band.first + band.count, end)
        return bool(max_bands and len(bands) >= max_bands)

    while L < end:
        # the last band's sectors per track and skew, the first guess (the recent bands' are tried below)
        guess, skew = (bands[-1].spt, bands[-1].skew) if bands else (None, None)
        if len(bands) >= 2:
            widths = [bb.tracks for bb in bands]
            vals, cnt = np.unique(widths, return_counts=True)
            W = int(vals[np.argmax(cnt)]) if cnt.max() >= 2 else None
        if S_now[0] is None and len(bands) in (16, 32, 64, 128, 256):
            S_now[0] = surfaces_of_bands([bb.spt for bb in bands])
        pred = _predicted(bands, S_now[0], W, L, end)
        if pred is not None and _verify(p, pred):
            predicted[0] += 1
            L = pred.first + pred.count
            if take(pred):
                break
            continue
        # (after the prediction: a predicted band needs none of these probes)
        if guess is not None:
            # the band two back in the serpentine's order often has this one's sectors per track: try each
            # recent band's sectors per track, most recent first
            tried = set()
            for bb in reversed(bands[-40:]):
                if bb.spt in tried or bb.tracks < 4:
                    continue
                tried.add(bb.spt)
                a, c = p.level(L + bb.spt // 2, bb.spt), p.level(L, bb.spt)
                if a is not None and c is not None and abs(_fold(a - c, bb.spt)) < 0.3:
                    guess, skew = bb.spt, bb.skew
                    break
            else:
                guess, skew = None, None
        if bands:
            # L must begin a track: the block before it lies elsewhere (a band's end one block late or early
            # would shift every band after it). Early: read down while the block before shows L's level
            L2 = _track_start(p, L, bands[-1], lo_spt)
            # (a guessed track ends wherever the next band is found to begin: maxtor300g's track of 144
            # sectors at the end of a track table, guessed as one of the band before's 1,040)
            reach = bands[-1].spt if bands[-1].guessed and L2 < L else bands[-1].spt // 2
            if L2 != L and abs(L2 - L) < reach and L2 > bands[-1].first:
                # the previous band ends where this one begins (its last track longer or shorter)
                L = _end_at(bands[-1], max(L2, bands[-1].first + 1))
                resyncs[0] += 1
        bnd, by_track = walk_at(L, guess, skew)
        if bnd is None and flushes[0] < MAX_FLUSHES and any(v is None for v in p.seen.values()):
            # probes answered from the cache (neighbours of earlier probes, read with them) hid the
            # levels: empty the cache and walk the tracks once more
            flushes[0] += 1
            _flush(dev, end, max(segments, FLUSH_READS) + 1, flushes[0])
            p.seen = {k: v for k, v in p.seen.items() if v is not None}
            bnd, by_track = walk_at(L, guess, skew)
        if bnd is None and bands and bands[-1].per_track is None:
            # the band before ended a block early or late (a probe of its end answered from the cache):
            # the walk that follows from a block on or back is the one
            for L1 in (L + 1, L - 1, _next_track_near(p, L, bands[-1].spt)):
                if L1 is not None and L1 > bands[-1].first:
                    bnd, by_track = walk_at(L1, guess or bands[-1].spt, skew)
                    if bnd is not None:
                        L = _end_at(bands[-1], L1)
                        resyncs[0] += 1
                        break
        if by_track:
            stats_tracks[0] += 1
        if bnd is None:
            if not bands or guessed[0] >= MAX_GUESSED_SHARE * len(bands) + 16 or guess_run[0] >= MAX_GUESS_RUN:
                raise NotSerpentine(f"nothing the band walk follows at block {L:,} "
                                    f"({guessed[0]} tracks guessed before)")
            # nothing this walk follows here (a track table's odd track): one track of the last band's
            # sectors, where its level puts it; the next band's start is read from there
            m = bands[-1].spt
            lv = p.level(L, m)
            bnd = Band(L, m, 1, min(m, end - L), ((lv if lv is not None else 0.0) + L) % m,
                       bands[-1].skew, [], [L], guessed=True)
            guessed[0] += 1
            guess_run[0] += 1
        if bnd.tracks > 1:
            guess_run[0] = 0
        L = bnd.first + bnd.count
        if take(bnd):
            break
        if bnd.count <= 0:
            raise NotSerpentine(f"an empty band at block {L:,}")
    bands[:] = merge_pieces(bands, W)
    angled = _track_angles(p, bands)
    # the phases under the final period
    return bands, {"tracks_angled_bands": angled, "walk": "serpentine", "probes": p.probes, "bands_track_by_track": stats_tracks[0], "tracks_guessed": guessed[0], "bands_predicted": predicted[0], "cache_flushes": flushes[0], "resyncs": resyncs[0], "cache_hits": p.hits, "bands": len(bands),
                   "serpentine_device_s": (dev.busy_ns - t0) / 1e9, "_times": p.seen}


def _track_angles(p: _Prober, bands: list) -> int:
    """Each track's own angle for every band the walk measured or predicted as a line (its first sector and
    skew). A line through whole sectors read at a few tracks leaves the skew a fraction of a sector off, and
    DiskSim 4's tables round each track's angle to a whole sector on its own (maxtor300g: 15% of the tracks
    came out a sector off). The lines a run can lay through the first, middle and last tracks (`_lines`) are
    narrowed by reading, one at a time, a track where they disagree, until all lay every track alike, and four
    more tracks checked (every track read instead: 25 device minutes on maxtor300g). Returns the bands so set."""
    done = 0
    for b in bands:
        if b.guessed or b.tracks < 2:
            continue
        n, m = b.spt, b.tracks
        seen: dict = {}

        def read(j: int) -> bool:
            # (read again: a level the walk read minutes before carries what the period was off by since)
            for x in (b.first_lbns[j], b.first_lbns[j] + 1):      # (the block after it, on its track: its level)
                p.seen.pop(x, None)
                lv = p.level(x, n)
                if lv is not None:
                    seen[j] = (lv + x) % n
                    return True
            return False

        if b.per_track is not None:
            # a band walked track by track: each read again
            if all(read(j) for j in range(m)):
                b.per_track = [seen[j] for j in range(m)]
                done += 1
            continue

        for j in (0, m - 1, m // 2):
            read(j)
        while 0 in seen:
            js = np.array(sorted(seen), dtype=float)
            v = np.array([seen[j] for j in sorted(seen)])
            frac = float(v[0] - np.floor(v[0]))        # (every level of a band: whole sectors + one constant)
            t = np.round(v - frac).astype(np.int64) % n
            # (near the walk's skew: tracks read far apart do not unwrap to a mean step)
            lines = _lines(js, t, n, b.skew / n * UREV)
            if not lines:
                # (the walk's skew is off, or the tracks lie on no line: every track read, in order)
                if all(j in seen or read(j) for j in range(m)):
                    b.per_track = [seen[j] for j in range(m)]
                    done += 1
                break
            ends = np.array([(k, o) for k, a, z in lines for o in (a, z - 1)], dtype=np.int64)
            laid = _laid(ends[:, 1:], ends[:, :1], m, n)
            differ = (laid != laid[0]).sum(axis=0)
            if not differ.any():
                # four tracks more must lie on it too (maxtor300g's odd tables lay each track at an angle of
                # its own, a few sectors off any line: such a band is read track by track)
                checks = [j for j in (m // 4, 3 * m // 4, m // 8, 5 * m // 8) if j not in seen]
                if all(read(j) and round(seen[j] - frac) % n == laid[0][j] for j in checks):
                    b.per_track = [float(x) + frac for x in laid[0]]
                elif all(j in seen or read(j) for j in range(m)):
                    b.per_track = [seen[j] for j in range(m)]
                else:
                    break
                done += 1
                break
            j = int(np.argmax(differ))
            if j in seen or not read(j):
                break
    return done


def _split_at(b: Band, t: int) -> tuple:
    """Band `b` as two: its first t tracks and the rest."""
    n, cut = b.spt, b.first_lbns[t]
    pt = b.per_track
    head = Band(b.first, n, t, cut - b.first, b.v0, b.skew, [x for x in b.slips if x < t * n], b.first_lbns[:t],
                b.v0_raw, per_track=None if pt is None else pt[:t])
    tail = Band(cut, n, b.tracks - t, b.first + b.count - cut, (b.v0 + t * b.skew) % n if pt is None else pt[t],
                b.skew, [x - t * n for x in b.slips if x >= t * n], b.first_lbns[t:], None,
                per_track=None if pt is None else pt[t:])
    return head, tail


def _resplit(bands: list, W: Optional[int]) -> list:
    """A band of W tracks between a piece of k tracks and one of W - k, all of one sectors per track: the walk
    ran a band on over the first tracks of the next on the same surface (maxtor300g's 20, 32 and 12 tracks for
    two bands of 32 at a group's turn, where the angle runs on): the W split after W - k tracks, each part
    joining its piece (`merge_pieces` then checks each join by the angles)."""
    if not W:
        return bands
    out = list(bands)
    i = 1
    while i + 1 < len(out):
        a, b, c = out[i - 1], out[i], out[i + 1]
        if b.tracks == W and a.tracks < W and a.tracks + c.tracks == W and a.spt == b.spt == c.spt \
                and not (a.guessed or b.guessed or c.guessed) and len(b.first_lbns) == W:
            out[i:i + 1] = list(_split_at(b, W - a.tracks))
            i += 2
        i += 1
    return out


def merge_pieces(bands: list, W: Optional[int]) -> list:
    """A band the walk ended early and the rest of it: neighbours of one sectors per track, together at most W
    tracks, the second's first track one skew on from the first's last (the slips between taken into
    account). The walk ends a band early where slips on many tracks in a row ran its levels off the prediction,
    or where they stop and a band walked track by track goes on as a line (maxtor300g's bands of four and five
    slips a track whose last tracks have none: left apart, each piece is a band of its own width and is placed
    on cylinders of its own, 70 more a time)."""
    def skew(b: Band) -> float:
        """The band's skew; walked track by track, the median step between its tracks (the fit through them
        can be a track's angle off: maxtor300g's 23 tracks of 1,123 sectors, fitted 240 where each steps 270)."""
        if b.per_track is None or b.tracks < 3:
            return b.skew
        return float(np.median(_fold_arr(np.diff(np.array(b.per_track, dtype=float)), b.spt)))

    out: list = []
    for bnd in _resplit(bands, W):
        a = out[-1] if out else None
        # (a one-track piece's skew is no measure: the next piece's first track's angle says it)
        if a is not None and W and not (a.guessed or bnd.guessed) and a.spt == bnd.spt \
                and a.tracks + bnd.tracks <= W and (min(a.tracks, bnd.tracks) < 2 or abs(skew(a) - skew(bnd)) < 1.0):
            n, k = a.spt, a.tracks
            step = skew(a) if a.tracks >= 2 else skew(bnd)
            if -3 <= _fold(bnd.sector(0) - a.sector(k - 1) - step, n) <= MAX_BAND_SLIPS + 3:
                per_track = None
                if a.per_track is not None or bnd.per_track is not None:
                    per_track = [a.sector(j) for j in range(k)] + [bnd.sector(j) for j in range(bnd.tracks)]
                out[-1] = Band(a.first, n, k + bnd.tracks, a.count + bnd.count, a.v0,
                               (a.skew * a.tracks + bnd.skew * bnd.tracks) / (a.tracks + bnd.tracks),
                               a.slips + [k * n + x for x in bnd.slips], a.first_lbns + bnd.first_lbns, a.v0_raw,
                               per_track=per_track)
                continue
        out.append(bnd)
    return out


def _rephase(bands: list, clock: Clock, seen: dict) -> None:
    """Each band's first-slot sector from its first block's completion time under the final period."""
    for bnd in bands:
        t = seen.get(bnd.first)
        if t is not None:
            bnd.v0 = (clock.phase(t) * bnd.spt) % bnd.spt


def surfaces_of_bands(spts: list, max_surfaces: int = 32) -> Optional[int]:
    """The surfaces: the least S whose groups of 2 S bands read the same sectors per track forwards and
    backwards (a serpentine visits its surfaces in one order, then back), for most groups, and whose band
    sequence repeats after 2 S where it does not change zone."""
    best = None
    for S in range(1, max_surfaces + 1):
        if len(spts) < 4 * S:
            break
        good = tot = 0
        for g0 in range(0, len(spts) - 2 * S + 1, 2 * S):
            w = spts[g0:g0 + 2 * S]
            tot += 1
            good += all(w[k] == w[2 * S - 1 - k] for k in range(S))
        if tot and good >= 0.8 * tot:
            # and not a smaller pattern's multiple already found
            best = S
            break
    return best


def index_phase(samples: list) -> float:
    """The sector grid's phase θ (turns): each (n, v) with v the measured sector of a track's first slot
    (its completion's: a sector and the bus after the sector's start) must be an integer + n θ. From the
    first sample's n candidates, the one the others fit best."""
    if not samples:
        return 0.0
    n0, v0 = samples[0]
    ns = np.array([s[0] for s in samples], dtype=float)
    vs = np.array([s[1] for s in samples], dtype=float)
    th = (v0 + np.arange(n0)) / n0                       # candidates
    r = np.outer(th, ns) - vs[None, :]
    cost = np.abs(r - np.round(r)).sum(axis=1)
    return float(th[int(np.argmin(cost))] % 1.0)


def smooth_chains(bands: list, P: int, W: int, window: int = 512) -> int:
    """Each band's first sector and skew to a fraction of a sector. A band's first track's first sector is
    read as a whole sector (its completion's), and within the band a track's is the band's real angle plus the
    skew, rounded: a band's angle off by a fraction of a sector rounds some of its tracks a sector off. The
    bands P apart (a surface's, at the same place of the serpentine's period) turn by the same angle from
    one to the next (DiskSim 4's tables repeat a period at a fixed skew), so over a run of them of one
    sectors per track the whole sectors read lie on a line whose real value is each band's angle; their
    skews are one (the mean of those measured). Returns the bands so set."""
    done = 0
    # (bands P apart are one surface's only between two bands of other widths: the walk's split bands and
    # maxtor300g's odd tables shift the period, so the chains start again after each)
    cuts = [0] + [i + 1 for i, b in enumerate(bands) if b.tracks != W] + [len(bands)]
    chains = [range(a + s, b, P) for a, b in zip(cuts, cuts[1:]) for s in range(min(P, b - a))]
    for chain in chains:
        runs: list = []
        for i in chain:
            bb = bands[i]
            ok = bb.per_track is None and bb.tracks == W and bb.v0_raw is not None
            key = (bb.spt,) if ok else None
            if runs and key is not None and runs[-1][0] == key:
                runs[-1][1].append(i)
            elif key is not None:
                runs.append((key, [i]))
        for (n,), idx in runs:
            for w0 in range(0, len(idx), window):
                part = idx[w0:w0 + window]
                if len(part) < 8:
                    continue
                raw = np.array([bands[i].v0_raw for i in part])
                y = np.unwrap(raw * 2 * np.pi / n) * n / (2 * np.pi)
                k = np.arange(len(part), dtype=float)
                # (only the bands of the chain's skew: maxtor300g's tables differ in it, a band in eight
                # lays all its tracks at one angle, and a mean over both turned such bands hundreds of
                # sectors off)
                sk = np.array([bands[i].skew for i in part])
                same_skew = np.abs(_fold_arr(sk - np.median(sk), n)) <= 0.5
                keep = same_skew
                if keep.sum() < 8:
                    continue
                for _ in range(2):
                    a1, a0 = np.polyfit(k[keep], y[keep], 1)
                    r = y - (a0 + a1 * k)
                    keep = same_skew & (np.abs(r) <= 1.0)
                    if keep.sum() < 8:
                        break
                if keep.sum() < 8:
                    continue
                bm = float(np.median(sk) + np.mean(_fold_arr(sk[keep] - np.median(sk), n)))
                for i, kk, ok in zip(part, k, keep):
                    if ok:
                        bands[i].v0 = float((a0 + a1 * kk) % n)
                        bands[i].skew = bm
                        done += 1
    return done


def _spans(keys: list) -> list:
    """(first, end) of each run of equal keys."""
    out, i = [], 0
    while i < len(keys):
        j = i
        while j < len(keys) and keys[j] == keys[i]:
            j += 1
        out.append((i, j))
        i = j
    return out


def place(bands: list, S: int, W: int, turn: bool = True, groups: Optional[list] = None) -> list:
    """(cylinder of track 0, direction, surface) of each band: groups of S bands on W cylinders each, the
    group's bands down and up in turn, each on its own surface: in the order of the bands' sectors per track,
    surfaces 0 to S - 1 and back in the next group (the palindrome `surfaces_of_bands` finds), so that a
    surface keeps its sectors per track from group to group and its next band starts W cylinders on. (With
    the surfaces in one order in every group, a surface's band one cylinder from its band in the group before,
    with fewer sectors per track, took that band's: DiskSim 4's rule for a partial track, and a sixth of a
    synthetic serpentine's blocks lay tens of sectors off their angle.)

    Bands of other widths (maxtor300g's odd track tables: groups of bands of 24 or 16 tracks, a cylinder of one
    track a surface, a band of 33; or a band the walk split, whose pieces that add up to W fill one band's
    place) lie in groups of their own width: each run of places of one width starts on cylinders of its own,
    a cylinder apart from the run before (so that no track is one cylinder from a track of the same surface
    in another run, and the partial-track rule never joins them), its first group boundary where its bands'
    sectors per track say (`_group_offset`). Timing sees no cylinder: the runs cost a few cylinders of seek
    distance. Places of fewer tracks that the serpentine's order runs on across take W places, and whole
    groups of another width that it runs on across go on from the cylinders before them (below).

    `groups`, if given, gets each whole group of S single bands: (its first cylinder, its bands' indexes, its
    parity in its run of groups)."""
    # the places in order, (width, pieces): a band, or pieces of a split band that add up to W, or to the width
    # of the place before when that is less (maxtor300g's groups of 24 tracks: 22 and 2, 23 and 1)
    places: list = []
    pending: list = []
    for bnd in bands:
        if bnd.tracks >= W or sum(b.tracks for b in pending) + bnd.tracks > W:
            places += [(b.tracks, [b]) for b in pending]
            pending = []
        if bnd.tracks >= W:
            places.append((bnd.tracks, [bnd]))
        else:
            pending.append(bnd)
            total = sum(b.tracks for b in pending)
            if total == W or (len(pending) > 1 and places and total == places[-1][0]):
                places.append((total, pending))
                pending = []
    places += [(b.tracks, [b]) for b in pending]
    # places of fewer tracks between two runs of W that keep the serpentine's order across them (the run after
    # begins at the surface the run before, counted on through them, comes to) are bands the walk found
    # shorter, each keeping its group's place on W cylinders (maxtor300g's bands of 27 and 2 tracks around three
    # spare cylinders, read as one of 29); else they are runs of their own
    def phase(i: int, j: int) -> int:
        """The slot in its group of the first of the run of W places[i:j]."""
        return (S - _group_offset([pieces[0].spt for _, pieces in places[i:j]], S)) % S

    runs = _spans([w == W for w, _ in places])   # each run of places of W, and of the places between them
    # whole groups of one other width (maxtor300g's groups of bands of 24 tracks) after a run of W that ends at a
    # group boundary go on from its cylinders, and so does the run of W after them: `flush`
    flush = set()
    for (a0, a1), (o0, o1), (b0, b1) in zip(runs, runs[1:], runs[2:]):
        if places[a0][0] != W or any(w >= W for w, _ in places[o0:o1]) \
                or (phase(a0, a1) + (a1 - a0) + (o1 - o0)) % S != phase(b0, b1):
            continue
        if o1 - o0 < S:
            places[o0:o1] = [(W, pieces) for _, pieces in places[o0:o1]]
        elif (phase(a0, a1) + (a1 - a0)) % S == 0 and (o1 - o0) % S == 0:
            # (a band of them found shorter keeps its place, as a band of W's above)
            w = max(w for w, _ in places[o0:o1])
            places[o0:o1] = [(w, pieces) for _, pieces in places[o0:o1]]
            flush |= {o0, b0}

    out: list = []
    free = 0         # the first cylinder after the runs placed so far
    parity = 0       # the parity of the group after the last one placed (a flush run goes on from it)
    for i, j in _spans([w for w, _ in places]):
        # a run of places of one width: groups of S on that many cylinders
        w = places[i][0]
        run = [pieces for _, pieces in places[i:j]]
        base = free + (1 if out and i not in flush else 0)
        r = 0 if i in flush else (S - _group_offset([p[0].spt for p in run], S)) % S   # (a run may begin inside a group)
        p0 = parity if i in flush else 0
        members: list = []   # the current group's bands, while each fills its place alone
        for pieces in run:
            g, k = divmod(r, S)
            gp = (g + p0) % 2
            members = (members if k else []) + [len(out) if len(pieces) == 1 else None]
            if k == S - 1 and groups is not None and w == W and len(members) == S and None not in members:
                groups.append((base + g * w, members, gp))
            c0 = base + g * w
            # `turn`: a group's first band starts at the far end of its cylinders (maxtor300g's: its last
            # surface crosses W cylinders between groups), else next to where the group before ended
            down = k % 2 == 0 if turn else (k + gp) % 2 == 0
            head = k if gp == 0 else S - 1 - k
            at = 0
            for bnd in pieces:
                out.append((c0 + w - 1 - at if down else c0 + at, -1 if down else 1, head))
                at += bnd.tracks
            r += 1
        free = base + -(-r // S) * w
        parity = (p0 + -(-r // S)) % 2
    return out


def _group_offset(spts: list, S: int) -> int:
    """Where the first group boundary lies in a run of bands (0 to S - 1 bands in): the serpentine visits the
    surfaces in one order, then back, so the bands' sectors per track read the same both ways from every
    group boundary (the palindrome `surfaces_of_bands` finds, whose two centres are both boundaries); the
    offset where most do (0 where none tells)."""
    best, best_score = 0, -1.0
    for o in range(S):
        hit = tot = 0
        for b in range(o if o else S, len(spts), S):
            for q in range(min(S, b, len(spts) - b)):
                tot += 1
                hit += spts[b - 1 - q] == spts[b + q]
        score = hit / tot if tot else -1.0
        if score > best_score + 1e-9:
            best, best_score = o, score
    return best


def tracks_of(bands: list, placed: list) -> list:
    """`Track`s (first LBN, LBNs, sectors per track, level, slips, cylinder, surface) in LBN order."""
    out = []
    for bnd, (c0, step, head) in zip(bands, placed):
        n = bnd.spt
        for j in range(bnd.tracks):
            f = bnd.first_lbns[j]
            nxt = bnd.first_lbns[j + 1] if j + 1 < bnd.tracks else bnd.first + bnd.count
            sig = bnd.sector(j)
            sl = [s - j * n for s in bnd.slips if j * n <= s < (j + 1) * n]
            lbn_slips = [o - i for i, o in enumerate(sl) if o - i < nxt - f]
            out.append(Track(f, nxt - f, n, float((sig - f) % n), lbn_slips, exact=True, cyl=c0 + j * step, head=head))
    return out


def _lines(js: np.ndarray, sectors: np.ndarray, n: int, k0: float) -> list:
    """The lines a `[layout.g4]` run can lay (track j at offset + j skew micro-revolutions, its first sector that
    rounded to a whole sector, as `TrackTable` does) through whole `sectors` at tracks `js` (track 0 among
    them), skews near `k0` (micro-revolutions a track): (skew, least offset, one past the greatest) of each."""
    t = sectors.astype(np.int64)
    j = js.astype(np.int64)
    # each track's allowed micro-revolutions: x with floor((x n + U/2) / U) = t (mod n), i.e. [lo, lo + width)
    lo = -((-(t * UREV - UREV // 2)) // n)
    width = -((-(t * UREV + UREV // 2)) // n) - lo
    span = 2 * UREV // (n * max(int(j.max()), 1)) + 2
    ks = np.arange(int(round(k0)) - span, int(round(k0)) + span + 1, dtype=np.int64)
    # where each track's interval starts, less j skew, relative to track 0's (which js[0] must be)
    rel = (lo[None, :] - j[None, :] * ks[:, None] - lo[0]) % UREV
    rel = np.where(rel > UREV - width[None, :], rel - UREV, rel)
    a = np.maximum(rel, 0).max(axis=1)
    b = np.minimum(rel + width[None, :], width[0]).min(axis=1)
    return [(int(ks[i]) % UREV, int(lo[0] + a[i]), int(lo[0] + b[i])) for i in np.nonzero(a < b)[0]]


def _laid(off, skew, m: int, n: int) -> np.ndarray:
    """The whole first sectors of tracks 0 .. m - 1 of a run at `off` and `skew` micro-revolutions (or of
    runs: columns of offsets and skews, a row each)."""
    x = (off + np.arange(m, dtype=np.int64) * skew) % UREV
    return (x * n + UREV // 2) // UREV % n


def _k0(js: np.ndarray, sectors: np.ndarray, n: int) -> float:
    """The mean step of whole sectors at tracks `js`, in micro-revolutions a track (a line through them)."""
    y = np.unwrap(sectors * 2 * np.pi / n) * n / (2 * np.pi)
    return float(np.polyfit(js, y, 1)[0]) / n * UREV if len(js) > 1 else 0.0


def _exact_line(sectors: list, n: int) -> Optional[tuple]:
    """(offset, skew) in micro-revolutions of a run that lays its tracks' first sectors at `sectors`; None if
    no line does (tracks at angles of their own). Of the skews that do, the one leaving its offset most room."""
    t = np.array(sectors, dtype=np.int64)
    js = np.arange(len(t), dtype=float)
    if len(t) < 2:
        return (int(round(t[0] / n * UREV)) % UREV, 0) if len(t) else None
    lines = _lines(js, t, n, _k0(js, t, n))
    if not lines:
        return None
    k, a, b = max(lines, key=lambda r: r[2] - r[1])
    return (a + b) // 2 % UREV, k


def to_g4(bands: list, placed: list, theta: float, shift_sectors_of_spt: Callable) -> tuple[dict, int, int]:
    """The `[layout.g4]` table of the bands: patterns, one root table of one run per band, slips.
    Returns (g4, surfaces, cylinders)."""
    pats, pat_of = [], {}
    root, slips = [], []
    slot = 0
    for bnd, (c0, step, head) in zip(bands, placed):
        n = bnd.spt
        if n not in pat_of:
            pat_of[n] = len(pats)
            pats.append([0, n - 1, n])
        # the first slot's sector: the completion's less a sector and the bus (`shift_sectors_of_spt`) and
        # the grid's phase, in micro-revolutions
        if bnd.per_track is not None:
            sigs = [v - shift_sectors_of_spt(n) - theta * n for v in bnd.per_track]
            line = _exact_line([int(round(v)) % n for v in sigs], n)
            if line is not None:
                # one run whose angle and skew in micro-revolutions put every track on its whole sector
                off, skew = line
                root.append([slot, int(c0), off, n, 1, skew, n * bnd.tracks, step * bnd.tracks, 0, pat_of[n], int(head)])
            else:
                # one run of one track each (each track its own angle, as in the truth's odd tables)
                for j, sig in enumerate(sigs):
                    off = int(round(sig / n * UREV)) % UREV
                    root.append([slot + j * n, int(c0 + j * step), off, n, 1, 0, n, step, 0, pat_of[n], int(head)])
        else:
            sig = bnd.v0 - shift_sectors_of_spt(n) - theta * n
            off = int(round(sig / n * UREV)) % UREV
            skew = int(round(bnd.skew / n * UREV)) % UREV
            root.append([slot, int(c0), off, n, 1, skew, n * bnd.tracks, step * bnd.tracks, 0, pat_of[n], int(head)])
        for s in bnd.slips:
            slips.append([slot + s, 1])
        slot += n * bnd.tracks
    surfaces = max(r[10] for r in root) + 1
    cyls = max(max(r[1], r[1] + r[7] - (1 if r[7] > 0 else -1)) for r in root) + 1
    merged = []
    for s, k in slips:
        if merged and merged[-1][0] + merged[-1][1] == s:
            merged[-1][1] += k
        else:
            merged.append([s, k])
    return {"patterns": pats, "tables": [root], "slips": merged}, surfaces, cyls


class Serpentine:
    """A banded serpentine as the walk found it: its bands, surfaces, band width, cylinders, the `Track`s
    (for the round trips and the tests after the walk) and where each block's completion falls."""

    def __init__(self, bands: list, stats: dict):
        self.bands = bands
        self.stats = stats
        widths = [b.tracks for b in bands]
        vals, cnt = np.unique(widths, return_counts=True)
        self.W = int(vals[np.argmax(cnt)])
        # (from the bands before the first of other than W tracks: the groups after one are not counted from
        # where the sequence begins)
        first_odd = next((i for i, b in enumerate(bands) if b.tracks != self.W), len(bands))
        self.S = surfaces_of_bands([b.spt for b in bands[:first_odd]]) or surfaces_of_bands([b.spt for b in bands]) or 1
        self.smoothed = smooth_chains(bands, 2 * self.S, self.W)
        self.set_turn(True)

    def set_turn(self, turn: bool) -> None:
        """Place the bands (`place`) with a group's first band at the far end of its cylinders or not."""
        bands = self.bands
        self.turn = turn
        self.groups: list = []
        self.placed = place(bands, self.S, self.W, turn, self.groups)
        self.tracks = tracks_of(bands, self.placed)
        # the sector grid's phase: every band's first block, measured, is a whole sector (+ the completion's
        # own) + n theta (from bands over the whole disk: with only even sectors per track, as maxtor300g's first
        # zone has, theta and theta + half a turn fit alike, and the odd tracks further in lay half a sector off)
        spread = bands[:64] + bands[64::max(len(bands) // 512, 1)]
        self.theta = index_phase([(b.spt, (b.v0_raw - 1.0) % b.spt) for b in spread if b.v0_raw is not None])
        self.firsts = np.array([b.first for b in bands], dtype=np.int64)
        self.cylinders = max(max(c0, c0 + step * (b.tracks - 1)) for b, (c0, step, _) in zip(bands, self.placed)) + 1
        self.by_cyl: dict = {}
        for i, t in enumerate(self.tracks):
            self.by_cyl.setdefault(t.cyl, []).append(i)

    def g4(self, shift_sectors_of_spt: Callable) -> dict:
        g4, _, _ = to_g4(self.bands, self.placed, self.theta, shift_sectors_of_spt)
        return g4

    def lbn_on(self, cyl: int, rng: random.Random) -> Optional[int]:
        """A random block of a random track of cylinder `cyl` (None: no track there)."""
        ts = self.by_cyl.get(cyl)
        if not ts:
            return None
        t = self.tracks[rng.choice(ts)]
        return t.first + rng.randrange(max(t.count, 1))

    def phase(self, x: int) -> float:
        """Where block x's completion falls, revolutions (the walk's frame)."""
        k = int(np.searchsorted(self.firsts, x, side="right")) - 1
        b = self.bands[k]
        j = int(np.searchsorted(np.array(b.first_lbns), x, side="right")) - 1
        o = x - b.first_lbns[j]
        n = b.spt
        slot = o
        for sl in b.slips:                 # (sorted slot offsets from the band's first slot)
            if sl < j * n:
                continue
            if sl - j * n <= slot:
                slot += 1
            elif sl >= (j + 1) * n:
                break
        return ((b.sector(j) + slot) / n) % 1.0


def serpentine_layout(dev: Device, clock: Clock, spt_hint: int, progress: Optional[Callable] = None,
                      segments: int = 0) -> Serpentine:
    bands, st = serpentine_walk(dev, clock, spt_hint, progress, segments=segments)
    st.pop("_times", None)
    if len(bands) < 4:
        raise NotSerpentine(f"{len(bands)} bands")
    return Serpentine(bands, st)

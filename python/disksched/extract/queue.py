"""The drive's queue: does it hold several commands at once and serve them
out of order, and how many does it hold?

One batch sent together, in this order: a read at the first block x of a
track ("busy"), n reads of far-away blocks ("fillers"), then a read a
quarter of a turn after x on the same track ("bait": past any command
overhead, so it costs at most a quarter turn). A drive that serves its
commands in arrival order completes the bait last. A drive that reorders
(SPTF, SSTF, any positional scheduler) serves the bait before every filler
whenever it holds the bait when it chooses the command after busy: a
nearby block (or a cache hit) is the cheapest of all. When busy completes
the drive holds the next depth - 1 commands (the host sends the next one
only once it learns of that completion), so the bait overtakes every filler
while n <= depth - 2: the largest such n gives the depth. (A drive that
chose among fillers first could still take the bait before some of them
later: hence every filler, not the first.) A drive that keeps arrival
order shows no depth by timing.
"""

from __future__ import annotations

import random

from .device import Device


def _overtakes(dev: Device, rng: random.Random, tracks: list, n: int, trials: int) -> bool:
    """The bait completes before every filler in most of `trials` batches."""
    wins = 0
    for _ in range(trials):
        t = tracks[rng.randrange(len(tracks))]
        x = t.first
        bait = x + max(t.count // 4, 2)
        # fillers a quarter of the disk or more away from x: a long seek each, never cheaper than the bait
        far = [b for b in (rng.randrange(dev.blocks - 1) for _ in range(8 * n)) if abs(b - x) > dev.blocks // 4][:n]
        while len(far) < n:
            far.append((x + dev.blocks // 2 + rng.randrange(dev.blocks // 4)) % (dev.blocks - 1))
        done = dev.read_batch([(x, 1)] + [(b, 1) for b in far] + [(bait, 1)])
        wins += done[-1] < min(done[1:-1])
    return 2 * wins > trials


def drive_queue(dev: Device, rng: random.Random, tracks: list, cap: int = 256, trials: int = 3) -> dict:
    """{"queued": the device could send several commands at once, "reorders" (None: not measured),
    "depth" (commands the drive holds; None when not observable), "at_least"
    (True when the depth is `cap` or more), "confidence"}."""
    tracks = [t for t in tracks if t.count >= 16]
    if not dev.queued or not tracks:  # one command at a time, or no track of 16 blocks to put a bait on
        return {"queued": dev.queued, "reorders": None, "depth": None, "at_least": False, "confidence": 0.0}
    if not _overtakes(dev, rng, tracks, 1, trials):
        return {"queued": True, "reorders": False, "depth": None, "at_least": False, "confidence": 0.8}
    # the largest n whose bait still overtakes: doubling, then bisection
    lo, hi = 1, 2
    while hi <= cap and _overtakes(dev, rng, tracks, hi, trials):
        lo, hi = hi, hi * 2
    if hi > cap:
        return {"queued": True, "reorders": True, "depth": cap + 2, "at_least": True, "confidence": 0.8}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _overtakes(dev, rng, tracks, mid, trials):
            lo = mid
        else:
            hi = mid
    return {"queued": True, "reorders": True, "depth": lo + 2, "at_least": False, "confidence": 0.9}

"""Reference Python schedulers: FCFS and SPTF written against the plug-in
contract (`disksched.Scheduler`), as the worked example of
docs/writing-a-scheduler.md, the `bench` rows of Python plug-ins, and the
tests that check they schedule exactly as the built-in `fcfs` and `sptf`.
"""

from __future__ import annotations

from collections import deque

from .plugins import Scheduler


class PyFcfs(Scheduler):
    """First come, first served."""

    name = "py_fcfs"
    summary = "first come, first served (Python)"

    def __init__(self):
        self.queue = deque()

    def insert(self, id, ctx):
        self.queue.append(id)

    def dispatch(self, ctx, force):
        return self.queue.popleft() if self.queue else None

    def drain(self):
        self.queue.clear()


class PySptf(Scheduler):
    """Shortest positioning time first: the least predicted overhead + seek +
    rotation from the believed head state, ties to the older request (the
    built-in's order; it prunes by cylinder, this one asks about every request)."""

    name = "py_sptf"
    summary = "shortest positioning time first, via the predictor (Python)"

    def __init__(self):
        self.held = []

    def insert(self, id, ctx):
        self.held.append(id)

    def dispatch(self, ctx, force):
        held = self.held
        if not held:
            return None
        times = ctx.positioning_ns_many(held)
        least = min(times)
        best = times.index(least)
        if times.count(least) > 1:  # a tie goes to the request that arrived first
            best = min((i for i, t in enumerate(times) if t == least), key=lambda i: ctx.seq(held[i]))
        return held.pop(best)

    def drain(self):
        self.held.clear()

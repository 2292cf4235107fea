"""Capped SPTF, the worked example of docs/writing-a-scheduler.md: SPTF,
except that a request that has waited `max_wait_ms` or longer goes first
(the oldest such). `max_wait_ms = 0` is FCFS; a cap longer than any wait is SPTF.

    disksched run examples/oltp.toml --plugin examples/plugins/capped_sptf.py \
        --set host.scheduler=capped_sptf --set host.set.max_wait_ms=50
"""

import disksched


class CappedSptf(disksched.Scheduler):
    name = "capped_sptf"
    summary = "SPTF, but a request that has waited max_wait_ms goes first"
    tunables = {"max_wait_ms": disksched.Tunable("ms", 0, 100, 60_000, "a request waiting this long goes next")}

    def __init__(self):
        self.held = []  # request ids
        self.max_wait_ns = self.max_wait_ms * 1e6
        self.capped = 0  # dispatches the cap decided

    def insert(self, id, ctx):
        self.held.append(id)

    def dispatch(self, ctx, force):
        if not self.held:
            return None
        oldest = min(self.held, key=ctx.seq)
        if ctx.now_ns - ctx.arrival_ns(oldest) >= self.max_wait_ns:
            self.capped += 1
            pick = oldest
        else:  # the least predicted positioning time; ties to the older request
            pick = min(self.held, key=lambda i: (ctx.positioning_ns(i), ctx.seq(i)))
        self.held.remove(pick)
        return pick

    def drain(self):
        self.held.clear()

    def counters(self):
        return {"capped": self.capped}

"""`disksched.Simulation`: a run advanced step by step from Python.

    sim = disksched.Simulation("examples/oltp.toml")
    sim.run(until_ms=1000)              # the config's workload, for one simulated second
    sim.queues(), sim.heads(), sim.counters()
    sim.switch("host", "sptf")          # or a plug-in's name; then continue
    sim.submit(lbn=1234, blocks=8)      # a request of one's own, now
    sim.pause_task(0), sim.add_task((0, 100_000), priority=3)   # freeblock tasks
    sim.run()                           # to the end
    r = sim.result()                    # the same Result as disksched.run

The same config and seed give bit-identical results however the run is cut
into `run` / `step` calls (without `submit` or `switch`, identical to
`disksched.run`).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from . import _core
from ._core import DiskschedError
from .plugins import PluginError, registry, workload_registry


class Simulation:
    """A simulation of `config` (a path or a dict, as for `disksched.run`,
    with `overrides`, `seed`, `records`, `schedulers`, `workloads` and
    `classifier` likewise). With
    `workload=False` the config's workload never starts: only requests
    `submit`ted run."""

    def __init__(self, config: Any, *, seed: Optional[int] = None, records: Optional[bool] = None,
                 overrides: Any = None, schedulers: Any = None, workload: bool = True, workloads: Any = None,
                 classifier: Any = None):
        from . import check_seed, resolve
        from .overrides import merge, normalize

        plugins = registry(schedulers)
        loads = workload_registry(workloads)
        seed = check_seed(seed)
        over = dict(overrides) if isinstance(overrides, dict) else overrides
        if records is not None:
            over = merge(normalize(over), {"run.records": bool(records)})
        self._res = resolve(config, over, flag="overrides" if not isinstance(overrides, (list, tuple)) else "--set")
        self._seed = seed
        self._switches: list[dict] = []  # each switch(), for the result's provenance
        try:
            self._sim = _core.Simulation(self._res.text, self._res.origin, seed, plugins or None, workload, loads or None,
                                         classifier)
        except PluginError:
            raise
        except DiskschedError as e:
            raise self._res.error(e) from None

    @property
    def now_ms(self) -> float:
        """The simulated time, ms."""
        return self._sim.now_ns / 1e6

    @property
    def now_ns(self) -> int:
        """The simulated time, ns."""
        return self._sim.now_ns

    def submit(self, lbn: int, blocks: int, *, write: bool = False, flow: Optional[int] = None,
               class_: str = "best-effort", deadline_ms: Optional[float] = None) -> None:
        """Admit a request now: `blocks` sectors at `lbn`; `deadline_ms` is
        relative to now. It runs as client `disksched.SUBMITTED`."""
        deadline_ns = None if deadline_ms is None else self._sim.now_ns + round(deadline_ms * 1e6)
        self._sim.submit(lbn, blocks, write, flow, class_, deadline_ns)

    def run(self, until_ms: Optional[float] = None) -> list[dict]:
        """Handle every event up to `until_ms` (simulated, absolute; None: to the
        end) and return the submitted requests completed meanwhile (dicts: seq,
        lbn, blocks, is_write, flow, class, disk, arrival_ns, issued_ns,
        started_ns, done_ns)."""
        until_ns = None if until_ms is None else round(until_ms * 1e6)
        if until_ns is not None and until_ns < self._sim.now_ns:
            raise DiskschedError(f"run: until_ms = {until_ms} is before the simulated time now ({self.now_ms} ms)")
        return self._sim.run_until(until_ns)

    def step(self) -> Optional[float]:
        """Handle the next event; its time in ms, or None when none is left."""
        t = self._sim.step()
        return None if t is None else t / 1e6

    def completions(self) -> list[dict]:
        """Submitted requests completed since the last `run` or `completions`."""
        return self._sim.take_completions()

    def queues(self) -> dict:
        """Requests queued at each level now: {"host": n, ["controller": n,] "disk": [n per disk]}."""
        out: dict = {"disk": []}
        for level, n in self._sim.queues():
            if level == "disk":
                out["disk"].append(n)
            else:
                out[level] = n
        return out

    def schedulers(self) -> dict:
        """Each queue's scheduler now: {"host": name, ["controller": name,] "disk": name}."""
        return {level: name for level, name in self._sim.schedulers()}

    def heads(self) -> list[dict]:
        """Each disk's heads now: cylinder, head (surface), free_at_ms."""
        return [{"cylinder": c, "head": h, "free_at_ms": t / 1e6} for c, h, t in self._sim.heads()]

    def counters(self) -> dict:
        """Request accounting so far (arrived, completed, per-queue counters, ...)."""
        return json.loads(self._sim.counters())

    def switch(self, queue: str, scheduler: str, **settings: float) -> None:
        """Switch `queue` ("host", "controller", "disk") to `scheduler` (a built-in
        or a plug-in name) with tunables `settings`, now; queued requests move
        across in arrival order (as a `[[reconfigure]]` entry). The result's
        provenance lists every switch (`switches`: when, which queue, from and
        to which scheduler, its settings); the switched-out scheduler's counters
        are the result's `counters["scheduler_retired"]`."""
        before = self.schedulers().get(queue)
        try:
            self._sim.switch(queue, scheduler, {k: float(v) for k, v in settings.items()})
        except PluginError:
            raise
        except DiskschedError as e:
            raise self._res.error(e) from None
        self._switches.append({"at_ms": self.now_ms, "queue": queue, "from": before, "to": scheduler,
                               "set": {k: float(v) for k, v in settings.items()}})

    # Background tasks of the run's [freeblock] section, by index: the config's in order, then added ones.
    def pause_task(self, task: int) -> None:
        """Stop wanting background task `task`'s remaining blocks until `resume_task`."""
        self._task("pause", task)

    def resume_task(self, task: int) -> None:
        """Want a paused task's remaining blocks again."""
        self._task("resume", task)

    def abort_task(self, task: int) -> None:
        """Give up background task `task`: its remaining blocks are no longer wanted."""
        self._task("abort", task)

    def start_task(self, task: int) -> None:
        """Start a task that has not arrived yet (its `start_ms` is later) now."""
        self._task("start", task)

    def add_task(self, blocks: tuple[int, int], *, kind: str = "scan", priority: int = 0, write: bool = False,
                 repeat: bool = False, deadline_ms: Optional[float] = None, name: Optional[str] = None,
                 to_blocks: Optional[tuple[int, int]] = None, share_pct: Optional[float] = None,
                 segment_blocks: Optional[int] = None, live_pct: Optional[float] = None) -> int:
        """Add a background task over blocks [lo, hi) of each disk, started now (as a
        `[[freeblock.tasks]]` entry, same keys: `kind` scan, scrub, prefetch, prewrite,
        backup or clean; `deadline_ms` from now, for a prefetch or prewrite; `to_blocks`
        for a backup or clean); its index."""
        keys = {"name": name or f"task added at {self.now_ms:g} ms", "blocks": list(blocks), "kind": kind,
                "priority": priority, "write": write, "repeat": repeat, "deadline_ms": deadline_ms,
                "to_blocks": None if to_blocks is None else list(to_blocks), "share_pct": share_pct,
                "segment_blocks": segment_blocks, "live_pct": live_pct}
        try:
            return self._sim.add_background_task(json.dumps({k: v for k, v in keys.items() if v is not None}))
        except DiskschedError as e:
            raise self._res.error(e) from None

    def on_background_transfer(self, callback) -> None:
        """Call `callback(disk, task, lo, hi, time_ms)` for every run of background
        blocks transferred from now on (blocks [lo, hi) of `disk`, for task index
        `task`). An exception in it ends the run, as a plug-in's does."""
        self._sim.on_background_transfer(lambda d, t, lo, hi, ns: callback(d, t, lo, hi, ns / 1e6))

    def _task(self, action: str, task: int) -> None:
        try:
            self._sim.background_task(action, task)
        except DiskschedError as e:
            raise self._res.error(e) from None

    def result(self):
        """End the run (every request must have completed: `run()` first) and
        return its `disksched.Result`, as `disksched.run` does."""
        from . import Result, provenance

        summary, counters, cols, series = self._sim.result()
        effective = self._seed if self._seed is not None else self._res.config.get("seed", 0)
        resolved = {**self._res.config, "seed": effective}
        p = provenance.make(resolved, self._res.overrides, effective)
        if self._switches:
            p["switches"] = list(self._switches)
        return Result(json.loads(summary), json.loads(counters), cols, series, p)

"""Python schedulers plugged into the core (disksched.Scheduler): the same
schedules as the built-ins they copy, tunables checked like the built-ins',
errors that name the plug-in, and Ctrl-C."""

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import disksched
from disksched.pysched import PyFcfs, PySptf

PLUGINS = [PyFcfs, PySptf]


def _cfg(**over):
    cfg = {"seed": 3, "disk": {"model": "atlas10k", "scheduler": "fcfs"},
           "host": {"scheduler": "fcfs", "queue_threshold": 1},
           "workload": {"kind": "open", "interarrival_ms": 9.0, "size_kb": 4.0, "read_fraction": 0.67},
           "run": {"requests": 3000, "records": True}}
    for k, v in over.items():
        section, key = k.split("__")
        cfg.setdefault(section, {})[key] = v
    return cfg


def _records(cfg, **kw):
    return disksched.run(cfg, **kw).records()


@pytest.mark.parametrize("level,cfg", [
    ("host", _cfg()),                                             # host threshold 1: the host's order is the arm's
    ("disk", _cfg(host__queue_threshold=16)),                     # the drive's queue holds up to 16
    ("controller", {**_cfg(host__queue_threshold=32), "controller": {"scheduler": "fcfs", "queue_threshold": 1}}),
])
@pytest.mark.parametrize("builtin", ["fcfs", "sptf"])
def test_python_fcfs_and_sptf_schedule_exactly_as_the_builtins(level, cfg, builtin):
    ref = _records(cfg, overrides={f"{level}.scheduler": builtin})
    py = _records(cfg, overrides={f"{level}.scheduler": f"py_{builtin}"}, schedulers=PLUGINS)
    assert py.equals(ref)
    if builtin == "sptf":
        # The level's order matters here: SPTF's records differ from FCFS's.
        fcfs = _records(cfg, overrides={f"{level}.scheduler": "fcfs"})
        assert not fcfs.done_ns.equals(ref.done_ns)


class DiskHeads(disksched.Scheduler):
    """FCFS that notes, at each dispatch, each disk's believed heads and the request's disk."""
    name = "disk_heads"
    summary = "FCFS recording ctx.head_of"

    def __init__(self):
        self.held = []
        DiskHeads.seen = []

    def insert(self, id, ctx):
        self.held.append(id)

    def dispatch(self, ctx, force):
        if not self.held:
            return None
        DiskHeads.seen.append((ctx.head_of(0), ctx.head_of(1), ctx.head_cylinder, ctx.request(self.held[0]).disk))
        return self.held.pop(0)


def test_over_an_array_a_python_scheduler_sees_each_disks_heads():
    # The predictor's answers start from each request's own disk's heads: Python SPTF at the
    # host over a two-disk stripe schedules exactly as the built-in, which judges each request
    # against its disk's heads (tests/array.rs); head_of(disk) gives each disk's heads.
    cfg = _cfg(disk__count=2, disk__array="stripe", disk__stripe_kb=4.0, host__queue_threshold=1)
    ref = _records(cfg, overrides={"host.scheduler": "sptf"})
    py = _records(cfg, overrides={"host.scheduler": "py_sptf"}, schedulers=PLUGINS)
    assert py.equals(ref)
    disksched.run(cfg, overrides={"host.scheduler": "disk_heads"}, schedulers=[DiskHeads])
    seen = DiskHeads.seen
    assert len(seen) > 1000
    assert all(h0[0] == cyl for h0, _, cyl, _ in seen), "head_cylinder is disk 0's"
    assert sum(h0 != h1 for h0, h1, _, _ in seen) > 0.9 * len(seen), "the two disks' heads differ"
    assert {d for *_, d in seen} == {0, 1}


def test_switching_to_a_python_scheduler_at_run_time_matches_the_builtin():
    cfg = _cfg(host__queue_threshold=16)
    ref = _records({**cfg, "reconfigure": [{"at_ms": 5000, "queue": "disk", "scheduler": "sptf"}]})
    py = _records({**cfg, "reconfigure": [{"at_ms": 5000, "queue": "disk", "scheduler": "py_sptf"}]}, schedulers=PLUGINS)
    assert py.equals(ref)


class Lifo(disksched.Scheduler):
    name = "lifo"
    summary = "last come, first served"
    tunables = {"batch": disksched.Tunable("requests", 1, 4, 64, "requests per batch", integer=True),
                "weight": disksched.Tunable("", 0.0, 0.5, 1.0, "a float")}

    def __init__(self):
        self.stack = []
        self.seen = (self.batch, type(self.batch).__name__, self.weight)
        self.dispatched = 0

    def insert(self, id, ctx):
        self.stack.append(id)

    def dispatch(self, ctx, force):
        if not self.stack:
            return None
        self.dispatched += 1
        return self.stack.pop()

    def counters(self):
        return {"dispatched": self.dispatched, "batch_seen": self.seen[0]}


def test_tunables_are_checked_like_the_builtins_and_reach_the_instance():
    r = disksched.run(_cfg(), overrides={"host.scheduler": "lifo", "host.set.batch": 9}, schedulers=[Lifo])
    assert r.counters["scheduler"] == {"host.batch_seen": 9, "host.dispatched": r.counters["host_dispatched"]}
    with pytest.raises(disksched.DiskschedError, match=r"host\.set\.batch: 100 is out of range \[1, 64\]"):
        disksched.run(_cfg(), overrides={"host.scheduler": "lifo", "host.set.batch": 100}, schedulers=[Lifo])
    with pytest.raises(disksched.DiskschedError, match=r"host\.set\.batch: 2\.5 is not a whole number \(expected an integer in \[1, 64\]\)"):
        disksched.run(_cfg(), overrides={"host.scheduler": "lifo", "host.set.batch": 2.5}, schedulers=[Lifo])
    with pytest.raises(disksched.DiskschedError, match=r"host\.set\.depth: unknown tunable \(expected one of: batch, weight\)"):
        disksched.run(_cfg(), overrides={"host.scheduler": "lifo", "host.set.depth": 1}, schedulers=[Lifo])


def test_an_arrays_disks_counters_add_up_live_and_switched_out():
    # Each disk of an array has its own scheduler under the one queue name "disk": the counters were
    # one disk's (the others' overwritten), e.g. 259 of 500 dispatches over two disks.
    cfg = _cfg(host__queue_threshold=16, disk__count=2, disk__scheduler="lifo")
    r = disksched.run({**cfg, "reconfigure": [{"at_ms": 5000, "queue": "disk", "scheduler": "lifo"}]}, schedulers=[Lifo])
    recs = r.records()
    switch_ns = 5000 * 1_000_000
    before = int((recs.started_ns < switch_ns).sum())  # dispatched from the drive queue before the switch
    (label, retired), = r.counters["scheduler_retired"].items()
    assert label.startswith("disk.lifo until 5000")
    assert retired["dispatched"] == before and 0 < before < len(recs)
    assert r.counters["scheduler"]["disk.dispatched"] == len(recs) - before == r.counters["drive_dispatched"] - before
    assert set(recs.disk) == {0, 1}


def test_a_lifo_really_reorders():
    fcfs = _records(_cfg(host__queue_threshold=1), overrides={"host.scheduler": "fcfs"})
    lifo = _records(_cfg(host__queue_threshold=1), overrides={"host.scheduler": "lifo"}, schedulers=[Lifo])
    # Service order by host dispatch time: FCFS serves by arrival, LIFO does not.
    by_fcfs = fcfs.sort_values("host_dispatched_ns").seq.tolist()
    by_lifo = lifo.sort_values(["host_dispatched_ns", "seq"]).seq.tolist()
    assert by_fcfs == sorted(by_fcfs) and by_lifo != sorted(by_lifo)


def test_registration_mistakes_are_named():
    class Fcfs2(PyFcfs):
        name = "fcfs"

    with pytest.raises(disksched.DiskschedError, match="the name of a built-in scheduler"):
        disksched.run(_cfg(), schedulers=[Fcfs2])

    class NoDispatch(disksched.Scheduler):
        def insert(self, id, ctx):
            pass

    with pytest.raises(disksched.DiskschedError, match=r"defines no dispatch\(\)"):
        disksched.run(_cfg(), schedulers=[NoDispatch])

    class BadTunable(PyFcfs):
        name = "bad"
        tunables = {"x": disksched.Tunable("ms", 5, 1, 10)}

    with pytest.raises(disksched.DiskschedError, match="tunable 'x': expected finite min <= default <= max"):
        disksched.run(_cfg(), schedulers=[BadTunable])


def _helper_that_fails(n):
    return 1 / (n - n)


class Raises(PyFcfs):
    name = "raises"

    def dispatch(self, ctx, force):
        if ctx.now_ms > 200:
            _helper_that_fails(3)
        return super().dispatch(ctx, force)


def test_an_exception_names_the_plugin_method_time_and_the_users_traceback_only():
    with pytest.raises(disksched.PluginError) as e:
        disksched.run(_cfg(), overrides={"host.scheduler": "raises"}, schedulers=[Raises])
    msg = str(e.value)
    first = msg.splitlines()[0]
    assert first.startswith("plug-in scheduler 'raises': dispatch() raised at t = ")
    t_ms = float(first.split("t = ")[1].split(" ms")[0])
    assert 200 < t_ms < 400
    assert "test_plugins.py" in msg and "_helper_that_fails" in msg and "ZeroDivisionError" in msg
    assert "disksched/" not in msg.replace("tests/test_plugins.py", "")  # none of disksched's own frames


class HandsOutStrangers(PyFcfs):
    name = "strangers"

    def dispatch(self, ctx, force):
        return 999_999 if self.queue else None


class Sulks(PyFcfs):
    name = "sulks"

    def dispatch(self, ctx, force):
        return None


class ReturnsText(PyFcfs):
    name = "text"

    def dispatch(self, ctx, force):
        return "first" if self.queue else None


class ReturnsTrue(PyFcfs):
    name = "returns_true"

    def dispatch(self, ctx, force):
        return True if self.queue else None  # an int to Python: 1


class ReturnsFalse(PyFcfs):
    name = "returns_false"

    def dispatch(self, ctx, force):
        return False if self.queue else None  # an int to Python: 0


@pytest.mark.parametrize("cls,level,expected", [
    (ReturnsTrue, "host", r"returned True, expected a request id it holds \(int\) or None"),
    (ReturnsFalse, "disk", r"returned False, expected a request id it holds \(int\) or None"),
    (HandsOutStrangers, "host", "returned request id 999999, which it does not hold"),
    (HandsOutStrangers, "disk", "returned request id 999999, which it does not hold"),
    (Sulks, "disk", r"returned None with force=True while holding 1 requests"),
    (Sulks, "host", r"returned None with force=True while holding 1 requests"),
    (ReturnsText, "host", r"returned 'first', expected a request id it holds \(int\) or None"),
])
def test_contract_violations_are_caught_and_named(cls, level, expected):
    with pytest.raises(disksched.PluginError, match=rf"plug-in scheduler '{cls.name}': dispatch\(\) broke the scheduler contract at t = [\d.]+ ms: {expected}"):
        disksched.run(_cfg(host__queue_threshold=4), overrides={f"{level}.scheduler": cls.name}, schedulers=[cls])


class FailsToStart(PyFcfs):
    name = "fails_to_start"

    def __init__(self):
        super().__init__()
        _helper_that_fails(1)


class CheckedTunable(PyFcfs):
    name = "checked_tunable"
    tunables = {"depth": disksched.Tunable("requests", 1, 4, 64, "an even depth", integer=True)}

    @property
    def depth(self):
        return self._depth

    @depth.setter
    def depth(self, v):
        if v % 2:
            raise ValueError(f"depth {v} must be even")
        self._depth = v


@pytest.mark.parametrize("cls,settings,error", [
    (FailsToStart, {}, "ZeroDivisionError"),
    (CheckedTunable, {"depth": 5}, "ValueError: depth 5 must be even"),
])
def test_an_exception_while_constructing_a_plugin_is_its_init_error(cls, settings, error):
    over = {"host.scheduler": cls.name, **{f"host.set.{k}": v for k, v in settings.items()}}
    with pytest.raises(disksched.PluginError) as e:
        disksched.run(_cfg(), overrides=over, schedulers=[cls])
    msg = str(e.value)
    assert msg.splitlines()[0] == f"plug-in scheduler '{cls.name}': __init__() raised at t = 0.000000 ms:"
    assert "test_plugins.py" in msg and error in msg
    assert "disksched/" not in msg.replace("tests/test_plugins.py", "")
    # Built mid-run (a switch): the time of the switch.
    sim = disksched.Simulation(_cfg(), schedulers=[cls])
    sim.run(until_ms=250)
    with pytest.raises(disksched.PluginError, match=rf"^plug-in scheduler '{cls.name}': __init__\(\) raised at t = 250\.000000 ms:\n"):
        sim.switch("host", cls.name, **settings)


def _raising_in(method):
    class Hooks(PyFcfs):
        name = "hooks"

        def dispatch(self, ctx, force):
            # Holding back unforced asks wake_at_ns when to look again.
            return super().dispatch(ctx, force) if force or method != "wake_at_ns" else None

        def wake_at_ns(self):
            self._raise_if("wake_at_ns")

        def init_class(self, flow):
            self._raise_if("init_class")

        def fini_class(self, flow):
            self._raise_if("fini_class")

        def counters(self):
            self._raise_if("counters")
            return {}

        def _raise_if(self, hook):
            if hook == method:
                raise RuntimeError(f"{hook} fails")

    return Hooks


@pytest.mark.parametrize("method", ["init_class", "wake_at_ns", "counters", "fini_class"])
def test_hooks_called_without_a_context_report_the_time_now(method):
    cfg = _cfg(host__scheduler="hooks", host__class_expire_ms=1)

    def drive(hooks):
        sim = disksched.Simulation(cfg, schedulers=[hooks], workload=False)
        sim.run(until_ms=300)
        sim.submit(1000, 8, flow=5)  # init_class(5), insert, dispatch (and wake_at_ns) at 300 ms
        sim.run(until_ms=600)
        sim.submit(2_000_000, 8, flow=6)
        done = sim.run(until_ms=900)  # its completion finds flow 5 idle for over 1 ms: fini_class(5) then
        sim.result()  # counters, at 900 ms
        return done

    (second,) = drive(_raising_in(None))
    t_ms = {"init_class": 300, "wake_at_ns": 300, "fini_class": second["done_ns"] / 1e6, "counters": 900}[method]
    with pytest.raises(disksched.PluginError, match=rf"^plug-in scheduler 'hooks': {method}\(\) raised at t = {t_ms:.6f} ms:\n"):
        drive(_raising_in(method))


KEPT = []


class KeepsTheContext(PyFcfs):
    name = "keeps"

    def insert(self, id, ctx):
        KEPT.append(ctx)
        super().insert(id, ctx)


def test_a_context_used_after_its_call_is_an_error_not_a_crash():
    disksched.run(_cfg(), overrides={"host.scheduler": "keeps"}, schedulers=[KeepsTheContext])
    with pytest.raises(RuntimeError, match="valid only during the call it was passed to"):
        KEPT[0].now_ns
    with pytest.raises(RuntimeError, match="valid only during the call it was passed to"):
        KEPT[0].positioning_ns(0)


def test_the_context_answers_match_the_request_and_the_predictor():
    seen = []

    class Peek(PyFcfs):
        name = "peek"

        def insert(self, id, ctx):
            r = ctx.request(id)
            p = ctx.predict(id)
            seen.append((r, p, ctx.positioning_ns(id), ctx.lbn(id), ctx.seq(id), ctx.cylinder(id), ctx.now_ns))
            super().insert(id, ctx)

        def dispatch(self, ctx, force):
            for id in self.queue:
                with pytest.raises(KeyError):
                    ctx.request(id + 100_000)  # not held
            return super().dispatch(ctx, force)

    rec = _records(_cfg(), overrides={"host.scheduler": "peek"}, schedulers=[Peek])
    assert len(seen) == len(rec)
    by_seq = rec.set_index("seq")
    for r, p, pos, lbn, seq, cyl, now in seen:
        row = by_seq.loc[r.seq]
        assert (r.lbn, r.blocks, bool(r.is_write), r.arrival_ns) == (row.lbn, row.blocks, row.is_write, row.arrival_ns)
        assert (lbn, seq, cyl, now) == (r.lbn, r.seq, r.cylinder, r.arrival_ns)
        assert p.positioning_ns == pos == p.overhead_ns + p.seek_ns + p.bus_wait_ns + p.rotation_ns
        assert r.class_ == "best-effort" and r.deadline_ns is None
        # Rotation waits less than a revolution (Atlas 10K: 10,025 rpm -> 5.985 ms).
        assert 0 <= p.rotation_ns < 60e9 / 10025 + 1


PLUGIN_FILE = textwrap.dedent('''
    import disksched

    class Lifo(disksched.Scheduler):
        name = "lifo"
        def __init__(self):
            self.stack = []
        def insert(self, id, ctx):
            self.stack.append(id)
        def dispatch(self, ctx, force):
            return self.stack.pop() if self.stack else None
''')


def _cli():
    return [sys.executable, "-m", "disksched"]


def test_cli_plugin_file_makes_its_schedulers_nameable(tmp_path):
    (tmp_path / "mine.py").write_text(PLUGIN_FILE + "\nfrom disksched.pysched import PySptf\n")
    cfg = tmp_path / "run.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[host]\nscheduler = "lifo"\nqueue_threshold = 1\n'
                   '[workload]\nkind = "open"\ninterarrival_ms = 10.0\n[run]\nrequests = 2000\n')
    out = subprocess.run(_cli() + ["run", str(cfg), "--plugin", str(tmp_path / "mine.py"), "--json"],
                         capture_output=True, text=True, check=True)
    lifo = json.loads(out.stdout)
    ref = disksched.run(cfg, schedulers=[Lifo], records=False)
    # --json: the summary's figures, with the counters and provenance beside them (issue 36).
    assert {k: v for k, v in lifo.items() if k not in ("counters", "provenance")} == ref.summary
    assert lifo["counters"]["completed"] == ref.counters["completed"] == 2000
    # --out runs the simulation in a process of its own: the plug-in is registered there too.
    subprocess.run(_cli() + ["run", str(cfg), "--plugin", str(tmp_path / "mine.py"), "--out", str(tmp_path / "o")],
                   capture_output=True, text=True, check=True)
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["summary"] == ref.summary
    # Without --plugin the name is unknown: one line, exit 2. An imported class is not registered.
    bad = subprocess.run(_cli() + ["run", str(cfg)], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown scheduler 'lifo'" in bad.stderr
    bad = subprocess.run(_cli() + ["run", str(cfg), "--set", "host.scheduler=py_sptf", "--plugin", str(tmp_path / "mine.py")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown scheduler 'py_sptf'" in bad.stderr


def test_ctrl_c_stops_a_run_with_a_python_scheduler(tmp_path):
    started = tmp_path / "started"
    # The plug-in marks the run as started (interpreter start-up on a loaded machine takes seconds).
    (tmp_path / "mine.py").write_text(PLUGIN_FILE + textwrap.dedent(f'''
        class Marks(Lifo):
            name = "lifo"
            def insert(self, id, ctx):
                if not hasattr(self, "marked"):
                    self.marked = open({str(started)!r}, "w").close()
                super().insert(id, ctx)
        del Lifo
    '''))
    cfg = tmp_path / "long.toml"
    cfg.write_text('[disk]\nmodel = "atlas10k"\n[host]\nscheduler = "lifo"\nqueue_threshold = 1\n'
                   '[workload]\nkind = "open"\ninterarrival_ms = 10.0\n[run]\nrequests = 1000000000\n')
    p = subprocess.Popen(_cli() + ["run", str(cfg), "--plugin", str(tmp_path / "mine.py")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
    time.sleep(0.5)
    assert p.poll() is None, p.communicate()
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert time.monotonic() - t0 < 10


def _capped_sptf():
    from pathlib import Path

    from disksched.plugins import load_file

    scheds, _ = load_file(Path(__file__).parent.parent / "examples" / "plugins" / "capped_sptf.py")
    return scheds["capped_sptf"]


@pytest.mark.parametrize("level", ["host", "disk"])
def test_the_docs_worked_example_is_fcfs_at_cap_0_and_sptf_with_a_cap_longer_than_any_wait(level):
    cfg = _cfg(host__queue_threshold=1 if level == "host" else 16)
    capped = _capped_sptf()
    at = lambda name, **s: _records(cfg, overrides={f"{level}.scheduler": name, **{f"{level}.set.{k}": v for k, v in s.items()}},
                                    schedulers=[capped])
    assert at("capped_sptf", max_wait_ms=0).equals(_records(cfg, overrides={f"{level}.scheduler": "fcfs"}))
    assert at("capped_sptf", max_wait_ms=60_000).equals(_records(cfg, overrides={f"{level}.scheduler": "sptf"}))
    mid = disksched.run(cfg, overrides={f"{level}.scheduler": "capped_sptf", f"{level}.set.max_wait_ms": 20}, schedulers=[capped])
    assert 0 < mid.counters["scheduler"][f"{level}.capped"] < mid.counters["completed"]

"""disksched.Simulation: a run advanced step by step from Python gives the
same result as disksched.run, and can be inspected, fed and switched."""

import pytest

import disksched
from disksched.pysched import PySptf

CFG = {"seed": 2, "disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"scheduler": "fcfs", "queue_threshold": 8},
       "workload": {"kind": "oltp"}, "run": {"requests": 3000, "records": True}}


def test_stepping_in_pieces_gives_the_result_of_run():
    ref = disksched.run(CFG)
    sim = disksched.Simulation(CFG)
    for t in range(0, 5000, 77):
        sim.run(until_ms=t)
        assert sim.now_ms == t
    times = [sim.step() for _ in range(100)]
    assert times == sorted(times) and times[0] >= 4928
    assert sim.run() == []  # nothing was submitted
    r = sim.result()
    assert r.summary == ref.summary and r.counters == ref.counters
    assert r.records().equals(ref.records())
    with pytest.raises(disksched.DiskschedError, match="has ended"):
        sim.run()


def test_inspecting_queues_heads_and_counters():
    sim = disksched.Simulation(CFG)
    sim.run(until_ms=3000)
    q, c = sim.queues(), sim.counters()
    assert set(q) == {"host", "disk"} and len(q["disk"]) == 1
    # OLTP: 10 closed clients, host threshold 8: what has arrived is done, queued, or in service (at most one).
    outstanding = c["arrived"] - c["completed"]
    assert q["host"] + q["disk"][0] <= outstanding <= q["host"] + q["disk"][0] + 1 <= 10
    (head,) = sim.heads()
    assert 0 <= head["cylinder"] < 100_000 and head["free_at_ms"] >= 0
    assert sim.schedulers() == {"host": "fcfs", "disk": "sptf"}


def test_switching_a_scheduler_mid_run_is_the_reconfigure_path():
    # Switching by hand at 2 s is the [[reconfigure]] entry at 2 s.
    ref = disksched.run({**CFG, "reconfigure": [{"at_ms": 2000, "queue": "disk", "scheduler": "fcfs"}]})
    sim = disksched.Simulation(CFG)
    sim.run(until_ms=2000)
    sim.switch("disk", "fcfs")
    assert sim.schedulers()["disk"] == "fcfs"
    sim.run()
    assert sim.result().records().equals(ref.records())
    # A Python scheduler too; py_sptf schedules as sptf, so the run is the unswitched one.
    sim = disksched.Simulation(CFG, schedulers=[PySptf])
    sim.run(until_ms=2000)
    sim.switch("disk", "py_sptf")
    sim.run()
    assert sim.result().records().equals(disksched.run(CFG).records())
    with pytest.raises(disksched.DiskschedError, match=r"host\.set\.window_pct: 3000 % is out of range \[0, 1000\]"):
        disksched.Simulation(CFG).switch("host", "sptf_sw", window_pct=3000)
    with pytest.raises(disksched.DiskschedError, match="'controller': expected host, or disk"):
        disksched.Simulation(CFG).switch("controller", "fcfs")


def test_submitted_requests_are_served_and_timed_by_the_drive():
    sim = disksched.Simulation(CFG, workload=False)
    sim.submit(1000, 8)
    sim.submit(5_000_000, 16, write=True)
    done = sim.run(until_ms=100)
    assert [(d["lbn"], d["blocks"], d["is_write"]) for d in done] == [(1000, 8, False), (5_000_000, 16, True)]
    a, b = done
    assert a["arrival_ns"] == b["arrival_ns"] == 0
    assert 0 < a["done_ns"] <= b["started_ns"] < b["done_ns"]  # one at a time, FCFS at the host
    with pytest.raises(disksched.DiskschedError, match="below the capacity of"):
        sim.submit(10 ** 12, 8)
    with pytest.raises(disksched.DiskschedError, match="expected at least 1 block"):
        sim.submit(0, 0)
    with pytest.raises(disksched.DiskschedError, match="is before the simulated time now"):
        sim.run(until_ms=50)


def test_a_tunable_switched_mid_run_is_the_reconfigure_entry_with_set():
    entry = {"at_ms": 2000, "queue": "disk", "scheduler": "sptf_sw", "set": {"window_pct": 200}}
    ref = disksched.run({**CFG, "reconfigure": [entry]}).records()
    sim = disksched.Simulation(CFG)
    sim.run(until_ms=2000)
    sim.switch("disk", "sptf_sw", window_pct=200)
    sim.run()
    assert sim.result().records().equals(ref)
    # The setting matters: the default window (60 %) and no switch at all (sptf) both schedule otherwise.
    default = disksched.run({**CFG, "reconfigure": [{**entry, "set": {}}]}).records()
    assert not default.done_ns.equals(ref.done_ns)
    assert not disksched.run(CFG).records().done_ns.equals(ref.done_ns)


def _failing(exc):
    class Fails(PySptf):
        name = "fails"
        raised_at_ns = []

        def dispatch(self, ctx, force):
            if ctx.now_ms > 1500:
                self.raised_at_ns.append(ctx.now_ns)
                raise exc("no more")
            return super().dispatch(ctx, force)

    return Fails


LATER_CALLS = [lambda s: s.run(), lambda s: s.run(until_ms=10_000), lambda s: s.step(), lambda s: s.result(),
               lambda s: s.submit(0, 8), lambda s: s.switch("disk", "sptf"), lambda s: s.queues(), lambda s: s.counters(),
               lambda s: s.heads(), lambda s: s.now_ms, lambda s: s.completions()]


def test_after_a_plugin_error_the_simulation_stays_failed():
    fails = _failing(ValueError)
    sim = disksched.Simulation(CFG, schedulers=[fails], overrides={"disk.scheduler": "fails"})
    sim.run(until_ms=1000)  # before the plug-in's error
    with pytest.raises(disksched.PluginError) as e:
        sim.run(until_ms=4000)
    first = str(e.value).splitlines()[0]
    (t_ns,) = fails.raised_at_ns
    assert first == f"plug-in scheduler 'fails': dispatch() raised at t = {t_ns / 1e6:.6f} ms:"
    assert "ValueError: no more" in str(e.value) and "test_simulation.py" in str(e.value)
    # The failed scheduler serves FCFS meanwhile: no later call may look like a normal run.
    for call in LATER_CALLS:
        with pytest.raises(disksched.DiskschedError, match="(?s)failed earlier.*PluginError: plug-in scheduler 'fails': dispatch"):
            call(sim)


def test_after_ctrl_c_in_a_plugin_the_simulation_stays_failed():
    sim = disksched.Simulation(CFG, schedulers=[_failing(KeyboardInterrupt)], overrides={"disk.scheduler": "fails"})
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    for call in LATER_CALLS:
        # The interruption says where it happened (issue 36), then the plug-in's own words.
        with pytest.raises(disksched.DiskschedError,
                           match=r"(?s)failed earlier.*KeyboardInterrupt: in plug-in scheduler 'fails', dispatch\(\) at t = [0-9.]+ ms: no more"):
            call(sim)


FB = {"seed": 3, "disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"queue_threshold": 8},
      "workload": {"kind": "oltp"}, "run": {"requests": 4000},
      "freeblock": {"idle": True, "tasks": [{"name": "a", "blocks": [0, 3_000_000]},
                                            {"name": "b", "blocks": [3_000_000, 6_000_000]}]}}


def _freeblock(result):
    return result.summary["freeblock"]


def test_background_tasks_paused_resumed_and_aborted_from_python_are_the_event_schedule():
    events = [{"at_ms": 5000, "task": "a", "action": "pause"}, {"at_ms": 10000, "task": "b", "action": "abort"},
              {"at_ms": 15000, "task": "a", "action": "resume"}]
    scheduled = disksched.run({**FB, "freeblock": {**FB["freeblock"], "events": events}})
    sim = disksched.Simulation(FB)
    runs, phase = [], ["before"]
    sim.on_background_transfer(lambda disk, task, lo, hi, ms: runs.append((disk, task, lo, hi, phase[0])))
    for at_ms, act, task, then in ((5000, sim.pause_task, 0, "a paused"), (10000, sim.abort_task, 1, "b aborted"),
                                   (15000, sim.resume_task, 0, "a resumed")):
        # An event at t takes effect after the events before t (the schedule's order at equal times
        # puts completions and arrivals at t first): run to just before t, then act at t.
        sim.run(until_ms=at_ms - 1e-6)
        sim.run(until_ms=at_ms)
        act(task)
        phase[0] = then
    sim.run()
    stepped = sim.result()
    assert _freeblock(stepped)["tasks"] == _freeblock(scheduled)["tasks"]
    assert stepped.summary["host_response_ms"] == scheduled.summary["host_response_ms"]
    # The callback heard every block credited, once, from the disk; none of a's while it was paused,
    # none of b's after its abort.
    seen = set()
    for disk, task, lo, hi, when in runs:
        assert disk == 0 and (task, when) not in ((0, "a paused"), (1, "b aborted"), (1, "a resumed")), (task, when)
        assert seen.isdisjoint(range(lo, hi))
        seen.update(range(lo, hi))
    assert {(t, w) for _, t, _, _, w in runs} >= {(0, "before"), (1, "before"), (0, "a resumed")}
    f = _freeblock(stepped)
    assert len(seen) == f["free_blocks"] + f["idle_blocks"] > 0
    assert [t["state"] for t in f["tasks"]] == ["done" if f["tasks"][0]["blocks_done"] == 3_000_000 else "active",
                                                "aborted"]


def test_a_task_added_from_python_starts_then_and_bad_tasks_are_one_line_errors():
    sim = disksched.Simulation({**FB, "freeblock": {"idle": True, "tasks": [{"name": "a", "blocks": [0, 1_000_000]}]}})
    firsts = {}
    sim.on_background_transfer(lambda disk, task, lo, hi, ms: firsts.setdefault(task, ms))
    sim.run(until_ms=8000)
    assert sim.add_task((1_000_000, 2_000_000), priority=2, name="late") == 1
    with pytest.raises(disksched.DiskschedError) as e:
        sim.pause_task(5)
    assert "5 does not exist" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(disksched.DiskschedError, match="overlaps"):
        sim.add_task((500_000, 1_500_000))
    with pytest.raises(disksched.DiskschedError, match="priority"):
        sim.add_task((3_000_000, 3_100_000), priority=5000)
    sim.run()
    f = _freeblock(sim.result())
    assert firsts[0] < 1000 and 8000 <= firsts[1] < 9000, firsts
    assert f["tasks"][1]["name"] == "late" and f["tasks"][1]["started_ms"] == 8000 and f["tasks"][1]["blocks_done"] > 0


def test_an_exception_in_the_transfer_callback_ends_the_run_with_it():
    sim = disksched.Simulation(FB)

    def cb(disk, task, lo, hi, ms):
        raise RuntimeError("my callback broke")

    sim.on_background_transfer(cb)
    with pytest.raises(RuntimeError, match="my callback broke"):
        sim.run()
    with pytest.raises(disksched.DiskschedError, match="failed earlier"):
        sim.result()


def test_a_prefetch_added_from_python_expires_at_its_deadline():
    sim = disksched.Simulation({**FB, "workload": {"kind": "closed", "clients": 1, "think_time_ms": 20},
                                "run": {"requests": 2000}, "freeblock": {"idle": True, "tasks": [
                                    {"name": "a", "blocks": [0, 1000]}]}})
    moved = []
    sim.on_background_transfer(lambda disk, task, lo, hi, ms: moved.append((task, hi - lo, ms)))
    sim.run(until_ms=2000)
    assert sim.add_task((1_000_000, 3_000_000), kind="prefetch", deadline_ms=1500) == 1
    with pytest.raises(disksched.DiskschedError, match="deadline_ms"):
        sim.add_task((3_000_000, 3_001_000), kind="prewrite")
    with pytest.raises(disksched.DiskschedError, match="bogus") as e:
        sim.add_task((3_000_000, 3_001_000), kind="bogus")
    assert "\n" not in str(e.value)
    with pytest.raises(disksched.DiskschedError, match="to_blocks"):
        sim.add_task((3_000_000, 3_001_000), kind="backup")
    sim.run()
    task = _freeblock(sim.result())["tasks"][1]
    mine = [m for m in moved if m[0] == 1]
    assert mine and all(2000 <= ms <= 3500 for _, _, ms in mine)
    assert task["state"] == "expired" and task["blocks_done"] == sum(n for _, n, _ in mine) < 2_000_000


def test_a_backup_added_from_python_and_the_tasks_progress_per_window():
    cfg = {**FB, "workload": {"kind": "closed", "clients": 1, "think_time_ms": 20}, "run": {"requests": 2000,
           "series_window_ms": 1000}, "freeblock": {"idle": True, "tasks": [{"name": "a", "blocks": [0, 100_000]}]}}
    sim = disksched.Simulation(cfg)
    sim.run(until_ms=3000)
    assert sim.add_task((200_000, 240_000), kind="backup", to_blocks=(4_000_000, 4_040_000), name="copy") == 1
    sim.run()
    r = sim.result()
    tasks = _freeblock(r)["tasks"]
    assert tasks[1]["state"] == "done" and tasks[1]["blocks_done"] == tasks[1]["blocks_total"] == 80_000
    ts = r.task_series()
    assert set(ts["task"]) == {"a", "copy"}
    for t in tasks:
        rows = ts[ts["task"] == t["name"]]
        # Per window and cumulative, the series adds up to what the summary says was moved.
        assert rows["blocks"].sum() == rows["done"].iloc[-1] == t["blocks_done"]
        assert (rows["mb_per_s"] == rows["blocks"] * 512 / 1.0 / 1e6).all()
    copy = ts[ts["task"] == "copy"]
    assert copy[copy["time_s"] < 3]["blocks"].sum() == 0, "nothing moved before the task was added"

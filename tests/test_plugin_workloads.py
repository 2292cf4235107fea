"""Python workloads (kind = "plugin", alone and as mix members) and the
classifier hook."""

import pytest

import disksched
from disksched.pysched import PyFcfs

CFG = {"seed": 5, "disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"scheduler": "fcfs", "queue_threshold": 4},
       "workload": {"kind": "open", "interarrival_ms": 6.0, "size_kb": 8.0}, "run": {"requests": 3000, "records": True}}


def test_a_python_open_workload_replaying_a_builtin_run_gives_identical_records():
    ref = disksched.run(CFG).records()
    rows = list(ref.sort_values("seq")[["arrival_ns", "lbn", "blocks", "is_write"]].itertuples(index=False))

    class Replay(disksched.Workload):
        name = "replay"

        def requests(self):
            for t, lbn, blocks, w in rows:
                yield disksched.Io(lbn=int(lbn), blocks=int(blocks), write=bool(w), at_ns=int(t))

    py = disksched.run({**CFG, "workload": {"kind": "plugin", "name": "replay"}}, workloads=[Replay]).records()
    assert py.equals(ref)


class Think(disksched.Workload):
    name = "think"
    clients = 3
    tunables = {"think_ms": disksched.Tunable("ms", 0, 5, 100, "think time")}

    def first(self, client):
        return disksched.Io(lbn=client * 1000, blocks=8), 1.0

    def next(self, client, now_ms):
        return disksched.Io(lbn=(client * 100_000 + int(now_ms) * 8) % (self.capacity_blocks - 8), blocks=8), self.think_ms


def test_a_closed_python_workload_issues_each_next_request_a_think_time_after_a_completion():
    r = disksched.run({**CFG, "workload": {"kind": "plugin", "name": "think", "set": {"think_ms": 2.5}}},
                      workloads=[Think]).records()
    assert sorted(r.client.unique()) == [0, 1, 2]
    for _, g in r.sort_values("arrival_ns").groupby("client"):
        arrivals, done = g.arrival_ns.to_numpy(), g.done_ns.to_numpy()
        assert arrivals[0] == 1_000_000  # first(): 1 ms from the start
        assert (arrivals[1:] == done[:-1] + 2_500_000).all()  # next(): 2.5 ms after the previous completion
    with pytest.raises(disksched.DiskschedError, match=r"workload\.set\.think_ms: 500 ms is out of range \[0, 100\]"):
        disksched.run({**CFG, "workload": {"kind": "plugin", "name": "think", "set": {"think_ms": 500}}}, workloads=[Think])


def test_a_python_workload_is_a_mix_member_with_the_members_class_flow_and_deadline():
    mix = {"kind": "mix", "clients": [{"kind": "open", "interarrival_ms": 20.0},
                                      {"kind": "plugin", "name": "think", "class": "real-time", "flow": 10, "deadline_ms": 30}]}
    r = disksched.run({**CFG, "workload": mix}, workloads=[Think])
    rec = r.records()
    py = rec[rec.client >= 10]
    assert sorted(py.client.unique()) == [10, 11, 12] and (py["class"] == "real-time").all()
    assert (rec[rec.client == 0]["class"] == "best-effort").all()
    assert r.summary["deadline_requests"] == len(py[~py.warmup]) > 0


def _flow_recorder():
    """A host FCFS that records the flow the scheduler sees of each request, by seq."""
    class RecordsFlows(PyFcfs):
        name = "records_flows"
        flows = {}

        def insert(self, id, ctx):
            self.flows[ctx.seq(id)] = ctx.request(id).flow
            super().insert(id, ctx)

    return RecordsFlows


def test_the_classifier_sets_flow_class_and_deadline_of_every_request():
    seen = []

    def classify(a):
        seen.append((a.client, a.lbn, a.blocks, a.is_write, a.arrival_ns))
        return (a.client + 100, "background" if a.is_write else "best-effort", 50.0 if a.is_write else None)

    recorder = _flow_recorder()
    r = disksched.run(CFG, classifier=classify, schedulers=[recorder], overrides={"host.scheduler": "records_flows"})
    rec = r.records().sort_values("seq")
    assert seen == list(zip(rec.client, rec.lbn, rec.blocks, rec.is_write, rec.arrival_ns))
    assert recorder.flows == {s: c + 100 for s, c in zip(rec.seq, rec.client)}
    assert ((rec["class"] == "background") == rec.is_write).all()
    assert r.summary["deadline_requests"] == int(rec[~rec.warmup].is_write.sum()) > 0
    # None keeps the workload's own classification: the run is the plain one.
    assert disksched.run(CFG, classifier=lambda a: None).records().equals(disksched.run(CFG).records())


def test_the_classifier_classifies_a_trace_workload(tmp_path):
    # DiskSim ASCII: time_ms device lbn blocks flags (1 = read); every fourth a write.
    lines = [f"{i * 4.0} 0 {(i * 7919) % 1_000_000 * 8} 8 {0 if i % 4 == 0 else 1}" for i in range(400)]
    (tmp_path / "small.trace").write_text("\n".join(lines) + "\n")
    cfg = {**CFG, "workload": {"kind": "trace", "path": str(tmp_path / "small.trace"), "format": "disksim-ascii"}, "run": {"records": True}}
    flow_of = lambda lbn: 1 + lbn // 8 % 5

    def classify(a):
        return (flow_of(a.lbn), "real-time" if a.is_write else "best-effort", 20.0 if a.is_write else None)

    recorder = _flow_recorder()
    r = disksched.run(cfg, classifier=classify, schedulers=[recorder], overrides={"host.scheduler": "records_flows"})
    rec = r.records().sort_values("seq")
    assert len(rec) == 400 and sorted(set(recorder.flows.values())) == [1, 2, 3, 4, 5]
    assert recorder.flows == {s: flow_of(lbn) for s, lbn in zip(rec.seq, rec.lbn)}
    assert ((rec["class"] == "real-time") == rec.is_write).all() and rec.is_write.sum() == 100
    assert r.summary["deadline_requests"] == int(rec[~rec.warmup].is_write.sum())


class Backwards(disksched.Workload):
    name = "backwards"

    def requests(self):
        yield disksched.Io(lbn=0, blocks=8, at_ms=5.0)
        yield disksched.Io(lbn=8, blocks=8, at_ms=4.0)


class TooFar(disksched.Workload):
    name = "toofar"

    def requests(self):
        yield disksched.Io(lbn=10 ** 12, blocks=8, at_ms=1.0)


class Explodes(disksched.Workload):
    name = "explodes"
    clients = 2

    def first(self, client):
        return disksched.Io(lbn=0, blocks=8), 0.0

    def next(self, client, now_ms):
        raise ValueError(f"client {client} gives up")


class FailsToStart(Explodes):
    name = "fails_to_start"

    def __init__(self):
        raise ValueError(f"no disk of {self.capacity_blocks} blocks will do")


@pytest.mark.parametrize("cls,pattern", [
    (FailsToStart, r"(?s)^plug-in workload 'fails_to_start': __init__\(\) raised at t = 0\.000000 ms:\nTraceback.*"
                   r"test_plugin_workloads\.py.*ValueError: no disk of \d+ blocks will do"),
    (Backwards, r"plug-in workload 'backwards': requests\(\) at t = 5\.000000 ms: arrival at 4000000 ns is before the previous one"),
    (TooFar, r"plug-in workload 'toofar': requests\(\) at t = 0\.000000 ms: 8 blocks at LBN 1000000000000: expected at least 1 block"),
    (Explodes, r"(?s)plug-in workload 'explodes': next\(\) raised at t = [\d.]+ ms:\nTraceback.*test_plugin_workloads\.py.*ValueError: client \d gives up"),
])
def test_workload_mistakes_and_exceptions_are_named(cls, pattern):
    with pytest.raises(disksched.PluginError, match=pattern):
        disksched.run({**CFG, "workload": {"kind": "plugin", "name": cls.name}}, workloads=[cls])


def test_classifier_mistakes_are_named():
    with pytest.raises(disksched.PluginError, match=r"plug-in classifier: at t = [\d.]+ ms it class 'urgent': expected best-effort"):
        disksched.run(CFG, classifier=lambda a: (0, "urgent", None))
    with pytest.raises(disksched.PluginError, match=r"(?s)plug-in classifier 'classifier': __call__\(\) raised.*KeyError"):
        disksched.run(CFG, classifier=lambda a: {}[a.lbn])


def test_an_unregistered_workload_plugin_is_named():
    with pytest.raises(disksched.DiskschedError, match="unknown workload plug-in 'nope'"):
        disksched.run({**CFG, "workload": {"kind": "plugin", "name": "nope"}})

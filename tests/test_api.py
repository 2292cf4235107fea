"""The Python API: run(), results, records, determinism, errors."""

import numpy as np
import pytest

import disksched


def test_run_returns_summary_and_records(small_oltp):
    r = disksched.run(small_oltp, records=True)
    s = r.summary
    assert s["requests"] == 2000 == s["reads"] + s["writes"]
    assert {k: r.counters[k] for k in ["arrived", "host_dispatched", "drive_dispatched", "completed"]} == {
        "arrived": 2000, "host_dispatched": 2000, "drive_dispatched": 2000, "completed": 2000}
    df = r.records()
    assert len(df) == 2000 and sorted(df.seq) == list(range(2000))
    host_ms = (df.done_ns - df.arrival_ns) / 1e6
    disk_ms = (df.done_ns - df.issued_ns) / 1e6
    assert (host_ms >= disk_ms).all()
    # The summary's mean is the mean of the records (HDR histogram keeps 3 significant digits).
    assert s["host_response_ms"]["mean"] == pytest.approx(host_ms.mean(), rel=2e-3)
    # OLTP: 2:1 reads, sizes in 4 KB multiples, 8 KB mean before rounding up.
    assert 0.6 < (~df.is_write).mean() < 0.73
    assert (df.blocks % 8 == 0).all()


def test_same_seed_is_bit_identical_and_seed_override_changes_it(small_oltp):
    a = disksched.run(small_oltp, records=True).records()
    b = disksched.run(small_oltp, records=True).records()
    assert a.equals(b)
    c = disksched.run(small_oltp, records=True, seed=4).records()
    assert not np.array_equal(a.lbn.values, c.lbn.values)


def test_a_controller_level_is_reported_like_the_host_queue(small_oltp):
    # The host lets 16 through; the controller (added by the override, threshold 1) keeps one at the disk.
    r = disksched.run(small_oltp, records=True, overrides={"controller.scheduler": "rr", "controller.set.wait_ms": 2})
    c = r.counters
    assert c["controller_queue"]["requests"] == c["controller_queue"]["done"] == c["pieces"] == 2000
    assert (c["host_queue"]["max_in_flight"], c["controller_queue"]["max_in_flight"]) == (10, 1)  # OLTP: 10 clients
    assert c["scheduler"]["controller.classes_created"] >= 10
    assert r.summary["max_controller_queue"] == 9
    df = r.records()
    assert ((df.arrival_ns <= df.host_dispatched_ns) & (df.host_dispatched_ns <= df.issued_ns)).all()
    assert (df.host_dispatched_ns < df.issued_ns).any()
    assert "controller_queue" not in disksched.run(small_oltp).counters


def test_records_off_by_default(small_oltp):
    r = disksched.run(small_oltp)
    with pytest.raises(disksched.DiskschedError, match="records=True"):
        r.records()


@pytest.mark.parametrize("change, message", [
    (lambda c: c["host"].update(scheduler="lifo-magic"), "unknown scheduler 'lifo-magic'"),
    (lambda c: c["host"].update(queue_threshold=0), "host.queue_threshold: 0 is out of range [1, 1024]"),
    (lambda c: c.update(workload={"kind": "closed", "clients": 2, "think_time_ms": -1}), "think_time_ms: -1 ms is out of range [0, 1000000000000]"),
    (lambda c: c["disk"].update(model="/nonexistent/disk.toml"), "/nonexistent/disk.toml"),
    (lambda c: c["workload"].update(kind="zipf"), "unknown variant `zipf`"),
])
def test_bad_config_raises_one_line_error(small_oltp, change, message):
    change(small_oltp)
    with pytest.raises(disksched.DiskschedError) as e:
        disksched.run(small_oltp)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_missing_config_file():
    with pytest.raises(disksched.DiskschedError, match="no such config file"):
        disksched.run("/does/not/exist.toml")


def test_scheduler_override_and_tunables(small_oltp):
    r = disksched.run(small_oltp, overrides={"host.scheduler": "rr", "host.set.wait_ms": 5}, records=True)
    assert "host.wait_hits" in r.counters["scheduler"]
    with pytest.raises(disksched.DiskschedError, match=r"host.set.wait_ms: 50 ms is out of range \[0, 30\]"):
        disksched.run(small_oltp, overrides={"host.scheduler": "rr", "host.set.wait_ms": 50})
    with pytest.raises(disksched.DiskschedError, match=r"^overrides host\.queue_treshold: unknown key "
                                                       r"'host\.queue_treshold'; nearest valid key: host\.queue_threshold "):
        disksched.run(small_oltp, overrides={"host.queue_treshold": 16})


def test_registry_and_disks():
    names = {s["name"] for s in disksched.schedulers()}
    assert {"fcfs", "sstf", "clook", "sptf"} <= names
    assert "atlas10k" in disksched.disks()

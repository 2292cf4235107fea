"""The newer workload kinds from Python (dict configs go through the JSON path)."""

import pytest

import disksched


def _cfg(workload, requests=2000):
    return {"seed": 2, "disk": {"model": "atlas10k"}, "host": {"queue_threshold": 4}, "workload": workload,
            "run": {"requests": requests}}


def test_mix_from_a_dict_keeps_member_client_ids():
    df = disksched.run(_cfg({"kind": "mix", "clients": [
        {"kind": "dd", "request_kb": 64, "depth": 2, "flow": 50, "class": "background"},
        {"kind": "hotcold", "clients": 4, "hot_fraction": 0.1, "hot_access_fraction": 0.9, "think_time_ms": 10},
    ]}), records=True).records()
    # dd: 50, 51; hotcold: just past them, 52..55.
    assert sorted(df.client.unique().tolist()) == [50, 51, 52, 53, 54, 55]
    dd = df[df.client < 52].sort_values("seq")
    assert (dd.lbn.diff().dropna() == 128).all()


def test_member_errors_name_the_member():
    with pytest.raises(disksched.DiskschedError, match=r"workload\.clients\[1\]\.mean_distance_kb: -1 KB is out of range \[0, "):
        disksched.run(_cfg({"kind": "mix", "clients": [{"kind": "oltp"}, {"kind": "local", "mean_distance_kb": -1}]}))


@pytest.mark.parametrize("workload", [
    {"kind": "strided", "request_kb": 4, "stride_kb": 16},
    {"kind": "local", "mean_distance_kb": 256, "distance_dist": "normal"},
    {"kind": "onoff", "on_rate_per_s": 500, "mean_on_ms": 10, "mean_off_ms": 40},
    {"kind": "schedule", "rates": [[0, 100], [1000, 300]]},
])
def test_each_kind_runs(workload):
    r = disksched.run(_cfg(workload, 500))
    assert r.counters["completed"] == 500

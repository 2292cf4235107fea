"""`disksched run --output-format json` (issue 36, item 6): fio's JSON shape, every figure checked
against arithmetic done here on the run's exact per-request records (records.parquet), not against
the code that wrote the report."""

import json
import math
import tomllib

import numpy as np
import pandas as pd
import pytest

from conftest import cli

PERCENTILES = [50, 90, 99, 99.9]
# 4 KB random reads and writes (two thirds reads) at a load that queues, the first 300 left out.
SETS = ["--set", "workload.kind=open", "--set", "workload.interarrival_ms=8", "--set", "run.requests=3000",
        "--set", "run.warmup_requests=300"]
SECTOR_BYTES = 512  # the Atlas 10K's (disksched disks show atlas10k --toml: sector_bytes)


@pytest.fixture(scope="module")
def fio_and_records(tmp_path_factory):
    out = tmp_path_factory.mktemp("fio") / "run"
    p = cli("run", "examples/oltp.toml", *SETS, "--out", out, "--records", "--output-format", "json",
            "--percentile-list", ":".join(map(str, PERCENTILES)))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), pd.read_parquet(out / "records.parquet")


def nearest_rank(values: np.ndarray, p: float) -> int:
    """The smallest value with at least p% of the values at or below it."""
    v = np.sort(values)
    return int(v[math.ceil(p / 100 * len(v)) - 1])


def test_each_direction_matches_the_records(fio_and_records):
    doc, rec = fio_and_records
    m = rec[~rec.warmup]
    runtime_ns = int(m.done_ns.max()) - int(m.arrival_ns.min())
    job = doc["jobs"][0]
    assert job["jobname"] == "oltp.toml"
    assert job["job_runtime"] == round(runtime_ns / 1e6)
    for name, rows in (("read", m[~m.is_write]), ("write", m[m.is_write])):
        d = job[name]
        assert len(rows) > 100, name  # both directions really ran
        io_bytes = int(rows.blocks.astype(np.int64).sum()) * SECTOR_BYTES
        assert d["total_ios"] == len(rows)
        assert d["io_bytes"] == io_bytes and d["io_kbytes"] == io_bytes // 1024
        assert d["bw"] == pytest.approx(io_bytes / 1024 / (runtime_ns / 1e9), rel=1e-12)
        assert d["iops"] == pytest.approx(len(rows) / (runtime_ns / 1e9), rel=1e-12)
        for key, ns in (("lat_ns", rows.done_ns - rows.arrival_ns), ("clat_ns", rows.done_ns - rows.issued_ns),
                        ("slat_ns", rows.issued_ns - rows.arrival_ns)):
            ns = ns.to_numpy(np.int64)
            s = d[key]
            assert (s["min"], s["max"], s["N"]) == (int(ns.min()), int(ns.max()), len(ns)), key
            assert s["mean"] == pytest.approx(ns.mean(), rel=1e-12)
            assert s["stddev"] == pytest.approx(ns.std(), rel=1e-9)
            if key == "slat_ns":
                assert "percentile" not in s
                continue
            assert list(s["percentile"]) == ["50.000000", "90.000000", "99.000000", "99.900000"]
            for p in PERCENTILES:
                assert s["percentile"][f"{p:.6f}"] == nearest_rank(ns, p), (key, p)
                assert s["percentile"][f"{p:.6f}"] == int(np.percentile(ns, p, method="inverted_cdf"))


def test_the_split_adds_up_to_the_summary(fio_and_records):
    doc, rec = fio_and_records
    s = json.loads((cli("run", "examples/oltp.toml", *SETS, "--json")).stdout)
    job = doc["jobs"][0]
    assert job["read"]["total_ios"] + job["write"]["total_ios"] == s["requests"] == 2700
    assert (job["read"]["total_ios"], job["write"]["total_ios"]) == (s["reads"], s["writes"])
    assert job["read"]["iops"] + job["write"]["iops"] == pytest.approx(s["iops"], rel=1e-9)
    assert doc["disksched"]["counters"]["completed"] == 3000
    assert doc["global options"]["percentile_list"] == "50:90:99:99.9"


def test_without_out_the_same_report_and_fios_default_percentiles():
    p = cli("run", "examples/oltp.toml", *SETS, "--output-format", "json", "--percentile-list", "99.9:50:90:99")
    q = cli("run", "examples/oltp.toml", *SETS, "--output-format", "json")
    assert p.returncode == q.returncode == 0, p.stderr + q.stderr
    a, b = json.loads(p.stdout)["jobs"][0], json.loads(q.stdout)["jobs"][0]
    assert list(a["read"]["lat_ns"]["percentile"]) == ["50.000000", "90.000000", "99.000000", "99.900000"]
    # fio's default list has 17 entries from 1 to 99.99; the shared ones agree.
    assert len(b["read"]["lat_ns"]["percentile"]) == 17 and "99.990000" in b["read"]["lat_ns"]["percentile"]
    for k, v in a["read"]["lat_ns"]["percentile"].items():
        assert b["read"]["lat_ns"]["percentile"][k] == v
    assert a["read"]["io_bytes"] == b["read"]["io_bytes"]


@pytest.mark.parametrize("args, said", [
    (["--output-format", "xml"], "--output-format 'xml': expected one of normal, json"),
    (["--output-format", "json", "--percentile-list", "50:x"], "'x' is not a number"),
    (["--output-format", "json", "--percentile-list", "0:50"], "0 is outside (0, 100]"),
    (["--output-format", "json", "--percentile-list", "nan"], "nan is outside (0, 100]"),
    (["--output-format", "json", "--json"], "choose one"),
    (["--percentile-list", "50"], "applies to --output-format json"),
])
def test_bad_options_are_one_line(args, said):
    p = cli("run", "examples/oltp.toml", "--set", "run.requests=100", *args)
    assert p.returncode != 0 and said in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_spec_named_relative_to_the_config_folder(tmp_path):
    # disk.model = "desk.toml" is found beside the config (as the core finds it), whatever the current folder.
    p = cli("disks", "datasheet", "--name", "desk", "--capacity-gb", "250", "--rpm", "7200", "--outer-mb-s", "88",
            "--inner-mb-s", "45", "--track-to-track-ms", "0.8", "--average-seek-ms", "8.5", "--full-stroke-ms", "17",
            "-o", tmp_path / "desk.toml")
    assert p.returncode == 0, p.stderr
    block = tomllib.loads((tmp_path / "desk.toml").read_text()).get("sector_bytes", 512)
    (tmp_path / "c.toml").write_text('seed = 1\n[disk]\nmodel = "desk.toml"\n[workload]\nkind = "oltp"\n'
                                     '[run]\nrequests = 300\n')
    p = cli("run", tmp_path / "c.toml", "--output-format", "json", "--out", tmp_path / "o", "--records")
    assert p.returncode == 0, p.stderr
    job = json.loads(p.stdout)["jobs"][0]
    rec = pd.read_parquet(tmp_path / "o" / "records.parquet")
    for name, rows in (("read", rec[~rec.is_write]), ("write", rec[rec.is_write])):
        assert job[name]["io_bytes"] == int(rows.blocks.astype(np.int64).sum()) * block

"""`disksched characterize` on a datasheet disk, checked against the spec file's own
figures, and `validate`'s per-request error on a hand-made trace pair."""

import json
import math
import tomllib

import numpy as np
import pytest

from conftest import cli, pixels_of

DATASHEET = ["--name", "desk", "--capacity-gb", "250", "--rpm", "7200", "--outer-mb-s", "88", "--inner-mb-s", "45",
             "--track-to-track-ms", "0.8", "--average-seek-ms", "8.5", "--full-stroke-ms", "17", "--cache-kb", "8192"]
PLOTS = ["characterize_service_time.png", "characterize_throughput.png", "characterize_seek.png",
         "characterize_zones.png"]


@pytest.fixture(scope="module")
def desk(tmp_path_factory):
    """(spec dict, characterize JSON, out dir) for the 250 GB datasheet disk."""
    d = tmp_path_factory.mktemp("desk")
    spec_path = d / "desk.toml"
    p = cli("disks", "datasheet", *DATASHEET, "-o", spec_path)
    assert p.returncode == 0, p.stderr
    p = cli("characterize", "--disk", spec_path, "--json", "--out", d / "out")
    assert p.returncode == 0, p.stderr
    return tomllib.loads(spec_path.read_text()), json.loads(p.stdout), d / "out"


def test_zone_media_rates_are_the_spec_tracks_at_the_spec_rpm(desk):
    spec, res, _ = desk
    zones = spec["layout"]["zones"]
    assert len(res["zones"]) == len(zones)
    for z, got in zip(zones, res["zones"]):
        assert got["first_cylinder"] == z["first_cylinder"]
        want_mb_s = z["sectors_per_track"] * 512 * spec["rpm"] / 60 / 1e6
        assert got["media_rate_mb_s"] == pytest.approx(want_mb_s, rel=1e-12)
    # The datasheet's outer and inner rates, to the rounding of sectors per track.
    assert res["zones"][0]["media_rate_mb_s"] == pytest.approx(88, abs=0.05)
    assert res["zones"][-1]["media_rate_mb_s"] == pytest.approx(45, abs=0.05)


def three_point_seek_ms(c, avg, full, cylinders, d):
    """t(d) = a sqrt(d-1) + b (d-1) + c through t(1) = c, t(max) = full, and a mean of `avg`
    over uniformly random cylinder pairs (n - d of them d apart), solved here independently."""
    n = cylinders
    dist = np.arange(1, n)
    w = (n - dist).astype(float)
    e1, e2 = np.average(np.sqrt(dist - 1), weights=w), np.average(dist - 1, weights=w)
    m = n - 1
    a, b = np.linalg.solve([[e1, e2], [math.sqrt(m - 1), m - 1]], [avg - c, full - c])
    return a * math.sqrt(d - 1) + b * (d - 1) + c


def test_seek_points_are_the_spec_seek_figures(desk):
    spec, res, _ = desk
    seek, n = spec["seek"], spec["cylinders"]
    points = {p["distance_cylinders"]: p for p in res["seek"]}
    assert points[1]["model_seek_ms"] == pytest.approx(seek["single_cylinder_ms"], abs=1e-6)
    assert points[n - 1]["model_seek_ms"] == pytest.approx(seek["full_stroke_ms"], abs=1e-6)
    assert res["average_seek_ms"] == pytest.approx(seek["average_ms"], abs=1e-5)
    assert len(points) >= 10
    for d, p in points.items():
        want = three_point_seek_ms(seek["single_cylinder_ms"], seek["average_ms"], seek["full_stroke_ms"], n, d)
        assert p["model_seek_ms"] == pytest.approx(want, abs=1e-5), d
        if p["reads"]:
            # A simulated read d cylinders away spends about that seek time (read-ahead may have
            # moved the heads on a little before it arrived), and then some.
            assert p["read_seek_ms"] == pytest.approx(p["model_seek_ms"], rel=0.02), d
            assert p["read_service_ms"] > p["model_seek_ms"]
    distances = sorted(points)
    assert distances[0] == 1 and distances[-1] == n - 1
    assert all(b > 1.5 * a for a, b in zip(distances, distances[1:-1]))  # log-spaced


def test_random_4kb_read_is_about_average_seek_plus_half_a_revolution(desk):
    spec, res, _ = desk
    half_rev_ms = 60_000 / spec["rpm"] / 2
    expect = spec["seek"]["average_ms"] + half_rev_ms
    row = next(r for r in res["sizes"] if r["request_kb"] == 4)
    # Uniform LBNs are not uniform cylinders (outer zones hold more), and overheads add a little.
    assert 0.85 * expect <= row["random_read"]["service_ms"] <= 1.2 * expect, (row, expect)
    assert [r["request_kb"] for r in res["sizes"]] == [4, 8, 16, 32, 64, 128, 256, 512, 1024]
    for r in res["sizes"]:
        for curve in ("random_read", "random_write", "sequential_read", "sequential_write"):
            # One outstanding: throughput = request size / service time.
            want = r["request_kb"] * 1024 / 1e6 / (r[curve]["service_ms"] / 1000)
            assert r[curve]["mb_per_s"] == pytest.approx(want, rel=0.02), (r["request_kb"], curve)
        assert r["dd_read"]["mb_per_s"] > 0


def test_json_and_plots_are_written(desk):
    _, res, out = desk
    assert json.loads((out / "characterize.json").read_text()) == res
    for name in PLOTS:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name
    assert sorted(f.name for f in out.iterdir()) == sorted(PLOTS + ["characterize.json"])
    # The outer-zone media rate (grey, dotted) is above every measured curve: the y axis reaches it
    # (it was drawn off the scale, only its legend entry showing: ~20 grey pixels).
    assert res["zones"][0]["media_rate_mb_s"] > max(r["sequential_read"]["mb_per_s"] for r in res["sizes"])
    assert pixels_of(out / "characterize_throughput.png", "#808080") > 150


def test_table_fits_80_columns(tmp_path):
    p = cli("characterize", "--disk", "hp_c2247a")
    assert p.returncode == 0, p.stderr
    for title in ("service time", "throughput", "seek distance", "zones"):
        assert title in p.stdout
    # conftest sets COLUMNS=200: the tables themselves stay narrower than 80.
    table_lines = [line for line in p.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 80


def test_same_disk_same_curves():
    runs = [cli("characterize", "--disk", "hp_c2247a", "--json") for _ in range(2)]
    assert all(p.returncode == 0 for p in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_bad_disk_is_one_line(tmp_path):
    for disk, want in [("floppy", "unknown disk 'floppy'"), (tmp_path / "missing.toml", "missing.toml")]:
        p = cli("characterize", "--disk", disk)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and want in lines[0], p.stderr


def test_validate_per_request_error_on_a_trace_pair(tmp_path):
    """Replay is driven by the think times, not the measured access times, so two traces that
    differ only in access times simulate alike; make the second's measured times the first's
    simulated ones plus known offsets and the per-request error is those offsets."""
    from disksched import _core

    lbns = [1000, 50_000, 50_008, 2_000_000, 123_456, 7_000_000]
    first = tmp_path / "first.trace"
    first.write_text("".join(f"R Miss {lbn} 8 1000.00000 500.00000\n" for lbn in lbns))
    _, measured, simulated = _core.validate("atlas10k", str(first))
    assert list(measured) == [1.0] * 6
    offsets_ms = [0.2, -0.3, 0.5, -1.0, 2.0, 0.0]
    second = tmp_path / "second.trace"
    second.write_text("".join(f"R Miss {lbn} 8 {(s + o) * 1000:.5f} 500.00000\n"
                              for lbn, s, o in zip(lbns, simulated, offsets_ms)))
    p = cli("validate", "--disk", "atlas10k", "--trace", second, "--json", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)
    e = v["per_request"]
    assert e["mean_abs_ms"] == pytest.approx(4.0 / 6, abs=1e-9)   # (0.2 + 0.3 + 0.5 + 1 + 2 + 0) / 6
    assert e["within_0_5ms_fraction"] == pytest.approx(4 / 6)     # 0.2, 0.3, 0.5 and 0
    # Sorted 0, 0.2, 0.3, 0.5, 1, 2: quantile 0.9 at t = 0.9 * 6 - 1 = 4.4, from 1 towards 2.
    assert e["p90_abs_ms"] == pytest.approx(1.4, abs=1e-9)
    assert json.loads((tmp_path / "out/validation.json").read_text())["per_request"] == e
    _, _, again = _core.validate("atlas10k", str(second))
    assert list(again) == list(simulated)
    p = cli("validate", "--disk", "atlas10k", "--trace", second)
    assert p.returncode == 0 and "per-request |sim - measured|: mean" in p.stdout and "66.7%" in p.stdout, p.stdout

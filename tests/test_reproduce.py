"""The reproduction framework: claims are judged on confidence intervals, `--check` fails
on a stated claim that does not hold, and the generated markdown holds the JSON's numbers.
(`make test` runs every reproduction with `--quick --check`: the Makefile's repro-check.)"""

import json
import math
import re

import pytest

from conftest import cli
from disksched.reproductions import NAMES, claims_path
from disksched.reproductions.framework import Claim, ClaimsError, fmt, interval, load_claims


def test_interval_is_student_t():
    mean, lo, hi = interval([1.0, 2.0, 3.0, 4.0, 5.0])
    # sd = sqrt(2.5); t(0.975, 4) = 2.776 (tables); half-width = 2.776 * sd / sqrt(5)
    half = 2.776 * math.sqrt(2.5) / math.sqrt(5)
    assert mean == 3.0 and lo == pytest.approx(3 - half) and hi == pytest.approx(3 + half)
    assert interval([7.0]) == (7.0, 7.0, 7.0)
    # Seeds that all measure the same value give that value, not a rounding-noise interval around it.
    v = 0.1 + 0.2
    assert interval([v] * 5) == (v, v, v)


def test_judging_on_the_interval():
    above = Claim(id="a", figure="f", text="t", value="x", check="above", bound=1.0)
    assert above.judge(1.1, 1.5) == "holds"
    assert above.judge(0.5, 0.9) == "fails"
    assert above.judge(0.9, 1.2) == "unclear"
    assert above.judge(1.0, 1.0) == "fails"  # "above 1" is not met by exactly 1
    within = Claim(id="w", figure="f", text="t", value="x", check="within", paper=2.0, tolerance_pct=25)
    assert within.limits() == (1.5, 2.5)
    assert within.judge(1.6, 2.4) == "holds" and within.judge(2.6, 3.0) == "fails" and within.judge(1.4, 1.6) == "unclear"


def test_every_claims_file_loads_and_states_something():
    for name in NAMES:
        meta, claims = load_claims(claims_path(name))
        assert meta["title"] and claims, name
        assert any(c.stated for c in claims), name


def test_a_bad_claims_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[claims]]\nid = "x"\nfigure = "f"\ntext = "t"\nvalue = "a"\ncheck = "sideways"\n')
    with pytest.raises(ClaimsError, match="check 'sideways' \\(expected one of within, above, below\\)"):
        load_claims(bad)
    p = cli("reproduce", "rizzo2009", "--quick", "--claims", bad, "--out", tmp_path)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "sideways" in p.stderr


def _md_claim_rows(md: str) -> dict:
    rows = {}
    for line in md.splitlines():
        m = re.match(r"\| (\w+): .*? \| .*? \| .*? \| (.*?) \| (.*?) \| (holds|fails|unclear) \| (yes|no) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(4), m.group(5))
    return rows


def test_quick_check_passes_and_markdown_matches_json(tmp_path):
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--seeds", "2", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "rizzo2009.json").read_text())
    md = (tmp_path / "rizzo2009.md").read_text()
    assert res["seeds"] == 2 and res["quick"] is True and "(quick run, 2 seeds" in md
    rows = _md_claim_rows(md)
    assert set(rows) == {c["id"] for c in res["claims"]}
    for c in res["claims"]:
        shown, verdict, stated = rows[c["id"]]
        numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", shown)]
        expected = [c["mean"]] if c["lo"] == c["hi"] else [c["mean"], c["lo"], c["hi"]]
        assert len(numbers) == len(expected), (shown, c)
        for got, want in zip(numbers, expected):
            assert got == float(fmt(want))
        assert verdict == c["verdict"] and stated == ("yes" if c["stated"] else "no")
        # The interval is the seeds' values' Student-t interval.
        assert (c["mean"], c["lo"], c["hi"]) == pytest.approx(interval(c["values"]))
    # Every figure the command says it wrote exists and is a real plot.
    for f in res["figures"]:
        assert (tmp_path / f["file"]).stat().st_size > 10_000
    assert "rizzo2009_throughput.png" in p.stdout and "rizzo2009_characterize.png" in p.stdout
    # The slides' disk characterization, on the datasheet disk: its outer zone streams at the
    # datasheet's 88 MB/s of media (1e6 bytes/s), which no read of it can beat.
    means = {k: v["mean"] for k, v in res["metrics"].items()}
    assert means["char_outer_media_mb_s"] == pytest.approx(88.0, rel=0.002)
    assert 0 < means["char_dd_peak_mb_s"] <= means["char_outer_media_mb_s"]
    # A throughput-limited stream: a 1 MB read takes 8x a 128 KB one, give or take one revolution.
    rev = means["char_revolution_ms"]
    assert abs(means["char_seq_1024kb_ms"] - 8 * means["char_seq_128kb_ms"]) < rev


def test_workers_give_the_same_numbers(tmp_path):
    one = cli("reproduce", "rizzo2009", "--quick", "--seeds", "2", "--out", tmp_path / "one")
    two = cli("reproduce", "rizzo2009", "--quick", "--seeds", "2", "--workers", "2", "--out", tmp_path / "two")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    a, b = (json.loads((tmp_path / d / "rizzo2009.json").read_text()) for d in ("one", "two"))
    assert a["metrics"] == b["metrics"] and a["claims"] == b["claims"]
    assert "--workers 2" in b["command"]
    p = cli("reproduce", "rizzo2009", "--workers", "0")
    assert p.returncode == 2 and "--workers: 0 is out of range [1, 64]" in p.stderr


def test_a_reversed_claim_makes_check_fail(tmp_path):
    text = claims_path("rizzo2009").read_text()
    # The stated "rr gives two readers more than 2x C-LOOK's throughput", reversed.
    broken = text.replace('id = "readers_rr_gain"', 'id = "readers_rr_gain_reversed"', 1)
    head, tail = broken.split('id = "readers_rr_gain_reversed"', 1)
    tail = tail.replace('check = "above"', 'check = "below"', 1)
    path = tmp_path / "broken.toml"
    path.write_text(head + 'id = "readers_rr_gain_reversed"' + tail)
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--claims", path, "--out", tmp_path)
    assert p.returncode == 1
    assert "check failed: rizzo2009 readers_rr_gain_reversed: fails" in p.stderr
    # Without --check the same run reports the failure and exits 0.
    p = cli("reproduce", "rizzo2009", "--quick", "--claims", path, "--out", tmp_path)
    assert p.returncode == 0 and "fails" in p.stdout


def test_unknown_experiment_and_bad_seeds():
    p = cli("reproduce", "nobody2099")
    assert p.returncode == 2 and "unknown experiment 'nobody2099'" in p.stderr
    p = cli("reproduce", "rizzo2009", "--seeds", "0")
    assert p.returncode == 2 and "--seeds: 0 is out of range [1, 31]" in p.stderr


def test_notes_are_computed_from_the_run(tmp_path):
    """A note is printed only when its condition holds for the measured numbers, and its
    numbers are the run's."""
    claims = tmp_path / "c.toml"
    claims.write_text('''
[[claims]]
id = "two_readers"
figure = "f"
text = "t"
value = "two_readers_rr_total"
check = "above"
bound = 0
stated = true
[[claims.notes]]
when = "value > 0"
text = "measured {value:.3f} MiB/s"
[[claims.notes]]
when = "value < 0"
text = "never printed"
''')
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--claims", claims, "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "rizzo2009.json").read_text())
    c = res["claims"][0]
    assert c["notes"] == [f"measured {c['mean']:.3f} MiB/s"]
    assert "never printed" not in p.stdout


def test_committed_reports_hold_their_json_numbers():
    """docs/reproductions/NAME.md is generated: its claim table is its JSON's, to the digit."""
    from conftest import ROOT

    docs = ROOT / "docs/reproductions"
    reports = sorted(docs.glob("*.json"))
    assert {p.stem for p in reports} <= set(NAMES)
    for path in reports:
        res = json.loads(path.read_text())
        rows = _md_claim_rows((docs / f"{path.stem}.md").read_text())
        assert set(rows) == {c["id"] for c in res["claims"]}, path.stem
        for c in res["claims"]:
            shown, verdict, stated = rows[c["id"]]
            want = [c["mean"]] if c["lo"] == c["hi"] else [c["mean"], c["lo"], c["hi"]]
            got = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", shown)]
            assert got == [float(fmt(w)) for w in want], (path.stem, c["id"])
            assert verdict == c["verdict"] and stated == ("yes" if c["stated"] else "no")
        for f in res["figures"]:
            assert (docs / f["file"]).exists(), f

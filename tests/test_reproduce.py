"""The reproduction framework: claims are judged on confidence intervals, every claim names an
ablation that can make it fail, `--check` fails on a claim the baseline says holds and does not,
and the generated markdown holds the JSON's numbers. (`make test` runs every reproduction with
`--quick --ablate --check`: the Makefile's repro-check.)"""

import json
import math
import re

import pytest

from conftest import cli
from disksched.reproductions import NAMES, claims_path
from disksched.reproductions.common import apply_ablation
from disksched.reproductions.framework import BASELINE, Claim, ClaimsError, fmt, interval, load_claims


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


def test_every_claim_names_its_mechanism_and_an_ablation():
    baseline = json.loads(BASELINE.read_text())["quick"]
    for name in NAMES:
        meta, claims, ablations = load_claims(claims_path(name))
        assert meta["title"] and claims and ablations, name
        for c in claims:
            assert (c.mechanism and c.ablation in ablations) or (c.calibration and not c.ablation), (name, c.id)
        # The committed baseline has every claim of the paper, and no other.
        assert set(baseline[name]) == {c.id for c in claims}, name


def test_ablation_rules():
    cfg = {"disk": {"model": "x", "scheduler": "sptf"}, "host": {"scheduler": "rr", "set": {"wait_ms": 5}, "shaper": {}},
           "workload": {"kind": "mix", "clients": [{"class": "a"}, {"class": "b"}]}}
    out = apply_ablation(cfg, {"replace": {"disk.scheduler": {"sptf": "fcfs"}, "workload.clients.class": {"b": "c"}},
                               "set": {"host.set.wait_ms": 0, "nowhere.x": 1}, "unset": ["host.shaper"]})
    assert out == {"disk": {"model": "x", "scheduler": "fcfs"}, "host": {"scheduler": "rr", "set": {"wait_ms": 0}},
                   "workload": {"kind": "mix", "clients": [{"class": "a"}, {"class": "c"}]}}
    assert cfg["host"]["set"]["wait_ms"] == 5 and "shaper" in cfg["host"]  # the original is left alone
    # `when`: only configs with those values.
    assert apply_ablation(cfg, {"when": {"host.scheduler": "clook"}, "unset": ["host.set"]}) == cfg
    assert "set" not in apply_ablation(cfg, {"when": {"host.scheduler": "rr"}, "unset": ["host.set"]})["host"]


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
        m = re.match(r"\| (\w+): .*? \| .*? \| .*? \| (.*?) \| (.*?) \| (holds|fails|unclear) \| (.*?) \| "
                     r"(reproduced|not reproduced|cannot fail|calibration) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(4), m.group(6))
    return rows


def _numbers(shown: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", shown)]


def test_quick_check_passes_and_markdown_matches_json(tmp_path):
    # --check against the baseline, which is quick and one seed (as `make test` runs it) ...
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--out", tmp_path / "one")
    assert p.returncode == 0, p.stderr
    # ... and two seeds, whose intervals (seeds place the files) are too wide to compare with it.
    p = cli("reproduce", "rizzo2009", "--quick", "--seeds", "2", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "rizzo2009.json").read_text())
    md = (tmp_path / "rizzo2009.md").read_text()
    assert res["seeds"] == 2 and res["quick"] is True and "(quick run, 2 seeds" in md
    won, judged = res["score"]["reproduced"], res["score"]["judged"]
    assert f"score {won}/{judged} claims reproduced" in md.splitlines()[2]
    assert f"score {won}/{judged} claims reproduced" in p.stdout
    assert won == sum(c["status"] == "reproduced" for c in res["claims"])
    rows = _md_claim_rows(md)
    assert set(rows) == {c["id"] for c in res["claims"]}
    for c in res["claims"]:
        shown, verdict, status = rows[c["id"]]
        expected = [c["mean"]] if c["lo"] == c["hi"] else [c["mean"], c["lo"], c["hi"]]
        numbers = _numbers(shown)
        assert len(numbers) == len(expected), (shown, c)
        for got, want in zip(numbers, expected):
            assert got == float(fmt(want))
        assert verdict == c["verdict"] and status == c["status"]
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


def test_output_fits_80_columns_and_keeps_its_numbers_in_a_pipe(tmp_path):
    p = cli("reproduce", "wu2004", "--quick", "--out", tmp_path)  # stdout is a pipe here
    assert p.returncode == 0, p.stderr
    assert max(len(line) for line in p.stdout.splitlines()) <= 80
    res = json.loads((tmp_path / "wu2004.json").read_text())
    for c in res["claims"]:
        assert f"disksched {fmt(c['mean'])}" in p.stdout, c["id"]


@pytest.mark.parametrize("name", NAMES)
def test_an_ablation_makes_a_holding_claim_fail(name, tmp_path):
    """Per paper, in quick mode: at least one claim holds, and its mechanism removed, fails."""
    p = cli("reproduce", name, "--quick", "--ablate", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / f"{name}.json").read_text())
    flipped = [c for c in res["claims"] if c["verdict"] == "holds" and (c["ablated"] or {}).get("verdict") == "fails"]
    assert flipped, name
    for c in flipped:
        assert c["status"] == "reproduced"
        lo, hi = (float(x) for x in c["check"].split("..")) if ".." in c["check"] else (None, None)
        if lo is not None:  # the ablated value really left the band
            assert not lo <= c["ablated"]["mean"] <= hi


def test_workers_give_the_same_numbers(tmp_path):
    one = cli("reproduce", "rizzo2009", "--quick", "--seeds", "2", "--out", tmp_path / "one")
    two = cli("reproduce", "rizzo2009", "--quick", "--seeds", "2", "--workers", "2", "--out", tmp_path / "two")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    a, b = (json.loads((tmp_path / d / "rizzo2009.json").read_text()) for d in ("one", "two"))
    assert a["metrics"] == b["metrics"] and a["claims"] == b["claims"]
    assert "--workers 2" in b["command"]
    p = cli("reproduce", "rizzo2009", "--workers", "0")
    assert p.returncode == 2 and "--workers: 0 is out of range [1, 64]" in p.stderr


def _edit_claim(text: str, cid: str, old: str, new: str) -> str:
    head, tail = text.split(f'id = "{cid}"\n', 1)
    body, rest = tail.split("[[claims]]", 1) if "[[claims]]" in tail else (tail, None)
    assert old in body
    body = body.replace(old, new, 1)
    return head + f'id = "{cid}"\n' + body + ("[[claims]]" + rest if rest is not None else "")


def test_a_reversed_or_halved_claim_makes_check_fail(tmp_path):
    text = claims_path("rizzo2009").read_text()
    # "under C-LOOK the writer takes nearly all of the disk from the reader" (0.999), reversed ...
    reversed_ = tmp_path / "reversed.toml"
    reversed_.write_text(_edit_claim(text, "writer_captures_clook", 'check = "within"\ntolerance = 0.01',
                                     'check = "below"\nbound = 0.5'))
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--claims", reversed_, "--out", tmp_path / "a")
    assert p.returncode == 1
    assert "check failed: rizzo2009 writer_captures_clook: fails" in p.stderr
    assert "reproduced in the baseline" in p.stderr
    # ... and a number halved: the slides' rr writer beside a reader, 40 MiB/s, stated as 20.
    halved = tmp_path / "halved.toml"
    halved.write_text(_edit_claim(text, "rr_writer_abs", "paper = 40.0", "paper = 20.0"))
    p = cli("reproduce", "rizzo2009", "--quick", "--check", "--claims", halved, "--out", tmp_path / "b")
    assert p.returncode == 1 and "check failed: rizzo2009 rr_writer_abs: fails" in p.stderr
    # Without --check the same run reports the failure and exits 0.
    p = cli("reproduce", "rizzo2009", "--quick", "--claims", reversed_, "--out", tmp_path / "c")
    assert p.returncode == 0 and "NOT REPRODUCED  writer_captures_clook" in p.stdout


def test_check_fails_when_a_reproduced_claim_cannot_fail(tmp_path):
    """An ablation that leaves a claim holding (here: one that changes nothing the claim measures) makes a
    claim the baseline calls reproduced 'cannot fail', and --ablate --check fails on it."""
    text = claims_path("rizzo2009").read_text()
    path = tmp_path / "weak.toml"
    weak = _edit_claim(text, "writer_captures_clook", 'ablation = "rr_for_clook"', 'ablation = "nothing"')
    path.write_text(weak.replace("[[claims]]", '[ablations.nothing]\ntext = "x"\nunset = ["no.such.key"]\n\n[[claims]]', 1))
    p = cli("reproduce", "rizzo2009", "--quick", "--ablate", "--check", "--claims", path, "--out", tmp_path / "o")
    assert p.returncode == 1, p.stdout
    assert "check failed: rizzo2009 writer_captures_clook: cannot fail" in p.stderr
    assert json.loads(BASELINE.read_text())["quick"]["rizzo2009"]["writer_captures_clook"] == "reproduced"


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
[ablations.a]
text = "a"
unset = ["host.shaper"]

[[claims]]
id = "two_readers"
figure = "f"
text = "t"
value = "two_readers_rr_total"
check = "above"
bound = 0
mechanism = "rr"
ablation = "a"
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
            shown, verdict, status = rows[c["id"]]
            want = [c["mean"]] if c["lo"] == c["hi"] else [c["mean"], c["lo"], c["hi"]]
            assert _numbers(shown) == [float(fmt(w)) for w in want], (path.stem, c["id"])
            assert verdict == c["verdict"] and status == c["status"]
        for f in res["figures"]:
            assert (docs / f["file"]).exists(), f


def test_readme_scores_are_the_reports():
    """README's score table is generated from docs/reproductions/*.json (make readme-scores)."""
    from conftest import ROOT
    from disksched.reproductions.scores import rewrite

    readme = ROOT / "README.md"
    assert rewrite(readme, ROOT / "docs/reproductions") == readme.read_text(), "run make readme-scores"

"""`disksched trace info` and `disksched trace convert`: tables, JSON, a
round trip through another format, and one-line errors naming file:line."""

import json

from conftest import ROOT, SHARED, cli

FIX = ROOT / "crates/disksched-core/tests/fixtures/traces"


def test_info_json_matches_the_fixture():
    # info_seq.trace by hand: 8 requests, 5 reads; devices 0 (5) and 1 (3);
    # last arrival 8 ms; 3 of 6 follow-on requests sequential; 50 blocks touched.
    p = cli("trace", "info", FIX / "info_seq.trace", "--json")
    assert p.returncode == 0, p.stderr
    i = json.loads(p.stdout)
    assert i["format"] == "disksim-ascii"
    assert (i["requests"], i["reads"], i["writes"]) == (8, 5, 3)
    assert i["devices"] == [{"device": 0, "requests": 5}, {"device": 1, "requests": 3}]
    assert i["duration_ms"] == 8.0 and i["sequential_fraction"] == 0.5
    assert (i["footprint_blocks"], i["footprint_exact"]) == (50, True)
    assert i["size_kb"]["max"] == 8.0 and i["bad_lines_skipped"] == 0


def test_info_table_on_a_real_trace():
    p = cli("trace", "info", SHARED / "disksim/ajw.1week.srt")
    assert p.returncode == 0, p.stderr
    assert "hpl" in p.stdout and "44,519" in p.stdout and "13,040" in p.stdout
    assert "footprint" in p.stdout and "inter-arrival ms" in p.stdout


def test_convert_round_trip(tmp_path):
    out = tmp_path / "msr.trace"
    p = cli("trace", "convert", FIX / "msr.csv", "--to", "disksim-ascii", "-o", out)
    assert p.returncode == 0, p.stderr
    assert "wrote 5 records" in p.stderr
    a = json.loads(cli("trace", "info", FIX / "msr.csv", "--json").stdout)
    b = json.loads(cli("trace", "info", out, "--json").stdout)
    assert b["format"] == "disksim-ascii"
    for k in ["requests", "reads", "writes", "devices", "duration_ms", "footprint_blocks", "size_kb", "interarrival_ms",
              "sequential_requests"]:
        assert a[k] == b[k], k
    # Record by record: msr line 5 (bytes 1000..1100 on disk 1, read, 43321026 ticks
    # after the first) is block 1, 2 blocks, at 4332.1026 ms.
    last = out.read_text().splitlines()[-1].split()
    assert last == ["4332.102600", "1", "1", "2", "1"]
    assert len(out.read_text().splitlines()) == 5
    assert sorted(f.name for f in tmp_path.iterdir()) == ["msr.trace"]


def test_errors_are_one_line_naming_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    lines = (FIX / "msr.csv").read_text().splitlines()
    lines.insert(2, "128166372016382155,hm,1,Wrote,1317441536,8192,1963")
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.trace"
    for args, want in [
        (["trace", "info", bad, "--format", "msr"], f"{bad}:3: field 4 (Type)"),
        (["trace", "convert", bad, "--to", "spc", "-o", out], f"{bad}:3:"),
        (["trace", "convert", FIX / "msr.csv", "--to", "hpl", "-o", out], "hpl cannot be written"),
        (["trace", "info", FIX / "msr.csv", "--format", "csv"], "unknown format \"csv\""),
        (["trace", "info", tmp_path / "missing.csv"], "missing.csv"),
    ]:
        p = cli(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        err = p.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and want in err[0], p.stderr
    assert not out.exists() and sorted(f.name for f in tmp_path.iterdir()) == ["bad.csv"]
    p = cli("trace", "info", bad, "--format", "msr", "--skip-bad-lines", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["bad_lines_skipped"] == 1

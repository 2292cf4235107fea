"""Everyday mistakes give one line and exit 2, Ctrl-C exits 130 leaving nothing
half-written, and the conventions (--version, config check/show, --json
listings, 80 columns, shipped traces). Every CLI call runs in a subprocess
with a timeout, so a hang or a traceback fails the test."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import disksched
from conftest import ROOT, SHARED

EXE = Path(sys.executable).parent / "disksched"
SEED_MAX = 2 ** 64 - 1


def cli(*args, timeout=120, columns=200):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "COLUMNS": str(columns)})


def one_line_error(p, *wanted):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for w in wanted:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def write_config(path: Path, requests: int, extra: str = "") -> Path:
    path.write_text(textwrap.dedent(f"""\
        seed = 3
        [disk]
        model = "atlas10k"
        scheduler = "sptf"
        [host]
        queue_threshold = 16
        [workload]
        kind = "oltp"
        [run]
        requests = {requests}
        """) + extra)
    return path


@pytest.fixture
def small(tmp_path):
    return write_config(tmp_path / "small.toml", 2000)


@pytest.fixture
def huge(tmp_path):
    # Minutes of simulation: a command that ran it would hit the test's timeout.
    return write_config(tmp_path / "huge.toml", 100_000_000)


# --- seeds -----------------------------------------------------------------------------------

def test_bad_seeds_are_one_line_errors(small):
    one_line_error(cli("run", small, "--seed", "-1"), "--seed -1", str(SEED_MAX))
    one_line_error(cli("run", small, "--seed", str(SEED_MAX + 1)), str(SEED_MAX + 1), "out of range")
    p = cli("run", small, "--seed", str(SEED_MAX), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["requests"] == 2000


def test_python_seed_checks_and_numpy_values(small):
    np = pytest.importorskip("numpy")
    cfg = {"seed": 3, "disk": {"model": "atlas10k", "scheduler": "sptf"}, "host": {"queue_threshold": 16},
           "workload": {"kind": "oltp"}, "run": {"requests": 2000}}
    for bad in (-1, SEED_MAX + 1, 1.5, "7", True):
        with pytest.raises(disksched.DiskschedError, match="expected an integer"):
            disksched.run(cfg, seed=bad)
    with pytest.raises(disksched.DiskschedError, match="seed -1"):
        disksched.run({**cfg, "seed": -1})
    plain = disksched.run(cfg, seed=11)
    # numpy integers and floats anywhere in a dict config, and as the seed, mean the same numbers.
    with_numpy = disksched.run({**cfg, "seed": np.int64(3), "host": {"queue_threshold": np.int32(16)},
                                "run": {"requests": np.uint64(2000), "warmup_requests": np.int16(0)}},
                               seed=np.uint64(11))
    assert with_numpy.summary == plain.summary
    assert disksched.run(cfg, seed=11).summary == plain.summary


# --- configs that are not run configs ----------------------------------------------------------

def test_binary_file_as_config(tmp_path):
    binary = tmp_path / "blob.toml"
    binary.write_bytes(b"seed = 1\n\xff\xfe\x00\x01garbage")
    one_line_error(cli("run", binary), "blob.toml", "line 2", "not UTF-8")
    nul = tmp_path / "nul.toml"
    nul.write_bytes(b"seed = 1\n\n\x00\x00")
    one_line_error(cli("run", nul), "nul.toml", "line 3", "binary")
    one_line_error(cli("run", tmp_path), "is a directory")


@pytest.mark.skipif(not (SHARED / "disksim/atlas10k.parv").exists(), reason="needs ../shared/disksim")
def test_disksim_file_as_config_says_how_to_use_it(tmp_path):
    parv = SHARED / "disksim/atlas10k.parv"
    one_line_error(cli("run", parv), "DiskSim parameter file", "disk.model")
    # Found by its content too, whatever its name.
    renamed = tmp_path / "drive.toml"
    renamed.write_text(parv.read_text())
    one_line_error(cli("run", renamed), "DiskSim parameter file")
    with pytest.raises(disksched.DiskschedError, match="DiskSim parameter file"):
        disksched.run(parv)


# --- output paths, checked before the run ---------------------------------------------------------

def test_out_paths_are_checked_before_the_run(tmp_path, huge):
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    one_line_error(cli("run", huge, "--out", afile, timeout=60), "--out", "not a directory")
    assert afile.read_text() == "mine\n"
    one_line_error(cli("run", huge, "--out", afile / "sub", timeout=60), "--out", "cannot create folder")
    one_line_error(cli("run", huge, "--out", "/proc/disksched-test/out", timeout=60), "--out")
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("keep\n")
    one_line_error(cli("run", huge, "--out", full, timeout=60), "--force")


def test_out_with_brackets_force_and_modes(tmp_path, small):
    out = tmp_path / "o[red]x[/]"
    p = cli("run", small, "--out", out)
    assert p.returncode == 0, p.stderr
    assert f"wrote {out}/" in p.stdout.replace("\n", "")
    names = sorted(f.name for f in out.iterdir())
    assert names == ["lbn_time.png", "queue_depth.png", "response_cdf.png", "summary.json"]
    umask = os.umask(0)
    os.umask(umask)
    for f in out.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    # --force writes into a folder with files: ours replaced, the user's kept.
    (out / "notes.txt").write_text("keep\n")
    before = (out / "summary.json").read_text()
    one_line_error(cli("run", small, "--out", out, "--seed", "9"), "--force")
    p = cli("run", small, "--out", out, "--seed", "9", "--force")
    assert p.returncode == 0, p.stderr
    assert (out / "notes.txt").read_text() == "keep\n" and (out / "summary.json").read_text() != before
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]


def test_import_and_datasheet_into_unwritable_places(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    one_line_error(cli("disks", "import", ROOT / "examples/oltp.toml", "-o", afile / "x.toml"))
    one_line_error(cli("disks", "import", ROOT / "examples/oltp.toml", "-o", tmp_path), "is a directory")
    one_line_error(cli("disks", "datasheet", "--name", "d", "--capacity-gb", "100", "--rpm", "7200",
                       "--outer-mb-s", "80", "--inner-mb-s", "40", "--track-to-track-ms", "1",
                       "--average-seek-ms", "8", "--full-stroke-ms", "16", "-o", afile / "d.toml"))


@pytest.mark.skipif(not (SHARED / "disksim/3disks.parv").exists(), reason="needs ../shared/disksim")
def test_import_names_one_disk_of_several(tmp_path):
    parv = SHARED / "disksim/3disks.parv"
    one_line_error(cli("disks", "import", parv, "-o", tmp_path / "x.toml"), "several disks", "--disk")
    p = cli("disks", "import", parv, "--disk", "IBM_DNES-309170W_validate", "-o", tmp_path / "ibm.toml")
    assert p.returncode == 0, p.stderr
    assert "IBM_DNES-309170W_validate" in (tmp_path / "ibm.toml").read_text()
    one_line_error(cli("disks", "import", parv, "--disk", "nope", "-o", tmp_path / "y.toml"), "nope")



@pytest.mark.skipif(not (SHARED / "disksim/3disks.parv").exists(), reason="needs ../shared/disksim")
def test_disk_model_names_one_disk_of_a_multi_disk_file(tmp_path):
    parv = SHARED / "disksim/3disks.parv"
    # Without a name: the error says how to name one, in the config's own syntax.
    several = write_config(tmp_path / "several.toml", 200).read_text().replace('"atlas10k"', f'"{parv}"')
    (tmp_path / "several.toml").write_text(several)
    one_line_error(cli("config", "check", tmp_path / "several.toml"), "several disks", "IBM_DNES-309170W_validate",
                   f"{parv}#NAME")
    # FILE#NAME picks that disk: the same drive `disks import --disk` makes.
    named = tmp_path / "named.toml"
    named.write_text(several.replace(f'"{parv}"', f'"{parv}#IBM_DNES-309170W_validate"'))
    p = cli("config", "check", named)
    assert p.returncode == 0, p.stderr
    assert cli("disks", "import", parv, "--disk", "IBM_DNES-309170W_validate", "-o", tmp_path / "ibm.toml").returncode == 0
    spec = tmp_path / "ibm-spec.toml"
    spec.write_text(several.replace(f'"{parv}"', f'"{tmp_path / "ibm.toml"}"'))
    assert disksched.run(named).summary == disksched.run(spec).summary
    # A name the file does not have is one line naming it.
    (tmp_path / "nope.toml").write_text(several.replace(f'"{parv}"', f'"{parv}#nope"'))
    one_line_error(cli("config", "check", tmp_path / "nope.toml"), "nope", "3disks.parv")

# --- Ctrl-C ----------------------------------------------------------------------------------------

def interrupt_after(args, seconds, timeout=60, ready=None):
    """Start the CLI, wait until `ready(pid)` holds (polled for up to 60 s) and
    `seconds` more, send SIGINT; return (exit code, stderr)."""
    p = subprocess.Popen([str(EXE), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT)
    deadline = time.monotonic() + 60
    while ready is not None and not ready(p.pid) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(seconds)
    assert p.poll() is None, "finished before the signal"
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("SIGINT did not end the command")
    return p.returncode, err


def test_sigint_ends_a_run_with_130_and_no_output(tmp_path, huge):
    out = tmp_path / "out"
    rc, err = interrupt_after(["run", huge, "--out", out], 1, ready=lambda pid: (tmp_path / f".out.tmp-{pid}").exists())
    assert rc == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    assert list(tmp_path.iterdir()) == [huge], list(tmp_path.iterdir())


def test_a_killed_runs_leftovers_are_cleaned(tmp_path, small):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    # What a `run --out` killed by SIGKILL leaves: its temporary folder with a 0-byte PNG temporary.
    left = tmp_path / f".out.tmp-{dead.pid}"
    left.mkdir()
    (left / f".response_cdf.png.tmp-{dead.pid}").write_bytes(b"")
    p = cli("run", small, "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["out", "small.toml"]


def test_sigint_ends_a_reproduction_with_130_and_no_output(tmp_path):
    # Interrupted while its first experiment runs (its files already in the temporary folder).
    rc, err = interrupt_after(["reproduce", "all", "--quick", "--out", tmp_path / "rep"], 1,
                              ready=lambda pid: (tmp_path / f".rep.tmp-{pid}").exists())
    assert rc == 130, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_sigint_during_a_parallel_reproduction_leaves_out_as_it_was(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.md").write_text("an earlier report\n")
    rc, err = interrupt_after(["reproduce", "riska2004", "--quick", "--seeds", "2", "--workers", "2", "--out", out], 2,
                              ready=lambda pid: (tmp_path / f".rep.tmp-{pid}").exists())
    assert rc == 130, err
    assert "Traceback" not in err
    assert sorted(tmp_path.iterdir()) == [out] and [f.name for f in out.iterdir()] == ["keep.md"]


def test_a_failed_reproduction_writes_nothing(tmp_path):
    # The run completes, then its claims cannot be judged: no report, no plots, no spec files.
    bad = tmp_path / "bad.toml"
    bad.write_text('[ablations.a]\ntext = "a"\nunset = ["host.shaper"]\n\n'
                   '[[claims]]\nid = "x"\nfigure = "f"\ntext = "t"\nvalue = "no_such_metric"\n'
                   'check = "above"\nbound = 0\nmechanism = "m"\nablation = "a"\n')
    p = cli("reproduce", "rizzo2009", "--quick", "--claims", bad, "--out", tmp_path / "rep")
    assert p.returncode == 2 and "no_such_metric" in p.stderr, p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.toml"]


def test_sigint_ends_a_python_loop_of_short_runs(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(textwrap.dedent("""\
        import sys, disksched
        cfg = {"disk": {"model": "atlas10k"}, "workload": {"kind": "oltp"}, "run": {"requests": 200}}
        n = 0
        try:
            while True:
                disksched.run(cfg, seed=n)
                n += 1
                if n == 5:
                    print("running", flush=True)
        except KeyboardInterrupt:
            sys.exit(130)
        """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "running"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the loop swallowed SIGINT")
    assert p.returncode == 130, err


def test_progress_callback_exception_is_raised_not_swallowed():
    cfg = {"disk": {"model": "atlas10k"}, "workload": {"kind": "oltp"}, "run": {"requests": 100_000}}
    calls = []

    def progress(done, total):
        calls.append(done)
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        disksched.run(cfg, progress=progress)
    assert len(calls) == 1


def big_trace(path: Path, lines: int) -> Path:
    with open(path, "w") as f:
        for i in range(lines):
            f.write(f"{i * 0.5:.3f} 0 {(i * 7919) % 17_000_000} 8 {i % 2}\n")
    return path


def test_trace_convert_sigint_leftovers_and_directory(tmp_path):
    src = big_trace(tmp_path / "in.trace", 250_000)
    outdir = tmp_path / "conv"
    outdir.mkdir()
    # A leftover of a process that no longer runs is removed; a live one's (ours) is not touched.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (outdir / f".out.msr.tmp-{dead.pid}").write_text("half")
    (outdir / f".out.msr.tmp-{os.getpid()}").write_text("live")
    # The trace comes through a pipe that reaches its end only after the signal, so the conversion
    # cannot finish first however fast the machine is; the last lines arrive after Ctrl-C, and the
    # file ends before the next periodic check, so it is the check before the rename that stops it.
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    lines = src.read_bytes().splitlines(keepends=True)
    p = subprocess.Popen([str(EXE), "trace", "convert", str(fifo), "--to", "msr", "-o", str(outdir / "out.msr")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    pipe = os.open(fifo, os.O_WRONLY)
    try:
        os.write(pipe, b"".join(lines[:200_000]))
        deadline = time.monotonic() + 60
        while not (outdir / f".out.msr.tmp-{p.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        assert p.poll() is None
        p.send_signal(signal.SIGINT)
        time.sleep(0.2)
        os.write(pipe, b"".join(lines[200_000:]))
    finally:
        os.close(pipe)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert sorted(f.name for f in outdir.iterdir()) == [f".out.msr.tmp-{os.getpid()}"]
    fifo.unlink()
    one_line_error(cli("trace", "convert", src, "--to", "msr", "-o", outdir), "is a directory")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["conv", "in.trace"]


# --- conventions -------------------------------------------------------------------------------------

def test_version_and_help():
    p = cli("--version")
    from importlib.metadata import version

    assert p.returncode == 0 and p.stdout.strip() == f"disksched {version('disksched')}"
    assert disksched.__version__ == version("disksched")
    p = cli("run", "--help", columns=80)
    assert p.returncode == 0 and "--json" in p.stdout and "<bool>" not in p.stdout
    assert "--install-completion" in cli("--help").stdout


def test_config_check_and_show(tmp_path, small):
    p = cli("config", "check", small)
    assert p.returncode == 0 and "ok" in p.stdout, p.stderr
    bad = write_config(tmp_path / "bad.toml", 2000).read_text().replace('kind = "oltp"', 'kind = "oltp"\nclients = 3')
    (tmp_path / "bad.toml").write_text(bad)
    one_line_error(cli("config", "check", tmp_path / "bad.toml"), "clients")
    missing_disk = write_config(tmp_path / "nodisk.toml", 10).read_text().replace('"atlas10k"', '"nodisk.toml.spec"')
    (tmp_path / "nodisk.toml").write_text(missing_disk)
    one_line_error(cli("config", "check", tmp_path / "nodisk.toml"), "nodisk.toml.spec")
    p = cli("config", "show", small)
    assert p.returncode == 0, p.stderr
    # Defaults the file does not state are shown.
    assert "class_expire_ms" in p.stdout and 'array = "concat"' in p.stdout
    # The resolved config, as JSON or as TOML, runs to the same result as the file.
    resolved = json.loads(cli("config", "show", small, "--json").stdout)
    shown = tmp_path / "shown.toml"
    shown.write_text(p.stdout)
    want = disksched.run(small).summary
    assert disksched.run(resolved).summary == want
    assert disksched.run(shown).summary == want


def test_config_reference_is_generated_and_committed():
    p = cli("config", "reference")
    assert p.returncode == 0, p.stderr
    assert p.stdout == (ROOT / "docs/config.md").read_text(), "docs/config.md is stale: make config-reference"
    # Every table and a few keys of each kind of bound.
    for want in ["## `[host]`", "`queue_threshold` | integer | requests | 1 | [1, 1024]",
                 "`wiops` | number | IO/s | 0 | 0 or [0.001, 1000000000]", "## `[workload]` with `kind = \"onoff\"`",
                 "## `set` of scheduler `rr`", "`hot_fraction` | number |  | required | (0, 1)"]:
        assert want in p.stdout, want


def test_the_wiops_hang_is_a_one_line_error(tmp_path, small):
    # External freeblock with a best-effort write rate of 1e-308 IO/s hung, ignoring Ctrl-C.
    cfg = small.read_text().replace("queue_threshold = 16", "queue_threshold = 2").replace('scheduler = "sptf"', 'scheduler = "fcfs"')
    (tmp_path / "wiops.toml").write_text(cfg + '[freeblock]\nmode = "external"\nidle = false\n[host.shaper]\nbest-effort = { wiops = 1e-308 }\n')
    one_line_error(cli("run", tmp_path / "wiops.toml", timeout=60), "host.shaper.best-effort.wiops", "1e-308", "0 or [0.001")

def test_listings_as_json_and_in_80_columns():
    p = cli("disks", "list", "--json")
    disks = json.loads(p.stdout)
    assert [d["name"] for d in disks] == disksched.disks()
    p = cli("schedulers", "--json")
    s = json.loads(p.stdout)
    assert [x["name"] for x in s["schedulers"]] == [x["name"] for x in disksched.schedulers()]
    assert s["shaper"] == disksched.shaper_info()
    for args in (["disks", "list"], ["disks", "show", "atlas10k"], ["schedulers"]):
        p = cli(*args, columns=80)
        assert p.returncode == 0, p.stderr
        assert "…" not in p.stdout and "e+0" not in p.stdout, (args, p.stdout)
        assert max(len(line) for line in p.stdout.splitlines()) <= 80
    rpm = [line for line in cli("disks", "show", "atlas10k", columns=80).stdout.splitlines() if " rpm " in line]
    assert rpm and rpm[0].split("│")[2].strip() == "10025"


# --- plots ---------------------------------------------------------------------------------------------

def test_run_out_plots_by_class(tmp_path):
    cfg = tmp_path / "qos.toml"
    cfg.write_text((ROOT / "examples/qos.toml").read_text().replace("duration_ms = 60000", "duration_ms = 5500"))
    out = tmp_path / "out"
    p = cli("run", cfg, "--out", out, "--log-x")
    assert p.returncode == 0, p.stderr
    names = {f.name for f in out.iterdir()}
    assert {"response_cdf.png", "response_cdf_by_class.png", "lbn_time.png", "queue_depth.png", "throughput.png",
            "series.csv", "rates.csv", "summary.json"} <= names
    assert all((out / n).stat().st_size > 5000 for n in names if n.endswith(".png"))


def test_throughput_plot_leaves_out_the_partial_window(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    from disksched import plots

    drawn = []
    series = pd.DataFrame({"client": [0, 0, 0, 1, 1, 1], "class": ["real-time"] * 3 + ["best-effort"] * 3,
                           "time_s": [0.0, 1.0, 2.0] * 2, "mb_per_s": [2.0, 2.0, 0.5, 1.0, 1.0, 0.1]})
    rates = pd.DataFrame({"time_s": [], "name": pd.Series([], dtype=object), "value": []})
    import matplotlib.axes

    real_plot = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda self, x, y, **kw: drawn.append((kw.get("label"), list(x), list(y))) or real_plot(self, x, y, **kw))
    # The run ended at 2.4 s: the window [2, 3) is partial and not drawn.
    plots.throughput(tmp_path / "t.png", series, rates, "t", end_s=2.4, by_class=True)
    assert sorted(drawn) == [("best-effort (1 client)", [0.5, 1.5], [1.0, 1.0]),
                             ("real-time (1 client)", [0.5, 1.5], [2.0, 2.0])]


# --- data shipped in the package -------------------------------------------------------------------

def test_shipped_traces_and_validate_by_name(tmp_path):
    from disksched import data

    for name in data.names():
        assert data.trace_path(name).exists()
    with pytest.raises(disksched.DiskschedError, match="unknown built-in trace"):
        data.trace_path("floppy")
    p = cli("validate", "--disk", "atlas10k", "--trace", "atlas10k", "--json")
    assert p.returncode == 0, p.stderr
    by_name = json.loads(p.stdout)
    shared = SHARED / "disksim/atlas10k.trace"
    if shared.exists():
        # The shipped copy is the shared file, compressed: the same requests, the same figures.
        assert by_name["requests"] == len(shared.read_text().splitlines())
        assert json.loads(cli("validate", "--disk", "atlas10k", "--trace", shared, "--json").stdout) == by_name
    one_line_error(cli("validate", "--disk", "atlas10k", "--trace", "nosuchtrace"), "built-in")
    info = json.loads(cli("trace", "info", data.trace_path("ajw.1week"), "--json").stdout)
    assert info["requests"] > 0


def test_records_mark_the_warmup_rows():
    cfg = {"seed": 5, "disk": {"model": "atlas10k"}, "workload": {"kind": "oltp"},
           "run": {"requests": 3000, "warmup_requests": 700}}
    r = disksched.run(cfg, records=True)
    df = r.records()
    assert len(df) == 3000 and int(df.warmup.sum()) == 700
    assert (df.seq[df.warmup] < 700).all() and (df.seq[~df.warmup] >= 700).all()
    measured = df[~df.warmup]
    assert r.summary["requests"] == len(measured)
    host_max_ms = float((measured.done_ns - measured.arrival_ns).max()) / 1e6
    assert abs(r.summary["host_response_ms"]["max"] - host_max_ms) <= 0.01 * host_max_ms

"""The figures of docs/freeblock.md: `python docs/freeblock_figures.py fig7|rule|curve [OUTDIR]`
(Fig. 7 prediction errors; the one-command-per-track rule's cost; the conservatism curve),
with the new noise defaults and the noise before issue 20 (`OLD`)."""
import json, re, sys
from pathlib import Path
from disksched import run, _core
from disksched.reproductions.lumb2002 import ultra2_spec, _config, scan_point

out = Path(sys.argv[2] if len(sys.argv) > 2 else "out/freeblock_figures"); out.mkdir(parents=True, exist_ok=True)
disk_path, _ = ultra2_spec(out)
disk = str(disk_path)
log = lambda s: print(s, file=sys.stderr)
OLD = {"seek_jitter_us": 20, "seek_bias_us": 0, "seek_tail_pct": 0, "overlap_jitter_pct": 0, "surprise_hit_pct": 0.5}
what = sys.argv[1]
res = {}
if what == "curve":
    for noise_name, noise in [("new", None), ("old", OLD)]:
        for c in [0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 1.0]:
            p = scan_point(_config(disk, "sptf_sw", "external", c, True, 1, {}, noise=noise), 1e6, 300_000.0, log)
            res[f"{noise_name}_c{c}"] = p
            print(noise_name, c, json.dumps(p), flush=True)
elif what == "fig7":
    for noise_name, noise in [("new", None), ("old", OLD)]:
        for kb in [4, 40]:
            rnd = _config(disk, "fcfs", "external", 0.0, False, 1, {"requests": 50000, "warmup_requests": 5000}, noise=noise)
            rnd["workload"] = {"kind": "closed", "clients": 2, "think_time_ms": 0, "size_kb": kb, "read_fraction": 1.0}
            e = run(rnd).summary["freeblock"]["external"]
            r = {k: e[k] for k in ("error_within_50us", "error_within_150us", "error_one_rev_longer", "error_one_rev_shorter", "requests_direct")}
            r["noise"] = e["noise"]
            print(noise_name, kb, json.dumps(r), flush=True)
elif what == "rule":
    text, _ = _core.disk_show(disk)
    spec = text + ""
    spt = int(re.search(r"^sectors_per_track = (\d+)", text, re.M).group(1))
    trig = out / "atlas10k_ultra2_sametrack.toml"
    t2 = re.sub(r"^(\[controller\]\n)", rf"\1same_track_read_ahead_blocks = {spt}\n", text, count=1, flags=re.M)
    assert t2 != text
    trig.write_text(t2)
    for dname, d in [("plain", disk), ("same_track_prefetch", str(trig))]:
        for rule in [True, False]:
            cfg = _config(d, "sptf_sw", "external", 0.3, True, 1, {})
            cfg["freeblock"]["one_per_track"] = rule
            p = scan_point(cfg, 1e6, 300_000.0, log)
            print(dname, "rule" if rule else "no_rule", json.dumps(p), flush=True)

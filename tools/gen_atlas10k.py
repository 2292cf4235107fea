"""Write crates/disksched-core/disks/atlas10k.toml from DiskSim's published
Atlas 10K files (../shared/disksim/atlas10k.{diskspecs,model,seek}).

A one-off generator for the foundation's built-in disk; the DiskSim importer
(`disksched disks import`) supersedes it.
"""
import re
import sys
from pathlib import Path

SRC = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/disksim")
OUT = Path(__file__).resolve().parent.parent / "crates/disksched-core/disks/atlas10k.toml"

model = (SRC / "atlas10k.model").read_text()
specs = (SRC / "atlas10k.diskspecs").read_text()
seek = (SRC / "atlas10k.seek").read_text()


def num(text, key):
    m = re.search(re.escape(key) + r"\s*[=:]\s*([-0-9.eE]+)", text)
    return float(m.group(1))


zones = re.findall(
    r"First cylinder number = (\d+),\s*Last cylinder number = (\d+),\s*Blocks per track = (\d+),\s*"
    r"Offset of first block = ([0-9.]+),\s*Empty space at zone front = (\d+),\s*"
    r"Skew for track switch = ([0-9.]+),\s*Skew for cylinder switch = ([0-9.]+),\s*"
    r"Number of spares = (\d+),\s*slips =\s*\[([^\]]*)\],\s*defects =\s*\[([^\]]*)\]",
    model,
)
assert len(zones) == 24, len(zones)
points = [tuple(float(x) for x in line.split(",")[:2]) for line in seek.splitlines()[1:] if line.strip()]
assert len(points) == int(num(seek, "Seek distances measured")) == 138

out = [
    'name = "atlas10k"',
    'description = "Quantum Atlas 10K (QUANTUM_TORNADO), 10025 RPM, 9.1 GB"',
    'source = "DiskSim 4.0 validated parameters: atlas10k.diskspecs, atlas10k.model, atlas10k.seek"',
    f"surfaces = {int(num(model, 'Number of data surfaces'))}",
    f"cylinders = {int(num(model, 'Number of cylinders'))}",
    f"blocks = {int(num(model, 'Block count'))}",
    "sector_bytes = 512",
    f"rpm = {num(model, 'Rotation speed (in rpms)')}",
    "",
    "[controller]",
    f"read_overhead_after_read_ms = {num(specs, 'Read miss over. after read')}",
    f"read_overhead_after_write_ms = {num(specs, 'Read miss over. after write')}",
    f"write_overhead_after_read_ms = {num(specs, 'Write miss over. after read')}",
    f"write_overhead_after_write_ms = {num(specs, 'Write miss over. after write')}",
    f"bus_sector_ms = {num(specs, 'Bulk sector transfer time')}",
    "queue_depth = 1024",
    "",
    "[seek]",
    f"single_cylinder_ms = {num(model, 'Single cylinder seek time')}",
    f"full_stroke_ms = {num(model, 'Full strobe seek time')}",
    f"head_switch_ms = {num(model, 'Head switch time')}",
    f"write_settle_ms = {num(model, 'Add. write settling delay')}",
    "table = [" + ", ".join(f"[{int(d)}, {t}]" for d, t in points) + "]",
    "",
    "[layout]",
    'mapping = "serpentine"',  # LBN-to-PBN mapping scheme = 1
    'sparing = "sectors-per-zone"',
    f"sparing_range_cylinders = {int(num(model, 'Rangesize for sparing'))}",
]
for first, last, bpt, off, empty, tskew, cskew, spares, slips, defects in zones:
    assert int(empty) == 0 and not defects.strip()
    slip_list = [int(s) for s in re.findall(r"\d+", slips)]
    out += [
        "",
        "[[layout.zones]]",
        f"first_cylinder = {first}",
        f"last_cylinder = {last}",
        f"sectors_per_track = {bpt}",
        f"first_block_offset_sectors = {float(off)}",
        f"track_skew_sectors = {float(tskew)}",
        f"cylinder_skew_sectors = {float(cskew)}",
        f"spares = {spares}",
        f"slips = {slip_list}",
    ]
OUT.write_text("\n".join(out) + "\n")
print(f"wrote {OUT}")

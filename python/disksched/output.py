"""Writing results: atomically (never a half-written file) and as tables."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def atomic_write(path: Path, write: Callable[[str], Any]) -> None:
    """Call `write(tmp_path)` then move the file into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(json.dumps(obj, indent=2) + "\n"))


def summary_rows(summary: dict) -> list[tuple[str, str]]:
    """(metric, value) pairs for the terminal table."""
    h, d = summary["host_response_ms"], summary["disk_response_ms"]
    return [
        ("requests", f"{summary['requests']:,} ({summary['reads']:,} reads, {summary['writes']:,} writes)"),
        ("throughput", f"{summary['iops']:.1f} IOPS, {summary['mb_per_s']:.2f} MB/s"),
        ("host response ms", f"mean {h['mean']:.3f}  p50 {h['p50']:.3f}  p90 {h['p90']:.3f}  "
                             f"p99 {h['p99']:.3f}  p99.9 {h['p999']:.3f}  max {h['max']:.3f}"),
        ("disk response ms", f"mean {d['mean']:.3f}  p50 {d['p50']:.3f}  p90 {d['p90']:.3f}  "
                             f"p99 {d['p99']:.3f}  p99.9 {d['p999']:.3f}  max {d['max']:.3f}"),
        ("service ms", f"mean {summary['mean_service_ms']:.3f} = overhead {summary['mean_overhead_ms']:.3f}  "
                       f"destage wait {summary['mean_destage_wait_ms']:.3f}  seek {summary['mean_seek_ms']:.3f}  "
                       f"rotation {summary['mean_rotation_ms']:.3f}  transfer {summary['mean_transfer_ms']:.3f}  "
                       f"bus {summary['mean_bus_ms']:.3f}"),
    ] + ([
        ("destages ms", f"{summary['destages']:,} after their writes' reports: seek {summary['mean_destage_seek_ms']:.3f}  "
                        f"rotation {summary['mean_destage_rotation_ms']:.3f}  transfer {summary['mean_destage_transfer_ms']:.3f}"),
    ] if summary.get("destages") else []) + [
        ("queues", f"host mean {summary['mean_host_queue']:.2f} (max {summary['max_host_queue']})  "
                   + (f"controller mean {summary['mean_controller_queue']:.2f} (max {summary['max_controller_queue']})  "
                      if "mean_controller_queue" in summary else "")
                   + f"disk mean {summary['mean_disk_queue']:.2f} (max {summary['max_disk_queue']})"),
        ("simulated time", f"{summary['sim_time_ms'] / 1000:.3f} s"),
    ] + freeblock_rows(summary.get("freeblock"))


def freeblock_rows(f: dict | None) -> list[tuple[str, str]]:
    if not f:
        return []
    rows = [("free bandwidth", f"{f['free_mb_per_s']:.2f} MB/s ({f['latency_mb_per_s']:.2f} from rotational latency; "
                               f"{f['free_blocks']:,} + {f['idle_blocks']:,} idle blocks)"),
            ("planner", f"{f['planner_us_per_opportunity']:.1f} us CPU per opportunity, {f['opportunities']:,} opportunities")]
    e = f.get("external")
    if e:
        rows.append(("external", f"{e['background_commands']:,} background commands, {e['merged_reads']:,} merged reads; "
                                 f"late foreground {100 * e['late_fraction_after_background']:.2f}% after background work, "
                                 f"{100 * e['late_fraction_direct']:.2f}% without"))
        rows.append(("prediction error", f"{100 * e['error_within_50us']:.1f}% within 50 us, "
                                         f"{100 * e['error_one_rev_longer']:.1f}% one revolution longer, "
                                         f"{100 * e['error_one_rev_shorter']:.1f}% shorter"))
    for t in f["tasks"]:
        done = f" at {t['completed_ms'] / 1000:.1f} s" if t["completed_ms"] is not None else ""
        rows.append((f"task {t['name']}", f"{t['state']}{done}: {t['blocks_done']:,} of {t['blocks_total']:,} blocks "
                                          f"({100 * t['blocks_done'] / t['blocks_total']:.1f}%)"))
    return rows

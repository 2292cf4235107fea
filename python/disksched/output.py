"""Writing results: atomically (never a half-written file) and as tables."""

from __future__ import annotations

import glob
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ._core import DiskschedError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def tmp_name(path: Path) -> Path:
    """The temporary beside `path` that this process writes first: `.NAME.tmp-PID`
    (the name `trace convert` uses too), so a killed process's leftovers are known."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def clean_stale(path: Path) -> None:
    """Remove the `.NAME.tmp-PID` temporaries of `path` left by processes that no longer run."""
    path = Path(path)
    try:
        leftovers = list(path.parent.glob(f".{glob.escape(path.name)}.tmp-*"))
    except OSError:
        return
    for p in leftovers:
        pid = p.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def atomic_write(path: Path, write: Callable[[str], Any]) -> None:
    """Call `write(tmp_path)` then move the file into place in one step (mode 0666 less the umask)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DiskschedError(f"{path}: cannot create folder {path.parent}: {e.strerror}") from None
    if path.is_dir():
        raise DiskschedError(f"{path}: is a directory, expected a file name")
    clean_stale(path)
    tmp = tmp_name(path)
    try:
        with open(tmp, "wb"):
            pass
    except OSError as e:
        raise DiskschedError(f"{path}: cannot write in {path.parent}: {e.strerror}") from None
    try:
        write(str(tmp))
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_out_file(path: Path, what: str) -> None:
    """Before a run: `path` must be a file name in a folder this process can write."""
    path = Path(path)
    if path.is_dir():
        raise DiskschedError(f"{what} {path}: is a directory; expected an output file name")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise DiskschedError(f"{what} {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DiskschedError(f"{what} {path}: cannot write in {parent}: permission denied")


@contextmanager
def output_dir(out: Path, force: bool = False, what: str = "--out") -> Iterator[Path]:
    """A fresh temporary folder `.NAME.tmp-PID` beside `out`, checked before
    the run starts; on success it becomes `out` in one rename (or, with
    `force`, its files replace their namesakes in an existing `out`); on any
    error or Ctrl-C it is removed, so `out` is never half-written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DiskschedError(f"{what} {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise DiskschedError(f"{what} {out}: folder exists and is not empty; use --force to write into it")
    if not out.name or out.name in (".", ".."):
        out = out.resolve()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DiskschedError(f"{what} {out}: cannot create folder {out.parent}: {e.strerror}") from None
    clean_stale(out)
    tmp = tmp_name(out)
    if tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
    except OSError as e:
        raise DiskschedError(f"{what} {out}: cannot write in {out.parent}: {e.strerror}") from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if out.is_dir() and (out.is_symlink() or any(out.iterdir())):
            for f in sorted(tmp.iterdir()):
                os.replace(f, out / f.name)
            tmp.rmdir()
        else:
            if out.is_dir():
                out.rmdir()
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(json.dumps(obj, indent=2) + "\n"))


def run_title(name: str, provenance: dict | None) -> str:
    """A run's title (its table's and plots'): the config, the schedulers of its queues and its overrides."""
    if not provenance:
        return name
    cfg = provenance.get("config") or {}
    queues = [f"{q} {cfg[q]['scheduler']}" for q in ("host", "controller", "disk")
              if isinstance(cfg.get(q), dict) and cfg[q].get("scheduler")]
    over = provenance.get("overrides") or {}
    said = ", ".join(queues + [f"{k}={v}" for k, v in over.items() if k not in ("run.warmup_requests",)])
    return f"{name} ({said}, seed {provenance.get('seed')})" if said else name


def _distribution(x: dict) -> str:
    return (f"mean {x['mean']:.3f}  p50 {x['p50']:.3f}  p90 {x['p90']:.3f}  "
            f"p99 {x['p99']:.3f}  p99.9 {x['p999']:.3f}  max {x['max']:.3f}")


def class_rows(summary: dict) -> list[tuple[str, str]]:
    """One row per class when several ran or any request had a deadline: its requests, response
    times and missed deadlines (a stream that misses every deadline must show on screen)."""
    classes = summary.get("classes") or {}
    if len(classes) < 2 and not summary.get("deadline_requests"):
        return []
    rows = []
    for name, c in classes.items():
        missed = (f"; deadlines missed {c['deadline_misses']:,} of {c['deadline_requests']:,} "
                  f"({100 * c['deadline_misses'] / c['deadline_requests']:.1f}%)" if c["deadline_requests"] else "")
        rows.append((f"{name} ms", f"{c['requests']:,} requests: {_distribution(c['host_response_ms'])}{missed}"))
    return rows


def starvation_row(summary: dict) -> list[tuple[str, str]]:
    """The longest wait, and the requests that waited more than ten times the mean (when any did)."""
    s = summary.get("starvation")
    if not s or not s["waited_over_10x_mean"]:
        return []
    mean = summary["host_response_ms"]["mean"]
    times = f" ({s['longest_wait_ms'] / mean:,.0f}x the mean)" if mean > 0 else ""
    return [("starvation", f"longest wait {s['longest_wait_ms']:,.3f} ms{times}; {s['waited_over_10x_mean']:,} requests "
                           f"waited over 10x the mean ({s['threshold_ms']:.3f} ms)")]


def summary_rows(summary: dict) -> list[tuple[str, str]]:
    """(metric, value) pairs for the terminal table."""
    h, d = summary["host_response_ms"], summary["disk_response_ms"]
    digits = summary.get("percentile_significant_digits")
    precision = [("", f"mean and percentiles within 0.1% ({digits}-digit histogram); max exact")] if digits else []
    deadlines = [("deadlines", f"missed {summary['deadline_misses']:,} of {summary['deadline_requests']:,} "
                               f"({100 * summary['deadline_misses'] / summary['deadline_requests']:.1f}%)")
                 ] if summary.get("deadline_requests") else []
    return [
        ("requests", f"{summary['requests']:,} ({summary['reads']:,} reads, {summary['writes']:,} writes)"),
        ("throughput", f"{summary['iops']:.1f} IOPS, {summary['mb_per_s']:.2f} MB/s"),
        ("host response ms", _distribution(h)),
        ("disk response ms", _distribution(d)),
    ] + precision + class_rows(summary) + deadlines + starvation_row(summary) + [
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
    ] + disk_noise_rows(summary.get("disk_noise")) + freeblock_rows(summary.get("freeblock"))


def disk_noise_rows(n: dict | None) -> list[tuple[str, str]]:
    """`[disk.noise]`: what the drive's noise did and how far the exact belief mispredicted."""
    if not n:
        return []
    return [("drive noise", f"seeks {n['noise']['seek_jitter_mean_us']:+.1f} us mean, {n['noise']['seek_jitter_sd_us']:.1f} us sd; "
                            f"{n['noise']['internal_activities']:,} internal activities"),
            ("belief error", f"completion {n['service_error_mean_us']:+.1f} us mean ({n['commands']:,} commands): "
                             f"{100 * n['error_within_50us']:.1f}% within 50 us, "
                             f"{100 * n['error_one_rev_longer']:.1f}% one revolution longer, "
                             f"{100 * n['error_one_rev_shorter']:.1f}% shorter")]


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

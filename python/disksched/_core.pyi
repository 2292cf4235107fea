"""Type stubs for the Rust extension module `disksched._core`."""

from typing import Any, Callable, Optional, Sequence

import numpy as np

class DiskschedError(ValueError):
    """A user error: bad config, spec, tunable or file. The message is one line."""

def run(
    config_text: str,
    origin: str,
    seed: Optional[int] = ...,
    progress: Optional[Callable[[int, int], object]] = ...,
    record_sink: Optional[Callable[[dict[str, np.ndarray]], object]] = ...,
    record_chunk_rows: int = ...,
    schedulers: Optional[dict[str, type]] = ...,
    workloads: Optional[dict[str, type]] = ...,
    classifier: Optional[Callable[[Any], Any]] = ...,
) -> tuple[str, str, Optional[dict[str, np.ndarray]], Optional[dict]]:
    """Run a simulation from config text (TOML, or JSON if `origin` ends in `.json`); returns
    (summary JSON, counters JSON, record columns or None, time series or None: window_ms,
    per client-window columns client, class, window, bytes, requests, deadline_requests, missed,
    and samples sample_ns, sample_name, sample_value). With `record_sink`, records go to it in
    chunks of `record_chunk_rows` while the run goes; the returned columns are the last chunk.
    `schedulers` / `workloads`: Python plug-ins ({name: disksched.Scheduler / Workload subclass}) the config
    may name; `classifier(arrival)`: None or (flow, class, deadline_ms) for every workload request."""

def serve(
    config_text: str,
    origin: str,
    options_json: str,
    on_ready: Callable[[str], object],
    seed: Optional[int] = ...,
    record_sink: Optional[Callable[[dict[str, np.ndarray]], object]] = ...,
    record_chunk_rows: int = ...,
    schedulers: Optional[dict[str, type]] = ...,
    workloads: Optional[dict[str, type]] = ...,
) -> tuple[str, str, Optional[dict[str, np.ndarray]], str, Optional[str]]:
    """Serve the config's drive as an NBD export (options: listen, allow_remote, size_bytes, backing,
    stats, max_connections, max_request_kb, export_name, catch_up, handshake_timeout_s) until a Python
    signal handler raises; returns (summary JSON, counters JSON, record columns or None, serve statistics JSON,
    the name of the exception that stopped it or None)."""

def config_resolve(config_text: str, origin: str, check: bool = ..., schedulers: Optional[dict[str, type]] = ...,
                   workloads: Optional[dict[str, type]] = ...) -> tuple[str, str]:
    """Check a run config without running it, with the Python plug-ins it may name (`check=False`:
    parse only); returns it resolved with every default, as (TOML, JSON)."""

def disk_names() -> list[str]: ...
def disk_show(name: str, base_dir: Optional[str] = ...) -> tuple[str, str]:
    """(spec TOML, JSON of derived facts) for a built-in disk or spec path."""

def config_reference() -> str:
    """The run-config reference (Markdown), generated from the declared schema."""

def schedulers() -> str:
    """JSON list of registered schedulers with their tunables."""

def shaper_info() -> str:
    """JSON: the shaper's policies, policy tunables and pipe tunables."""

def heap_bytes(reset: bool = ...) -> tuple[int, int]:
    """(current, peak) bytes allocated by the Rust core."""

def dispatch_rate(name: str, depth: int, decisions: int, disk: str, range_blocks: int) -> float:
    """Dispatch decisions per second of a scheduler holding `depth` requests."""

def trace_info(path: str, format: Optional[str] = ..., skip_bad_lines: bool = ...) -> str:
    """JSON summary of a trace file: format, devices, duration, mix, sizes,
    inter-arrival gaps, footprint, sequentiality, bad lines skipped."""

def trace_convert(path: str, to: str, out: str, format: Optional[str] = ..., skip_bad_lines: bool = ...) -> int:
    """Convert a trace to format `to` at `out` (all or nothing); returns records written."""

def validate(disk: str, trace: str, samples: bool = True) -> tuple[str, Optional[np.ndarray], Optional[np.ndarray]]:
    """Closed-loop replay of a DiskSim validate trace: (summary JSON with rms_ms (DiskSim's demerit, on its
    histograms), rms_exact_ms (on the samples), per_request etc., measured ms, simulated ms); the two arrays
    only with `samples` (else None, and numpy is not imported)."""

def disk_import(path: str, name: Optional[str] = ..., disk: Optional[str] = ...) -> str:
    """A disk spec (DiskSim .parv/.diskspecs/.model, .toml, or built-in name) as the project's TOML."""

def trace_parse_rate(format: str, lines: int) -> float:
    """Lines per second parsing a generated trace of `lines` lines in `format`."""

def disk_datasheet(figures_json: str) -> str:
    """A plausible disk spec (TOML) from datasheet figures (JSON object)."""

def disk_characteristics(disk: str, seek_distances: list[int] = ..., cylinders: list[int] = ...,
                         lbns: list[int] = ...) -> str:
    """JSON: geometry, zones with media rates (MB/s), average_seek_ms, seek_ms at `seek_distances`,
    cylinder_tracks ([[first LBN, count] by head]) of `cylinders`, lbn_cylinder and lbn_sectors_per_track (the
    cylinder and the sectors per track of its track, or null) of `lbns`."""

def plugin_dispatch_rate(schedulers: dict[str, type], name: str, depth: int, decisions: int, disk: str) -> float:
    """Dispatch decisions per second of plug-in scheduler `name` holding `depth` requests (as `dispatch_rate`)."""
    ...

class RecordsParquet:
    """records.parquet written chunk by chunk (a row group each); `provenance` in the schema metadata under `key`."""
    def __init__(self, path: str, key: str, provenance: str, class_names: Sequence[str]) -> None: ...
    def write(self, cols: dict[str, np.ndarray]) -> None: ...
    def close(self) -> None: ...

class Simulation:
    """A run driven step by step (`disksched.Simulation` wraps it)."""
    def __init__(self, config_text: str, origin: str, seed: Optional[int] = ..., schedulers: Optional[dict[str, type]] = ...,
                 start: bool = ..., workloads: Optional[dict[str, type]] = ...,
                 classifier: Optional[Callable[[Any], Any]] = ...) -> None: ...
    @property
    def now_ns(self) -> int: ...
    def submit(self, lbn: int, blocks: int, is_write: bool = ..., flow: Optional[int] = ..., class_: str = ...,
               deadline_ns: Optional[int] = ...) -> None: ...
    def run_until(self, until_ns: Optional[int] = ...) -> list[dict]: ...
    def step(self) -> Optional[int]: ...
    def take_completions(self) -> list[dict]: ...
    def queues(self) -> list[tuple[str, int]]: ...
    def schedulers(self) -> list[tuple[str, str]]: ...
    def heads(self) -> list[tuple[int, int, int]]: ...
    def counters(self) -> str: ...
    def switch(self, queue: str, name: str, settings: Optional[dict[str, float]] = ...) -> None: ...
    def background_task(self, action: str, task: int) -> None: ...
    def add_background_task(self, task: str) -> int: ...
    def on_background_transfer(self, callback: Callable[[int, int, int, int, int], Any]) -> None: ...
    def result(self) -> tuple[str, str, Optional[dict[str, np.ndarray]], Optional[dict]]: ...

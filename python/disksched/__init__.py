"""disksched: disk I/O scheduling on a high-fidelity hard-disk simulator.

    >>> import disksched
    >>> r = disksched.run({"disk": {"model": "atlas10k"}, "workload": {"kind": "oltp"},
    ...                    "run": {"requests": 1000}}, records=True)
    >>> r.summary["host_response_ms"]["mean"]      # doctest: +SKIP
    >>> r.records()                                # pandas DataFrame, one row per request
"""

from __future__ import annotations

import json
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _core
from ._core import DiskschedError
from .plugins import Io, PluginError, Scheduler, Tunable, Workload

__all__ = ["run", "sweep", "Result", "DiskschedError", "load_config", "config_resolve", "resolve", "disks", "schedulers",
           "shaper_info", "Scheduler", "Tunable", "PluginError", "Simulation", "SUBMITTED", "Workload", "Io"]

# The client of requests `Simulation.submit` admits (the core's `sim::SUBMITTED`).
SUBMITTED = 2 ** 32 - 1
__version__ = "0.1.0"

Config = Union[str, Path, Mapping[str, Any]]


@dataclass
class Result:
    """Outcome of one run: `summary` (dict, times in ms), `counters` (request
    accounting) and, if requested, per-request columns (`records=True`) and
    time series (`run.series_window_ms` in the config)."""

    summary: dict
    counters: dict
    columns: Optional[dict] = field(default=None, repr=False)
    series_columns: Optional[dict] = field(default=None, repr=False)
    # What produced it: resolved config, overrides, seed, version, commit (see `provenance`).
    provenance: dict = field(default_factory=dict, repr=False)

    def records(self):
        """Per-request records as a pandas DataFrame (times in ns; `class` by
        name: best-effort, real-time, background, as in `series()`; `warmup`
        marks the rows the summary leaves out, the first `run.warmup_requests`
        by arrival)."""
        if self.columns is None:
            raise DiskschedError("this run kept no per-request records (run with records=True)")
        return records_frame(self.columns)

    def _series(self) -> dict:
        if self.series_columns is None:
            raise DiskschedError("this run kept no time series (set run.series_window_ms in the config)")
        return self.series_columns

    def series(self):
        """Per client and window (`run.series_window_ms`): a pandas DataFrame with
        client, class, window, time_s (window start), mb_per_s (10^6 bytes/s
        completed), requests, deadline_requests and missed (completed after
        their deadline)."""
        import pandas as pd

        return pd.DataFrame(series_table(self._series()))

    def task_series(self):
        """Freeblock tasks' progress per window (`run.series_window_ms`; no rows
        without `[freeblock]`): a pandas DataFrame with task, window, time_s (window start),
        blocks (moved in the window, all disks), done (moved by the window's end,
        all passes) and mb_per_s (the window's blocks as 10^6 bytes/s)."""
        import pandas as pd

        return pd.DataFrame(tasks_table(self._series()))

    def rates(self):
        """The host scheduler's own samples at each window start (a shaper's token
        rates, `<class>.rate_per_s` in requests/s or `<class>.rate_kb_per_s` in KB/s):
        a pandas DataFrame with time_s, name, value."""
        import pandas as pd

        t = rates_table(self._series())
        return pd.DataFrame({**t, "name": pd.Series(t["name"], dtype=object)})


def series_table(c: Mapping[str, Any]) -> dict:
    """The columns of `Result.series()` from the binding's series dict (no pandas)."""
    w_s = c["window_ms"] / 1000
    return {"client": c["client"], "class": c["class"], "window": c["window"], "time_s": c["window"] * w_s,
            "mb_per_s": c["bytes"] / w_s / 1e6, "requests": c["requests"], "deadline_requests": c["deadline_requests"],
            "missed": c["missed"]}


def tasks_table(c: Mapping[str, Any]) -> dict:
    """The columns of `Result.task_series()` from the binding's series dict (no pandas)."""
    import numpy as np

    w_s = c["window_ms"] / 1000
    window = np.asarray(c["task_window"])
    return {"task": list(c["task"]), "window": window, "time_s": window * w_s, "blocks": c["task_blocks"],
            "done": c["task_done"], "mb_per_s": np.asarray(c["task_bytes"]) / w_s / 1e6}


def rates_table(c: Mapping[str, Any]) -> dict:
    """The columns of `Result.rates()` from the binding's series dict (no pandas)."""
    return {"time_s": c["sample_ns"] / 1e9, "name": c["sample_name"], "value": c["sample_value"]}


# The core's request classes by their `class` code (the Class enum order).
CLASS_NAMES = ("best-effort", "real-time", "background")


def records_frame(columns: Mapping[str, Any]):
    """Record columns (the binding's dict, whole or one streamed chunk) as a DataFrame, `class` by name."""
    import numpy as np
    import pandas as pd

    df = pd.DataFrame(dict(columns))
    df["class"] = pd.Categorical.from_codes(np.asarray(columns["class"], dtype=np.int8), categories=list(CLASS_NAMES))
    return df


SEED_MAX = 2 ** 64 - 1
# Suffixes and first keys of DiskSim parameter files: a drive, not a run config.
_DISKSIM_SUFFIXES = (".parv", ".diskspecs", ".model")
# A line no TOML file can hold: a DiskSim block keyword followed by a name.
_DISKSIM_LINE = re.compile(r"^\s*(disksim_\w+|dm_\w+|instantiate|topology)\s+[^=\s]", re.MULTILINE)


def _json_default(value: Any) -> Any:
    """numpy scalars and arrays (and anything else with `.item()`/`.tolist()`) as plain numbers."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise DiskschedError(f"config value {value!r}: expected a number, string, bool, list or table, "
                         f"not {type(value).__name__}")


def check_seed(seed: Any, what: str = "seed") -> Optional[int]:
    """`seed` as an int in [0, 2^64 - 1] (numpy integers accepted), or None."""
    if seed is None:
        return None
    try:
        if isinstance(seed, bool):
            raise TypeError
        value = operator.index(seed)
    except TypeError:
        raise DiskschedError(f"{what} {seed!r}: expected an integer in [0, {SEED_MAX}]") from None
    if not 0 <= value <= SEED_MAX:
        raise DiskschedError(f"{what} {value}: out of range, expected an integer in [0, {SEED_MAX}]")
    return value


# The most a run config file may be (the core's `budget::MAX_TEXT_FILE_BYTES`, which caps spec, DiskSim and fio files).
MAX_CONFIG_BYTES = 64 << 20


def load_config(config: Config) -> tuple[str, str]:
    """Config text and its origin (a file name; `.json` for JSON text)."""
    if isinstance(config, Mapping):
        if "seed" in config:
            check_seed(config["seed"])
        try:
            return json.dumps(config, default=_json_default, allow_nan=True), "<config>.json"
        except ValueError as e:  # a circular reference
            raise DiskschedError(f"config: {e}") from None
    path = Path(config)
    try:
        with open(path, "rb") as f:  # capped: a device such as /dev/zero never ends
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise DiskschedError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MB, the most a run config may be "
                                 f"(is it a device or a data file?)")
    except FileNotFoundError:
        raise DiskschedError(f"{path}: no such config file") from None
    except IsADirectoryError:
        raise DiskschedError(f"{path}: is a directory, expected a run config file (TOML)") from None
    except OSError as e:
        raise DiskschedError(f"{path}: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise DiskschedError(f"{path}: line {line}: byte 0x{data[e.start]:02x} is not UTF-8 text; "
                             f"expected a run config (TOML)") from None
    if "\0" in text:
        line = text[:text.index("\0")].count("\n") + 1
        raise DiskschedError(f"{path}: line {line}: a NUL byte: this is a binary file, expected a run config (TOML)")
    head = text[:4096]
    if path.suffix.lower() in _DISKSIM_SUFFIXES or _DISKSIM_LINE.search(head):
        raise DiskschedError(f"{path}: this is a DiskSim parameter file, not a run config; use it as "
                             f"disk.model = \"{path}\" in a run config's [disk] table")
    return text, str(path)


@dataclass(frozen=True)
class Resolved:
    """A config with its overrides applied, as the core reads it (`text` from
    `origin`), and resolved (`config`: every default filled in)."""

    text: str
    origin: str
    config: dict
    overrides: dict
    display: str  # the config as the user named it, for messages
    toml: str = ""  # the resolved config as TOML

    def error(self, e: DiskschedError, flag: str = "--set") -> DiskschedError:
        from .overrides import restate

        return restate(e, self.origin, self.display, self.overrides, flag)


def resolve(config: Config, overrides: Any = None, *, check: bool = False, flag: str = "--set") -> Resolved:
    """Apply dotted-key `overrides` (a {"host.scheduler": "rr"} mapping or
    ["host.scheduler=rr"] strings) to `config` and resolve it; every key and
    value is checked as in a config file (`check=True`: every check a run
    makes, disk and trace files included, with the plug-ins `plugins.use` made nameable)."""
    from . import overrides as ov

    over = ov.normalize(overrides, flag)
    text, origin = load_config(config)
    display = origin if not isinstance(config, Mapping) else "config"
    if over:
        data = ov.apply(ov.load_dict(config, text, origin), over, flag)
        if "seed" in over:
            check_seed(over["seed"], f"{flag} seed")
        text, origin = json.dumps(data, default=_json_default, allow_nan=False), ov.json_origin(origin)
    from .plugins import registry, workload_registry

    try:
        # The plug-ins matter only to `check`, which builds the simulation.
        toml_text, resolved = _core.config_resolve(text, origin, check, registry(None) or None, workload_registry(None) or None)
    except DiskschedError as e:
        raise ov.restate(e, origin, display, over, flag) from None
    return Resolved(text, origin, json.loads(resolved), over, display, toml_text)


def run(config: Config, *, seed: Optional[int] = None, records: Optional[bool] = None,
        overrides: Any = None, progress: Optional[Callable[[int, int], Any]] = None,
        record_sink: Optional[Callable[[dict], Any]] = None, record_chunk_rows: int = 65536,
        schedulers: Any = None, workloads: Any = None, classifier: Optional[Callable] = None) -> Result:
    """Run a simulation. `config` is a path to a TOML file or a dict of the
    same shape; `overrides` sets any config key by its dotted path
    (`{"host.scheduler": "rr", "host.set.wait_ms": 5}`); `seed` and `records`
    (= `run.records`) override the config's. With `record_sink`, records are
    handed to it in chunks (dicts of columns; `records_frame` makes each a
    DataFrame) as the run goes instead of being kept. `schedulers` adds Python
    schedulers ({name: class} or [class, ...], `disksched.Scheduler`
    subclasses) that the config may then name at any queue; `workloads`
    likewise (`disksched.Workload`, `kind = "plugin"`); `classifier(arrival)`
    re-classifies every workload request: None keeps it, else (flow, class,
    deadline_ms relative to arrival or None)."""
    from .plugins import registry, workload_registry

    plugins = registry(schedulers)
    loads = workload_registry(workloads)
    seed = check_seed(seed)
    over = dict(overrides) if isinstance(overrides, Mapping) else overrides
    if records is not None:
        from .overrides import merge, normalize

        over = merge(normalize(over), {"run.records": bool(records)})
    res = resolve(config, over, flag="overrides" if not isinstance(overrides, (list, tuple)) else "--set")
    try:
        summary, counters, cols, series = _core.run(res.text, res.origin, seed, progress, record_sink,
                                                    record_chunk_rows, plugins or None, loads or None, classifier)
    except PluginError:
        raise
    except DiskschedError as e:
        raise res.error(e) from None
    from . import provenance

    effective = seed if seed is not None else res.config.get("seed", 0)
    resolved = {**res.config, "seed": effective}
    return Result(json.loads(summary), json.loads(counters), cols, series,
                  provenance.make(resolved, res.overrides, effective))


def config_resolve(config: Config, overrides: Any = None) -> tuple[str, dict]:
    """Check a run config without running it: (resolved TOML with every default, the same as a dict)."""
    res = resolve(config, overrides, check=True)
    return res.toml, res.config


def sweep(config: Config, grid: Optional[Mapping[str, Sequence[Any]]] = None, *, seeds: Any = 1, **kwargs):
    """Run `config` at every point of `grid` ({dotted key: values}, all
    combinations) for each seed; see `disksched.sweep_runner.sweep`. Returns a
    pandas DataFrame, one row per run."""
    from .sweep_runner import sweep as _sweep

    return _sweep(config, grid, seeds=seeds, **kwargs)


def disks() -> list[str]:
    """Names of the built-in disks."""
    return list(_core.disk_names())


def schedulers() -> list[dict]:
    """The scheduler registry: name, aliases, summary, tunables."""
    return json.loads(_core.schedulers())


def shaper_info() -> dict:
    """The traffic shaper: policies, policy tunables, per-class pipe tunables."""
    return json.loads(_core.shaper_info())


from .simulation import Simulation  # noqa: E402  (it uses Result and resolve above)

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

__all__ = ["run", "Result", "DiskschedError", "load_config", "config_resolve", "disks", "schedulers", "shaper_info"]
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

    def records(self):
        """Per-request records as a pandas DataFrame (times in ns; `class` 0
        best-effort, 1 real-time, 2 background; `warmup` marks the rows the
        summary leaves out, the first `run.warmup_requests` by arrival)."""
        import pandas as pd

        if self.columns is None:
            raise DiskschedError("this run kept no per-request records (run with records=True)")
        return pd.DataFrame(self.columns)

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

        c = self._series()
        w_s = c["window_ms"] / 1000
        df = pd.DataFrame({k: c[k] for k in ("client", "class", "window", "requests", "deadline_requests", "missed")})
        df.insert(3, "time_s", c["window"] * w_s)
        df.insert(4, "mb_per_s", c["bytes"] / w_s / 1e6)
        return df

    def rates(self):
        """The host scheduler's own samples at each window start (a shaper's token
        rates, `<class>.rate_per_s` in requests/s or `<class>.rate_kb_per_s` in KB/s):
        a pandas DataFrame with time_s, name, value."""
        import pandas as pd

        c = self._series()
        return pd.DataFrame({"time_s": c["sample_ns"] / 1e9, "name": pd.Series(c["sample_name"], dtype=object),
                             "value": c["sample_value"]})


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
        data = path.read_bytes()
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


def parse_settings(items: Sequence[str]) -> list[tuple[str, float]]:
    """`key=value` strings (CLI `--set`) as (key, number) pairs."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        try:
            if not sep or not key:
                raise ValueError
            out.append((key.strip(), float(value)))
        except ValueError:
            raise DiskschedError(f"--set {item!r}: expected key=number, e.g. wait_ms=5") from None
    return out


def run(config: Config, *, seed: Optional[int] = None, records: Optional[bool] = None,
        progress: Optional[Callable[[int, int], Any]] = None,
        sched: Optional[str] = None, settings: Sequence[tuple[str, float]] = (),
        disk_sched: Optional[str] = None, disk_settings: Sequence[tuple[str, float]] = (),
        shaper: Optional[str] = None, shaper_settings: Sequence[tuple[str, float]] = (),
        ctl_sched: Optional[str] = None, ctl_settings: Sequence[tuple[str, float]] = ()) -> Result:
    """Run a simulation. `config` is a path to a TOML file or a dict of the
    same shape. `seed`, `records`, the host scheduler (`sched`, with tunable
    `settings`), the drive's (`disk_sched`, `disk_settings`), the traffic
    shaper's policy (`shaper`) and settings (`shaper_settings`: `cut_factor`,
    `best-effort.rate_per_s`, ...) and the controller's scheduler
    (`ctl_sched`, `ctl_settings`; adds a `[controller]` level if the config
    has none) override the config's values."""
    seed = check_seed(seed)
    text, origin = load_config(config)
    summary, counters, cols, series = _core.run(text, origin, seed, records, progress, sched, list(settings),
                                                disk_sched, list(disk_settings), shaper, list(shaper_settings),
                                                ctl_sched, list(ctl_settings))
    return Result(json.loads(summary), json.loads(counters), cols, series)


def config_resolve(config: Config) -> tuple[str, dict]:
    """Check a run config without running it: (resolved TOML with every default, the same as a dict)."""
    text, origin = load_config(config)
    toml_text, json_text = _core.config_resolve(text, origin)
    return toml_text, json.loads(json_text)


def disks() -> list[str]:
    """Names of the built-in disks."""
    return list(_core.disk_names())


def schedulers() -> list[dict]:
    """The scheduler registry: name, aliases, summary, tunables."""
    return json.loads(_core.schedulers())


def shaper_info() -> dict:
    """The traffic shaper: policies, policy tunables, per-class pipe tunables."""
    return json.loads(_core.shaper_info())

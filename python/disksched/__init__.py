"""disksched: disk I/O scheduling on a high-fidelity hard-disk simulator.

    >>> import disksched
    >>> r = disksched.run({"disk": {"model": "atlas10k"}, "workload": {"kind": "oltp"},
    ...                    "run": {"requests": 1000}}, records=True)
    >>> r.summary["host_response_ms"]["mean"]      # doctest: +SKIP
    >>> r.records()                                # pandas DataFrame, one row per request
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

from . import _core
from ._core import DiskschedError

__all__ = ["run", "Result", "DiskschedError", "load_config", "disks", "schedulers"]
__version__ = "0.1.0"

Config = Union[str, Path, Mapping[str, Any]]


@dataclass
class Result:
    """Outcome of one run: `summary` (dict, times in ms), `counters` (request
    accounting) and, if records were requested, per-request columns."""

    summary: dict
    counters: dict
    columns: Optional[dict] = field(default=None, repr=False)

    def records(self):
        """Per-request records as a pandas DataFrame (times in ns)."""
        import pandas as pd

        if self.columns is None:
            raise DiskschedError("this run kept no per-request records (run with records=True)")
        return pd.DataFrame(self.columns)


def load_config(config: Config) -> tuple[str, str]:
    """Config text and its origin (a file name; `.json` for JSON text)."""
    if isinstance(config, Mapping):
        return json.dumps(config), "<config>.json"
    path = Path(config)
    try:
        return path.read_text(), str(path)
    except FileNotFoundError:
        raise DiskschedError(f"{path}: no such config file") from None
    except OSError as e:
        raise DiskschedError(f"{path}: {e.strerror}") from None


def run(config: Config, *, seed: Optional[int] = None, records: Optional[bool] = None,
        progress: Optional[Callable[[int, int], Any]] = None) -> Result:
    """Run a simulation. `config` is a path to a TOML file or a dict of the
    same shape. `seed` and `records` override the config's values."""
    text, origin = load_config(config)
    summary, counters, cols = _core.run(text, origin, seed, records, progress)
    return Result(json.loads(summary), json.loads(counters), cols)


def disks() -> list[str]:
    """Names of the built-in disks."""
    return list(_core.disk_names())


def schedulers() -> list[dict]:
    """The scheduler registry: name, aliases, summary, tunables."""
    return json.loads(_core.schedulers())

"""`disksched serve`: the simulated drive as a network block device, in real
time (the server is the core's `serve` module; this wraps it like `run`)."""

from __future__ import annotations

import json
import re
import signal
from typing import Any, Callable, Mapping, Optional

from . import DiskschedError, Result, _core, check_seed, resolve

# The workload of a serve session is its clients: a config's [workload] is
# not run, and one is supplied when the config has none (the core needs one to build).
_PLACEHOLDER_WORKLOAD = {"kind": "dd", "request_kb": 4}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)


def parse_size(text: str, what: str = "--size") -> int:
    """Bytes: 1073741824, 64M, 64MiB, 9G (powers of 1024)."""
    m = _SIZE.match(str(text))
    if not m:
        raise DiskschedError(f"{what} {text}: expected bytes, e.g. 67108864, 64M or 9G (powers of 1024)")
    unit = (m.group(2) or "b")[0].lower()
    return int(m.group(1)) * 1024 ** "bkmgt".index(unit)


def _needs_workload(config: Any) -> bool:
    from . import load_config
    from .overrides import load_dict

    if isinstance(config, Mapping):
        return "workload" not in config
    text, origin = load_config(config)
    return "workload" not in load_dict(config, text, origin)


def serve(config: Any, *, listen: str, overrides: Any = None, seed: Optional[int] = None, allow_remote: bool = False,
          size_bytes: Optional[int] = None, backing: Optional[str] = None, stats: Optional[str] = None,
          max_connections: int = 16, max_request_kb: int = 32768, export_name: str = "disksched", catch_up: bool = True,
          handshake_timeout_s: float = 5.0,
          on_ready: Optional[Callable[[str], Any]] = None, records: Optional[bool] = None,
          record_sink: Optional[Callable[[dict], Any]] = None, record_chunk_rows: int = 65536,
          progress: Any = None, schedulers: Any = None) -> Result:
    """Serve `config`'s drive and schedulers as an NBD export on `listen`
    (`unix:PATH` or `tcp:127.0.0.1:PORT`) until SIGINT or SIGTERM; return the
    session's result, as `disksched.run` does, with `summary["serve"]`: the
    last live statistics (reply lateness, connections, errors). `schedulers`:
    Python schedulers the config may name, as for `disksched.run`."""
    from .overrides import merge
    from .plugins import registry

    seed = check_seed(seed)
    over = session_overrides(config, overrides)
    if records is not None:
        over = merge(over, {"run.records": bool(records)})
    res = resolve(config, over)
    options = {"listen": listen, "allow_remote": allow_remote, "size_bytes": size_bytes, "backing": backing,
               "stats": stats, "max_connections": max_connections, "max_request_kb": max_request_kb,
               "export_name": export_name, "catch_up": bool(catch_up),
               "handshake_timeout_s": float(handshake_timeout_s)}
    # SIGINT and SIGTERM end the session (not the program): the binding runs Python's handlers every 100 ms
    # and stops on their exception; the result is returned and written like any run's. SIGINT is handled
    # even when the shell started the server with it ignored (`serve &` in a script, as docs/serve.md
    # promises "Ctrl-C or SIGTERM"): `kill -INT` is how a script ends a background server.
    def _stop(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    handled = [signal.SIGTERM, signal.SIGINT]
    old = {s: signal.signal(s, _stop) for s in handled}
    try:
        summary, counters, cols, serve_stats, stopped_by = _core.serve(
            res.text, res.origin, json.dumps(options), on_ready or (lambda address: None), seed, record_sink,
            record_chunk_rows, registry(schedulers) or None)
    except DiskschedError as e:
        raise res.error(e) from None
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    from . import provenance

    effective = seed if seed is not None else res.config.get("seed", 0)
    summary = json.loads(summary)
    summary["serve"] = {**json.loads(serve_stats), "stopped_by": stopped_by}
    return Result(summary, json.loads(counters), cols, None,
                  provenance.make({**res.config, "seed": effective}, res.overrides, effective))


def session_overrides(config: Any, overrides: Any) -> dict:
    """The overrides a session runs with: no warm-up (it counts requests by
    arrival) and a placeholder workload when the config has none, then the user's."""
    from .overrides import merge, normalize

    base: dict = {"run.warmup_requests": 0}
    if _needs_workload(config):
        base.update({f"workload.{k}": v for k, v in _PLACEHOLDER_WORKLOAD.items()})
    return merge(base, normalize(overrides, "--set"))


def serve_overrides(disk: Optional[str], set_: list[str]) -> list[str]:
    """`--disk NAME` as the override it is, before the user's --set."""
    return ([f"disk.model={json.dumps(disk)}"] if disk else []) + list(set_)

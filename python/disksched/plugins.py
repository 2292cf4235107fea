"""Plug-ins written in Python: schedulers (`Scheduler`) that the core calls
through the same contract as its built-ins (`crates/disksched-core/src/sched/mod.rs`;
docs/writing-a-scheduler.md), loaded from a file (`load_file`, the CLI's
`--plugin`) or passed to `disksched.run(..., schedulers={...})`.

    import collections, disksched

    class Lifo(disksched.Scheduler):
        name = "lifo"
        def __init__(self):
            self.stack = []
        def insert(self, id, ctx):
            self.stack.append(id)
        def dispatch(self, ctx, force):
            return self.stack.pop() if self.stack else None

    disksched.run("examples/oltp.toml", schedulers=[Lifo], overrides={"host.scheduler": "lifo"})
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import math
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Mapping, Optional, Sequence, Union

from ._core import DiskschedError

__all__ = ["Scheduler", "Workload", "Io", "Tunable", "PluginError", "load_file", "load_source", "registry", "workload_registry",
           "use"]


class PluginError(DiskschedError):
    """Plug-in code raised, or broke the scheduler contract: the message names
    the plug-in, the method and the simulated time, with the traceback of the
    plug-in's own code."""


@dataclass(frozen=True)
class Tunable:
    """A scheduler parameter, declared as the built-ins declare theirs: unit,
    bounds (inclusive) and default; `integer` for whole numbers. Set in a config
    as `set = { name = value }` and checked against the bounds before the run;
    the instance sees the value as an attribute of that name."""

    unit: str
    min: float
    default: float
    max: float
    help: str = ""
    integer: bool = False


class Scheduler:
    """Base class of a Python scheduler: the contract of the core's
    `Scheduler` trait (sched/mod.rs). Subclasses define `insert` and
    `dispatch`; the other hooks are called only if overridden.

    Request ids are ints valid while the scheduler holds the request (from
    `insert` until `dispatch` returns it). `ctx` (valid during the call only)
    gives `now_ns`, `head_cylinder` / `head_surface` (each disk's: `head_of(disk)`), `request(id)` (lbn,
    blocks, is_write, client, flow, class_, deadline_ns, arrival_ns, seq,
    cylinder, ...), fast single fields (`ctx.seq(id)`, `ctx.lbn(id)`,
    `ctx.cylinder(id)`, ...) and the predictor: `positioning_ns(id)` (what SPTF
    minimises), `seek_ns`, `rotation_ns`, `transfer_ns`, `predict(id)`.
    """

    #: Registry name (as in `scheduler = "..."`); default: the class name in lower case.
    name: ClassVar[str] = ""
    #: One line for `disksched schedulers`.
    summary: ClassVar[str] = ""
    #: Declared parameters, by name.
    tunables: ClassVar[Mapping[str, Tunable]] = {}

    def insert(self, id: int, ctx) -> None:
        """Take request `id`; it is held until `dispatch` returns it."""
        raise NotImplementedError

    def dispatch(self, ctx, force: bool) -> Optional[int]:
        """The id of a held request to send below now, or None (then
        `wake_at_ns` says when to ask again). With `force`, return one if any is held."""
        raise NotImplementedError

    def complete(self, id: int, ctx) -> None:
        """Request `id`, which this instance dispatched, finished at the disk."""

    def bypass(self, id: int, ctx) -> bool:
        """At a host or controller queue, before `insert`: True sends `id` straight below."""
        return False

    def wake_at_ns(self) -> Optional[int]:
        """After a `dispatch` that returned None: the simulated time (ns) to ask again, or None."""
        return None

    def drain(self) -> None:
        """The queue's scheduler is being replaced: forget every held request
        (they move to the new scheduler)."""

    def init_class(self, flow: int) -> None:
        """Before the first `insert` of `flow` (and again after `fini_class`)."""

    def fini_class(self, flow: int) -> None:
        """`flow` has been idle for `host.class_expire_ms`: free its state."""

    def counters(self) -> Mapping[str, int]:
        """At the end of the run: the scheduler's own counters."""
        return {}


@dataclass(frozen=True)
class Io:
    """One request of a Python workload: `blocks` sectors at `lbn`, a read
    unless `write`; `class_` best-effort, real-time or background;
    `deadline_ms` relative to its arrival (or None); `flow` (default: the
    client's). An open workload gives each its arrival time: `at_ms`
    (simulated, from the start) or, exactly, `at_ns`."""

    lbn: int
    blocks: int
    write: bool = False
    at_ms: Optional[float] = None
    at_ns: Optional[int] = None
    class_: str = "best-effort"
    deadline_ms: Optional[float] = None
    flow: Optional[int] = None


class Workload:
    """Base class of a Python workload (`kind = "plugin"`, `name = ...` in a
    config, alone or as a `mix` member). Define either

    - `requests(self)`: an *open* workload, a generator of `Io` with
      non-decreasing `at_ms`/`at_ns` (one client; the run ends when it
      stops or at `run.requests`), or
    - `first(self, client)` and `next(self, client, now_ms)`: a *closed*
      workload of `clients` clients; each returns `(Io, think_ms)`, the
      client's next request and the time until it is issued (`first`: from
      the start; `next`: from the completion of its previous one), or None
      from `next` when the client has no more.

    Tunables are declared and set as for a `Scheduler`; `self.capacity_blocks`
    is the disk's (or array's) size.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    tunables: ClassVar[Mapping[str, Tunable]] = {}
    #: Closed workloads: how many clients.
    clients: int = 1


HOOKS = ("complete", "bypass", "wake_at_ns", "drain", "init_class", "fini_class", "counters")


def _class_label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def scheduler_name(cls: type) -> str:
    return (cls.name or cls.__name__).lower()


def declarations(cls: type) -> list[tuple]:
    """(name, unit, min, default, max, integer, help) of each tunable (for the binding)."""
    return [(n, t.unit, float(t.min), float(t.default), float(t.max), bool(t.integer), t.help)
            for n, t in cls.tunables.items()]


def _check_class(name: str, cls: Any, builtin: set) -> None:
    where = f"plug-in scheduler '{name}'"
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        raise DiskschedError(f"{where}: {cls!r} is not a subclass of disksched.Scheduler")
    if name.lower() in builtin:
        raise DiskschedError(f"{where} ({_class_label(cls)}): the name of a built-in scheduler; choose another `name`")
    for m in ("insert", "dispatch"):
        if getattr(cls, m) is getattr(Scheduler, m):
            raise DiskschedError(f"{where} ({_class_label(cls)}): defines no {m}() (every scheduler needs insert and dispatch)")
    _check_tunables(where, cls)


def _check_tunables(where: str, cls: type) -> None:
    if not isinstance(cls.tunables, Mapping):
        raise DiskschedError(f"{where}: `tunables` must be a dict of name -> disksched.Tunable")
    for tn, t in cls.tunables.items():
        if not isinstance(t, Tunable):
            raise DiskschedError(f"{where}: tunable '{tn}' is {t!r}, expected a disksched.Tunable")
        if not tn.isidentifier():
            raise DiskschedError(f"{where}: tunable name {tn!r} is not an identifier")
        vals = (t.min, t.default, t.max)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in vals) or not t.min <= t.default <= t.max:
            raise DiskschedError(f"{where}: tunable '{tn}': expected finite min <= default <= max, got "
                                 f"{t.min!r} <= {t.default!r} <= {t.max!r}")


# Schedulers every run of this process may name (`use`; the CLI's --plugin).
_USED: dict[str, type] = {}


def use(schedulers: Union[None, Mapping[str, type], Sequence[type]] = None,
        workloads: Union[None, Mapping[str, type], Sequence[type]] = None) -> None:
    """Make `schedulers` and `workloads` ({name: class} or [class, ...])
    available to every later run in this process, as if passed to each
    `run(schedulers=..., workloads=...)`."""
    _USED.update(registry(schedulers, with_used=False))
    _USED_WORKLOADS.update(workload_registry(workloads, with_used=False))


_USED_WORKLOADS: dict[str, type] = {}


def _check_workload(name: str, cls: Any) -> None:
    where = f"workload plug-in '{name}'"
    if not (isinstance(cls, type) and issubclass(cls, Workload)):
        raise DiskschedError(f"{where}: {cls!r} is not a subclass of disksched.Workload")
    is_open = getattr(cls, "requests", None) is not None
    is_closed = getattr(cls, "first", None) is not None or getattr(cls, "next", None) is not None
    if is_open == is_closed or (is_closed and not (hasattr(cls, "first") and hasattr(cls, "next"))):
        raise DiskschedError(f"{where} ({_class_label(cls)}): define requests() (open) or first() and next() (closed)")
    _check_tunables(where, cls)


def workload_registry(workloads: Union[None, Mapping[str, type], Sequence[type]], with_used: bool = True) -> dict[str, type]:
    """`workloads` ({name: class} or [class, ...]) checked, plus those of `use`: {name: class}."""
    out = dict(_USED_WORKLOADS) if with_used else {}
    if not workloads:
        return out
    items = workloads.items() if isinstance(workloads, Mapping) else [(scheduler_name(c), c) for c in workloads]
    for name, cls in items:
        if not isinstance(name, str) or not name:
            raise DiskschedError(f"workload plug-in name {name!r}: expected a non-empty string")
        _check_workload(name, cls)
        out[name.lower()] = cls
    return out


def instantiate_workload(cls: type, values: dict) -> tuple[Workload, bool]:
    """An instance with its tunables (and `capacity_blocks`) set before
    `__init__`, and whether it is closed (the binding's side)."""
    obj = cls.__new__(cls)
    for k, v in values.items():
        setattr(obj, k, v)
    obj.__init__()
    return obj, getattr(cls, "first", None) is not None


def workload_violation(name: str, method: str, now_ns: int, msg: str) -> PluginError:
    """The error that ends a run whose workload plug-in gave a bad request (called by the binding)."""
    return PluginError(f"plug-in workload '{name}': {method}() at t = {now_ns / 1e6:.6f} ms: {msg}")


def classifier_violation(now_ns: int, msg: str) -> PluginError:
    """The error that ends a run whose classifier answered wrongly (called by the binding)."""
    return PluginError(f"plug-in classifier: at t = {now_ns / 1e6:.6f} ms it {msg}")


def registry(schedulers: Union[None, Mapping[str, type], Sequence[type]], with_used: bool = True) -> dict[str, type]:
    """`schedulers` ({name: class} or [class, ...]) checked, plus those of
    `use` (a name given here wins): {name: class}."""
    base = dict(_USED) if with_used else {}
    if not schedulers:
        return base
    items = schedulers.items() if isinstance(schedulers, Mapping) else [(scheduler_name(c), c) for c in schedulers]
    from . import _core
    import json

    builtin = set()
    for s in json.loads(_core.schedulers()):
        builtin.add(s["name"])
        builtin.update(a.lower() for a in s["aliases"])
    out: dict[str, type] = {}
    for name, cls in items:
        if not isinstance(name, str) or not name:
            raise DiskschedError(f"plug-in scheduler name {name!r}: expected a non-empty string")
        _check_class(name, cls, builtin)
        if name.lower() in out:
            raise DiskschedError(f"plug-in scheduler '{name}': registered twice")
        out[name.lower()] = cls
    return {**base, **out}


def instantiate(cls: type, values: dict) -> tuple[Scheduler, list[str]]:
    """An instance with its tunables set as attributes before `__init__`, and
    the hooks it overrides (the binding calls only those)."""
    obj = cls.__new__(cls)
    for k, v in values.items():
        setattr(obj, k, v)
    obj.__init__()
    hooks = [m for m in HOOKS if getattr(cls, m) is not getattr(Scheduler, m)]
    return obj, hooks


_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def _user_traceback(exc: BaseException, tb: Any = None) -> str:
    """The traceback of `exc` without disksched's own frames."""
    tb = traceback.extract_tb(tb if tb is not None else exc.__traceback__)
    frames = [f for f in tb if not str(Path(f.filename).resolve()).startswith(_PACKAGE_DIR)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def failure(kind: str, name: str, method: str, now_ns: int, exc: BaseException, tb: Any = None) -> PluginError:
    """The error that ends a run whose plug-in raised (called by the binding)."""
    return PluginError(f"plug-in {kind} '{name}': {method}() raised at t = {now_ns / 1e6:.6f} ms:\n"
                       f"{_user_traceback(exc, tb)}")


def violation(name: str, method: str, now_ns: int, msg: str) -> PluginError:
    """The error that ends a run whose plug-in broke the contract (called by the binding)."""
    return PluginError(f"plug-in scheduler '{name}': {method}() broke the scheduler contract at t = {now_ns / 1e6:.6f} ms: {msg}")


def load_file(path: Union[str, Path]) -> tuple[dict[str, type], dict[str, type]]:
    """The schedulers and workloads a Python file defines ({name: class}
    each): every `disksched.Scheduler` / `disksched.Workload` subclass
    defined in it (not merely imported)."""
    return load_source(str(path), read_source(path))


def read_source(path: Union[str, Path]) -> str:
    """A plug-in file's text (a one-line error if it is missing or unreadable)."""
    path = Path(path)
    if not path.is_file():
        raise DiskschedError(f"{path}: no such plug-in file")
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise DiskschedError(f"{path}: cannot read the plug-in ({e})") from None


def load_source(path: str, source: str) -> tuple[dict[str, type], dict[str, type]]:
    """`load_file` on a file's text (`path` names it in messages and
    tracebacks): how a sweep's workers, which may not see the driver's
    files, load the plug-ins it ships them."""
    import types

    modname = f"disksched_plugin_{hashlib.sha256((path + chr(0) + source).encode()).hexdigest()[:16]}"
    module = types.ModuleType(modname)
    module.__file__ = path
    sys.modules[modname] = module
    # Tracebacks quote the plug-in's lines even where the file is not (a sweep's worker).
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except Exception as e:
        raise PluginError(f"{path}: loading the plug-in raised:\n{_user_traceback(e)}") from None
    mine = [c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == modname]
    scheds = {scheduler_name(c): c for c in mine if issubclass(c, Scheduler)}
    loads = {scheduler_name(c): c for c in mine if issubclass(c, Workload)}
    if not scheds and not loads:
        raise DiskschedError(f"{path}: defines no disksched.Scheduler or disksched.Workload subclass")
    return scheds, loads

"""Config overrides by dotted path: `host.scheduler=rr`, `host.set.wait_ms=5`,
`workload.clients.0.size_kb=16` (a number indexes a list).

Overrides are applied to the config as data and the result is checked by the
core exactly like a config file, so an override can set any key a config can
hold and nothing else; an unknown key is an error naming the nearest valid one.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from ._core import DiskschedError

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.9/3.10
    import tomli as tomllib  # type: ignore[no-redef]

Overrides = Union[Mapping[str, Any], Sequence[str], None]
# Queue levels whose `set` (tunables) belong to the scheduler they name.
_LEVELS = ("host", "disk", "controller")
_KEY = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


def parse_value(text: str) -> Any:
    """A CLI value: any TOML value (`5`, `0.5`, `true`, `"x"`, `[1, 2]`, `{ a = 1 }`), else the bare text as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def parse_assignments(items: Iterable[str], flag: str = "--set") -> dict[str, Any]:
    """`key.path=value` strings (CLI `--set`) as an ordered {dotted key: value} dict."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise DiskschedError(f"{flag} {item!r}: expected key.path=value, e.g. host.scheduler=rr or host.set.wait_ms=5")
        out[key] = parse_value(value)
    return out


def _non_finite(value: Any) -> Optional[Any]:
    """The first NaN or infinite number in `value` (nested lists and tables too), else None."""
    value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return value
    items = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else ()
    return next((bad for v in items if (bad := _non_finite(v)) is not None), None)


def check_finite(overrides: Mapping[str, Any], flag: str) -> dict[str, Any]:
    """`overrides` as given, refused if a value holds NaN or an infinity (`nan`, `inf`, `1e400`):
    no config key takes one, and a resolved config is JSON, which cannot hold them."""
    for key, value in overrides.items():
        bad = _non_finite(value)
        if bad is not None:
            raise DiskschedError(f"{flag} {key}={bad}: not a finite number; expected a finite value "
                                 f"(nan, inf and numbers beyond +-1.8e308 are no config value)")
    return dict(overrides)


def normalize(overrides: Overrides, flag: str = "overrides") -> dict[str, Any]:
    """Overrides as a {dotted key: value} dict (from a mapping or `key=value` strings)."""
    if overrides is None:
        return {}
    if isinstance(overrides, Mapping):
        out = {}
        for key, value in overrides.items():
            if not isinstance(key, str) or not _KEY.match(key):
                raise DiskschedError(f"{flag}: key {key!r}: expected a dotted key path such as host.queue_threshold")
            out[key] = value
        return check_finite(out, flag)
    if isinstance(overrides, str):
        overrides = [overrides]
    return check_finite(parse_assignments(overrides, flag), flag)


def _plain(value: Any) -> Any:
    """numpy scalars/arrays as plain Python values (JSON-able)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return value


def apply(config: dict, overrides: Mapping[str, Any], flag: str = "--set") -> dict:
    """A copy of `config` (a dict) with each dotted key set; tables are created
    as needed. Naming a level's `scheduler` (host, disk, controller) with a
    different value drops that level's `set` unless the overrides set it too:
    tunables belong to the scheduler they were written for."""
    out = copy.deepcopy(config)
    for key, value in overrides.items():
        parts = key.split(".")
        node: Any = out
        for i, part in enumerate(parts[:-1]):
            where = ".".join(parts[:i + 1])
            if isinstance(node, list):
                node = node[_index(node, part, where, flag)]
            elif isinstance(node, dict):
                if part not in node:
                    node[part] = {}
                node = node[part]
            else:
                raise DiskschedError(f"{flag} {key}: {'.'.join(parts[:i])} is {node!r}, not a table")
            if not isinstance(node, (dict, list)):
                raise DiskschedError(f"{flag} {key}: {where} is {node!r}, not a table")
        last = parts[-1]
        value = _plain(value)
        if isinstance(node, list):
            node[_index(node, last, key, flag)] = value
            continue
        if (len(parts) == 2 and parts[0] in _LEVELS and last == "scheduler" and node.get("scheduler") != value
                and not any(k == f"{parts[0]}.set" or k.startswith(f"{parts[0]}.set.") for k in overrides)):
            node.pop("set", None)
        node[last] = value
    return out


def _index(node: list, part: str, where: str, flag: str) -> int:
    if not part.isdigit() or int(part) >= len(node):
        raise DiskschedError(f"{flag} {where}: expected a list index in [0, {len(node) - 1}]")
    return int(part)


_UNKNOWN = re.compile(r"unknown (field|variant) `([^`]*)`, (?:expected one of |expected |there are no (?:fields|variants))"
                      r"(.*?)(?: at line \d+ column \d+)?$")
# The core's own checks: "host.set.wait_msx: unknown tunable (expected one of: a, b)",
# "host.scheduler: unknown scheduler 'sptff' (expected one of: a, b)".
_UNKNOWN_NAME = re.compile(r"(?:^|: )(?P<what>[\w.\-\[\]]+): unknown (?P<kind>[\w ]+?)(?: '(?P<bad>[^']*)')? "
                           r"\(expected one of: (?P<names>[^)]*)\)")


def _expected(listing: str) -> list[str]:
    return re.findall(r"`([^`]*)`", listing)


def _nearest(bad: str, names: Sequence[str]) -> Optional[str]:
    near = difflib.get_close_matches(bad, list(names), n=1, cutoff=0.0)
    return near[0] if near else None


# serde's "invalid value: integer `-5`, expected u64" (the value as the core read it).
_INVALID = re.compile(r"invalid (?:value|type): [\w ]+? (?:`(?P<shown>[^`]*)`|\"(?P<text>[^\"]*)\"), expected ")


def _shown_as(value: Any, shown: str) -> bool:
    """Whether the override `value` is the value serde's message shows."""
    if isinstance(value, bool):
        return str(value).lower() == shown.lower()
    if str(value) == shown:
        return True
    try:
        return float(value) == float(shown)
    except (TypeError, ValueError):
        return False


def explain(message: str, overrides: Mapping[str, Any], flag: str) -> str:
    """A core error about an unknown key or value, restated with the override
    that caused it and the nearest valid name; an invalid value or type, with
    the override that set it."""
    m = _INVALID.search(message)
    if m:
        shown = m["shown"] if m["shown"] is not None else m["text"]
        keys = [k for k, v in overrides.items() if _shown_as(_plain(v), shown)]
        return f"{flag} {keys[0]}={shown}: {message[m.start():]}" if len(keys) == 1 else message
    m = _UNKNOWN_NAME.search(message)
    if m and "nearest" not in message:
        bad = m["bad"] if m["bad"] is not None else m["what"].rsplit(".", 1)[-1]
        near = _nearest(bad, [n.strip() for n in m["names"].split(",")])
        return f"{message}; nearest: {near}" if near else message
    m = _UNKNOWN.search(message)
    if not m:
        return message
    kind, bad, listing = m.groups()
    names = _expected(listing)
    nearest = _nearest(bad, names)
    for key, value in overrides.items():
        parts = key.split(".")
        if kind == "field" and bad in parts:
            i = parts.index(bad)
            prefix = ".".join(parts[:i])
            full = lambda n: f"{prefix}.{n}" if prefix else n  # noqa: E731
            if not names:
                return f"{flag} {key}: unknown key '{full(bad)}' (nothing more can be set in {prefix or 'the config'})"
            hint = f"; nearest valid key: {full(nearest)}" if nearest else ""
            return (f"{flag} {key}: unknown key '{full(bad)}'{hint} "
                    f"(valid there: {', '.join(full(n) for n in names)})")
        if kind == "variant" and _plain(value) == bad:
            hint = f"; nearest: {nearest}" if nearest else ""
            return f"{flag} {key}={bad}: unknown value '{bad}'{hint} (expected one of {', '.join(names)})"
    if nearest:
        return f"{message}; nearest valid {'key' if kind == 'field' else 'value'}: {nearest}"
    return message


def load_dict(config: Union[str, Path, Mapping[str, Any]], text: str, origin: str) -> dict:
    """The config as a dict: a mapping as given, a TOML file parsed (its syntax
    errors are reported by the core, as for any run, with file and line)."""
    if isinstance(config, Mapping):
        return json.loads(text)
    if origin.endswith(".json"):  # a JSON config file: the same shape as TOML
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise DiskschedError(f"{origin}: line {e.lineno}: {e.msg}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        from . import _core

        _core.config_resolve(text, origin)  # raises the core's one-line error
        raise DiskschedError(f"{origin}: {e}") from None


def json_origin(origin: str) -> str:
    """The origin the core is given for a config sent as JSON: the same folder
    (relative paths resolve as in the file), `.json` so the core reads JSON."""
    return origin if origin.endswith(".json") else f"{origin}.json"


def restate(e: DiskschedError, origin: str, display: str, overrides: Mapping[str, Any], flag: str) -> DiskschedError:
    """The core's error with the internal JSON origin named as the user wrote it."""
    msg = str(e)
    if origin != display:
        msg = msg.replace(origin, display)
    msg = re.sub(r" at line 1 column \d+$", "", msg)
    return DiskschedError(explain(msg, overrides, flag))


def merge(*parts: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """Overrides merged left to right (a later key wins)."""
    out: dict[str, Any] = {}
    for p in parts:
        if p:
            out.update(p)
    return out

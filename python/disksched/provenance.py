"""What produced a result: the resolved config, the overrides, the seed, the
disksched version and, when built from a git checkout, the commit. Every
result file carries it (summary.json, Parquet metadata, a CSV header comment,
PNG text chunks); `disksched show-run DIR` prints it."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any, Mapping, Optional

# The key under which it is stored in Parquet key-value metadata and PNG text chunks.
KEY = "disksched"


@functools.lru_cache(maxsize=1)
def source_commit() -> str:
    """The source tree's git commit (with '+' if it has uncommitted changes), or '' outside a checkout."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return ""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "crates",
                                "python"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    if head.returncode != 0:
        return ""
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def make(config: Mapping[str, Any], overrides: Mapping[str, Any], seed: Optional[int]) -> dict:
    from . import __version__

    out = {"disksched_version": __version__}
    commit = source_commit()
    if commit:
        out["commit"] = commit
    out.update({"seed": seed, "overrides": dict(overrides), "config": dict(config)})
    return out


def plugin_files(files) -> list:
    """`run --plugin` files as a provenance records them (as a sweep does): each file's name and the
    SHA-256 of its text, so an edited plug-in is told from the one that produced a result."""
    import hashlib

    from .plugins import read_source

    return [{"file": str(f), "sha256": hashlib.sha256(read_source(f).encode()).hexdigest()} for f in files]


def to_text(p: Mapping[str, Any]) -> str:
    return json.dumps(p, sort_keys=True, default=str)


def csv_header(p: Mapping[str, Any]) -> str:
    """A CSV comment line (`pandas.read_csv(..., comment='#')` skips it)."""
    return f"# {KEY}: {to_text(p)}\n"


def png_metadata(p: Mapping[str, Any]) -> dict:
    """matplotlib `savefig(metadata=...)` text chunks."""
    return {KEY: to_text(p)}


def read(path: Path) -> Optional[dict]:
    """The provenance stored in one result file, or None."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(path.read_text())
            return data.get("provenance") if isinstance(data, dict) else None
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            # The file's key-value metadata (files written before issue 35's writer kept it only in the Arrow schema).
            raw = (pq.read_metadata(path).metadata or {}).get(KEY.encode()) or (pq.read_schema(path).metadata or {}).get(KEY.encode())
            return json.loads(raw) if raw else None
        if suffix == ".csv":
            with open(path) as f:
                first = f.readline()
            prefix = f"# {KEY}: "
            return json.loads(first[len(prefix):]) if first.startswith(prefix) else None
        if suffix == ".png":
            from PIL import Image

            with Image.open(path) as im:
                raw = im.info.get(KEY)
            return json.loads(raw) if raw else None
    except (OSError, ValueError):
        return None
    return None

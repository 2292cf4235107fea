#!/usr/bin/env python3
"""Write crates/disksched-py/src/records_arrow_schema.b64: the Arrow schema of
records.parquet, as Arrow's Parquet writers store it under `ARROW:schema`
(base64 of the IPC-serialized schema), so that pandas and pyarrow read the
file back with `records()`'s types (`class` a categorical, the integers
unsigned). The Rust writer (records_parquet.rs) uses Parquet's own column
writer, without the Arrow layer, and stores these bytes as they are.

The schema is derived from `Result.records()` of a small run, every column
required (records have no missing values), no metadata (the provenance is the
file's own key-value metadata).

    .venv/bin/python tools/records_arrow_schema.py          # rewrite the file
    .venv/bin/python tools/records_arrow_schema.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import disksched  # noqa: E402

OUT = ROOT / "crates" / "disksched-py" / "src" / "records_arrow_schema.b64"


def encoded() -> str:
    config = {"disk": {"model": "hp_c2247a"}, "workload": {"kind": "open", "interarrival_ms": 20.0}, "run": {"requests": 10}}
    frame = disksched.run(config, records=True).records()
    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    # The Parquet column is a plain string (pandas may report its categories as large strings).
    fields = [f.with_type(pa.dictionary(f.type.index_type, pa.string())) if pa.types.is_dictionary(f.type) else f for f in schema]
    schema = pa.schema([f.with_nullable(False) for f in fields])
    return base64.b64encode(schema.serialize().to_pybytes()).decode() + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = ap.parse_args()
    text = encoded()
    if args.check:
        sys.exit(0 if OUT.read_text() == text else f"{OUT} is stale: run tools/records_arrow_schema.py")
    OUT.write_text(text)


if __name__ == "__main__":
    main()

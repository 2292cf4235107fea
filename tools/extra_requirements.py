#!/usr/bin/env python3
"""Print the requirements of one of pyproject.toml's optional extras, a line each.

    python tools/extra_requirements.py test > reqs.txt && pip install -r reqs.txt

The Makefile installs the `test` extra this way, apart from the package, so that
`make demo` does not wait for what only the tests need.
"""

import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11: tomli is a dependency of the package there
    import tomli as tomllib

extra = sys.argv[1] if len(sys.argv) > 1 else "test"
pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
extras = pyproject["project"]["optional-dependencies"]
if extra not in extras:
    sys.exit(f"pyproject.toml: no extra '{extra}'; expected one of {', '.join(extras)}")
print("\n".join(extras[extra]))

#!/usr/bin/env python3
"""Print pyproject.toml's requirements, a line each: the package's own (`--base`) or an optional extra's.

    python tools/extra_requirements.py test > reqs.txt && pip install -r reqs.txt

The Makefile installs the package's dependencies this way while cargo compiles, and the `test` extra
apart from the package, so that `make demo` does not wait for either.
"""

import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11: tomli is a dependency of the package there
    import tomli as tomllib

which = sys.argv[1] if len(sys.argv) > 1 else "test"
project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
extras = project["optional-dependencies"]
if which == "--base":
    print("\n".join(project["dependencies"]))
elif which in extras:
    print("\n".join(extras[which]))
else:
    sys.exit(f"pyproject.toml: no extra '{which}'; expected --base or one of {', '.join(extras)}")

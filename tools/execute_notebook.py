"""Execute a notebook in its own folder (nbclient, the python3 kernel) and, with --write, store its
outputs in place: `make notebooks` keeps examples/*.ipynb executed; tests/test_notebook.py runs the
same function and fails on any cell's error."""

from __future__ import annotations

import sys
from pathlib import Path


def execute(path: Path, timeout_s: int = 120):
    """The notebook at `path`, executed (a cell's error raises nbclient's CellExecutionError)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=timeout_s, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(path).parent)}}).execute()
    return nb


if __name__ == "__main__":
    import nbformat

    write = "--write" in sys.argv
    for p in (Path(a) for a in sys.argv[1:] if a != "--write"):
        nb = execute(p)
        if write:
            nbformat.write(nb, p)
        print(f"{p}: executed" + (", outputs stored" if write else ""))

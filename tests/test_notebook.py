"""examples/*.ipynb (issue 36, item 6): each notebook executes without an error in a fresh kernel, and
the stored copy is an executed one (every code cell has run)."""

import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from execute_notebook import execute  # noqa: E402

NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_there_is_a_notebook():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_runs_and_is_stored_executed(path: Path):
    stored = nbformat.read(path, as_version=4)
    code = [c for c in stored.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), \
        f"{path.name}: not stored executed; run `make notebooks`"
    ran = execute(path, timeout_s=120)  # raises nbclient's CellExecutionError on any cell's error
    assert sum(len(c.outputs) for c in ran.cells if c.cell_type == "code") >= len(code) - 1

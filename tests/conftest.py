import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def cli(*args, cwd=None):
    """Run the installed `disksched` CLI; return the CompletedProcess."""
    exe = Path(sys.executable).parent / "disksched"
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd or ROOT,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def small_oltp():
    return {
        "seed": 3,
        "disk": {"model": "atlas10k", "scheduler": "sptf"},
        "host": {"scheduler": "fcfs", "queue_threshold": 16},
        "workload": {"kind": "oltp"},
        "run": {"requests": 2000},
    }

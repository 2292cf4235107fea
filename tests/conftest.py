import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

# The Ctrl-C tests stand for a user at a terminal, where a command starts with SIGINT's default action. A
# test run started in the background from a script (`make test &`) inherits SIGINT ignored, passes that
# on to every command it starts, and the commands rightly keep ignoring it (as POSIX asks of background
# jobs): the tests would then see commands that Ctrl-C cannot stop. A handler here (not ignoring) becomes
# the default action in every child at exec.
signal.signal(signal.SIGINT, signal.default_int_handler)


def cli(*args, cwd=None):
    """Run the installed `disksched` CLI; return the CompletedProcess."""
    exe = Path(sys.executable).parent / "disksched"
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd or ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def pixels_of(png, hex_colour: str) -> int:
    """Pixels of a PNG of exactly this colour (a line's core; anti-aliased edges are blends)."""
    import matplotlib.image

    rgb = (matplotlib.image.imread(png)[..., :3] * 255).round().astype(int)
    want = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return int((rgb == want).all(axis=-1).sum())


@pytest.fixture
def small_oltp():
    return {
        "seed": 3,
        "disk": {"model": "atlas10k", "scheduler": "sptf"},
        "host": {"scheduler": "fcfs", "queue_threshold": 16},
        "workload": {"kind": "oltp"},
        "run": {"requests": 2000},
    }

"""`make api-docs` (issue 36, item 6): pdoc builds the Python API reference from the docstrings, and
every public name (`disksched.__all__`) is in it with its docstring."""

import html
import re
import subprocess
import sys

import disksched
from conftest import ROOT


def api_modules() -> list[str]:
    """The modules the Makefile's api-docs target documents."""
    m = re.search(r"^API_MODULES := (.+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert m, "Makefile: no API_MODULES line"
    return m.group(1).split()


def test_the_reference_builds_and_documents_every_public_name(tmp_path):
    p = subprocess.run([sys.executable, "-m", "pdoc", *api_modules(), "-o", str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "disksched.html").read_text()
    ids = set(re.findall(r'<section id="([\w.]+)">', page))
    missing = [n for n in disksched.__all__ if n not in ids]
    assert not missing, missing
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    for name in disksched.__all__:
        obj = getattr(disksched, name)
        if callable(obj):
            first = (obj.__doc__ or "").strip().splitlines()[0]
            assert first and first in text, (name, first)
    assert (tmp_path / "disksched" / "plugins.html").exists()

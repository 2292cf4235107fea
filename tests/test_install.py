"""The package as a user installs it: a wheel built from this repository into a fresh virtual
environment, run from a folder where no `../shared/` is reachable. The reproductions must find
every input in the package and pass `reproduce all --quick --check` there."""

import os
import subprocess
import sys
import venv

from conftest import ROOT


def test_an_installed_package_reproduces_every_paper(tmp_path):
    wheels = tmp_path / "wheels"
    maturin = os.path.join(os.path.dirname(sys.executable), "maturin")
    subprocess.run([maturin, "build", "--release", "--quiet", "--out", str(wheels)], cwd=ROOT, check=True,
                   capture_output=True, timeout=1800)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = env_dir / "bin" / "pip"
    wheel = next(wheels.glob("disksched-*.whl"))
    subprocess.run([str(pip), "install", "--quiet", str(wheel)], check=True, capture_output=True, timeout=1800)
    work = tmp_path / "elsewhere" / "deeper"  # ../shared is not beside it
    work.mkdir(parents=True)
    assert not (work.parent / "shared").exists() and not (work / "../../shared").exists()
    p = subprocess.run([str(env_dir / "bin" / "disksched"), "reproduce", "all", "--quick", "--check", "--out", "out"],
                       cwd=work, capture_output=True, text=True, timeout=1800,
                       env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "scores (claims reproduced / judged): riska2004" in p.stdout
    for name in ("riska2004", "anand2008", "lumb2002", "rizzo2009", "wu2004"):
        assert (work / "out" / f"{name}.json").exists()

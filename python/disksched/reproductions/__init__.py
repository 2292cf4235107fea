"""`disksched reproduce NAME`: the seed papers' experiments, each with its claims file and a check per claim.

One module per paper (`measure(seed, quick, out, log) -> (metrics, data)`, `tables`,
`plots`) and one claims file per paper (`NAME.toml`); `framework` runs the seeds and
judges the claims."""

from __future__ import annotations

import importlib
from pathlib import Path

from .framework import ClaimsError, Report, markdown, rejudge, run_reproduction  # noqa: F401

NAMES = ["riska2004", "anand2008", "lumb2002", "rizzo2009", "wu2004"]
HERE = Path(__file__).resolve().parent


def module(name: str):
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f".{name}", __name__)


def claims_path(name: str) -> Path:
    return HERE / f"{name}.toml"


def reproduce(name: str, out: Path, quick: bool, seeds: int, claims: Path | None = None, log=print,
              workers: int = 1, client=None, ablate: bool = False, baseline: dict | None = None) -> Report:
    """Run paper `name`'s experiment and judge its claims (with `ablate`, under each claim's ablation too;
    `baseline`: this paper's claim id -> status, for whether a claim can fail when the ablations do not run)."""
    out.mkdir(parents=True, exist_ok=True)
    return run_reproduction(module(name), claims or claims_path(name), out, quick, seeds, log, workers, client,
                            ablate, baseline)


def judge_saved(name: str, saved: dict, claims: Path | None = None, baseline: dict | None = None) -> Report:
    """Judge a saved `NAME.json` again (e.g. against an edited claims file) without rerunning it."""
    return rejudge(module(name), claims or claims_path(name), saved, baseline)

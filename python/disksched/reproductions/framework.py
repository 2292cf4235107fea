"""A reproduction is data plus checks.

Each paper has a module (`NAME.py`: the experiment, run once per seed, returning
named metrics) and a claims file (`NAME.toml`: the paper's figures and claims with
their numbers, and a check per claim). This module runs the seeds, turns every
metric into a mean and a 95% Student-t confidence interval, judges each claim on
its interval, prints the claim table and writes `NAME.json` and `NAME.md`.

Claims file (TOML), one `[[claims]]` per claim:

    id = "fig3_sptf_gain"           # unique
    figure = "Fig. 3"
    text = "..."                    # the paper's claim, in words
    value = "a_ms / b_ms"           # an expression over one seed's metrics
    unit = "x"
    paper = 2.0                     # the paper's number (optional)
    paper_text = "about 2x"         # how the paper states it
    check = "within"                # within (paper +- tolerance) | above | below (bound)
    tolerance_pct = 25              # within: relative to `paper` (or `tolerance`, absolute)
    bound = 1.0                     # above / below
    stated = true                   # the project states it as reproduced: --check fails if it does not hold
    [[claims.notes]]                # printed when `when` is true of the measured means
    when = "value < 1.5"
    text = "... {some_metric:.2f} ..."   # filled in from the measured means

Verdicts: `holds` (the whole interval passes the check), `fails` (the whole
interval fails it), `unclear` (the interval straddles the limit). With one seed
the interval is the point. `--check` fails when a stated claim does not hold.
"""

from __future__ import annotations

import importlib
import math
import multiprocessing
import signal
import sys
import time
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

# Two-sided 95% Student t quantiles, t_{0.975, df}, df = 1..30 (standard tables).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

CHECKS = ("within", "above", "below")


class ClaimsError(ValueError):
    pass


def interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t confidence interval of `values` (the point itself for one value, or
    when every value is the same)."""
    n = len(values)
    if len(set(values)) == 1:  # every seed alike (e.g. a seed-free measurement): the point, without rounding noise
        return values[0], values[0], values[0]
    mean = sum(values) / n
    if any(not math.isfinite(v) for v in values):
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = (T975[n - 2] if n - 1 <= len(T975) else 1.96) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def fmt(x: float) -> str:
    """One number format for the table, the markdown and the tests: 3 significant digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= 100 or (x == int(x) and abs(x) < 1e6):
        return f"{x:.0f}"
    return f"{x:.3g}"


def fmt_interval(mean: float, lo: float, hi: float) -> str:
    if lo == hi:
        return fmt(mean)
    return f"{fmt(mean)} [{fmt(lo)}, {fmt(hi)}]"


@dataclass
class Claim:
    id: str
    figure: str
    text: str
    value: str
    check: str
    unit: str = ""
    paper: float | None = None
    paper_text: str = ""
    tolerance: float | None = None
    tolerance_pct: float | None = None
    bound: float | None = None
    stated: bool = False
    notes: list[dict] = field(default_factory=list)

    def limits(self) -> tuple[float, float]:
        """The band a value must lie in to pass."""
        if self.check == "above":
            return self.bound, math.inf
        if self.check == "below":
            return -math.inf, self.bound
        tol = self.tolerance if self.tolerance is not None else abs(self.paper) * self.tolerance_pct / 100
        return self.paper - tol, self.paper + tol

    def describe(self) -> str:
        lo, hi = self.limits()
        if self.check == "above":
            return f"> {fmt(lo)}"
        if self.check == "below":
            return f"< {fmt(hi)}"
        return f"{fmt(lo)}..{fmt(hi)}"

    def judge(self, lo: float, hi: float) -> str:
        a, b = self.limits()
        if not (math.isfinite(lo) and math.isfinite(hi)) and lo != hi:
            return "unclear"
        strict_lo = self.check == "above"  # "above 1" is not met by exactly 1
        strict_hi = self.check == "below"
        inside = lambda v, s_lo=strict_lo, s_hi=strict_hi: (v > a if s_lo else v >= a) and (v < b if s_hi else v <= b)  # noqa: E731
        if inside(lo) and inside(hi):
            return "holds"
        if (hi < a or (strict_lo and hi <= a)) or (lo > b or (strict_hi and lo >= b)):
            return "fails"
        return "unclear"


def load_claims(path: Path) -> tuple[dict, list[Claim]]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ClaimsError(f"{path}: {e}") from None
    claims, seen = [], set()
    for i, c in enumerate(data.get("claims", []), 1):
        where = f"{path}: claim {i} ({c.get('id', '?')})"
        unknown = set(c) - set(Claim.__dataclass_fields__)
        if unknown:
            raise ClaimsError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("id", "figure", "text", "value", "check"):
            if key not in c:
                raise ClaimsError(f"{where}: missing '{key}'")
        if c["check"] not in CHECKS:
            raise ClaimsError(f"{where}: check '{c['check']}' (expected one of {', '.join(CHECKS)})")
        if c["check"] == "within" and ("paper" not in c or ("tolerance" not in c and "tolerance_pct" not in c)):
            raise ClaimsError(f"{where}: check 'within' needs 'paper' and 'tolerance' or 'tolerance_pct'")
        if c["check"] in ("above", "below") and "bound" not in c:
            raise ClaimsError(f"{where}: check '{c['check']}' needs 'bound'")
        if c["id"] in seen:
            raise ClaimsError(f"{where}: duplicate id")
        seen.add(c["id"])
        claims.append(Claim(**c))
    meta = {k: v for k, v in data.items() if k != "claims"}
    return meta, claims


def evaluate(expr: str, metrics: dict, where: str) -> float:
    try:
        return float(eval(expr, {"__builtins__": {}, "min": min, "max": max, "abs": abs}, dict(metrics)))  # noqa: S307
    except ZeroDivisionError:
        return math.nan
    except Exception as e:  # a claims file naming a metric the run does not produce
        raise ClaimsError(f"{where}: cannot evaluate '{expr}': {e}") from None


class _Fmt(dict):
    """Format map that reports a missing metric in the text instead of raising."""

    def __missing__(self, key):
        return math.nan


def note_text(text: str, values: dict) -> str:
    try:
        return text.format_map(_Fmt(values))
    except (ValueError, TypeError) as e:
        raise ClaimsError(f"note '{text[:40]}...': {e}") from None


@dataclass
class Report:
    name: str
    meta: dict
    quick: bool
    seeds: int
    elapsed_s: float
    metrics: dict            # name -> {"mean", "lo", "hi", "values"}
    claims: list[dict]       # id, figure, text, paper_text, check, mean, lo, hi, verdict, stated, notes
    tables: list[dict]       # {"title", "columns", "rows"} computed from the means
    figures: list[tuple[str, str]]  # (file name, caption)
    data: dict               # seed 1's extra data (series for plots)

    def failed_stated(self) -> list[dict]:
        return [c for c in self.claims if c["stated"] and c["verdict"] != "holds"]

    def as_json(self) -> dict:
        return {"name": self.name, "title": self.meta.get("title", ""), "quick": self.quick, "seeds": self.seeds,
                "elapsed_s": self.elapsed_s, "claims": self.claims, "metrics": self.metrics, "tables": self.tables,
                "figures": [{"file": f, "caption": c} for f, c in self.figures], "data": self.data.get("json", {})}


def _ignore_sigint() -> None:
    # A pool worker: Ctrl-C is the parent's to handle (it terminates the pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _measure_seed(args: tuple) -> tuple[dict, dict]:
    """One seed in a pool worker: the module by name; its log lines go to stderr."""
    name, seed, quick, out = args
    module = importlib.import_module(f"{__package__}.{name}")

    def log(msg: str) -> None:
        print(f"[seed {seed}] {msg}", file=sys.stderr, flush=True)

    return module.measure(seed, quick, Path(out), log)


def measure_seeds(module, seeds: int, quick: bool, out: Path, log: Callable[[str], None],
                  workers: int = 1, client: Any = None) -> list[tuple[dict, dict]]:
    """`module.measure` for seeds 1..`seeds`, in order; with `workers` > 1 in that many
    processes, or on the Dask `client` (each seed is its own simulation, so the results
    are the same)."""
    if client is not None:
        log(f"{module.NAME}: seeds 1-{seeds} on Dask")
        futures = client.map(_measure_seed, [(module.NAME, s, quick, str(out)) for s in range(1, seeds + 1)],
                             pure=False, retries=2)
        try:
            return client.gather(futures)
        except BaseException:  # Ctrl-C or a failed seed: stop the others now
            client.cancel(futures)
            raise
    workers = min(workers, seeds)
    if workers <= 1:
        results = []
        for seed in range(1, seeds + 1):
            log(f"{module.NAME}: seed {seed} of {seeds}")
            results.append(module.measure(seed, quick, out, log))
        return results
    log(f"{module.NAME}: seeds 1-{seeds} in {workers} processes")
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_ignore_sigint)
    try:
        results = pool.map(_measure_seed, [(module.NAME, s, quick, str(out)) for s in range(1, seeds + 1)], chunksize=1)
        pool.close()
        return results
    except BaseException:  # Ctrl-C or a failed seed: stop the others now
        pool.terminate()
        raise
    finally:
        pool.join()


def run_reproduction(module, claims_path: Path, out: Path, quick: bool, seeds: int,
                     log: Callable[[str], None] = print, workers: int = 1, client: Any = None) -> Report:
    """Run `module.measure` for seeds 1..`seeds` (in `workers` processes or on a Dask `client`),
    judge the claims, draw the figures."""
    meta, claims = load_claims(claims_path)
    t0 = time.monotonic()
    results = measure_seeds(module, seeds, quick, out, log, workers, client)
    per_seed = [m for m, _ in results]
    data = results[0][1]
    rep = judge(module, meta, claims, claims_path, per_seed, quick, time.monotonic() - t0, data)
    try:
        rep.figures = module.plots(out, rep.metrics, data) if hasattr(module, "plots") else []
    except Exception as e:  # a plotting bug must not lose a long run's numbers
        log(f"{module.NAME}: plotting failed: {type(e).__name__}: {e}")
    return rep


def rejudge(module, claims_path: Path, saved: dict) -> Report:
    """Judge a saved run (`NAME.json`: every metric's per-seed values) against a claims
    file, without running it again; the figures are the ones the run drew."""
    meta, claims = load_claims(claims_path)
    names = list(saved["metrics"])
    per_seed = [{k: saved["metrics"][k]["values"][i] for k in names} for i in range(saved["seeds"])]
    rep = judge(module, meta, claims, claims_path, per_seed, saved["quick"], saved["elapsed_s"],
                {"json": saved.get("data", {})})
    rep.figures = [(f["file"], f["caption"]) for f in saved.get("figures", [])]
    return rep


def judge(module, meta: dict, claims: list[Claim], claims_path: Path, per_seed: list[dict], quick: bool,
          elapsed_s: float, data: dict) -> Report:
    seeds = len(per_seed)
    names = list(per_seed[0])
    metrics = {}
    for k in names:
        vals = [float(m[k]) for m in per_seed]
        mean, lo, hi = interval(vals)
        metrics[k] = {"mean": mean, "lo": lo, "hi": hi, "values": vals}
    means = {k: v["mean"] for k, v in metrics.items()}
    results = []
    for c in claims:
        where = f"{claims_path.name}: claim {c.id}"
        vals = [evaluate(c.value, m, where) for m in per_seed]
        mean, lo, hi = interval(vals)
        verdict = "unclear" if any(math.isnan(v) for v in vals) else c.judge(lo, hi)
        scope = {**means, "value": mean, "lo": lo, "hi": hi, "paper": c.paper if c.paper is not None else math.nan}
        notes = [note_text(n["text"], scope) for n in c.notes if evaluate(n.get("when", "True"), scope, where)]
        results.append({"id": c.id, "figure": c.figure, "text": c.text, "unit": c.unit, "paper": c.paper,
                        "paper_text": c.paper_text or (fmt(c.paper) if c.paper is not None else ""),
                        "check": c.describe(), "mean": mean, "lo": lo, "hi": hi, "values": vals,
                        "verdict": verdict, "stated": c.stated, "notes": notes})
    tables = module.tables(means, metrics) if hasattr(module, "tables") else []
    return Report(module.NAME, meta, quick, seeds, elapsed_s, metrics, results, tables, [], data)


CLAIM_COLUMNS = ["claim", "figure", "paper", "disksched", "check", "verdict", "stated"]


def claim_row(c: dict) -> list[str]:
    unit = f" {c['unit']}" if c["unit"] else ""
    return [f"{c['id']}: {c['text']}", c["figure"], c["paper_text"], fmt_interval(c["mean"], c["lo"], c["hi"]) + unit,
            c["check"], c["verdict"], "yes" if c["stated"] else "no"]


def markdown(rep: Report, command: str) -> str:
    def table(columns: list[str], rows: list[list[str]]) -> list[str]:
        esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
        return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] + [
            "| " + " | ".join(esc(x) for x in r) + " |" for r in rows]

    mode = "quick" if rep.quick else "full"
    lines = [f"# {rep.name}: {rep.meta.get('title', '')}", "",
             f"Generated by `{command}` ({mode} run, {rep.seeds} seed{'s' if rep.seeds > 1 else ''}, "
             f"{rep.elapsed_s:.0f} s). Do not edit: rerun the command. Every number below is the mean over the "
             f"seeds with its 95% Student-t confidence interval in brackets (none with one seed); a claim "
             f"*holds* when its whole interval passes the check, *fails* when none of it does, and is "
             f"*unclear* otherwise"
             + (f" (with {rep.seeds} seeds the interval is the mean +- {T975[rep.seeds - 2]} standard errors)"
                if 2 <= rep.seeds <= len(T975) + 1 else "") + ". "
             f"*Stated* claims are the ones the project states as reproduced: "
             f"`--check` fails the run when one of them does not hold.", ""]
    if rep.meta.get("citation"):
        lines += [f"Paper: {rep.meta['citation']}", ""]
    if rep.meta.get("setup"):
        lines += [f"Set-up: {rep.meta['setup']}", ""]
    held = sum(c["verdict"] == "holds" for c in rep.claims)
    lines += ["## Claims", "", f"{held} of {len(rep.claims)} claims hold; "
              f"{sum(c['stated'] for c in rep.claims)} are stated as reproduced, "
              f"{len(rep.failed_stated())} of those do not hold.", ""]
    lines += table(CLAIM_COLUMNS, [claim_row(c) for c in rep.claims]) + [""]
    noted = [c for c in rep.claims if c["notes"]]
    if noted:
        lines += ["## Why (computed from this run)", ""]
        for c in noted:
            for n in c["notes"]:
                lines.append(f"- **{c['id']}** ({c['verdict']}): {n}")
        lines.append("")
    for t in rep.tables:
        lines += [f"## {t['title']}", ""] + table(t["columns"], t["rows"]) + [""]
    if rep.figures:
        lines += ["## Figures", ""]
        for f, cap in rep.figures:
            lines += [f"![{cap}]({f})", "", f"*{cap}*", ""]
    return "\n".join(lines)

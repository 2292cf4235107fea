"""A reproduction is data plus checks that can fail.

Each paper has a module (`NAME.py`: the experiment, run once per seed, returning
named metrics) and a claims file (`NAME.toml`: every number and shape the paper
states about its results, each judged at its magnitude, and the ablations that
remove the mechanisms they are about). This module runs the seeds (and, with
`ablate`, each ablation), turns every metric into a mean and a 95% Student-t
confidence interval, judges each claim on its interval, scores the paper and
writes `NAME.json` and `NAME.md`.

Claims file (TOML):

    [ablations.fcfs_disk]           # a mechanism removed from every run the experiment makes
    text = "FCFS in place of SPTF at the disks"
    replace = { "disk.scheduler" = { sptf = "fcfs" } }   # a value at a dotted path, old -> new
    set = { "host.set.wait_ms" = 0 }                      # where the path's parent exists
    unset = ["host.shaper"]                               # (a list on a path stands for each item)
    when = { "host.scheduler" = "rr" }                    # optional: only configs with these values

    [[claims]]
    id = "fig3_sptf_gain"           # unique
    figure = "Fig. 3"
    text = "..."                    # the paper's claim, in words
    value = "a_ms / b_ms"           # an expression over one seed's metrics
    unit = "x"
    paper = 2.0                     # the paper's number
    paper_text = "about 2x"         # how the paper states it
    check = "within"                # within (paper +- tolerance) | above | below (a bound the paper gives)
    tolerance_pct = 25              # within: relative to `paper` (or `tolerance`, absolute)
    bound = 1.0                     # above / below
    mechanism = "SPTF at the disk"  # what the claim is about
    ablation = "fcfs_disk"          # the ablation that removes it
    calibration = "..."             # instead of mechanism/ablation: the constant set to meet this number
                                    # (shown, never scored)
    [[claims.notes]]                # printed when `when` is true of the measured means
    when = "value < 1.5"
    text = "... {some_metric:.2f} ..."   # filled in from the measured means

Verdicts: `holds` (the whole interval passes the check), `fails` (the whole
interval fails it), `unclear` (the interval straddles the limit). With one seed
the interval is the point. A claim's status: `reproduced` (holds, and its
ablation makes it fail), `cannot fail` (holds with its mechanism removed too:
not scored), `not reproduced` (fails or unclear) or `calibration`. The score is
reproduced / judged, where judged leaves out calibrations and claims that
cannot fail. Whether a claim can fail is known from a run with `ablate`; other
runs take it from the committed baseline (`baseline.json`), which `--check`
also compares every verdict with.
"""

from __future__ import annotations

import importlib
import json
import math
import multiprocessing
import signal
import sys
import textwrap
import time
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .common import ablating

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


RULES = ("replace", "set", "unset")
BASELINE = Path(__file__).resolve().parent / "baseline.json"


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
    mechanism: str = ""
    ablation: str = ""
    calibration: str = ""
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

    def miss(self, mean: float) -> str:
        """How far a measured mean lies from the band it must lie in (computed, for a claim that does not hold)."""
        a, b = self.limits()
        if not math.isfinite(mean):
            return f"the run measures {fmt(mean)}"
        if mean < a or (self.check == "above" and mean <= a):
            return f"{fmt(mean)} is {fmt(a - mean)} below the lower limit {fmt(a)}"
        if mean > b or (self.check == "below" and mean >= b):
            return f"{fmt(mean)} is {fmt(mean - b)} above the upper limit {fmt(b)}"
        return f"the mean {fmt(mean)} passes, but its interval crosses a limit of {self.describe()}"


def load_claims(path: Path) -> tuple[dict, list[Claim], dict]:
    """The claims file's metadata, its claims and its ablations (name -> {"text", rules...})."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ClaimsError(f"{path}: {e}") from None
    ablations = data.get("ablations", {})
    for name, a in ablations.items():
        unknown = set(a) - {"text", "when", *RULES}
        if unknown:
            raise ClaimsError(f"{path}: ablation {name}: unknown key(s) {', '.join(sorted(unknown))} "
                              f"(expected text, when, {', '.join(RULES)})")
        if "text" not in a or not set(a) & set(RULES):
            raise ClaimsError(f"{path}: ablation {name}: needs 'text' and at least one of {', '.join(RULES)}")
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
        if "calibration" in c:
            if "mechanism" in c or "ablation" in c:
                raise ClaimsError(f"{where}: a calibration has no mechanism or ablation")
        elif "mechanism" not in c or "ablation" not in c:
            raise ClaimsError(f"{where}: missing 'mechanism' and 'ablation' (what the claim is about, and the "
                              f"ablation that removes it), or 'calibration'")
        elif c["ablation"] not in ablations:
            raise ClaimsError(f"{where}: ablation '{c['ablation']}' is not defined "
                              f"(expected one of: {', '.join(ablations) or 'none defined'})")
        if c["id"] in seen:
            raise ClaimsError(f"{where}: duplicate id")
        seen.add(c["id"])
        claims.append(Claim(**c))
    meta = {k: v for k, v in data.items() if k not in ("claims", "ablations")}
    return meta, claims, ablations


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
    claims: list[dict]       # id, figure, text, paper_text, check, mean, lo, hi, verdict, ablated, status, notes
    tables: list[dict]       # {"title", "columns", "rows"} computed from the means
    figures: list[tuple[str, str]]  # (file name, caption)
    data: dict               # seed 1's extra data (series for plots)
    ablations: dict = field(default_factory=dict)  # name -> text
    ablated: bool = False    # the ablations ran (else whether a claim can fail comes from the baseline)
    ablation_metrics: dict = field(default_factory=dict)  # ablation -> {"names", "values": per seed}

    def score(self) -> tuple[int, int]:
        """Claims reproduced, claims judged (every claim but calibrations and those that cannot fail)."""
        judged = [c for c in self.claims if c["status"] not in ("calibration", "cannot fail")]
        return sum(c["status"] == "reproduced" for c in judged), len(judged)

    def score_text(self) -> str:
        won, judged = self.score()
        cannot = sum(c["status"] == "cannot fail" for c in self.claims)
        cal = sum(c["status"] == "calibration" for c in self.claims)
        extra = [f"{cannot} cannot fail" if cannot else "", f"{cal} calibration" if cal else ""]
        extra = ", ".join(e for e in extra if e)
        src = "" if self.ablated else " (whether a claim can fail: from the baseline; --ablate measures it)"
        return (f"score {won}/{judged} claims reproduced" + (f" ({extra}, not scored)" if extra else "") + src)

    def as_json(self) -> dict:
        won, judged = self.score()
        return {"name": self.name, "title": self.meta.get("title", ""), "quick": self.quick, "seeds": self.seeds,
                "elapsed_s": self.elapsed_s, "score": {"reproduced": won, "judged": judged, "ablated": self.ablated},
                "claims": self.claims, "ablations": self.ablations, "metrics": self.metrics,
                "ablation_metrics": self.ablation_metrics, "tables": self.tables,
                "figures": [{"file": f, "caption": c} for f, c in self.figures], "data": self.data.get("json", {})}


def _ignore_sigint() -> None:
    # A pool worker: Ctrl-C is the parent's to handle (it terminates the pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class SeedError(RuntimeError):
    """A seed's failure in a worker process, as a message (the core's exception class does not cross processes)."""


def _measure_seed(args: tuple) -> tuple[dict, dict, dict]:
    try:
        return _measure_seed_here(args)
    except Exception as e:
        if multiprocessing.parent_process() is None:
            raise
        raise SeedError(f"{args[0]} seed {args[1]}: {e}") from None


def _measure_seed_here(args: tuple) -> tuple[dict, dict, dict]:
    """One seed of a paper, as the paper describes it and then under each ablation (name -> rules); runs an
    ablation leaves unchanged are shared, not run again. Log lines go to stderr."""
    name, seed, quick, out, ablations = args
    module = importlib.import_module(f"{__package__}.{name}")

    def log(msg: str) -> None:
        print(f"[seed {seed}] {msg}", file=sys.stderr, flush=True)

    memo: dict | None = {} if ablations else None
    with ablating(None, memo):
        metrics, data = module.measure(seed, quick, Path(out), log)
    ablated: dict = {}
    for abl, rules in ablations.items():
        log(f"{name}: ablation {abl}")
        with ablating(rules, memo):
            try:
                ablated[abl] = module.measure(seed, quick, Path(out), lambda _m: None)[0]
            except Exception as e:  # the experiment cannot run without the mechanism: no evidence either way
                ablated[abl] = {"error": f"{type(e).__name__}: {e}"}
    return metrics, data, ablated


def measure_seeds(module, seeds: int, quick: bool, out: Path, log: Callable[[str], None], workers: int = 1,
                  client: Any = None, ablations: dict | None = None) -> list[tuple[dict, dict, dict]]:
    """`_measure_seed` for seeds 1..`seeds`, in order; with `workers` > 1 in that many
    processes, or on the Dask `client` (each seed is its own simulation, so the results
    are the same)."""
    jobs = [(module.NAME, s, quick, str(out), ablations or {}) for s in range(1, seeds + 1)]
    if client is not None:
        log(f"{module.NAME}: seeds 1-{seeds} on Dask")
        futures = client.map(_measure_seed, jobs, pure=False, retries=2)
        try:
            return client.gather(futures)
        except BaseException:  # Ctrl-C or a failed seed: stop the others now
            client.cancel(futures)
            raise
    workers = min(workers, seeds)
    if workers <= 1:
        results = []
        for job in jobs:
            log(f"{module.NAME}: seed {job[1]} of {seeds}")
            results.append(_measure_seed(job))
        return results
    log(f"{module.NAME}: seeds 1-{seeds} in {workers} processes")
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_ignore_sigint)
    try:
        results = pool.map(_measure_seed, jobs, chunksize=1)
        pool.close()
        return results
    except BaseException:  # Ctrl-C or a failed seed: stop the others now
        pool.terminate()
        raise
    finally:
        pool.join()


def load_baseline(path: Path = BASELINE) -> dict:
    """mode ("quick" / "full") -> paper -> claim id -> status, as `--update-baseline` wrote it."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ClaimsError(f"{path}: {e}") from None


def run_reproduction(module, claims_path: Path, out: Path, quick: bool, seeds: int,
                     log: Callable[[str], None] = print, workers: int = 1, client: Any = None,
                     ablate: bool = False, baseline: dict | None = None) -> Report:
    """Run `module.measure` for seeds 1..`seeds` (in `workers` processes or on a Dask `client`), with `ablate`
    under each ablation the claims name too; judge the claims, draw the figures."""
    meta, claims, ablations = load_claims(claims_path)
    t0 = time.monotonic()
    wanted = {c.ablation: ablations[c.ablation] for c in claims if c.ablation} if ablate else {}
    results = measure_seeds(module, seeds, quick, out, log, workers, client, wanted)
    per_seed = [m for m, _, _ in results]
    per_ablation = {a: [r[2][a] for r in results] for a in wanted}
    data = results[0][1]
    rep = judge(module, meta, claims, ablations, claims_path, per_seed, quick, time.monotonic() - t0, data,
                per_ablation if ablate else None, baseline)
    try:
        rep.figures = module.plots(out, rep.metrics, data) if hasattr(module, "plots") else []
    except Exception as e:  # a plotting bug must not lose a long run's numbers
        log(f"{module.NAME}: plotting failed: {type(e).__name__}: {e}")
    return rep


def rejudge(module, claims_path: Path, saved: dict, baseline: dict | None = None) -> Report:
    """Judge a saved run (`NAME.json`: every metric's per-seed values) against a claims
    file, without running it again; the figures are the ones the run drew."""
    meta, claims, ablations = load_claims(claims_path)
    names = list(saved["metrics"])
    per_seed = [{k: saved["metrics"][k]["values"][i] for k in names} for i in range(saved["seeds"])]
    per_ablation = None
    if saved.get("ablation_metrics"):
        per_ablation = {a: [dict(zip(saved["ablation_metrics"][a]["names"], vals))
                            for vals in saved["ablation_metrics"][a]["values"]]
                        for a in saved["ablation_metrics"]}
    rep = judge(module, meta, claims, ablations, claims_path, per_seed, saved["quick"], saved["elapsed_s"],
                {"json": saved.get("data", {})}, per_ablation, baseline)
    rep.figures = [(f["file"], f["caption"]) for f in saved.get("figures", [])]
    return rep


def judge(module, meta: dict, claims: list[Claim], ablations: dict, claims_path: Path, per_seed: list[dict],
          quick: bool, elapsed_s: float, data: dict, per_ablation: dict | None = None,
          baseline: dict | None = None) -> Report:
    """Every claim judged on the seeds' interval; with `per_ablation` (ablation -> per-seed metrics) each also
    under its ablation, else whether it can fail comes from `baseline` (this paper's claim id -> status)."""
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
        if verdict != "holds":
            notes.insert(0, c.miss(mean))
        ablated = None
        if per_ablation is not None and c.ablation:
            errors = [m["error"] for m in per_ablation[c.ablation] if "error" in m]
            if errors:  # shown as holding: an ablation the experiment cannot run is no evidence the claim can fail
                ablated = {"name": c.ablation, "mean": math.nan, "lo": math.nan, "hi": math.nan, "verdict": "holds",
                           "error": errors[0]}
            else:
                avals = [evaluate(c.value, m, where) for m in per_ablation[c.ablation]]
                amean, alo, ahi = interval(avals)
                ablated = {"name": c.ablation, "mean": amean, "lo": alo, "hi": ahi,
                           "verdict": "unclear" if any(math.isnan(v) for v in avals) else c.judge(alo, ahi)}
        if c.calibration:
            status = "calibration"
        elif verdict != "holds":
            status = "not reproduced"
        elif ablated is not None:
            status = "cannot fail" if ablated["verdict"] == "holds" else "reproduced"
        else:
            status = "cannot fail" if (baseline or {}).get(c.id) == "cannot fail" else "reproduced"
        results.append({"id": c.id, "figure": c.figure, "text": c.text, "unit": c.unit, "paper": c.paper,
                        "paper_text": c.paper_text or (fmt(c.paper) if c.paper is not None else ""),
                        "check": c.describe(), "mean": mean, "lo": lo, "hi": hi, "values": vals,
                        "seed_free": seeds > 1 and len(set(vals)) == 1,
                        "verdict": verdict, "mechanism": c.mechanism or c.calibration, "ablation": c.ablation,
                        "ablated": ablated, "status": status, "notes": notes})
    tables = module.tables(means, metrics) if hasattr(module, "tables") else []
    return Report(module.NAME, meta, quick, seeds, elapsed_s, metrics, results, tables, [], data,
                  {k: v["text"] for k, v in ablations.items()}, per_ablation is not None,
                  {a: {"names": list(ms[0]), "values": [list(m.values()) for m in ms]}
                   for a, ms in (per_ablation or {}).items() if not any("error" in m for m in ms)})


def compare(rep: Report, baseline: dict, complete: bool = True) -> tuple[list[str], list[str]]:
    """A run against the baseline's statuses for its paper: (failures, news). A claim that held in the baseline
    and does not now fails; so, when the ablations ran, does one reproduced there that now cannot fail; with
    `complete` (the paper's own claims file) so does a baseline claim that is gone. A claim newly reproduced, or
    not in the baseline, is news."""
    failures, news = [], []
    held = ("reproduced", "cannot fail", "calibration")
    for c in rep.claims:
        was = baseline.get(c["id"])
        if was is None:
            news.append(f"{c['id']}: {c['status']}, not in the baseline (reproduce all --quick --ablate "
                        f"--update-baseline)")
        elif was in held and c["verdict"] != "holds":
            failures.append(f"{c['id']}: {c['verdict']} ({c['notes'][0]}; expected {c['check']}), "
                            f"{was} in the baseline")
        elif was == "reproduced" and rep.ablated and c["status"] == "cannot fail":
            a = c["ablated"]
            failures.append(f"{c['id']}: cannot fail: it still holds at {fmt(a['mean'])} under its ablation "
                            f"{a['name']} ({rep.ablations[a['name']]}); reproduced in the baseline")
        elif was != "reproduced" and c["status"] == "reproduced":
            news.append(f"{c['id']}: reproduced, {was} in the baseline")
    if complete:
        ids = {c["id"] for c in rep.claims}
        failures += [f"{cid}: in the baseline ({st}) but not in the claims file" for cid, st in baseline.items()
                     if cid not in ids]
    return failures, news


WIDTH = 80


def _number(c: dict, mean: float, lo: float, hi: float) -> str:
    return fmt_interval(mean, lo, hi) + (f" {c['unit']}" if c["unit"] else "")


def _ablated_text(c: dict, ablations: dict) -> str:
    a = c["ablated"]
    if a is None:
        return f"ablation {c['ablation']} ({ablations.get(c['ablation'], '')}): not run"
    if "error" in a:
        return f"ablation {a['name']} ({ablations.get(a['name'], '')}): the experiment stops: {a['error']}"
    return (f"ablation {a['name']} ({ablations.get(a['name'], '')}): "
            f"{_number(c, a['mean'], a['lo'], a['hi'])}, {a['verdict']}")


def text_report(rep: Report) -> str:
    """The claims and tables as plain text that fits `WIDTH` columns and keeps every number in a log."""
    wrap = lambda s, ind="    ": textwrap.fill(s, WIDTH, initial_indent=ind, subsequent_indent=ind + "  ")  # noqa: E731
    mode = "quick" if rep.quick else "full"
    lines = [textwrap.fill(f"{rep.name}: {rep.meta.get('title', '')}", WIDTH),
             f"{mode} run, {rep.seeds} seed{'s' if rep.seeds > 1 else ''}; numbers are means [95% CI]",
             textwrap.fill(rep.score_text(), WIDTH), ""]
    for c in rep.claims:
        lines.append(textwrap.fill(f"{c['status'].upper()}  {c['id']} ({c['figure']})", WIDTH))
        lines.append(wrap(c["text"]))
        lines.append(wrap(f"paper {c['paper_text'] or '-'}; disksched {_number(c, c['mean'], c['lo'], c['hi'])}"
                          + (" (the same for every seed)" if c["seed_free"] else "")
                          + f"; check {c['check']}: {c['verdict']}"))
        if c["status"] == "calibration":
            lines.append(wrap(f"calibration: {c['mechanism']}"))
        else:
            lines.append(wrap(f"mechanism: {c['mechanism']}; {_ablated_text(c, rep.ablations)}"))
        lines += [wrap(f"why: {n}") for n in c["notes"]]
    for t in rep.tables:
        lines += [""] + plain_table(t["title"], t["columns"], t["rows"])
    return "\n".join(lines)


def plain_table(title: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    """Aligned columns when they fit `WIDTH`, else one block per row (its first cell, then `column: value`)."""
    out = [textwrap.fill(title, WIDTH), ""]
    cells = [columns] + [[str(x) for x in r] for r in rows]
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(len(columns))]
    if sum(widths) + 2 * (len(widths) - 1) <= WIDTH:
        for r in cells:
            out.append("  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths))))
        return out
    for r in cells[1:]:
        out.append(textwrap.fill(r[0], WIDTH))
        out += [textwrap.fill(f"{col}: {x}", WIDTH, initial_indent="    ", subsequent_indent="      ")
                for col, x in zip(columns[1:], r[1:])]
    return out


CLAIM_COLUMNS = ["claim", "figure", "paper", "disksched", "check", "verdict", "mechanism removed", "status"]


def claim_row(c: dict, ablations: dict) -> list[str]:
    shown = _number(c, c["mean"], c["lo"], c["hi"]) + (" (every seed)" if c["seed_free"] else "")
    if c["status"] == "calibration":
        removed = f"calibration: {c['mechanism']}"
    else:
        removed = f"{c['mechanism']}: " + _ablated_text(c, ablations)
    return [f"{c['id']}: {c['text']}", c["figure"], c["paper_text"], shown, c["check"], c["verdict"], removed,
            c["status"]]


def markdown(rep: Report, command: str) -> str:
    def table(columns: list[str], rows: list[list[str]]) -> list[str]:
        esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
        return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] + [
            "| " + " | ".join(esc(x) for x in r) + " |" for r in rows]

    mode = "quick" if rep.quick else "full"
    lines = [f"# {rep.name}: {rep.meta.get('title', '')}", "", f"**{rep.score_text()}.**", "",
             f"Generated by `{command}` ({mode} run, {rep.seeds} seed{'s' if rep.seeds > 1 else ''}, "
             f"{rep.elapsed_s:.0f} s). Do not edit: rerun the command. Every number below is the mean over the "
             f"seeds with its 95% Student-t confidence interval in brackets (none with one seed); a claim "
             f"*holds* when its whole interval passes the check, *fails* when none of it does, and is "
             f"*unclear* otherwise"
             + (f" (with {rep.seeds} seeds the interval is the mean +- {T975[rep.seeds - 2]} standard errors)"
                if 2 <= rep.seeds <= len(T975) + 1 else "") + ". "
             "Each claim names the mechanism it is about and an ablation that removes it from every run; a claim "
             "is *reproduced* when it holds and fails under its ablation, *cannot fail* when it holds under its "
             "ablation too (not scored), *not reproduced* when it does not hold. The score is reproduced / "
             "judged (every claim but calibrations and those that cannot fail).", ""]
    if rep.meta.get("citation"):
        lines += [f"Paper: {rep.meta['citation']}", ""]
    if rep.meta.get("setup"):
        lines += [f"Set-up: {rep.meta['setup']}", ""]
    lines += ["## Claims", ""]
    lines += table(CLAIM_COLUMNS, [claim_row(c, rep.ablations) for c in rep.claims]) + [""]
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

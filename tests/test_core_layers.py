"""The core crate's modules import each other without a circle, and its lower
layers (time, errors, random streams, schema types, budgets, the disk model)
import nothing above them (issue 35: "one 53-file circle")."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "disksched-core" / "src"
LOWER = {"time", "error", "rng", "schema", "budget", "disk"}


def modules(src: Path = SRC) -> dict[str, str]:
    """Module path ("disk::layout") -> its source without comments and unit tests."""
    out = {}
    for path in src.rglob("*.rs"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts.pop()
        text = path.read_text()
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
        out["::".join(parts)] = re.sub(r"//.*", "", text)
    return out


def paths_used(text: str) -> list[str]:
    """Every `crate::a::b` path, with `crate::a::{b, c::d}` expanded one level."""
    found = []
    for m in re.finditer(r"crate::([A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)(::\{)?", text):
        found.append(m.group(1))
        if m.group(2):
            depth, j = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            inner = re.sub(r"\{[^{}]*\}", "", text[m.end():j - 1])
            found += [m.group(1) + "::" + item.split("::")[0] for item in re.split(r"[,\s]+", inner) if item not in ("", "self")]
    return found


def graph(mods: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules it names (a module naming its own ancestors is not an edge: a child may use its parent)."""
    def owner(path: str) -> str | None:
        parts = path.split("::")
        return next((m for m in ("::".join(parts[:i]) for i in range(len(parts), 0, -1)) if m in mods), None)
    edges = {}
    for m, text in mods.items():
        used = {owner(p) for p in paths_used(text)}
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        used |= {owner(f"{parent}::{p}" if parent else p) for p in re.findall(r"super::([A-Za-z0-9_]+)", text)}
        edges[m] = {d for d in used if d and d != m and not m.startswith(d + "::")}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_reading_finds_a_planted_circle(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "lib.rs").write_text("pub mod a;\npub mod b;\n")
    (tmp_path / "a" / "mod.rs").write_text("use crate::b::{x, y::Z};\n// use crate::c;\n")
    (tmp_path / "b.rs").write_text("pub fn x() { crate::a::f() }\n")
    (tmp_path / "c.rs").write_text("use super::a;\n")
    edges = graph(modules(tmp_path))
    assert edges["a"] == {"b"} and edges["b"] == {"a"} and edges["c"] == {"a"}
    assert cycles(edges) == [["a", "b"]]


def test_core_modules_import_each_other_without_a_circle():
    edges = graph(modules())
    assert len(edges) > 50
    assert cycles(edges) == []


def test_lower_layers_import_nothing_above_them():
    edges = graph(modules())
    above = {m: sorted(d for d in deps if d.split("::")[0] not in LOWER)
             for m, deps in edges.items() if m.split("::")[0] in LOWER}
    assert {m: d for m, d in above.items() if d} == {}

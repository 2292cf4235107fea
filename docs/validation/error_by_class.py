"""Per-request error of a validation replay, by class, and each class's tail error.

    .venv/bin/python docs/validation/error_by_class.py DISK TRACE

Prints (1) simulated - measured per class (the trace's own tag, the previous
request's type, sequential or not): median, median taken modulo a revolution,
and how many requests are a revolution or more late / early; (2) the *tail*
error of each request type and size: how much later (+) or sooner (-) after
its media access the model reports the request than the drive does.

Why (2) can be read off the trace: one request is outstanding and each is
issued the trace's think time after the previous one completed, so an error
in when request i is reported shifts the platter's phase at which request
i + 1 arrives. A media access's first sector comes round at a fixed angle,
so modulo a revolution request i + 1's error is its own tail error minus
request i's (a cache hit passes its whole error on). Least squares over all
consecutive pairs gives every type's tail error up to one common constant,
fixed here by reads of 5-8 blocks (only differences between types are known).
Hits are told by the trace's own tag (`Hit`), which only hp_c2247a's trace
records faithfully (the other four tag every request `Hit`).
"""
import sys
from collections import defaultdict
from statistics import median

import numpy as np

from disksched import _core

SIZES = [1, 2, 3, 5, 9, 17, 33, 65, 1 << 40]


def main(disk: str, trace: str) -> None:
    spec = _core.disk_show(disk)[0]
    rpm = next(float(line.split("=")[1]) for line in spec.splitlines() if line.startswith("rpm"))
    rev = 60_000.0 / rpm
    summary, measured, simulated = _core.validate(disk, trace)
    rows = [line.split() for line in open(trace) if line.strip()]
    err = [s - m for s, m in zip(simulated, measured)]

    def modrev(x: float) -> float:
        return (x + rev / 2) % rev - rev / 2

    def hit(r: list) -> bool:
        return r[1].lower() == "hit"

    classes = defaultdict(list)
    for i, r in enumerate(rows):
        prev = rows[i - 1][0] if i else "-"
        seq = i > 0 and int(rows[i - 1][2]) + int(rows[i - 1][3]) == int(r[2])
        classes[(r[0], r[1], "after " + prev, "seq" if seq else "rnd")].append(err[i])
    print(f"{'class':28s} {'n':>5s} {'median':>8s} {'mod rev':>8s} {'rev late':>8s} {'rev early':>9s}")
    for k in sorted(classes):
        d = classes[k]
        late = sum(x > rev / 2 for x in d)
        early = sum(x < -rev / 2 for x in d)
        print(f"{' '.join(k):28s} {len(d):5d} {median(d):+8.3f} {median(map(modrev, d)):+8.3f} {late:8d} {early:9d}")

    def size(n: int) -> tuple:
        k = next(j for j in range(len(SIZES) - 1) if SIZES[j] <= n < SIZES[j + 1])
        return k, f"{SIZES[k]}+" if SIZES[k + 1] > 1 << 30 else f"{SIZES[k]}-{SIZES[k + 1] - 1}"

    types: dict = {}
    eqs, rhs = [], []
    last, carried = None, 0.0
    for i, r in enumerate(rows):
        if hit(r):
            carried += err[i]
            continue
        key = (r[0] + " " + r[1], size(int(r[3])))
        types.setdefault(key, len(types))
        e = modrev(err[i] + carried)
        if last is not None and abs(e) < 1.0:  # a revolution gained or lost says nothing of the tail
            eqs.append((types[key], types[last]))
            rhs.append(e)
        last, carried = key, 0.0
    if not eqs:
        print("\nno media accesses to compare: the trace's tags must tell hits (`Hit`) from media accesses")
        return
    anchor = next((k for k in types if k[0].startswith("R") and k[1][1] == "5-8"), next(iter(types)))
    a = np.zeros((len(eqs) + 1, len(types)))
    for row, (this, prev) in enumerate(eqs):
        a[row, this] += 1
        a[row, prev] -= 1
    a[-1, types[anchor]] = 1
    x = np.linalg.lstsq(a, np.array(rhs + [0.0]), rcond=None)[0]
    counts = np.abs(a[:-1]).sum(axis=0)
    print(f"\ntail error (model - drive, ms; relative to {anchor[0]} {anchor[1][1]} blocks = 0)")
    for k, j in sorted(types.items()):
        print(f"{k[0]:10s} {k[1][1]:>6s} blocks {x[j]:+.3f}   ({int(counts[j])} pairs)")
    print(f"\ndemerit {summary}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Compiled gradients with many paths, and the cost of np.where's exact zeros.

    python benchmarks/paths.py            # 4096 paths, maxsize 8192; where vs. a plain mask

1. A function with 12 independent branches (`if x[i] > 0`) has 4096 paths under one
   signature. After every path has been compiled, a call costs one program run per guard that
   fails along its way (the programs form a tree keyed on guard outcomes), not one per
   program held. Printed: the time of a hit on the first path, of a hit on the last path
   compiled, and of a plain ``grad``, and the number of programs held.
2. ``np.where(x > 0, np.sqrt(x), 0.0)`` against the same function written with a mask
   (``np.sqrt(np.abs(x)) * (x > 0)``), which has no where: the exact-zero cotangent of the
   untaken branch costs only inside the where's own pullbacks.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tapegrad  # noqa: E402

BRANCHES = 12


def branches(x):
    out = 0.0
    for i in range(BRANCHES):
        out = out + (np.sin(x[i]) if x[i] > 0 else x[i] * x[i])
    return out


def per_call(fn, *args, seconds=0.5):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn(*args)
        n += 1
    return (time.perf_counter() - start) / n


def main():
    g = tapegrad.compiled_grad(branches, maxsize=2 * 2 ** BRANCHES)
    signs = [np.array([1.0 if (k >> i) & 1 else -1.0 for i in range(BRANCHES)]) for k in range(2 ** BRANCHES)]
    start = time.perf_counter()
    for s in signs:
        g(s * 0.5)
    fill = time.perf_counter() - start
    first, last = signs[0] * 0.5, signs[-1] * 0.5
    print(f"{2 ** BRANCHES} paths compiled in {fill:.1f} s; {g.cache_info()['programs']} programs held")
    print(f"hit, first path:  {per_call(g, first) * 1e6:8.1f} µs")
    print(f"hit, last path:   {per_call(g, last) * 1e6:8.1f} µs")
    print(f"plain grad:       {per_call(tapegrad.grad, branches, last) * 1e6:8.1f} µs")

    x = np.linspace(-1.0, 1.0, 1000)
    with np.errstate(invalid="ignore"):
        where = per_call(tapegrad.grad, lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)), x)
    mask = per_call(tapegrad.grad, lambda x: np.sum(np.sqrt(np.abs(x) + 1.0) * (x > 0)), x)
    print(f"where(x > 0, sqrt(x), 0), 1000 elements: {where * 1e6:8.1f} µs")
    print(f"sqrt(|x| + 1) * (x > 0), 1000 elements:  {mask * 1e6:8.1f} µs")


if __name__ == "__main__":
    main()

"""tapegrad's bookkeeping run cold, as it runs between the BLAS calls of W3 and W4.

    python benchmarks/cold.py                 # W3 and W4 at small sizes, this checkout
    python benchmarks/cold.py --versus HEAD~2 # the same, side by side with an earlier commit
    python benchmarks/cold.py --segments      # where: each stretch between two matrix products

At full size W3's and W4's gap to the hand-written gradient is tapegrad's Python work, run
after each large matrix product has pushed the interpreter's code and data out of the L2
cache: it costs about twice what it costs in a hot loop. This script measures exactly that,
without the noise of the large products themselves: the same losses at small sizes (W3's MLP
at 20-16-16-10 with 4 rows, W4 at 10 rows), with a 3 MB read after every matrix product, in
tapegrad's matmul rules and in the hand-written gradient alike. The cold overhead is
tapegrad's time minus the hand-written gradient's (median of paired samples), and the hot
overhead the same without the reads. It repeats within a few microseconds from run to run,
where the full-size ratios move by several percent; a change that lowers it lowers W3's and
W4's ratios by about the same microseconds.

``--segments`` times each stretch of Python between two matrix products (and before the
first, after the last) in both gradients, so the overhead can be read stretch by stretch:
setting up the trace before the first product, the softmax head's forward and the start of
the sweep, and each layer's pullbacks. A stretch's share is not what removing its code would
save: code run cold warms the caches for the stretches after it (benchmarks/README.md).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _setup(tree):
    """W3's and W4's small cases for the tapegrad found in `tree`, each as (ours, theirs), and
    the switch of the 3 MB read after every matrix product (tapegrad's rules and the
    hand-written gradients share the product). Each pair is checked to agree first."""
    sys.path[:0] = [tree, ROOT]
    import numpy as np

    import tapegrad
    import tapegrad.rules.products as products
    from benchmarks.workloads import build_w3, build_w4, compare, reference_w3, reference_w4

    big = np.ones(3 * 2**20 // 8)  # larger than this machine's L2 cache, as W3's first layer
    evict = [False]
    marks = []  # (`segments`) the clock before and after each product, when it is read

    def mm(a, b):
        if marks:
            marks.append(time.perf_counter_ns())
        out = np.matmul(a, b)
        if evict[0]:
            big.sum()
        if marks:
            marks.append(time.perf_counter_ns())
        return out

    products.np = types.ModuleType("numpy_with_eviction")
    products.np.__dict__.update(np.__dict__)
    products.np.matmul = mm

    rng = np.random.default_rng(0)
    sizes = (20, 16, 16, 10)
    params = [(rng.standard_normal((m, n)), rng.standard_normal(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    w3 = (params, rng.standard_normal((4, 20)), np.eye(10)[rng.integers(0, 10, 4)])
    w4 = (rng.standard_normal(100), rng.standard_normal((10, 100)), np.sign(rng.standard_normal(10)))
    cases = {}
    for name, (f, hand, args) in {"W3": (build_w3(np), reference_w3, w3), "W4": (build_w4(np), reference_w4, w4)}.items():
        ours = functools.partial(tapegrad.grad, f, *args, wrt=0)
        theirs = functools.partial(hand, *args, matmul=mm)
        (value, grads), (ref_value, ref_grads) = ours(), theirs()
        problems = compare(value, grads[1], ref_value, ref_grads[0], rtol=1e-10)  # (wrt=0: the first)
        if problems:  # the same gradient, or nothing is measured
            raise AssertionError(f"{name}: tapegrad and the hand-written gradient differ: {problems}")
        cases[name] = ours, theirs
    return cases, evict, marks, big


def measure(tree, repeats):
    """Cold and hot overheads (seconds) of W3 and W4 for the tapegrad found in `tree`."""
    import gc

    cases, evict, _, _ = _setup(tree)
    out = {}
    for name, (ours, theirs) in cases.items():
        for cold in (True, False):
            evict[0] = cold
            for _ in range(20):
                ours(), theirs()
            gc.collect()
            gc.disable()
            diffs = []
            for _ in range(repeats):
                t = [0.0, 0.0, 0.0]
                for i, fn in enumerate((theirs, ours, theirs)):
                    start = time.perf_counter()
                    for _ in range(20):
                        fn()
                    t[i] = (time.perf_counter() - start) / 20
                diffs.append(t[1] - (t[0] + t[2]) / 2)
            gc.enable()
            out[name, "cold" if cold else "hot"] = statistics.median(diffs)
    return out


def segments(tree, repeats):
    """Where the overhead sits: for W3 and W4, cold and hot, the median time (seconds) of each
    stretch between two matrix products (the first from the call to the first product, the
    last from the last product to the return), tapegrad's and the hand-written gradient's.
    The products themselves are left out. Both make the same products, in the same order."""
    import gc

    cases, evict, marks, big = _setup(tree)
    out = {}
    for name, (ours, theirs) in cases.items():
        for cold in (True, False):
            evict[0] = cold
            samples = {"tapegrad": [], "hand": []}
            gc.collect()
            gc.disable()
            for i in range(20 + repeats):
                for side, fn in (("tapegrad", ours), ("hand", theirs)):
                    if cold:
                        big.sum()  # the previous call's last product, as in a loop of gradients
                    marks[:] = [time.perf_counter_ns()]
                    fn()
                    marks.append(time.perf_counter_ns())
                    if i >= 20:
                        samples[side].append([(marks[k + 1] - marks[k]) * 1e-9 for k in range(0, len(marks), 2)])
            marks.clear()
            gc.enable()
            for side, rows in samples.items():
                out[name, "cold" if cold else "hot", side] = [statistics.median(col) for col in zip(*rows)]
    return out


def run_child(tree, repeats, by_segment=False):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", tree, "--repeats", str(repeats)]
                         + ["--segments"] * by_segment,
                         env={**os.environ, **THREADS}, capture_output=True, text=True, check=True).stdout
    if by_segment:
        return {tuple(k.split(":")): v for k, v in json.loads(out)}
    return {tuple(k.split(":")): float(v) for k, v in (item.split("=") for item in out.split())}


def print_segments(runs):
    """One table per workload: each stretch between products, cold and hot, medians of runs."""
    for name in dict.fromkeys(key[0] for key in runs[0]):
        print(f"\n{name}, µs per stretch (median of {len(runs)} runs): 0 is from the call to the first "
              f"matrix product, the last from the last product to the return")
        print("\n| stretch | tapegrad cold | hand cold | overhead cold | tapegrad hot | hand hot | overhead hot |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        cols = {(mode, side): [statistics.median(col) * 1e6 for col in zip(*(r[name, mode, side] for r in runs))]
                for mode in ("cold", "hot") for side in ("tapegrad", "hand")}
        rows = list(zip(*(cols[k] for k in [("cold", "tapegrad"), ("cold", "hand"), ("hot", "tapegrad"), ("hot", "hand")])))
        for i, (tc, hc, th, hh) in enumerate(rows + [tuple(map(sum, zip(*rows)))]):
            label = str(i) if i < len(rows) else "all"
            print(f"| {label} | {tc:.1f} | {hc:.1f} | {tc - hc:.1f} | {th:.1f} | {hh:.1f} | {th - hh:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", metavar="REV", help="an earlier commit, measured in alternation with this one")
    ap.add_argument("--runs", type=int, default=3, help="child processes per side (default 3)")
    ap.add_argument("--repeats", type=int, default=31, help="paired samples per measure (default 31)")
    ap.add_argument("--segments", action="store_true",
                    help="the time of each stretch between two matrix products, tapegrad's and the hand-written gradient's")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.segments:
            print(json.dumps([[":".join(key), v] for key, v in segments(args.child, args.repeats).items()]))
        else:
            res = measure(args.child, args.repeats)
            print(" ".join(f"{w}:{kind}={v!r}" for (w, kind), v in res.items()))
        return
    if args.segments:
        print_segments([run_child(ROOT, args.repeats * 10, by_segment=True) for _ in range(args.runs)])
        return
    trees = {"this": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.versus:
            trees = {args.versus: os.path.join(tmp, "old"), "this": ROOT}
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", trees[args.versus],
                            args.versus], check=True)
        try:
            runs = {side: [] for side in trees}
            for _ in range(args.runs):
                for side, tree in trees.items():
                    runs[side].append(run_child(tree, args.repeats))
        finally:
            if args.versus:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", trees[args.versus]], check=False)
    print("| overhead over hand-written, µs (median of runs) | " + " | ".join(trees) + " |")
    print("|---|" + "---:|" * len(trees))
    for key in runs["this"][0]:
        cells = [f"{statistics.median(r[key] for r in runs[side]) * 1e6:.1f}" for side in trees]
        print(f"| {key[0]} {key[1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

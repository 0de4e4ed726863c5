"""tapegrad's bookkeeping run cold, as it runs between the BLAS calls of W3 and W4.

    python benchmarks/cold.py                 # W3 and W4 at small sizes, this checkout
    python benchmarks/cold.py --versus HEAD~2 # the same, side by side with an earlier commit

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
"""
from __future__ import annotations

import argparse
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


def measure(tree, repeats):
    """Cold and hot overheads (seconds) of W3 and W4 for the tapegrad found in `tree`."""
    sys.path[:0] = [tree, ROOT]
    import gc

    import numpy as np

    import tapegrad
    import tapegrad.rules.products as products
    from benchmarks.workloads import build_w3, build_w4, compare, reference_w3, reference_w4

    big = np.ones(3 * 2**20 // 8)  # larger than this machine's L2 cache, as W3's first layer
    evict = [False]

    def mm(a, b):
        out = np.matmul(a, b)
        if evict[0]:
            big.sum()
        return out

    # tapegrad's matmul rules see numpy with this matmul; the hand-written gradients are given it
    products.np = types.ModuleType("numpy_with_eviction")
    products.np.__dict__.update(np.__dict__)
    products.np.matmul = mm

    rng = np.random.default_rng(0)
    sizes = (20, 16, 16, 10)
    params = [(rng.standard_normal((m, n)), rng.standard_normal(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    w3 = (params, rng.standard_normal((4, 20)), np.eye(10)[rng.integers(0, 10, 4)])
    w4 = (rng.standard_normal(100), rng.standard_normal((10, 100)), np.sign(rng.standard_normal(10)))
    cases = {"W3": (build_w3(np), reference_w3, w3), "W4": (build_w4(np), reference_w4, w4)}
    out = {}
    for name, (f, hand, args) in cases.items():
        ours = lambda: tapegrad.grad(f, *args, wrt=0)  # noqa: E731
        theirs = lambda: hand(*args, matmul=mm)  # noqa: E731
        (value, grads), (ref_value, ref_grads) = ours(), theirs()
        problems = compare(value, grads[1], ref_value, ref_grads[0], rtol=1e-10)  # (wrt=0: the first)
        if problems:  # the same gradient, or nothing is measured
            raise AssertionError(f"{name}: tapegrad and the hand-written gradient differ: {problems}")
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


def run_child(tree, repeats):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", tree, "--repeats", str(repeats)],
                         env={**os.environ, **THREADS}, capture_output=True, text=True, check=True).stdout
    return {tuple(k.split(":")): float(v) for k, v in (item.split("=") for item in out.split())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versus", metavar="REV", help="an earlier commit, measured in alternation with this one")
    ap.add_argument("--runs", type=int, default=3, help="child processes per side (default 3)")
    ap.add_argument("--repeats", type=int, default=31, help="paired samples per measure (default 31)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        res = measure(args.child, args.repeats)
        print(" ".join(f"{w}:{kind}={v!r}" for (w, kind), v in res.items()))
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

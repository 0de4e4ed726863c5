"""What a compiled gradient's first calls cost, and its cached calls, against one eager grad.

    python benchmarks/compile.py                        # W1c, the 20,000- and 100,000-op chains
    python benchmarks/compile.py --against 69f38e8      # the same, side by side with a commit
    python benchmarks/compile.py --against 69f38e8 --cached W1,W1c,W5,W3,chain20k --repeats 9

For each case, a fresh ``compiled_grad`` is called `CALLS` times on the same arguments and each
call is divided by one eager ``grad`` of the same function timed just before it, in CPU time
of the process (``time.process_time``: on a shared machine, the time other processes take
stays out), the median of the repeats printed: call 1, call 2, ..., then the dearest of the
first eight and the first call that ran the program. A signature's first call is an eager
grad, its second traces the gradient program; the calls after it are eager grads that each
take the program's making on for a share of their own time (`tapegrad.program.stages`), until
a call runs the program (before the tiers, the first call did all of it; before issue 36,
calls 3, 4 and 5 each did one whole stage). ``--cached`` times the steady-state cached calls
of the workloads named (wall-clock, paired).

With ``--against REV`` the commit is checked out into a temporary git worktree and one child
process per side (its own tapegrad, this tree's workloads) takes the same orders in
alternating order; the report adds the median of the paired ratios of cached calls (this
commit ÷ REV: below 1 is faster). The cases: ``W1c`` (4,000 primitives), ``chain20k`` (the
W1c step 5,000 times: 20,000 primitives, the issue's) and ``chain`` (25,000 times: 100,000).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CALLS = 24


#: the chains: W1c's step (sin, two products, a sum: four primitives) so many times
STEPS = {"chain20k": 5_000, "chain": 25_000}


def _case(name):
    """(f, args, wrt) of a case: a workload, or a chain of `STEPS`."""
    import numpy as np

    from benchmarks.workloads import WORKLOADS

    if name in STEPS:
        steps = STEPS[name]

        def chain(x, c):
            for _ in range(steps):
                x = np.sin(x) * c + 0.1 * x
            return x

        return chain, (0.3, 1.0001), None
    w = WORKLOADS[name]
    return w.numpy_function(), w.inputs(), (w.wrt if len(w.wrt) > 1 else w.wrt[0])


def _timed(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def first_calls(name):
    """Calls 1..CALLS of a fresh compiled gradient, each ÷ one eager grad timed just before."""
    import tapegrad

    f, args, wrt = _case(name)
    gc.collect()
    eager = _timed(lambda: tapegrad.grad(f, *args, wrt=wrt))
    g = tapegrad.compiled_grad(f, wrt=wrt)
    ratios, first_hit = [], None
    for call in range(1, CALLS + 1):
        ratios.append(_timed(lambda: g(*args)) / eager)
        if first_hit is None and g.cache_info()["hits"]:
            first_hit = call
    return ratios + [first_hit or 0]


def cached(name, calls):
    """Seconds per steady-state cached call (after warm-up calls that compile the program)."""
    import tapegrad

    key = ("cached", name)
    if key not in _READY:
        f, args, wrt = _case(name)
        g = tapegrad.compiled_grad(f, wrt=wrt)
        for _ in range(200):  # until the program runs (a long one is made over many calls)
            g(*args)
            if g.cache_info()["hits"] > 1:
                break
        _READY[key] = lambda: g(*args)
    run = _READY[key]
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            run()
        return (time.perf_counter() - start) / calls
    finally:
        gc.enable()


_READY = {}


def child(tree):
    """Serve orders from stdin for the tapegrad of `tree`: ``first NAME`` or ``cached NAME CALLS``."""
    sys.path[:0] = [tree, ROOT]
    import numpy as np

    import tapegrad

    tapegrad.grad(lambda a, b: np.sin(a) * b + a, 0.3, 0.5)  # warm-up: imports, caches
    g = tapegrad.compiled_grad(lambda a, b: np.sin(a) * b + a)
    for _ in range(3):
        g(0.3, 0.5)
    print("ready", flush=True)
    for line in sys.stdin:
        order, name, *rest = line.split()
        out = first_calls(name) if order == "first" else cached(name, int(rest[0]))
        print(json.dumps(out), flush=True)


class Side:
    def __init__(self, tree):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", tree],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, **THREADS})
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the child for {tree} did not start")

    def ask(self, *order):
        self.proc.stdin.write(" ".join(map(str, order)) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def run(sides, cases, cached_names, repeats, sample):
    for name in cases:
        ratios = {k: [] for k in sides}
        for r in range(repeats if name != "chain" else max(1, repeats // 3)):
            for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                ratios[k].append(sides[k].ask("first", name))
        for k, rows in ratios.items():
            hits = sorted(row[-1] for row in rows)
            rows = [row[:-1] for row in rows]
            med = [statistics.median(col) for col in zip(*rows)]
            print(f"{name:8} {k:8} call ÷ eager grad, calls 1-{CALLS}: "
                  + " ".join(f"{x:5.2f}" for x in med) + f"   (median of {len(rows)})", flush=True)
            worst = [max(row[:8]) for row in rows]
            print(f"{name:8} {k:8} dearest of the first eight: median {statistics.median(worst):.2f}, "
                  f"runs {' '.join(f'{x:.2f}' for x in sorted(worst))}; the dearest after the second: "
                  f"{statistics.median(max(row[2:8]) for row in rows):.2f}; the first call that ran the "
                  f"program: {' '.join(map(str, hits))} (0: none of the {CALLS})", flush=True)
    for name in cached_names:
        once = max(s.ask("cached", name, 1) for s in sides.values())
        calls = max(1, int(sample / max(once, 1e-7)))
        times = {k: [] for k in sides}
        for r in range(repeats):
            for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                times[k].append(sides[k].ask("cached", name, calls))
        line = "  ".join(f"{k} {statistics.median(t) * 1e6:9.1f} µs" for k, t in times.items())
        if "earlier" in times:
            ratio = statistics.median(t / e for t, e in zip(times["this"], times["earlier"]))
            line += f"   this ÷ earlier {ratio:.3f} (median of {repeats} paired)"
        print(f"{name:6} cached call: {line}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", metavar="REV", help="an earlier commit to run side by side")
    ap.add_argument("--cases", default="W1c,chain20k,chain", help="first-call cases: workloads or chains")
    ap.add_argument("--cached", default="W1c", help="workloads whose cached calls are timed")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=float, default=0.05, help="least seconds one cached sample takes")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    cases = [c for c in a.cases.split(",") if c]
    cached_names = [c for c in a.cached.split(",") if c]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {}
        try:
            if a.against:
                old_tree = os.path.join(tmp, "old")
                subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", old_tree, a.against],
                               check=True)
                sides["earlier"] = Side(old_tree)
            sides["this"] = Side(ROOT)
            run(sides, cases, cached_names, a.repeats, a.sample)
        finally:
            for s in sides.values():
                s.close()
            if a.against:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", old_tree], check=False)


if __name__ == "__main__":
    main()

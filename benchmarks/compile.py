"""What a compiled gradient's first calls cost, and its cached calls, against one eager grad.

    python benchmarks/compile.py                        # W1c and a 100,000-op chain
    python benchmarks/compile.py --against 69f38e8      # the same, side by side with a commit
    python benchmarks/compile.py --against 69f38e8 --cached W1,W1c,W5,W3 --repeats 9

For each case, a fresh ``compiled_grad`` is called six times on the same arguments and each
call is divided by one eager ``grad`` of the same function timed just before it, in CPU time
of the process (``time.process_time``: on a shared machine, the time other processes take
stays out), the median of the repeats printed: call 1, call 2, ... A signature's first call is
an eager grad, its second traces the gradient program, its third optimizes it and its fourth
writes its source (each also runs an eager grad), its fifth compiles and runs it, and the
later ones run the program
(before the tiers, the first call did all of it). ``--cached`` times the steady-state cached
calls of the workloads named (wall-clock, paired).

With ``--against REV`` the commit is checked out into a temporary git worktree and one child
process per side (its own tapegrad, this tree's workloads) takes the same orders in
alternating order; the report adds the median of the paired ratios of cached calls (this
commit ÷ REV: below 1 is faster). The cases: ``W1c`` (4,000 primitives) and ``chain`` (the
W1c step 25,000 times: 100,000 primitives).
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
CALLS = 6


def _case(name):
    """(f, args, wrt) of a case: a workload, or ``chain`` (W1c's step 25,000 times)."""
    import numpy as np

    from benchmarks.workloads import WORKLOADS

    if name == "chain":
        def chain(x, c):
            for _ in range(25_000):
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
    return [_timed(lambda: g(*args)) / eager for _ in range(CALLS)]


def cached(name, calls):
    """Seconds per steady-state cached call (after warm-up calls that compile the program)."""
    import tapegrad

    key = ("cached", name)
    if key not in _READY:
        f, args, wrt = _case(name)
        g = tapegrad.compiled_grad(f, wrt=wrt)
        for _ in range(6):
            g(*args)
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
            med = [statistics.median(col) for col in zip(*rows)]
            print(f"{name:6} {k:8} call ÷ eager grad, calls 1-{CALLS}: "
                  + "  ".join(f"{x:6.2f}" for x in med) + f"   (median of {len(rows)})", flush=True)
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
    ap.add_argument("--cases", default="W1c,chain", help="first-call cases: workloads or chain")
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

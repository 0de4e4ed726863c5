"""What a compiled gradient's first calls cost, and its cached calls, against one eager grad.

    python benchmarks/compile.py                        # W1c and a 20,000-op chain, a 200-call loop
    python benchmarks/compile.py --against main         # the same, side by side with a commit
    python benchmarks/compile.py --against main --cases W1c,chain20k --cached W1,W1c,W3,chain20k

For each case, a fresh ``compiled_grad`` in a fresh process is called on the same arguments
until a call runs its program (at most `LIMIT` calls), each call divided by one eager
``grad`` of the same function timed before the first (the least of three), both in CPU time
of the process (``time.process_time``: on a shared machine, the time other processes take
stays out; so does the child making the program) and in wall time. For each clock,
the median of the repeats (each in its own process) is printed for calls 1 to `CALLS`, with
the largest of those medians, the call that first ran the program, the largest ratio of any
call before it (the median over the repeats of each repeat's largest) and the warm-up total:
the sum of the ratios of the calls until the program ran, that call included, in eager
grads. ``--steps`` then times a loop of that many calls of a fresh compiled gradient whole
(an optimization's loop: warm-up and program calls together). A signature's first call is
an eager grad; a short program is then traced, optimized, written and compiled one stage a
call; a long one (`BESIDE_OPS`) is made by a forked child while eager grads answer the calls
(`tapegrad.program.background`): the child's CPU time, which the caller's leaves out, is
printed too, in eager grads. ``--cached``
times the steady-state cached calls of the workloads named (CPU time, paired), once the
program runs.

With ``--against REV`` the commit is checked out into a temporary git worktree and one child
process per side (its own tapegrad, this tree's workloads) takes the same orders in
alternating order; the report adds the median of the paired ratios of cached calls and of
the loops (this commit ÷ REV: below 1 is faster). The cases: ``W1c`` (4,000 primitives),
``chain20k`` (the W1c step 5,000 times: 20,000 primitives), ``chain`` (25,000 times:
100,000 primitives) and ``chain<N>`` (N primitives: ``chain800``, the step 200 times). The load average is printed before and after.
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
CALLS = 8
LIMIT = 400  # calls of a fresh compiled gradient at most, waiting for its program to run


def _case(name):
    """(f, args, wrt) of a case: a workload, or ``chain`` (W1c's step 25,000 times)."""
    import numpy as np

    from benchmarks.workloads import WORKLOADS

    if name.startswith("chain"):  # chain: 100,000 ops; chain20k: 20,000; chain800: 800 (4 a step)
        size = name[5:] or "100k"
        steps = int(size[:-1]) * 1000 // 4 if size.endswith("k") else int(size) // 4

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


def _both(fn):
    """(CPU seconds of this process, wall seconds) of one call of `fn`."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def _eager(f, args, wrt):
    """One eager grad's (CPU, wall) seconds: the least of three of each, after a warm-up."""
    import tapegrad

    tapegrad.grad(f, *args, wrt=wrt)
    gc.collect()
    runs = [_both(lambda: tapegrad.grad(f, *args, wrt=wrt)) for _ in range(3)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def first_calls(name):
    """The calls of a fresh compiled gradient until one runs its program (`LIMIT` at most), each
    ÷ one eager grad (the least of three, timed before), in this process: ``{"cpu": [...],
    "wall": [...]}`` (the CPU time of this process leaves out a child compiling for it)."""
    import tapegrad

    f, args, wrt = _case(name)
    eager_cpu, eager_wall = _eager(f, args, wrt)
    g = tapegrad.compiled_grad(f, wrt=wrt)
    cpu, wall, ran = [], [], None
    while len(cpu) < LIMIT and (len(cpu) < CALLS or ran is None):
        c, w = _both(lambda: g(*args))
        cpu.append(c / eager_cpu)
        wall.append(w / eager_wall)
        if ran is None and g.cache_info()["hits"]:
            ran = len(cpu)
    times = os.times()  # the children reaped (the program's maker) have their CPU time here
    return {"cpu": cpu, "wall": wall, "ran": ran or len(cpu),
            "child": (times.children_user + times.children_system) / eager_cpu}


def loop(name, steps):
    """`steps` calls of a fresh compiled gradient (an optimization's loop), CPU and wall seconds in
    all, and each ÷ one eager grad."""
    import tapegrad

    f, args, wrt = _case(name)
    eager_cpu, eager_wall = _eager(f, args, wrt)
    g = tapegrad.compiled_grad(f, wrt=wrt)
    c, w = _both(lambda: [g(*args) for _ in range(steps)])
    return {"cpu": c, "wall": w, "cpu_eager": c / eager_cpu, "wall_eager": w / eager_wall}


def _fresh(tree, *order):
    """An order (`first_calls` or `loop`) in a fresh interpreter on the tapegrad of `tree`."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--fresh", tree, *map(str, order)],
                          check=True, capture_output=True, text=True, env={**os.environ, **THREADS})
    return json.loads(done.stdout.strip().splitlines()[-1])


def cached(name, calls):
    """CPU seconds per steady-state cached call (after warm-up calls that compile the program)."""
    import tapegrad

    key = ("cached", name)
    if key not in _READY:
        f, args, wrt = _case(name)
        g = tapegrad.compiled_grad(f, wrt=wrt)
        for _ in range(LIMIT):  # until the program runs
            g(*args)
            if g.cache_info()["hits"] > 1:
                break
        _READY[key] = lambda: g(*args)
    run = _READY[key]
    gc.collect()
    gc.disable()
    try:
        # CPU time of the process: on a shared machine the time other processes take stays out
        start = time.process_time()
        for _ in range(calls):
            run()
        return (time.process_time() - start) / calls
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
        self.tree = tree
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


def run(sides, cases, cached_names, repeats, sample, steps):
    print("load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    for name in cases:
        rows = {k: [] for k in sides}
        for r in range(repeats):
            for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                rows[k].append(_fresh(sides[k].tree, "first", name))
        for k, runs in rows.items():
            ran = statistics.median(run["ran"] for run in runs)
            for clock in ("cpu", "wall"):
                table = [run[clock] for run in runs]
                med = [statistics.median(col) for col in zip(*(row[:CALLS] for row in table))]
                # the calls before the program ran, and the call that first ran it
                worst = statistics.median(max(row[:run["ran"]]) for row, run in zip(table, runs))
                total = statistics.median(sum(row[:run["ran"]]) for row, run in zip(table, runs))
                print(f"{name:8} {k:8} {clock:4} call ÷ eager grad, calls 1-{CALLS}: "
                      + "  ".join(f"{x:5.2f}" for x in med) + f"   max {max(med):.2f}; program ran from call "
                      f"{ran:g}; max of every call till then {worst:.2f}; warm-up total {total:.1f} eager grads"
                      + (f" (a child's CPU besides: {statistics.median(run.get('child', 0.0) for run in runs):.1f})"
                         if clock == "cpu" else "")
                      + f"   (medians of {len(table)} processes)", flush=True)
        if steps:
            loops = {k: [] for k in sides}
            for r in range(repeats):
                for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                    loops[k].append(_fresh(sides[k].tree, "loop", name, steps))
            line = "  ".join(f"{k} {statistics.median(x['cpu'] for x in v):.2f} s CPU "
                             f"({statistics.median(x['cpu_eager'] for x in v):.1f} eager grads), "
                             f"{statistics.median(x['wall'] for x in v):.2f} s wall "
                             f"({statistics.median(x['wall_eager'] for x in v):.1f})" for k, v in loops.items())
            if "earlier" in loops:
                for clock in ("cpu", "wall"):
                    ratio = statistics.median(t[clock] / e[clock] for t, e in zip(loops["this"], loops["earlier"]))
                    line += f"; this ÷ earlier {clock} {ratio:.3f}"
            print(f"{name:8} {steps} calls of a fresh compiled gradient: {line}   (medians of {repeats} processes)",
                  flush=True)
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
    print("load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", metavar="REV", help="an earlier commit to run side by side")
    ap.add_argument("--cases", default="W1c,chain20k", help="first-call cases: workloads, chain20k or chain")
    ap.add_argument("--cached", default="W1c", help="workloads whose cached calls are timed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200, help="calls of the loop timed whole (0: none)")
    ap.add_argument("--sample", type=float, default=0.05, help="least seconds one cached sample takes")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--fresh", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    if a.fresh:
        sys.path[:0] = [a.fresh[0], ROOT]
        order, name, *rest = a.fresh[1:]
        return print(json.dumps(first_calls(name) if order == "first" else loop(name, int(rest[0]))))
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
            run(sides, cases, cached_names, a.repeats, a.sample, a.steps)
        finally:
            for s in sides.values():
                s.close()
            if a.against:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", old_tree], check=False)


if __name__ == "__main__":
    main()

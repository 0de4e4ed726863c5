"""tapegrad against an earlier commit of itself, side by side in one run.

    python benchmarks/versus.py HEAD~3                  # every workload, 15 repeats
    python benchmarks/versus.py v0.1.0 --workloads W1,W1c --repeats 9

The earlier commit is checked out into a temporary git worktree. One child process per side
imports its own tapegrad and waits for orders; in each repeat both time the same workload,
in alternating order, for the same number of calls, so that both see the same machine. The
report gives, per workload, the median time per gradient call of each side and the median of
the paired ratios (this commit ÷ the earlier one): below 1 is faster. On a shared VM the
timings move by 10-25% from run to run; paired ratios from one run move far less.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def child(tree):
    """Serve timing orders ``WORKLOAD CALLS`` from stdin for the tapegrad found in `tree`."""
    sys.path[:0] = [tree, ROOT]  # that tree's tapegrad, this tree's workloads and adapters
    import gc

    from benchmarks.frameworks import FRAMEWORKS, steady_heap
    from benchmarks.workloads import WORKLOADS

    steady_heap()  # as run.py does: no page-faulting of arrays from call to call

    adapter = FRAMEWORKS["tapegrad"]
    adapter.load()
    ready = {}
    print("ready", flush=True)
    for line in sys.stdin:
        name, calls = line.split()
        if name not in ready:
            w = WORKLOADS[name]
            gradient = adapter.prepare(w, w.inputs()).gradient
            gradient()  # warm-up: imports, caches
            ready[name] = gradient
        gradient = ready[name]
        gc.collect()
        start = time.perf_counter()
        for _ in range(int(calls)):
            gradient()
        print((time.perf_counter() - start) / int(calls), flush=True)


def start_child(tree):
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", tree],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, **THREADS})
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the child for {tree} did not start")
    return proc


def ask(proc, name, calls):
    proc.stdin.write(f"{name} {calls}\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev", nargs="?", help="the earlier commit (any git revision)")
    ap.add_argument("--workloads", default="W1,W1c,W2,W3,W4,W5,W6")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sample", type=float, default=0.05, help="least seconds one sample takes")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = os.path.join(tmp, "old")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", old_tree, args.rev], check=True)
        try:
            sides = {"earlier": start_child(old_tree), "this": start_child(ROOT)}
            rows = []
            for name in args.workloads.split(","):
                once = max(ask(p, name, 1) for p in sides.values())
                calls = max(1, int(args.sample / max(once, 1e-7)))
                times = {k: [] for k in sides}
                for r in range(args.repeats):
                    order = list(sides) if r % 2 == 0 else list(reversed(sides))
                    for k in order:
                        times[k].append(ask(sides[k], name, calls))
                ratio = statistics.median(t / e for t, e in zip(times["this"], times["earlier"]))
                rows.append((name, statistics.median(times["earlier"]), statistics.median(times["this"]), ratio))
                print(f"{name}: {rows[-1][1] * 1e3:.3f} ms -> {rows[-1][2] * 1e3:.3f} ms, x{ratio:.3f}", flush=True)
            for p in sides.values():
                p.stdin.close()
                p.wait()
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", old_tree], check=False)
    print(f"\n| workload | {args.rev} | this commit | this ÷ {args.rev} (median of paired ratios) |")
    print("|---|---:|---:|---:|")
    for name, old, new, ratio in rows:
        print(f"| {name} | {old * 1e3:.3f} ms | {new * 1e3:.3f} ms | {ratio:.3f} |")


if __name__ == "__main__":
    main()

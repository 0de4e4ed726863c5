"""Memory per recorded op of an eager gradient, by op kind, on long scalar chains.

    python benchmarks/opmemory.py            # 100,000 ops per kind; --ops N to change

For each kind of op, a chain of N such ops on Python floats (x = sin(x), x = tanh(x),
x = x * c with c an argument, x = x * 0.999 with a constant, x = x / 3.0, x = x + c, and
W1c's step, which mixes them); `tapegrad.grad` runs on it under tracemalloc, and the peak of
traced memory during the call, divided by N, is the bytes each recorded op holds until the
sweep reaches it (the op with its pullback slot, its Variable and id, the arguments' tuple, the
value, the pullback and what it keeps, the tape's list). Peak RSS per op of a 10⁶-op tape adds
the allocator's rounding and overhead: ``--rss`` measures it in a fresh interpreter (VmHWM,
minus the interpreter's resident size before the call; and the whole VmHWM per op, which is
the issue's measure).
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import tapegrad  # noqa: E402


def kinds(n):
    """{kind: (f, args)}: each a chain of n ops (W1c's: n // 4 steps of 4)."""
    def sin(x):
        for _ in range(n):
            x = np.sin(x)
        return x

    def tanh(x):
        for _ in range(n):
            x = np.tanh(x)
        return x

    def mul_arg(x, c):
        for _ in range(n):
            x = x * c
        return x

    def mul_const(x):
        for _ in range(n):
            x = x * 0.999
        return x

    def div_const(x):
        for _ in range(n):
            x = x / 3.0
        return x

    def add_arg(x, c):
        for _ in range(n):
            x = x + c
        return x

    def w1c(x, c):
        for _ in range(n // 4):
            x = np.sin(x) * c + 0.1 * x
        return x

    return {"sin(x)": (sin, (0.3,)), "tanh(x)": (tanh, (0.3,)),
            "x * c (c an argument)": (mul_arg, (0.3, 1.0001)),
            "x * 0.999 (a constant)": (mul_const, (0.3,)), "x / 3.0 (a constant)": (div_const, (0.3,)),
            "x + c (c an argument)": (add_arg, (0.3, 1e-6)),
            "W1c's step (sin, two products, a sum)": (w1c, (0.3, 1.0001))}


def bytes_per_op(f, args, n):
    tapegrad.grad(f, *args)  # (warm: the caches and interned objects of the first call)
    tracemalloc.start()
    tapegrad.grad(f, *args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / n


RSS = """
import sys; sys.path.insert(0, {root!r})
import numpy as np, tapegrad
def chain(x, c):
    for _ in range({steps}):
        x = np.sin(x) * c + 0.1 * x
    return x
tapegrad.grad(chain, 0.3, 1.0001)  # warm, small
def status(key):
    return int([l.split()[1] for l in open('/proc/self/status') if l.startswith(key)][0])
before = status('VmRSS')
tapegrad.grad(chain, 0.3, 1.0001)
print(status('VmHWM') - before, status('VmHWM'))
"""


def rss_per_op(ops, malloc_default=True):
    """(KiB per op above the resident size before the call, KiB per op of the whole peak) of
    one grad of W1c's step on a tape of `ops` primitives, in a fresh interpreter."""
    root = str(pathlib.Path(__file__).resolve().parent.parent)
    code = RSS.format(root=root, steps=ops // 4).replace("tapegrad.grad(chain, 0.3, 1.0001)  # warm, small",
                                                         "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    grown, peak = int(out[0]), int(out[1])
    return grown / ops, peak / ops


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--rss", action="store_true", help="also peak RSS per op of a 10⁶-op tape")
    args = parser.parse_args(argv)
    print("| op kind | bytes per recorded op (tracemalloc peak ÷ ops) |\n|---|---|")
    for kind, (f, fargs) in kinds(args.ops).items():
        print(f"| {kind} | {bytes_per_op(f, fargs, args.ops):.0f} |", flush=True)
    if args.rss:
        grown, peak = rss_per_op(1_000_000)
        print(f"\n10⁶-op tape (W1c's step): peak RSS {peak:.3f} KiB per op, of which the call's growth {grown:.3f}")


if __name__ == "__main__":
    main()

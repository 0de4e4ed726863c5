"""Instructions per primitive of an eager gradient, counted by valgrind's callgrind.

Timings on a shared VM move by 10-25% from run to run; an instruction count repeats exactly
for the same code, inputs and environment, so it shows a change of 1% in the per-op cost.
Each workload is counted twice, with N and 3N gradients, and the difference is divided by
2N times the number of primitives, which cancels start-up and imports.

    python benchmarks/instructions.py              # W1c and W5
    python benchmarks/instructions.py --workloads W1c --repeats 2
    python benchmarks/instructions.py --first-call W1c   # compiled_grad's first call ÷ grad
    python benchmarks/instructions.py --first-call chain:25000   # a 100,000-op chain
    python benchmarks/instructions.py --workloads W3,W4,W6 --versus ba3ef13   # per gradient, two commits

An array workload (W3, W4, W6, W7: no primitive count) is counted per gradient call, together
with its hand-written gradient, so the ratio to hand is exact too. ``--versus REV`` counts the
same children with tapegrad checked out at REV (a temporary worktree) beside this checkout's.

Needs valgrind (``apt-get install valgrind``). The count is taken with one BLAS thread, a
fixed hash seed, address-space randomization off (``setarch -R``, where it is allowed) and
the cyclic collector frozen, so that only tapegrad's own work varies.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

#: the child: N gradients of one workload, after one warm-up call
CHILD = """
import gc, sys
sys.path[:0] = [{root!r}, {here!r}]
import numpy as np
import tapegrad
from workloads import WORKLOADS
w = WORKLOADS[{name!r}]
args = w.inputs()
f = w.numpy_function()
tapegrad.grad(f, *args, wrt=w.wrt)
gc.collect(); gc.freeze(); gc.disable()
for _ in range({calls}):
    tapegrad.grad(f, *args, wrt=w.wrt)
"""

#: the child for an array workload's hand-written gradient
HAND = """
import gc, sys
sys.path[:0] = [{root!r}, {here!r}]
import numpy as np
from workloads import WORKLOADS
w = WORKLOADS[{name!r}]
args = w.inputs()
w.reference(*args)
gc.collect(); gc.freeze(); gc.disable()
for _ in range({calls}):
    w.reference(*args)
"""


#: the child for --first-call: after the imports and one warm-up gradient of another function,
#: nothing ("none"), one eager gradient ("eager") or one first call of compiled_grad ("compiled")
FIRST_CALL = """
import gc, sys
sys.path[:0] = [{root!r}, {here!r}]
import numpy as np
import tapegrad
from workloads import WORKLOADS
name = {name!r}
if name.startswith("chain:"):
    steps = int(name[6:])

    def f(x, c):
        for _ in range(steps):
            x = np.sin(x) * c + 0.1 * x
        return x

    args, wrt = (0.3, 1.0001), None
else:
    w = WORKLOADS[name]
    args, f, wrt = w.inputs(), w.numpy_function(), w.wrt
tapegrad.grad(lambda a, b: np.sin(a) * b + a, 0.3, 0.5)
tapegrad.compiled_grad(lambda a, b: np.sin(a) * b + a)(0.3, 0.5)
gc.collect(); gc.freeze()
if {what!r} == "eager":
    tapegrad.grad(f, *args, wrt=wrt)
elif {what!r} == "compiled":
    tapegrad.compiled_grad(f, wrt=wrt)(*args)
"""


def count(name, calls, child=CHILD, root=HERE.parent, **extra):
    """Instructions callgrind counts for a child process that runs `calls` gradients of `name`,
    with the tapegrad of the checkout at `root`."""
    with tempfile.TemporaryDirectory() as tmp:
        script = pathlib.Path(tmp, "child.py")
        script.write_text(child.format(root=str(root), here=str(HERE), name=name, calls=calls, **extra))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
               sys.executable, str(script)]
        if shutil.which("setarch"):
            cmd = ["setarch", os.uname().machine, "-R"] + cmd
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or not found:
            sys.exit(f"callgrind failed for {name}:\n{done.stderr[-2000:]}")
        return int(found.group(1))


def main(argv=None):
    sys.path.insert(0, str(HERE))
    from workloads import WORKLOADS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="W1c,W5", help="comma-separated workload names")
    ap.add_argument("--versus", metavar="REV", help="also count tapegrad at commit REV, side by side")
    ap.add_argument("--repeats", type=int, default=1, help="N: count N and 3N gradients")
    ap.add_argument("--first-call", metavar="WORKLOAD",
                    help="instead: compiled_grad's first call over one eager grad, of a workload "
                         "or of chain:STEPS (a scalar chain of 4×STEPS primitives)")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    if a.first_call:
        name = a.first_call
        base, eager, compiled = (count(name, 0, FIRST_CALL, what=what) for what in ("none", "eager", "compiled"))
        print(f"{name}: compiled_grad's first call {(compiled - base) / 1e6:,.0f}M instructions, one "
              f"eager grad {(eager - base) / 1e6:,.0f}M: {(compiled - base) / (eager - base):.1f}×")
        return
    roots = [("this checkout", HERE.parent)]
    with tempfile.TemporaryDirectory() as tmp:
        if a.versus:
            old = pathlib.Path(tmp, "old")
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach", "-q", str(old), a.versus],
                           check=True)
            roots.append((a.versus, old))
        try:
            for name in a.workloads.split(","):
                report(name, WORKLOADS[name], a.repeats, roots)
        finally:
            if a.versus:
                subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(old)], check=True)


def report(name, w, repeats, roots):
    """Print the count of each checkout in `roots` for one workload (and ratios between them)."""
    n_ops = w.n_ops
    n = repeats * (max(1, 4000 // n_ops) if n_ops else 2)  # about 4000 primitives, or 2 gradients, per N
    per = {}
    for label, root in roots:
        low, high = count(name, n, root=root), count(name, 3 * n, root=root)
        per[label] = (high - low) / (2 * n * (n_ops or 1))
    unit = "instructions per primitive" if n_ops else "instructions per gradient"
    line = ", ".join(f"{label} {value:,.0f}" for label, value in per.items())
    if not n_ops:
        low, high = count(name, n, HAND), count(name, 3 * n, HAND)
        hand = (high - low) / (2 * n)
        line += f", hand-written {hand:,.0f} (" + ", ".join(
            f"{label} {value / hand:.3f}× hand" for label, value in per.items()) + ")"
    if len(per) == 2:
        mine, theirs = per.values()
        line += f"; this ÷ {roots[1][0]} = {mine / theirs:.3f}"
    print(f"{name}: {unit}: {line}")


if __name__ == "__main__":
    main()

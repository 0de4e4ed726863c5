"""What ``import tapegrad`` costs a program, side by side with numpy's own import and autograd's.

    python benchmarks/importtime.py              # 15 fresh interpreters per statement, in turn
    python benchmarks/importtime.py --modules    # and tapegrad's slowest modules (-X importtime)

Each statement runs in a fresh interpreter, the statements in turn (A B C A B C ...) so that a
drift of the machine's speed falls on all alike; the report gives the median CPU seconds (user
+ system, the child's own accounting, which a loaded machine inflates less than wall time) and
the wall seconds, and each statement's median ratio to ``import numpy`` taken run by run. The
interpreter writes bytecode caches first (PYTHONDONTWRITEBYTECODE is dropped for the runs): a
user's installed package has them, and compiling the sources would be most of the time.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "python": "pass",
    "numpy": "import numpy",
    "tapegrad": "import tapegrad",
    "autograd": "import autograd",
    "numpy + scipy.special": "import numpy, scipy.special",
    "tapegrad, then scipy.special": "import tapegrad, scipy.special",
}


def _env():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(statement, env):
    """(cpu seconds, wall seconds) of a fresh interpreter running `statement`, or None if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", statement], env=env, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        return None
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), wall


def measure(repeats=15):
    env = _env()
    names = [n for n, s in STATEMENTS.items() if _run(s, env) is not None]  # (also writes the caches)
    samples = {n: [] for n in names}
    for _ in range(repeats):
        for n in names:
            samples[n].append(_run(STATEMENTS[n], env))
    base = samples["numpy"]
    rows = []
    for n in names:
        cpu = statistics.median(s[0] for s in samples[n])
        wall = statistics.median(s[1] for s in samples[n])
        ratio = statistics.median(a[0] / b[0] for a, b in zip(samples[n], base))
        rows.append((n, cpu, wall, ratio))
    return rows


def slowest_modules(count=12):
    """tapegrad's own modules by cumulative import time (-X importtime), slowest first."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tapegrad"], env=_env(),
                         capture_output=True, text=True).stderr
    rows = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip().startswith("tapegrad"):
            rows.append((int(parts[1]), parts[2].strip()))
    return sorted(rows, reverse=True)[:count]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--modules", action="store_true", help="also list tapegrad's slowest modules")
    args = parser.parse_args(argv)
    print(f"| statement | CPU s (median) | wall s (median) | CPU ÷ import numpy |")
    print("|---|---|---|---|")
    for n, cpu, wall, ratio in measure(args.repeats):
        print(f"| `{STATEMENTS[n]}` | {cpu:.3f} | {wall:.3f} | {ratio:.2f} |")
    if args.modules:
        print("\n| tapegrad module | cumulative µs |\n|---|---|")
        for us, name in slowest_modules():
            print(f"| {name} | {us} |")


if __name__ == "__main__":
    main()

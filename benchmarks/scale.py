"""Scale: time and peak memory of one gradient of a long scalar chain, for growing lengths.

    python benchmarks/scale.py            # 10k, 30k and 100k primitives (100k: a 1M-op tape)

Prints a table and writes it to benchmarks/SCALE.md. Memory is the tracemalloc peak during
one `tapegrad.grad` call; "bytes per tape op" staying flat as the chain grows is what linear
growth looks like. No recursion is involved anywhere (the sweep and the passes use loops).
"""
from __future__ import annotations

import datetime
import pathlib
import platform
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import tapegrad  # noqa: E402


def chain(x, n):
    for _ in range(n):
        x = np.sin(x) * 0.999
    return x


def measure(n):
    tracemalloc.start()
    t = time.perf_counter()
    y, back = tapegrad.pullback(chain, 0.3, n)
    back(1.0)
    elapsed = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ops = len(back.tape)
    summary = back.tape.summary().splitlines()[0]
    del back
    return n, ops, elapsed, peak, summary


def main(lengths=(10_000, 30_000, 100_000)):
    rows = [measure(n) for n in lengths]
    lines = [
        "# Scale: one gradient of a scalar chain of growing length",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; Python "
        f"{platform.python_version()}, numpy {np.__version__}, tapegrad {tapegrad.__version__}",
        "- workload: `x = sin(x) * 0.999`, n steps (2n primitives); time and tracemalloc peak of "
        "`pullback` + `back(1.0)` (tracemalloc slows Python down about 2x: compare rows, not "
        "with other tables)",
        "",
        "| primitives | tape ops | time | peak memory | bytes per tape op |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n, ops, elapsed, peak, _ in rows:
        lines.append(f"| {2 * n:,} | {ops:,} | {elapsed:.2f} s | {peak / 2**20:.0f} MiB | {peak / ops:.0f} |")
    lines += ["", f"Largest tape: {rows[-1][4]}", ""]
    text = "\n".join(lines)
    print(text)
    (pathlib.Path(__file__).resolve().parent / "SCALE.md").write_text(text)


if __name__ == "__main__":
    main()

"""Second order: forward over reverse against reverse over reverse, on two workloads.

    python benchmarks/hessian.py              # 5 repeats of each; --repeats N to change

Times `tapegrad.hessian(f, x, mode=...)` and `tapegrad.hvp(f, x, v, mode=...)` with
``mode="fwd"`` (a forward-mode pass over the reverse-mode gradient, per direction) and
``mode="rev"`` (a reverse pass over the recorded gradient, per gradient entry), on

- W3: the MLP loss as a function of its last bias vector (10 entries, so a 10 x 10 Hessian),
- W6: the Gaussian-process negative log likelihood as a function of its two hyperparameters,

checks that both modes agree, and prints the median times (seconds) and the ratio as a
Markdown table. The faster mode is `tapegrad.second_order.HESSIAN_MODE`, the default of both
functions; benchmarks/README.md has the numbers.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import tapegrad  # noqa: E402
from tapegrad.scipy.linalg import solve_triangular  # noqa: E402

from benchmarks.workloads import WORKLOADS, build_w3, build_w6  # noqa: E402


def w3_last_bias():
    """The MLP loss of W3 as a function of its last bias vector, and that vector."""
    params, X, Y = WORKLOADS["W3"].inputs()
    loss = build_w3(np)
    hidden, (W, b) = list(params[:-1]), params[-1]

    def of_bias(b):
        return loss(hidden + [(W, b)], X, Y)

    return of_bias, b


def w6_hyperparameters():
    """The GP negative log likelihood of W6 as a function of (lengthscale, variance)."""
    lengthscale, variance, X, y = WORKLOADS["W6"].inputs()
    nll = build_w6(np, solve_triangular=solve_triangular)

    def of_hyperparameters(t):
        return nll(t[0], t[1], X, y)

    return of_hyperparameters, np.array([lengthscale, variance])


PROBLEMS = {"W3 last bias (10)": w3_last_bias, "W6 hyperparameters (2)": w6_hyperparameters}


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows = ["| problem | what | fwd over rev (s) | rev over rev (s) | fwd / rev |",
            "|---|---|---|---|---|"]
    for name, make in PROBLEMS.items():
        f, x = make()
        v = np.cos(np.arange(x.size, dtype=float))
        for what, call in [("hessian", lambda m: tapegrad.hessian(f, x, mode=m)),
                           ("hvp", lambda m: tapegrad.hvp(f, x, v, mode=m))]:
            tf, of = median_time(lambda: call("fwd"), args.repeats)
            tr, orev = median_time(lambda: call("rev"), args.repeats)
            np.testing.assert_allclose(of, orev, rtol=1e-8, atol=1e-12)
            rows.append(f"| {name} | {what} | {tf:.4f} | {tr:.4f} | {tf / tr:.2f} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()

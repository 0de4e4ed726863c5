"""Forward mode through the functions whose forward rules are written out, against derived ones.

    python benchmarks/forward_rules.py            # 7 rounds; --rounds N to change

A function without a forward rule of its own runs in forward mode through the rule derived
from its reverse rule (`tapegrad.dual.derived_frule`: the gradient of a traced pullback, for
every call). ``np.stack``, ``np.concatenate``, ``np.einsum``, ``np.where``, (real)
``np.linalg.cholesky`` and each ufunc's ``outer`` have rules of their own
(`tapegrad.rules._forward`, `where_frule`, `cholesky_frule`, `ufunc_methods._outer_frule`). Each case is timed with those rules and with them taken
out of the registry, in alternating rounds in one process (the machine's drift falls on both
alike); the medians and their ratio (written ÷ derived: below 1 is faster) are printed as a
Markdown table. benchmarks/README.md has the numbers.
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
from tapegrad.registry import FRULES  # noqa: E402

WRITTEN = (np.stack, np.concatenate, np.einsum, np.where, np.linalg.cholesky, np.subtract.outer,
           np.multiply.outer)


def lotka_volterra(y, a, b, c, d):
    return np.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])


A = np.arange(9.0).reshape(3, 3) / 10
Y0 = np.array([1.0, 0.5])
_T = np.linspace(0.0, 3.0, 40)
_Y = np.sin(_T)
_M = np.random.default_rng(0).standard_normal((30, 30))
SPD = _M @ _M.T + 30 * np.eye(30)
CASES = {
    "jvp of an ODE right-hand side (np.stack)": lambda: tapegrad.jvp(
        lambda y: lotka_volterra(y, 1.0, 0.8, 0.9, 0.6), (Y0,), (np.array([1.0, 0.0]),)),
    "jacobian(mode='fwd') through np.concatenate": lambda: tapegrad.jacobian(
        lambda x: np.sum(np.concatenate([np.sin(x), x[:2] ** 2]) ** 2), np.ones(4), mode="fwd"),
    "jvp of np.einsum('ij,j->i')": lambda: tapegrad.jvp(
        lambda A, x: np.einsum("ij,j->i", A, x), (A, np.ones(3)), (A, np.ones(3))),
    "jvp through np.where": lambda: tapegrad.jvp(
        lambda x: np.where(x > 0, x * x, np.sin(x)), (np.linspace(-1, 1, 5),), (np.ones(5),)),
    "jvp of a squared-exponential kernel (np.subtract.outer)": lambda: tapegrad.jvp(
        lambda x: np.exp(-np.subtract.outer(x, x) ** 2), (_T,), (np.ones(_T.size),)),
    "jvp of np.multiply.outer": lambda: tapegrad.jvp(
        lambda x: np.multiply.outer(x, _T), (_T[:5],), (np.ones(5),)),
    "jvp of np.linalg.cholesky, 30×30": lambda: tapegrad.jvp(
        np.linalg.cholesky, (SPD,), (np.cos(np.arange(900.0)).reshape(30, 30),)),
    "hessian(mode='fwd-rev') of a Gaussian log-likelihood in (log ℓ, log σ²)": lambda: tapegrad.hessian(
        _gp_loglik, np.array([0.1, -0.3]), mode="fwd-rev"),
    "hessian(mode='fwd-fwd') of a stacked ODE right-hand side": lambda: tapegrad.hessian(
        lambda p: np.sum(lotka_volterra(Y0, *p)), np.array([1.0, 0.8, 0.9, 0.6]), mode="fwd-fwd"),
}


def _gp_loglik(p):
    """-log N(y; 0, K + 0.1 I), K the squared-exponential kernel of length e^p0 and scale e^p1."""
    k = np.exp(p[1]) * np.exp(-0.5 * ((_T[:, None] - _T[None, :]) / np.exp(p[0])) ** 2) + 0.1 * np.eye(_T.size)
    l = np.linalg.cholesky(k)
    alpha = np.linalg.solve(l, _Y)
    return 0.5 * alpha @ alpha + np.sum(np.log(np.diag(l)))


def _time(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    written = {fn: FRULES[fn] for fn in WRITTEN}
    print("| case | written out | derived | written ÷ derived |\n|---|---|---|---|")
    for name, fn in CASES.items():
        first = fn()
        times = {"written": [], "derived": []}
        calls = max(1, int(0.05 / _time(fn, 1)))
        for _ in range(a.rounds):
            for side in ("written", "derived"):
                for f in WRITTEN:
                    if side == "written":
                        FRULES[f] = written[f]
                    else:
                        FRULES.pop(f, None)
                if side == "derived":
                    np.testing.assert_allclose(_flat(fn()), _flat(first), rtol=1e-12, atol=1e-14)
                times[side].append(_time(fn, calls))
        FRULES.update(written)
        w, d = statistics.median(times["written"]), statistics.median(times["derived"])
        print(f"| {name} | {w * 1e6:,.0f} µs | {d * 1e6:,.0f} µs | {w / d:.2f} |")


def _flat(result):
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in
                           (result if isinstance(result, tuple) else (result,))])


if __name__ == "__main__":
    main()

"""Gradients through scipy's solvers: the cost of a gradient divided by one plain forward solve.

    python benchmarks/solvers.py [--repeats 7]

Lotka–Volterra (2 states, 4 parameters, 11 observation times) with solve_ivp at rtol 1e-6,
atol 1e-8, every method (RK45, RK23, DOP853, Radau, BDF, LSODA), and the stiff Robertson
problem (3 states, 3 rate constants, 5 observation times to t = 100, rtol 1e-6, atol 1e-8 and
1e-12 for the intermediate) with the stiff methods (Radau, BDF, LSODA): one plain
``scipy.integrate.solve_ivp``; the gradient of a loss
(``tapegrad.gradient``) with each pullback forced in turn, the adjoint and forward
sensitivities (one solve of y and dy/dθ), and as `tapegrad.rules.ivp.strategy` picks it (the
gradients of one problem after the first find their compiled programs by their forward's tape:
the row "programs compiled afresh" empties that store before each gradient, as a first
gradient finds it);
forward mode (``tapegrad.jacobian(..., mode="fwd")``, one tangent solve per parameter);
odeint's likewise; and a root and a minimizer (the implicit function theorem) against their
plain solves. Each is the median of `repeats` ratios of the process's CPU time (less
sensitive than the wall clock to other processes on the machine), the gradient and its plain
solve timed back to back, after a warm-up.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.integrate
import scipy.optimize

import tapegrad
from tapegrad.rules import _odeprograms as odeprograms, ivp as ivp_rules
from tapegrad.scipy import integrate as ti
from tapegrad.scipy._ivp import IvpProblem
from tapegrad.scipy import optimize as to

T_OBS = np.linspace(0.0, 5.0, 11)
THETA = np.array([1.0, 0.8, 0.9, 0.6])
TOL = {"rtol": 1e-6, "atol": 1e-8}


METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
STIFF = ("Radau", "BDF", "LSODA")
K_ROBERTSON = np.array([0.04, 3e7, 1e4])
T_ROBERTSON = np.array([0.1, 1.0, 10.0, 30.0, 100.0])
TOL_ROBERTSON = {"rtol": 1e-6, "atol": np.array([1e-8, 1e-12, 1e-8])}


def lotka_volterra(t, y, a, b, c, d):
    return np.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])


def robertson(t, y, k1, k2, k3):
    return np.stack([-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2], k2 * y[1] ** 2])


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def forced(how, fn):
    """fn with the pullback strategy forced to `how` ("adjoint" or "forward"), or as picked (None)."""
    def run():
        picked = ivp_rules.strategy
        if how is not None:
            ivp_rules.strategy = lambda *args: how
        try:
            return fn()
        finally:
            ivp_rules.strategy = picked
    return run


def median_ratio(fn, base, repeats):
    """The median over `repeats` of fn's time over base's, each pair timed back to back (the load of
    a shared machine drifts less within a pair than across a run)."""
    fn(), base()
    ratios = []
    for _ in range(repeats):
        start = time.process_time()
        base()
        middle = time.process_time()
        fn()
        ratios.append((time.process_time() - middle) / (middle - start))
    return statistics.median(ratios)


def gradient_rows(name, plain, loss, repeats, picked, at=THETA):
    rows = [(f"{name}: gradient, {label}", median_ratio(forced(how, lambda: tapegrad.gradient(loss, at)),
                                                        plain, repeats))
            for how, label in (("adjoint", "adjoint"), ("forward", "forward sensitivities (1 solve)"),
                               (None, f"as picked ({picked})"))]
    rows.append((f"{name}: gradient, as picked, programs compiled afresh",
                 median_ratio(lambda: (odeprograms.PROGRAMS.clear(), tapegrad.gradient(loss, at)), plain, repeats)))
    rows.append((f"{name}: jacobian mode=fwd ({np.size(at)} tangent solves)",
                 median_ratio(lambda: tapegrad.jacobian(loss, at, mode="fwd"), plain, repeats)))
    return rows


def _picked(method, n=2, p=4, tol=TOL):
    problem = IvpProblem(None, (0.0, 5.0), None, method, dict(tol))
    return ivp_rules.strategy(problem, n, p)


def ivp_rows(method, repeats):
    def plain():
        return scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), [1.0, 0.5], method=method, t_eval=T_OBS,
                                         args=tuple(THETA), **TOL)

    def loss(theta):
        y = ti.solve_ivp(lotka_volterra, (0.0, 5.0), np.array([1.0, 0.5]), method=method, t_eval=T_OBS,
                         args=tuple(theta[i] for i in range(4)), **TOL).y
        return np.sum(y ** 2)

    return gradient_rows(f"solve_ivp {method}", plain, loss, repeats, _picked(method))


def stiff_rows(method, repeats):
    def plain():
        return scipy.integrate.solve_ivp(robertson, (0.0, 100.0), [1.0, 0.0, 0.0], method=method, t_eval=T_ROBERTSON,
                                         args=tuple(K_ROBERTSON), **TOL_ROBERTSON)

    def loss(k):
        y = ti.solve_ivp(robertson, (0.0, 100.0), np.array([1.0, 0.0, 0.0]), method=method, t_eval=T_ROBERTSON,
                         args=tuple(k[i] for i in range(3)), **TOL_ROBERTSON).y
        return np.sum(y * np.array([[1.0], [1e4], [1.0]]))

    return gradient_rows(f"Robertson {method}", plain, loss, repeats, _picked(method, 3, 3, TOL_ROBERTSON),
                         at=K_ROBERTSON)


def odeint_rows(repeats):
    t = np.concatenate([[0.0], T_OBS[1:]])

    def plain():
        return scipy.integrate.odeint(lotka_volterra, [1.0, 0.5], t, args=tuple(THETA), tfirst=True, **TOL)

    def loss(theta):
        return np.sum(ti.odeint(lotka_volterra, np.array([1.0, 0.5]), t, args=tuple(theta[i] for i in range(4)),
                                tfirst=True, **TOL) ** 2)

    return gradient_rows("odeint (LSODA)", plain, loss, repeats, _picked("LSODA"))


def implicit_rows(repeats):
    base = median_time(lambda: scipy.optimize.brentq(lambda t: t ** 3 - 2.0, 0.0, 5.0), repeats)
    root = median_time(lambda: tapegrad.gradient(lambda a: to.brentq(lambda t: t ** 3 - a, 0.0, 5.0), 2.0), repeats)
    S = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -0.5])
    plain_min = median_time(lambda: scipy.optimize.minimize(lambda x: 0.5 * x @ S @ x - b @ x, np.zeros(2),
                                                            jac=lambda x: S @ x - b, method="BFGS"), repeats)
    grad_min = median_time(lambda: tapegrad.gradient(
        lambda b: np.sum(to.minimize(lambda x: 0.5 * x @ S @ x - b @ x, np.zeros(2), jac=lambda x: S @ x - b,
                                     method="BFGS").x), b), repeats)
    return [("brentq: gradient of the root", root / base), ("minimize (BFGS): gradient of the minimizer", grad_min / plain_min)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--methods", default=",".join(METHODS), help="solve_ivp's methods to measure, by name")
    parser.add_argument("--only", default="ivp,stiff,odeint,implicit",
                        help="which groups: ivp (Lotka–Volterra), stiff (Robertson), odeint, implicit")
    args = parser.parse_args(argv)
    methods, only = args.methods.split(","), args.only.split(",")
    groups = []
    if "ivp" in only:
        groups += [lambda m=m: ivp_rows(m, args.repeats) for m in methods]
    if "stiff" in only:
        groups += [lambda m=m: stiff_rows(m, args.repeats) for m in methods if m in STIFF]
    if "odeint" in only:
        groups.append(lambda: odeint_rows(args.repeats))
    if "implicit" in only:
        groups.append(lambda: implicit_rows(args.repeats))
    print(f"{'what':<62}  time ÷ one plain solve", flush=True)
    for group in groups:  # printed as measured
        for name, ratio in group():
            print(f"{name:<62}  {ratio:6.1f}×", flush=True)

if __name__ == "__main__":
    main()

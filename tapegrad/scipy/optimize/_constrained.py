"""A constrained minimum differentiated through its KKT conditions (`minimize` with `constraints=`).

scipy's constraints as dicts, ``{"type": "eq" | "ineq", "fun": c, "args": ...}`` with c(x) = 0 or
c(x) ≥ 0 (c may return several), and `bounds`, taken as inequalities x - lo ≥ 0 and hi - x ≥ 0.
At scipy's minimizer x* the active set A is the equalities and the inequalities that hold with
c = 0; the multipliers λ_A solve ∇f = J_Aᵀλ. The pair z = (x*, λ_A) is the root of

    ∇ₓ(f(x) - λ·c_A(x)) = 0,    c_A(x) = 0,

which `solve_traced` differentiates by the implicit function theorem (the KKT matrix in place of
the Hessian). The derivative exists where the active set is clear: an active inequality with
a multiplier that is zero to rounding (it could leave or join A under any perturbation), active
constraints whose gradients are dependent (λ not unique) or a point that is not a KKT point
raise `SolverError`.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...errors import user_location
from ...grad import gradient
from ...forward import jacobian
from .._implicit import Captured, SolverError
from ._roots import as_args
from ._vector import NOT_CONVERGED, solve_traced

__all__ = ["constrained_minimize", "constraint_parts"]


def constraint_parts(constraints):
    """scipy's `constraints` (a dict or a sequence of dicts) as ``((kind, fun, jac, args), ...)``;
    a `LinearConstraint` or `NonlinearConstraint` is refused, naming the dict to write instead."""
    items = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]
    parts = []
    for c in items:
        if not isinstance(c, dict):
            raise TypeError(
                f"minimize at {user_location()}: tapegrad differentiates constraints given as dicts, "
                f"{{'type': 'eq' or 'ineq', 'fun': c, 'args': (...)}}, not a {type(c).__name__}; write "
                f"lb <= c(x) <= ub as {{'type': 'ineq', 'fun': lambda x: c(x) - lb}} and "
                f"{{'type': 'ineq', 'fun': lambda x: ub - c(x)}} (one 'eq' where lb == ub)")
        kind = c.get("type")
        if kind not in ("eq", "ineq"):
            raise ValueError(f"minimize at {user_location()}: a constraint's 'type' is 'eq' or 'ineq', not {kind!r}")
        parts.append((kind, c["fun"], c.get("jac"), as_args(c.get("args", ()))))
    return tuple(parts)


def _values(x, parts, bounds):
    """(every constraint's values at x, one flat vector, bounds' rows last; each entry's kind)."""
    values, kinds = [], []
    for kind, fun, _, args in parts:
        v = np.ravel(fun(x, *args))
        values.append(v)
        kinds += [kind] * int(np.size(v))
    if bounds is not None:
        lo, hi = bounds
        for i in np.flatnonzero(np.isfinite(lo)):
            values.append(np.reshape(x[i] - lo[i], (1,)))
            kinds.append("ineq")
        for i in np.flatnonzero(np.isfinite(hi)):
            values.append(np.reshape(hi[i] - x[i], (1,)))
            kinds.append("ineq")
    return (np.concatenate(values) if values else np.zeros(0)), kinds


class _Kkt:
    """The active set and multipliers of a constrained minimum, found at the plain solution."""

    def __init__(self, name, objective, n, bounds):
        self.name, self.objective, self.n, self.bounds = name, objective, n, bounds
        self.active = None

    def fail(self, what, fix):
        return SolverError(f"{self.name} at {user_location()}: {what}; {fix}")

    def solve(self, x, objs):
        """z = (x*, λ_A) at scipy's minimizer x*: A, then λ_A by least squares, each checked."""
        parts = objs[-1]
        g = np.ravel(gradient(lambda x: self.objective(x, objs), x)[0])
        c, kinds = _values(x, parts, self.bounds)
        J = np.reshape(jacobian(lambda x: _values(x, parts, self.bounds)[0], x), (c.size, self.n)) if c.size else \
            np.zeros((0, self.n))
        scale = 1.0 + np.max(np.abs(x), initial=0.0)
        eq = np.array([k == "eq" for k in kinds], dtype=bool)
        active = eq | (np.abs(c) <= 1e-7 * scale)
        if np.any(~eq & (c < -1e-6 * scale)):
            raise self.fail(f"scipy's minimizer breaks the inequality constraints {np.flatnonzero(~eq & (c < 0)).tolist()}",
                            NOT_CONVERGED)
        JA = J[active]
        lam = np.linalg.lstsq(JA.T, g, rcond=None)[0] if JA.size else np.zeros(0)
        gscale = max(1.0, float(np.max(np.abs(g), initial=0.0)))
        if JA.shape[0] and np.linalg.matrix_rank(JA, tol=1e-10 * max(1.0, np.max(np.abs(JA)))) < JA.shape[0]:
            raise self.fail(f"the gradients of the active constraints {np.flatnonzero(active).tolist()} are dependent, "
                            f"so their multipliers are not unique", "drop a redundant constraint")
        stationarity = np.max(np.abs(g - JA.T @ lam), initial=0.0)
        if stationarity > 1e-5 * gscale:
            raise self.fail(f"scipy's point is not a KKT point (∇f - J_Aᵀλ is {stationarity:.3g} there)",
                            NOT_CONVERGED)
        weak = ~eq[active] & (lam <= 1e-8 * gscale)
        if np.any(weak):
            raise self.fail(
                f"the inequality constraints {np.flatnonzero(active)[weak].tolist()} hold with equality at the minimizer "
                f"with multipliers {lam[weak]!r}, zero to rounding: the set of active constraints could change under "
                f"any perturbation, so the minimizer has no derivative there",
                "move the constraint, or drop it if the unconstrained minimum satisfies it")
        self.active = active
        return np.concatenate([np.ravel(x), lam])

    def residual(self, z, objs):
        """(∇ₓ(f - λ·c_A), c_A) at z = (x, λ_A): zero at the constrained minimum."""
        n, parts = self.n, objs[-1]
        x, lam = z[:n], z[n:]

        def lagrangian(x):
            return self.objective(x, objs) - np.sum(lam * _values(x, parts, self.bounds)[0][self.active])

        return np.concatenate([np.ravel(gradient(lagrangian, x)[0]), _values(x, parts, self.bounds)[0][self.active]])


def constrained_minimize(fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol, callback, options,
                         box):
    """`minimize` with `constraints`: (the traced minimizer or scipy's, scipy's result, the bound
    objects or None), through the KKT conditions (module docstring); `box` is (lo, hi) of the
    bounds, or None."""
    name = f"minimize ({method or 'SLSQP'})"
    if not Captured((fun, jac, hess, hessp, args, constraints)).leaves:  # nothing to differentiate: scipy's as it is
        res = _so.minimize(fun, x0, args=as_args(args), method=method, jac=jac, hess=hess, hessp=hessp, bounds=bounds,
                           constraints=constraints, tol=tol, callback=callback, options=options)
        return res.x, res, None
    parts = constraint_parts(constraints)
    n = int(np.size(x0))

    def objective(x, objs):
        y = objs[0](x, *objs[4])
        return y[0] if jac is True else y  # (with jac=True, fun returns its value and gradient)

    kkt = _Kkt(name, objective, n, box)

    def scipy_constraints(parts):
        out = []
        for kind, fun_, jac_, args_ in parts:
            out.append({"type": kind, "fun": fun_, "args": args_, **({"jac": jac_} if jac_ is not None else {})})
        return out

    def scipy_minimize(start, objs):
        fun_, jac_, hess_, hessp_, args_, parts_ = objs
        return _so.minimize(fun_, start, args=args_, method=method, jac=jac_, hess=hess_, hessp=hessp_,
                            bounds=bounds, constraints=scipy_constraints(parts_), tol=tol, callback=callback,
                            options=options)

    def find(start, objs):
        res = scipy_minimize(start, objs)
        if not res.success:
            raise kkt.fail(f"scipy did not converge ({res.message})", NOT_CONVERGED)
        return kkt.solve(np.asarray(res.x, float), objs), res, True, res.message

    z, res, bound = solve_traced(name, (fun, jac, hess, hessp, as_args(args), parts), x0, find, kkt.residual,
                                 singular="the KKT matrix [[∇ₓ²L, -J_Aᵀ], [J_A, 0]]")
    return z[:n], res, bound


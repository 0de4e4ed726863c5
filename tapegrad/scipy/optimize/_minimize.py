"""Minima: scipy's minimize, minimize_scalar and least_squares, the minimizer differentiated through
its optimality condition ∇ₓf(x*, θ) = 0 (dx*/dθ = -(∇ₓ²f)⁻¹ ∂(∇ₓf)/∂θ: Hessian-vector products
and, for many unknowns, a Krylov solve), the minimum's value f(x*(θ), θ) recomputed on the traced
minimizer, so that its derivative is ∂f/∂θ.

Bounds: a coordinate held at its bound with the gradient pushing outward keeps its bound (its
derivative is zero; ``r_i = x_i - bound_i`` in place of ∂f/∂x_i); one at its bound with a zero
gradient (the active set could change under any perturbation) raises. With `constraints=`
(scipy's dicts), the minimizer and its multipliers are differentiated through the KKT
conditions of the active constraints, bounds among them (`_constrained`).
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...grad import gradient
from ...errors import user_location
from .._implicit import SolverError, plain as plain_of
from ._roots import as_args
from ._constrained import constrained_minimize
from ._vector import solve_traced

__all__ = ["minimize", "minimize_scalar", "least_squares"]


def _gradient(objective, x, objs):
    """∇ₓ of the scalar objective at x (traceable: tapegrad's gradient, nested as needed)."""
    g = gradient(lambda x: objective(x, objs), x)[0]
    return np.zeros(np.shape(x)) if not hasattr(g, "shape") and not isinstance(g, float) else g


def _bounds_of(bounds, n, pairs=True):
    """(lower, upper) arrays of n entries, or None when nothing is bounded: from scipy's Bounds,
    minimize's sequence of (lo, hi) pairs (None for no bound) or, not `pairs`, least_squares' (lb, ub)."""
    if bounds is None:
        return None
    if isinstance(bounds, _so.Bounds):
        lo, hi = bounds.lb, bounds.ub
    elif pairs:
        lo = [-np.inf if b[0] is None else b[0] for b in bounds]
        hi = [np.inf if b[1] is None else b[1] for b in bounds]
    else:
        lo, hi = bounds
    lo, hi = (np.broadcast_to(np.asarray(plain_of(b), float), (n,)) for b in (lo, hi))
    if np.all(np.isneginf(lo)) and np.all(np.isposinf(hi)):
        return None
    return lo, hi


class _ActiveSet:
    """The bounds held at the minimizer, found at the plain solution: ``residual`` is ∇f with
    each held coordinate's entry replaced by x_i - bound_i (so that its derivative is zero)."""

    def __init__(self, bounds, atol=0.0):
        self.bounds, self.atol, self.mask, self.at = bounds, atol, None, None

    def find(self, problem_name, x, g):
        if self.bounds is None:
            return
        lo, hi = self.bounds
        x, g = np.ravel(np.asarray(x, float)), np.ravel(np.asarray(g, float))
        scale = 1.0 + np.abs(x)
        at_lo, at_hi = x - lo <= 1e-10 * scale + self.atol, hi - x <= 1e-10 * scale + self.atol
        gtol = 1e-8 * max(1.0, float(np.max(np.abs(g), initial=0.0)))
        weak = (at_lo & (g <= gtol)) | (at_hi & (g >= -gtol))
        if np.any(weak):
            raise SolverError(
                f"{problem_name} at {user_location()}: the coordinates {np.flatnonzero(weak).tolist()} of the minimizer sit at their bounds "
                f"with a gradient of {g[weak]!r}, which does not push outward: the set of active bounds could change "
                f"under any perturbation, so the minimizer has no derivative there; move the bound, or drop it if "
                f"the unbounded minimum lies inside")
        self.mask = at_lo | at_hi
        self.at = np.where(at_lo, lo, hi)

    def residual(self, x, g):
        if self.mask is None or not self.mask.any():
            return g
        m = self.mask.reshape(np.shape(g))
        return g * (1.0 - m) + (x - self.at.reshape(np.shape(g))) * m


def _stationary(res, g, active):
    """A minimization scipy reports as failed only because its line search could not improve on a
    point where the gradient already vanishes to roundoff (BFGS's "precision loss" at a tight
    gtol): the point is the minimizer, and its derivative is as good as any."""
    if active.bounds is not None:
        return False
    scale = 1.0 + abs(float(np.real(res.fun)))
    return bool(np.max(np.abs(g), initial=0.0) <= 1e-8 * scale) and "precision" in str(res.message)


def _traced_result(res, x, value):
    res.x = x
    res.fun = value
    return res


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None, constraints=(),
             tol=None, callback=None, options=None):
    """`scipy.optimize.minimize` whose minimizer and minimum are differentiable in what `fun` depends on.

    Every method scipy has. Where `fun` captures traced values or `args` hold them, scipy
    minimizes on plain values and ``res.x`` is traced with the derivative of the optimality
    condition ∇ₓf(x*, θ) = 0 (the implicit function theorem, with tapegrad's Hessian; a Krylov
    solve on Hessian-vector products for many unknowns), ``res.fun`` is f at the traced
    minimizer (its derivative is ∂f/∂θ). `jac`, `hess` and `hessp` only guide the search.
    Bounds hold a coordinate at its bound (derivative zero) where the gradient pushes outward.
    `constraints` (scipy's dicts, ``{"type": "eq" | "ineq", "fun": c, "args": ...}``, for
    SLSQP, trust-constr, COBYLA and COBYQA) are differentiated through the KKT conditions of those
    active at the minimizer: x* and the multipliers λ solve ∇f = J_Aᵀλ, c_A(x) = 0, and the
    implicit function theorem takes that system's matrix in place of the Hessian. A
    minimization that did not succeed, a singular Hessian (or KKT matrix), a weakly active
    bound or inequality (multiplier zero to rounding) or dependent active constraints raise
    `SolverError`; a `LinearConstraint` or `NonlinearConstraint` whose solution is
    differentiated is refused (write it as dicts). The other fields are scipy's.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.optimize import minimize
    >>> def argmin(c):  # f(x) = (x - c)² + x⁴/4 ... at c = 0 the minimizer is 0, dx/dc = 2/(2 + 0) = 1
    ...     return minimize(lambda x: np.sum((x - c) ** 2 + x ** 4 / 4), np.ones(1), method="BFGS",
    ...                     options={"gtol": 1e-12}).x[0]
    >>> round(float(tapegrad.gradient(argmin, 0.0)[0]), 6)
    1.0
    """
    args = as_args(args)
    active = _ActiveSet(_bounds_of(bounds, np.size(x0)))

    def objective(x, objs):
        y = objs[0](x, *objs[-1])
        return y[0] if jac is True else y  # (with jac=True, fun returns its value and gradient)

    def find(start, objs):
        fun_, jac_, hess_, hessp_, args_ = objs
        res = _so.minimize(fun_, start, args=args_, method=method, jac=jac_, hess=hess_, hessp=hessp_,
                           bounds=bounds, constraints=constraints, tol=tol, callback=callback, options=options)
        g = _gradient(objective, res.x, objs)
        success = res.success or _stationary(res, g, active)
        if success:
            active.find(f"minimize ({method or 'default'})", res.x, g)
        return res.x, res, success, f"{res.message}; the gradient there is {np.max(np.abs(g)):.3g} at most"

    def residual(x, objs):
        return active.residual(x, _gradient(objective, x, objs))

    if constraints:
        x, res, bound = constrained_minimize(fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol,
                                             callback, options, active.bounds)
        return res if bound is None else _traced_result(res, x, objective(x, bound[:5]))
    x, res, bound = solve_traced(f"minimize ({method or 'default'})", (fun, jac, hess, hessp, args), x0, find,
                                 residual, singular="the Hessian ∇ₓ²f")
    return res if bound is None else _traced_result(res, x, objective(x, bound))


def minimize_scalar(fun, bracket=None, bounds=None, args=(), method=None, tol=None, options=None):
    """`scipy.optimize.minimize_scalar` whose minimizer and minimum are differentiable in what `fun`
    depends on (see `minimize`): the derivative of x* through f'(x*, θ) = 0; with
    ``method="bounded"``, a minimizer at a bound with f' pushing outward stays there."""
    args = as_args(args)
    # "bounded" stops within xatol of a bound that holds the minimum (never on it)
    xatol = (options or {}).get("xatol", 1e-5) if method == "bounded" else 0.0
    active = _ActiveSet(None if bounds is None else (np.array([bounds[0]], float), np.array([bounds[1]], float)),
                        atol=10 * xatol)

    def objective(x, objs):
        return objs[0](x, *objs[1])

    def find(start, objs):
        res = _so.minimize_scalar(objs[0], bracket=start, bounds=bounds, args=objs[1], method=method, tol=tol,
                                  options=options)
        if res.success:
            active.find(f"minimize_scalar ({method or 'brent'})", res.x, _gradient(objective, float(res.x), objs))
        return float(res.x), res, res.success, res.message

    def residual(x, objs):
        return active.residual(x, _gradient(objective, x, objs))

    x, res, bound = solve_traced(f"minimize_scalar ({method or 'brent'})", (fun, args), bracket, find, residual,
                                 singular="f''")
    return res if bound is None else _traced_result(res, x, objective(x, bound))


#: least_squares' losses ρ(z) of z = (f/f_scale)², written in numpy so that they trace
_LOSSES = {
    "linear": lambda z: z,
    "soft_l1": lambda z: 2.0 * (np.sqrt(1.0 + z) - 1.0),
    "huber": lambda z: np.where(z <= 1.0, z, 2.0 * np.sqrt(np.maximum(z, 1.0)) - 1.0),
    "cauchy": lambda z: np.log1p(z),
    "arctan": lambda z: np.arctan(z),
}


def least_squares(fun, x0, jac="2-point", bounds=(-np.inf, np.inf), method="trf", ftol=1e-08, xtol=1e-08,
                  gtol=1e-08, x_scale=None, loss="linear", f_scale=1.0, diff_step=None, tr_solver=None,
                  tr_options=None, jac_sparsity=None, max_nfev=None, verbose=0, args=(), kwargs=None,
                  callback=None, workers=None):
    """`scipy.optimize.least_squares` whose solution is differentiable in what `fun` depends on.

    The minimizer of ``C(x) = ½ Σ f_scale² ρ((fᵢ(x)/f_scale)²)`` is traced with the derivative
    of ∇C(x*, θ) = 0 (see `minimize`); ``res.cost`` and ``res.fun`` are recomputed at the traced
    minimizer. Every loss scipy names (a callable loss is refused when differentiated), bounds as
    in `minimize`. The other fields are scipy's."""
    args, kwargs = as_args(args), dict(kwargs or {})
    rho = _LOSSES.get(loss) if isinstance(loss, str) else None
    active = _ActiveSet(_bounds_of(bounds, np.size(x0), pairs=False))

    def cost(x, objs):
        f = np.ravel(objs[0](x, *objs[2], **objs[3]))
        return 0.5 * f_scale ** 2 * np.sum(rho((f / f_scale) ** 2))

    def find(start, objs):
        fun_, jac_, args_, kwargs_ = objs
        options = dict(ftol=ftol, xtol=xtol, gtol=gtol, loss=loss, f_scale=f_scale, diff_step=diff_step,
                       tr_solver=tr_solver, tr_options=tr_options or {}, jac_sparsity=jac_sparsity,
                       max_nfev=max_nfev, verbose=verbose, callback=callback, workers=workers)
        if x_scale is not None:
            options["x_scale"] = x_scale
        res = _so.least_squares(fun_, start, jac=jac_, bounds=bounds, method=method, args=args_, kwargs=kwargs_,
                                **options)
        if res.success:
            active.find(f"least_squares ({method})", res.x, _gradient(cost, res.x, objs))
        return res.x, res, res.success, res.message

    def residual(x, objs):
        return active.residual(x, _gradient(cost, x, objs))

    refuse = None if rho is not None else (
        f"a loss of your own ({loss!r}) is not differentiated, scipy's named ones are ({', '.join(_LOSSES)}): "
        f"write it into fun (fun returning sqrt(ρ(f²)) elementwise) and use loss='linear'")
    x, res, bound = solve_traced(f"least_squares ({method})", (fun, jac, args, kwargs), x0, find, residual,
                                 singular="the Hessian of the cost", refuse=refuse)
    if bound is None:
        return res
    res.x, res.cost = x, cost(x, bound)
    res.fun = bound[0](x, *bound[2], **bound[3])
    return res


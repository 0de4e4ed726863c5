"""Vector roots and fixed points: scipy's root, fsolve and fixed_point, the solution differentiated
by a linear solve with the Jacobian at the solution (its transpose in reverse mode)."""
from __future__ import annotations

import numpy as np
import scipy.optimize as _so

from ...errors import user_location
from .._implicit import Captured, ImplicitProblem, SolverError, implicit_solution, plain
from ._roots import as_args

__all__ = ["root", "fsolve", "fixed_point"]

NOT_CONVERGED = ("loosen the tolerance, raise the iteration limit or start closer to the solution: a solution "
                  "that was not found has no derivative")


def solve_traced(name, objs, start, find, residual, singular="∂f/∂x", refuse=None):
    """The solution `find` gives, traced when `objs` (the functions and args) hold traced values:
    (x, scipy's result, the objects bound to the traced values or None when nothing is traced).

    `find(start, objs) -> (x, result, converged, message)` runs on plain values; a solution that
    did not converge raises when it would be differentiated (plain values get scipy's result as is),
    and so does a problem whose solution is not differentiated (`refuse`, what to say)."""
    captured = Captured(objs)
    if not captured.leaves:
        x, result, _, _ = find(plain(start), objs)
        return x, result, None
    if refuse is not None:
        raise SolverError(f"{name} at {user_location()}: {refuse}")

    def checked(start, objs):
        try:
            x, result, converged, message = find(start, objs)
        except SolverError:
            raise
        except RuntimeError as exc:  # fixed_point's "Failed to converge after 500 iterations"
            raise problem.fail(f"scipy did not find the solution ({exc})", NOT_CONVERGED) from exc
        if not converged and not _at_rounding_level(residual, x, start, objs):
            raise problem.fail(f"scipy did not converge ({message})", NOT_CONVERGED)
        return x, result

    problem = ImplicitProblem(captured, name, checked, residual, singular=singular)
    leaves = captured.take()
    x = implicit_solution(problem, start, *leaves)
    return x, problem.result, captured.bind(leaves)


def _at_rounding_level(residual, x, start, objs) -> bool:
    """The residual at x is rounding error (100 ulps of its size at the start): a solution
    scipy stopped at without calling it converged ("not making good progress" at an exact root
    of a linear system, where no step can make the residual smaller)."""
    at_x = np.max(np.abs(residual(x, objs)), initial=0.0)
    return bool(at_x <= 100 * np.finfo(float).eps * max(1.0, np.max(np.abs(residual(start, objs)), initial=0.0)))


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None):
    """`scipy.optimize.root` whose solution is differentiable in what `fun` depends on.

    The root x* of ``fun(x, *args) = 0`` is traced where `fun` captures traced values or `args`
    hold them: ``dx*/dθ = -(∂f/∂x)⁻¹ ∂f/∂θ`` at x* (a solve with the Jacobian, taken by tapegrad;
    its transpose in reverse mode), never the derivative of the solver's iterations. Every
    method; `jac` only guides the search. Returns scipy's OptimizeResult, its `x` traced. A
    solve that did not succeed (a residual at rounding level counts as success, whatever scipy's
    message), or a singular Jacobian at the root, raises `SolverError`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.optimize import root
    >>> def solution(a):  # x0 + x1 = a, x0 - x1 = 1
    ...     return root(lambda x: np.stack([x[0] + x[1] - a, x[0] - x[1] - 1.0]), np.zeros(2)).x
    >>> tapegrad.jacobian(solution, 3.0)
    array([0.5, 0.5])
    """
    args = as_args(args)

    def find(start, objs):
        fun_, jac_, args_ = objs
        res = _so.root(fun_, start, args=args_, method=method, jac=jac_, tol=tol, callback=callback, options=options)
        return res.x, res, res.success, res.message

    def residual(x, objs):
        fun_, _, args_ = objs
        y = fun_(x, *args_)
        return y[0] if jac is True else y  # (with jac=True, fun returns its value and Jacobian)

    x, res, bound = solve_traced(f"root ({method})", (fun, jac, args), x0, find, residual)
    if bound is not None:
        res.x = x
    return res


def fsolve(func, x0, args=(), fprime=None, full_output=0, col_deriv=0, xtol=1.49012e-08, maxfev=0, band=None,
           epsfcn=None, factor=100, diag=None):
    """`scipy.optimize.fsolve` whose solution is differentiable in what `func` depends on (see `root`).

    Returns the solution (traced where `func` or `args` hold traced values), or with
    `full_output` scipy's ``(x, infodict, ier, mesg)``. A solve that did not succeed (ier ≠ 1)
    raises `SolverError` when the solution would be differentiated."""
    args = as_args(args)

    def find(start, objs):
        func_, fprime_, args_ = objs
        x, info, ier, mesg = _so.fsolve(func_, start, args=args_, fprime=fprime_, full_output=True,
                                        col_deriv=col_deriv, xtol=xtol, maxfev=maxfev, band=band, epsfcn=epsfcn,
                                        factor=factor, diag=diag)
        return x, (info, ier, mesg), ier == 1, mesg

    def residual(x, objs):
        return objs[0](x, *objs[2])

    x, (info, ier, mesg), _ = solve_traced("fsolve", (func, fprime, args), x0, find, residual)
    return (x, info, ier, mesg) if full_output else x


def fixed_point(func, x0, args=(), xtol=1e-08, maxiter=500, method="del2"):
    """`scipy.optimize.fixed_point` whose fixed point is differentiable in what `func` depends on.

    x* = g(x*, θ): ``dx*/dθ = (I - ∂g/∂x)⁻¹ ∂g/∂θ``, the implicit function theorem on
    r(x) = g(x) - x; a fixed point where ∂g/∂x has an eigenvalue 1 raises `SolverError`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.optimize import fixed_point
    >>> def sqrt(a):  # Babylon's iteration x -> (x + a/x)/2
    ...     return fixed_point(lambda x: 0.5 * (x + a / x), 1.0)
    >>> round(float(tapegrad.gradient(sqrt, 2.0)[0]), 12), round(0.5 / float(np.sqrt(2.0)), 12)
    (0.353553390593, 0.353553390593)
    """
    args = as_args(args)

    def find(start, objs):
        func_, args_ = objs
        return _so.fixed_point(func_, start, args=args_, xtol=xtol, maxiter=maxiter, method=method), None, True, ""

    def residual(x, objs):
        return objs[0](x, *objs[1]) - x

    return solve_traced("fixed_point", (func, args), x0, find, residual, singular="I - ∂g/∂x")[0]

"""Scalar roots: scipy's root_scalar, brentq, brenth, bisect, ridder, toms748 and newton, with the
root differentiated by the implicit function theorem, dx/dθ = -(∂f/∂θ)/(∂f/∂x) at the root."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize as _so

from .._implicit import Captured, ImplicitProblem, implicit_solution, plain

__all__ = ["root_scalar", "brentq", "brenth", "bisect", "ridder", "toms748", "newton"]

_RTOL = 4 * np.finfo(float).eps  # scipy's rtol of the bracketing solvers
NOT_CONVERGED = ("raise maxiter, loosen xtol/rtol, or give a better bracket or first guess: a root that "
                  "was not found has no derivative")


def as_args(args):
    """scipy's `args`, always a tuple (root_scalar takes a single value too)."""
    return args if isinstance(args, tuple) else (args,)


def _value_of(y, returns_derivatives):
    """f's value, from f's result (with fprime=True, f returns the value and its derivatives)."""
    return y[0] if returns_derivatives else y


def _scalar_residual(returns_derivatives):
    def residual(x, objs):
        f, args = objs[0], objs[-1]
        return _value_of(f(x, *args), returns_derivatives)
    return residual


def _run(name, call, f, extra, args, start, returns_derivatives=False, diagonal=False):
    """`call(objs, start) -> (x, info, converged)` on plain values when nothing `f`, `extra` (its
    derivatives) and `args` hold is traced; else the root as `implicit_solution`, with `info`
    (scipy's result object) holding it. Returns (x, info)."""
    captured = Captured((f, *extra, args))
    if not captured.leaves:
        x, info, _ = call((f, *extra, args), plain(start))
        return x, info

    def find(start, objs):
        try:
            x, info, converged = call(objs, start)
        except RuntimeError as exc:  # scipy's "Failed to converge after 100 iterations"
            raise problem.fail(f"scipy did not find the root ({exc})", NOT_CONVERGED) from exc
        if not np.all(converged):
            raise problem.fail(f"scipy did not converge (flag {getattr(info, 'flag', converged)!r})", NOT_CONVERGED)
        return x, info

    problem = ImplicitProblem(captured, name, find, _scalar_residual(returns_derivatives), diagonal=diagonal)
    x = implicit_solution(problem, start, *captured.take())
    info = problem.result
    if diagonal:  # vectorized newton's (root, converged, zero_der), a NamedTuple
        info = info._replace(root=x)
    elif hasattr(info, "root"):
        info.root = x
    return x, info


# --- bracketing methods ---


def _bracketing(solver, f, a, b, args, full_output, disp, **options):
    def call(objs, start):
        f_, args_ = objs
        x, info = solver(f_, *start, args=args_, full_output=True, disp=disp, **options)
        return x, info, info.converged

    x, info = _run(solver.__name__, call, f, (), as_args(args), (a, b))
    return (x, info) if full_output else x


def brentq(f, a, b, args=(), xtol=2e-12, rtol=_RTOL, maxiter=100, full_output=False, disp=True):
    """`scipy.optimize.brentq` whose root is differentiable in what `f` depends on.

    The root x* of ``f(x, *args) = 0`` in [a, b] is traced where `f` captures traced values or
    `args` hold them, with the derivative of the implicit function theorem, ``dx*/dθ =
    -(∂f/∂θ)/(∂f/∂x)`` at x*, never through brentq's iterations: in reverse and forward mode and
    at every order (the rule's derivative is itself differentiable). The bracket has no
    derivative (the root does not depend on it). A bracket that scipy refuses raises scipy's
    ValueError; a root that was not found, or where ∂f/∂x = 0, raises `SolverError`. The other
    arguments and the result are scipy's.

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.optimize import brentq
    >>> round(tapegrad.gradient(lambda a: brentq(lambda t: t**3 - a, 0, 5), 2.0)[0], 12)  # a^(-2/3)/3
    0.209986841649
    >>> round(2.0 ** (-2 / 3) / 3, 12)
    0.209986841649
    """
    return _bracketing(_so.brentq, f, a, b, args, full_output, disp, xtol=xtol, rtol=rtol, maxiter=maxiter)


def brenth(f, a, b, args=(), xtol=2e-12, rtol=_RTOL, maxiter=100, full_output=False, disp=True):
    """`scipy.optimize.brenth` whose root is differentiable in what `f` depends on (see `brentq`)."""
    return _bracketing(_so.brenth, f, a, b, args, full_output, disp, xtol=xtol, rtol=rtol, maxiter=maxiter)


def ridder(f, a, b, args=(), xtol=2e-12, rtol=_RTOL, maxiter=100, full_output=False, disp=True):
    """`scipy.optimize.ridder` whose root is differentiable in what `f` depends on (see `brentq`)."""
    return _bracketing(_so.ridder, f, a, b, args, full_output, disp, xtol=xtol, rtol=rtol, maxiter=maxiter)


def bisect(f, a, b, args=(), xtol=2e-12, rtol=_RTOL, maxiter=100, full_output=False, disp=True):
    """`scipy.optimize.bisect` whose root is differentiable in what `f` depends on (see `brentq`)."""
    return _bracketing(_so.bisect, f, a, b, args, full_output, disp, xtol=xtol, rtol=rtol, maxiter=maxiter)


def toms748(f, a, b, args=(), k=1, xtol=2e-12, rtol=_RTOL, maxiter=100, full_output=False, disp=True):
    """`scipy.optimize.toms748` whose root is differentiable in what `f` depends on (see `brentq`)."""
    return _bracketing(_so.toms748, f, a, b, args, full_output, disp, k=k, xtol=xtol, rtol=rtol, maxiter=maxiter)


# --- newton, secant, halley ---


def newton(func, x0, fprime=None, args=(), tol=1.48e-08, maxiter=50, fprime2=None, x1=None, rtol=0.0,
           full_output=False, disp=True):
    """`scipy.optimize.newton` (Newton, secant or Halley) whose root is differentiable in what
    `func` depends on (see `brentq`); `fprime` and `fprime2` only guide the search, the
    derivative is tapegrad's. An array `x0` solves elementwise, as scipy does (each root
    depending on its own entry of ``func``), and every entry must converge."""
    x0 = plain(x0)

    def call(objs, start):
        f_, fp, fp2, args_ = objs
        with warnings.catch_warnings():
            if np.ndim(start):  # (its warning of entries that failed: the flags are checked, and raise)
                warnings.simplefilter("ignore", RuntimeWarning)
            out = _so.newton(f_, start, fprime=fp, args=args_, tol=tol, maxiter=maxiter, fprime2=fp2, x1=x1,
                             rtol=rtol, full_output=True, disp=disp)
        if np.ndim(start):  # vectorized: (root, converged, zero_der)
            converged = np.asarray(out.converged) & ~np.asarray(out.zero_der)
            return out.root, out, converged
        return out[0], out[1], out[1].converged

    x, info = _run("newton", call, func, (fprime, fprime2), as_args(args), x0, diagonal=np.ndim(x0) > 0)
    return (x, info) if full_output else x


# --- root_scalar: every method ---


def root_scalar(f, args=(), method=None, bracket=None, fprime=None, fprime2=None, x0=None, x1=None,
                xtol=None, rtol=None, maxiter=None, options=None):
    """`scipy.optimize.root_scalar` (every method: brentq, brenth, bisect, ridder, toms748,
    newton, secant, halley) whose root is differentiable in what `f` depends on (see `brentq`).
    Returns scipy's RootResults, its `root` traced. With ``fprime=True`` `f` returns its value
    and derivatives, as scipy takes them.

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.optimize import root_scalar
    >>> def cube_root(a):
    ...     return root_scalar(lambda t, a: t**3 - a, args=(a,), x0=1.0, fprime=lambda t, a: 3 * t**2).root
    >>> round(tapegrad.gradient(cube_root, 8.0)[0], 12)  # 8^(-2/3)/3
    0.083333333333
    """
    returns_derivatives = fprime is True or fprime2 is True
    fp = fprime if callable(fprime) else None
    fp2 = fprime2 if callable(fprime2) else None
    start = (plain(bracket), plain(x0), plain(x1))

    def call(objs, start):
        f_, fp_, fp2_, args_ = objs
        br, x0_, x1_ = start
        info = _so.root_scalar(f_, args=args_, method=method, bracket=br, fprime=fp_ if fp is not None else fprime,
                               fprime2=fp2_ if fp2 is not None else fprime2, x0=x0_, x1=x1_, xtol=xtol, rtol=rtol,
                               maxiter=maxiter, options=options)
        return info.root, info, info.converged

    _, info = _run("root_scalar" + (f" ({method})" if method else ""), call, f, (fp, fp2), as_args(args), start,
                   returns_derivatives)
    return info

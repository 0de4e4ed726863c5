"""The rule of a solution defined implicitly (``tapegrad.scipy._implicit.implicit_solution``):
roots, minima and fixed points of scipy's solvers, by the implicit function theorem.

At x* with r(x*, θ) = 0 (r a root's function, a minimum's gradient, g(x) - x for a fixed point),
``∂r/∂x dx + ∂r/∂θ dθ = 0``. Reverse mode solves ``(∂r/∂x)ᵀ w = -x̄`` and returns
``θ̄ = (∂r/∂θ)ᵀ w``, the gradient of ``w·r(x*, θ)`` in θ; forward mode returns
``dx = -(∂r/∂x)⁻¹ (∂r/∂θ dθ)``, a jvp of r. The Jacobian ∂r/∂x is taken by tapegrad (a diagonal
for an elementwise problem, a dense matrix up to `KRYLOV_SIZE` unknowns); above that, on plain
values, reverse mode solves with GMRES on vector-Jacobian products (scipy.sparse.linalg), so that
the Jacobian (a minimum's Hessian) is never formed.

Both rules are written in traceable numpy, at the traced solution the rule itself records: a
second derivative differentiates the Jacobian, the solve and the vjp, and x*'s own derivative
enters through the same rule, so every order follows.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _spla

from ..forward import jacobian, jvp
from ..grad import gradient, pullback
from ..registry import frule, rrule, whole
from ..scipy._implicit import distinct_leaves, implicit_solution
from ..structures import Boxed
from ..tangents import NO_TANGENT, ZERO
from ..views import concrete

#: above this many unknowns, a reverse solve on plain values is GMRES on vjps, not a dense solve
KRYLOV_SIZE = 200

#: a Jacobian this ill-conditioned (or exactly singular) at the solution has no usable inverse
_COND_LIMIT = 1e13


class _Flat:
    """The residual as a function of the flat unknowns z (x's size) and the leaves."""

    def __init__(self, problem, x):
        self.problem, self.shape, self.scalar = problem, np.shape(x), not isinstance(concrete(x), np.ndarray)

    def __call__(self, z, *leaves):
        x = z[0] if self.scalar else np.reshape(z, self.shape)
        return np.ravel(self.problem.residual_of(x, leaves))


class _Weighted:
    """w·r(z, θ): its gradient in θ is (∂r/∂θ)ᵀ w (w may be traced: a second derivative's)."""

    def __init__(self, flat, z):
        self.flat, self.z = flat, z

    def __call__(self, w, *leaves):
        return np.sum(self.flat(self.z, *leaves) * w)


def _check_jacobian(problem, J, diagonal, z):
    """Raise when ∂r/∂x is singular at the solution: the solution has no derivative there."""
    J = np.asarray(concrete(J), dtype=float)
    if diagonal:
        bad = not np.all(np.isfinite(J)) or np.any(J == 0) or \
            np.min(np.abs(J)) <= np.max(np.abs(J)) / _COND_LIMIT
    else:
        bad = not np.all(np.isfinite(J)) or np.linalg.cond(J) > _COND_LIMIT
    if bad:
        raise problem.fail(
            f"{problem.singular} is singular at the solution x* = {_shown(z)} "
            f"(it is {_shown(J)}), so x* does not depend smoothly on the values the function captures "
            f"and has no derivative there",
            "a root where the function only touches zero, or a minimum whose Hessian is singular, "
            "moves by more than any first-order change: reformulate the problem so that the solution is isolated")


def _shown(v):
    """A short text of a plain array (a number for one of size 1)."""
    v = np.asarray(concrete(v), dtype=float)
    return repr(float(v.ravel()[0])) if v.size == 1 else np.array2string(v, precision=6, threshold=20)


def _jacobian(problem, flat, z, leaves):
    """∂r/∂x at z: its diagonal for an elementwise problem, else the dense matrix."""
    if problem.diagonal:
        J = jvp(lambda z: flat(z, *leaves), (z,), (np.ones(np.shape(concrete(z))),))[1]
    else:
        J = jacobian(lambda z: flat(z, *leaves), z)
    _check_jacobian(problem, J, problem.diagonal, z)
    return J


def _as_tangent(t, like):
    """A flat tangent given the solution's form: a number for a number, an array of its shape."""
    if isinstance(concrete(like), np.ndarray):
        return np.reshape(t, np.shape(like))
    return t[0]


def _krylov(problem, flat, z, leaves, g):
    """w with (∂r/∂x)ᵀ w = -g by GMRES on vector-Jacobian products (all plain values)."""
    _, back = pullback(lambda z: flat(z, *leaves), z)
    n = np.size(z)

    def rmatvec(v):
        d = back(np.asarray(v, dtype=float).ravel())[1]
        return np.zeros(n) if d is ZERO else np.ravel(d)

    op = _spla.LinearOperator((n, n), matvec=rmatvec, dtype=float)
    w, info = _spla.gmres(op, -g, rtol=1e-12, atol=0.0, restart=min(n, 100), maxiter=20 * n)
    if info != 0:
        raise problem.fail(f"the Krylov solve with the transposed Jacobian did not converge (GMRES info={info})",
                           "the Jacobian (a minimum's Hessian) may be singular or very ill-conditioned there")
    return w


@rrule(implicit_solution, formula=whole(lambda names, values, kwargs: [None, None] + [
    "(∂r/∂θ)ᵀ·w with (∂r/∂x)ᵀ·w = -{dy}, at the solution x* of r(x*, θ) = 0 "
    "(the implicit function theorem; θ the values the function captures)"] * (len(values) - 2)))
def implicit_solution_rrule(problem, start, *leaves):
    x = implicit_solution(problem, start, *leaves)

    def implicit_solution_pullback(dx):
        flat = _Flat(problem, x)
        z = np.ravel(x)
        g = np.ravel(dx)
        traced = any(isinstance(v, Boxed) for v in (x, dx, *leaves))
        if problem.diagonal:
            w = -g / _jacobian(problem, flat, z, leaves)
        elif np.size(z) > KRYLOV_SIZE and not traced:
            w = _krylov(problem, flat, z, leaves, g)
        else:
            w = -np.linalg.solve(np.transpose(_jacobian(problem, flat, z, leaves)), g)
        grads = gradient(_Weighted(flat, z), w, *distinct_leaves(leaves))[1:]
        return (NO_TANGENT, NO_TANGENT, ZERO, *grads)

    return x, implicit_solution_pullback


@frule(implicit_solution)
def implicit_solution_frule(dargs, problem, start, *leaves):
    x = implicit_solution(problem, start, *leaves)
    flat = _Flat(problem, x)
    z = np.ravel(x)
    dleaves = tuple((np.zeros(np.shape(v)) if np.ndim(v) else 0.0) if d is ZERO or d is NO_TANGENT else d
                    for v, d in zip(leaves, dargs[2:]))
    t = jvp(lambda *ls: flat(z, *ls), distinct_leaves(leaves), dleaves)[1]
    J = _jacobian(problem, flat, z, leaves)
    dz = -t / J if problem.diagonal else -np.linalg.solve(J, t)
    return x, _as_tangent(dz, x)

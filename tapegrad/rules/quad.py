"""The rules of ``tapegrad.scipy._quad.quad_value`` (what ``tapegrad.scipy.integrate.quad`` and
``quad_vec`` record): differentiation under the integral sign, and Leibniz's rule at the limits.

For y = ∫ₐᵇ f(t, θ) dt: ``∂y/∂θ = ∫ₐᵇ ∂f/∂θ dt``, ``∂y/∂b = f(b)``, ``∂y/∂a = -f(a)`` (zero at an
infinite limit, where an integral that converges has f → 0). Reverse mode integrates the
vector-Jacobian product ``(∂f/∂θ)ᵀ ȳ`` of every parameter at once, flat, with scipy's quad_vec
(quad for a single number); forward mode integrates the Jacobian-vector product ``∂f/∂θ · dθ``
in f's shape. Each derivative integral is a `quad_value` of its own problem, whose integrand is
the tapegrad vjp or jvp of the user's integrand, with ȳ (or dθ) and θ as its captured values:
a second derivative differentiates it by these same rules, never scipy's subdivision.
"""
from __future__ import annotations

import numpy as np

from ..forward import jvp
from ..grad import gradient
from ..program.codegen import compile_tape
from ..program.guards import GuardError
from ..program.passes import optimize
from ..registry import frule, rrule, whole
from ..scipy._implicit import distinct_leaves, flat_tangent, plain, split_flat, zeros_like_leaf
from ..scipy._quad import quad_value
from ..structures import Boxed
from ..tangents import NO_TANGENT, ZERO, Thunk
from ..tracing import trace


def _absent(t) -> bool:
    return t is ZERO or t is NO_TANGENT


class _Compiled:
    """t ↦ fn(t, *leaves) for plain leaves, evaluated at the many points scipy asks for: traced at
    the first and compiled to Python (`tapegrad.program.compile_tape`), so that each later point
    runs the program alone, not a new trace of a tapegrad gradient. A guard of the program
    failing (the integrand took another branch at this t) is answered by fn itself."""

    def __init__(self, fn, leaves):
        self.fn, self.leaves, self.program = fn, tuple(leaves), None

    def __call__(self, t):
        args = (float(t), *self.leaves)
        if self.program is None:
            _, tape = trace(self.fn, *args)
            self.program = compile_tape(optimize(tape))
        try:
            return self.program(None, *args)
        except GuardError:
            return self.fn(*args)


def _bound(fn, leaves, compiled):
    """t ↦ fn(t, *leaves): compiled for plain leaves (and many points), else eager (one point, or a
    higher derivative's traced leaves)."""
    if not compiled or any(isinstance(v, Boxed) for v in leaves):
        return lambda t: fn(t, *leaves)
    return _Compiled(fn, leaves)


class _Vjp:
    """The integrand of θ's cotangent, t ↦ (∂f/∂θ)ᵀ·w, flat over the parameters θ. Its captured
    values are w (the cotangent ȳ) and then θ; `scalar` says it returns the one number of a
    single parameter (integrated by scipy's quad, as the user's quad was)."""

    def __init__(self, base, scalar):
        self.base, self.scalar = base, scalar

    def at(self, leaves, compiled=True):
        return _bound(self.products, leaves, compiled)

    def products(self, t, w, *theta):
        def weighted(w, *theta):
            return np.sum(w * self.base.integrand.at(theta)(t))

        grads = gradient(weighted, *distinct_leaves((w, *theta)))[1:]
        flat = np.concatenate([flat_tangent(g, v) for g, v in zip(grads, theta)])
        return flat[0] if self.scalar else flat


class _Jvp:
    """The integrand of the integral's tangent, t ↦ ∂f/∂θ · dθ, in f's shape. Its captured
    values are θ (`m` of them) and then their tangents dθ."""

    def __init__(self, base, m):
        self.base, self.m = base, m

    def at(self, leaves, compiled=True):
        return _bound(self.product, leaves, compiled)

    def product(self, t, *leaves):
        theta, dtheta = leaves[:self.m], leaves[self.m:]
        value, tangent = jvp(lambda *theta: self.base.integrand.at(theta)(t), distinct_leaves(theta), dtheta)
        return zeros_like_leaf(value) if _absent(tangent) else tangent


def _at_limit(problem, limit, leaves):
    """f at a finite limit (Leibniz's rule), None at an infinite one (no derivative flows there)."""
    if not np.isfinite(plain(limit)):
        return None
    return problem.integrand.at(leaves, compiled=False)(limit)


@rrule(quad_value, formula=whole(lambda names, values, kwargs: [
    None, "-{dy}·f(a)", "{dy}·f(b)"] + ["∫ₐᵇ (∂f/∂θ)ᵀ·{dy} dt (under the integral sign; θ: the args and the values f captures)"] * (
    len(values) - 3)))
def quad_value_rrule(problem, a, b, *leaves):
    y = quad_value(problem, a, b, *leaves)

    def quad_value_pullback(dy):
        def at(limit, sign):
            # Leibniz's share, computed only for a limit the sweep reads (a traced one)
            f = _at_limit(problem, limit, leaves)
            return ZERO if f is None else sign * np.sum(dy * f)

        dleaves = ()
        if leaves:
            scalar = not problem.vector and len(leaves) == 1 and np.size(leaves[0]) == 1
            vjp = problem.derived(_Vjp(problem, scalar), not scalar, "vjp", "the integral of (∂f/∂θ)ᵀ·ȳ")
            dleaves = split_flat(np.reshape(quad_value(vjp, a, b, dy, *leaves), (-1,)), leaves)
        return (NO_TANGENT, NO_TANGENT, Thunk(lambda: at(a, -1.0)), Thunk(lambda: at(b, 1.0)), *dleaves)

    return y, quad_value_pullback


@frule(quad_value)
def quad_value_frule(dargs, problem, a, b, *leaves):
    y = quad_value(problem, a, b, *leaves)
    _, da, db, *dleaves = dargs
    dy = ZERO
    if any(not _absent(d) for d in dleaves):
        dleaves = tuple(zeros_like_leaf(v) if _absent(d) else d for v, d in zip(leaves, dleaves))
        tangent = problem.derived(_Jvp(problem, len(leaves)), problem.vector, "jvp", "the integral of ∂f/∂θ·dθ")
        dy = quad_value(tangent, a, b, *leaves, *dleaves)
    for d, limit, sign in ((da, a, -1.0), (db, b, 1.0)):
        f = None if _absent(d) else _at_limit(problem, limit, leaves)
        if f is not None:
            dy = sign * f * d if dy is ZERO else dy + sign * f * d
    return y, dy

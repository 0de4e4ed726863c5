"""What the solvers of `tapegrad.scipy.optimize` share: the traced values a problem captures,
taken out as arguments, and the one primitive whose value is a solution defined implicitly.

A solver's problem is the user's functions and their `args`: ``brentq(lambda t: t**3 - a, 0,
5)`` captures the traced `a` in a closure. `Captured` flattens the functions and args as
tapegrad flattens an argument (`tapegrad.pytree.flatten`: closures by the values they capture,
bound methods, partials, objects, containers) and keeps every traced or dual leaf apart: the
problem is then a function of those leaves, rebuilt on plain values for scipy to solve (nothing
recorded, as fast as the user's own code), and on traced values where a rule differentiates it.

`implicit_solution(problem, start, *leaves)` is the op the tape records: its value is the
solution x* of ``r(x, θ) = 0`` (θ the leaves), found by scipy on plain values, and its rule
(``tapegrad.rules.implicit``) differentiates x* by the implicit function theorem,
``dx*/dθ = -(∂r/∂x)⁻¹ ∂r/∂θ``, never through the solver's iterations. `start` (a bracket, a
first guess) is an argument so that a replayed or compiled tape starts from its new value; the
solution does not depend on it.
"""
from __future__ import annotations

import numpy as np

from ..solvernoise import checking, note_stopping_point
from ..context import primitive
from ..errors import TapegradError, user_location
from ..pytree import flatten, unflatten
from ..structures import Boxed
from ..tangents import NO_TANGENT, ZERO
from ..views import concrete

__all__ = ["Captured", "ImplicitProblem", "implicit_solution", "plain", "distinct_leaves", "split_flat", "flat_tangent", "zeros_like_leaf", "SolverError"]


class SolverError(TapegradError, RuntimeError):
    """A solver did not converge, or its solution has no derivative there (a singular Jacobian
    at a root, an inactive-set change): raised rather than a silently wrong derivative."""


def plain(x):
    """`x` with every traced or dual value replaced by its plain value, through tuples and lists."""
    if isinstance(x, Boxed):
        return concrete(x)
    if type(x) in (tuple, list):
        return type(x)(plain(v) for v in x)
    return x


class Captured:
    """Functions and their arguments with the traced and dual values they hold taken out.

    ``Captured((f, args))``: `leaves` are the traced values (in closures, bound objects,
    partials, the `args` themselves), `bind(leaves)` the same objects rebuilt around other
    values of those leaves (plain ones for scipy, traced ones for a rule). The spec keeps
    placeholders, never the values, so that a tape holding a problem holds no traced value."""

    def __init__(self, objs):
        spec, leaves = flatten(objs, argument=True)
        self.objs = objs
        self.traced = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Boxed)]
        if not self.traced:
            self.leaves = ()
            return
        # the spec holds the values it was made of: made again of placeholders, it holds the
        # structure alone. One placeholder per distinct value, so that a value two closures
        # capture (the objective's and the gradient's θ) is one leaf, which gets one share
        shared = {}
        placeholders = [shared.setdefault(id(leaf), np.zeros(())) for leaf in leaves]
        value_of = {id(p): leaf for p, leaf in zip(placeholders, leaves)}
        self.spec, unique = flatten(unflatten(spec, placeholders), argument=True)
        values = [value_of[id(p)] for p in unique]
        self.traced = [i for i, v in enumerate(values) if isinstance(v, Boxed)]
        self.leaves = tuple(values[i] for i in self.traced)
        self.fixed = [None if isinstance(v, Boxed) else v for v in values]
        self.objs = None  # the traced values stay out: a compiled program holding this holds no trace

    def take(self):
        """The traced leaves, handed to the primitive that records the solve, and dropped here:
        the problem a tape (and a compiled program) keeps holds no traced value."""
        leaves, self.leaves = self.leaves, ()
        return leaves

    def bind(self, leaves):
        """The objects with `leaves` (one per traced leaf, in order) in the traced values' places."""
        if not self.traced:
            return self.objs
        full = list(self.fixed)
        for i, leaf in zip(self.traced, leaves):
            full[i] = leaf
        return unflatten(self.spec, full)


class ImplicitProblem:
    """A solution x* of ``residual(x, objs) = 0``, found on plain values by ``find(start, objs)``.

    `find` says how scipy finds it, ``(start, objs) -> (x, result)`` with `objs` the captured
    functions and arguments bound to plain values; `residual` what vanishes there, in traceable
    numpy (f itself for a root, ∇f for a minimum, g(x) - x for a fixed point). `diagonal` says
    that the residual is elementwise in x (scipy's vectorized newton), so that its Jacobian is
    a diagonal. `result` keeps scipy's result object of the last solve, which the public
    function hands back with the traced solution in it. `name` and `singular` (the Jacobian as
    errors call it) name things in errors, `where` is the user's line."""

    def __init__(self, captured, name, find, residual, *, diagonal=False, singular="∂f/∂x"):
        self.captured, self.name, self.find, self.residual = captured, name, find, residual
        self.diagonal, self.singular = diagonal, singular
        self.where = user_location()
        self.result = None

    def residual_of(self, x, leaves):
        """The residual at `x` with the traced values `leaves` (what the rule differentiates)."""
        return self.residual(x, self.captured.bind(leaves))

    def solve(self, start, leaves):
        """x* for plain `leaves`, with scipy's result object kept in `result`. Under a running
        `check_grad`, the residual it stopped at is noted (`note_stopping_point`): central
        differences of x* carry it."""
        objs = self.captured.bind([plain(v) for v in leaves])
        x, self.result = self.find(plain(start), objs)
        if checking():
            note_stopping_point(self.name, np.max(np.abs(self.residual(x, objs)), initial=0.0))
        return x

    def fail(self, what, fix):
        """The error of a solve whose solution cannot be differentiated (or was not found)."""
        return SolverError(f"{self.name} at {self.where}: {what}; {fix}")

    def __repr__(self):
        return f"<{self.name} problem at {self.where}>"


def flat_tangent(t, like):
    """A tangent as a flat float vector of `like`'s size (zeros for ZeroTangent / NoTangent)."""
    if t is ZERO or t is NO_TANGENT:
        return np.zeros(np.size(like))
    return np.ravel(t)


def zeros_like_leaf(v):
    """The zero tangent of a leaf as a value: zeros of an array's shape, 0.0 for a number."""
    return np.zeros(np.shape(v)) if np.ndim(v) else 0.0


def split_flat(flat, leaves):
    """A flat vector (a derivative with respect to the leaves, end to end) split into one piece per leaf, each of its leaf's shape (a float for a number)."""
    out, start = [], 0
    for v in leaves:
        n = int(np.size(v))
        piece = flat[start:start + n]
        start += n
        out.append(np.reshape(piece, np.shape(v)) if isinstance(plain(v), np.ndarray) else piece[0])
    return out


def distinct_leaves(leaves) -> tuple:
    """The leaves as distinct objects: one array given twice would be one value to `gradient`
    or `jvp`, which would give each place the sum of both shares."""
    seen, out = set(), []
    for v in leaves:
        if isinstance(v, np.ndarray) and id(v) in seen:
            v = v.view()
        seen.add(id(v))
        out.append(v)
    return tuple(out)


@primitive(traceable=False)
def implicit_solution(problem, start, *leaves):
    """x* with ``problem.residual(x*, leaves) = 0``, found by scipy on plain values (see the module docstring)."""
    return problem.solve(start, leaves)

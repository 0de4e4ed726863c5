"""Rules for the piecewise and selecting elementwise functions: absolute value, extrema of two
arrays, clip, where, copysign, and the real and imaginary parts.

Conventions where the derivative jumps (the same as autograd and JAX):

- ``abs``/``fabs`` at 0: 0 (the tangent is ``sign(x)``);
- ``maximum``, ``minimum``, ``fmax``, ``fmin`` at a tie ``x == y``: each operand gets half;
- ``clip`` is ``minimum(maximum(a, a_min), a_max)``, so at ``a == a_min`` (or ``a_max``) ``a`` and
  the bound each get half;
- ``copysign(x, y)``: ``sign(x)`` times the sign of ``y``, so 0 at ``x == 0``; ``y`` gets zero.

Tangents are built with ``np.where(cond, dz, 0.0)`` rather than multiplied by a float mask, so
that they keep the dtype of ``dz``.

Complex values (the rules declared with ``complex=True``): abs of a complex value (real result)
has its own derivation, in its rule; real, imag and conj are real-linear. maximum, minimum, fmax and
fmin pick one operand in numpy's lexicographic order and route the cotangent to it; clip and
copysign stay out, and fabs has no complex loop.
"""
from __future__ import annotations

import numpy as np

from ..arraylike import ArrayLike
from ..errors import is_complex_value
from ..registry import frule, partials, rrule, stand_in, whole
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._forward import jointly_linear_frule, linear_frule
from ._shapes import real_for, real_to

# --- absolute value ---


# (np.abs is the same ufunc)
@rrule(np.absolute, complex=True,
       formula=partials("sign({a[0]}) (conj({a[0]})/|{a[0]}| for a complex {a[0]}, 0 at 0)"))
def absolute_rrule(x):
    y = np.absolute(x)
    if is_complex_value(x):
        def absolute_pullback(dy):
            # |z| = √(z z̄) is real and not holomorphic: d|z| = Re(z̄ dz) / |z|, so the
            # cotangent (autograd's convention) is dy z̄ / |z|; 0 at 0, as for real x
            return NO_TANGENT, dy * (np.conjugate(x) / np.where(y == 0, 1.0, y))

        return y, absolute_pullback

    def absolute_pullback(dy):
        # d/dx |x| = sign(x), 0 at 0 (real x)
        return NO_TANGENT, dy * np.sign(x)

    return y, absolute_pullback


@rrule(np.fabs, formula=partials("sign({a[0]})"))
def fabs_rrule(x):
    def fabs_pullback(dy):
        return NO_TANGENT, dy * np.sign(x)

    return np.fabs(x), fabs_pullback


# --- extrema of two arrays ---


def _share(dz, wins, ties, operand=None):
    """dz where an operand wins, half of it where it ties, 0 elsewhere; given the `operand`,
    summed to its shape (the real part for a real operand of a complex pick)."""
    share = np.where(wins, dz, np.where(ties, dz * 0.5, 0.0))
    return share if operand is None else real_to(share, operand)


@rrule(np.maximum, complex=True, formula=partials(
    "[{a[0]} > {a[1]}] (½ at a tie)",
    "[{a[1]} > {a[0]}] (½ at a tie)",
))
def maximum_rrule(x, y):
    def maximum_pullback(dz):
        ties = x == y
        return (
            NO_TANGENT,
            Thunk(lambda: _share(dz, x > y, ties, x)),
            Thunk(lambda: _share(dz, y > x, ties, y)),
        )

    return np.maximum(x, y), maximum_pullback


@rrule(np.minimum, complex=True, formula=partials(
    "[{a[0]} < {a[1]}] (½ at a tie)",
    "[{a[1]} < {a[0]}] (½ at a tie)",
))
def minimum_rrule(x, y):
    def minimum_pullback(dz):
        ties = x == y
        return (
            NO_TANGENT,
            Thunk(lambda: _share(dz, x < y, ties, x)),
            Thunk(lambda: _share(dz, y < x, ties, y)),
        )

    return np.minimum(x, y), minimum_pullback


@rrule(np.fmax, complex=True, formula=partials(
    "[{a[0]} > {a[1]}] (½ at a tie)",
    "[{a[1]} > {a[0]}] (½ at a tie)",
))
def fmax_rrule(x, y):
    def fmax_pullback(dz):
        # as maximum, except that fmax ignores a nan: the other operand wins
        ties = x == y
        return (
            NO_TANGENT,
            Thunk(lambda: _share(dz, (x > y) | np.isnan(y), ties, x)),
            Thunk(lambda: _share(dz, (y > x) | (np.isnan(x) & ~np.isnan(y)), ties, y)),
        )

    return np.fmax(x, y), fmax_pullback


@rrule(np.fmin, complex=True, formula=partials(
    "[{a[0]} < {a[1]}] (½ at a tie)",
    "[{a[1]} < {a[0]}] (½ at a tie)",
))
def fmin_rrule(x, y):
    def fmin_pullback(dz):
        ties = x == y
        return (
            NO_TANGENT,
            Thunk(lambda: _share(dz, (x < y) | np.isnan(y), ties, x)),
            Thunk(lambda: _share(dz, (y < x) | (np.isnan(x) & ~np.isnan(y)), ties, y)),
        )

    return np.fmin(x, y), fmin_pullback


# --- clip ---


_NO_VALUE = getattr(np, "_NoValue", None)  # clip's default for a bound not given


def _clip_bound(bounds, i, kwargs, *names):
    """Bound i of clip (0: a_min, 1: a_max) from its positional arguments or keywords; None if absent."""
    v = bounds[i] if len(bounds) > i else next((kwargs[k] for k in names if k in kwargs), None)
    return None if v is _NO_VALUE else v


@rrule(np.clip, formula=whole(
    "{dy} where {a[0]} lies inside the bounds, else 0",
    "{dy} where the bound is the value, else 0",
))
def clip_rrule(a, *bounds, **kwargs):
    # bounds is (a_min, a_max, out) as far as they came by position (a traced bound given by
    # keyword is moved into position, with the defaults before it and out after it)
    lo = _clip_bound(bounds, 0, kwargs, "a_min", "min")
    hi = _clip_bound(bounds, 1, kwargs, "a_max", "max")
    y = np.clip(a, *bounds, **kwargs)

    def clip_pullback(dz):
        # clip(a, lo, hi) = minimum(maximum(a, lo), hi), with the ties of maximum and minimum
        m = a if lo is None else np.maximum(a, lo)
        d_m = dz if hi is None else _share(dz, m < hi, m == hi)
        d_a = d_m if lo is None else _share(d_m, a > lo, a == lo)
        d_lo = NO_TANGENT if lo is None else Thunk(lambda: _share(d_m, lo > a, a == lo, lo))
        d_hi = NO_TANGENT if hi is None else Thunk(lambda: _share(dz, hi < m, m == hi, hi))
        d_bounds = (d_lo, d_hi, *(NO_TANGENT for _ in bounds[2:]))
        return (NO_TANGENT, Thunk(lambda: unbroadcast(d_a, a)), *d_bounds[:len(bounds)])

    return y, clip_pullback


# --- where ---


class BranchCotangent(np.ndarray):
    """The cotangent of one branch of ``np.where``: exactly zero where that branch was not taken.

    ``np.where(x > 0, np.sqrt(x), 0.0)`` computes ``sqrt`` everywhere, and sqrt's pullback
    multiplies the branch's cotangent, 0 where ``x <= 0``, by ``0.5 / sqrt(x)``, inf or nan
    there: 0 · inf is nan, and the untaken branch would spoil the gradient (the "double where"
    problem that JAX documents). The zeros of this array are structural: a product or a
    quotient (and a negation) of it stays exactly zero at the untaken places, whatever the
    other factor holds, and keeps the mark, so the zeros survive a chain of such pullbacks. Any
    other operation (a sum, an add) gives a plain ndarray, which holds true zeros there.

    Only the where rule makes one, so no other gradient pays anything for it.
    """

    untaken = None  # bool array of the same shape: True where the branch was not taken

    def __reduce__(self):
        # pickled with its mark (a compiled gradient holding one as a constant, sent to a worker)
        return branch_cotangent, (self.view(np.ndarray).copy(), np.array(self.untaken))

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is None and method == "__call__":
            boxed = next((v for v in inputs if isinstance(v, ArrayLike)), None)
            if boxed is not None:
                # a traced or dual operand (a gradient of a gradient, a compiled gradient):
                # the call is recorded with this array itself as its constant, so the rule,
                # and every replay, computes with the mark and keeps the zeros
                return boxed._dispatch(ufunc, inputs, kwargs or None)
        plain = [v.view(np.ndarray) if isinstance(v, BranchCotangent) else v for v in inputs]
        if out is not None:
            kwargs["out"] = tuple(v.view(np.ndarray) if isinstance(v, BranchCotangent) else v for v in out)
        if method == "__call__" and out is None and ufunc in _SUMS_KEEP_ZEROS and len(inputs) == 2:
            # a sum of two marked cotangents (two uses of a value, accumulated) is zero where
            # both are: it keeps the mark there, so a second-order sweep keeps its zeros too
            a, b = inputs
            result = ufunc(*plain, **kwargs)
            ua, ub = getattr(a, "untaken", None), getattr(b, "untaken", None)
            if (ua is not None and ub is not None and type(result) is np.ndarray
                    and result.shape == ua.shape == ub.shape):
                return branch_cotangent(result, ua & ub)
            return result
        if method != "__call__" or ufunc not in _KEEPS_ZEROS:
            return getattr(ufunc, method)(*plain, **kwargs)
        # the untaken places may divide by zero (sqrt's derivative at 0): their results are
        # discarded, so numpy's warnings about them would be false alarms
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            result = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(result, np.generic) and self.ndim == 0:
            result = np.asarray(result)  # numpy gives a scalar for 0-d operands: keep the mark
        if type(result) is not np.ndarray:
            return result
        untaken = None
        for i, v in enumerate(inputs):
            if (isinstance(v, BranchCotangent) and v.untaken is not None
                    and (i == 0 or ufunc is np.multiply)):
                untaken = v.untaken if untaken is None else untaken | v.untaken
        if untaken is None or result.shape != untaken.shape:
            return result
        np.copyto(result, 0, where=untaken)
        return branch_cotangent(result, untaken)


#: ufuncs whose result is zero wherever their first argument (either, for multiply) is zero
_KEEPS_ZEROS = {np.multiply, np.divide, np.negative, np.positive}
#: ufuncs whose result is zero wherever both arguments are zero
_SUMS_KEEP_ZEROS = {np.add, np.subtract}


def branch_cotangent(d, untaken):
    """`d`, exactly zero where `untaken`, marked (`BranchCotangent`) so that the pullbacks it
    meets keep those zeros. A value of another kind (a number) comes back as it is.

    Under an enclosing trace (a compiled gradient, a gradient of a gradient) this is one
    recorded op, so a replay marks the cotangent as the first run did.
    """
    if isinstance(d, ArrayLike):
        return d._dispatch(branch_cotangent, (d, untaken), None)
    if type(d) is not np.ndarray:
        return d
    untaken = np.broadcast_to(untaken, d.shape)
    out = d.view(BranchCotangent)
    out.untaken = untaken
    return out


@rrule(branch_cotangent, complex=True, formula=whole("{dy} where not {a[1]}, else exactly 0", None))
def branch_cotangent_rrule(d, untaken):
    def branch_cotangent_pullback(dy):
        # the value is d with its untaken places zeroed (they are zero already)
        return NO_TANGENT, np.where(untaken, 0.0, dy), NO_TANGENT

    return branch_cotangent(d, untaken), branch_cotangent_pullback


@frule(branch_cotangent)
def branch_cotangent_frule(dargs, d, untaken):
    # the variation is marked as the value is: its untaken places are structural zeros too
    dd = dargs[0]
    return branch_cotangent(d, untaken), ZERO if dd is ZERO else branch_cotangent(dd, untaken)


def _branch(condition, dz, x, taken):
    """The share of the branch `x` of ``np.where``, taken where ``condition == taken``:
    ZeroTangent when it was taken nowhere, else `dz` there and structural zeros elsewhere."""
    if type(condition) is np.ndarray and condition.dtype != bool:
        condition = condition.astype(bool)  # a condition of numbers is its truth: x != 0
    concrete = type(condition) is np.ndarray or type(condition) in (bool, np.bool_)
    if concrete and not np.any(condition == taken):
        return ZERO
    dz = real_for(dz, x)  # before the mark, which np.real would not keep
    if taken:
        d, untaken = np.where(condition, dz, 0.0), np.logical_not(condition)
    else:
        d, untaken = np.where(condition, 0.0, dz), condition
    return unbroadcast(branch_cotangent(d, untaken), x)


@rrule(np.where, complex=True, formula=whole(
    None,
    "{dy} where {a[0]}, else 0",
    "{dy} where not {a[0]}, else 0",
))
def where_rrule(condition, *xy):
    if not xy:
        # np.where(condition) is np.nonzero(condition): indices, no derivative
        def where_indices_pullback(dy):
            return NO_TANGENT, NO_TANGENT

        return np.where(condition), where_indices_pullback
    x, y = xy
    z = np.where(condition, x, y)
    x, y = stand_in(x), stand_in(y)  # only their shapes are needed

    def where_pullback(dz):
        # each branch gets dz where it was taken and exact zeros elsewhere, which its own
        # pullbacks keep (BranchCotangent): an inf or nan derivative of the untaken branch
        # (sqrt at 0, 1/x at 0) contributes nothing
        return (
            NO_TANGENT,
            NO_TANGENT,
            Thunk(lambda: _branch(condition, dz, x, True)),
            Thunk(lambda: _branch(condition, dz, y, False)),
        )

    return z, where_pullback


# each branch's variation where it is taken (zeros for a constant branch): np.where of the
# variations, as the pullback splits the cotangent
frule(np.where)(jointly_linear_frule(np.where, (1, 2)))


# --- sign transfer ---


@rrule(np.copysign, formula=partials("sign({a[0]})·sign({a[1]})", "0"))
def copysign_rrule(x, y):
    def copysign_pullback(dz):
        # copysign(x, y) = |x| · (-1 if signbit(y) else 1): d/dx = sign(x) times that sign, 0 at
        # x == 0 as for abs; piecewise constant in y, so y's tangent is zero
        dx = dz * np.sign(x)
        return NO_TANGENT, Thunk(lambda: unbroadcast(np.where(np.signbit(y), -dx, dx), x)), ZERO

    return np.copysign(x, y), copysign_pullback


# --- real and imaginary parts ---


@rrule(np.real, forward=linear_frule(np.real), complex=True, view=True,
       formula=whole("{dy} as the real part"))
def real_rrule(x):
    def real_pullback(dy):
        # the identity on real x; a complex x gets dy as its real part (autograd's convention)
        return NO_TANGENT, dy

    return np.real(x), real_pullback


@rrule(np.imag, forward=linear_frule(np.imag), complex=True, view=True,
       formula=whole("{dy} as the imaginary part"))
def imag_rrule(x):
    def imag_pullback(dy):
        if is_complex_value(x):
            return NO_TANGENT, -1j * dy  # autograd's convention for complex cotangents
        # the imaginary part of a real number is 0 whatever the number
        return NO_TANGENT, ZERO

    return np.imag(x), imag_pullback


# (np.conj is the same ufunc)
@rrule(np.conjugate, forward=linear_frule(np.conjugate), complex=True,
       formula=whole("conj({dy})"))
def conjugate_rrule(x):
    def conjugate_pullback(dy):
        return NO_TANGENT, np.conjugate(dy)

    return np.conjugate(x), conjugate_pullback

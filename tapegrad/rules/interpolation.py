"""Rules for the integration, interpolation and polynomial helpers: trapezoid, interp, polyval.

trapezoid (and trapz, where numpy still has it) sums ``P = d · s`` along the axis, with
``s = (y[1:] + y[:-1]) / 2`` and ``d = diff(x)`` (a 1-d x laid along y's axis, an n-d x
differenced along it) or ``d = dx``: so ȳ puts ``ȳ·d/2`` on both ends of each interval (with a
uniform dx: ``dx·[½, 1, ..., 1, ½]·ȳ``), d̄ = ȳ·s gives x̄ by the transposed difference
(x̄ᵢ = d̄ᵢ₋₁ - d̄ᵢ) and dx̄ = Σ ȳ·s. A dx next to an x is not used: its tangent is zero. (A
traced dx beside a constant y and x does not reach the rule: numpy dispatches on y and x, and
its own body, products and a sum, is traced instead.)

interp: in the interval [xpⱼ, xpⱼ₊₁) that holds x (j = searchsorted(xp, x, "right") - 1, the
interval numpy's own search picks), with h = xpⱼ₊₁ - xpⱼ, t = (x - xpⱼ)/h and slope
m = (fpⱼ₊₁ - fpⱼ)/h, y = fpⱼ + t(fpⱼ₊₁ - fpⱼ), so ∂y/∂x = m, ∂y/∂fpⱼ = 1 - t, ∂y/∂fpⱼ₊₁ = t
(the hat functions), ∂y/∂xpⱼ = m(t - 1) and ∂y/∂xpⱼ₊₁ = -m t. At a knot x = xpⱼ these are the
right-hand derivatives (slope mⱼ; t = 0). Below xp₀ y is `left` (fp₀ without it), above
xp₋₁ `right` (fp₋₁): slope 0 in x, 1 for that value. At x = xp₋₁ numpy gives fp₋₁: slope 0 in
x, 1 for fp₋₁. ``period=`` is refused. numpy dispatches interp on x, xp and fp only: a traced
left or right beside three constants reaches numpy's compiled code, which refuses it
(`ConcreteValueError`); traced with any of the three, it is differentiated.

polyval: y = Σₖ pₖ x^(N-1-k) (p may have trailing axes, broadcast against x), so
p̄ₖ = ȳ·x^(N-1-k) (summed back to pₖ's shape) and x̄ = ȳ·polyval(polyder(p), x), computed by
calling np.polyval again so that every order follows. An argument given as a list (of traced
numbers) gets a list of tangents.

trapezoid and polyval are linear, bilinear or polynomial with real coefficients, so under
autograd's convention their pullbacks hold for complex values as written (a real argument
beside a complex one gets the real part of its cotangent, `like`). interp is declared for real
values only: a complex fp raises `ComplexValueError` in a gradient.

Complex values (the rules declared with ``complex=True``): linear, bilinear or polynomial with
real coefficients: the complex tests in tests/rules/test_interpolation.py pass for each.
"""
from __future__ import annotations

import operator

import numpy as np

from ..registry import FORMULAS, rrule, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk
from ._shapes import bind, like, positional_names, tangent_dtype
from .indexing import scatter_add


def _sum_to(t, shape):
    """`t` summed down to `shape` (`unbroadcast` against an array of that shape), or spread
    over it when `t` is a scalar factor standing for every entry."""
    shape = tuple(shape)
    t = unbroadcast(t, np.broadcast_to(0.0, shape))
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def _along(ndim, axis, piece):
    """The index taking `piece` (a slice) along `axis` of an array of `ndim` dimensions."""
    return (slice(None),) * axis + (piece,) + (slice(None),) * (ndim - axis - 1)


def _pad_along(t, axis, before, after):
    widths = [(0, 0)] * np.ndim(t)
    widths[axis] = (before, after)
    return np.pad(t, widths)


def _difference_transpose(t, axis):
    """The transpose of ``x[1:] - x[:-1]`` along `axis`: x̄ᵢ = t̄ᵢ₋₁ - t̄ᵢ."""
    return _pad_along(t, axis, 1, 0) - _pad_along(t, axis, 0, 1)


def _as_array(v):
    """An argument given as a list (of numbers, or of traced numbers) as an array; an array as it is."""
    if isinstance(v, (list, tuple)):
        return np.stack([_as_array(e) for e in v]) if len(v) else np.asarray(v, dtype=float)
    return v


def _tangent(t, v):
    """`t` as the tangent of argument `v` (`like`); of a list, a list of the entries' tangents."""
    if isinstance(v, (list, tuple)):
        return type(v)(_tangent(t[i], e) for i, e in enumerate(v))
    return like(t, v)


# --- trapezoid ---


def _trapezoid(fn, y, args, kwargs):
    b = bind(fn, (y, *args), kwargs)
    x, dx, axis = b.get("x"), b.get("dx", 1.0), operator.index(b.get("axis", -1))
    out = fn(y, *args, **kwargs)
    positional = positional_names(fn, 1 + len(args))

    def trapezoid_pullback(dz):
        ya, xa = _as_array(y), _as_array(x)
        nd = np.ndim(ya)
        ax = axis % nd
        n = np.shape(ya)[ax]
        # what numpy multiplies and sums along the axis: P = d · s
        s = (ya[_along(nd, ax, slice(1, None))] + ya[_along(nd, ax, slice(None, -1))]) / 2.0
        if xa is None:
            d = dx
        elif np.ndim(xa) == 1:  # laid along y's axis, as numpy lays it
            shape = [1] * nd
            shape[ax] = np.shape(xa)[0] - 1
            d = np.reshape(np.diff(xa), shape)
        else:
            d = np.diff(xa, axis=axis)
        pshape = np.broadcast_shapes(np.shape(d), np.shape(s))
        g = np.broadcast_to(np.expand_dims(dz, axis % len(pshape)), pshape)

        def dy():
            if n == 0:
                return np.zeros(np.shape(ya), tangent_dtype(ya, dz))
            half = _sum_to(g * d, np.shape(s)) / 2.0
            return _tangent(_pad_along(half, ax, 0, 1) + _pad_along(half, ax, 1, 0), y)

        def dd():
            return _sum_to(g * s, np.shape(d))

        def dxs():
            if np.ndim(xa) == 1:
                return _tangent(_difference_transpose(np.reshape(dd(), (-1,)), 0), x)
            return _tangent(_difference_transpose(dd(), axis % np.ndim(xa)), x)

        tangents = {"y": Thunk(dy),
                    "x": NO_TANGENT if x is None else Thunk(dxs),
                    "dx": Thunk(lambda: _tangent(dd(), dx)) if x is None else ZERO}  # unused beside x
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in positional)

    return out, trapezoid_pullback


@rrule(np.trapezoid, complex=True, formula=whole(
    "{dy}·d/2 added at both ends of each interval along the axis (d: diff(x), or dx)",
    "x̄ᵢ = s̄ᵢ₋₁ - s̄ᵢ, s̄ = {dy}·(y[1:] + y[:-1])/2 along the axis (the transposed difference)",
    "Σ {dy}·(y[1:] + y[:-1])/2 along the axis (0 beside an x, which numpy uses instead)",
    None,
))
def trapezoid_rrule(y, *args, **kwargs):
    return _trapezoid(np.trapezoid, y, args, kwargs)


if hasattr(np, "trapz"):  # numpy < 2.4: the deprecated name of the same function

    @rrule(np.trapz, complex=True, formula=FORMULAS[np.trapezoid])
    def trapz_rrule(y, *args, **kwargs):
        return _trapezoid(np.trapz, y, args, kwargs)


# --- interp ---


def _at(v, j):
    """``v[j]`` for a 1-d `v` and an index array `j` of any shape, either of them traced or not
    (take_along_axis, unlike take and ndarray indexing, hands a traced index to the trace)."""
    return np.reshape(np.take_along_axis(v, np.ravel(j), axis=0), np.shape(j))


def _scatter_pair(w0, w1, j0, j1, n, dtype):
    """Zeros of length n with the weights w0 added at j0 and w1 at j1 (repeated indices add)."""
    values = np.concatenate([np.ravel(w0), np.ravel(w1)])
    index = np.concatenate([np.ravel(j0), np.ravel(j1)])
    return scatter_add(values, (n,), (index,), dtype)


@rrule(np.interp, formula=whole(
    "{dy}·(fp[j+1] - fp[j])/(xp[j+1] - xp[j]) for xp[j] ≤ {a[0]} < xp[j+1]; 0 outside [xp[0], xp[-1])",
    "{dy}·m·(t - 1) to xp[j], -{dy}·m·t to xp[j+1] (m the slope, t = ({a[0]} - xp[j])/(xp[j+1] - xp[j]))",
    "{dy}·(1 - t) to fp[j], {dy}·t to fp[j+1] (the hat functions at {a[0]}); outside the range, {dy} to "
    "fp[0] or fp[-1] unless left/right is given",
    "Σ {dy} where {a[0]} < xp[0]",
    "Σ {dy} where {a[0]} > xp[-1]",
    None,
))
def interp_rrule(x, xp, fp, *args, **kwargs):
    """Real values; at a knot, the slope of numpy's interval [xp[j], xp[j+1]) (right-hand); period= is refused."""
    b = bind(np.interp, (x, xp, fp, *args), kwargs)
    left, right = b.get("left"), b.get("right")
    if b.get("period") is not None:
        raise NotImplementedError(
            "tapegrad has no derivative of numpy.interp with period=; reduce the points into one "
            "period yourself (np.mod, np.argsort, and xp/fp extended by one point on each side) "
            "and call np.interp without it")
    out = np.interp(x, xp, fp, *args, **kwargs)
    xa, xpa, fpa = _as_array(x), _as_array(xp), _as_array(fp)
    n = np.shape(xpa)[0]
    # the interval numpy's search picks: xp[j] <= x < xp[j + 1] (no derivative: an index)
    j = np.searchsorted(xpa, xa, side="right") - 1
    last = xpa[n - 1]
    below, above, at_end = j < 0, xa > last, xa == last
    inside = (j >= 0) & (j < n - 1)
    j0 = np.clip(j, 0, max(n - 2, 0))
    j1 = np.minimum(j0 + 1, n - 1)
    positional = positional_names(np.interp, 3 + len(args))

    def interp_pullback(dz):
        x0, x1 = _at(xpa, j0), _at(xpa, j1)
        h = np.where(inside, x1 - x0, 1.0)  # 1 outside: no division by a zero-length interval
        t = (xa - x0) / h
        m = (_at(fpa, j1) - _at(fpa, j0)) / h

        def dfp():
            # the hat functions, and the value numpy gives outside the range or at its end
            edge0 = below if left is None else False
            edge1 = (at_end | above) if right is None else at_end
            w0 = np.where(inside, 1.0 - t, np.where(edge0, 1.0, 0.0))
            w1 = np.where(inside, t, np.where(edge1, 1.0, 0.0))
            return _tangent(_scatter_pair(dz * w0, dz * w1, j0, j1, n, tangent_dtype(fpa, dz)), fp)

        def dxp():
            w0 = np.where(inside, m * (t - 1.0), 0.0)
            w1 = np.where(inside, -(m * t), 0.0)
            return _tangent(_scatter_pair(dz * w0, dz * w1, j0, j1, n, tangent_dtype(xpa, dz)), xp)

        tangents = {
            "x": Thunk(lambda: _tangent(dz * np.where(inside, m, 0.0), x)),
            "xp": Thunk(dxp),
            "fp": Thunk(dfp),
            "left": Thunk(lambda: like(np.sum(np.where(below, dz, 0.0)), left)),
            "right": Thunk(lambda: like(np.sum(np.where(above, dz, 0.0)), right)),
        }
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in positional)

    return out, interp_pullback


# --- polyval ---


@rrule(np.polyval, complex=True, formula=whole(
    "{dy}·{a[1]}^(n-1-k) for coefficient k, summed back to its shape",
    "{dy}·polyval(polyder({a[0]}), {a[1]})",
))
def polyval_rrule(p, x):
    y = np.polyval(p, x)

    def polyval_pullback(dz):
        pa, xa = _as_array(p), _as_array(x)
        n = np.shape(pa)[0]

        def dp():
            # p̄ₖ = ȳ·x^(n-1-k): the powers by products (x⁰ is no power at x = 0)
            if n == 0:
                return np.zeros(np.shape(pa), tangent_dtype(pa, dz))
            terms = [dz]
            for _ in range(n - 1):
                terms.append(terms[-1] * xa)
            rest = np.shape(pa)[1:]
            return _tangent(np.stack([_sum_to(terms[n - 1 - k], rest) for k in range(n)]), p)

        def dx():
            # x̄ = ȳ·p'(x), p' = polyder(p), by np.polyval again (so that every order follows)
            powers = np.arange(n - 1, 0, -1, dtype=tangent_dtype(pa, dz))
            dcoef = pa[:-1] * np.reshape(powers, (-1,) + (1,) * (np.ndim(pa) - 1))
            return _tangent(_sum_to(dz * np.polyval(dcoef, xa), np.shape(xa)), x)

        return NO_TANGENT, Thunk(dp), Thunk(dx)

    return y, polyval_pullback


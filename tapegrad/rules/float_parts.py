"""Rules of numpy's functions on the parts of a float: ldexp, frexp, modf, nextafter; spacing is
non-differentiable; np.i0 is traced through.

- ldexp(x, e) = x · 2ᵉ: linear in x (∂/∂x = 2ᵉ, computed as ldexp(ȳ, e), exact); e is an
  integer (no derivative).
- frexp(x) = (m, e) with x = m · 2ᵉ: the exponent is an integer, piecewise constant, so
  ∂m/∂x = 2⁻ᵉ between the powers of 2.
- modf(x) = (fractional, integral): the integral part is piecewise constant, so the fractional
  part has derivative 1 and the integral part 0 (as floor and x - floor x).
- nextafter(x, y): x moved by one ulp towards y. The ulp is piecewise constant in x (it changes
  only at powers of 2) and only the direction depends on y, so the derivative is 1 in x and 0
  in y: the identity (what central differences give at any step wider than an ulp).
- spacing(x): the ulp at x, piecewise constant (it doubles at each power of 2): non-differentiable.
- i0: numpy's own definition traced through (``np.piecewise`` of |x| between numpy's two
  Chebyshev series, ``exp`` and ``sqrt``), so its derivative (I₁, which numpy does not have)
  and every higher one come from the rules of those calls; at 0 exactly, where |x| has no
  second derivative, I₀'s Taylor series (1 + x²/4 + x⁴/64, exact there with its derivatives).
"""
from __future__ import annotations

import numpy as np
from numpy.lib import _function_base_impl as _fb

from ..registry import declare, nondifferentiable, partials, rrule, whole
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._shapes import real_to

__all__ = ["i0"]


@rrule(np.ldexp, formula=partials("2^{a[1]}", None))
def ldexp_rrule(x, e):
    def ldexp_pullback(dy):
        return NO_TANGENT, Thunk(lambda: real_to(unbroadcast(np.ldexp(dy, e), x), x)), NO_TANGENT

    return np.ldexp(x, e), ldexp_pullback


@rrule(np.frexp, formula=whole("{dy}[0] · 2^-{y}[1]"))
def frexp_rrule(x):
    m, e = np.frexp(x)

    def frexp_pullback(dme):
        dm = dme[0]
        if dm is ZERO:
            return NO_TANGENT, ZERO
        return NO_TANGENT, np.ldexp(dm, -e)

    return (m, e), frexp_pullback


@rrule(np.modf, formula=whole("{dy}[0]"))
def modf_rrule(x):
    def modf_pullback(dfi):
        return NO_TANGENT, dfi[0]

    return np.modf(x), modf_pullback


@rrule(np.nextafter, formula=partials("1", None))
def nextafter_rrule(x, y):
    def nextafter_pullback(dz):
        return NO_TANGENT, Thunk(lambda: unbroadcast(dz, x)), NO_TANGENT

    return np.nextafter(x, y), nextafter_pullback


nondifferentiable(np.spacing)


def _i0_small(t):
    return _fb._i0_1(np.abs(t))


def _i0_large(t):
    return _fb._i0_2(np.abs(t))


def _i0_at_zero(t):
    # I₀'s Taylor series to x⁴: 1 at 0, with I₀'s derivatives there (0, 1/2, 0, 3/8), which
    # numpy's series of |x| would not give at second order (|x|'' is 0 at 0)
    t2 = t * t
    return 1.0 + t2 / 4 + t2 * t2 / 64


def i0(x):
    """``np.i0`` on traced values: numpy's two series of |x| by np.piecewise (and 0 apart)."""
    if np.iscomplexobj(x):
        raise TypeError("i0 not supported for complex values")
    if not np.issubdtype(np.result_type(x), np.floating):
        x = np.astype(x, float)
    if np.ndim(x) == 0:
        x = np.reshape(x, (1,))[0:1]
        return np.reshape(i0(x), ())
    a = np.abs(x)
    return np.piecewise(x, [a <= 8.0, a > 8.0, np.equal(x, 0)], [_i0_small, _i0_large, _i0_at_zero])


declare(np.i0, traced_by=i0)

"""Rules for the smooth elementwise ufuncs: roots, exponentials, logarithms, trigonometry,
hyperbolic functions, angle conversions, and the binary ones of the same kind (logaddexp,
arctan2, hypot).

Constants are Python floats (weak in numpy), so that a float32 input keeps float32 tangents.

Complex values (the rules declared with ``complex=True``): holomorphic: under autograd's
convention (see the README) the pullback of a complex argument is the real rule's formula, with
no conjugate (g·f'(z)), and numpy's principal branches agree with these formulas off the branch
cuts; checked in tests/rules/test_elementwise.py (COMPLEX_TABLE). cbrt, the angle conversions,
logaddexp, arctan2 and hypot stay out (numpy has no complex loop for them).

Pullbacks that keep one value: the rules met most in long scalar chains (exp, log, sin, cos)
return their pullback as a module-level function bound to the one value it needs
(``MethodType(sin_pullback, x)``, called as ``sin_pullback(x, dy)``): a bound method is 64
bytes, where a function made inside the rule is 152 with its closure tuple and a cell apiece
(benchmarks/README.md, "Memory per recorded op"). The rest keep the plain closure.
"""
from __future__ import annotations

import math
from types import MethodType

import numpy as np

from ..errors import is_complex_value
from ..registry import frule, partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._forward import scaled
from ._series import horner
from ._shapes import divide

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_DEG = math.pi / 180.0

# --- roots ---


@rrule(np.sqrt, complex=True, formula=partials("1/(2·{y})"))
def sqrt_rrule(x):
    y = np.sqrt(x)

    def sqrt_pullback(dy):
        # d/dx √x = 1 / (2√x); inf at 0, as in autograd and JAX
        return NO_TANGENT, divide(dy, 2 * y)

    return y, sqrt_pullback


@frule(np.sqrt)
def sqrt_frule(d, x):
    y = np.sqrt(x)
    return y, scaled(d[0], 1 / (2 * y))


@rrule(np.cbrt, formula=partials("1/(3·{y}²)"))
def cbrt_rrule(x):
    y = np.cbrt(x)

    def cbrt_pullback(dy):
        # d/dx ∛x = 1 / (3 ∛x²); inf at 0, as in JAX
        return NO_TANGENT, divide(dy, 3 * (y * y))

    return y, cbrt_pullback


# --- exponentials and logarithms ---


def exp_pullback(y, dy):
    return NO_TANGENT, dy * y


@rrule(np.exp, complex=True, formula=partials("{y}"))
def exp_rrule(x):
    y = np.exp(x)
    return y, MethodType(exp_pullback, y)  # (see "Pullbacks that keep one value")


@frule(np.exp)
def exp_frule(d, x):
    y = np.exp(x)
    return y, scaled(d[0], y)


@rrule(np.exp2, complex=True, formula=partials("ln 2·{y}"))
def exp2_rrule(x):
    y = np.exp2(x)

    def exp2_pullback(dy):
        # d/dx 2^x = 2^x ln 2
        return NO_TANGENT, dy * (y * _LN2)

    return y, exp2_pullback


@rrule(np.expm1, complex=True, formula=partials("({y} + 1)"))
def expm1_rrule(x):
    y = np.expm1(x)

    def expm1_pullback(dy):
        # d/dx (eˣ - 1) = eˣ = expm1(x) + 1
        return NO_TANGENT, dy * (y + 1)

    return y, expm1_pullback


def log_pullback(x, dy):
    return NO_TANGENT, divide(dy, x)


@rrule(np.log, complex=True, formula=partials("1/{a[0]}"))
def log_rrule(x):
    return np.log(x), MethodType(log_pullback, x)


@frule(np.log)
def log_frule(d, x):
    return np.log(x), scaled(d[0], 1 / x)


@rrule(np.log2, complex=True, formula=partials("1/({a[0]}·ln 2)"))
def log2_rrule(x):
    def log2_pullback(dy):
        # d/dx log2 x = 1 / (x ln 2)
        return NO_TANGENT, divide(dy, x * _LN2)

    return np.log2(x), log2_pullback


@rrule(np.log10, complex=True, formula=partials("1/({a[0]}·ln 10)"))
def log10_rrule(x):
    def log10_pullback(dy):
        # d/dx log10 x = 1 / (x ln 10)
        return NO_TANGENT, divide(dy, x * _LN10)

    return np.log10(x), log10_pullback


@rrule(np.log1p, complex=True, formula=partials("1/(1 + {a[0]})"))
def log1p_rrule(x):
    def log1p_pullback(dy):
        return NO_TANGENT, divide(dy, 1 + x)

    return np.log1p(x), log1p_pullback


@rrule(np.logaddexp, formula=partials("exp({a[0]} - {y})", "exp({a[1]} - {y})"))
def logaddexp_rrule(x, y):
    z = np.logaddexp(x, y)

    def logaddexp_pullback(dz):
        # z = log(eˣ + eʸ): dz/dx = eˣ / (eˣ + eʸ) = exp(x - z), which cannot overflow
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * np.exp(x - z), x)),
            Thunk(lambda: unbroadcast(dz * np.exp(y - z), y)),
        )

    return z, logaddexp_pullback


@rrule(np.logaddexp2, formula=partials("2^({a[0]} - {y})", "2^({a[1]} - {y})"))
def logaddexp2_rrule(x, y):
    z = np.logaddexp2(x, y)

    def logaddexp2_pullback(dz):
        # z = log2(2ˣ + 2ʸ): dz/dx = 2ˣ / (2ˣ + 2ʸ) = 2^(x - z)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * np.exp2(x - z), x)),
            Thunk(lambda: unbroadcast(dz * np.exp2(y - z), y)),
        )

    return z, logaddexp2_pullback


# --- trigonometric ---


def sin_pullback(x, dy):
    return NO_TANGENT, dy * np.cos(x)


@rrule(np.sin, complex=True, formula=partials("cos({a[0]})"))
def sin_rrule(x):
    return np.sin(x), MethodType(sin_pullback, x)


@frule(np.sin)
def sin_frule(d, x):
    return np.sin(x), scaled(d[0], np.cos(x))


def cos_pullback(x, dy):
    return NO_TANGENT, -dy * np.sin(x)


@rrule(np.cos, complex=True, formula=partials("(-sin({a[0]}))"))
def cos_rrule(x):
    return np.cos(x), MethodType(cos_pullback, x)


@frule(np.cos)
def cos_frule(d, x):
    return np.cos(x), scaled(d[0], -np.sin(x))


@rrule(np.tan, complex=True, formula=partials("(1 + {y}²)"))
def tan_rrule(x):
    y = np.tan(x)

    def tan_pullback(dy):
        # d/dx tan = 1 + tan²
        return NO_TANGENT, dy * (1 + y * y)

    return y, tan_pullback


@rrule(np.arcsin, complex=True, formula=partials("1/√(1 - {a[0]}²)"))
def arcsin_rrule(x):
    def arcsin_pullback(dy):
        # d/dx arcsin = 1 / √(1 - x²); inf at ±1
        return NO_TANGENT, dy / np.sqrt(1 - x * x)

    return np.arcsin(x), arcsin_pullback


@rrule(np.arccos, complex=True, formula=partials("(-1/√(1 - {a[0]}²))"))
def arccos_rrule(x):
    def arccos_pullback(dy):
        # d/dx arccos = -1 / √(1 - x²); -inf at ±1
        return NO_TANGENT, -dy / np.sqrt(1 - x * x)

    return np.arccos(x), arccos_pullback


@rrule(np.arctan, complex=True, formula=partials("1/(1 + {a[0]}²)"))
def arctan_rrule(x):
    def arctan_pullback(dy):
        # d/dx arctan = 1 / (1 + x²)
        return NO_TANGENT, dy / (1 + x * x)

    return np.arctan(x), arctan_pullback


@rrule(np.arctan2, formula=partials("{a[1]}/({a[0]}² + {a[1]}²)", "(-{a[0]}/({a[0]}² + {a[1]}²))"))
def arctan2_rrule(y, x):
    def arctan2_pullback(dz):
        # atan2(y, x): d/dy = x / (x² + y²), d/dx = -y / (x² + y²). At the origin the angle
        # has no limit: nan there, as in JAX and autograd (without numpy's 0/0 warning), as
        # nan·dz, linear in dz like the rest (forward mode, derived from this pullback as its
        # derivative in dz, took a constant nan for 0)
        r2 = x * x + y * y
        origin = r2 == 0
        safe = np.where(origin, 1.0, r2)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(np.where(origin, np.nan * dz, dz * x / safe), y)),
            Thunk(lambda: unbroadcast(np.where(origin, np.nan * dz, -dz * y / safe), x)),
        )

    return np.arctan2(y, x), arctan2_pullback


@rrule(np.hypot, formula=partials("{a[0]}/{y}", "{a[1]}/{y}"))
def hypot_rrule(x, y):
    z = np.hypot(x, y)

    def hypot_pullback(dz):
        # hypot = √(x² + y²): d/dx = x / hypot. At the origin 0, the choice of abs at 0 and
        # what JAX's hypot gives; autograd gives nan.
        safe = np.where(z == 0, 1.0, z)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * x / safe, x)),
            Thunk(lambda: unbroadcast(dz * y / safe, y)),
        )

    return z, hypot_pullback


#: below this |x| sinc's slope is its Taylor series: (cos(πx) - sinc x)/x loses its digits to
#: cancellation there (at 1e-8 the Hessian came out -5.4, at 0 0.0, where it is -π²/3)
SINC_SERIES_BELOW = 1e-2


#: d/dx sinc x = x Σ cⱼ x²ʲ = -(π²/3)x + (π⁴/30)x³ - (π⁶/840)x⁵ + (π⁸/45360)x⁷ - ...: to
#: rounding for |x| < `SINC_SERIES_BELOW` (the next term is 1e-19 of the first at the edge), so
#: that every derivative of sinc is right there up to the ninth
_SINC_SLOPE_SERIES = (-np.pi ** 2 / 3, np.pi ** 4 / 30, -np.pi ** 6 / 840, np.pi ** 8 / 45360)


def _sinc_slope_series(x):
    return x * horner(_SINC_SLOPE_SERIES, x * x)


@rrule(np.sinc, complex=True, formula=partials("(cos(π{a[0]}) - {y})/{a[0]}"))
def sinc_rrule(x):
    y = np.sinc(x)
    if is_complex_value(x):
        def sinc_pullback(dy):
            # the same slope, holomorphic (no conjugate), written without np.where, which takes
            # no complex values (a traced pullback at second order): the series near 0, where
            # the quotient's denominator is moved off 0 and its value not used
            small = np.abs(x) < SINC_SERIES_BELOW
            safe = x + small
            quotient = (np.cos(np.pi * safe) - np.sinc(safe)) / safe
            return NO_TANGENT, dy * (_sinc_slope_series(x * small) * small + quotient * (1 - small))

        return y, sinc_pullback

    def sinc_pullback(dy):
        # sinc x = sin(πx) / (πx): d/dx = (cos(πx) - sinc x) / x, its series near 0 (where the
        # quotient cancels to nothing: `SINC_SERIES_BELOW`), so that the slope is 0 at 0 (as in
        # JAX) and the second derivative there -π²/3
        small = np.abs(x) < SINC_SERIES_BELOW
        safe = np.where(small, 1.0, x)
        quotient = (np.cos(np.pi * safe) - np.sinc(safe)) / safe
        return NO_TANGENT, dy * np.where(small, _sinc_slope_series(np.where(small, x, 0.0)), quotient)

    return y, sinc_pullback


# --- hyperbolic ---


@rrule(np.sinh, complex=True, formula=partials("cosh({a[0]})"))
def sinh_rrule(x):
    def sinh_pullback(dy):
        return NO_TANGENT, dy * np.cosh(x)

    return np.sinh(x), sinh_pullback


@rrule(np.cosh, complex=True, formula=partials("sinh({a[0]})"))
def cosh_rrule(x):
    def cosh_pullback(dy):
        return NO_TANGENT, dy * np.sinh(x)

    return np.cosh(x), cosh_pullback


@rrule(np.tanh, complex=True, formula=partials("(1 - {y}²)"))
def tanh_rrule(x):
    y = np.tanh(x)

    def tanh_pullback(dy):
        # d/dx tanh = 1 - tanh²
        return NO_TANGENT, dy * (1 - y * y)

    return y, tanh_pullback


@frule(np.tanh)
def tanh_frule(d, x):
    y = np.tanh(x)
    return y, scaled(d[0], 1 - y * y)


@rrule(np.arcsinh, complex=True, formula=partials("1/√({a[0]}² + 1)"))
def arcsinh_rrule(x):
    def arcsinh_pullback(dy):
        # d/dx arcsinh = 1 / √(x² + 1)
        return NO_TANGENT, dy / np.sqrt(x * x + 1)

    return np.arcsinh(x), arcsinh_pullback


@rrule(np.arccosh, complex=True, formula=partials("1/√({a[0]}² - 1)"))
def arccosh_rrule(x):
    def arccosh_pullback(dy):
        # d/dx arccosh = 1 / √(x² - 1); inf at 1. For complex x, 1 / (√(x - 1) √(x + 1)): the
        # two agree for real x > 1, and only the product has numpy's branch cut (x < 1)
        if is_complex_value(x):
            return NO_TANGENT, dy / (np.sqrt(x - 1) * np.sqrt(x + 1))
        return NO_TANGENT, dy / np.sqrt(x * x - 1)

    return np.arccosh(x), arccosh_pullback


@rrule(np.arctanh, complex=True, formula=partials("1/(1 - {a[0]}²)"))
def arctanh_rrule(x):
    def arctanh_pullback(dy):
        # d/dx arctanh = 1 / (1 - x²); inf at ±1
        return NO_TANGENT, divide(dy, 1 - x * x)

    return np.arctanh(x), arctanh_pullback


# --- angle conversions ---


@rrule(np.radians, formula=partials("π/180"))
@rrule(np.deg2rad, formula=partials("π/180"))
def deg2rad_rrule(x):
    def deg2rad_pullback(dy):
        return NO_TANGENT, dy * _DEG

    return np.deg2rad(x), deg2rad_pullback


@rrule(np.degrees, formula=partials("180/π"))
@rrule(np.rad2deg, formula=partials("180/π"))
def rad2deg_rrule(x):
    def rad2deg_pullback(dy):
        return NO_TANGENT, dy * (1 / _DEG)

    return np.rad2deg(x), rad2deg_pullback

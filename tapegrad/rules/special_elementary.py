"""Rules for the elementary functions of scipy.special: its copies and near-copies of numpy's
exponentials and logarithms (log1p, expm1, exp2, exp10, cbrt, cosm1, powm1, exprel), the
trigonometry in degrees (sindg, cosdg, tandg, cotdg, radian), and the Box-Cox transforms
(boxcox, boxcox1p, inv_boxcox, inv_boxcox1p). scipy.special.round is piecewise constant.

Where the closed form of a slope is a difference that cancels near a point (exprel's near 0,
the Box-Cox transforms' in λ near λ·log x = 0), its Taylor series takes over below a
threshold, so the slope keeps its digits; both branches are numpy code, traced again at second
order. Real values only (a complex value reaching these rules raises ComplexValueError).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ..registry import nondifferentiable, partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._series import horner
from ._shapes import divide

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_DEG = math.pi / 180.0

# --- exponentials and logarithms ---


@rrule(sp.log1p, formula=partials("1/(1 + {a[0]})"))
def log1p_rrule(x):
    def log1p_pullback(dy):
        # d/dx log(1 + x) = 1 / (1 + x); inf at -1
        return NO_TANGENT, divide(dy, 1 + x)

    return sp.log1p(x), log1p_pullback


@rrule(sp.expm1, formula=partials("({y} + 1)"))
def expm1_rrule(x):
    y = sp.expm1(x)

    def expm1_pullback(dy):
        # d/dx (eˣ - 1) = eˣ = expm1(x) + 1
        return NO_TANGENT, dy * (y + 1)

    return y, expm1_pullback


@rrule(sp.exp2, formula=partials("ln 2·{y}"))
def exp2_rrule(x):
    y = sp.exp2(x)

    def exp2_pullback(dy):
        # d/dx 2ˣ = 2ˣ ln 2
        return NO_TANGENT, dy * (y * _LN2)

    return y, exp2_pullback


@rrule(sp.exp10, formula=partials("ln 10·{y}"))
def exp10_rrule(x):
    y = sp.exp10(x)

    def exp10_pullback(dy):
        # d/dx 10ˣ = 10ˣ ln 10
        return NO_TANGENT, dy * (y * _LN10)

    return y, exp10_pullback


@rrule(sp.cbrt, formula=partials("1/(3·{y}²)"))
def cbrt_rrule(x):
    y = sp.cbrt(x)

    def cbrt_pullback(dy):
        # d/dx ∛x = 1 / (3 ∛x²); inf at 0
        return NO_TANGENT, divide(dy, 3 * (y * y))

    return y, cbrt_pullback


@rrule(sp.cosm1, formula=partials("(-sin({a[0]}))"))
def cosm1_rrule(x):
    def cosm1_pullback(dy):
        # d/dx (cos x - 1) = -sin x
        return NO_TANGENT, dy * -np.sin(x)

    return sp.cosm1(x), cosm1_pullback


@rrule(sp.powm1, formula=partials("{a[1]}·{a[0]}^({a[1]} - 1)", "({y} + 1)·log({a[0]})"))
def powm1_rrule(x, y):
    z = sp.powm1(x, y)

    def powm1_pullback(dz):
        # xʸ - 1: d/dx = y xʸ⁻¹; d/dy = xʸ log x = (powm1(x, y) + 1) log x
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dz * (y * np.power(x, y - 1)), x)),
                Thunk(lambda: unbroadcast(dz * ((z + 1) * np.log(x)), y)))

    return z, powm1_pullback


#: below this |u| the Taylor series of exprel's slope is used (its closed form cancels near 0)
_EXPREL_NEAR = 0.5
#: k/(k+1)! for k = 1 .. 14: exprel'(u) = Σₖ k uᵏ⁻¹/(k+1)!, whose first omitted term is below 1e-15 of it at |u| = 1/2
_EXPREL_SLOPE_SERIES = tuple(k / math.factorial(k + 1) for k in range(1, 15))


def exprel_slope(u):
    """d/du exprel(u) = (eᵘ - exprel(u))/u, and near 0 (|u| < 1/2) its Taylor series, whose value at 0 is 1/2."""
    near = np.abs(u) < _EXPREL_NEAR
    far = np.where(near, 1.0, u)  # (the closed form is computed away from 0 where the series is read)
    return np.where(near, horner(_EXPREL_SLOPE_SERIES, np.where(near, u, 0.0)), (np.exp(far) - sp.exprel(far)) / far)


@rrule(sp.exprel, formula=partials("(exp({a[0]}) - {y})/{a[0]}"))
def exprel_rrule(x):
    """(eˣ - exprel(x))/x, by its Taylor series for |x| < 1/2 (1/2 at 0)."""

    def exprel_pullback(dy):
        return NO_TANGENT, dy * exprel_slope(x)

    return sp.exprel(x), exprel_pullback


# --- trigonometry in degrees ---


@rrule(sp.sindg, formula=partials("π/180·cosdg({a[0]})"))
def sindg_rrule(x):
    def sindg_pullback(dy):
        # d/dx sin(πx/180) = π/180 cos(πx/180)
        return NO_TANGENT, dy * (_DEG * sp.cosdg(x))

    return sp.sindg(x), sindg_pullback


@rrule(sp.cosdg, formula=partials("(-π/180·sindg({a[0]}))"))
def cosdg_rrule(x):
    def cosdg_pullback(dy):
        # d/dx cos(πx/180) = -π/180 sin(πx/180)
        return NO_TANGENT, dy * (-_DEG * sp.sindg(x))

    return sp.cosdg(x), cosdg_pullback


@rrule(sp.tandg, formula=partials("π/180·(1 + {y}²)"))
def tandg_rrule(x):
    y = sp.tandg(x)

    def tandg_pullback(dy):
        # d/dx tan(πx/180) = π/180 (1 + tan²)
        return NO_TANGENT, dy * (_DEG * (1 + y * y))

    return y, tandg_pullback


@rrule(sp.cotdg, formula=partials("(-π/180·(1 + {y}²))"))
def cotdg_rrule(x):
    y = sp.cotdg(x)

    def cotdg_pullback(dy):
        # d/dx cot(πx/180) = -π/180 (1 + cot²)
        return NO_TANGENT, dy * (-_DEG * (1 + y * y))

    return y, cotdg_pullback


@rrule(sp.radian, formula=partials("π/180", "π/180/60", "π/180/3600"))
def radian_rrule(d, m, s):
    def radian_pullback(dy):
        # (d + m/60 + s/3600) π/180 is linear in each
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * _DEG, d)), Thunk(lambda: unbroadcast(dy * (_DEG / 60), m)),
                Thunk(lambda: unbroadcast(dy * (_DEG / 3600), s)))

    return sp.radian(d, m, s), radian_pullback


nondifferentiable(sp.round)  # piecewise constant

# --- Box-Cox transforms ---
# boxcox(x, λ) = (x^λ - 1)/λ = L·exprel(λL) with L = log x (log x at λ = 0, and for every λ
# without the cancellation of x^λ - 1), so ∂/∂λ = L²·exprel'(λL).


@rrule(sp.boxcox, formula=partials("{a[0]}^({a[1]} - 1)", "log({a[0]})²·exprel′({a[1]}·log({a[0]}))"))
def boxcox_rrule(x, lmbda):
    """∂x: x^(λ-1); ∂λ: log(x)²·exprel′(λ·log x), where exprel′(u) = (eᵘ - exprel(u))/u (1/2 at 0)."""

    def boxcox_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * np.power(x, lmbda - 1), x)),
                Thunk(lambda: unbroadcast(dy * _log_squared_slope(np.log(x), lmbda), lmbda)))

    return sp.boxcox(x, lmbda), boxcox_pullback


def _log_squared_slope(log_x, lmbda):
    return log_x * log_x * exprel_slope(lmbda * log_x)


@rrule(sp.boxcox1p, formula=partials("(1 + {a[0]})^({a[1]} - 1)",
                                     "log1p({a[0]})²·exprel′({a[1]}·log1p({a[0]}))"))
def boxcox1p_rrule(x, lmbda):
    """boxcox(1 + x, λ): ∂x: (1 + x)^(λ-1); ∂λ: log1p(x)²·exprel′(λ·log1p x)."""

    def boxcox1p_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * np.power(1 + x, lmbda - 1), x)),
                Thunk(lambda: unbroadcast(dy * _log_squared_slope(np.log1p(x), lmbda), lmbda)))

    return sp.boxcox1p(x, lmbda), boxcox1p_pullback


#: below this |λy| the Taylor series of `_log1p_quotient_slope` is used
_INV_NEAR = 0.05
#: (-1)ᵏ⁺¹ (k+1)/(k+2), k = 0 .. 12: its first omitted term is below 1e-16 at |t| = 0.05
_INV_SERIES = tuple((-1) ** (k + 1) * (k + 1) / (k + 2) for k in range(13))


def _log1p_quotient_slope(t):
    """(t/(1+t) - log1p(t))/t², and near 0 its Taylor series Σₖ (-1)ᵏ⁺¹ (k+1)/(k+2) tᵏ (-1/2 at 0):
    with t = λy, y² times it is ∂/∂λ of log1p(λy)/λ."""
    near = np.abs(t) < _INV_NEAR
    far = np.where(near, 1.0, t)
    return np.where(near, horner(_INV_SERIES, np.where(near, t, 0.0)), (far / (1 + far) - np.log1p(far)) / (far * far))


@rrule(sp.inv_boxcox, formula=partials("{y}/(1 + {a[1]}·{a[0]})",
                                       "{y}·({a[1]}·{a[0]}/(1 + {a[1]}·{a[0]}) - log1p({a[1]}·{a[0]}))/{a[1]}²"))
def inv_boxcox_rrule(y, lmbda):
    """x = (1 + λy)^(1/λ) = exp(log1p(λy)/λ): ∂y: x/(1 + λy); ∂λ: x·(λy/(1+λy) - log1p(λy))/λ²
    (-x·y²/2 at λ = 0, by its Taylor series in λy near 0)."""
    x = sp.inv_boxcox(y, lmbda)

    def inv_boxcox_pullback(dx):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dx * (x / (1 + lmbda * y)), y)),
                Thunk(lambda: unbroadcast(dx * (x * (y * y) * _log1p_quotient_slope(lmbda * y)), lmbda)))

    return x, inv_boxcox_pullback


@rrule(sp.inv_boxcox1p, formula=partials("({y} + 1)/(1 + {a[1]}·{a[0]})",
                                         "({y} + 1)·({a[1]}·{a[0]}/(1 + {a[1]}·{a[0]}) - log1p({a[1]}·{a[0]}))/{a[1]}²"))
def inv_boxcox1p_rrule(y, lmbda):
    """inv_boxcox(y, λ) - 1: the slopes of inv_boxcox."""
    x = sp.inv_boxcox1p(y, lmbda)

    def inv_boxcox1p_pullback(dx):
        x1 = x + 1
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dx * (x1 / (1 + lmbda * y)), y)),
                Thunk(lambda: unbroadcast(dx * (x1 * (y * y) * _log1p_quotient_slope(lmbda * y)), lmbda)))

    return x, inv_boxcox1p_pullback

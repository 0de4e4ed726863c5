"""Rules for the ufuncs of scipy.special: gamma and beta functions, error functions (erfcx
too), the logistic functions (log_expit too), the normal distribution, Bessel functions,
x log y and entropies.

The ufuncs of scipy.special reach a Tracer like numpy's. scipy's `polygamma` is a plain
Python function that converts its arguments with ``np.asarray``: its rule is registered on
the replacement `tapegrad.scipy.special.polygamma`, which digamma's pullback calls too, so
that both are traced again at second order.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule

from ..broadcasting import unbroadcast
from ..scipy.special import polygamma
from ..tangents import NO_TANGENT, Thunk
from ._series import horner
from ._shapes import divide

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)


# --- gamma and beta functions ---


@rrule(sp.gammaln, formula=partials("ψ({a[0]})"))
def gammaln_rrule(x):
    def gammaln_pullback(dy):
        # d/dx log|Γ(x)| = ψ(x)
        return NO_TANGENT, dy * sp.digamma(x)

    return sp.gammaln(x), gammaln_pullback


@rrule(sp.gamma, formula=partials("{y}·ψ({a[0]})"))
def gamma_rrule(x):
    y = sp.gamma(x)

    def gamma_pullback(dy):
        # d/dx Γ(x) = Γ(x) ψ(x)
        return NO_TANGENT, dy * (y * sp.digamma(x))

    return y, gamma_pullback


# (sp.psi is the same ufunc)
@rrule(sp.digamma, formula=partials("ψ′({a[0]})"))
def digamma_rrule(x):
    def digamma_pullback(dy):
        # d/dx ψ(x) = ψ⁽¹⁾(x); scipy computes it in float64
        return NO_TANGENT, dy * polygamma(1, x)

    return sp.digamma(x), digamma_pullback


@rrule(polygamma, formula=partials(None, "polygamma({a[0]} + 1, {a[1]})"))
def polygamma_rrule(n, x):
    def polygamma_pullback(dy):
        # d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x); the order n is an integer
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * polygamma(n + 1, x), x))

    return polygamma(n, x), polygamma_pullback  # traced again at second order


@rrule(sp.beta, formula=partials(
    "{y}·(ψ({a[0]}) - ψ({a[0]} + {a[1]}))",
    "{y}·(ψ({a[1]}) - ψ({a[0]} + {a[1]}))",
))
def beta_rrule(a, b):
    y = sp.beta(a, b)

    def beta_pullback(dy):
        # d/da B(a, b) = B(a, b) (ψ(a) - ψ(a + b))
        dpsi = dy * y
        psi_ab = sp.digamma(a + b)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dpsi * (sp.digamma(a) - psi_ab), a)),
            Thunk(lambda: unbroadcast(dpsi * (sp.digamma(b) - psi_ab), b)),
        )

    return y, beta_pullback


@rrule(sp.betaln, formula=partials("(ψ({a[0]}) - ψ({a[0]} + {a[1]}))", "(ψ({a[1]}) - ψ({a[0]} + {a[1]}))"))
def betaln_rrule(a, b):
    def betaln_pullback(dy):
        # d/da log|B(a, b)| = ψ(a) - ψ(a + b)
        psi_ab = sp.digamma(a + b)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dy * (sp.digamma(a) - psi_ab), a)),
            Thunk(lambda: unbroadcast(dy * (sp.digamma(b) - psi_ab), b)),
        )

    return sp.betaln(a, b), betaln_pullback


# --- error functions ---


@rrule(sp.erf, formula=partials("2/√π·exp(-{a[0]}²)"))
def erf_rrule(x):
    def erf_pullback(dy):
        # d/dx erf = 2/√π exp(-x²)
        return NO_TANGENT, dy * (_TWO_OVER_SQRT_PI * np.exp(-(x * x)))

    return sp.erf(x), erf_pullback


@rrule(sp.erfc, formula=partials("(-2/√π·exp(-{a[0]}²))"))
def erfc_rrule(x):
    def erfc_pullback(dy):
        # d/dx erfc = -2/√π exp(-x²)
        return NO_TANGENT, dy * (-_TWO_OVER_SQRT_PI * np.exp(-(x * x)))

    return sp.erfc(x), erfc_pullback


@rrule(sp.erfinv, formula=partials("√π/2·exp({y}²)"))
def erfinv_rrule(x):
    y = sp.erfinv(x)

    def erfinv_pullback(dy):
        # inverse function: 1 / erf'(y) = √π/2 exp(y²); inf at ±1
        return NO_TANGENT, dy * (_SQRT_PI_OVER_TWO * np.exp(y * y))

    return y, erfinv_pullback


@rrule(sp.erfcinv, formula=partials("(-√π/2·exp({y}²))"))
def erfcinv_rrule(x):
    y = sp.erfcinv(x)

    def erfcinv_pullback(dy):
        # inverse function: 1 / erfc'(y) = -√π/2 exp(y²); -inf at 0 and 2
        return NO_TANGENT, dy * (-_SQRT_PI_OVER_TWO * np.exp(y * y))

    return y, erfcinv_pullback


#: from here on erfcx's slope 2x erfcx(x) - 2/√π loses its digits to cancellation (x erfcx(x)
#: tends to 1/√π): its asymptotic series takes over, whose first omitted term is below 1e-14 of
#: the slope there
_ERFCX_FAR = 50.0


@rrule(sp.erfcx, formula=partials("(2·{a[0]}·{y} - 2/√π)"))
def erfcx_rrule(x):
    """2x·erfcx(x) - 2/√π; for x ≥ 50 its asymptotic series, which keeps the digits the difference loses."""
    y = sp.erfcx(x)

    def erfcx_pullback(dy):
        # d/dx exp(x²) erfc(x) = 2x erfcx(x) - 2/√π. For large x, x√π erfcx(x) = 1 - 1/(2x²) +
        # 3/(4x⁴) - 15/(8x⁶) + 105/(16x⁸) - 945/(32x¹⁰) + ..., so the slope is 2/√π times that series less 1.
        # (far is read at x ≥ 50 only: elsewhere it is computed at 50, so that neither it nor
        # its derivative is inf or nan where np.where drops it)
        far = x >= _ERFCX_FAR
        u = 1 / np.square(np.where(far, x, _ERFCX_FAR))
        series = u * (-0.5 + u * (0.75 + u * (-1.875 + u * (6.5625 - u * 29.53125))))
        return NO_TANGENT, dy * np.where(far, _TWO_OVER_SQRT_PI * series, 2 * x * y - _TWO_OVER_SQRT_PI)

    return y, erfcx_pullback


# --- logistic functions ---


@rrule(sp.expit, formula=partials("{y}·(1 - {y})"))
def expit_rrule(x):
    y = sp.expit(x)

    def expit_pullback(dy):
        # d/dx σ = σ (1 - σ)
        return NO_TANGENT, dy * (y * (1 - y))

    return y, expit_pullback


@rrule(sp.logit, formula=partials("1/({a[0]}·(1 - {a[0]}))"))
def logit_rrule(x):
    def logit_pullback(dy):
        # d/dx log(x / (1 - x)) = 1 / (x (1 - x)); inf at 0 and 1
        return NO_TANGENT, divide(dy, x * (1 - x))

    return sp.logit(x), logit_pullback


@rrule(sp.log_expit, formula=partials("expit(-{a[0]})"))
def log_expit_rrule(x):
    def log_expit_pullback(dy):
        # d/dx log σ(x) = 1 - σ(x) = σ(-x), without the cancellation of 1 - σ for large x
        return NO_TANGENT, dy * sp.expit(-x)

    return sp.log_expit(x), log_expit_pullback


# --- the normal distribution ---


@rrule(sp.ndtr, formula=partials("exp(-{a[0]}²/2)/√(2π)"))
def ndtr_rrule(x):
    def ndtr_pullback(dy):
        # d/dx Φ = φ(x) = exp(-x²/2) / √(2π)
        return NO_TANGENT, dy * (np.exp(-0.5 * (x * x)) / _SQRT_TWO_PI)

    return sp.ndtr(x), ndtr_pullback


@rrule(sp.log_ndtr, formula=partials("exp(-{a[0]}²/2 - {y})/√(2π)"))
def log_ndtr_rrule(x):
    y = sp.log_ndtr(x)

    def log_ndtr_pullback(dy):
        # d/dx log Φ = φ(x) / Φ(x) = exp(-x²/2 - log Φ(x)) / √(2π), finite far in the left tail
        return NO_TANGENT, dy * (np.exp(-0.5 * (x * x) - y) / _SQRT_TWO_PI)

    return y, log_ndtr_pullback


@rrule(sp.ndtri, formula=partials("√(2π)·exp({y}²/2)"))
def ndtri_rrule(x):
    y = sp.ndtri(x)

    def ndtri_pullback(dy):
        # inverse of Φ: 1 / φ(y) = √(2π) exp(y²/2); inf at 0 and 1
        return NO_TANGENT, dy * (_SQRT_TWO_PI * np.exp(0.5 * (y * y)))

    return y, ndtri_pullback


# --- modified Bessel functions ---


@rrule(sp.i0, formula=partials("i1({a[0]})"))
def i0_rrule(x):
    def i0_pullback(dy):
        # d/dx I₀ = I₁
        return NO_TANGENT, dy * sp.i1(x)

    return sp.i0(x), i0_pullback


#: below this |x| the slopes of I₁ and i1e use I₁'s Taylor series: I₀ - I₁/x, differentiated
#: again, cancels terms of size 1/x (at 1e-9 its second derivative came out 1.8e-7 for 3.8e-10,
#: its third -256 for 3/8, and at 0 the slope's constant 1/2 gave them 0)
BESSEL_SERIES_BELOW = 1e-2


#: I₁'(x) = Σ cⱼ x²ʲ = 1/2 + 3x²/16 + 5x⁴/384 + 7x⁶/18432 + ...: to rounding below
#: `BESSEL_SERIES_BELOW` (every derivative of I₁ right there up to the eighth)
_I1_SLOPE_SERIES = (0.5, 3 / 16, 5 / 384, 7 / 18432)


def _i1_slope_series(x):
    return horner(_I1_SLOPE_SERIES, x * x)


@rrule(sp.i1, formula=partials("(i0({a[0]}) - {y}/{a[0]})"))
def i1_rrule(x):
    y = sp.i1(x)

    def i1_pullback(dy):
        # d/dx I₁ = I₀ - I₁/x; its series near 0 (1/2 there, its limit)
        small = np.abs(x) < BESSEL_SERIES_BELOW
        return NO_TANGENT, dy * np.where(small, _i1_slope_series(np.where(small, x, 0.0)),
                                         sp.i0(x) - y / np.where(small, 1.0, x))

    return y, i1_pullback


@rrule(sp.i0e, formula=partials("(i1e({a[0]}) - sign({a[0]})·{y})"))
def i0e_rrule(x):
    y = sp.i0e(x)

    def i0e_pullback(dy):
        # i0e = exp(-|x|) I₀: d/dx = i1e(x) - sign(x) i0e(x); 0 at the kink x == 0, as in JAX
        return NO_TANGENT, dy * (sp.i1e(x) - np.sign(x) * y)

    return y, i0e_pullback


@rrule(sp.i1e, formula=partials("(i0e({a[0]}) - {y}·(sign({a[0]}) + 1/{a[0]}))"))
def i1e_rrule(x):
    y = sp.i1e(x)

    def i1e_pullback(dy):
        # i1e = exp(-|x|) I₁: d/dx = i0e(x) - i1e(x) (sign(x) + 1/x); near 0 exp(-|x|) (I₁'(x) -
        # sign(x) I₁(x)) with I₁' by its series (1/2 at x == 0, its limit)
        small = np.abs(x) < BESSEL_SERIES_BELOW
        slope = sp.i0e(x) - y * (np.sign(x) + 1 / np.where(small, 1.0, x))
        near = np.exp(-np.abs(x)) * (_i1_slope_series(np.where(small, x, 0.0)) - np.sign(x) * sp.i1(x))
        return NO_TANGENT, dy * np.where(small, near, slope)

    return y, i1e_pullback


# --- x log y and entropies ---


@rrule(sp.xlogy, formula=partials("log({a[1]})", "{a[0]}/{a[1]}"))
def xlogy_rrule(x, y):
    def xlogy_pullback(dz):
        # x log y (0 where x == 0): d/dx = log y (-inf at y == 0); d/dy = x / y, 0 where x == 0
        # (where the function is 0 for every y), and 0/1 where y == 0 too: still x / y, linear in
        # x, so that d/dx d/dy = 1/y at x == 0 (a constant 0 there made it 0)
        safe = np.where((x == 0) & (y == 0), 1.0, y)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * np.log(y), x)),
            Thunk(lambda: unbroadcast(dz * (x / safe), y)),
        )

    return sp.xlogy(x, y), xlogy_pullback


@rrule(sp.xlog1py, formula=partials("log1p({a[1]})", "{a[0]}/(1 + {a[1]})"))
def xlog1py_rrule(x, y):
    def xlog1py_pullback(dz):
        # x log(1 + y) (0 where x == 0): d/dx = log1p(y); d/dy = x / (1 + y), 0 where x == 0,
        # linear in x there too (as xlogy's)
        safe = np.where((x == 0) & (y == -1), 1.0, 1 + y)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * np.log1p(y), x)),
            Thunk(lambda: unbroadcast(dz * (x / safe), y)),
        )

    return sp.xlog1py(x, y), xlog1py_pullback


@rrule(sp.entr, formula=partials("(-log({a[0]}) - 1)"))
def entr_rrule(x):
    def entr_pullback(dy):
        # entr = -x log x: d/dx = -(log x + 1); +inf at 0, as in JAX
        return NO_TANGENT, dy * -(np.log(x) + 1)

    return sp.entr(x), entr_pullback


@rrule(sp.rel_entr, formula=partials("(log({a[0]}/{a[1]}) + 1)", "(-{a[0]}/{a[1]})"))
def rel_entr_rrule(x, y):
    def rel_entr_pullback(dz):
        # x log(x / y): d/dx = log(x / y) + 1 (-inf at x == 0); d/dy = -x / y (0 at x == 0)
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * (np.log(x / y) + 1), x)),
            Thunk(lambda: unbroadcast(dz * (-x / y), y)),
        )

    return sp.rel_entr(x, y), rel_entr_pullback

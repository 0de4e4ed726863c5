"""Rules for the elliptic integrals of scipy.special, in its parameter m = k²: the complete
ellipk, ellipkm1 (K(1 - p)) and ellipe, the incomplete ellipkinc F(φ|m) and ellipeinc E(φ|m),
and the arithmetic-geometric mean agm.

The slopes in m are the classical ones (DLMF 19.4.1, 19.4.2): K′(m) = (E - (1-m)K)/(2m(1-m)),
E′(m) = (E - K)/(2m), ∂F/∂m = E(φ|m)/(2m(1-m)) - F/(2m) - sin 2φ/(4(1-m)Δ) and
∂E(φ|m)/∂m = (E(φ|m) - F)/(2m), with Δ = √(1 - m sin²φ); in φ, 1/Δ and Δ. Their differences
cancel near m = 0: for the complete integrals the Taylor series of K′ and E′ in m take over for
|m| < 0.1; for the incomplete ones the closed forms are kept (and their limits at m = 0
exactly), whose relative error grows to about 1e-16/|m| near m = 0. agm(a, b) = πa/(2K(1 - b²/a²))
is differentiated through K′ (where a ≈ b, m is near 0 and the series holds).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._series import horner

# --- complete integrals ---

#: below this |m| the Taylor series of K′ and E′ are used
_NEAR = 0.1


def _squared_central(n):
    """((2n-1)!!/(2n)!!)², the coefficient of mⁿ in 2K(m)/π."""
    return (math.comb(2 * n, n) / 4 ** n) ** 2


#: K′(m) = π/2 Σₙ n cₙ² mⁿ⁻¹ and E′(m) = π/2 Σₙ n cₙ² mⁿ⁻¹/(1 - 2n), n = 1 .. 18: the first
#: omitted term is below 1e-17 of the sum at |m| = 0.1
_K_SLOPE_SERIES = tuple(math.pi / 2 * n * _squared_central(n) for n in range(1, 19))
_E_SLOPE_SERIES = tuple(math.pi / 2 * n * _squared_central(n) / (1 - 2 * n) for n in range(1, 19))


def ellipk_slope(m, k=None, e=None, one_minus_m=None):
    """K′(m) = (E - (1-m)K)/(2m(1-m)), by its Taylor series for |m| < 0.1. `k` and `e` are K(m)
    and E(m) where known; `one_minus_m` is 1 - m computed without rounding (ellipkm1's p)."""
    near = np.abs(m) < _NEAR
    one_minus_m = 1 - m if one_minus_m is None else one_minus_m
    far = np.where(near, 0.5, m)
    far_1 = np.where(near, 0.5, one_minus_m)
    k = sp.ellipk(far) if k is None else np.where(near, 1.0, k)
    e = sp.ellipe(far) if e is None else np.where(near, 1.0, e)
    closed = (e - far_1 * k) / (2 * far * far_1)
    return np.where(near, horner(_K_SLOPE_SERIES, np.where(near, m, 0.0)), closed)


def ellipe_slope(m, e=None):
    """E′(m) = (E - K)/(2m), by its Taylor series for |m| < 0.1 (-π/8 at 0)."""
    near = np.abs(m) < _NEAR
    far = np.where(near, 0.5, m)
    e = sp.ellipe(far) if e is None else np.where(near, 1.0, e)
    return np.where(near, horner(_E_SLOPE_SERIES, np.where(near, m, 0.0)), (e - sp.ellipk(far)) / (2 * far))


@rrule(sp.ellipk, formula=partials("(ellipe({a[0]}) - (1 - {a[0]})·{y})/(2·{a[0]}·(1 - {a[0]}))"))
def ellipk_rrule(m):
    """K′(m) = (E - (1-m)K)/(2m(1-m)); its Taylor series for |m| < 0.1 (π/8 at 0)."""
    y = sp.ellipk(m)

    def ellipk_pullback(dy):
        return NO_TANGENT, dy * ellipk_slope(m, y)

    return y, ellipk_pullback


@rrule(sp.ellipkm1, formula=partials("(-(ellipe(1 - {a[0]}) - {a[0]}·{y})/(2·{a[0]}·(1 - {a[0]})))"))
def ellipkm1_rrule(p):
    """K(1 - p): d/dp = -K′(1 - p) = -(E(1-p) - pK)/(2p(1-p))."""
    y = sp.ellipkm1(p)

    def ellipkm1_pullback(dy):
        return NO_TANGENT, dy * -ellipk_slope(1 - p, y, None, p)

    return y, ellipkm1_pullback


@rrule(sp.ellipe, formula=partials("({y} - ellipk({a[0]}))/(2·{a[0]})"))
def ellipe_rrule(m):
    """E′(m) = (E - K)/(2m); its Taylor series for |m| < 0.1 (-π/8 at 0)."""
    y = sp.ellipe(m)

    def ellipe_pullback(dy):
        return NO_TANGENT, dy * ellipe_slope(m, y)

    return y, ellipe_pullback


# --- incomplete integrals ---


#: below this |m| the incomplete integrals' m-slopes are their series in m: the closed forms
#: divide by m and cancel (the second derivative in m came out 64 at 1e-9 for 0.036, 0 at 0)
INCOMPLETE_SERIES_BELOW = 1e-2


def _incomplete_m_slopes(phi, m, terms=10):
    """``(∂F/∂m, ∂E/∂m)`` of F(φ|m) = Σ c_k m^k S_2k and E(φ|m) = -Σ c_k/(2k-1) m^k S_2k (c_k =
    (2k)!/(4^k k!²), S_2k = ∫₀^φ sin^2k t dt by its recursion), differentiable in φ and m: to
    rounding for |m| < `INCOMPLETE_SERIES_BELOW` ((2φ - sin 2φ)/8 and its negative at m = 0)."""
    s = np.sin(phi)
    s2 = s * s
    integral = phi  # S_0
    power = s * np.cos(phi)  # sin^(2k-1) φ cos φ, for k = 1
    coefficient, m_power = 1.0, 1.0
    d_f = d_e = 0.0
    for k in range(1, terms + 1):
        integral = ((2 * k - 1) * integral - power) / (2 * k)
        power = power * s2
        coefficient *= (2 * k - 1) / (2 * k)
        term = k * coefficient * m_power * integral
        d_f = d_f + term
        d_e = d_e - term / (2 * k - 1)
        m_power = m_power * m
    return d_f, d_e


def _m_slope(phi, m, which, closed):
    """∂F/∂m (`which` 0) or ∂E/∂m (1): ``closed(m)`` away from m = 0 (given 1/2 near it, where
    it is not read), `_incomplete_m_slopes` near it (given 0 away from it)."""
    near = np.abs(m) < INCOMPLETE_SERIES_BELOW
    return np.where(near, _incomplete_m_slopes(phi, np.where(near, m, 0.0))[which], closed(np.where(near, 0.5, m)))


@rrule(sp.ellipkinc, formula=partials(
    "1/√(1 - {a[1]}·sin²{a[0]})",
    "(ellipeinc({a[0]}, {a[1]})/(2·{a[1]}·(1 - {a[1]})) - {y}/(2·{a[1]}) - sin(2·{a[0]})/(4·(1 - {a[1]})·√(1 - {a[1]}·sin²{a[0]})))",
))
def ellipkinc_rrule(phi, m):
    """F(φ|m): ∂φ: 1/Δ; ∂m: E(φ|m)/(2m(1-m)) - F/(2m) - sin 2φ/(4(1-m)Δ), its series near m = 0
    ((2φ - sin 2φ)/8 at 0)."""
    y = sp.ellipkinc(phi, m)

    def ellipkinc_pullback(dy):
        s = np.sin(phi)
        delta = np.sqrt(1 - m * (s * s))
        def closed(mm):
            return sp.ellipeinc(phi, mm) / (2 * mm * (1 - mm)) - y / (2 * mm) - np.sin(2 * phi) / (4 * (1 - mm) * delta)

        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy / delta, phi)),
                Thunk(lambda: unbroadcast(dy * _m_slope(phi, m, 0, closed), m)))

    return y, ellipkinc_pullback


@rrule(sp.ellipeinc, formula=partials(
    "√(1 - {a[1]}·sin²{a[0]})",
    "({y} - ellipkinc({a[0]}, {a[1]}))/(2·{a[1]})",
))
def ellipeinc_rrule(phi, m):
    """E(φ|m): ∂φ: Δ; ∂m: (E(φ|m) - F(φ|m))/(2m), its series near m = 0 (-(2φ - sin 2φ)/8 at 0)."""
    y = sp.ellipeinc(phi, m)

    def ellipeinc_pullback(dy):
        s = np.sin(phi)
        def closed(mm):
            return (y - sp.ellipkinc(phi, mm)) / (2 * mm)

        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * np.sqrt(1 - m * (s * s)), phi)),
                Thunk(lambda: unbroadcast(dy * _m_slope(phi, m, 1, closed), m)))

    return y, ellipeinc_pullback


# --- the arithmetic-geometric mean ---


@rrule(sp.agm, formula=partials(
    "({y} - {a[1]}·∂agm/∂{a[1]})/{a[0]}",
    "{y}·2·{a[1]}·K′(m)/({a[0]}²·K(m)), m = 1 - ({a[1]}/{a[0]})²",
))
def agm_rrule(a, b):
    """M(a, b) = πa/(2K(m)), m = 1 - (b/a)²: ∂b = M·2b·K′(m)/(a²K(m)); ∂a = (M - b·∂b)/a (M is
    homogeneous of degree 1). For a and b of one sign (scipy's nan otherwise)."""
    y = sp.agm(a, b)

    def agm_pullback(dz):
        ratio = b / a
        m = 1 - ratio * ratio
        slope_b = y * 2 * ratio * ellipk_slope(m) / (a * sp.ellipk(m))
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dz * ((y - b * slope_b) / a), a)),
                Thunk(lambda: unbroadcast(dz * slope_b, b)))

    return y, agm_pullback

"""Rules for the Bessel functions of scipy.special that `tapegrad.rules.bessel` leaves out: the
fixed orders of K (k0, k1 and their exponentially scaled k0e, k1e), kn of integer order, the
exponentially scaled jve, yve, kve, and the Hankel functions hankel1, hankel2 and their scaled
hankel1e, hankel2e.

In x, each slope is a recurrence of neighbouring orders, plus the derivative of the scaling
factor (eˣ for kve, e∓ⁱˣ for the scaled Hankel functions), written with the same ufuncs so that
the pullbacks are traced again at second order. jve and yve are jv and yv for real x (their
scaling is exp(-|Im x|)): real x only. The Hankel functions H⁽¹⁾ = J + iY and H⁽²⁾ = J - iY have
complex values: a real x gets the real part of ȳ·H′ (autograd's convention), a complex x
(holomorphic) ȳ·H′. A real order v is differentiated, first order only, by the quadratures of
`tapegrad.rules.bessel` (`jv_dv`, `yv_dv`, `kve_dv`), for real x > 0; kn's order is an integer.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._shapes import real_to
from .bessel import jv_dv, kve_dv, yv_dv

# --- K of fixed and integer order ---


@rrule(sp.k0, formula=partials("(-k1({a[0]}))"))
def k0_rrule(x):
    def k0_pullback(dy):
        # K₀′ = -K₁
        return NO_TANGENT, dy * -sp.k1(x)

    return sp.k0(x), k0_pullback


@rrule(sp.k0e, formula=partials("({y} - k1e({a[0]}))"))
def k0e_rrule(x):
    y = sp.k0e(x)

    def k0e_pullback(dy):
        # eˣ K₀: d/dx = eˣ K₀ - eˣ K₁
        return NO_TANGENT, dy * (y - sp.k1e(x))

    return y, k0e_pullback


@rrule(sp.k1, formula=partials("(-k0({a[0]}) - {y}/{a[0]})"))
def k1_rrule(x):
    y = sp.k1(x)

    def k1_pullback(dy):
        # K₁′ = -K₀ - K₁/x
        return NO_TANGENT, dy * (-sp.k0(x) - y / x)

    return y, k1_pullback


@rrule(sp.k1e, formula=partials("({y}·(1 - 1/{a[0]}) - k0e({a[0]}))"))
def k1e_rrule(x):
    y = sp.k1e(x)

    def k1e_pullback(dy):
        # eˣ K₁: d/dx = eˣ K₁ + eˣ (-K₀ - K₁/x)
        return NO_TANGENT, dy * (y * (1 - 1 / x) - sp.k0e(x))

    return y, k1e_pullback


@rrule(sp.kn, formula=partials(None, "(-(kn({a[0]} - 1, {a[1]}) + kn({a[0]} + 1, {a[1]}))/2)"))
def kn_rrule(n, x):
    def kn_pullback(dy):
        # the order is an integer: K′ₙ = -(Kₙ₋₁ + Kₙ₊₁)/2 (K₋ₙ = Kₙ), of n truncated as scipy takes it
        k = np.trunc(n)
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * (-(sp.kn(k - 1, x) + sp.kn(k + 1, x)) / 2), x))

    return sp.kn(n, x), kn_pullback


# --- exponentially scaled ---


@rrule(sp.jve, formula=partials(
    "∂jv/∂{a[0]} (no closed form: by quadrature)",
    "(jve({a[0]} - 1, {a[1]}) - jve({a[0]} + 1, {a[1]}))/2",
))
def jve_rrule(v, x):
    """jve = jv for real x: x by the recurrence, the order v by quadrature (first order only)."""

    def jve_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * jv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * ((sp.jve(v - 1, x) - sp.jve(v + 1, x)) / 2), x)))

    return sp.jve(v, x), jve_pullback


@rrule(sp.yve, formula=partials(
    "∂yv/∂{a[0]} (no closed form: by quadrature)",
    "(yve({a[0]} - 1, {a[1]}) - yve({a[0]} + 1, {a[1]}))/2",
))
def yve_rrule(v, x):
    """yve = yv for real x: x by the recurrence, the order v by quadrature (first order only)."""

    def yve_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * yv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * ((sp.yve(v - 1, x) - sp.yve(v + 1, x)) / 2), x)))

    return sp.yve(v, x), yve_pullback


@rrule(sp.kve, formula=partials(
    "∂kve/∂{a[0]} (no closed form: by quadrature)",
    "({y} - (kve({a[0]} - 1, {a[1]}) + kve({a[0]} + 1, {a[1]}))/2)",
))
def kve_rrule(v, x):
    """eˣ Kᵥ(x): x: kve - (kveᵥ₋₁ + kveᵥ₊₁)/2; the order v by quadrature (first order only)."""
    y = sp.kve(v, x)

    def kve_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * kve_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * (y - (sp.kve(v - 1, x) + sp.kve(v + 1, x)) / 2), x)))

    return y, kve_pullback


# --- Hankel functions ---
# H⁽¹⁾ = J + iY, H⁽²⁾ = J - iY: H′ = (Hᵥ₋₁ - Hᵥ₊₁)/2; the scaled H⁽¹⁾e⁻ⁱˣ and H⁽²⁾eⁱˣ add ∓i times themselves


def _order_slope(v, x, sign, scaling=1.0):
    """∂/∂v of J + sign·iY, times `scaling`, by quadrature (real x > 0)."""
    return (jv_dv(v, x) + sign * 1j * yv_dv(v, x)) * scaling


@rrule(sp.hankel1, complex=True, formula=partials(
    "∂jv/∂{a[0]} + i·∂yv/∂{a[0]} (no closed form: by quadrature)",
    "(hankel1({a[0]} - 1, {a[1]}) - hankel1({a[0]} + 1, {a[1]}))/2",
))
def hankel1_rrule(v, x):
    """scipy.special.hankel1: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def hankel1_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: real_to(dy * _order_slope(v, x, 1), v)),
                Thunk(lambda: real_to(dy * ((sp.hankel1(v - 1, x) - sp.hankel1(v + 1, x)) / 2), x)))

    return sp.hankel1(v, x), hankel1_pullback


@rrule(sp.hankel2, complex=True, formula=partials(
    "∂jv/∂{a[0]} - i·∂yv/∂{a[0]} (no closed form: by quadrature)",
    "(hankel2({a[0]} - 1, {a[1]}) - hankel2({a[0]} + 1, {a[1]}))/2",
))
def hankel2_rrule(v, x):
    """scipy.special.hankel2: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def hankel2_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: real_to(dy * _order_slope(v, x, -1), v)),
                Thunk(lambda: real_to(dy * ((sp.hankel2(v - 1, x) - sp.hankel2(v + 1, x)) / 2), x)))

    return sp.hankel2(v, x), hankel2_pullback


@rrule(sp.hankel1e, complex=True, formula=partials(
    "(∂jv/∂{a[0]} + i·∂yv/∂{a[0]})·exp(-i·{a[1]}) (no closed form: by quadrature)",
    "((hankel1e({a[0]} - 1, {a[1]}) - hankel1e({a[0]} + 1, {a[1]}))/2 - i·{y})",
))
def hankel1e_rrule(v, x):
    """scipy.special.hankel1e = H⁽¹⁾e⁻ⁱˣ: x by the recurrence and the scaling, the order v by quadrature (first order only)."""
    y = sp.hankel1e(v, x)

    def hankel1e_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: real_to(dy * _order_slope(v, x, 1, np.exp(-1j * x)), v)),
                Thunk(lambda: real_to(dy * ((sp.hankel1e(v - 1, x) - sp.hankel1e(v + 1, x)) / 2 - 1j * y), x)))

    return y, hankel1e_pullback


@rrule(sp.hankel2e, complex=True, formula=partials(
    "(∂jv/∂{a[0]} - i·∂yv/∂{a[0]})·exp(i·{a[1]}) (no closed form: by quadrature)",
    "((hankel2e({a[0]} - 1, {a[1]}) - hankel2e({a[0]} + 1, {a[1]}))/2 + i·{y})",
))
def hankel2e_rrule(v, x):
    """scipy.special.hankel2e = H⁽²⁾eⁱˣ: x by the recurrence and the scaling, the order v by quadrature (first order only)."""
    y = sp.hankel2e(v, x)

    def hankel2e_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: real_to(dy * _order_slope(v, x, -1, np.exp(1j * x)), v)),
                Thunk(lambda: real_to(dy * ((sp.hankel2e(v - 1, x) - sp.hankel2e(v + 1, x)) / 2 + 1j * y), x)))

    return y, hankel2e_pullback

"""Rules for the exponential integrals of scipy.special (expi, exp1, expn) and the dilogarithm
spence.

expn(n, x) is differentiated in x (∂/∂x Eₙ = -Eₙ₋₁, and E₀′ = -e⁻ˣ(1 + x)/x²); its order n is
an integer (scipy truncates a float one), so its tangent is NoTangent.

(zetac(x) = ζ(x) - 1 has no rule: ζ′ has no function in scipy, and a rule whose only argument
always refuses could not be checked at any order; a gradient through it raises NoRuleError.)
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._series import horner

# --- exponential integrals ---


@rrule(sp.expi, formula=partials("exp({a[0]})/{a[0]}"))
def expi_rrule(x):
    def expi_pullback(dy):
        # Ei(x) = -∫₋ₓ^∞ e⁻ᵗ/t dt: Ei′ = eˣ/x
        return NO_TANGENT, dy * (np.exp(x) / x)

    return sp.expi(x), expi_pullback


@rrule(sp.exp1, formula=partials("(-exp(-{a[0]})/{a[0]})"))
def exp1_rrule(x):
    def exp1_pullback(dy):
        # E₁(x) = ∫ₓ^∞ e⁻ᵗ/t dt: E₁′ = -e⁻ˣ/x
        return NO_TANGENT, dy * (-np.exp(-x) / x)

    return sp.exp1(x), exp1_pullback


@rrule(sp.expn, formula=partials(None, "(-expn({a[0]} - 1, {a[1]}))"))
def expn_rrule(n, x):
    """∂x: -Eₙ₋₁(x) (for n = 0, -e⁻ˣ(1 + x)/x²); the integer order n gets NoTangent."""

    def expn_pullback(dy):
        k = np.trunc(n)  # (a float order, as scipy takes it)
        zero = k == 0
        below = -sp.expn(np.where(zero, 1, k) - 1, x)
        slope = np.where(zero, -np.exp(-x) * (1 + x) / (x * x), below) if np.any(zero) else below
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * slope, x))

    return sp.expn(n, x), expn_pullback


# --- the dilogarithm ---


#: log(1 - w)/w = Σ cⱼ wʲ = -(1 + w/2 + w²/3 + ... + w⁸/9): the slope of spence at z = 1 - w, to
#: rounding for |w| < 1e-2 (log z/(1 - z) cancels there: its second derivative came out 0 at
#: z = 1, where it is 1/2, and wrong near it)
_SPENCE_SLOPE_SERIES = tuple(-1.0 / (j + 1) for j in range(9))


@rrule(sp.spence, formula=partials("log({a[0]})/(1 - {a[0]})"))
def spence_rrule(z):
    """spence(z) = ∫₁ᶻ log t/(1 - t) dt: log z/(1 - z), its series near z = 1 (-1 there, its limit)."""

    def spence_pullback(dy):
        w = 1 - z
        near = np.abs(w) < 1e-2
        return NO_TANGENT, dy * np.where(near, horner(_SPENCE_SLOPE_SERIES, np.where(near, w, 0.0)),
                                         np.log(z) / np.where(near, 1.0, w))

    return sp.spence(z), spence_pullback


"""Rules for the relatives of the error function in scipy.special: erfi, dawsn, the Faddeeva
function wofz, the Voigt profile voigt_profile, and Owen's T function owens_t.

wofz(z) = exp(-z²) erfc(-iz) is entire: w′(z) = -2z·w(z) + 2i/√π, for real and complex z
(autograd's convention: the pullback of a complex z is ȳ·w′(z), with no conjugate; a real z
gets its real part). voigt_profile(x, σ, γ) = Re w(z)/(σ√(2π)) with z = (x + iγ)/(σ√2) is
differentiated in all three arguments through w′ (for σ > 0 and γ > 0; at σ = 0 or γ = 0
scipy's value is a limit, a Lorentzian or a Gaussian, whose slopes these are not). Owen's
T(h, a) = ∫₀ᵃ exp(-h²(1+t²)/2)/(1+t²) dt/2π has closed forms in both arguments.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._shapes import real_for

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_TWO = math.sqrt(2.0)
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)
_TWO_SQRT_PI = 2.0 * math.sqrt(math.pi)

# --- erfi and Dawson's integral ---


@rrule(sp.erfi, formula=partials("2/√π·exp({a[0]}²)"))
def erfi_rrule(x):
    def erfi_pullback(dy):
        # erfi(x) = -i erf(ix): d/dx = 2/√π exp(x²)
        return NO_TANGENT, dy * (_TWO_OVER_SQRT_PI * np.exp(x * x))

    return sp.erfi(x), erfi_pullback


@rrule(sp.dawsn, formula=partials("(1 - 2·{a[0]}·{y})"))
def dawsn_rrule(x):
    y = sp.dawsn(x)

    def dawsn_pullback(dy):
        # F(x) = exp(-x²) ∫₀ˣ exp(t²) dt: F′ = 1 - 2x F
        return NO_TANGENT, dy * (1 - 2 * x * y)

    return y, dawsn_pullback


# --- the Faddeeva function and the Voigt profile ---


@rrule(sp.wofz, complex=True, formula=partials("(-2·{a[0]}·{y} + 2i/√π)"))
def wofz_rrule(z):
    """w′(z) = -2z·w(z) + 2i/√π, for real and complex z."""
    w = sp.wofz(z)

    def wofz_pullback(dy):
        return NO_TANGENT, real_for(dy * (-2 * z * w + 1j * _TWO_OVER_SQRT_PI), z)

    return w, wofz_pullback


@rrule(sp.voigt_profile, formula=partials(
    "Re w′(z)/(2√π·{a[1]}²)",
    "(-{y}/{a[1]} - Re(z·w′(z))/(√(2π)·{a[1]}²))",
    "(-Im w′(z)/(2√π·{a[1]}²))",
))
def voigt_profile_rrule(x, sigma, gamma):
    """Re w(z)/(σ√(2π)), z = (x + iγ)/(σ√2), w′(z) = -2z·w(z) + 2i/√π: ∂x: Re w′/(2√π σ²);
    ∂σ: -V/σ - Re(z w′)/(√(2π) σ²); ∂γ: -Im w′/(2√π σ²)."""
    v = sp.voigt_profile(x, sigma, gamma)

    def voigt_profile_pullback(dy):
        z = (x + 1j * gamma) / (_SQRT_TWO * sigma)
        dw = -2 * z * sp.wofz(z) + 1j * _TWO_OVER_SQRT_PI
        scale = dy / (_TWO_SQRT_PI * (sigma * sigma))
        return (NO_TANGENT, Thunk(lambda: unbroadcast(scale * np.real(dw), x)),
                Thunk(lambda: unbroadcast(dy * (-v / sigma - np.real(z * dw) / (_SQRT_TWO_PI * (sigma * sigma))), sigma)),
                Thunk(lambda: unbroadcast(scale * -np.imag(dw), gamma)))

    return v, voigt_profile_pullback


# --- Owen's T function ---


@rrule(sp.owens_t, formula=partials(
    "(-exp(-{a[0]}²/2)/(2√(2π))·erf({a[0]}·{a[1]}/√2))",
    "exp(-{a[0]}²·(1 + {a[1]}²)/2)/(2π·(1 + {a[1]}²))",
))
def owens_t_rrule(h, a):
    """∂h: -φ(h)·erf(ha/√2)/2 (φ the standard normal density); ∂a: exp(-h²(1+a²)/2)/(2π(1+a²))."""

    def owens_t_pullback(dy):
        hh = h * h
        one_a2 = 1 + a * a
        return (NO_TANGENT,
                Thunk(lambda: unbroadcast(dy * (np.exp(-0.5 * hh) / (-2 * _SQRT_TWO_PI) * sp.erf(h * a / _SQRT_TWO)), h)),
                Thunk(lambda: unbroadcast(dy * (np.exp(-0.5 * hh * one_a2) / (2 * math.pi * one_a2)), a)))

    return sp.owens_t(h, a), owens_t_pullback

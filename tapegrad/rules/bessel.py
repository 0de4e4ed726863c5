"""Rules for the Bessel functions of scipy.special with a real order: jv, yv, iv, ive, kv, yn
and the fixed orders j0, j1, y0, y1.

Their derivatives in x are recurrences of neighbouring orders (``J'ᵥ = (Jᵥ₋₁ - Jᵥ₊₁) / 2``
and its kin), written with the same ufuncs so that the pullbacks are traced again at second
order. The derivative with respect to the order v has no closed form: differentiating one
raises `NoRuleError` naming the function and the argument; a constant order (the usual case)
is free.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ..registry import rrule, unbroadcast
from ..tangents import NO_TANGENT, Thunk
from .special_params import no_derivative

# --- Bessel functions of the first and second kind ---


@rrule(sp.jv)
def jv_rrule(v, x):
    def jv_pullback(dy):
        # J'ᵥ(x) = (Jᵥ₋₁(x) - Jᵥ₊₁(x)) / 2
        return (NO_TANGENT, no_derivative(sp.jv, "v", v),
                Thunk(lambda: unbroadcast(dy * ((sp.jv(v - 1, x) - sp.jv(v + 1, x)) / 2), x)))

    return sp.jv(v, x), jv_pullback


@rrule(sp.yv)
def yv_rrule(v, x):
    def yv_pullback(dy):
        # Y'ᵥ(x) = (Yᵥ₋₁(x) - Yᵥ₊₁(x)) / 2
        return (NO_TANGENT, no_derivative(sp.yv, "v", v),
                Thunk(lambda: unbroadcast(dy * ((sp.yv(v - 1, x) - sp.yv(v + 1, x)) / 2), x)))

    return sp.yv(v, x), yv_pullback


@rrule(sp.yn)
def yn_rrule(n, x):
    def yn_pullback(dy):
        # the order is an integer: Y'ₙ(x) = (Yₙ₋₁(x) - Yₙ₊₁(x)) / 2
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * ((sp.yn(n - 1, x) - sp.yn(n + 1, x)) / 2), x))

    return sp.yn(n, x), yn_pullback


@rrule(sp.j0)
def j0_rrule(x):
    def j0_pullback(dy):
        # J₀' = -J₁
        return NO_TANGENT, dy * -sp.j1(x)

    return sp.j0(x), j0_pullback


@rrule(sp.j1)
def j1_rrule(x):
    def j1_pullback(dy):
        # J₁' = (J₀ - J₂) / 2, finite at 0
        return NO_TANGENT, dy * ((sp.j0(x) - sp.jv(2, x)) / 2)

    return sp.j1(x), j1_pullback


@rrule(sp.y0)
def y0_rrule(x):
    def y0_pullback(dy):
        # Y₀' = -Y₁
        return NO_TANGENT, dy * -sp.y1(x)

    return sp.y0(x), y0_pullback


@rrule(sp.y1)
def y1_rrule(x):
    def y1_pullback(dy):
        # Y₁' = (Y₀ - Y₂) / 2
        return NO_TANGENT, dy * ((sp.y0(x) - sp.yv(2, x)) / 2)

    return sp.y1(x), y1_pullback


# --- modified Bessel functions ---


@rrule(sp.iv)
def iv_rrule(v, x):
    def iv_pullback(dy):
        # I'ᵥ(x) = (Iᵥ₋₁(x) + Iᵥ₊₁(x)) / 2
        return (NO_TANGENT, no_derivative(sp.iv, "v", v),
                Thunk(lambda: unbroadcast(dy * ((sp.iv(v - 1, x) + sp.iv(v + 1, x)) / 2), x)))

    return sp.iv(v, x), iv_pullback


@rrule(sp.ive)
def ive_rrule(v, x):
    y = sp.ive(v, x)

    def ive_pullback(dy):
        # ive = exp(-|x|) Iᵥ: d/dx = (iveᵥ₋₁ + iveᵥ₊₁) / 2 - sign(x) iveᵥ
        slope = (sp.ive(v - 1, x) + sp.ive(v + 1, x)) / 2 - np.sign(x) * y
        return NO_TANGENT, no_derivative(sp.ive, "v", v), Thunk(lambda: unbroadcast(dy * slope, x))

    return y, ive_pullback


@rrule(sp.kv)
def kv_rrule(v, x):
    def kv_pullback(dy):
        # K'ᵥ(x) = -(Kᵥ₋₁(x) + Kᵥ₊₁(x)) / 2
        return (NO_TANGENT, no_derivative(sp.kv, "v", v),
                Thunk(lambda: unbroadcast(dy * (-(sp.kv(v - 1, x) + sp.kv(v + 1, x)) / 2), x)))

    return sp.kv(v, x), kv_pullback

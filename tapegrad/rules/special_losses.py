"""Rules for the loss functions of scipy.special: kl_div, huber and pseudo_huber, in both arguments.

huber(δ, r) is r²/2 for |r| ≤ δ and δ(|r| - δ/2) beyond: its slopes are continuous, and at
|r| = δ the inner piece's are taken (they agree with the outer's there). pseudo_huber's slope
in δ is written without the cancellation of √(1 + (r/δ)²) - 1 for small r/δ.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk

# --- divergences ---


@rrule(sp.kl_div, formula=partials("log({a[0]}/{a[1]})", "(1 - {a[0]}/{a[1]})"))
def kl_div_rrule(x, y):
    """x log(x/y) - x + y: ∂x: log(x/y) (-inf at x = 0); ∂y: 1 - x/y."""

    def kl_div_pullback(dz):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dz * np.log(x / y), x)),
                Thunk(lambda: unbroadcast(dz * (1 - x / y), y)))

    return sp.kl_div(x, y), kl_div_pullback


# --- robust losses ---


@rrule(sp.huber, formula=partials("(0 if |{a[1]}| ≤ {a[0]} else |{a[1]}| - {a[0]})",
                                  "({a[1]} if |{a[1]}| ≤ {a[0]} else {a[0]}·sign({a[1]}))"))
def huber_rrule(delta, r):
    """∂δ: 0 inside (|r| ≤ δ), |r| - δ outside; ∂r: r inside, δ·sign(r) outside."""

    def huber_pullback(dy):
        inside = np.abs(r) <= delta
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * np.where(inside, 0.0, np.abs(r) - delta), delta)),
                Thunk(lambda: unbroadcast(dy * np.where(inside, r, delta * np.sign(r)), r)))

    return sp.huber(delta, r), huber_pullback


@rrule(sp.pseudo_huber, formula=partials("{a[1]}⁴/({a[0]}³·s·(s + 1)²), s = √(1 + ({a[1]}/{a[0]})²)",
                                         "{a[1]}/√(1 + ({a[1]}/{a[0]})²)"))
def pseudo_huber_rrule(delta, r):
    """δ²(s - 1) with s = √(1 + (r/δ)²): ∂δ: r⁴/(δ³ s (s+1)²) (= 2δ(s-1) - r²/(δs), without its
    cancellation); ∂r: r/s."""

    def pseudo_huber_pullback(dy):
        q = r / delta
        s = np.sqrt(1 + q * q)
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * (q * q * q * q * delta / (s * np.square(s + 1))), delta)),
                Thunk(lambda: unbroadcast(dy * (r / s), r)))

    return sp.pseudo_huber(delta, r), pseudo_huber_pullback

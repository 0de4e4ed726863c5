"""Rules for the elementwise functions of one argument: roots, exponentials, logarithms, trigonometry."""
from __future__ import annotations

import numpy as np

from ..registry import rrule
from ..tangents import NO_TANGENT

# --- roots, exponentials and logarithms ---


@rrule(np.sqrt)
def sqrt_rrule(x):
    y = np.sqrt(x)

    def sqrt_pullback(dy):
        # d/dx √x = 1 / (2√x); inf at 0, as in autograd and JAX
        return NO_TANGENT, dy / (2 * y)

    return y, sqrt_pullback


@rrule(np.exp)
def exp_rrule(x):
    y = np.exp(x)

    def exp_pullback(dy):
        return NO_TANGENT, dy * y

    return y, exp_pullback


@rrule(np.log)
def log_rrule(x):
    def log_pullback(dy):
        return NO_TANGENT, dy / x

    return np.log(x), log_pullback


@rrule(np.log10)
def log10_rrule(x):
    def log10_pullback(dy):
        # d/dx log10 x = 1 / (x ln 10)
        return NO_TANGENT, dy / (x * np.log(10.0))

    return np.log10(x), log10_pullback


# --- trigonometric and hyperbolic ---


@rrule(np.sin)
def sin_rrule(x):
    def sin_pullback(dy):
        return NO_TANGENT, dy * np.cos(x)

    return np.sin(x), sin_pullback


@rrule(np.cos)
def cos_rrule(x):
    def cos_pullback(dy):
        return NO_TANGENT, -dy * np.sin(x)

    return np.cos(x), cos_pullback


@rrule(np.tan)
def tan_rrule(x):
    y = np.tan(x)

    def tan_pullback(dy):
        # d/dx tan = 1 + tan²
        return NO_TANGENT, dy * (1 + y * y)

    return y, tan_pullback


@rrule(np.tanh)
def tanh_rrule(x):
    y = np.tanh(x)

    def tanh_pullback(dy):
        # d/dx tanh = 1 - tanh²
        return NO_TANGENT, dy * (1 - y * y)

    return y, tanh_pullback

"""Explicit forward rules for the most used primitives (the rest are derived from reverse rules).

``@frule(fn) def fn_frule(dargs, *args, **kwargs) -> (y, dy)``: `dargs` holds one variation per
positional argument, `ZERO` for a constant. Derived forward rules are exact but trace a
pullback per call; these are the fast path for what forward mode meets most.
"""
from __future__ import annotations

import operator

import numpy as np
import scipy.linalg

from ..errors import is_complex_value
from ..registry import frule
from ..tangents import ZERO


def _add(a, b):
    if a is ZERO:
        return b
    if b is ZERO:
        return a
    return a + b


def _scale(d, k):
    return ZERO if d is ZERO else d * k


# --- arithmetic ---


@frule(np.add)
def add_frule(d, x, y):
    return np.add(x, y), _add(d[0], d[1])


@frule(np.subtract)
def subtract_frule(d, x, y):
    return np.subtract(x, y), _add(d[0], _scale(d[1], -1))


@frule(np.multiply)
def multiply_frule(d, x, y):
    return np.multiply(x, y), _add(_scale(d[0], y), _scale(d[1], x))


@frule(np.divide)
def divide_frule(d, x, y):
    z = np.divide(x, y)
    # d(x/y) = dx/y - z dy/y
    return z, _add(_scale(d[0], 1 / y), _scale(d[1], -z / y))


@frule(np.negative)
def negative_frule(d, x):
    return np.negative(x), _scale(d[0], -1)


def _power_frule(power):
    def power_frule(d, x, y):
        z = power(x, y)
        # y x**(y-1), with 0 x**1 for y == 0: finite at x == 0 (the reverse rule's convention),
        # so that x**2 at 0 has a third derivative, 0, not 0 * 0**-1 = nan
        if isinstance(y, (int, float, np.number)):
            below = 1 if y == 0 else y - 1
        elif is_complex_value(y):  # the same without np.where, which takes no complex values
            below = y - np.not_equal(y, 0)
        else:
            below = np.where(np.equal(y, 0), 1, y - 1)
        dz = _scale(d[0], y * power(x, below))
        if d[1] is not ZERO:
            # log x, taken as 0 at x == 0 (x**y is flat in y there)
            safe = x + np.equal(x, 0) if is_complex_value(x) else np.where(x == 0, 1.0, x)
            dz = _add(dz, d[1] * z * np.log(safe))
        return z, dz

    power_frule.__name__ = f"{power.__name__}_frule"
    return frule(power)(power_frule)


power_frule = _power_frule(np.power)
# (float_power computes in float64 or complex128: its variation follows, with no broadcast
# operand summed, as a derived rule would have to)
float_power_frule = _power_frule(np.float_power)


# --- elementwise functions ---


@frule(np.sqrt)
def sqrt_frule(d, x):
    y = np.sqrt(x)
    return y, _scale(d[0], 1 / (2 * y))


@frule(np.exp)
def exp_frule(d, x):
    y = np.exp(x)
    return y, _scale(d[0], y)


@frule(np.log)
def log_frule(d, x):
    return np.log(x), _scale(d[0], 1 / x)


@frule(np.sin)
def sin_frule(d, x):
    return np.sin(x), _scale(d[0], np.cos(x))


@frule(np.cos)
def cos_frule(d, x):
    return np.cos(x), _scale(d[0], -np.sin(x))


@frule(np.tanh)
def tanh_frule(d, x):
    y = np.tanh(x)
    return y, _scale(d[0], 1 - y * y)


# --- linear in their first argument: the variation goes through the same function ---


def _linear(fn):
    is_sum = fn is np.sum  # (decided here: a trace may swap numpy's names while it runs)

    def linear_frule(d, x, *rest, **kwargs):
        y = fn(x, *rest, **kwargs)
        # np.sum's initial= is added to the sum: its variation (a dual one, moved into its
        # place, np.sum(a, axis, dtype, out, keepdims, initial)) is added, not its value
        dinitial = d[5] if is_sum and len(d) > 5 else ZERO
        if d[0] is ZERO:
            return y, dinitial
        dx = d[0]
        if type(dx) is complex or type(dx) is float:
            dx = np.asarray(dx)  # the variation of a 0-d array given as a number: x[()] indexes it too
        if is_sum and (len(rest) > 4 or "initial" in kwargs):
            rest = rest[:4] + (np._NoValue,) + rest[5:] if len(rest) > 4 else rest
            kwargs = {k: v for k, v in kwargs.items() if k != "initial"}
        dy = fn(dx, *rest, **kwargs)
        return y, dy if dinitial is ZERO else dy + dinitial

    linear_frule.__name__ = f"{fn.__name__}_frule"
    return frule(fn)(linear_frule)


for _fn in (np.sum, np.mean, np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims,
            np.swapaxes, np.moveaxis, np.diagonal, np.trace, np.cumsum, np.real, np.imag,
            np.conj, np.broadcast_to, operator.getitem):
    _linear(_fn)


# --- products ---


def _bilinear(fn):
    def bilinear_frule(d, x, y, **kwargs):
        z = fn(x, y, **kwargs)
        dz = ZERO
        if d[0] is not ZERO:
            dz = fn(d[0], y, **kwargs)
        if d[1] is not ZERO:
            dz = _add(dz, fn(x, d[1], **kwargs))
        return z, dz

    bilinear_frule.__name__ = f"{fn.__name__}_frule"
    return frule(fn)(bilinear_frule)


for _fn in (np.matmul, np.dot, np.outer, np.inner, np.kron):
    _bilinear(_fn)


# --- linear solves: one factorization for the value and the variation ---


@frule(np.linalg.solve)
def solve_frule(d, a, b):
    """X = A⁻¹B and dX = A⁻¹(dB - dA X), both through one LU factorization of A."""
    da, db = d
    if isinstance(a, np.ndarray) and a.ndim == 2 and isinstance(b, np.ndarray):
        lu = scipy.linalg.lu_factor(a)
        x = scipy.linalg.lu_solve(lu, b)
        rhs = _add(db, ZERO if da is ZERO else -(da @ x))
        return x, ZERO if rhs is ZERO else scipy.linalg.lu_solve(lu, rhs)
    # batched, or traced values: numpy's solve (traceable) for both. numpy 2 reads b as a
    # vector only when it is 1-d; then the products and solves need a trailing axis
    x = np.linalg.solve(a, b)
    vec = np.ndim(b) == 1
    ax = x[..., None] if vec else x
    rhs = _add(db, ZERO if da is ZERO else -((da @ ax)[..., 0] if vec else da @ ax))
    if rhs is ZERO:
        return x, ZERO
    if vec:
        rhs = np.broadcast_to(rhs, np.shape(x))
        return x, np.linalg.solve(a, rhs[..., None])[..., 0]
    return x, np.linalg.solve(a, rhs)

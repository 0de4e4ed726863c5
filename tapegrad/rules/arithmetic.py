"""Rules for the arithmetic ufuncs: add, subtract, multiply, divide, negative, positive, power."""
from __future__ import annotations

import numpy as np

from ..registry import Thunk, rrule, unbroadcast
from ..tangents import NO_TANGENT

# --- add, subtract, multiply, divide ---


@rrule(np.add)
def add_rrule(x, y):
    def add_pullback(dz):
        return NO_TANGENT, unbroadcast(dz, x), unbroadcast(dz, y)

    return np.add(x, y), add_pullback


@rrule(np.subtract)
def subtract_rrule(x, y):
    def subtract_pullback(dz):
        return NO_TANGENT, unbroadcast(dz, x), Thunk(lambda: unbroadcast(np.negative(dz), y))

    return np.subtract(x, y), subtract_pullback


@rrule(np.multiply)
def multiply_rrule(x, y):
    def multiply_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * y, x)),
            Thunk(lambda: unbroadcast(dz * x, y)),
        )

    return np.multiply(x, y), multiply_pullback


@rrule(np.divide)
def divide_rrule(x, y):
    z = np.divide(x, y)

    def divide_pullback(dz):
        # d(x/y)/dy = -x/y² = -z/y
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz / y, x)),
            Thunk(lambda: unbroadcast(-dz * z / y, y)),
        )

    return z, divide_pullback


# --- sign ---


@rrule(np.negative)
def negative_rrule(x):
    def negative_pullback(dy):
        return NO_TANGENT, -dy

    return np.negative(x), negative_pullback


@rrule(np.positive)
def positive_rrule(x):
    def positive_pullback(dy):
        return NO_TANGENT, dy

    return np.positive(x), positive_pullback


# --- power ---


def _log_base(x, y):
    """log(x) where it is defined; 0 where x == 0 and y > 0, as autograd and JAX do (x**y is flat in y there)."""
    safe = np.where(x == 0, 1.0, x)
    return np.log(safe)


@rrule(np.power)
def power_rrule(x, y):
    z = np.power(x, y)

    def power_pullback(dz):
        # d/dx x**y = y x**(y-1);  d/dy x**y = log(x) x**y
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * y * np.power(x, y - 1), x)),
            Thunk(lambda: unbroadcast(dz * z * _log_base(x, y), y)),
        )

    return z, power_pullback

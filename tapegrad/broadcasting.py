"""`unbroadcast`: a tangent summed back to the shape of its argument.

numpy broadcasts the arguments of an elementwise call to one shape; the tangent of an
argument that was broadcast is the cotangent summed over the axes broadcasting added or
stretched. Every rule of a broadcasting function ends with it.
"""
from __future__ import annotations

import numpy as np

from .tangents import NO_TANGENT, ZERO

__all__ = ["unbroadcast"]


_NUMBERS = (float, int, complex, bool)


def _shape(x):
    if type(x) in _NUMBERS:  # the common scalar case, without an attribute lookup that fails
        return ()
    s = getattr(x, "shape", None)
    return () if s is None else s


def _sum(dx, axes, keepdims):
    """``np.sum(dx, axis=axes, keepdims=keepdims)``; of an ndarray, the ufunc reduction np.sum
    itself calls, without its Python layers (the bias's tangent in every dense layer)."""
    if type(dx) is np.ndarray:
        return np.add.reduce(dx, axis=axes, keepdims=keepdims)
    # a traced cotangent (a higher derivative): the call a compiled gradient prints
    return np.sum(dx, axis=axes, keepdims=True) if keepdims else np.sum(dx, axis=axes)


def unbroadcast(dx, x):
    """Sum `dx` down to the shape of `x`, undoing numpy broadcasting.

    The sum runs over the leading axes that broadcasting added and over the axes where `x`
    has length 1. When the shapes already agree nothing is done.
    """
    tx, td = type(x), type(dx)
    if td is tx and (tx is float or tx is np.float64 or tx is np.ndarray and dx.shape == x.shape):
        return dx  # the common cases: two numbers, or two arrays of one shape
    if dx is ZERO or dx is NO_TANGENT:
        return dx
    if tx is float and td is np.float64:
        return dx  # both scalars: nothing was broadcast
    xs = x.shape if tx is np.ndarray else _shape(x)
    ds = dx.shape if td is np.ndarray else _shape(dx)
    if ds == xs:
        return dx
    lead = len(ds) - len(xs)
    if lead > 0:
        dx = _sum(dx, tuple(range(lead)), False)
        ds = ds[lead:]
    # (no axis of length 1, as a bias has none: nothing more to sum, without the generator)
    axes = tuple(i for i, n in enumerate(xs) if n == 1 and ds[i] != 1) if 1 in xs else ()
    if axes:
        dx = _sum(dx, axes, True)
    if not xs:
        # a Python or numpy scalar gets a scalar, not a 0-d array
        dx = dx[()] if isinstance(dx, np.ndarray) else dx
    return dx

"""Shared pieces of the forward rules written out (the rest are derived from reverse rules).

``@frule(fn) def fn_frule(dargs, *args, **kwargs) -> (y, dy)``: `dargs` holds one variation per
positional argument, `ZERO` for a constant. Derived forward rules are exact but trace a
pullback per call; the ones written out are the fast path for what forward mode meets most,
declared beside their reverse rules (``@rrule(np.sum, forward=linear_frule(np.sum))``).
"""
from __future__ import annotations

import numpy as np

from ..dual import zero_tangent
from ..tangents import ZERO

__all__ = ["add_variations", "scaled", "linear_frule", "bilinear_frule", "multilinear_frule", "joined_frule",
           "jointly_linear_frule"]


def add_variations(a, b):
    """a + b, where either may be `ZERO`."""
    if a is ZERO:
        return b
    if b is ZERO:
        return a
    return a + b


def scaled(d, k):
    """d · k, `ZERO` for a `ZERO` variation."""
    return ZERO if d is ZERO else d * k


def linear_frule(fn):
    """The forward rule of a function linear in its first argument: the variation goes
    through the same function."""
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
    return linear_frule


def bilinear_frule(fn):
    """The forward rule of a product: d(x·y) = dx·y + x·dy, each through the same function."""
    def bilinear_frule(d, x, y, **kwargs):
        z = fn(x, y, **kwargs)
        dz = ZERO
        if d[0] is not ZERO:
            dz = fn(d[0], y, **kwargs)
        if d[1] is not ZERO:
            dz = add_variations(dz, fn(x, d[1], **kwargs))
        return z, dz

    bilinear_frule.__name__ = f"{fn.__name__}_frule"
    return bilinear_frule


def multilinear_frule(fn):
    """The forward rule of a function linear in each of its positional arguments apart (a
    product of several, as ``np.einsum``'s operands): the sum over the varying arguments of
    the function with that argument's variation in its place (an argument met twice, as in
    ``einsum("i,i", x, x)``, counts twice: the product rule)."""
    def multilinear_frule(d, *args, **kwargs):
        y = fn(*args, **kwargs)
        kwargs.pop("out", None)  # (the variations are computed apart, never into `out`)
        dy = ZERO
        for i, di in enumerate(d):
            if di is not ZERO:
                dy = add_variations(dy, fn(*args[:i], di, *args[i + 1:], **kwargs))
        return y, dy

    multilinear_frule.__name__ = f"{fn.__name__}_frule"
    return multilinear_frule


def joined_frule(fn):
    """The forward rule of a function that joins a sequence of arrays (``np.stack``,
    ``np.concatenate``): the variations joined the same way, zeros of each constant array's
    shape in its place."""
    def joined_frule(d, arrays, *args, **kwargs):
        y = fn(arrays, *args, **kwargs)
        kwargs.pop("out", None)
        darrays = d[0]
        if darrays is ZERO:
            return y, ZERO
        if type(darrays) is list or type(darrays) is tuple:
            if all(v is ZERO for v in darrays):
                return y, ZERO
            darrays = [_materialized(x, v) for x, v in zip(arrays, darrays)]
        return y, fn(darrays, *args, **kwargs)

    joined_frule.__name__ = f"{fn.__name__}_frule"
    return joined_frule


def _materialized(x, v):
    """The variation `v` of a joined piece `x` with zeros of their shapes where it has none: a
    piece written as a list (``[x[0], 1.0]``) has a list of variations, ZeroTangent for its
    constants, which numpy would join into an array of objects."""
    if v is ZERO:
        return zero_tangent(x)
    if (type(v) is list or type(v) is tuple) and (type(x) is list or type(x) is tuple):
        # one array (np.stack sees dual values inside; numpy's own conversion of a list would not)
        return np.stack([_materialized(a, b) for a, b in zip(x, v)])
    return v


def jointly_linear_frule(fn, positions):
    """The forward rule of a function linear in the arguments at `positions` taken together
    (``updated(x, index, v)``, x with ``x[index] = v``; ``np.where(c, x, y)``): the function
    of their variations, zeros in the place of a constant one, the other arguments as they are.
    A call without the arguments at `positions` (``np.where(c)``, indices) has no variation."""
    def jointly_linear_frule(d, *args, **kwargs):
        y = fn(*args, **kwargs)
        at = [i for i in positions if i < len(args)]
        if all(d[i] is ZERO for i in at):
            return y, ZERO
        varied = list(args)
        for i in at:
            varied[i] = zero_tangent(args[i]) if d[i] is ZERO else d[i]
        return y, fn(*varied, **kwargs)

    jointly_linear_frule.__name__ = f"{fn.__name__}_frule"
    return jointly_linear_frule


"""Shared pieces of the forward rules written out (the rest are derived from reverse rules).

``@frule(fn) def fn_frule(dargs, *args, **kwargs) -> (y, dy)``: `dargs` holds one variation per
positional argument, `ZERO` for a constant. Derived forward rules are exact but trace a
pullback per call; the ones written out are the fast path for what forward mode meets most,
declared beside their reverse rules (``@rrule(np.sum, forward=linear_frule(np.sum))``).
"""
from __future__ import annotations

import numpy as np

from ..tangents import ZERO

__all__ = ["add_variations", "scaled", "linear_frule", "bilinear_frule"]


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

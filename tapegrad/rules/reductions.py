"""Rules for reductions: sum."""
from __future__ import annotations

import numpy as np

from ..registry import rrule
from ..tangents import NO_TANGENT

# --- sums ---


def _expand_reduced(dy, x, axis, keepdims):
    """Put back the reduced axes of `dy` (as length 1) so that it broadcasts against `x`."""
    ndim = np.ndim(x)
    if axis is None or keepdims or ndim == 0:
        return dy if keepdims or axis is None else dy
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = sorted(a % ndim for a in axes)
    return np.expand_dims(dy, tuple(axes))


@rrule(np.sum)
def sum_rrule(x, axis=None, dtype=None, keepdims=False, **kwargs):
    y = np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)

    def sum_pullback(dy):
        dy = _expand_reduced(dy, x, axis, keepdims)
        return NO_TANGENT, np.broadcast_to(dy, np.shape(x))

    return y, sum_pullback

"""Rules that rearrange arrays without changing values: transpose."""
from __future__ import annotations

import numpy as np

from ..registry import rrule
from ..tangents import NO_TANGENT

# --- axes ---


@rrule(np.transpose)
def transpose_rrule(x, axes=None):
    def transpose_pullback(dy):
        if axes is None:
            return NO_TANGENT, np.transpose(dy)
        return NO_TANGENT, np.transpose(dy, np.argsort(axes)), NO_TANGENT

    return np.transpose(x, axes), transpose_pullback


@rrule(np.reshape)
def reshape_rrule(x, shape, *args, **kwargs):
    def reshape_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x)), NO_TANGENT, *(NO_TANGENT for _ in args)

    return np.reshape(x, shape, *args, **kwargs), reshape_pullback

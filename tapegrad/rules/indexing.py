"""Rules for indexing: ``x[index]`` on arrays, and element reads of tuple results."""
from __future__ import annotations

import operator

import numpy as np

from ..registry import rrule
from ..tangents import NO_TANGENT, ZERO

# --- getitem ---


@rrule(operator.getitem)
def getitem_rrule(x, index):
    y = x[index]

    def getitem_pullback(dy):
        if type(x) is tuple or type(x) is list:
            # one cotangent per element of a tuple result (eigh, slogdet, divmod)
            dx = [ZERO] * len(x)
            dx[index] = dy
            return NO_TANGENT, type(x)(dx), NO_TANGENT
        dx = np.zeros(np.shape(x), dtype=np.result_type(x, float))
        # add.at, so that an index repeated in an integer array receives every share
        np.add.at(dx, index, dy)
        return NO_TANGENT, dx, NO_TANGENT

    return y, getitem_pullback

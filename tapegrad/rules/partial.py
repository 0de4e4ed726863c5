"""Rules for functions that are piecewise constant in some arguments and smooth in others.

They were once in the non-differentiable table, which stops every derivative at them: an
audit of that table found these differentiable in one argument, whose gradient the table
silently dropped.

- ``heaviside(x1, x2)`` is 0 or 1 for ``x1 != 0`` and ``x2`` where ``x1 == 0``: piecewise
  constant in ``x1``, and its derivative in ``x2`` is 1 exactly where ``x1 == 0``;
- ``full_like(a, fill_value)`` reads only the shape and dtype of ``a``, and every entry is
  ``fill_value``: its derivative in ``fill_value`` is the sum of the cotangent.
"""
from __future__ import annotations

import numpy as np

from ..registry import partials, rrule, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk

# --- steps ---


@rrule(np.heaviside, formula=partials("0", "[{a[0]} = 0]"))
def heaviside_rrule(x1, x2):
    def heaviside_pullback(dy):
        # d/dx2 = 1 where x1 == 0 (the value there is x2), 0 elsewhere; x1 only picks the step
        return NO_TANGENT, ZERO, Thunk(lambda: unbroadcast(np.where(x1 == 0, dy, 0.0), x2))

    return np.heaviside(x1, x2), heaviside_pullback


# --- filled arrays ---


@rrule(np.full_like, formula=whole(None, "the sum of {dy} (every entry is the fill value)"))
def full_like_rrule(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    y = np.full_like(a, fill_value, dtype=dtype, order=order, subok=subok, shape=shape)

    def full_like_pullback(dy):
        # every entry is fill_value (broadcast): its share is the sum of dy
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy, fill_value))

    return y, full_like_pullback

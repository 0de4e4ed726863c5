"""The functional form of in-place writes: ``updated(x, index, v)`` is a copy of x with x[index] = v.

A Tracer turns ``x[i] = v``, ``x[mask] = v``, ``x[1:3] += v`` and ``x *= y`` into calls of
`updated` (or of the ufunc) and then stands for the new value, so numpy's semantics hold on
the tape while every recorded value stays what it was.

Both are linear in x and in the values written, with real coefficients: complex values pass
through as they are (autograd's convention), and a real value written into a complex array
gets the real part of its cotangent.

Complex values (the rules declared with ``complex=True``): copies of elements (and sums of
them): the complex tests in tests/rules/test_indexing.py and tests/test_buffers.py pass for
each.
"""
from __future__ import annotations


import operator

import numpy as np

from ..arraylike import ArrayLike, added_at, updated
from ..pytree import find_nested
from ..registry import rrule, whole
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._forward import jointly_linear_frule
from ._shapes import cast_like


def _gather(dy, index):
    """``dy[index]``, recorded when the index is traced by an enclosing trace (a mask of x)."""
    if not isinstance(dy, ArrayLike):
        traced = find_nested(index if type(index) is tuple else (index,), ArrayLike)
        if traced is not None:
            return traced._dispatch(operator.getitem, (dy, index), None)
    return dy[index]


def _last_writes(shape, index, v_shape):
    """Which elements of the broadcast `v` survive ``x[index] = v`` (numpy: the last write to
    a repeated position wins), or None when every one does."""
    probe = np.full(shape, -1, dtype=np.intp)
    target = np.shape(probe[index])
    ids = np.arange(int(np.prod(target, dtype=np.intp))).reshape(target)
    probe[index] = ids
    won = probe[index] == ids
    return None if won.all() else won

# --- writes ---


def _is_plain_basic(index):
    """Ints, slices, None and Ellipsis name each position once; so does a boolean mask."""
    items = index if type(index) is tuple else (index,)
    for i in items:
        if i is None or i is Ellipsis or type(i) is slice or type(i) is int:
            continue
        if isinstance(i, (np.integer, ArrayLike)) or np.asarray(i).dtype == np.bool_:
            continue  # a traced index is a mask (an integer index array is never traced)
        return False
    return True


@rrule(updated, complex=True, forward=jointly_linear_frule(updated, (0, 2)), formula=whole("{dy} with zeros at [{ix[1]}]", None, "{dy}[{ix[1]}]"))
def updated_rrule(x, index, v):
    y = updated(x, index, v)
    # with an integer index that repeats (x[[0, 0]] = v), the last write wins in numpy: the
    # overwritten elements of v are not in the result and get no share
    won = None if _is_plain_basic(index) else _last_writes(np.shape(x), index, np.shape(v))

    def updated_pullback(dy):
        # the written entries no longer depend on x; v receives what flows into them
        return (
            NO_TANGENT,
            Thunk(lambda: updated(dy, index, 0)),
            NO_TANGENT,
            # (a real v written into a complex x gets the real part of its share)
            Thunk(lambda: cast_like(unbroadcast(_gather(dy, index) if won is None
                                                else _gather(dy, index) * won, v), v)),
        )

    return y, updated_pullback


@rrule(added_at, complex=True, forward=jointly_linear_frule(added_at, (0, 2)), formula=whole("{dy}", None, "{dy}[{ix[1]}], one share per repeated index"))
def added_at_rrule(x, index, b):
    def added_at_pullback(dy):
        # every add counts (unbuffered): each element of b receives dy where it was added
        return NO_TANGENT, dy, NO_TANGENT, Thunk(lambda: cast_like(unbroadcast(_gather(dy, index), b), b))

    return added_at(x, index, b), added_at_pullback

"""The functional form of in-place writes: ``updated(x, index, v)`` is a copy of x with x[index] = v.

A Tracer turns ``x[i] = v``, ``x[mask] = v``, ``x[1:3] += v`` and ``x *= y`` into calls of
`updated` (or of the ufunc) and then stands for the new value, so numpy's semantics hold on
the tape while every recorded value stays what it was.
"""
from __future__ import annotations


from ..arraylike import updated
from ..registry import rrule, unbroadcast
from ..tangents import NO_TANGENT, Thunk

# --- writes ---


@rrule(updated)
def updated_rrule(x, index, v):
    y = updated(x, index, v)

    def updated_pullback(dy):
        # the written entries no longer depend on x; v receives what flows into them.
        # With an integer index that repeats, the last write wins in numpy and the shares of
        # the overwritten writes are dropped here alike (their values are not in the result).
        return (
            NO_TANGENT,
            Thunk(lambda: updated(dy, index, 0)),
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dy[index], v)),
        )

    return y, updated_pullback

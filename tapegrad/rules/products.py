"""Rules for products of arrays: dot, matmul, trace."""
from __future__ import annotations

import numpy as np

from ..registry import Thunk, rrule, unbroadcast
from ..tangents import NO_TANGENT

# --- matrix products ---


def _matmul_grads(dz, x, y):
    """Tangents of x @ y for 1-d and n-d operands (batched, broadcast over leading axes)."""
    xn, yn = np.ndim(x), np.ndim(y)
    if xn == 1 and yn == 1:
        return lambda: dz * y, lambda: dz * x
    if xn == 1:  # (k,) @ (..., k, n) -> (..., n)
        return (
            lambda: unbroadcast(np.matmul(np.expand_dims(dz, -2), np.swapaxes(y, -1, -2))[..., 0, :], x),
            lambda: unbroadcast(np.expand_dims(x, -1) * np.expand_dims(dz, -2), y),
        )
    if yn == 1:  # (..., m, k) @ (k,) -> (..., m)
        return (
            lambda: unbroadcast(np.expand_dims(dz, -1) * y, x),
            lambda: unbroadcast(np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(dz, -1))[..., 0], y),
        )
    return (
        lambda: unbroadcast(np.matmul(dz, np.swapaxes(y, -1, -2)), x),
        lambda: unbroadcast(np.matmul(np.swapaxes(x, -1, -2), dz), y),
    )


@rrule(np.matmul)
def matmul_rrule(x, y):
    def matmul_pullback(dz):
        dx, dy = _matmul_grads(dz, x, y)
        return NO_TANGENT, Thunk(dx), Thunk(dy)

    return np.matmul(x, y), matmul_pullback


@rrule(np.dot)
def dot_rrule(x, y):
    xn, yn = np.ndim(x), np.ndim(y)
    if xn == 0 or yn == 0 or (xn <= 2 and yn <= 2):
        # dot agrees with multiply on scalars and with matmul up to 2-d
        z = np.dot(x, y)

        def dot_pullback(dz):
            if xn == 0 or yn == 0:
                return (
                    NO_TANGENT,
                    Thunk(lambda: unbroadcast(dz * y, x)),
                    Thunk(lambda: unbroadcast(dz * x, y)),
                )
            dx, dy = _matmul_grads(dz, x, y)
            return NO_TANGENT, Thunk(dx), Thunk(dy)

        return z, dot_pullback
    # n-d dot: sum over the last axis of x and the second-to-last of y
    z = np.dot(x, y)

    def dot_nd_pullback(dz):
        yax = list(range(yn))
        y_other = yax[:-2] + yax[-1:]  # axes of y that appear in z after x's leading axes
        xlead = xn - 1

        def dx():
            # dz axes: x[:-1] then y_other; contract y_other with y's
            return np.tensordot(dz, y, axes=(list(range(xlead, xlead + len(y_other))), y_other))

        def dy():
            t = np.tensordot(x, dz, axes=(list(range(xlead)), list(range(xlead))))
            # t axes: (k, *y_other) -> y's order (*y[:-2], k, y[-1])
            return np.moveaxis(t, 0, yn - 2)

        return NO_TANGENT, Thunk(dx), Thunk(dy)

    return z, dot_nd_pullback


@rrule(np.trace)
def trace_rrule(x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    def trace_pullback(dy):
        n, m = np.shape(x)[axis1], np.shape(x)[axis2]
        eye = np.eye(n, m, k=offset, dtype=np.result_type(x, float))
        dx = np.moveaxis(np.multiply.outer(eye, dy), (0, 1), (axis1, axis2)) if np.ndim(x) > 2 else eye * dy
        return NO_TANGENT, dx

    return np.trace(x, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype), trace_pullback

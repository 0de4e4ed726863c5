"""numpy 2's array-API names: the gufuncs vecdot, matvec and vecmat (rules), and the aliases in
np.linalg and np (np.linalg.matmul, outer, vecdot, trace, diagonal, cross, tensordot,
matrix_transpose, matrix_norm, vector_norm, svdvals; np.matrix_transpose, cumulative_sum,
cumulative_prod, unstack), traced through to the functions with rules that compute them.

Why traced through, and not rules of their own: each alias is one or two calls of a function
that has a rule (np.linalg.svdvals(x) is np.linalg.svd(x, compute_uv=False)), so the tape holds
that call under the name numpy's own docs give, with no second copy of its derivative to keep
in step. numpy's bodies start with ``np.asanyarray``, which a traced value refuses, so
``declare(fn, traced_by=...)`` sends a call with a traced (or dual) argument here, as for
np.piecewise (`tapegrad.rules.functional`).

The gufuncs come through ``__array_ufunc__``, which has no such hook: they have rules, for
real values and their default core axes (``vecdot``'s ``axis=`` too). Semantics kept: vecdot
conjugates its first argument (the rules are real-only, so the conjugation is the identity),
vector_norm flattens ``axis=None`` or a tuple of axes before a vector norm (never a matrix
norm) and reshapes for ``keepdims``, matrix_norm is np.linalg.norm over the last two axes,
cumulative_sum and cumulative_prod put 0 and 1 in front with ``include_initial=True``.
"""
from __future__ import annotations

import math

import numpy as np

from ..broadcasting import unbroadcast
from ..registry import declare, rrule, whole
from ..tangents import NO_TANGENT
from ._shapes import like, mT

__all__ = ["vector_norm", "cumulative_sum", "cumulative_prod", "unstack"]


# --- the gufuncs vecdot, matvec, vecmat ---


def _core_axis(fn, kwargs):
    """vecdot's ``axis=`` (the others' default core axes only), refusing what the rules do not cover."""
    axis = kwargs.pop("axis", -1)
    if kwargs:
        raise NotImplementedError(
            f"tapegrad has no derivative of numpy.{fn.__name__} with {', '.join(sorted(kwargs))}=; move "
            f"the axes with np.moveaxis first, or write it with np.sum(a * b, axis=...)")
    return axis


@rrule(np.vecdot, formula=whole("{dy} · {a[1]}", "{dy} · {a[0]}"))
def vecdot_rrule(a, b, **kwargs):
    axis = _core_axis(np.vecdot, dict(kwargs))

    def vecdot_pullback(dy):
        d = np.expand_dims(dy, axis)
        return NO_TANGENT, like(unbroadcast(d * b, a), a), like(unbroadcast(d * a, b), b)

    return np.vecdot(a, b, **kwargs), vecdot_pullback


@rrule(np.matvec, formula=whole("{dy} ⊗ {a[1]}", "{a[0]}ᵀ · {dy}"))
def matvec_rrule(m, v, **kwargs):
    _core_axis(np.matvec, dict(kwargs, axis=-1))

    def matvec_pullback(dy):
        dm = np.expand_dims(dy, -1) * np.expand_dims(v, -2)
        return NO_TANGENT, like(unbroadcast(dm, m), m), like(unbroadcast(np.matvec(mT(m), dy), v), v)

    return np.matvec(m, v), matvec_pullback


@rrule(np.vecmat, formula=whole("{a[1]} · {dy}", "{a[0]} ⊗ {dy}"))
def vecmat_rrule(v, m, **kwargs):
    _core_axis(np.vecmat, dict(kwargs, axis=-1))

    def vecmat_pullback(dy):
        dm = np.expand_dims(v, -1) * np.expand_dims(dy, -2)
        return NO_TANGENT, like(unbroadcast(np.matvec(m, dy), v), v), like(unbroadcast(dm, m), m)

    return np.vecmat(v, m), vecmat_pullback


# --- aliases in np.linalg and np ---


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm`` on traced values: numpy's steps (flatten the axes, one vector norm)."""
    shape = list(np.shape(x))
    if axis is None:
        y, at = np.ravel(x), 0
    elif isinstance(axis, tuple):
        axes = np.lib.array_utils.normalize_axis_tuple(axis, len(shape))
        rest = tuple(i for i in range(len(shape)) if i not in axes)
        y = np.reshape(np.transpose(x, axes + rest), (math.prod(shape[i] for i in axes),) + tuple(shape[i] for i in rest))
        at = 0
    else:
        y, at = x, axis
    res = np.linalg.norm(y, axis=at, ord=ord)
    if keepdims:
        axes = np.lib.array_utils.normalize_axis_tuple(range(len(shape)) if axis is None else axis, len(shape))
        res = np.reshape(res, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return res


def _cumulative(fn, first):
    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        if out is not None:
            raise NotImplementedError(f"tapegrad has no derivative of numpy.cumulative_{fn.__name__[3:]} "
                                      f"with out=; use its result")
        if axis is None:
            if np.ndim(x) != 1:
                raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
            axis = 0
        y = fn(x, axis=axis, dtype=dtype)
        if include_initial:
            start = np.take(first(y), [0], axis=axis)  # 0 or 1 shaped like one slice along axis
            y = np.concatenate([start, y], axis=axis)
        return y
    cumulative.__name__ = f"cumulative_{fn.__name__[3:]}"
    cumulative.__doc__ = f"``np.{cumulative.__name__}`` on traced values: np.{fn.__name__}, and its identity in front."
    return cumulative


cumulative_sum = _cumulative(np.cumsum, np.zeros_like)
cumulative_prod = _cumulative(np.cumprod, np.ones_like)


def unstack(x, /, *, axis=0):
    """``np.unstack`` on traced values: the slices along axis, as numpy gives them."""
    return tuple(np.moveaxis(x, axis, 0))


def matrix_transpose(x, /):
    if np.ndim(x) < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {np.ndim(x)}")
    return np.swapaxes(x, -1, -2)


ALIASES = {
    np.linalg.matmul: lambda x1, x2, /: np.matmul(x1, x2),
    np.linalg.outer: lambda x1, x2, /: np.outer(x1, x2),
    np.linalg.vecdot: lambda x1, x2, /, *, axis=-1: np.vecdot(x1, x2, axis=axis),
    np.linalg.trace: lambda x, /, *, offset=0, dtype=None: np.trace(x, offset, -2, -1, dtype),
    np.linalg.diagonal: lambda x, /, *, offset=0: np.diagonal(x, offset, -2, -1),
    np.linalg.cross: lambda x1, x2, /, *, axis=-1: np.cross(x1, x2, axis=axis),
    np.linalg.tensordot: lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes=axes),
    np.linalg.matrix_transpose: matrix_transpose,
    np.matrix_transpose: matrix_transpose,
    np.linalg.matrix_norm: lambda x, /, *, keepdims=False, ord="fro": np.linalg.norm(x, ord, (-2, -1), keepdims),
    np.linalg.vector_norm: vector_norm,
    np.linalg.svdvals: lambda x, /: np.linalg.svd(x, compute_uv=False),
    np.cumulative_sum: cumulative_sum,
    np.cumulative_prod: cumulative_prod,
    np.unstack: unstack,
}
for _fn, _impl in ALIASES.items():
    if _impl.__name__ == "<lambda>":
        _impl.__name__ = _impl.__qualname__ = _fn.__name__
    declare(_fn, traced_by=_impl)
del _fn, _impl

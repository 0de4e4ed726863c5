"""numpy functions built of other numpy functions, traced through on traced values: meshgrid,
broadcast_arrays, block, vander, diagflat, ediff1d, delete, insert, compress, extract, resize,
trim_zeros, choose, sort_complex, logspace, geomspace, apply_over_axes, unwrap, bincount's rule.

None of these (bincount aside) has a rule: each is numpy's own steps written with numpy calls
on traced values (numpy's bodies start with ``np.asanyarray``, which a traced value refuses, so
``declare(fn, traced_by=...)`` sends the call here: `tapegrad.rules.functional`), so the tape
holds reshapes, broadcasts, concatenations and gathers, each with its rule.

The functions that pick elements by position (delete, insert, resize) compute *which* elements
with numpy's own function on an array of element numbers, then gather those elements
(``np.take``): numpy's index logic (negative, boolean, repeated, sliced ``obj``) is kept whole,
and the gather's rule sums the cotangents of an element taken twice. An index argument that
is itself traced is read as its plain value (positions have no derivative).

unwrap: ``p`` plus a correction that is a whole number of periods, piecewise constant in p;
it is numpy's steps on traced values, so the correction's derivative (``mod(d + π, 2π) - d``)
is exactly 0 and the result's is 1, as it should be away from the jumps.
"""
from __future__ import annotations

import math

import numpy as np

from ..arraylike import ArrayLike
from ..registry import declare, rrule, whole
from ..tangents import NO_TANGENT
from ..views import concrete
from ._shapes import bind, cast_like

__all__ = ["meshgrid", "broadcast_arrays", "block", "vander", "diagflat", "ediff1d", "delete", "insert",
           "compress", "extract", "resize", "trim_zeros", "choose", "sort_complex", "logspace", "geomspace",
           "apply_over_axes", "unwrap"]


def _plain(v):
    """An index argument as its plain value (a traced one too: positions have no derivative)."""
    return concrete(v) if isinstance(v, ArrayLike) else v


def _gather(arr, place):
    """``place(element numbers of arr)`` applied to arr's elements: numpy's index logic on plain
    numbers, then one gather (``np.take``) of the traced values."""
    numbers = np.arange(np.size(arr)).reshape(np.shape(arr))
    return np.take(np.ravel(arr), place(numbers))


# --- grids and broadcasting ---


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``np.meshgrid`` on traced values: each vector reshaped onto its axis, broadcast unless sparse."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    shapes = [[1] * ndim for _ in xi]
    for i, s in enumerate(shapes):
        s[i] = -1
    if indexing == "xy" and ndim > 1:
        shapes[0][:2], shapes[1][:2] = [1, -1], [-1, 1]
    out = [np.reshape(x, s) for x, s in zip(xi, shapes)]
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [np.copy(x) for x in out]
    return tuple(out)


def broadcast_arrays(*args, subok=False):
    """``np.broadcast_arrays`` on traced values: each broadcast to the common shape."""
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    return tuple(a if np.shape(a) == shape else np.broadcast_to(a, shape) for a in args)


def _depth_and_ndim(arrays):
    """The nesting depth of block's lists and the largest ndim of its arrays."""
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("List at arrays cannot be empty")
        found = [_depth_and_ndim(a) for a in arrays]
        depths = {d for d, _ in found}
        if len(depths) > 1:
            raise ValueError("List depths are mismatched")
        return found[0][0] + 1, max(n for _, n in found)
    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block "
                        "does not allow implicit conversion from tuple to ndarray.")
    return 0, np.ndim(arrays)


def _block(arrays, depth, list_ndim, result_ndim):
    if isinstance(arrays, list):
        parts = [_block(a, depth + 1, list_ndim, result_ndim) for a in arrays]
        return np.concatenate(parts, axis=-(list_ndim - depth))
    n = np.ndim(arrays)
    return np.reshape(arrays, (1,) * (result_ndim - n) + np.shape(arrays)) if n < result_ndim else arrays


def block(arrays):
    """``np.block`` on traced values: the innermost lists joined along the last axis, each list
    above along the axis before, every block first given leading axes of length 1."""
    list_ndim, arr_ndim = _depth_and_ndim(arrays)
    return _block(arrays, 0, list_ndim, max(list_ndim, arr_ndim))


# --- matrices from vectors ---


def vander(x, N=None, increasing=False):
    """``np.vander`` on traced values: the powers of x by repeated products (no 0 · x⁻¹ at x = 0,
    which ``x ** k`` would put in the derivative of the column of ones)."""
    if np.ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = np.shape(x)[0] if N is None else N
    cols = [np.ones_like(x)] if n > 0 else []
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    if not increasing:
        cols = cols[::-1]
    return np.stack(cols, axis=1) if cols else np.reshape(x[:0], (np.shape(x)[0], 0))


def diagflat(v, k=0):
    """``np.diagflat`` on traced values: the flattened input on diagonal k."""
    return np.diag(np.ravel(v), k)


# --- inserting, deleting and selecting elements ---


def ediff1d(ary, to_end=None, to_begin=None):
    """``np.ediff1d`` on traced values: the differences of the flattened array, with the ends joined."""
    a = np.ravel(ary)
    parts = [a[1:] - a[:-1]]
    dtype = np.result_type(ary)
    if to_begin is not None:
        parts.insert(0, np.astype(np.ravel(to_begin), dtype) if isinstance(to_begin, ArrayLike)
                     else np.ravel(np.asarray(to_begin, dtype)))
    if to_end is not None:
        parts.append(np.astype(np.ravel(to_end), dtype) if isinstance(to_end, ArrayLike)
                     else np.ravel(np.asarray(to_end, dtype)))
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def delete(arr, obj, axis=None):
    """``np.delete`` on traced values: the elements numpy keeps, gathered."""
    obj = _plain(obj)
    return _gather(arr, lambda n: np.delete(n, obj, axis))


def insert(arr, obj, values, axis=None):
    """``np.insert`` on traced values: numpy's placement computed on element numbers (arr's
    first, then values'), then one gather from arr's elements followed by values'."""
    obj = _plain(obj)
    size = np.size(arr)
    dtype = np.result_type(arr)
    numbers = np.arange(size).reshape(np.shape(arr))
    vshape = np.shape(values)
    placed = np.insert(numbers, obj, np.arange(size, size + math.prod(vshape)).reshape(vshape), axis)
    vals = values if isinstance(values, ArrayLike) else np.asarray(values)
    if np.result_type(vals) != dtype:
        vals = np.astype(vals, dtype)  # numpy writes values into arr's dtype
    return np.take(np.concatenate([np.ravel(arr), np.ravel(vals)]), placed)


def compress(condition, a, axis=None, out=None):
    """``np.compress`` on traced values: the slices where condition holds, gathered."""
    if out is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.compress with out=; use its result")
    index = np.flatnonzero(condition)
    return np.take(np.ravel(a), index) if axis is None else np.take(a, index, axis=axis)


def extract(condition, arr):
    """``np.extract`` on traced values: the elements where condition holds, in order."""
    return np.take(np.ravel(arr), np.flatnonzero(np.ravel(condition)))


def resize(a, new_shape):
    """``np.resize`` on traced values: the elements repeated in order to fill new_shape, gathered."""
    return _gather(a, lambda n: np.resize(n, new_shape))


def trim_zeros(filt, trim="fb", axis=None):
    """``np.trim_zeros`` on traced values: the slice between the first and last nonzero, whose
    bounds are read from the values (a slice of traced bounds is guarded as any other)."""
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    nd = np.ndim(filt)
    axes = range(nd) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, nd)
    where = np.argwhere(filt)
    index = [slice(None)] * nd
    for ax in axes:
        if np.shape(where)[0] == 0:
            start = stop = 0
        else:
            start = int(np.min(where[:, ax])) if "f" in trim else None
            stop = int(np.max(where[:, ax])) + 1 if "b" in trim else None
        index[ax] = slice(start, stop)
    return filt[tuple(index)]


def choose(a, choices, out=None, mode="raise"):
    """``np.choose`` on traced values: a chain of np.where, so each choice's elements get the
    cotangent where they were chosen."""
    if out is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.choose with out=; use its result")
    n = len(choices)
    if mode == "wrap":
        a = np.mod(a, n)
    elif mode == "clip":
        a = np.clip(a, 0, n - 1)
    elif np.any(np.logical_or(np.less(a, 0), np.greater_equal(a, n))):
        raise ValueError("invalid entry in choice array")
    y = choices[n - 1]
    for k in range(n - 2, -1, -1):
        y = np.where(np.equal(a, k), choices[k], y)
    return np.broadcast_to(y, np.broadcast_shapes(np.shape(a), *[np.shape(c) for c in choices])) * 1


def sort_complex(a):
    """``np.sort_complex`` on traced values: np.sort, in the complex type numpy gives."""
    b = np.sort(a)
    if not np.iscomplexobj(b):
        char = np.result_type(b).char
        b = np.astype(b, "F" if char in "bhBH" else "G" if char == "g" else "D")
    return b


# --- spaced values ---


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace`` on traced values: base ** linspace(start, stop)."""
    y = np.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if np.ndim(base) > 0:
        base = np.expand_dims(base, axis)
    y = np.power(base, y)
    return y if dtype is None else np.astype(y, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``np.geomspace`` on traced real values of one sign: sign · exp(linspace(log|start|, log|stop|)),
    its ends start and stop themselves, as numpy sets them."""
    if np.iscomplexobj(start) or np.iscomplexobj(stop):
        raise NotImplementedError("tapegrad differentiates numpy.geomspace of real values; for complex "
                                  "ends write start * (stop / start) ** np.linspace(0, 1, num)")
    if np.any(np.equal(start, 0)) or np.any(np.equal(stop, 0)):
        raise ValueError("Geometric sequence cannot include zero")
    sign = np.sign(start)
    if np.any(np.not_equal(sign, np.sign(stop))):
        raise NotImplementedError("tapegrad differentiates numpy.geomspace between ends of one sign")
    y = sign * np.exp(np.linspace(np.log(start * sign), np.log(stop * sign), num=num, endpoint=endpoint, axis=axis))
    if num > 0:  # numpy's ends are exact
        first = np.expand_dims(start, axis) * np.ones_like(np.take(y, [0], axis=axis))
        last = np.expand_dims(stop, axis) * np.ones_like(np.take(y, [0], axis=axis))
        k = np.shape(y)[axis % np.ndim(y)]
        middle = np.take(y, np.arange(1, k - 1 if endpoint else k), axis=axis)
        y = np.concatenate([first, middle, last] if endpoint and k > 1 else [first, middle], axis=axis)
    return y if dtype is None else np.astype(y, dtype)


# --- loops over axes ---


def apply_over_axes(func, a, axes):
    """``np.apply_over_axes`` on traced values: numpy's loop, func(a, axis) per axis, kept at a's ndim."""
    val = a
    n = np.ndim(a)
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis + n if axis < 0 else axis
        res = func(val, axis)
        if np.ndim(res) == np.ndim(val):
            val = res
        else:
            res = np.expand_dims(res, axis)
            if np.ndim(res) != np.ndim(val):
                raise ValueError("function is not returning an array of the correct shape")
            val = res
    return val


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``np.unwrap`` on traced values: numpy's steps; the correction is whole periods (derivative 0)."""
    nd = np.ndim(p)
    dd = np.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    high = period / 2
    low = -high
    if np.issubdtype(np.result_type(p), np.integer):
        raise NotImplementedError("tapegrad differentiates numpy.unwrap of float values")
    ddmod = np.mod(dd - low, period) + low
    # numpy: where ddmod is -π exactly and dd > 0, π (the end of the interval the jump came from)
    ddmod = np.where(np.logical_and(np.equal(ddmod, low), np.greater(dd, 0)), high, ddmod)
    correct = ddmod - dd
    correct = np.where(np.less(np.abs(dd), discont), 0, correct)
    first = [slice(None)] * nd
    rest = [slice(None)] * nd
    first[axis], rest[axis] = slice(None, 1), slice(1, None)
    head, tail = p[tuple(first)], p[tuple(rest)]
    return np.concatenate([head, tail + np.cumsum(correct, axis=axis)], axis=axis)


# --- bincount: a scatter-add of its weights ---


@rrule(np.bincount, formula=whole(None, "{dy} gathered at {a[0]}", None))
def bincount_rrule(x, *args, **kwargs):
    """``histₖ = Σᵢ wᵢ [xᵢ = k]``: each weight gets the cotangent of its bin; x and the counts none."""
    weights = bind(np.bincount, (x, *args), kwargs).get("weights")

    def bincount_pullback(dy):
        dw = NO_TANGENT if weights is None else cast_like(np.take(dy, x), weights)
        return NO_TANGENT, NO_TANGENT, *(dw if i == 0 else NO_TANGENT for i in range(len(args)))

    return np.bincount(x, *args, **kwargs), bincount_pullback


for _fn in __all__:
    declare(getattr(np, _fn), traced_by=globals()[_fn])
del _fn

"""Helpers shared by the rule families (no rules here).

They read shapes, dtypes and arguments only, never array values, so that the rules and
pullbacks using them can run on Tracers.
"""
from __future__ import annotations

import inspect
import operator

import numpy as np

from ..errors import is_complex_value
from ..literals import NUMPY
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO

_SIGNATURES: dict = {}
#: numpy's own ``np.array`` (a trace puts a wrapper in its place, see `tapegrad.literals`)
plain_array = NUMPY["array"]


def bind(fn, args, kwargs) -> dict:
    """The arguments of a call of the numpy function `fn` by name, however they were passed.

    An argument given as numpy's "no value" placeholder counts as not given.
    """
    if len(args) == 1 and not kwargs:  # the array alone (np.sum(x)): no binding to do
        return {next(iter(cached_signature(fn).parameters)): args[0]}
    bound = cached_signature(fn).bind(*args, **kwargs).arguments
    return {k: v for k, v in bound.items() if v is not np._NoValue}


def cached_signature(fn):
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn)
    return sig


def positional_names(fn, n) -> list:
    """The names of the first `n` parameters of `fn`: those a call with n positional arguments filled."""
    return list(cached_signature(fn).parameters)[:n]


def no_tangents(args) -> tuple:
    """One NoTangent per trailing positional argument (axis, shape, indices, ...)."""
    return (NO_TANGENT,) * len(args)


def reject(fn, kwargs, names):
    """Refuse keyword arguments a rule does not differentiate, rather than get them wrong."""
    for name in names:
        if kwargs.get(name) is not None:
            raise NotImplementedError(
                f"tapegrad has no derivative of numpy.{fn.__name__} with {name}=; "
                f"compute it without {name}= (for example with np.where) instead"
            )


def reduced_axes(axis, ndim) -> tuple:
    """The axes a reduction runs over, non-negative and sorted (all of them for None)."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and ndim:
        return (axis % ndim,)
    return tuple(sorted(operator.index(a) % ndim for a in as_tuple(axis))) if ndim else ()


def as_tuple(axis) -> tuple:
    """An axis argument as a tuple: ``0`` is ``(0,)``."""
    return tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)


def spread(dy, axes, keepdims, shape):
    """`dy`, a cotangent of a reduction over `axes`, copied to every element of the input's
    `shape` that was reduced into it (a read-only view, nothing copied).

    A number (what a full reduction passes back) is broadcast with the ndarray constructor,
    without `np.broadcast_to`'s Python layers: the cotangent of ``np.mean(x)``."""
    if type(dy) is float or type(dy) is np.float64:
        out = np.ndarray(shape, np.float64, plain_array(dy), 0, (0,) * len(shape))
        out.flags.writeable = False  # as np.broadcast_to's
        return out
    if keepdims and type(dy) is np.ndarray and dy.ndim == len(shape) and dy.flags.c_contiguous \
            and dy.dtype.kind in "fc":  # (the constructor takes no object array)
        # a keepdims cotangent (the softmax's np.sum(e, axis=1, keepdims=True)): the same
        # view, its reduced axes of stride 0, without np.broadcast_to's Python layers
        out = np.ndarray(shape, dy.dtype, dy, 0,
                         tuple(0 if a in axes else st for a, st in enumerate(dy.strides)))
        out.flags.writeable = False
        return out
    return np.broadcast_to(expand_reduced(dy, axes, keepdims), shape)


def expand_reduced(dy, axes, keepdims):
    """Put the reduced axes back into `dy` (length 1), so that it broadcasts against the input."""
    if keepdims or not axes or type(dy) is float or getattr(dy, "ndim", None) == 0:
        return dy  # (a scalar broadcasts against the input as it is)
    return np.expand_dims(dy, axes)


def dtype_of(x) -> np.dtype:
    """The dtype of an array, numpy scalar, Tracer or Python number."""
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return np.dtype(dt)
    if isinstance(x, (bool, int, float, complex)):
        return np.result_type(type(x))
    return np.asarray(x).dtype  # a constant such as a nested list


def tangent_dtype(x, dy=None) -> np.dtype:
    """The dtype of a tangent of `x`: x's own when it is inexact, else dy's (or float64)."""
    dt = dtype_of(x)
    if dt.kind in "fc":
        return dt
    if dy is not None:
        ddt = dtype_of(dy)
        if ddt.kind in "fc":
            return ddt
    return np.dtype(np.float64)


def cast_like(dx, x):
    """Give a tangent the dtype of its argument (float32 in, float32 out)."""
    have = getattr(dx, "dtype", None)
    if have is not None and have is getattr(x, "dtype", None) and have.kind in "fc":
        return dx  # the common case: an inexact argument and a tangent of its dtype
    want = tangent_dtype(x, dx)
    if have is None:
        if type(dx) not in _NUMBERS:
            return dx  # a zero, a structure
        have = np.result_type(dx)  # a Python number, as a traced one (its dtype) is read
    if have == want:
        return dx
    if have.kind == "c" and want.kind != "c":
        dx = np.real(dx)
    # (a method, not np.astype, which takes arrays alone: a Python number, plain or traced, is
    # cast to numpy's scalar, as a cotangent traced by an enclosing trace is)
    return dx.astype(want) if hasattr(dx, "astype") else np.asarray(dx).astype(want)[()]


_NUMBERS = (float, complex, int)


def normalize_axis(axis, ndim) -> int:
    return operator.index(axis) % ndim if ndim else 0


# --- shared by the product and linear-algebra rules ---


def mT(a):
    """The transpose of the last two axes (of each matrix in a stack)."""
    if type(a) is np.ndarray and a.ndim == 2:
        return a.T  # the same view as np.swapaxes gives, without its Python call
    return np.swapaxes(a, -1, -2)


def tangent_float(x):
    """The float dtype a tangent of `x` is computed in (float64 for Python numbers)."""
    dt = getattr(x, "dtype", None)
    return dt if dt is not None and dt.kind in "fc" else np.dtype(np.float64)


def real_for(t, x):
    """`t`, a cotangent of `x`, or its real part when `x` is real and `t` complex: a real
    argument of a rule with a complex result (autograd's convention, see the README). For a
    holomorphic rule `t` is the real rule's formula, with no conjugate: ``x * z`` gives z's
    cotangent ``g x`` and a real x's ``Re(g z)``."""
    if is_complex_value(t) and not is_complex_value(x):
        return np.real(t)
    return t


def real_to(t, x):
    """`real_for` of `t` summed down to x's shape."""
    return real_for(unbroadcast(t, x), x)


def like(g, x):
    """`g` as the tangent of `x`: summed down to x's shape, in x's dtype, a scalar for a number."""
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape and g.dtype is x.dtype \
            and g.dtype.kind in "fc":
        return g  # the common case (a matrix product's tangent): nothing to sum, cast or take apart
    g = real_to(g, x)
    dt = getattr(x, "dtype", None)
    if dt is not None and dt.kind in "fc":
        if g.dtype != dt:  # mixed precision: the product was promoted, the tangent is not
            g = g.astype(dt)
    elif isinstance(g, np.ndarray) and g.ndim == 0:
        g = g[()]
    return g


def perm_back(t, labels):
    """Transpose `t`, whose axis i stands for axis labels[i] of an operand, into that operand's order."""
    perm = tuple(int(i) for i in np.argsort(labels))
    return t if perm == tuple(range(len(perm))) else np.transpose(t, perm)


def col(v):
    """A stack of vectors (..., n) as a stack of columns (..., n, 1)."""
    return np.reshape(v, np.shape(v) + (1,))


def row(v):
    """A stack of vectors (..., n) as a stack of rows (..., 1, n)."""
    return np.reshape(v, np.shape(v)[:-1] + (1, np.shape(v)[-1]))


def sum_of(*terms):
    """The sum of the terms that are not ZERO (ZERO if none is)."""
    out = ZERO
    for t in terms:
        if t is not ZERO:
            out = t if out is ZERO else out + t
    return out


def mH(a):
    """The conjugate transpose of the last two axes (the transpose of a real matrix, no copy)."""
    return np.conjugate(mT(a)) if dtype_of(a).kind == "c" else mT(a)


def conj(a):
    """The complex conjugate of a complex array; a real one as it is."""
    return np.conjugate(a) if dtype_of(a).kind == "c" else a


def sym(g):
    """The symmetric part of g (of each matrix in a stack)."""
    return 0.5 * (g + mT(g))


def divide(a, b):
    """``a / b``, with numpy's result where `b` is a Python 0 or 0.0 (inf or nan, and numpy's
    RuntimeWarning), at which Python's / raises ZeroDivisionError: a pullback such as log's
    ``dy / x`` at x = 0.0 gives inf, as on a numpy float, and mean's over no elements nan."""
    return np.divide(a, b) if (type(b) is float or type(b) is int) and b == 0 else a / b


def call_option(values, kwargs, name, position):
    """The value of the option `name` of a call, given by keyword or as positional `position`
    (None where the call leaves it out): what a formula for `explain` reads of a call."""
    if name in kwargs:
        return kwargs[name]
    return values[position] if len(values) > position else None

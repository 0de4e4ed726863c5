"""Rules for reductions: sums and means, products, extrema (also nanmax and nanmin), the
median, moments, cumulative sums and products.

Each rule accepts its arguments as numpy does (axis and keepdims by position or by name) and
returns one NoTangent per positional argument after the array. Pullbacks broadcast the
cotangent back over the reduced axes; nothing in them reads array values, so a Tracer can
record them again.

Complex values (autograd's convention, see the README): the sums, means, products and scans
are holomorphic, so their pullbacks are the real formulas unchanged; var and std of a complex
array are real (the mean of |x - mean|²) and pass back the conjugate of the centred values.
max, min, ptp and median (and sort and partition elsewhere) of a complex array follow numpy's
lexicographic order (real parts first): each result is one of the elements (or the mean of
two), so its cotangent goes to it as for real values.

Complex values (the rules declared with ``complex=True``): holomorphic (sums, means, products,
scans) or derived for complex values (var, std): the complex tests in
tests/rules/test_reductions.py pass for each; max, min, amax, amin, ptp and median select
elements in numpy's lexicographic order, and route the cotangent to them.
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import FLOAT64, FORMULAS, rrule, stand_in, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._forward import linear_frule
from ._shapes import (
    as_tuple,
    bind,
    cast_like,
    divide,
    dtype_of,
    expand_reduced,
    no_tangents,
    normalize_axis,
    positional_names,
    reduced_axes,
    reject,
    spread,
    tangent_dtype,
)


def _spread(dy, x, axes, keepdims):
    """`dy` copied to every element of `x` that was reduced into it."""
    return spread(dy, axes, keepdims, x.shape if type(x) is np.ndarray else np.shape(x))


#: the keywords of a reduction that need no binding against its signature
_PLAIN_KEYWORDS = frozenset(("axis", "keepdims"))


def _reduction(fn, x, args, kwargs):
    """(axes, keepdims, all bound arguments) of a reduction called as numpy allows."""
    if not args and (not kwargs or kwargs.keys() <= _PLAIN_KEYWORDS):
        # ``np.sum(x)``, ``np.max(z, axis=1, keepdims=True)``: nothing to bind
        axis, keepdims = kwargs.get("axis"), kwargs.get("keepdims", False)
        if axis is not np._NoValue and keepdims is not np._NoValue:
            ndim = x.ndim if type(x) is np.ndarray else np.ndim(x)  # (np.ndim is a Python call)
            return reduced_axes(axis, ndim), bool(keepdims), kwargs
    b = bind(fn, (x, *args), kwargs)
    return reduced_axes(b.get("axis"), np.ndim(x)), bool(b.get("keepdims", False)), b


def _plain_float64(x, args, kwargs) -> bool:
    """A float64 ndarray reduced with at most axis= and keepdims=: `np.add.reduce` computes
    np.sum and np.mean of it with the same arithmetic, without their Python layers."""
    return type(x) is np.ndarray and x.dtype.char == "d" and not args and kwargs.keys() <= _PLAIN_KEYWORDS


def _reduce(fn, ufunc, x, args, kwargs, b, keepdims):
    """``fn(x, *args, **kwargs)``; of a plain float64 array (`_plain_float64`), the ufunc
    reduction fn itself calls (np.add, np.maximum, np.minimum), without its Python layers."""
    if _plain_float64(x, args, kwargs):
        return ufunc.reduce(x, axis=b.get("axis"), keepdims=keepdims)
    return fn(x, *args, **kwargs)


def _count(x, axes) -> int:
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if len(axes) == len(shape):  # all of them (np.mean(x)), without the generator
        return math.prod(shape)
    return math.prod(shape[a] for a in axes)


def option_tangents(names, initial_tangent=None):
    """The tangents of a reduction's options given by position, named `names` (a traced
    ``initial=`` is moved into its place): NoTangent, but for ``initial=`` a Thunk of
    `initial_tangent` (if given), read only when the initial value is traced."""
    return tuple(Thunk(initial_tangent) if name == "initial" and initial_tangent is not None else NO_TANGENT
                 for name in names)


def _option_tangents(fn, args, initial_tangent):
    """`option_tangents` of the options of `fn` in `args` (none: no call of positional_names)."""
    return option_tangents(positional_names(fn, 1 + len(args))[1:], initial_tangent) if args else ()


def initial_of_extremum(x, y, axes, keepdims, b):
    """The tangent of ``initial=`` of a maximum or minimum `y` of `x`, as a function of the
    cotangent: the cotangent of each result that no element equals (``initial=`` alone decided
    it; at a tie the element takes the cotangent, as `_chooser_grad` gives it). `b`: the bound
    arguments (``where=`` and ``initial=``)."""
    def initial_tangent(dy):
        hit = np.equal(x, expand_reduced(y, axes, keepdims))
        where = b.get("where")
        if where is not None and where is not True:
            hit = np.logical_and(hit, where)
        alone = np.logical_not(np.any(hit, axis=axes, keepdims=keepdims))
        return unbroadcast(np.where(alone, dy, 0.0), b["initial"])

    return initial_tangent


# --- sums and means ---


@rrule(np.sum, forward=linear_frule(np.sum), complex=True, formula=whole("{dy} broadcast back over {over}"))
def sum_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.sum, x, args, kwargs)
    where = b.get("where")
    y = _reduce(np.sum, np.add, x, args, kwargs, b, keepdims)
    x = stand_in(x)  # only its shape and dtype are needed

    def sum_pullback(dy):
        dx = _spread(dy, x, axes, keepdims)
        if where is not None:
            dx = dx * where
        # initial= is added to each sum: it gets the sum of their cotangents
        return NO_TANGENT, cast_like(dx, x), *_option_tangents(np.sum, args, lambda: unbroadcast(dy, b["initial"]))

    return y, sum_pullback


@rrule(np.mean, forward=linear_frule(np.mean), complex=True,
       formula=whole("{dy}/n broadcast back over {over} (n values averaged)"))
def mean_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.mean, x, args, kwargs)
    where = b.get("where")
    if not kwargs and _plain_float64(x, args, kwargs) and x.size:
        # np.mean's own arithmetic for a whole array: the sum, then a division by the count
        y = np.float64(np.add.reduce(x, axis=None) / x.size)
    else:
        y = np.mean(x, *args, **kwargs)
    x = stand_in(x)  # only its shape and dtype are needed

    def mean_pullback(dy):
        if where is None:
            dx = _spread(divide(dy, _count(x, axes)), x, axes, keepdims)  # nan for an empty x, as numpy
        else:
            # only the selected elements count, and only they receive a share
            keep = np.astype(np.broadcast_to(where, np.shape(x)), tangent_dtype(x, dy))
            dx = _spread(dy, x, axes, keepdims) * keep / np.sum(keep, axis=axes, keepdims=True)
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return y, mean_pullback


@rrule(np.nansum, complex=True, formula=whole("{dy} broadcast back over {over}, 0 where {a[0]} is nan"))
def nansum_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.nansum, x, args, kwargs)
    reject(np.nansum, b, ["where"])

    def nansum_pullback(dy):
        # a nan is skipped (counted as 0), so it receives no share
        keep = np.logical_not(np.isnan(x))
        return NO_TANGENT, cast_like(_spread(dy, x, axes, keepdims) * keep, x), *_option_tangents(
            np.nansum, args, lambda: unbroadcast(dy, b["initial"]))

    return np.nansum(x, *args, **kwargs), nansum_pullback


@rrule(np.nanmean, complex=True, formula=whole(
    "{dy}/n broadcast back over {over} (n values that are not nan), 0 at nan",
))
def nanmean_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.nanmean, x, args, kwargs)
    reject(np.nanmean, b, ["where"])

    def nanmean_pullback(dy):
        # the mean of the non-nan elements; a group of nans only has a nan mean and nan shares
        keep = np.astype(np.logical_not(np.isnan(x)), tangent_dtype(x, dy))
        dx = _spread(dy, x, axes, keepdims) * keep / np.sum(keep, axis=axes, keepdims=True)
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return np.nanmean(x, *args, **kwargs), nanmean_pullback


@rrule(np.average, complex=True, formula=whole(
    "{dy} · w/Σw broadcast back over {over} (w the weights, 1 without)",
))
def average_rrule(a, *args, **kwargs):
    b = bind(np.average, (a, *args), kwargs)
    axis, w = b.get("axis"), b.get("weights")
    returned, keepdims = b.get("returned", False), bool(b.get("keepdims", False))
    shape = np.shape(a)
    axes = reduced_axes(axis, len(shape))
    out = np.average(a, *args, **kwargs)
    avg = out[0] if returned else out
    positional = positional_names(np.average, 1 + len(args))
    wb = None if w is None else _weights_like(w, shape, axis, axes)

    def average_pullback(dout):
        dy, dscale = dout if returned else (dout, ZERO)
        if w is None:
            # the plain mean; the returned count does not depend on a
            da = ZERO if dy is ZERO else cast_like(_spread(dy / _count(a, axes), a, axes, keepdims), a)
            return NO_TANGENT, da, *no_tangents(args)
        scale = np.sum(np.broadcast_to(wb, shape), axis=axes, keepdims=True)

        def da():
            # d/da Σwa/Σw = w/Σw
            return cast_like(_spread(dy, a, axes, keepdims) * wb / scale, a)

        def dw():
            # d/dw Σwa/Σw = (a - avg)/Σw, plus 1 for the returned Σw
            full = ZERO
            if dy is not ZERO:
                full = _spread(dy, a, axes, keepdims) * (a - expand_reduced(avg, axes, keepdims)) / scale
            if dscale is not ZERO:
                full = full + _spread(dscale, a, axes, keepdims)
            return cast_like(_weights_back(full, w, shape, axis, axes), w)

        tangents = {"a": ZERO if dy is ZERO else Thunk(da), "weights": Thunk(dw)}
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in positional)

    return out, average_pullback


def _weights_like(w, shape, axis, axes):
    """The weights laid out to broadcast against `a`, as np.average lays them out."""
    if np.shape(w) == shape:
        return w
    order = [normalize_axis(ax, len(shape)) for ax in as_tuple(axis)]
    w = np.transpose(w, np.argsort(order)) if len(order) > 1 else w
    return np.reshape(w, tuple(n if i in axes else 1 for i, n in enumerate(shape)))


def _weights_back(full, w, shape, axis, axes):
    """Undo `_weights_like` on a tangent shaped like `a`: sum the broadcast, restore w's layout."""
    if np.shape(w) == shape:
        return full
    other = tuple(i for i in range(len(shape)) if i not in axes)
    g = np.sum(full, axis=other)
    order = [normalize_axis(ax, len(shape)) for ax in as_tuple(axis)]
    return np.transpose(g, np.argsort(np.argsort(order))) if len(order) > 1 else g


# --- products ---


@rrule(np.prod, complex=True, formula=whole(
    "{dy} · {y}/{a[0]} broadcast back over {over} (the product of the others)",
))
def prod_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.prod, x, args, kwargs)
    reject(np.prod, b, ["where"])
    initial = b.get("initial")

    def prod_pullback(dy):
        # d/dx_i Πx = Π_{k≠i} x_k, built from products on both sides: right with zeros in x
        dx = _spread(dy, x, axes, keepdims)
        if axes:
            dx = dx * _product_of_others(x, axes)
        if initial is not None:
            dx = dx * initial
        # each product is initial times the product of its group
        return NO_TANGENT, cast_like(dx, x), *_option_tangents(
            np.prod, args, lambda: unbroadcast(dy * np.prod(x, axis=axes, keepdims=keepdims), initial))

    return np.prod(x, *args, **kwargs), prod_pullback


def _product_of_others(x, axes):
    """For each element, the product of the other elements of its group, computed without division."""
    k = len(axes)
    last = tuple(range(-k, 0))
    moved = np.moveaxis(x, axes, last)
    mshape = np.shape(moved)
    n = math.prod(mshape[-k:])
    if n == 0:
        return np.zeros(np.shape(x), tangent_dtype(x))
    flat = np.reshape(moved, mshape[:-k] + (n,))
    before = _exclusive_cumprod(flat)
    after = np.flip(_exclusive_cumprod(np.flip(flat, -1)), -1)
    return np.moveaxis(np.reshape(before * after, mshape), last, axes)


def _exclusive_cumprod(x):
    """Products of the elements strictly before each one along the last axis (1 for the first)."""
    ones = np.ones(np.shape(x)[:-1] + (1,), tangent_dtype(x))
    return np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)


# --- extrema ---


def _chooser_grad(dy, x, y, axes, keepdims, b, skips_nan=False):
    """The derivative of max or min: ties split it evenly, as in autograd and JAX. `skips_nan`:
    of nanmax or nanmin, where a nan equals no result and gets no share."""
    plain = type(x) is np.ndarray and x.dtype is FLOAT64  # (then hit is a plain array too)
    hit = np.equal(x, expand_reduced(y, axes, keepdims))
    if b.get("where") is not None:
        hit = np.logical_and(hit, b["where"])
    if plain:  # the same casts and sum as below, without numpy's Python layers (a softmax's max)
        hit = hit.astype(FLOAT64)
        count = np.add.reduce(hit, axis=axes, keepdims=True)
    else:
        hit = np.astype(hit, tangent_dtype(x, dy))
        count = np.sum(hit, axis=axes, keepdims=True)
    if skips_nan or "initial" in b or "where" in b:
        # a group decided by `initial` alone, or (nanmax, nanmin) holding only nans, has no
        # element to share among
        count = np.maximum(count, 1)
    # hit is 0 or 1, so hit (dy/count) is (dy hit)/count to the bit, with one pass over x
    # fewer and no broadcast of dy
    return hit * (expand_reduced(dy, axes, keepdims) / count)


@rrule(np.max, complex=True, formula=whole(
    "{dy} sent to where {a[0]} is largest over {over} (shared at a tie)",
))
def max_rrule(x, *args, **kwargs):
    """Complex values too, in numpy's lexicographic order: the element picked gets the cotangent."""
    axes, keepdims, b = _reduction(np.max, x, args, kwargs)
    y = _reduce(np.max, np.maximum, x, args, kwargs, b, keepdims)

    def max_pullback(dy):
        return NO_TANGENT, cast_like(_chooser_grad(dy, x, y, axes, keepdims, b), x), *_option_tangents(
            np.max, args, lambda: initial_of_extremum(x, y, axes, keepdims, b)(dy))

    return y, max_pullback


@rrule(np.min, complex=True, formula=whole(
    "{dy} sent to where {a[0]} is smallest over {over} (shared at a tie)",
))
def min_rrule(x, *args, **kwargs):
    """Complex values too, in numpy's lexicographic order: the element picked gets the cotangent."""
    axes, keepdims, b = _reduction(np.min, x, args, kwargs)
    y = _reduce(np.min, np.minimum, x, args, kwargs, b, keepdims)

    def min_pullback(dy):
        return NO_TANGENT, cast_like(_chooser_grad(dy, x, y, axes, keepdims, b), x), *_option_tangents(
            np.min, args, lambda: initial_of_extremum(x, y, axes, keepdims, b)(dy))

    return y, min_pullback


@rrule(np.nanmax, formula=whole(
    "{dy} sent to where {a[0]} is largest over {over}, nan skipped (shared at a tie; 0 to a nan)",
))
def nanmax_rrule(x, *args, **kwargs):
    """np.max's among the elements that are not nan (shared at a tie); a nan gets 0, also in a group of nans only."""
    axes, keepdims, b = _reduction(np.nanmax, x, args, kwargs)
    y = np.nanmax(x, *args, **kwargs)

    def nanmax_pullback(dy):
        # a nan equals no result, so it gets no share; a group of nans only has the result nan,
        # which no element equals: its elements get 0 (as JAX's), and initial= gets dy if given
        dx = _chooser_grad(dy, x, y, axes, keepdims, b, skips_nan=True)
        return NO_TANGENT, cast_like(dx, x), *_option_tangents(
            np.nanmax, args, lambda: initial_of_extremum(x, y, axes, keepdims, b)(dy))

    return y, nanmax_pullback


@rrule(np.nanmin, formula=whole(
    "{dy} sent to where {a[0]} is smallest over {over}, nan skipped (shared at a tie; 0 to a nan)",
))
def nanmin_rrule(x, *args, **kwargs):
    """np.min's among the elements that are not nan (shared at a tie); a nan gets 0, also in a group of nans only."""
    axes, keepdims, b = _reduction(np.nanmin, x, args, kwargs)
    y = np.nanmin(x, *args, **kwargs)

    def nanmin_pullback(dy):
        # as nanmax's: a nan equals no result, so it gets no share
        dx = _chooser_grad(dy, x, y, axes, keepdims, b, skips_nan=True)
        return NO_TANGENT, cast_like(dx, x), *_option_tangents(
            np.nanmin, args, lambda: initial_of_extremum(x, y, axes, keepdims, b)(dy))

    return y, nanmin_pullback


# np.amax and np.amin are the same functions under their old names (distinct objects in numpy 2)
rrule(np.amax, complex=True, formula=FORMULAS[np.max])(max_rrule)
rrule(np.amin, complex=True, formula=FORMULAS[np.min])(min_rrule)


@rrule(np.ptp, complex=True, formula=whole(
    "{dy} to the largest, -{dy} to the smallest of {a[0]} over {over}",
))
def ptp_rrule(x, *args, **kwargs):
    """Complex values too, in numpy's lexicographic order: the element picked gets the cotangent."""
    axes, keepdims, b = _reduction(np.ptp, x, args, kwargs)
    hi = np.max(x, axis=b.get("axis"), keepdims=keepdims)
    lo = np.min(x, axis=b.get("axis"), keepdims=keepdims)

    def ptp_pullback(dy):
        # ptp = max - min
        dx = _chooser_grad(dy, x, hi, axes, keepdims, {}) - _chooser_grad(dy, x, lo, axes, keepdims, {})
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return np.subtract(hi, lo), ptp_pullback


# --- the median ---


def _middle_values(x, axes):
    """The two middle values of `x` over `axes` (the same one for an odd count), each with the
    reduced axes kept as size-1 axes."""
    ndim, kept = np.ndim(x), np.ndim(x) - len(axes)
    moved = np.moveaxis(x, axes, tuple(range(kept, ndim)))
    ordered = np.sort(np.reshape(moved, np.shape(moved)[:kept] + (-1,)), axis=-1)
    n = np.shape(ordered)[-1]
    shape = tuple(1 if i in axes else s for i, s in enumerate(np.shape(x)))
    return np.reshape(ordered[..., (n - 1) // 2], shape), np.reshape(ordered[..., n // 2], shape)


@rrule(np.median, complex=True, formula=whole(
    "{dy} sent to the middle value(s) of {a[0]} over {over} (half each for two, shared at a tie)",
))
def median_rrule(x, *args, **kwargs):
    """The middle value's derivative (half to each of two middle values), shared at a tie.

    Each middle value's share of the cotangent goes to the elements equal to it, split evenly
    at a tie, as for max and min. nan in a group makes its median and its gradient nan."""
    axes, keepdims, b = _reduction(np.median, x, args, kwargs)
    reject(np.median, b, ["out"])
    y = np.median(x, axis=b.get("axis"), keepdims=keepdims)
    if np.size(x) == 0:
        weights = np.zeros(np.shape(x), tangent_dtype(x))
    else:
        weights = 0.0
        with np.errstate(invalid="ignore", divide="ignore"):  # (0/0 in a group holding nan)
            for middle in _middle_values(x, axes):
                hit = np.astype(np.equal(x, middle), tangent_dtype(x))
                weights = weights + 0.5 * hit / np.sum(hit, axis=axes, keepdims=True)
        # numpy's median of a group holding nan is nan (np.sort puts nan last, past the middle)
        weights = np.where(np.isnan(expand_reduced(y, axes, keepdims)), np.nan, weights)

    def median_pullback(dy):
        return NO_TANGENT, cast_like(expand_reduced(dy, axes, keepdims) * weights, x), *no_tangents(args)

    return y, median_pullback


# --- moments ---


def _conj_if_complex(c):
    """conj(c) for a complex c (the cotangent of the real |c|² is 2 conj(c) dy); a real c as it is."""
    return np.conjugate(c) if dtype_of(c).kind == "c" else c


def _complex_cotangent(dy, x):
    """The real cotangent `dy` of a real result (var, std), cast to the dtype of a complex `x`:
    a cast whose own pullback takes the real part, so that a second derivative passes dy a real
    cotangent. For a real `x`, `dy` as it is."""
    if dtype_of(x).kind != "c":
        return dy
    return complex(dy) if type(dy) is float or type(dy) is int else np.astype(dy, dtype_of(x))


def _ddof(b) -> float:
    return b.get("ddof", 0) if b.get("correction") is None else b["correction"]


@rrule(np.var, complex=True, formula=whole(
    "{dy} · 2({a[0]} - mean)/(n - ddof) over {over} (conjugated for a complex {a[0]})",
))
def var_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.var, x, args, kwargs)
    reject(np.var, b, ["where"])

    def var_pullback(dy):
        # d/dx Σ|x - mean|²/(n - ddof) = 2 conj(x - mean)/(n - ddof) (a real result: for a
        # complex x, d|c|² = 2 Re(conj(c) dc)); the mean's own share sums to 0
        centred = _conj_if_complex(x - np.mean(x, axis=axes, keepdims=True))
        dy = _complex_cotangent(dy, x)
        dx = expand_reduced(dy, axes, keepdims) * (2 * centred / (_count(x, axes) - _ddof(b)))
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return np.var(x, *args, **kwargs), var_pullback


@rrule(np.std, complex=True, formula=whole(
    "{dy} · ({a[0]} - mean)/((n - ddof)·{y}) over {over} (conjugated for a complex {a[0]})",
))
def std_rrule(x, *args, **kwargs):
    axes, keepdims, b = _reduction(np.std, x, args, kwargs)
    reject(np.std, b, ["where"])
    y = np.std(x, *args, **kwargs)

    def std_pullback(dy):
        # d/dx √var = conj(x - mean)/((n - ddof) std); nan where std is 0 (0/0), as in autograd and JAX
        centred = _conj_if_complex(x - np.mean(x, axis=axes, keepdims=True))
        if _count(x, axes) == 1:  # the std of one number (a 0-d array) is 0 whatever it is: slope 0
            return NO_TANGENT, cast_like(expand_reduced(dy, axes, keepdims) * centred, x), *no_tangents(args)
        scale = expand_reduced(y, axes, keepdims) * (_count(x, axes) - _ddof(b))
        # the real factor first, then cast: a complex x's centred values meet only a product
        dx = _complex_cotangent(expand_reduced(dy, axes, keepdims) / scale, x) * centred
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return y, std_pullback


# --- cumulative sums and products ---


@rrule(np.cumsum, forward=linear_frule(np.cumsum), complex=True,
       formula=whole("the cumulative sum of {dy} taken backwards along {over}"))
def cumsum_rrule(x, *args, **kwargs):
    axis = bind(np.cumsum, (x, *args), kwargs).get("axis")

    def cumsum_pullback(dy):
        # y_j = Σ_{i≤j} x_i, so dx_i = Σ_{j≥i} dy_j: a cumulative sum from the end
        if axis is None:  # numpy flattened x
            dx = np.reshape(np.flip(np.cumsum(np.flip(dy))), np.shape(x))
        else:
            dx = np.flip(np.cumsum(np.flip(dy, axis), axis), axis)
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return np.cumsum(x, *args, **kwargs), cumsum_pullback


@rrule(np.cumprod, complex=True, formula=whole(
    "the backward cumulative sum of {dy} · {y}, divided by {a[0]}, along {over}",
))
def cumprod_rrule(x, *args, **kwargs):
    axis = bind(np.cumprod, (x, *args), kwargs).get("axis")

    def cumprod_pullback(dy):
        if axis is None:  # numpy flattened x
            dx = np.reshape(_cumprod_grad(dy, np.ravel(x)), np.shape(x))
        else:
            ax = normalize_axis(axis, np.ndim(x))
            dx = np.moveaxis(_cumprod_grad(np.moveaxis(dy, ax, -1), np.moveaxis(x, ax, -1)), -1, ax)
        return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

    return np.cumprod(x, *args, **kwargs), cumprod_pullback


def _cumprod_grad(dy, x):
    """The cotangent of cumprod along the last axis, right with zeros in x; O(n²) in that axis.

    y_j = Π_{k≤j} x_k, so dx_i = Π_{k<i} x_k · Σ_{j≥i} dy_j Π_{i<k≤j} x_k: no division by x_i.
    """
    n = np.shape(x)[-1]
    dt = tangent_dtype(x, dy)
    # t[..., i, j] = x_j above the diagonal and 1 elsewhere; its running product along j is
    # Π_{i<k≤j} x_k, which the upper triangle keeps for j ≥ i
    t = np.where(np.triu(np.ones((n, n), bool), 1), np.expand_dims(x, -2), np.ones((), dt))
    runs = np.cumprod(t, axis=-1) * np.triu(np.ones((n, n), dt))
    after = np.sum(runs * np.expand_dims(dy, -2), axis=-1)
    return _exclusive_cumprod(x) * after

"""Rules for functions that pick, reorder or clean elements: append, rollaxis, partition,
select, unique, nan_to_num, real_if_close and angle; isclose and allclose are
non-differentiable.

Each passes every element of the result from one element of an input (or a constant), so
the pullback sends the cotangent back to where each element came from.

Complex values (the rules declared with ``complex=True``): the complex tests in
tests/rules/test_numpy_extra.py pass for each: moves and picks of elements (a real choice or
default beside a complex one gets the real part of its cotangent), the cleaning of each part of
a complex number apart, the angle of a complex number, and partition in numpy's lexicographic
order.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..registry import nondifferentiable, rrule, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk
from ._forward import linear_frule
from ._shapes import bind, cast_like, dtype_of, no_tangents, normalize_axis, tangent_dtype

# --- append ---


@rrule(np.append, complex=True, formula=whole(
    "the first part of {dy}, shaped like {a[0]}",
    "the rest of {dy}, shaped like {a[1]}",
    None,
))
def append_rrule(arr, values, *args, **kwargs):
    axis = bind(np.append, (arr, values, *args), kwargs).get("axis")
    n = np.size(arr) if axis is None else np.shape(arr)[axis]

    def append_pullback(dy):
        # numpy flattens both without an axis, and joins them along it otherwise
        first, second = np.split(dy, [n], axis=0 if axis is None else axis)
        da = Thunk(lambda: cast_like(np.reshape(first, np.shape(arr)), arr))
        dv = Thunk(lambda: cast_like(np.reshape(second, np.shape(values)), values))
        return NO_TANGENT, da, dv, *no_tangents(args)

    return np.append(arr, values, *args, **kwargs), append_pullback


# --- rollaxis ---


def _rollaxis_perm(ndim, axis, start):
    """The permutation np.rollaxis applies (numpy's own normalization of axis and start)."""
    axis = operator.index(axis) % ndim
    start = operator.index(start)
    start = start + ndim if start < 0 else start
    perm = list(range(ndim))
    if axis < start:
        start -= 1
    if axis == start:
        return perm
    perm.remove(axis)
    perm.insert(start, axis)
    return perm


@rrule(np.rollaxis, complex=True, forward=linear_frule(np.rollaxis), formula=whole("{dy} with its axes put back in the order of {a[0]}", None))
def rollaxis_rrule(a, *args, **kwargs):
    b = bind(np.rollaxis, (a, *args), kwargs)
    perm = _rollaxis_perm(np.ndim(a), b["axis"], b.get("start", 0))

    def rollaxis_pullback(dy):
        return NO_TANGENT, np.transpose(dy, np.argsort(perm)), *no_tangents(args)

    return np.rollaxis(a, *args, **kwargs), rollaxis_pullback


# --- partition ---


@rrule(np.partition, complex=True, formula=whole("{dy} put back where partition took each value from", None))
def partition_rrule(a, *args, **kwargs):
    """Complex values too, in numpy's lexicographic order: the element picked gets the cotangent."""
    b = bind(np.partition, (a, *args), kwargs)
    if b.get("order") is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.partition with order= (fields)")
    axis = b.get("axis", -1)
    kind = b.get("kind", "introselect")
    flat = np.ravel(a) if axis is None else a
    ax = 0 if axis is None else axis
    idx = np.argpartition(flat, b["kth"], axis=ax, kind=kind)
    y = np.take_along_axis(flat, idx, axis=ax)
    inverse = np.argsort(idx, axis=ax)

    def partition_pullback(dy):
        # a permutation along the axis: the inverse permutation sends each cotangent home
        dx = np.take_along_axis(dy, inverse, axis=ax)
        return NO_TANGENT, np.reshape(dx, np.shape(a)), *no_tangents(args)

    return y, partition_pullback


# --- select ---


@rrule(np.select, complex=True, formula=whole(
    "{dy} where this choice's condition is the first true one (for the default: where "
    "none is), else 0",
))
def select_rrule(condlist, choicelist, *default, **kwargs):
    # (a default given by position has a tangent; one left out, or given by keyword, has none
    # to return: the pullback returns one tangent per argument of the call)
    given = len(default)
    default = default[0] if default else kwargs.pop("default", 0)
    y = np.select(condlist, choicelist, default, **kwargs)
    # element by element, the first true condition picks its choice; none picks the default
    taken = np.zeros(np.shape(y), dtype=bool)
    masks = []
    for cond in condlist:
        cond = np.broadcast_to(cond, np.shape(y))
        masks.append(cond & ~taken)
        taken = taken | cond
    rest = ~taken

    def select_pullback(dy):
        dchoices = [cast_like(unbroadcast(np.where(m, dy, 0), c), c) for m, c in zip(masks, choicelist)]
        ddefault = Thunk(lambda: cast_like(unbroadcast(np.where(rest, dy, 0), default), default))
        return (NO_TANGENT, NO_TANGENT, type(choicelist)(dchoices), ddefault)[:3 + given]

    return y, select_pullback


# --- unique values ---


@rrule(np.unique, formula=whole(
    "{dy} put at the first occurrence of each unique value (or slice along axis) of {a[0]}, the one "
    "return_index names; 0 at the later ones",
))
def unique_rrule(ar, *args, **kwargs):
    """Each unique value (or slice along axis) passes its cotangent to its first occurrence (return_index's), as JAX does.

    The later occurrences get 0; the index, inverse and counts are integers, which pass nothing."""
    b = bind(np.unique, (ar, *args), kwargs)
    extra = [name for name in ("return_index", "return_inverse", "return_counts") if b.get(name)]
    axis = b.get("axis")
    options = {k: v for k, v in b.items() if k in ("axis", "equal_nan", "sorted")}
    values, index, inverse, counts = np.unique(ar, True, True, True, **options)
    out = {"return_index": index, "return_inverse": inverse, "return_counts": counts}
    shape = np.shape(ar)
    ax = None if axis is None else normalize_axis(axis, len(shape))
    n = math.prod(shape) if ax is None else shape[ax]
    # where each element (each slice along axis) sends its cotangent from: its unique value's
    # place if it is that value's first occurrence, else place k, a 0 appended to the cotangent
    inverse = np.reshape(inverse, (n,))
    first = np.equal(np.take_along_axis(index, inverse, 0), np.arange(n))
    source = np.where(first, inverse, np.shape(index)[0])

    def unique_pullback(dout):
        dv = dout[0] if extra else dout
        if dv is ZERO:
            return NO_TANGENT, ZERO, *no_tangents(args)
        # a gather by a traced index (take_along_axis), so that a pullback of the pullback
        # differentiates it again in either mode
        if ax is None:
            padded = np.concatenate([np.ravel(dv), np.zeros(1, tangent_dtype(ar, dv))])
            dx = np.reshape(np.take_along_axis(padded, source, 0), shape)
        else:
            pad = np.zeros(shape[:ax] + (1,) + shape[ax + 1:], tangent_dtype(ar, dv))
            along = np.reshape(source, (1,) * ax + (n,) + (1,) * (len(shape) - ax - 1))
            dx = np.take_along_axis(np.concatenate([dv, pad], axis=ax), np.broadcast_to(along, shape), ax)
        return NO_TANGENT, cast_like(dx, ar), *no_tangents(args)

    return ((values, *(out[name] for name in extra)) if extra else values), unique_pullback


# --- cleaning values ---


@rrule(np.nan_to_num, complex=True, formula=whole(
    "{dy} where {a[0]} is finite, 0 at nan and ±inf (each part of a complex number apart)",
    None,
))
def nan_to_num_rrule(x, *args, **kwargs):
    def nan_to_num_pullback(dy):
        # the identity on finite values; nan and ±inf become constants
        if dtype_of(x).kind == "c":
            # the real and imaginary parts are cleaned apart: each keeps its own share,
            # c = Re dy where Re x is finite, + i Im dy where Im x is (Re dy = (dy + conj dy)/2,
            # i Im dy = (dy - conj dy)/2: linear in dy, without a real part to differentiate)
            re, im = np.isfinite(np.real(x)), np.isfinite(np.imag(x))
            one_part = np.where(re, dy + np.conjugate(dy), np.where(im, dy - np.conjugate(dy), 0)) * 0.5
            return NO_TANGENT, np.where(re & im, dy, one_part), *no_tangents(args)
        return NO_TANGENT, np.where(np.isfinite(x), dy, 0), *no_tangents(args)

    return np.nan_to_num(x, *args, **kwargs), nan_to_num_pullback


@rrule(np.real_if_close, complex=True, formula=whole(
    "{dy} (the imaginary parts it dropped were within tolerance of 0)",
    None,
))
def real_if_close_rrule(a, *args, **kwargs):
    def real_if_close_pullback(dy):
        # the identity on real values; the real part of complex ones (autograd's convention, as
        # np.real: a real cotangent of the real part is the complex argument's cotangent)
        return NO_TANGENT, cast_like(dy, a), *no_tangents(args)

    return np.real_if_close(a, *args, **kwargs), real_if_close_pullback


@rrule(np.angle, complex=True, formula=whole(
    "-i·{dy}/{a[0]} for a complex {a[0]} (times 180/π with deg); 0 for a real one (0 or π, flat "
    "on either side)",
    None,
))
def angle_rrule(z, *args, **kwargs):
    deg = bind(np.angle, (z, *args), kwargs).get("deg", False)

    def angle_pullback(dy):
        if dtype_of(z).kind != "c":
            # a real number's angle is 0 or π: flat away from 0
            return NO_TANGENT, ZERO, *no_tangents(args)
        # angle = atan2(y, x) has d angle = (x dy - y dx)/|z|², so its cotangent is
        # dy (-y - ix)/|z|² = -i dy conj(z)/|z|² = -i dy / z (autograd's convention; nan at 0)
        scale = 180 / np.pi if deg else 1
        return NO_TANGENT, (-1j * scale) * _complex_cotangent(dy, z) / z, *no_tangents(args)

    return np.angle(z, *args, **kwargs), angle_pullback


def _complex_cotangent(dy, z):
    """The real cotangent `dy` of a real result of the complex `z`, cast to z's dtype: a cast
    whose own pullback takes the real part, so that a second derivative passes dy a real
    cotangent."""
    return dtype_of(z).type(dy) if type(dy) is float or type(dy) is int else np.astype(dy, dtype_of(z))


# --- comparisons of closeness ---

nondifferentiable(np.isclose, np.allclose)

# --- indices (partition's pullback reads them, also while a Tracer records it) ---

nondifferentiable(np.argpartition)

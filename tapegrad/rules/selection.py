"""Rules for functions that pick, reorder or clean elements: append, rollaxis, partition,
select, nan_to_num, real_if_close and angle of real input; isclose and allclose are
non-differentiable.

Each passes every element of the result from one element of an input (or a constant), so
the pullback sends the cotangent back to where each element came from.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import is_complex_value
from ..registry import complex_rules, nondifferentiable, rrule, unbroadcast
from ..tangents import NO_TANGENT, ZERO, Thunk
from ._shapes import bind, cast_like, no_tangents

# --- append ---


@rrule(np.append)
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


@rrule(np.rollaxis)
def rollaxis_rrule(a, *args, **kwargs):
    b = bind(np.rollaxis, (a, *args), kwargs)
    perm = _rollaxis_perm(np.ndim(a), b["axis"], b.get("start", 0))

    def rollaxis_pullback(dy):
        return NO_TANGENT, np.transpose(dy, np.argsort(perm)), *no_tangents(args)

    return np.rollaxis(a, *args, **kwargs), rollaxis_pullback


# --- partition ---


@rrule(np.partition)
def partition_rrule(a, *args, **kwargs):
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


@rrule(np.select)
def select_rrule(condlist, choicelist, default=0, **kwargs):
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
        return NO_TANGENT, NO_TANGENT, type(choicelist)(dchoices), ddefault

    return y, select_pullback


# --- cleaning values ---


@rrule(np.nan_to_num)
def nan_to_num_rrule(x, *args, **kwargs):
    def nan_to_num_pullback(dy):
        # the identity on finite values; nan and ±inf become constants
        return NO_TANGENT, np.where(np.isfinite(x), dy, 0), *no_tangents(args)

    return np.nan_to_num(x, *args, **kwargs), nan_to_num_pullback


@rrule(np.real_if_close)
def real_if_close_rrule(a, *args, **kwargs):
    def real_if_close_pullback(dy):
        # the identity on real values; the real part of complex ones (autograd's convention, as np.real)
        return NO_TANGENT, dy, *no_tangents(args)

    return np.real_if_close(a, *args, **kwargs), real_if_close_pullback


@rrule(np.angle)
def angle_rrule(z, *args, **kwargs):
    if is_complex_value(z):
        scale = -1j * (180 / np.pi if bind(np.angle, (z, *args), kwargs).get("deg") else 1.0)

        def angle_pullback(dy):
            # angle z = Im log z, real and not holomorphic: dθ = Im(dz / z) = Re(-i dz / z), so
            # the cotangent (autograd's convention) is -i dy / z; nan at 0, where the angle has
            # no limit (as arctan2 at the origin)
            return NO_TANGENT, np.divide(dy * scale, z), *no_tangents(args)

        return np.angle(z, *args, **kwargs), angle_pullback

    def angle_pullback(dy):
        # a real number's angle is 0 or π: flat away from 0
        return NO_TANGENT, ZERO, *no_tangents(args)

    return np.angle(z, *args, **kwargs), angle_pullback


complex_rules(np.angle)  # (a real result of a complex argument, derived above)

# --- comparisons of closeness ---

nondifferentiable(np.isclose, np.allclose)

# --- indices (partition's pullback reads them, also while a Tracer records it) ---

nondifferentiable(np.argpartition)

"""Rules that move elements without changing them: reshapes, axis permutations, flips, copies, casts.

Each of these maps x to y by a fixed rearrangement, so its pullback applies the inverse
rearrangement to the cotangent (``reshape`` back, the inverse permutation, the opposite roll).
Being linear maps with real coefficients, they carry complex values as they are (autograd's
convention); astype passes a real argument the real part of a complex cotangent.

Complex values (the rules declared with ``complex=True``): rearrangements (linear, with real
coefficients) and casts: the complex tests in tests/rules/test_shape.py pass for each.
"""
from __future__ import annotations

import numpy as np

from ..registry import declare, rrule, whole

from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, ZERO
from ._forward import linear_frule
from ._shapes import bind, cast_like, dtype_of, no_tangents

# --- reshapes ---


@rrule(np.reshape, forward=linear_frule(np.reshape), complex=True, view=True,
       formula=whole("{dy} reshaped to the shape of {a[0]}"))
def reshape_rrule(x, *args, **kwargs):
    order = bind(np.reshape, (x, *args), kwargs).get("order", "C")

    def reshape_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x), order=order), *no_tangents(args)

    return np.reshape(x, *args, **kwargs), reshape_pullback


@rrule(np.ravel, forward=linear_frule(np.ravel), complex=True, view=True,
       formula=whole("{dy} reshaped to the shape of {a[0]}"))
def ravel_rrule(x, *args, **kwargs):
    order = bind(np.ravel, (x, *args), kwargs).get("order", "C")

    def ravel_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x), order=order), *no_tangents(args)

    return np.ravel(x, *args, **kwargs), ravel_pullback


@rrule(np.expand_dims, forward=linear_frule(np.expand_dims), complex=True, view=True,
       formula=whole("{dy} reshaped to the shape of {a[0]}"))
def expand_dims_rrule(x, *args, **kwargs):
    def expand_dims_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x)), *no_tangents(args)

    return np.expand_dims(x, *args, **kwargs), expand_dims_pullback


@rrule(np.squeeze, forward=linear_frule(np.squeeze), complex=True, view=True,
       formula=whole("{dy} reshaped to the shape of {a[0]}"))
def squeeze_rrule(x, *args, **kwargs):
    def squeeze_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x)), *no_tangents(args)

    return np.squeeze(x, *args, **kwargs), squeeze_pullback


@rrule(np.broadcast_to, forward=linear_frule(np.broadcast_to), complex=True, view="read-only", formula=whole(
    "{dy} summed over the axes the broadcast added",
))
def broadcast_to_rrule(x, *args, **kwargs):
    def broadcast_to_pullback(dy):
        # every copy of an element passes its share back: sum over the broadcast axes
        return NO_TANGENT, unbroadcast(dy, x), *no_tangents(args)

    return np.broadcast_to(x, *args, **kwargs), broadcast_to_pullback


def _atleast_tangents(dy, arys):
    """Reshape back: one array for one argument; for several, one per array of the returned tuple."""
    if len(arys) == 1:
        return (np.reshape(dy, np.shape(arys[0])),)
    # ZeroTangent() stands for a returned array that was not used
    return tuple(d if d is ZERO else np.reshape(d, np.shape(x)) for d, x in zip(dy, arys))


@rrule(np.atleast_1d, complex=True, view=True, formula=whole("{dy} reshaped to the shape of {a[0]}"))
def atleast_1d_rrule(*arys):
    def atleast_1d_pullback(dy):
        return NO_TANGENT, *_atleast_tangents(dy, arys)

    return np.atleast_1d(*arys), atleast_1d_pullback


@rrule(np.atleast_2d, complex=True, view=True, formula=whole("{dy} reshaped to the shape of {a[0]}"))
def atleast_2d_rrule(*arys):
    def atleast_2d_pullback(dy):
        return NO_TANGENT, *_atleast_tangents(dy, arys)

    return np.atleast_2d(*arys), atleast_2d_pullback


@rrule(np.atleast_3d, complex=True, view=True, formula=whole("{dy} reshaped to the shape of {a[0]}"))
def atleast_3d_rrule(*arys):
    def atleast_3d_pullback(dy):
        return NO_TANGENT, *_atleast_tangents(dy, arys)

    return np.atleast_3d(*arys), atleast_3d_pullback


# --- axis permutations ---


@rrule(np.transpose, forward=linear_frule(np.transpose), complex=True, view=True, formula=whole(
    "{dy} with its axes put back in the order of {a[0]}",
))
def transpose_rrule(x, *args, **kwargs):
    axes = bind(np.transpose, (x, *args), kwargs).get("axes")

    def transpose_pullback(dy):
        if axes is None:
            return NO_TANGENT, np.transpose(dy), *no_tangents(args)
        ndim = np.ndim(x)
        inverse = tuple(int(i) for i in np.argsort([a % ndim for a in axes]))
        return NO_TANGENT, np.transpose(dy, inverse), *no_tangents(args)

    return np.transpose(x, *args, **kwargs), transpose_pullback


# x.mT has no rule of its own (numpy's body swaps the last two axes with the rules here), but
# numpy's result is a view of x all the same
declare(np.matrix_transpose, view=True)


@rrule(np.swapaxes, forward=linear_frule(np.swapaxes), complex=True, view=True, formula=whole(
    "{dy} with its axes put back in the order of {a[0]}",
))
def swapaxes_rrule(x, *args, **kwargs):
    b = bind(np.swapaxes, (x, *args), kwargs)

    def swapaxes_pullback(dy):
        return NO_TANGENT, np.swapaxes(dy, b["axis1"], b["axis2"]), *no_tangents(args)

    return np.swapaxes(x, *args, **kwargs), swapaxes_pullback


@rrule(np.moveaxis, forward=linear_frule(np.moveaxis), complex=True, view=True, formula=whole(
    "{dy} with its axes put back in the order of {a[0]}",
))
def moveaxis_rrule(x, *args, **kwargs):
    b = bind(np.moveaxis, (x, *args), kwargs)

    def moveaxis_pullback(dy):
        return NO_TANGENT, np.moveaxis(dy, b["destination"], b["source"]), *no_tangents(args)

    return np.moveaxis(x, *args, **kwargs), moveaxis_pullback


# --- flips and rolls ---


@rrule(np.flip, complex=True, view=True, formula=whole("{dy} flipped back"))
def flip_rrule(x, *args, **kwargs):
    axis = bind(np.flip, (x, *args), kwargs).get("axis")

    def flip_pullback(dy):
        return NO_TANGENT, np.flip(dy, axis), *no_tangents(args)

    return np.flip(x, *args, **kwargs), flip_pullback


@rrule(np.fliplr, complex=True, view=True, formula=whole("{dy} flipped back"))
def fliplr_rrule(x):
    def fliplr_pullback(dy):
        return NO_TANGENT, np.fliplr(dy)

    return np.fliplr(x), fliplr_pullback


@rrule(np.flipud, complex=True, view=True, formula=whole("{dy} flipped back"))
def flipud_rrule(x):
    def flipud_pullback(dy):
        return NO_TANGENT, np.flipud(dy)

    return np.flipud(x), flipud_pullback


@rrule(np.roll, complex=True, forward=linear_frule(np.roll), formula=whole("{dy} rolled back"))
def roll_rrule(x, *args, **kwargs):
    b = bind(np.roll, (x, *args), kwargs)

    def roll_pullback(dy):
        # roll the cotangent back by the opposite shift
        return NO_TANGENT, np.roll(dy, np.negative(b["shift"]), b.get("axis")), *no_tangents(args)

    return np.roll(x, *args, **kwargs), roll_pullback


@rrule(np.rot90, complex=True, view=True, formula=whole("{dy} rotated back"))
def rot90_rrule(x, *args, **kwargs):
    b = bind(np.rot90, (x, *args), kwargs)

    def rot90_pullback(dy):
        return NO_TANGENT, np.rot90(dy, -b.get("k", 1), b.get("axes", (0, 1))), *no_tangents(args)

    return np.rot90(x, *args, **kwargs), rot90_pullback


# --- copies and casts ---


@rrule(np.copy, complex=True, formula=whole("{dy}"))
def copy_rrule(x, *args, **kwargs):
    def copy_pullback(dy):
        return NO_TANGENT, dy, *no_tangents(args)

    return np.copy(x, *args, **kwargs), copy_pullback


@rrule(np.astype, complex=True, formula=whole("{dy} cast back to the dtype of {a[0]}", None))
def astype_rrule(x, dtype, *args, **kwargs):
    inexact = np.dtype(dtype).kind in "fc" and dtype_of(x).kind in "fc"

    def astype_pullback(dy):
        # the cotangent is cast back to x's dtype; a cast to integers or bool is piecewise
        # constant (derivative 0), and an integer x has no derivative to receive
        dx = cast_like(dy, x) if inexact else ZERO
        return NO_TANGENT, dx, NO_TANGENT, *no_tangents(args)

    return np.astype(x, dtype, *args, **kwargs), astype_pullback

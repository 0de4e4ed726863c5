"""Rules that build arrays from pieces or copies: concatenate and stack, split, tile, repeat, pad.

Joining is undone by cutting the cotangent into one piece per input (a list or tuple like
the one given), and cutting by joining the cotangents of the pieces; copies pass back the
sum of their shares.

Complex values (the rules declared with ``complex=True``): copies of elements, joined or cut
(linear, with real coefficients): their transposes are right for complex values too, and a real
piece gets the real part of its cotangent (`cast_like`); the complex tests in
tests/rules/test_shape.py pass for each.
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import frule, rrule, stand_in, whole
from ..structures import nested
from ..tangents import NO_TANGENT, ZERO
from ._forward import joined_frule, linear_frule
from ._shapes import bind, cast_like, no_tangents, normalize_axis, tangent_dtype
from .indexing import scatter_add

# --- joining ---


def _cut(dy, arrays, shapes, axis):
    """Cut `dy` along `axis` into one cotangent per array, where array i took `shapes[i]` in `dy`."""
    pieces, start = [], 0
    lead = (slice(None),) * axis
    for x, s in zip(arrays, shapes):
        piece = dy[lead + (slice(start, start + s[axis]),)]
        pieces.append(cast_like(np.reshape(piece, np.shape(x)), x))
        start += s[axis]
    return _like_sequence(pieces, arrays)


def _like_sequence(pieces, arrays):
    """The cotangents in the container the arrays came in; an array of arrays gets an array."""
    if type(arrays) is list or type(arrays) is tuple:
        return type(arrays)(pieces)
    return np.stack(pieces)


def _stand_ins(arrays):
    """The joined arrays as stand-ins (their pullbacks need only shapes and dtypes), in their
    container; a piece written as a list (``[x[0], 1.0]``) as an array of its shape and dtype,
    which numpy's np.shape would otherwise make of it (refused where it holds traced values)."""
    if type(arrays) is list or type(arrays) is tuple:
        return type(arrays)([_listed(x) if type(x) is list or type(x) is tuple else stand_in(x)
                             for x in arrays])
    return stand_in(arrays)


def _joinable(tup):
    """The pieces, a piece written as a list made one array by np.stack, which sees traced values
    inside it (numpy's hstack, vstack, dstack and column_stack convert each piece themselves,
    refused for a list holding a value traced at an enclosing level)."""
    return [np.stack([_joinable([v])[0] for v in x]) if type(x) is list or type(x) is tuple else x
            for x in tup]


def _listed(x):
    """An array of the shape and dtype of a piece given as a list, holding no data."""
    leaves = list(nested(x))
    dtype = np.result_type(*[v.dtype if hasattr(v, "dtype") else np.result_type(v) for v in leaves]) if leaves else float
    return np.broadcast_to(np.zeros((), dtype), _shape_of(x))


def _as_shape(fn, x):
    """The shape `fn` (atleast_2d, ...) gives x, from a stand-in that holds no data."""
    return np.shape(fn(np.broadcast_to(0.0, _shape_of(x))))


def _shape_of(x):
    """np.shape(x), without numpy's conversion of a list: one holding traced values (a piece
    written ``[x[0], 1.0]``) would be refused by it."""
    if type(x) is list or type(x) is tuple:
        return (len(x),) + (_shape_of(x[0]) if x else ())
    return np.shape(x)


@rrule(np.concatenate, complex=True, forward=joined_frule(np.concatenate),
       formula=whole("the piece of {dy} where each argument went"))
def concatenate_rrule(arrays, *args, **kwargs):
    axis = bind(np.concatenate, (arrays, *args), kwargs).get("axis", 0)
    y = np.concatenate(arrays, *args, **kwargs)
    arrays = _stand_ins(arrays)

    def concatenate_pullback(dy):
        if axis is None:  # numpy joined the flattened arrays
            return NO_TANGENT, _cut(dy, arrays, [(np.size(x),) for x in arrays], 0), *no_tangents(args)
        shapes = [np.shape(x) for x in arrays]
        pieces = _cut(dy, arrays, shapes, normalize_axis(axis, np.ndim(dy)))
        return NO_TANGENT, pieces, *no_tangents(args)

    return y, concatenate_pullback


@rrule(np.stack, complex=True, forward=joined_frule(np.stack),
       formula=whole("the piece of {dy} where each argument went"))
def stack_rrule(arrays, *args, **kwargs):
    y = np.stack(arrays, *args, **kwargs)
    axis = normalize_axis(bind(np.stack, (arrays, *args), kwargs).get("axis", 0), np.ndim(y))
    arrays = _stand_ins(arrays)

    def stack_pullback(dy):
        # each array became one slot of the new axis
        lead = (slice(None),) * axis
        pieces = [cast_like(dy[lead + (i,)], x) for i, x in enumerate(arrays)]
        return NO_TANGENT, _like_sequence(pieces, arrays), *no_tangents(args)

    return y, stack_pullback


@rrule(np.hstack, complex=True, forward=joined_frule(np.hstack),
       formula=whole("the piece of {dy} where each argument went"))
def hstack_rrule(tup, **kwargs):
    y = np.hstack(_joinable(tup), **kwargs)
    tup = _stand_ins(tup)
    shapes = [_as_shape(np.atleast_1d, x) for x in tup]
    # 1-d arrays are joined end to end, others along their second axis
    axis = 0 if shapes and len(shapes[0]) == 1 else 1

    def hstack_pullback(dy):
        return NO_TANGENT, _cut(dy, tup, shapes, axis)

    return y, hstack_pullback


@rrule(np.vstack, complex=True, forward=joined_frule(np.vstack),
       formula=whole("the piece of {dy} where each argument went"))
def vstack_rrule(tup, **kwargs):
    y = np.vstack(_joinable(tup), **kwargs)
    tup = _stand_ins(tup)
    shapes = [_as_shape(np.atleast_2d, x) for x in tup]

    def vstack_pullback(dy):
        return NO_TANGENT, _cut(dy, tup, shapes, 0)

    return y, vstack_pullback


@rrule(np.dstack, complex=True, forward=joined_frule(np.dstack),
       formula=whole("the piece of {dy} where each argument went"))
def dstack_rrule(tup):
    y = np.dstack(_joinable(tup))
    tup = _stand_ins(tup)
    shapes = [_as_shape(np.atleast_3d, x) for x in tup]

    def dstack_pullback(dy):
        return NO_TANGENT, _cut(dy, tup, shapes, 2)

    return y, dstack_pullback


@rrule(np.column_stack, complex=True, forward=joined_frule(np.column_stack),
       formula=whole("the piece of {dy} where each argument went"))
def column_stack_rrule(tup):
    y = np.column_stack(_joinable(tup))
    tup = _stand_ins(tup)
    # a 0-d or 1-d array becomes one column; 2-d arrays are joined as they are
    shapes = [np.shape(x) if np.ndim(x) >= 2 else (np.size(x), 1) for x in tup]

    def column_stack_pullback(dy):
        return NO_TANGENT, _cut(dy, tup, shapes, 1)

    return y, column_stack_pullback


# --- splitting ---


def _join(dys, ys, x, axis):
    """Join the cotangents of the pieces of x; ZeroTangent() stands for a piece not used."""
    dt = tangent_dtype(x)
    parts = [np.zeros(np.shape(y), dt) if d is ZERO else d for d, y in zip(dys, ys)]
    return cast_like(np.concatenate(parts, axis=axis), x)


@rrule(np.split, complex=True, view=True, formula=whole(
    "the pieces of {dy} joined back (zeros for a piece not used)",
))
def split_rrule(x, *args, **kwargs):
    axis = bind(np.split, (x, *args), kwargs).get("axis", 0)
    ys = np.split(x, *args, **kwargs)

    def split_pullback(dys):
        return NO_TANGENT, _join(dys, ys, x, axis), *no_tangents(args)

    return ys, split_pullback


@rrule(np.array_split, complex=True, view=True, formula=whole(
    "the pieces of {dy} joined back (zeros for a piece not used)",
))
def array_split_rrule(x, *args, **kwargs):
    axis = bind(np.array_split, (x, *args), kwargs).get("axis", 0)
    ys = np.array_split(x, *args, **kwargs)

    def array_split_pullback(dys):
        return NO_TANGENT, _join(dys, ys, x, axis), *no_tangents(args)

    return ys, array_split_pullback


@rrule(np.hsplit, complex=True, view=True, formula=whole(
    "the pieces of {dy} joined back (zeros for a piece not used)",
))
def hsplit_rrule(x, *args, **kwargs):
    ys = np.hsplit(x, *args, **kwargs)

    def hsplit_pullback(dys):
        # hsplit cuts a 1-d array along its only axis, others along the second
        return NO_TANGENT, _join(dys, ys, x, 0 if np.ndim(x) == 1 else 1), *no_tangents(args)

    return ys, hsplit_pullback


@rrule(np.vsplit, complex=True, view=True, formula=whole(
    "the pieces of {dy} joined back (zeros for a piece not used)",
))
def vsplit_rrule(x, *args, **kwargs):
    ys = np.vsplit(x, *args, **kwargs)

    def vsplit_pullback(dys):
        return NO_TANGENT, _join(dys, ys, x, 0), *no_tangents(args)

    return ys, vsplit_pullback


@rrule(np.dsplit, complex=True, view=True, formula=whole(
    "the pieces of {dy} joined back (zeros for a piece not used)",
))
def dsplit_rrule(x, *args, **kwargs):
    ys = np.dsplit(x, *args, **kwargs)

    def dsplit_pullback(dys):
        return NO_TANGENT, _join(dys, ys, x, 2), *no_tangents(args)

    return ys, dsplit_pullback


# --- copies: tile, repeat ---


@rrule(np.tile, complex=True, forward=linear_frule(np.tile), formula=whole("{dy} with its tiles summed"))
def tile_rrule(x, *args, **kwargs):
    reps = bind(np.tile, (x, *args), kwargs)["reps"]
    y = np.tile(x, *args, **kwargs)

    def tile_pullback(dy):
        # y is x copied r_i times along each axis i: view dy as (r_0, s_0, r_1, s_1, ...), sum the r_i
        reps_ = (reps,) if np.ndim(reps) == 0 else tuple(reps)
        d = np.ndim(y)
        r = (1,) * (d - len(reps_)) + reps_
        s = (1,) * (d - np.ndim(x)) + np.shape(x)
        pairs = np.reshape(dy, tuple(n for pair in zip(r, s) for n in pair))
        dx = np.sum(pairs, axis=tuple(range(0, 2 * d, 2)))
        return NO_TANGENT, np.reshape(dx, np.shape(x)), *no_tangents(args)

    return y, tile_pullback


@rrule(np.repeat, complex=True, forward=linear_frule(np.repeat), formula=whole("{dy} with each run of repeats summed"))
def repeat_rrule(x, *args, **kwargs):
    b = bind(np.repeat, (x, *args), kwargs)
    repeats, axis = b["repeats"], b.get("axis")

    def repeat_pullback(dy):
        # axis=None repeats the flattened x; each element passes back the sum over its copies
        shape = (np.size(x),) if axis is None else np.shape(x)
        ax = 0 if axis is None else normalize_axis(axis, len(shape))
        if np.size(repeats) == 1:  # r copies of each: sum over a new axis of length r
            r = int(np.reshape(repeats, -1)[0])
            split = shape[:ax] + (shape[ax], r) + shape[ax + 1:]
            dx = np.sum(np.reshape(dy, split), axis=ax + 1)
        else:  # a different count for each: y is x gathered at these sources
            sources = np.repeat(np.arange(shape[ax]), repeats)
            dx = scatter_add(dy, shape, (slice(None),) * ax + (sources,), tangent_dtype(x, dy))
        return NO_TANGENT, np.reshape(dx, np.shape(x)), *no_tangents(args)

    return np.repeat(x, *args, **kwargs), repeat_pullback


# --- padding ---

#: modes whose padding copies elements of the array (reflect_type="even", the default)
_COPYING_MODES = ("edge", "reflect", "symmetric", "wrap")


@rrule(np.pad, complex=True, formula=whole("{dy} with the padding cut off"))
def pad_rrule(x, *args, **kwargs):
    b = bind(np.pad, (x, *args), kwargs)
    pad_width, mode = b["pad_width"], b.get("mode", "constant")
    extra = b.get("kwargs", {})
    copying = mode in _COPYING_MODES and extra.get("reflect_type", "even") == "even"
    if mode not in ("constant", "empty") and not copying:
        raise NotImplementedError(
            f"tapegrad differentiates numpy.pad in modes constant, empty, {', '.join(_COPYING_MODES)}; "
            f"not mode={mode!r} with {extra}"
        )
    shape = np.shape(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))

    def pad_pullback(dy):
        if not copying:  # the padding is constant: cut out the middle
            middle = tuple(slice(int(w[0]), int(w[0]) + n) for w, n in zip(widths, shape))
            dx = dy[middle]
        else:  # every element of y is a copy of an element of x: pad the positions, scatter back
            size = math.prod(shape)
            sources = np.pad(np.reshape(np.arange(size), shape), pad_width, mode, **extra)
            flat = scatter_add(np.ravel(dy), (size,), (np.ravel(sources),), tangent_dtype(x, dy))
            dx = np.reshape(flat, shape)
        return NO_TANGENT, dx, *no_tangents(args)

    return np.pad(x, *args, **kwargs), pad_pullback


@frule(np.pad)
def pad_frule(dargs, x, *args, **kwargs):
    """Padding is linear in the array: the tangent is the tangent padded the same way, with
    zeros where the padding is a constant (written out, so that a complex tangent needs no
    derived rule)."""
    y, _ = pad_rrule(x, *args, **kwargs)  # its checks of the mode
    dx = dargs[0]
    if dx is ZERO:
        return y, ZERO
    b = bind(np.pad, (x, *args), kwargs)
    mode = b.get("mode", "constant")
    if mode in ("constant", "empty"):
        return y, np.pad(dx, b["pad_width"])
    return y, np.pad(dx, b["pad_width"], mode, **b.get("kwargs", {}))

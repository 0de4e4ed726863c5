"""Rules for reading elements: ``x[index]``, take, take_along_axis, sort, diagonals and triangles.

Each of these gathers elements of x, so its pullback scatters the cotangent back into zeros
shaped like x. The scatter is `scatter_add`, a primitive of its own whose rule is the gather,
so that pullbacks stay differentiable; no pullback writes into an array in place.

Complex values (the rules declared with ``complex=True``): a copy of some elements (or of all,
among zeros): its transpose is right for complex values too; the complex tests in
tests/rules/test_indexing.py pass for each (np.sort in numpy's lexicographic order).
"""
from __future__ import annotations

import operator

import numpy as np

from ..arraylike import ArrayLike
from ..registry import rrule, stand_in, whole
from ..broadcasting import unbroadcast
from ..structures import nested, replace_items
from ..tangents import NO_TANGENT, ZERO
from .piecewise import branch_cotangent
from ._forward import linear_frule
from ._shapes import bind, cast_like, no_tangents, normalize_axis, tangent_dtype

# --- scatter, the transpose of a gather ---


def _is_basic(index) -> bool:
    """True for an index of ints, slices, Ellipsis and None only: it names each position once."""
    items = index if type(index) is tuple else (index,)
    for i in items:
        if i is None or i is Ellipsis or type(i) is slice:
            continue
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            continue
        return False
    return True


def scatter_add(dy, shape, index, dtype):
    """Zeros of `shape` and `dtype`, with `dy` added at `index`: the transpose of ``x[index]``.

    A position that `index` names several times (a repeated integer in an index array)
    receives the sum of its shares. Like a numpy function, it is one call for a traced or
    dual `dy` (recorded, or sent through its rules), and its rule gathers (``dz[index]``), so
    pullbacks that use it can be differentiated again.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.rules.indexing import scatter_add
    >>> scatter_add(np.array([1.0, 2.0, 3.0]), (4,), (np.array([0, 2, 0]),), np.float64)
    array([4., 0., 2., 0.])
    """
    # a traced or dual index (a permutation computed from a traced value) is one call too
    boxed = next((v for v in nested((dy, index)) if isinstance(v, ArrayLike)), None)
    if boxed is not None:
        return boxed._dispatch(scatter_add, (dy, shape, index, dtype), None)
    out = np.zeros(shape, dtype)
    if _is_basic(index):
        out[index] = dy
    else:  # add.at, not assignment: a repeated index must receive every share
        np.add.at(out, index, dy)
    return out


@rrule(scatter_add, complex=True, forward=linear_frule(scatter_add), formula=whole("{dy}[{ix[2]}] (a scatter's tangent is a gather)", None))
def scatter_add_rrule(dy, shape, index, dtype):
    def scatter_add_pullback(dz):
        # the transpose of a scatter is the gather
        return NO_TANGENT, cast_like(_gather(dz, index), dy), NO_TANGENT, NO_TANGENT, NO_TANGENT

    return scatter_add(dy, shape, index, dtype), scatter_add_pullback


def _gather(x, index):
    """``x[index]``, also for a plain `x` and an index holding traced or dual values (one call)."""
    boxed = None if isinstance(x, ArrayLike) else next(
        (v for v in nested((index,)) if isinstance(v, ArrayLike)), None)
    if boxed is not None:
        return boxed._dispatch(operator.getitem, (x, index), None)
    return x[index]


# --- getitem ---


@rrule(operator.getitem, forward=linear_frule(operator.getitem), complex=True, view=True, formula=whole(
    "{dy} scattered into zeros shaped like {a[0]} at [{ix[1]}]",
    None,
))
def getitem_rrule(x, index):
    y = x[index]
    x = stand_in(x)  # only its shape and dtype are needed (a tuple stays as it is)

    def getitem_pullback(dy):
        if isinstance(x, (tuple, list)):
            # an element (or slice) of a tuple result: ZeroTangent() for the elements not read
            dx = [ZERO] * len(x)
            picked = range(len(x))[index]
            if type(picked) is range:
                for i, d in zip(picked, dy):
                    dx[i] = d
            else:
                dx[picked] = dy
            return NO_TANGENT, replace_items(x, dx), NO_TANGENT  # (eigh's EighResult keeps its type)
        dx = scatter_add(dy, np.shape(x), index, tangent_dtype(x, dy))
        t = type(index)
        if t is not int and t is not slice and not _is_basic(index):
            dx = _unread_marked(dx, dy, index)
        return NO_TANGENT, dx, NO_TANGENT

    return y, getitem_pullback


def _unread_marked(dx, dy, index):
    """`dx` with the positions a mask or index array did not read marked as structural zeros
    (`branch_cotangent`): ``np.sqrt(x)[x > 0]`` reads no square root at 0, and sqrt's
    pullback must not turn the zero there into 0 · inf = nan (as for ``np.where``)."""
    if any(isinstance(v, ArrayLike) for v in nested((index,))):
        # a traced index (under a compiled gradient or a gradient of a gradient): the positions
        # it reads are counted by recorded ops, so a replay marks what its index reads
        read = scatter_add(np.ones(np.shape(dy)), np.shape(dx), index, np.float64)
        return branch_cotangent(dx, read == 0)
    unread = np.ones(np.shape(dx), dtype=bool)
    unread[index] = False
    return branch_cotangent(dx, unread) if unread.any() else dx


# --- take ---


def _along_axis_index(indices, shape, axis):
    """The index that reads ``take_along_axis(x, indices, axis)`` as ``x[index]``."""
    ndim = len(shape)
    return tuple(
        indices if d == axis else np.reshape(np.arange(n), (1,) * d + (n,) + (1,) * (ndim - d - 1))
        for d, n in enumerate(shape)
    )


@rrule(np.take, complex=True, forward=linear_frule(np.take), formula=whole(
    "{dy} scatter-added into zeros shaped like {a[0]} at the taken indices",
    None,
))
def take_rrule(x, *args, **kwargs):
    b = bind(np.take, (x, *args), kwargs)
    indices, axis, mode = b["indices"], b.get("axis"), b.get("mode", "raise")

    def take_pullback(dy):
        # axis=None reads the flattened x
        shape = (np.size(x),) if axis is None else np.shape(x)
        ax = 0 if axis is None else normalize_axis(axis, len(shape))
        idx = indices
        if mode == "wrap":
            idx = np.mod(idx, shape[ax])
        elif mode == "clip":
            idx = np.clip(idx, 0, shape[ax] - 1)
        dx = scatter_add(dy, shape, (slice(None),) * ax + (idx,), tangent_dtype(x, dy))
        return NO_TANGENT, np.reshape(dx, np.shape(x)), *no_tangents(args)

    return np.take(x, *args, **kwargs), take_pullback


@rrule(np.take_along_axis, complex=True, forward=linear_frule(np.take_along_axis), formula=whole(
    "{dy} scatter-added into zeros shaped like {a[0]} at the taken indices",
    None,
))
def take_along_axis_rrule(x, *args, **kwargs):
    b = bind(np.take_along_axis, (x, *args), kwargs)
    indices, axis = b["indices"], b.get("axis", -1)

    def take_along_axis_pullback(dy):
        return NO_TANGENT, _scatter_along_axis(dy, x, indices, axis), *no_tangents(args)

    return np.take_along_axis(x, *args, **kwargs), take_along_axis_pullback


def _scatter_along_axis(dy, x, indices, axis):
    """The transpose of ``take_along_axis(x, indices, axis)`` (axis=None: of the flattened x)."""
    shape = (np.size(x),) if axis is None else np.shape(x)
    ax = 0 if axis is None else normalize_axis(axis, len(shape))
    dx = scatter_add(dy, shape, _along_axis_index(indices, shape, ax), tangent_dtype(x, dy))
    return np.reshape(dx, np.shape(x))


@rrule(np.sort, complex=True, formula=whole("{dy} put back where sort took each value from"))
def sort_rrule(x, *args, **kwargs):
    """Complex values too, in numpy's lexicographic order: the element picked gets the cotangent."""
    b = bind(np.sort, (x, *args), kwargs)
    if b.get("order") is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.sort with order= (fields)")
    axis = b.get("axis", -1)
    # sorting is a permutation; equal elements keep their order (stable), as in JAX
    perm = np.argsort(x, axis=axis, kind="stable")

    def sort_pullback(dy):
        return NO_TANGENT, _scatter_along_axis(dy, x, perm, axis), *no_tangents(args)

    return np.take_along_axis(x, perm, axis=axis), sort_pullback


# --- diagonals and triangles ---


def _diagonal_index(n, k):
    """Rows and columns of the n elements of diagonal k (above the main one for k > 0)."""
    return np.arange(n) + max(-k, 0), np.arange(n) + max(k, 0)


@rrule(np.diag, complex=True, forward=linear_frule(np.diag), formula=whole("{dy} read back through diag (a diagonal and its matrix)"))
def diag_rrule(v, *args, **kwargs):
    k = bind(np.diag, (v, *args), kwargs).get("k", 0)
    y = np.diag(v, *args, **kwargs)

    def diag_pullback(dy):
        if np.ndim(v) == 1:  # v was put on a diagonal: read it back
            return NO_TANGENT, np.diagonal(dy, k), *no_tangents(args)
        index = _diagonal_index(np.shape(y)[0], k)
        return NO_TANGENT, scatter_add(dy, np.shape(v), index, tangent_dtype(v, dy)), *no_tangents(args)

    return y, diag_pullback


@rrule(np.diagonal, forward=linear_frule(np.diagonal), complex=True, view="read-only", formula=whole(
    "{dy} placed on the diagonal of zeros shaped like {a[0]}",
))
def diagonal_rrule(x, *args, **kwargs):
    b = bind(np.diagonal, (x, *args), kwargs)
    offset = b.get("offset", 0)
    ndim = np.ndim(x)
    a1, a2 = normalize_axis(b.get("axis1", 0), ndim), normalize_axis(b.get("axis2", 1), ndim)

    def diagonal_pullback(dy):
        # diagonal(x) is moveaxis(x, (a1, a2), (-2, -1))[..., rows, cols]: scatter there, move back
        shape = np.shape(x)
        moved = tuple(n for d, n in enumerate(shape) if d not in (a1, a2)) + (shape[a1], shape[a2])
        index = (slice(None),) * (ndim - 2) + _diagonal_index(np.shape(dy)[-1], offset)
        dx = scatter_add(dy, moved, index, tangent_dtype(x, dy))
        return NO_TANGENT, np.moveaxis(dx, (-2, -1), (a1, a2)), *no_tangents(args)

    return np.diagonal(x, *args, **kwargs), diagonal_pullback


@rrule(np.triu, complex=True, forward=linear_frule(np.triu), formula=whole("triu({dy})"))
def triu_rrule(x, *args, **kwargs):
    k = bind(np.triu, (x, *args), kwargs).get("k", 0)

    def triu_pullback(dy):
        # the same mask keeps the cotangent; a 1-d x was broadcast to rows first
        return NO_TANGENT, unbroadcast(np.triu(dy, k), x), *no_tangents(args)

    return np.triu(x, *args, **kwargs), triu_pullback


@rrule(np.tril, complex=True, forward=linear_frule(np.tril), formula=whole("tril({dy})"))
def tril_rrule(x, *args, **kwargs):
    k = bind(np.tril, (x, *args), kwargs).get("k", 0)

    def tril_pullback(dy):
        return NO_TANGENT, unbroadcast(np.tril(dy, k), x), *no_tangents(args)

    return np.tril(x, *args, **kwargs), tril_pullback

"""numpy's functions that write into an array in place, for traced values: ``np.copyto``,
``np.put``, ``np.place``, ``np.fill_diagonal``.

Each one is the assignment ``target[index] = values`` with the index and values worked out
as numpy works them out (flat positions, values repeated to fill, numpy's own diagonal), so
that the write goes where every in-place write of a traced value goes: a traced array
records ``updated`` and stands for the result, a preallocated buffer (`tapegrad.buffers`)
becomes traced, and a plain array made elsewhere refuses, saying how to build it instead.
`tapegrad.arraylike` sends the calls here through its ``WRITERS`` table.
"""
from __future__ import annotations

import numpy as np

from .arraylike import WRITERS
from .errors import ConcreteValueError, user_location
from .hints import filler_hint
from .views import concrete

__all__ = ["copyto", "put", "place", "fill_diagonal"]


def _repeated(values, n):
    """`values`, flattened and repeated to `n` elements, as np.put and np.place use them."""
    flat = np.ravel(values)
    size = np.size(flat)
    if size == n:
        return flat
    if size == 0:
        raise ValueError(f"cannot write {n} elements from an empty array at {user_location()}")
    return np.take(flat, np.arange(n) % size)


def copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src)``: ``dst[...] = src`` (broadcast), only where `where` holds."""
    src_type, dst_type = np.result_type(concrete(src)), np.result_type(concrete(dst))
    if not np.can_cast(src_type, dst_type, casting):
        raise TypeError(f"Cannot cast array data from dtype('{src_type}') to dtype('{dst_type}') "
                        f"according to the rule '{casting}' (np.copyto at {user_location()})")
    if type(dst) is np.ndarray:
        hint = filler_hint()  # np.full_like(plain, dual) in forward mode lands here
        if hint:
            raise ConcreteValueError(hint)
    dst[...] = src if where is True else np.where(where, src, dst)


def put(a, ind, v, mode="raise"):
    """``np.put(a, ind, v)``: ``a.flat[ind] = v``, v repeated to the length of ind; a
    repeated index keeps the last value, as in numpy."""
    ind = np.ravel(np.asarray(concrete(ind)))
    size = np.size(concrete(a))
    if mode == "wrap":
        ind = np.mod(ind, size)
    elif mode == "clip":
        ind = np.clip(ind, 0, size - 1)
    elif np.any((ind < -size) | (ind >= size)):
        raise IndexError(f"index {ind[(ind < -size) | (ind >= size)][0]} is out of bounds for "
                         f"axis 0 with size {size} (np.put at {user_location()})")
    if ind.size:
        a[np.unravel_index(np.mod(ind, size), np.shape(a))] = _repeated(v, ind.size)


def place(arr, mask, vals):
    """``np.place(arr, mask, vals)``: ``arr[mask] = vals``, vals repeated to fill the mask."""
    mask = np.reshape(np.asarray(concrete(mask), dtype=bool), np.shape(arr))
    n = int(np.count_nonzero(mask))
    if n:
        arr[mask] = _repeated(vals, n)


def fill_diagonal(a, val, wrap=False):
    """``np.fill_diagonal(a, val)``: the positions numpy fills, found by numpy on a probe."""
    probe = np.zeros(np.shape(a), dtype=bool)
    np.fill_diagonal(probe, True, wrap=wrap)
    put(a, np.flatnonzero(probe), val)


WRITERS.update({np.copyto: copyto, np.put: put, np.place: place, np.fill_diagonal: fill_diagonal})

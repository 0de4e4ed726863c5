"""Preallocated buffers: ``traj = np.zeros((n, 2)); traj[0] = u0; traj[i + 1] = ...``.

numpy offers no dispatch for ``np.zeros``, and an ndarray cannot hold a traced value: numpy
asks the value for a plain number and a traced value must refuse (its gradient would be
lost). So while a trace or a forward-mode call (`jvp`) is active in this thread, the
constructors (``np.zeros``, ``np.empty``, ``np.ones``, ``np.full`` and their ``_like`` forms,
see `tapegrad.literals`) answer the user's code with a `Buffer`: the very array numpy made, seen through a subclass
that only adds ``__setitem__`` and ``fill``. Until a traced value is written into it, a
Buffer is that plain array: numpy computes with it as ever, its results are plain arrays
(``__array_wrap__``), and nothing of it is recorded, so a buffer that is never written with
a traced value costs what it costs today.

The first write of a traced value (or a dual value, in forward mode, which goes the same
way through its own dispatch) turns the buffer into a `TracedBuffer` (its class is
swapped in place, so every name bound to it sees the change): from then on it stands for a
traced value, ``updated(old values, index, value)``, which the write recorded. Every use of
it (operators, numpy functions and ufuncs, methods, indexing, iteration, being returned)
goes to that traced value, and further writes update it as writes into a traced array do.
Its own memory keeps the plain values it had at the first traced write. A buffer that is
written and read by rows (``traj[i + 1] = ...``, ``traj[i]``, ``traj[i, 0]``), as a
time-stepping loop does, keeps each row as a value of its own until it is used as a whole,
when one ``np.stack`` joins them: a step records its row, not a copy of the trajectory, so
the tape grows with the trajectory, not with its square.

A write into a view of a buffer (``row = traj[0]; row[1] = t``) reaches the buffer through
the positions of the view's elements in the buffer's memory, as numpy's strides say. A view
taken before the first traced write keeps showing the memory; take views after it (or
index the buffer itself), which are then traced views that follow every write.

Outside a trace and a forward-mode call, in other threads, and for calls from numpy, scipy
or tapegrad itself, the constructors return numpy's own arrays. Code that imported a constructor by name (``from
numpy import zeros``) gets plain arrays, and writing a traced value into one raises the
error that says how to build the array instead.
"""
from __future__ import annotations

import operator

import numpy as np

from .arraylike import ArrayLike, updated
from .errors import user_location
from .pytree import Boxed, find_nested
from .views import note_view

__all__ = ["Buffer", "TracedBuffer", "HoldsBuffer", "unbuffer", "unbuffer_all"]


def _traced_part(value):
    """The traced or dual value in `value` (also inside lists and tuples), or None."""
    t = type(value)
    if t is float or t is int or t is np.float64:
        return None
    if t is TracedBuffer:
        return value._traced
    if isinstance(value, Boxed):
        return value
    if t is list or t is tuple:
        return find_nested(value, (Boxed, TracedBuffer))
    return None


def _root(view):
    """The buffer whose memory `view` (a Buffer) shows."""
    root = view
    while isinstance(root.base, Buffer):
        root = root.base
    return root


def _positions(view, root):
    """The index of each element of `view` in `root`, from their addresses in memory."""
    if view.itemsize != root.itemsize or not (root.flags.c_contiguous or root.flags.f_contiguous):
        raise TypeError(
            f"a write at {user_location()} into a view of a preallocated {root.dtype} buffer "
            f"whose elements are parts of the buffer's elements (.real, .imag, .view(dtype)) "
            f"cannot be followed; write into the buffer itself"
        )
    start = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    offsets = np.array(start, dtype=np.intp)
    for n, stride in zip(view.shape, view.strides):
        offsets = np.add.outer(offsets, np.arange(n, dtype=np.intp) * stride)
    order = "C" if root.flags.c_contiguous else "F"
    return np.unravel_index(offsets // root.itemsize, root.shape, order=order)


class Buffer(np.ndarray):
    """An array that np.zeros and its kind made in a traced function: plain until a traced
    value is written into it, then a `TracedBuffer`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> def euler(k, u0):
    ...     u = np.zeros(3)
    ...     u[0] = u0
    ...     for i in range(2):
    ...         u[i + 1] = u[i] - 0.5 * k * u[i]
    ...     return u[-1]
    >>> tapegrad.grad(euler, 1.0, 2.0)
    (0.5, (ZeroTangent(), -1.0, 0.25))
    """

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # what numpy computes from a buffer is a plain result, as from any array
        arr = arr.view(np.ndarray)
        return arr[()] if return_scalar else arr

    def __setitem__(self, index, value):
        traced = _traced_part(value)
        if traced is not None:
            value = unbuffer(value)  # a traced buffer as a value: the traced value it stands for
        if self.base is None or not isinstance(self.base, Buffer):
            if traced is None:
                np.ndarray.__setitem__(self, index, value)
            elif _row_of(index, self) is not None:
                self.__class__ = TracedBuffer  # row by row, until read as a whole
                self._full, self._plain, self._rows = None, np.array(self.view(np.ndarray)), {}
                self[index] = value
            else:
                self._take(updated(np.array(self.view(np.ndarray)), index, value))
            return
        root = _root(self)  # a view: the write goes to the buffer it shows
        if traced is None and type(root) is Buffer:
            np.ndarray.__setitem__(self, index, value)
            return
        where = tuple(p[index] for p in _positions(self, root))
        root[where] = value

    def fill(self, value):
        """``x.fill(v)`` is ``x[...] = v``: a traced `v` makes the buffer traced."""
        self[...] = value

    def put(self, ind, v, mode="raise"):
        """``x.put(ind, v)`` is ``np.put(x, ind, v)``: a traced `v` makes the buffer traced."""
        np.put(self, ind, v, mode=mode)

    def _take(self, new):
        """From now on stand for the traced value `new`."""
        self.__class__ = TracedBuffer
        self._full, self._plain, self._rows = new, None, None


def _row_of(index, buffer):
    """The row of `buffer` (along its first axis) that `index` starts with, or None: ``b[3]``,
    ``b[-1]``, ``b[3, 0]`` are rows, slices and index arrays are not."""
    i = index[0] if type(index) is tuple and index else index
    if type(i) is not int and not (isinstance(i, np.integer) and not isinstance(i, np.bool_)):
        return None
    n = buffer.shape[0] if buffer.ndim else 0
    if not -n <= i < n:
        return None  # numpy's IndexError comes from the whole array
    return int(i) % n


class HoldsBuffer(Exception):
    """A preallocated buffer among a call's arguments: the call is made again with it unboxed
    (`unbuffer_all`), as the traced or dual value it stands for, or its plain array."""


def unbuffer(x):
    """The traced value a TracedBuffer stands for, a Buffer's plain array (or, for a view of
    a buffer that has become traced since, the traced elements it shows), anything else as is."""
    t = type(x)
    if t is TracedBuffer:
        return x._traced
    if t is Buffer:
        if isinstance(x.base, Buffer):
            root = _root(x)
            if type(root) is TracedBuffer:
                # ``b[0] += t`` writes through this view, then stores it back: read the buffer
                return root._traced[_positions(x, root)]
        return x.view(np.ndarray)
    return x


def unbuffer_all(items):
    """`items` (a tuple or list, nested) with every buffer unboxed (see `unbuffer`)."""
    out = []
    for a in items:
        t = type(a)
        if t is list or t is tuple:
            out.append(t(unbuffer_all(a)))
        else:
            out.append(unbuffer(a))
    return out


#: attributes a traced buffer answers from its own array (shapes are fixed while tracing)
_OWN = frozenset(("__class__", "__dict__", "_traced", "_take", "_full", "_plain", "_rows",
                  "_join", "_write_row", "shape", "ndim", "size", "dtype",
                  "itemsize", "nbytes", "base", "flags", "strides", "__array_interface__",
                  "__array_wrap__", "__array_finalize__", "__array_priority__", "view"))


class TracedBuffer(Buffer):
    """A preallocated buffer that a traced value was written into: it stands for that value.

    Every operation goes to the traced value ``self._traced``; writes update it. While the
    buffer is only written and read by rows (``traj[i + 1] = ...``, ``traj[i]``,
    ``traj[i, 0]``), each row is kept as a value of its own (``_rows``, over the plain values
    ``_plain`` of the rows never written), so that a write records a row, not a copy of the
    whole buffer. Any other use joins the rows into one traced array (``np.stack``) once, and
    the rows handed out before become views of it.
    """

    @property
    def _traced(self):
        full = self._full
        if full is None:
            full = self._join()
        return full

    def _join(self):
        rows, plain = self._rows, self._plain
        full = np.stack([rows[i] if i in rows else plain[i] for i in range(len(plain))])
        for i, row in rows.items():
            if isinstance(row, ArrayLike):
                note_view(row, operator.getitem, (full, i), None)  # a row is now a view
        self._full, self._plain, self._rows = full, None, None
        return full

    def __getattribute__(self, name):
        if name in _OWN:
            return object.__getattribute__(self, name)
        return getattr(object.__getattribute__(self, "_traced"), name)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(unbuffer_all(out))
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        result = fn(*unbuffer_all(inputs), **kwargs)
        if out is not None and len(out) == 1 and out[0] is self:
            return self  # numpy returns the array written into
        return result

    def __array_function__(self, func, types, args, kwargs):
        kwargs = dict(zip(kwargs, unbuffer_all(kwargs.values())))
        return func(*unbuffer_all(args), **kwargs)

    def __getitem__(self, index):
        if self._full is None:
            i = _row_of(index, self)
            row = self._rows.get(i) if i is not None else None
            if isinstance(row, ArrayLike):
                return row if type(index) is not tuple else row[index[1:]]
        return self._traced[index]

    def __setitem__(self, index, value):
        value = unbuffer(value)
        if self._full is None:
            i = _row_of(index, self)
            if i is not None:
                self._write_row(i, index[1:] if type(index) is tuple else (), value)
                return
        self._traced[index] = value

    def _write_row(self, i, within, value):
        rows = self._rows
        old = rows.get(i)
        index = within if within else ...
        if self.ndim == 1:  # an element: numpy hands out copies (scalars), never views
            start = old if isinstance(old, ArrayLike) else np.array(
                self._plain[i] if old is None else old)
            rows[i] = updated(start, index, value)[()]
        elif isinstance(old, ArrayLike):
            old[index] = value  # in place: the views of the row handed out see the write
        else:
            # a fresh value of the row's shape and dtype, as numpy copies what it stores
            rows[i] = updated(np.array(self._plain[i] if old is None else old), index, value)

    def __iter__(self):
        return iter(self._traced)

    def __len__(self):
        return np.ndarray.__len__(self)  # a shape: no need to join the rows

    def __repr__(self):
        return repr(self._traced)

    __str__ = __repr__

    def __bool__(self):
        return bool(self._traced)

    def __float__(self):
        return float(self._traced)

    def __int__(self):
        return int(self._traced)

    def __index__(self):
        return self._traced.__index__()

    def __copy__(self):
        return self._traced.copy()

    def __reduce__(self):
        raise TypeError(f"a traced buffer cannot be pickled or deep-copied (at {user_location()})")


def _operator(name):
    def method(self, *args):
        return getattr(self._traced, name)(*unbuffer_all(args))

    method.__name__ = name
    return method


def _inplace(name):
    def method(self, other):
        getattr(self._traced, name)(unbuffer(other))  # the traced value is updated in place
        return self

    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "divmod"):
    for _n in (f"__{_name}__", f"__r{_name}__"):
        setattr(TracedBuffer, _n, _operator(_n))
for _name in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert"):
    setattr(TracedBuffer, f"__{_name}__", _operator(f"__{_name}__"))
for _name in ("add", "sub", "mul", "truediv", "pow", "matmul"):
    setattr(TracedBuffer, f"__i{_name}__", _inplace(f"__i{_name}__"))
TracedBuffer.__hash__ = None

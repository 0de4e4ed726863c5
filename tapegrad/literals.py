"""Array literals of traced values: ``np.array([x[0] * x[1], np.sin(x[2])])``.

numpy gives no traced value a say in ``np.array(list)``: it asks each element for a plain
array (``__array__``), which a traced value must refuse, since that would drop its gradient.
So `install` (run by ``import tapegrad``) puts a wrapper in the place of ``numpy.array`` and
``numpy.asarray``. Outside a trace (and outside forward mode) the wrapper hands every call to
numpy's own function. Inside one, a list or tuple that holds traced or dual values, at any
depth, becomes ``np.stack`` of its entries (constants included), which is recorded and
differentiated like any other call. Code that imported numpy's functions by name
(``from numpy import array``) keeps numpy's own.

A call that comes from scipy keeps numpy's own behaviour, so that a scipy function that
cannot see traced values still fails where it converts them, with the error that names
its replacement in `tapegrad.scipy`.

The constructors of preallocated buffers (``np.zeros``, ``np.empty``, ``np.ones``,
``np.full`` and their ``_like`` forms) are wrapped differently: numpy's own functions stay
in place while no thread traces, since a Python wrapper would double the cost of a
``np.zeros(3)`` (about 150 ns). `constructors_on` and `constructors_off`, called by every
trace as it starts and ends, count the traces running in any thread; while there are some,
the wrappers stand in, and in a thread that traces, a call from the user's code returns
its array as a `tapegrad.buffers.Buffer`, which can take traced values. Calls from other
threads, from numpy, scipy and tapegrad itself get numpy's plain arrays.
"""
from __future__ import annotations

import functools
import sys
import threading

import numpy as np

from .buffers import Buffer
from .errors import in_library, in_scipy
from .pytree import Boxed, find_nested
from .tracer import active_tapes

__all__ = ["install", "dual_literals", "NUMPY", "CONSTRUCTORS", "constructors_on",
           "constructors_off"]

#: numpy's own functions, which the wrappers hand every other call to
NUMPY = {"array": np.array, "asarray": np.asarray}

#: numpy's constructors of arrays to fill in, by name
CONSTRUCTORS = {name: getattr(np, name) for name in (
    "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like")}

_local = threading.local()  # .duals: how many forward-mode calls run in this thread


def _stack(obj):
    """A nested list or tuple holding traced values as one traced array: np.stack of its entries."""
    return np.stack([_stack(e) if type(e) is list or type(e) is tuple else e for e in obj])


def _traced_literal(obj):
    """True for a list or tuple holding traced or dual values, in a trace or forward-mode call
    of this thread, that a scipy function did not pass."""
    if not (active_tapes() or getattr(_local, "duals", 0)):
        return False
    if find_nested(obj, Boxed) is None:
        return False
    return not in_scipy(sys._getframe(2))  # (0: here, 1: the wrapper, 2: its caller)


def _wrapper(original):
    @functools.wraps(original)
    def convert(obj, dtype=None, *args, **kwargs):
        if (type(obj) is list or type(obj) is tuple) and _traced_literal(obj):
            out = _stack(obj)
            return out if dtype is None else out.astype(dtype)
        return original(obj, dtype, *args, **kwargs)

    return convert


def install():
    """Put the wrappers in the place of ``numpy.array`` and ``numpy.asarray`` (once)."""
    for name, fn in NUMPY.items():
        if getattr(np, name) is fn:
            setattr(np, name, _wrapper(fn))


def _constructor(original):
    @functools.wraps(original)
    def make(*args, **kwargs):
        out = original(*args, **kwargs)
        if active_tapes() and type(out) is np.ndarray and not in_library(sys._getframe(1)):
            return out.view(Buffer)
        return out

    return make


_WRAPPERS = {name: _constructor(fn) for name, fn in CONSTRUCTORS.items()}
_lock = threading.Lock()
_traces = [0]  # traces running, in all threads


def constructors_on():
    """A trace starts: the buffer constructors stand in for numpy's while any trace runs."""
    with _lock:
        _traces[0] += 1
        if _traces[0] == 1:
            for name, fn in _WRAPPERS.items():
                setattr(np, name, fn)


def constructors_off():
    """A trace ended: numpy's own constructors are back once no trace runs."""
    with _lock:
        _traces[0] -= 1
        if _traces[0] == 0:
            for name, fn in CONSTRUCTORS.items():
                setattr(np, name, fn)


class dual_literals:
    """While open, np.array of lists holding dual values builds a dual array (forward mode)."""

    __slots__ = ()

    def __enter__(self):
        _local.duals = getattr(_local, "duals", 0) + 1

    def __exit__(self, *exc):
        _local.duals -= 1
        return False

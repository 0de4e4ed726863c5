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

from .buffers import Buffer, TracedBuffer
from .errors import in_library, in_scipy
from .pytree import Boxed, find_nested
from .tracer import active_tapes
from .writes import fill_diagonal

__all__ = ["install", "dual_literals", "NUMPY", "CONSTRUCTORS", "REDUCTIONS", "constructors_on",
           "constructors_off", "ConcatenatorOfTraced"]

#: numpy's own functions, which the wrappers hand every other call to
NUMPY = {"array": np.array, "asarray": np.asarray}

#: numpy's constructors of arrays to fill in, by name
CONSTRUCTORS = {name: getattr(np, name) for name in (
    "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like")}

#: numpy's reductions, by module and name, that also take a list of traced numbers while tracing
REDUCTIONS = {(np, name): getattr(np, name) for name in (
    "sum", "mean", "std", "var", "max", "min", "amax", "amin", "prod", "average")}
REDUCTIONS[(np.linalg, "norm")] = np.linalg.norm

_local = threading.local()  # .duals: how many forward-mode calls run in this thread


def _stack(obj):
    """A nested list or tuple holding traced values as one traced array: np.stack of its entries."""
    return np.stack([_stack(e) if type(e) is list or type(e) is tuple else e for e in obj])


def _traced_literal(obj):
    """True for a list or tuple holding traced or dual values, in a trace or forward-mode call
    of this thread, that a scipy function did not pass."""
    if not (active_tapes() or getattr(_local, "duals", 0)):
        return False
    if find_nested(obj, (Boxed, TracedBuffer)) is None:
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


def _reduction(original):
    @functools.wraps(original)
    def reduce(a, *args, **kwargs):
        if ((type(a) is list or type(a) is tuple) and active_tapes()
                and find_nested(a, (Boxed, TracedBuffer)) is not None
                and not in_library(sys._getframe(1))):
            a = _stack(a)  # np.mean([a, b]) is np.mean(np.stack([a, b]))
        return original(a, *args, **kwargs)

    return reduce


def _fill_diagonal(original):
    @functools.wraps(original)
    def fill(a, val, wrap=False):
        # numpy asks only `a` about the call: a traced `val` would be read as a plain number
        if active_tapes() and find_nested((val,), (Boxed, TracedBuffer)) is not None:
            return fill_diagonal(a, val, wrap)
        return original(a, val, wrap)

    return fill


class ConcatenatorOfTraced:
    """``np.r_[...]`` and ``np.c_[...]`` that also take traced values while tracing.

    Pieces holding traced values are joined as numpy does for plain ones: ``r_`` joins them
    as 1-d pieces along the first axis, ``c_`` as columns (a 1-d piece is one column) along
    the last; slices become ``np.arange`` ranges. Any other index goes to numpy's own object.
    """

    def __init__(self, original, columns):
        self.original = original
        self.columns = columns

    def __getitem__(self, key):
        items = key if type(key) is tuple else (key,)
        if not (active_tapes() and find_nested(items, (Boxed, TracedBuffer)) is not None
                and not in_library(sys._getframe(1))):
            return self.original[key]
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise TypeError(
                    f"np.{'c_' if self.columns else 'r_'}[{item!r}, ...] with traced values: "
                    f"tapegrad follows no directive strings; join the pieces with "
                    f"np.concatenate or np.stack instead"
                )
            if type(item) is slice:
                item = self.original[item]
            elif type(item) is list or type(item) is tuple:
                item = _stack(item) if find_nested(item, (Boxed, TracedBuffer)) else np.array(item)
            piece = np.atleast_1d(item)
            if self.columns and np.ndim(piece) == 1:
                piece = np.reshape(piece, (-1, 1))
            pieces.append(piece)
        return np.concatenate(pieces, axis=-1 if self.columns else 0)

    def __len__(self):
        return 0


#: what stands in for numpy's own while traces run: (module, name) -> (numpy's, the stand-in)
_DURING_TRACES = {(np, name): (fn, _constructor(fn)) for name, fn in CONSTRUCTORS.items()}
_DURING_TRACES.update({key: (fn, _reduction(fn)) for key, fn in REDUCTIONS.items()})
_DURING_TRACES[(np, "fill_diagonal")] = (np.fill_diagonal, _fill_diagonal(np.fill_diagonal))
_DURING_TRACES[(np, "r_")] = (np.r_, ConcatenatorOfTraced(np.r_, columns=False))
_DURING_TRACES[(np, "c_")] = (np.c_, ConcatenatorOfTraced(np.c_, columns=True))
_lock = threading.Lock()
_traces = [0]  # traces running, in all threads


def constructors_on():
    """A trace starts: the stand-ins replace numpy's functions while any trace runs."""
    with _lock:
        _traces[0] += 1
        if _traces[0] == 1:
            for (module, name), (_, stand_in) in _DURING_TRACES.items():
                setattr(module, name, stand_in)


def constructors_off():
    """A trace ended: numpy's own functions are back once no trace runs."""
    with _lock:
        _traces[0] -= 1
        if _traces[0] == 0:
            for (module, name), (fn, _) in _DURING_TRACES.items():
                setattr(module, name, fn)


class dual_literals:
    """While open, np.array of lists holding dual values builds a dual array (forward mode)."""

    __slots__ = ()

    def __enter__(self):
        _local.duals = getattr(_local, "duals", 0) + 1

    def __exit__(self, *exc):
        _local.duals -= 1
        return False

"""numpy as users write it, while a trace runs: array literals, preallocated buffers, lists.

numpy gives a traced value no say in some of the idioms scientists use: ``np.array([x[0] *
x[1], np.sin(x[2])])`` asks each element for a plain array (``__array__``), which a traced
value must refuse, since that would drop its gradient; ``np.zeros(3)`` makes a plain array that
cannot take a traced value written into it; ``np.mean([a, b])`` dispatches on the list, which
has no say either. So while a trace (or a forward-mode call) runs, in any thread, tapegrad
puts stand-ins in numpy's namespace under these names, and puts numpy's own back as soon as the
last one ends (`constructors_on`, `constructors_off`, which every trace calls):

- ``np.array``, ``np.asarray``, ``np.asanyarray``: a list or tuple holding traced or dual
  values, at any depth, becomes ``np.stack`` of its entries (constants included), recorded and
  differentiated like any other call; ``np.array(t)`` of a traced value is its copy,
  ``np.asarray(t)`` the value itself, ``np.asarray(t, dtype)`` its cast (``t.astype``).
- the constructors of preallocated buffers (``np.zeros``, ``np.empty``, ``np.ones``,
  ``np.full`` and their ``_like`` forms): called from the user's code in a thread that traces,
  they return their array as a `tapegrad.buffers.Buffer`, which takes traced and dual values.
- ``np.r_``, ``np.c_``, ``np.fill_diagonal`` and ``np.errstate`` (noted on the tape, for
  compiled gradients) of traced values.
- the functions scientists give lists of numbers to (the reductions, ``np.append``, ``np.dot``,
  ``np.polyval``, ..., `REDUCTIONS`, and ``np.linalg.norm``): a list holding traced values in
  an array argument becomes its ``np.stack``. These only under tapegrad's own contexts: a
  custom context may compare functions by identity (``fn is np.sum``), so while one traces,
  numpy's own are in place and a list there is refused as numpy refuses it.

The design, and what it trades:

- Outside a trace numpy's namespace holds numpy's own objects, so no numpy call costs anything
  more than without tapegrad, and ``np.zeros is numpy._core.multiarray.zeros`` holds. Every
  trace that starts when none runs puts the stand-ins in place, and the last one to end puts
  numpy's own back: numpy's module object takes a subclass of ModuleType whose data
  descriptors read the stand-ins, and takes its own class back (`_sync`), two assignments
  whatever the number of names, with numpy's ``__dict__`` never rewritten. While a trace runs,
  reading a stand-in's name costs a C call more than a module attribute; other names cost the
  same.
- The namespace is the process's: while a trace runs in one thread, the others meet the
  stand-ins too. A stand-in tells by thread-local state whether its caller traces, and hands
  every other call (another thread's, numpy's own, scipy's, tapegrad's) to numpy's function,
  so other threads get numpy's results, at the cost of one Python call.
- A name bound from numpy before a trace (``from numpy import mean, array, zeros`` at the top
  of a module, or a module that re-exports numpy's names) is numpy's own object, which no
  stand-in can replace: it cannot see traced values in a list, and its arrays take no traced
  values. The error names the binding and says to call ``np.mean`` & co. through numpy's
  namespace (`tapegrad.hints.bound_at_import_hint`). (A ``from numpy import ...`` run while a
  trace runs binds the stand-in, which outside traces behaves as numpy's own.) An explicit
  ``tapegrad.numpy`` namespace, as autograd has, would make every user rewrite their imports;
  patching numpy for the whole process made every numpy call outside traces pay
  (benchmarks/README.md); rewriting numpy's internal dispatchers while tracing was judged too fragile.
- A call that comes from scipy keeps numpy's own behaviour, so that a scipy function that
  cannot see traced values still fails where it converts them, with the error that names its
  replacement in `tapegrad.scipy`.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading

import numpy as np

from .buffers import Buffer, TracedBuffer, unbuffer
from .errors import in_library, in_scipy, user_location
from .hints import NUMPY_ORIGINALS
from .pytree import Boxed, find_nested
from .tracer import THREAD, Tracer, active_tapes, plain_options
from .views import concrete
from .writes import fill_diagonal

__all__ = ["dual_literals", "NUMPY", "CONSTRUCTORS", "REDUCTIONS", "constructors_on",
           "constructors_off", "ConcatenatorOfTraced", "ErrstateInTrace"]

#: numpy's own functions, which the wrappers hand every other call to
NUMPY = {"array": np.array, "asarray": np.asarray, "asanyarray": np.asanyarray}

#: numpy's constructors of arrays to fill in, by name
CONSTRUCTORS = {name: getattr(np, name) for name in (
    "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like")}

class _Local(threading.local):
    duals = 0  # how many forward-mode calls run in this thread


_local = _Local()


def _tracing() -> bool:
    """True in a thread that traces or runs a forward-mode call (the stand-ins' first question)."""
    return bool(THREAD.stack) or _local.duals > 0


#: the most dimensions numpy gives an array
_MAX_DIMS = 64


def _stack(obj, depth=1):
    """A nested list or tuple holding traced values as one traced array: np.stack of its entries.

    The recursion stops at numpy's limit on dimensions, so no nesting meets Python's recursion limit.
    """
    if depth > _MAX_DIMS:
        raise ValueError(
            f"np.array of a list of traced values nested more than {_MAX_DIMS} levels deep at "
            f"{user_location()}: an array has at most {_MAX_DIMS} dimensions; nest the values "
            f"less (np.stack and np.reshape build arrays of the shape wanted)"
        )
    return np.stack([_stack(e, depth + 1) if type(e) is list or type(e) is tuple else e for e in obj])


def _traced_literal(obj):
    """True for a list or tuple holding traced or dual values, in a trace or forward-mode call
    of this thread, that a scipy function did not pass."""
    if not _tracing():
        return False
    if find_nested(obj, (Boxed, TracedBuffer)) is None:
        return False
    return not in_scipy(sys._getframe(2))  # (0: here, 1: the wrapper, 2: its caller)


def _wrapper(original):
    copies = original is NUMPY["array"]  # np.array copies; np.asarray and np.asanyarray do not

    @functools.wraps(original)
    def convert(obj, dtype=None, *args, **kwargs):
        if not (THREAD.stack or _local.duals):  # another thread's call: numpy's own (`_tracing`)
            return original(obj, dtype, *args, **kwargs)
        t = type(obj)
        if (t is list or t is tuple) and _traced_literal(obj):
            out = _stack(obj)
            return out if dtype is None else out.astype(dtype)
        if t is TracedBuffer:
            # its memory holds no gradient: refused as the traced value it stands for is
            return obj._traced.__array__(dtype)
        if isinstance(obj, Boxed) and not in_library(sys._getframe(1)):
            # np.asarray(t) is t, np.array(t) its copy (both recorded, as autograd and JAX
            # take them); np.asarray(t, np.float64) the cast (t.astype), as np.float64(t)
            # cannot be
            out = obj.astype(dtype) if dtype is not None else np.copy(obj) if copies else obj
            ndmin = kwargs.get("ndmin", 0)
            if np.ndim(out) < ndmin:
                out = np.reshape(out, (1,) * (ndmin - np.ndim(out)) + np.shape(out))
            return out
        return original(obj, dtype, *args, **kwargs)

    return convert


def _constructor(original):
    @functools.wraps(original)
    def make(*args, **kwargs):
        out = original(*args, **kwargs)
        if THREAD.stack or _local.duals:  # (`_tracing`, without a call: every other thread's cost)
            return _made(out, sys._getframe(1))
        return out

    return make


def _made(out, caller):
    """The array a constructor made, as a Buffer for the user's code in a thread that traces or
    runs a forward-mode call (`jvp`, `check_grad`), where it takes traced or dual values."""
    if type(out) is np.ndarray and not in_library(caller):
        return out.view(Buffer)
    return out


def _filler(original, like):
    """The stand-in of ``np.full`` (`like` False) or ``np.full_like`` (`like` True). numpy asks
    only the first argument of ``full_like``, and no argument of ``full``, about the call, so a
    traced fill value would be written into a plain array (a refusal naming np.copyto): here
    the call goes to the rule of ``full_like`` (every entry is the fill value)."""
    full_like = CONSTRUCTORS["full_like"]

    @functools.wraps(original)
    def fill(*args, **kwargs):
        if not (THREAD.stack or _local.duals):  # (`_tracing`, without a call)
            return original(*args, **kwargs)
        fill_value = args[1] if len(args) > 1 else kwargs.get("fill_value")
        if find_nested((fill_value,), (Boxed, TracedBuffer)) is None:
            return _made(original(*args, **kwargs), sys._getframe(1))
        return _fill_traced(full_like, like, *args, **kwargs)

    return fill


def _fill_traced(full_like, like, shape_or_a, fill_value, dtype=None, *args, **kwargs):
    """``np.full``/``np.full_like`` with traced or dual values, by the rule of ``full_like``
    (the fill value by position, the rest by keyword, as the rule takes them)."""
    value, a = unbuffer(fill_value), unbuffer(shape_or_a)
    if type(value) is list or type(value) is tuple:
        value = _stack(value)  # (a fill value that is a row, [t, 1.0], broadcast)
    if not like:
        order = args[0] if args else kwargs.pop("order", "C")
        if dtype is None:
            dtype = np.result_type(concrete(value))
        a, args = CONSTRUCTORS["empty"](a, dtype=dtype, order=order), ()
        dtype = None
    kwargs.update(zip(("order", "subok", "shape"), args))  # (the positions after dtype)
    if dtype is not None:
        kwargs["dtype"] = dtype
    return type(value)._dispatch(full_like, (a, value), kwargs)


def _fill_diagonal(original):
    @functools.wraps(original)
    def fill(a, val, wrap=False):
        # numpy asks only `a` about the call: a traced `val` would be read as a plain number
        if active_tapes() and find_nested((val,), (Boxed, TracedBuffer)) is not None:
            return fill_diagonal(a, val, wrap)
        return original(a, val, wrap)

    return fill


class ErrstateInTrace(np.errstate):
    """``np.errstate`` while traces run: entered from the user's code, it notes on every tape
    of this thread that the function sets numpy's error state for part of its work
    (``tape.meta["errstate"]``), which a replay of the tape would not see: compiled gradients
    trace such a function on every call rather than replay it (`tapegrad.program.compiled`)."""

    def __enter__(self):
        if not in_library(sys._getframe(1)):
            for tape in active_tapes():
                meta = getattr(tape, "meta", None)
                if meta is not None:
                    meta["errstate"] = True
        return super().__enter__()


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
        if not _tracing():
            return self.original[key]
        if find_nested(items, (Boxed, TracedBuffer)) is None or in_library(sys._getframe(1)):
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


def _taking_lists(original, positions=(0,), reduction=False):
    """The stand-in of a numpy function that takes array-likes (``np.mean``, ``np.append``): a
    list or tuple holding traced or dual values, given for one of its array arguments (at
    `positions`, or by their names), becomes their ``np.stack``, and numpy's own function takes
    it from there (its dispatch then finds the traced array); every other call goes straight
    to numpy's function. The other arguments stay as given (an ``axis`` tuple of traced
    integers is numpy's to read)."""
    params = list(inspect.signature(original).parameters)
    names = {params[i] for i in positions if i < len(params)}

    def stacked(v):
        return _stack(v) if (type(v) is list or type(v) is tuple) and _traced_literal(v) else v

    @functools.wraps(original)
    def take(a, *args, **kwargs):
        t = type(a)
        if reduction and t is Tracer and not args and (not kwargs or plain_options(kwargs)):
            # np.sum(t), np.max(z, axis=1, keepdims=True): straight to its tape's context, where
            # numpy's dispatch and `record_call` would take it (a reduction's per-op cost)
            tape = a._tape
            if not tape.closed:
                return tape.ctx.record(tape, original, (a,), kwargs)
        if t is list or t is tuple:
            a = stacked(a)
        if len(positions) > 1 and args:
            args = [stacked(v) if i + 1 in positions else v for i, v in enumerate(args)]
        if kwargs and not plain_options(kwargs):
            kwargs = {k: stacked(v) if k in names else v for k, v in kwargs.items()}
        return original(a, *args, **kwargs)

    return take


_REDUCING = ("sum", "mean", "std", "var", "max", "min", "amax", "amin", "prod", "average", "median")

#: numpy's functions of array-likes that take a list of traced values, by name in numpy's
#: namespace (and ``norm`` in ``numpy.linalg``'s): the reductions, and the functions scientists
#: give lists of numbers to, with the positions of their array arguments
_ARRAY_ARGUMENTS = {**dict.fromkeys(_REDUCING + ("ptp", "cumsum", "cumprod", "diff"), (0,)),
                    "average": (0, 2), "append": (0, 1), "dot": (0, 1), "inner": (0, 1),
                    "outer": (0, 1), "polyval": (0, 1), "interp": (0, 1, 2), "clip": (0, 1, 2),
                    "trapezoid": (0, 1)}
REDUCTIONS = {name: getattr(np, name) for name in _ARRAY_ARGUMENTS}
_REDUCERS = {name: _taking_lists(fn, _ARRAY_ARGUMENTS[name], reduction=name in _REDUCING)
             for name, fn in REDUCTIONS.items()}
_NORMS = (np.linalg.norm, _taking_lists(np.linalg.norm))  # (numpy's own, the stand-in)

#: what stands in for numpy's own while traces run, by name in numpy's namespace
_STAND_INS = {name: _wrapper(fn) for name, fn in NUMPY.items()}
_STAND_INS.update((name, _constructor(fn)) for name, fn in CONSTRUCTORS.items())
_STAND_INS["full"] = _filler(np.full, like=False)
_STAND_INS["full_like"] = _filler(np.full_like, like=True)
_STAND_INS["fill_diagonal"] = _fill_diagonal(np.fill_diagonal)
_STAND_INS["errstate"] = ErrstateInTrace
_STAND_INS["r_"] = ConcatenatorOfTraced(np.r_, columns=False)
_STAND_INS["c_"] = ConcatenatorOfTraced(np.c_, columns=True)
#: numpy's own objects under the same names
_NUMPYS = {name: getattr(np, name) for name in _STAND_INS}
NUMPY_ORIGINALS.update(_NUMPYS, **REDUCTIONS)



def _standing(module, name, stand_in):
    """`module`'s `name` read as `stand_in`: a data descriptor, so that it outranks the name in
    the module's own ``__dict__`` while the module has the class it is on (`_sync`). Reading it
    is one C call (a dict lookup keyed by the module); assigning the name (``np.zeros = f``
    while a trace runs) writes the module's own ``__dict__``, which holds once the trace ends."""
    return property({module: stand_in}.__getitem__,
                    lambda m, value: m.__dict__.__setitem__(name, value))


def _module_class(module, stand_ins):
    """A subclass of ModuleType whose instances read `stand_ins` in place of their own names."""
    return type(type(module).__name__, (type(module),),
                {"__slots__": (), **{n: _standing(module, n, v) for n, v in stand_ins.items()}})


#: numpy's and numpy.linalg's module class in each state (`_sync`): their own; with the stand-ins
#: of the constructors and literals (a custom context traces); with every stand-in
_CLASSES = {
    None: (type(np), type(np.linalg)),
    "constructors": (_module_class(np, _STAND_INS), type(np.linalg)),
    "all": (_module_class(np, {**_STAND_INS, **_REDUCERS}),
            _module_class(np.linalg, {"norm": _NORMS[1]})),
}
_lock = threading.Lock()
_traces = [0]  # traces and forward-mode calls running, in all threads
_custom = [0]  # of which traces under a context that decides primitives itself
_state = [None]  # which of _CLASSES numpy's modules have


def _sync():
    """Make numpy's namespace what the running traces need (under _lock): numpy's own when none
    runs, every stand-in while tapegrad's own contexts trace, those of the constructors and
    literals only while a custom context traces (its ``fn is np.sum`` keeps its meaning).

    The names are not rewritten one by one: numpy's module object changes its class to one whose
    data descriptors read the stand-ins (module classes can be assigned since Python 3.5), so
    a trace's start and end cost two assignments, whatever the number of names, and numpy's
    ``__dict__`` is never touched."""
    want = None if not _traces[0] else "constructors" if _custom[0] else "all"
    if want != _state[0]:
        np.__class__, np.linalg.__class__ = _CLASSES[want]
        _state[0] = want


def constructors_on(own=True):
    """A trace (or a forward-mode call) starts: the stand-ins are in numpy's namespace until the
    last one ends. `own` is False for a trace under a context that decides primitives itself."""
    with _lock:
        _traces[0] += 1
        _custom[0] += not own
        _sync()


def constructors_off(own=True):
    """A trace ended: numpy's own are back in numpy's namespace when it was the last."""
    with _lock:
        _traces[0] -= 1
        _custom[0] -= not own
        _sync()


class dual_literals:
    """While open, np.array of lists holding dual values builds a dual array (forward mode), and
    ``np.full``/``np.full_like`` take a dual fill value (the stand-ins are in place, as in a
    trace)."""

    __slots__ = ()

    def __enter__(self):
        _local.duals += 1
        constructors_on()

    def __exit__(self, *exc):
        constructors_off()
        _local.duals -= 1
        return False

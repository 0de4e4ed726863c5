"""Tracers and `trace`: run a plain numpy function and record the primitives it calls.

A Tracer stands in for one value while the user's function runs. Python operators forward
to the numpy function of the same meaning (``a * b`` is ``np.multiply``), numpy hands its
ufuncs and functions to the Tracer through ``__array_ufunc__`` / ``__array_function__``, and
every such call goes to the context of the Tracer's tape, which records it.

Traces nest: each tape has a level, and a call is recorded on the innermost tape among its
arguments; Tracers of outer tapes are constants there, so the values the inner rules compute
are themselves traced by the outer tape (this is what differentiates a gradient).
"""
from __future__ import annotations

import inspect
import operator
import threading
import types

import numpy as np

from .errors import (
    ConcreteValueError,
    EscapedTracerError,
    StaleViewError,
    foreign_function_hint,
    type_str,
    user_location,
)
from .arraylike import VIEWS, ArrayLike, note_view
from .program.guards import guard_bool, guard_index, guard_int
from .pytree import Spec, build, flatten, nested, unflatten
from .tape import Constant, Input, Tape, paused_gc


__all__ = ["Tracer", "trace", "record_call", "wrap_result", "active_tapes"]

_local = threading.local()


def active_tapes() -> list:
    """The tapes being recorded in this thread, outermost first."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


class _StaleTape:
    """Stands in for the tape of a view whose base was written in place: any use raises."""

    __slots__ = ("reason", "level", "closed")

    def __init__(self, reason):
        self.reason = reason
        self.level = 1 << 60  # chosen as "innermost" by record_call, which then raises
        self.closed = True


def _escaped(tracer):
    if type(tracer._tape) is _StaleTape:
        return StaleViewError(tracer._tape.reason + f"; it was used again at {user_location()}")
    return EscapedTracerError(
        f"the traced value {tracer._var}::{type_str(tracer._val)} was used at {user_location()} "
        f"after the trace that made it had ended (it was kept in a global, a list or an "
        f"attribute); return it from the traced function instead, or keep a plain value"
    )


def record_call(fn, args, kwargs):
    """Record ``fn(*args, **kwargs)`` on the innermost tape among the Tracers in the call.

    Every operation on a Tracer comes here (it is the Tracer's `_dispatch`): the operators
    and methods of `ArrayLike`, numpy's protocols, `primitive`-marked functions.
    """
    tape = None
    for a in args:
        t = type(a)
        if t is Tracer:
            at = a._tape
            if tape is None or at.level > tape.level:
                tape = at
        elif (t is list or t is tuple) and a:
            tape = _innermost(nested(a), tape)
    if kwargs:
        tape = _innermost(nested(kwargs.values()), tape)
    if tape is None:  # pragma: no cover - callers only come here holding a Tracer
        return fn(*args, **kwargs)
    if tape.closed:
        raise _escaped(next(a for a in nested((*args, *(kwargs or {}).values()))
                            if type(a) is Tracer and a._tape is tape))
    out = tape.ctx.record(tape, fn, args, kwargs)
    if fn in VIEWS and type(out) is Tracer and type(args[0]) is Tracer:
        note_view(out, args[0], fn, args)
    return out


def _innermost(items, tape):
    """The innermost of `tape` and the tapes of the Tracers among `items`."""
    for a in items:
        if type(a) is Tracer and (tape is None or a._tape.level > tape.level):
            tape = a._tape
    return tape


#: functions whose tuple result stays one traced value (the packed result of a traced function)
KEEP_WHOLE = {build}


def wrap_result(ctx, tape, var, y, fn=None):
    """The traced value of a recorded call; a tuple or list result becomes one Tracer per element."""
    out = Tracer(tape, var, y)
    if isinstance(y, (tuple, list)) and fn not in KEEP_WHOLE:
        items = [ctx.record(tape, operator.getitem, (out, i), None) for i in range(len(y))]
        ty = type(y)
        if ty is tuple or ty is list:
            return ty(items)
        # a named tuple (numpy's SlogdetResult, EighResult, ...): keep its type and fields
        return ty(*items) if hasattr(y, "_fields") else ty(items)
    return out


class Tracer(ArrayLike):
    """A value being traced: it records every numpy operation applied to it on its tape.

    Users meet Tracers only inside the function being traced; they behave like the value
    they hold (a float, an ndarray), with the usual attributes (`shape`, `dtype`, `T`) and
    methods (`sum`, `reshape`, `dot`, ...).
    """

    __slots__ = ("_tape", "_var", "_val", "_base", "_views")

    _dispatch = staticmethod(record_call)

    def __init__(self, tape, var, val):
        self._tape = tape
        self._var = var
        self._val = val

    # --- numpy protocols (numpy's ufuncs and functions reach `_dispatch` through ArrayLike) ---
    def __array__(self, dtype=None, copy=None):
        raise ConcreteValueError(
            f"{foreign_function_hint()}numpy tried to turn the traced value {self._var}::{type_str(self._val)} into a plain "
            f"array at {user_location()}, which would drop its gradient. Build arrays from traced "
            f"values with np.stack / np.concatenate / np.where instead of np.array([...]) or "
            f"assignment into a plain array, and use numpy functions rather than math or other "
            f"functions that cannot see traced values"
        )

    # --- concrete values ---
    # Control flow takes the path of the value at trace time, as a tracing JIT does, and a
    # guard op records the assumption so that replay can check it (see guards.py).
    def _guard(self, guard, value):
        tape = self._tape
        if tape.closed:
            raise _escaped(self)
        tape.push_call(guard, (self._var, value), None, value, user_location())
        return value

    def __bool__(self):
        return self._guard(guard_bool, bool(self._val))

    def __index__(self):
        val = self._val
        if not np.issubdtype(np.result_type(val), np.integer):
            raise ConcreteValueError(
                f"{self._var}::{type_str(val)} is used as an index or count at {user_location()}, "
                f"but it is not an integer; convert it explicitly with int() if that is meant"
            )
        self._tape.meta.setdefault("concrete", set()).add(self._var)
        return self._guard(guard_index, operator.index(val))

    def __int__(self):
        # int() truncates: its derivative is zero wherever it exists, so nothing is lost
        self._tape.meta.setdefault("concrete", set()).add(self._var)
        return self._guard(guard_int, int(self._val))

    def __float__(self):
        # an integer (a count) loses nothing: take its value, guarded. A float would silently
        # carry no gradient afterwards (math.sin(x) calls this too), so that is refused
        if np.result_type(self._val).kind in "iu":
            self._tape.meta.setdefault("concrete", set()).add(self._var)
            return float(self._guard(guard_int, int(self._val)))
        raise self._concrete("float")

    def __complex__(self):
        raise self._concrete("complex")

    def _concrete(self, what):
        return ConcreteValueError(
            f"{what}() of the traced value {self._var}::{type_str(self._val)} at {user_location()} "
            f"would drop its gradient (math functions such as math.sin call it too); use numpy "
            f"(np.sin, np.exp, ...) on the traced value instead"
        )

    def item(self):
        raise self._concrete("item")

    def tolist(self):
        raise self._concrete("tolist")

    def __repr__(self):
        return f"Tracer({self._var}::{type_str(self._val)} = {self._val!r})"

    __hash__ = object.__hash__

    # --- in-place writes (see ArrayLike.__setitem__) ---
    def _take(self, new):
        self._var = new._var
        self._val = new._val

    def _label(self):
        return repr(self._var)

    def _make_stale(self, reason):
        self._tape = _StaleTape(reason)


def _param_names(f, n):
    """Names of the first n positional parameters of f, for the notes on input ops."""
    code = getattr(f, "__code__", None)
    if type(f) is types.FunctionType and not hasattr(f, "__signature__") and not hasattr(f, "__wrapped__"):
        # a plain function: read its code object (inspect.signature costs tens of µs a call)
        names = list(code.co_varnames[:code.co_argcount])
        if code.co_flags & inspect.CO_VARARGS and len(names) < n:
            star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
            names.extend(f"{star}[{i}]" for i in range(n - len(names)))
        names.extend(f"args[{i}]" for i in range(len(names), n))
        return names[:n]
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.extend(f"{p.name}[{i}]" for i in range(n - len(names)))
            break
    names.extend(f"args[{i}]" for i in range(len(names), n))
    return names[:n]


def plain_scalar(v):
    """A numpy float64 or complex128 scalar as the Python number it subclasses; anything else as is."""
    t = type(v)
    if t is np.float64:
        return float(v)
    if t is np.complex128:
        return complex(v)
    return v


def trace(f, *args, ctx=None, wrt=None, _names=None, **kwargs):
    """Run ``f(*args, **kwargs)`` on Tracers and return ``(value, tape)``.

    Input ``%1`` is `f` itself. Then every differentiable leaf of `f` (the values a closure
    captures, the fields of a callable object) and of each positional argument (numbers,
    float arrays, inside tuples, lists, dicts, NamedTuples, dataclasses and objects) gets an
    Input op noted with its path (``x``, ``params["b"]``, ``model.weights``) and reaches `f`
    as a Tracer, inside a copy of its container: the user's objects are never changed.
    Keyword arguments reach `f` unchanged unless `wrt` names them; `wrt` (a position, a name,
    or a tuple of them) limits tracing to those arguments (and to the values `f` captures only
    if it names ``"f"``). `ctx` (default `BaseContext`)
    decides what is a primitive; user functions called inside `f` are traced through.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> def f(a, b):
    ...     return a / (a + b * b)
    >>> value, tape = tapegrad.trace(f, 2.0, 3.0)
    >>> value
    0.18181818181818182
    >>> print(tape)
    Tape
      inp %1::function f
      inp %2::float64   # a
      inp %3::float64   # b
      %4 = multiply(%3, %3)::float64
      %5 = add(%2, %4)::float64
      %6 = divide(%2, %5)::float64
    """
    if ctx is None:
        from .context import BaseContext  # (context imports this module)

        ctx = BaseContext()
    tape = Tape(ctx)
    stack = active_tapes()
    tape.level = len(stack) + 1
    tape.push(Input(f))

    def make_leaf(value, path):
        var = tape.push(Input(value, note=path))
        return var, Tracer(tape, var, value)

    specs, copies = {}, {}  # a value reachable from two arguments is one spec and one copy

    def traced_copy(x, path):
        spec, stand_ins = flatten(x, argument=True, leaf=make_leaf, path=path, memo=specs)
        return spec, unflatten(spec, stand_ins, copies)

    selected = _selector(wrt)
    # with wrt, the values f captures are differentiated only if wrt names "f"
    fspec, tf = traced_copy(f, "f") if wrt is None or selected(None, "f") else (Spec("static", f), f)
    argspecs, targs = [], []
    for i, (name, a) in enumerate(zip(_names or _param_names(f, len(args)), args)):
        spec, copy = traced_copy(a, name) if selected(i, name) else (Spec("static", a), a)
        if wrt is not None and selected(i, name) and spec.kind == "static":
            raise TypeError(
                f"wrt names argument {i} ({name}) at {user_location()}, a {type(a).__name__}, which "
                f"holds nothing differentiable (numbers and float arrays, alone or inside tuples, "
                f"lists, dicts, dataclasses and objects, are); pass a number or a float array"
            )
        argspecs.append(spec)
        targs.append(copy)
    kwspecs, tkwargs = {}, dict(kwargs)
    for name, v in kwargs.items():
        if wrt is not None and selected(None, name):
            kwspecs[name], tkwargs[name] = traced_copy(v, name)
    tape.meta["inputs"] = (fspec, argspecs, kwspecs)
    stack.append(tape)
    gc_pause = paused_gc()
    gc_pause.__enter__()
    try:
        try:
            out = tf(*targs, **tkwargs)
        except Exception as exc:
            # the partial tape, for debugging: what was recorded up to the failure
            exc.tapegrad_tape = tape
            if not isinstance(exc, ValueError):
                raise
            if "setting an array element with a sequence" not in str(exc):
                raise
            raise ConcreteValueError(
                f"numpy could not store a value into a plain array at {_location_of(exc)}: a traced "
                f"value cannot be written into a plain ndarray (out = np.zeros(3); out[0] = t). "
                f"Build the array from traced values instead: np.stack([...]), np.where(mask, t, "
                f"0.0), np.concatenate, or start from a traced array (out = t * np.zeros(3)) and "
                f"write into that"
            ) from exc
        if type(out) is not Tracer:
            ospec, leaves = flatten(out)
            if ospec.kind != "leaf" and any(type(v) is Tracer for v in leaves):
                out = record_call(build, (ospec, *leaves), None)
                tape.meta["structured_result"] = True
    finally:
        gc_pause.__exit__()
        stack.pop()
        tape.closed = True
    if type(out) is Tracer and out._tape is tape:
        tape.result = out._var
        return plain_scalar(out._val), tape
    if type(out) is Tracer:
        raise _escaped(out) if out._tape.closed else EscapedTracerError(
            f"{getattr(f, '__name__', f)!r} returned a value traced by an enclosing trace; "
            f"return values of this trace"
        )
    tape.result = tape.push(Constant(out, note="result does not depend on the inputs"))
    return out, tape


def _location_of(exc):
    """file:line of the innermost frame of a traceback outside tapegrad and numpy."""
    import os
    import traceback

    from .errors import _SKIP_DIRS

    where = "<unknown>"
    for fs in traceback.extract_tb(exc.__traceback__):
        if not os.path.abspath(fs.filename).startswith(_SKIP_DIRS):
            where = f"{os.path.basename(fs.filename)}:{fs.lineno}"
    return where


def _selector(wrt):
    if wrt is None:
        return lambda i, name: True
    chosen = set(wrt) if isinstance(wrt, (tuple, list, set)) else {wrt}
    for w in chosen:
        if not isinstance(w, (int, str)):
            raise TypeError(f"wrt takes argument positions (int) and names (str), not {w!r}")
    return lambda i, name: i in chosen or name in chosen



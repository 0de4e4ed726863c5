"""Tracers: the values a traced function runs on, and `record_call`, where their calls go.

A Tracer stands in for one value while the user's function runs (`tapegrad.tracing.trace`
makes them). Python operators forward
to the numpy function of the same meaning (``a * b`` is ``np.multiply``), numpy hands its
ufuncs and functions to the Tracer through ``__array_ufunc__`` / ``__array_function__``, and
every such call goes to the context of the Tracer's tape, which records it.

Traces nest: each tape has a level, and a call is recorded on the innermost tape among its
arguments; Tracers of outer tapes are constants there, so the values the inner rules compute
are themselves traced by the outer tape (this is what differentiates a gradient).
"""
from __future__ import annotations

import operator
import threading
from fractions import Fraction

import numpy as np

from .errors import ConcreteValueError, EscapedTracerError, StaleViewError, type_str, user_location
from .buffers import Buffer, HoldsBuffer, TracedBuffer, unbuffer_all
from .arraylike import ArrayLike
from .plainvalues import PlainValues
from .registry import KEEP_WHOLE, VIEWS  # declared with each rule: @rrule(fn, view=True, keep_whole=True)
from .views import note_view, view_again
from .pytree import nested
from .structures import replace_items


__all__ = ["THREAD", "Tracer", "new_tracer", "record_call", "newer_boxed", "innermost_tape", "wrap_result", "active_tapes", "escaped_error", "plain_scalar",
           "KEEP_WHOLE", "plain_options"]

class _Local(threading.local):
    """This thread's stack of tapes being recorded (made empty in each thread that asks)."""

    def __init__(self):
        self.stack = []


#: this thread's state: ``THREAD.stack``, the tapes being recorded (`active_tapes`); read as an
#: attribute where a function call per numpy call counts (the stand-ins of tapegrad.literals)
THREAD = _local = _Local()
_new = object.__new__  # an object of a slotted class, without a call of its __init__
_ndarray = np.ndarray
_float64 = np.float64
#: the operands beside a Tracer that hold nothing traced: a call of them and Tracers of one tape
#: is that tape's to record, without `record_call`'s search (the operators, two-input ufuncs)
_PLAIN_OPERANDS = frozenset((float, int, _float64, _ndarray))


def active_tapes() -> list:
    """The tapes being recorded in this thread, outermost first."""
    return _local.stack


class _StaleTape:
    """Stands in for the tape of a view whose base was written in place: the next use takes
    the view again from its base (`refresh`), as numpy shows the write through the view."""

    __slots__ = ("reason", "level", "closed", "tape")

    def __init__(self, reason, tape):
        self.reason = reason
        self.tape = tape
        self.level = 1 << 60  # chosen as "innermost" by record_call, which then raises
        self.closed = True


def escaped_error(tracer):
    if type(tracer._tape) is _StaleTape:
        return StaleViewError(tracer._tape.reason + f"; it was used again at {user_location()}")
    return EscapedTracerError(
        f"{tracer._described()} was used at {user_location()} "
        f"after the trace that made it had ended (it was kept in a global, a list or an "
        f"attribute); return it from the traced function instead, or keep a plain value"
    )


def record_call(fn, args, kwargs):
    """Record ``fn(*args, **kwargs)`` on the innermost tape among the Tracers in the call.

    Every operation on a Tracer comes here (it is the Tracer's `_dispatch`): the operators
    and methods of `ArrayLike`, numpy's protocols, `primitive`-marked functions. Only the
    arithmetic operators and one-input ufuncs of a Tracer whose tape is plainly the call's
    (the other operand a constant or a Tracer of the same tape) go to its context at once.
    """
    tape = None
    boxed = False
    for a in args:
        t = type(a)
        if t is Tracer:
            at = a._tape
            if tape is None or at.level > tape.level:
                tape = at
        elif t is float or t is _ndarray:  # a constant: nothing to look into
            continue
        elif (t is list or t is tuple) and a:
            try:
                tape = _innermost(nested(a), tape)
            except HoldsBuffer:
                return record_call(fn, unbuffer_all(args), kwargs)
            boxed = True
        elif t is Buffer or t is TracedBuffer:
            # a preallocated buffer: its plain array, or the traced value it stands for (the
            # buffer itself would change its kind on the tape when written)
            return record_call(fn, unbuffer_all(args), kwargs)
        elif isinstance(a, ArrayLike):
            boxed = True
    if kwargs and not plain_options(kwargs):
        try:
            tape = _innermost(nested(kwargs.values()), tape)
        except HoldsBuffer:
            return record_call(fn, args, dict(zip(kwargs, unbuffer_all(kwargs.values()))))
        boxed = True
    if tape is None:  # pragma: no cover - callers only come here holding a Tracer
        return fn(*args, **kwargs)
    if boxed:
        outer = newer_boxed(args, kwargs, tape)
        if outer is not None:
            return outer._dispatch(fn, args, kwargs)
    if tape.closed:
        for a in nested((*args, *(kwargs or {}).values())):
            if type(a) is Tracer and a._tape.closed and not refresh(a):
                raise escaped_error(a)
        return record_call(fn, args, kwargs)
    out = tape.ctx.record(tape, fn, args, kwargs)
    if fn in VIEWS and type(args[0]) is Tracer:
        note_view(out, fn, args, kwargs)
    return out


def newer_boxed(args, kwargs, tape):
    """A boxed value among the arguments (a dual number) made inside the trace of `tape` or of
    a newer one, or None.

    Its tag is later than the trace's epoch, or it holds a Tracer of that tape within: it is
    the newest level of nesting in the call (``jvp`` called inside a traced function: reverse
    over forward), so the call is its to handle, and the Tracers are constants to it. Otherwise the tape records the call and the boxed
    values are its constants (a trace inside ``jvp``: forward over reverse).
    """
    epoch = tape.meta.get("epoch", 0)
    for a in nested((*args, *(kwargs or {}).values())):
        if isinstance(a, ArrayLike) and type(a) is not Tracer:
            if getattr(a, "tag", 0) > epoch:
                return a  # made after the trace began: inside it
            v = a._val
            while isinstance(v, ArrayLike):
                if type(v) is Tracer and v._tape.level >= tape.level:
                    return a
                v = v._val
    return None


#: the types of options that hold no traced value (axis=1, keepdims=True, out=None)
_OPTIONS = frozenset((int, bool, type(None)))


def plain_options(kwargs) -> bool:
    """True when every keyword argument is a plain int, bool or None: nothing to look into."""
    for v in kwargs.values():
        if type(v) not in _OPTIONS:
            return False
    return True


def innermost_tape(args, kwargs):
    """The innermost tape among the Tracers of a call's arguments (inside lists and tuples), or None."""
    try:
        tape = _innermost(nested(args), None)
        return _innermost(nested(kwargs.values()), tape) if kwargs else tape
    except HoldsBuffer:  # a buffer: the traced value it stands for, if it was written one
        unboxed = dict(zip(kwargs, unbuffer_all(kwargs.values()))) if kwargs else None
        return innermost_tape(unbuffer_all(args), unboxed)


def refresh(view) -> bool:
    """Take a view whose base was written in place again from its base (False: it cannot be).

    Staling a view is free and taking it again costs one op, so a loop that reads rows of a
    buffer it writes records each row once, when it is next used.
    """
    stale = view._tape
    if type(stale) is not _StaleTape or stale.tape.closed or getattr(view, "_base", None) is None:
        return False
    base = view._base[0]
    if type(base._tape) is _StaleTape and not refresh(base):
        return False
    view._tape = stale.tape
    siblings = base._views
    n = len(siblings)
    new = view_again(view)
    del siblings[n:]  # taking the view again noted new views of base: view stands for them
    siblings.append(view)
    view._var, view._val = new._var, new._val
    return True


def _innermost(items, tape):
    """The innermost of `tape` and the tapes of the Tracers among `items`."""
    for a in items:
        t = type(a)
        if t is Tracer and (tape is None or a._tape.level > tape.level):
            tape = a._tape
        elif t is Buffer or t is TracedBuffer:
            raise HoldsBuffer
    return tape


def wrap_result(ctx, tape, var, y, fn=None):
    """The traced value of a recorded call; a tuple or list result becomes one Tracer per element."""
    out = new_tracer(tape, var, y)
    if isinstance(y, (tuple, list)) and fn not in KEEP_WHOLE:
        items = [ctx.record(tape, operator.getitem, (out, i), None) for i in range(len(y))]
        # a named tuple (numpy's SlogdetResult, EighResult, ...) keeps its type and fields
        return replace_items(y, items)
    return out


_PICKLERS = ("pickle", "_pickle", "copyreg", "copy", "cloudpickle", "dill")  # their frames are not the user's


class Tracer(PlainValues, ArrayLike):
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
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # a ufunc of this Tracer alone (np.sin(t)), or of it and a plain number or array or a
        # Tracer of its tape (``X @ t``, ``y * t``, which numpy hands here): its tape records
        # it, as `record_call` would find; every other call (keywords, methods, an outer
        # tape's Tracer, subclasses) takes ArrayLike's way
        if not kwargs and method == "__call__":
            tape = self._tape
            n = len(inputs)
            if n == 1:
                if not tape.closed:
                    return tape.ctx.record(tape, ufunc, inputs, kwargs)
            elif n == 2:
                a, other = inputs
                if other is self:
                    other = a
                to = type(other)
                if (to in _PLAIN_OPERANDS or to is Tracer and other._tape is tape) and not tape.closed:
                    return tape.ctx.record(tape, ufunc, inputs, kwargs)
        return ArrayLike.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)

    def __reduce__(self):
        raise ConcreteValueError(
            f"cannot pickle {self._described()} at "
            f"{user_location(skip_packages=_PICKLERS)}: it exists only inside its trace, and a "
            f"pickled copy would carry its value without its gradient. Inside the function, use "
            f"x.copy() or copy.copy(x) for a copy; to send work elsewhere, pickle plain values, the tape "
            f"(tapegrad.trace(f, *args)[1]) or the gradient function (tapegrad.compiled_grad(f))"
        )

    # --- concrete values ---
    # Control flow takes the path of the value at trace time, as a tracing JIT does, and a
    # guard op records the assumption so that replay can check it (see guards.py).
    def _guard(self, guard, value):
        tape = self._tape
        if tape.closed:
            if not refresh(self):
                raise escaped_error(self)
            tape = self._tape
        tape.push_call(guard, (self._var, value), None, value, user_location())
        return value

    def __repr__(self):
        return f"Tracer({self._var}::{type_str(self._val)} = {self._val!r})"

    def __hash__(self):
        # a number hashes by its value, so that equal numbers meet in a set or a dict; a traced
        # value's value is only its value at trace time, and hashing by identity would make
        # {a, b} hold two equal numbers: either would be silently wrong
        raise self._refused(TypeError(
            f"{self._described()} was used in a set or as a dict "
            f"key at {user_location()}; a traced value has no hash (its value is known only at "
            f"trace time); key by a name or a position, or keep the values in a list"
        ))

    def __copy__(self):
        # copy.copy / copy.deepcopy: a new traced value of the same value, on the same tape (an
        # array is copied by a recorded np.copy, so a write into the copy leaves this one alone)
        if isinstance(self._val, np.ndarray):
            return np.copy(self)
        return Tracer(self._tape, self._var, self._val)

    def __deepcopy__(self, memo):
        return self.__copy__()

    # --- in-place writes (see ArrayLike.__setitem__) ---
    def _take(self, new):
        if type(new) is not Tracer:
            # a dual value of a forward pass inside the gradient (jvp in the function grad
            # differentiates) written into a traced array that does not vary with that pass:
            # this object cannot become a dual value
            raise TypeError(
                f"{self._label()} at {user_location()} was written in place with a value that "
                f"varies in a forward pass (jvp) run inside the traced function; this array "
                f"does not vary in that pass and cannot take it: make it from a value that does "
                f"(np.zeros_like(x) of an argument of the jvp), or build the result with "
                f"np.stack, np.concatenate or np.where instead of writing into it"
            )
        self._var = new._var
        self._val = new._val

    def _label(self):
        return repr(self._var)

    def _described(self):
        """How a message names this value: ``the traced value %3::float64[2]``."""
        return f"the traced value {self._var}::{type_str(self._val)}"

    def _modular_pow_error(self, other, modulo):
        return ArrayLike._modular_pow_error(self, other, modulo, self._described())

    def _make_stale(self, reason):
        if type(self._tape) is not _StaleTape:
            self._tape = _StaleTape(reason, self._tape)


def _operators(ufunc, name):
    """``t <op> other`` and ``other <op> t`` for a Tracer. When the other operand is a Tracer
    of the same tape or a plain number or array, the call's tape is `t`'s, so it goes to the
    tape's context at once (what `record_call` would find, without its search); anything else
    takes `record_call`. The operators of a primitive's every step, so a Python call counts.
    A `Fraction` operand is taken as the float Python's arithmetic makes of it
    (``1.5 * Fraction(1, 3)`` is ``1.5 * float(Fraction(1, 3))``)."""
    def forward(self, other, modulo=None):  # (only pow(t, y, m) passes a modulo)
        if modulo is not None:
            raise self._modular_pow_error(other, modulo)
        tape = self._tape
        to = type(other)
        if (to is Tracer and other._tape is tape or to in _PLAIN_OPERANDS) and not tape.closed:
            return tape.ctx.record(tape, ufunc, (self, other), None)
        if to is Fraction:
            return forward(self, float(other))
        return record_call(ufunc, (self, other), None)

    def reflected(self, other):
        tape = self._tape
        to = type(other)
        if to in _PLAIN_OPERANDS and not tape.closed:
            return tape.ctx.record(tape, ufunc, (other, self), None)
        if to is Fraction:
            return reflected(self, float(other))
        return record_call(ufunc, (other, self), None)

    forward.__name__ = f"__{name}__"
    reflected.__name__ = f"__r{name}__"
    return forward, reflected


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul)]:
    _f, _r = _operators(_uf, _name)
    setattr(Tracer, f"__{_name}__", _f)
    setattr(Tracer, f"__r{_name}__", _r)
del _name, _uf, _f, _r


def new_tracer(tape, var, val):
    """``Tracer(tape, var, val)``, made without a call of Tracer.__init__ (recording's hot path)."""
    out = _new(Tracer)
    out._tape = tape
    out._var = var
    out._val = val
    return out


def plain_scalar(v):
    """A numpy float64 or complex128 scalar as the Python number it subclasses; anything else as is."""
    t = type(v)
    if t is np.float64:
        return float(v)
    if t is np.complex128:
        return complex(v)
    return v

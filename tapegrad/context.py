"""Contexts decide what counts as a primitive and how a primitive is recorded.

Every call that a Tracer can see (an operator, a numpy ufunc or function, a function marked
with `primitive`) reaches ``ctx.record``. The context either records it as one op
(`record_primitive`) or, for a `primitive`-marked function it does not treat as primitive,
runs the function's body on the Tracers so that only the primitives inside are recorded.

`BaseContext` records every numpy call as itself and traces through the user's marked
functions. Subclass it to keep a function whole or to record extra information.

`tapegrad.tracing.trace` runs a function under a context.
"""
from __future__ import annotations

import inspect

import numpy as np

from .errors import NoRuleError, TapegradError, qualified_name, type_str, ufunc_method, user_location
from .pytree import any_nested, map_nested
from .program.guards import guard_raises
from .tape import Call
from .arraylike import is_marked_primitive, is_traceable, primitive
from .tracer import Tracer, wrap_result


__all__ = ["BaseContext", "primitive", "is_marked_primitive", "is_traceable", "lift", "traced_on", "positional",
           "describe_call", "signature_of"]


def lift(args, tape):
    """Split call arguments into (values, tape arguments), two tuples.

    A Tracer of `tape` becomes its value and its Variable, also inside lists and tuples.
    Anything else, including a Tracer of an enclosing (outer) trace, is a constant from this
    tape's point of view.
    """
    # every primitive pays for this: one and two arguments (functions of one array, binary
    # operators) are split without the loop of `_lift_each`, which does the same for any call
    n = len(args)
    if n == 2:
        a, b = args
        ta, tb = type(a), type(b)
        if ta is Tracer and a._tape is tape:
            av, a = a._val, a._var
        elif ta is list or ta is tuple:
            return _lift_each(args, tape)
        else:
            av = a
        if tb is Tracer and b._tape is tape:
            bv, b = b._val, b._var
        elif tb is list or tb is tuple:
            return _lift_each(args, tape)
        else:
            bv = b
        return (av, bv), (a, b)
    if n == 1:
        a = args[0]
        if type(a) is Tracer and a._tape is tape:
            return (a._val,), (a._var,)
    return _lift_each(args, tape)


def _lift_each(args, tape):
    """`lift`, argument by argument."""
    vals = []
    targs = []
    for a in args:
        t = type(a)
        if t is Tracer and a._tape is tape:
            vals.append(a._val)
            targs.append(a._var)
        elif (t is list or t is tuple) and a and any_nested(a, own := traced_on(tape)):
            vals.append(t(map_nested(lambda x: x._val if own(x) else x, a)))
            targs.append(t(map_nested(lambda x: x._var if own(x) else x, a)))
        else:
            vals.append(a)
            targs.append(a)
    return tuple(vals), tuple(targs)


def traced_on(tape):
    """``test(x)``: is `x` a Tracer of `tape` (not of an enclosing trace, not a constant)?"""
    return lambda x: type(x) is Tracer and x._tape is tape


def positional(fn, args, kwargs, kind=Tracer):
    """Move traced (or, with ``kind=Dual``, dual) keyword arguments of a call into position, so
    that their tangents are returned; raise when the signature does not allow it."""
    try:
        bound = signature_of(fn).bind(*args, **kwargs)
        bound.apply_defaults()  # so that a traced keyword after missing ones moves into position
    except (TypeError, ValueError):
        bound = None
    if bound is None:  # (a signature that cannot be read, or does not take these arguments)
        raise TapegradError(
            f"{describe_call(fn, args, kwargs)} at {user_location()} passes a traced value by "
            f"keyword; pass it by position so that its gradient can be returned"
        )
    stuck = next((k for k, v in bound.kwargs.items() if type(v) is kind), None)
    if stuck is not None:
        # a keyword the signature takes only by keyword (numpy.pad's constant_values= lands in
        # its **kwargs): no position to move it to, so no tangent of it can be returned
        hint = _KEYWORD_ONLY_HINTS.get((getattr(fn, "__name__", ""), stuck), "")
        raise TapegradError(
            f"{describe_call(fn, args, kwargs)} at {user_location()} passes a traced value as "
            f"{stuck}=, which {qualified_name(fn)} takes only by keyword, so its gradient "
            f"cannot be returned; compute the part it fills from a plain value and add the "
            f"traced part yourself{hint}"
        )
    return bound.args, bound.kwargs


#: (function name, keyword) -> how to write a call whose traced keyword cannot move into position
_KEYWORD_ONLY_HINTS = {
    ("pad", "constant_values"): (
        ": np.pad(x, w) + c * np.pad(np.zeros_like(x), w, constant_values=1.0) pads x with a "
        "traced c"),
}


# numpy's signatures of a ufunc's methods: Python's inspect reads only the first options of
# theirs, and numpy hands every option to tapegrad by keyword (a traced initial= or where= is
# moved into its place, as numpy takes it, so that its tangent can be returned)
def _reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """numpy's ``ufunc.reduce``."""


def _accumulate(array, axis=0, dtype=None, out=None):
    """numpy's ``ufunc.accumulate``."""


def _reduceat(array, indices, axis=0, dtype=None, out=None):
    """numpy's ``ufunc.reduceat``."""


METHOD_SIGNATURES = {name: inspect.signature(stub) for name, stub in
                     (("reduce", _reduce), ("accumulate", _accumulate), ("reduceat", _reduceat))}


def signature_of(fn):
    """``inspect.signature(fn)``; numpy's own for the reduce, accumulate and reduceat of a ufunc."""
    method = ufunc_method(fn)
    if method is not None and method[1] in METHOD_SIGNATURES:
        return METHOD_SIGNATURES[method[1]]
    return inspect.signature(fn)


def describe_call(fn, args, kwargs) -> str:
    """``numpy.sinc(%3::float64[4], 2)``: a call as error messages show it."""
    def one(a):
        if type(a) is Tracer:
            return f"{a._var}::{type_str(a._val)}"
        if isinstance(a, (list, tuple)):
            inner = ", ".join(one(x) for x in a)
            return f"[{inner}]" if isinstance(a, list) else f"({inner})"
        if isinstance(a, type):  # dtype=np.float32
            return qualified_name(a)
        return type_str(a) if hasattr(a, "shape") or callable(a) else repr(a)

    parts = [one(a) for a in args]
    parts += [f"{k}={one(v)}" for k, v in (kwargs or {}).items()]
    return f"{qualified_name(fn)}({', '.join(parts)})"


class BaseContext:
    """Records every primitive as a plain call; traces through `primitive`-marked functions."""

    def complex_input(self, value, path):
        """Called for each complex argument of a trace; a gradient context notes it (see
        `GradContext.complex_input`), a plain trace takes it as it is."""

    def is_primitive(self, fn, *args) -> bool:
        """True when `fn` should become one op of the tape: anything but a `primitive`-marked
        function whose body can be traced (the replacements in tapegrad.scipy stay whole)."""
        return not is_traceable(fn)

    def record_primitive(self, tape, fn, *args, **kwargs):
        """Push ``fn(*args, **kwargs)`` onto `tape` and return the traced result."""
        vals, targs = lift(args, tape)
        if kwargs:
            kvals, ktargs = lift(list(kwargs.values()), tape)
            kw_vals = dict(zip(kwargs, kvals))
            kw_targs = dict(zip(kwargs, ktargs))
        else:
            kw_vals = kw_targs = None
        try:
            y = fn(*vals, **kw_vals) if kw_vals else fn(*vals)
        except Exception as exc:
            # the user's code may catch it and go on: the path after this point was chosen by
            # the exception, and a guard records that for replay
            tape.push(Call(guard_raises, (fn, type(exc), *targs), kw_targs, None, user_location()))
            raise
        var = tape.push_call(fn, targs, kw_targs, y)
        return wrap_result(self, tape, var, y, fn)

    def record(self, tape, fn, args, kwargs):
        """Decide and record: the entry point of every call a Tracer sees."""
        if self.is_primitive(fn, *args):
            if kwargs:
                return self.record_primitive(tape, fn, *args, **kwargs)
            return self.record_primitive(tape, fn, *args)
        # only a `primitive`-marked function has a body to trace through: numpy's functions
        # wrap implementations that call back into the same numpy function on a Tracer
        body = getattr(fn, "__wrapped__", None) if is_marked_primitive(fn) else None
        if body is None:
            raise NoRuleError(
                f"{type(self).__name__} does not treat {describe_call(fn, args, kwargs)} at "
                f"{user_location()} as a primitive and has no body to trace through; make "
                f"is_primitive return True for it"
            )
        return body(*args, **kwargs) if kwargs else body(*args)

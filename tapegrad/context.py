"""Contexts decide what counts as a primitive and how a primitive is recorded.

Every call that a Tracer can see (an operator, a numpy ufunc or function, a function marked
with `primitive`) reaches ``ctx.record``. The context either records it as one op
(`record_primitive`) or, for a `primitive`-marked function it does not treat as primitive,
runs the function's body on the Tracers so that only the primitives inside are recorded.

`BaseContext` records every numpy call as itself and traces through the user's marked
functions. Subclass it to keep a function whole or to record extra information.
"""
from __future__ import annotations

import inspect

from .errors import NoRuleError, TapegradError, qualified_name, type_str, user_location
from .pytree import any_nested, map_nested
from .tape import Call
from .arraylike import is_marked_primitive, is_traceable, primitive
from .tracer import Tracer, record_call, wrap_result

__all__ = ["BaseContext", "primitive", "is_marked_primitive", "is_traceable", "lift", "positional",
           "describe_call"]


def lift(args, tape):
    """Split call arguments into (values, tape arguments).

    A Tracer of `tape` becomes its value and its Variable, also inside lists and tuples.
    Anything else, including a Tracer of an enclosing (outer) trace, is a constant from this
    tape's point of view.
    """
    vals = []
    targs = []
    for a in args:
        t = type(a)
        if t is Tracer and a._tape is tape:
            vals.append(a._val)
            targs.append(a._var)
        elif (t is list or t is tuple) and a and any_nested(a, lambda x: type(x) is Tracer and x._tape is tape):
            vals.append(t(map_nested(lambda x: x._val if type(x) is Tracer and x._tape is tape else x, a)))
            targs.append(t(map_nested(lambda x: x._var if type(x) is Tracer and x._tape is tape else x, a)))
        else:
            vals.append(a)
            targs.append(a)
    return vals, targs


def positional(fn, args, kwargs, kind=Tracer):
    """Move traced (or, with ``kind=Dual``, dual) keyword arguments of a call into position, so
    that their tangents are returned; raise when the signature does not allow it."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()  # so that a traced keyword after missing ones moves into position
    except (TypeError, ValueError):
        bound = None
    if bound is None or any(type(v) is kind for v in bound.kwargs.values()):
        raise TapegradError(
            f"{describe_call(fn, args, kwargs)} at {user_location()} passes a traced value by "
            f"keyword; pass it by position so that its gradient can be returned"
        )
    return bound.args, bound.kwargs


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
        y = fn(*vals, **kw_vals) if kw_vals else fn(*vals)
        var = tape.push(Call(fn, tuple(targs), kw_targs, y))
        return wrap_result(self, tape, var, y, fn)

    def record(self, tape, fn, args, kwargs):
        """Decide and record: the entry point of every call a Tracer sees."""
        if self.is_primitive(fn, *args):
            if kwargs:
                return self.record_primitive(tape, fn, *args, **kwargs)
            return self.record_primitive(tape, fn, *args)
        body = getattr(fn, "__wrapped__", None)
        if body is None:
            raise NoRuleError(
                f"{type(self).__name__} does not treat {describe_call(fn, args, kwargs)} at "
                f"{user_location()} as a primitive and has no body to trace through; make "
                f"is_primitive return True for it"
            )
        return body(*args, **kwargs) if kwargs else body(*args)

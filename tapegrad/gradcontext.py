"""Reverse mode, forward half: `GradContext`, which records each primitive through its rrule.

On a tape that is not private (`pullback`'s, `trace(f, x, ctx=GradContext())`), a primitive
is recorded as ``rrule(fn, *args)`` followed by two reads, the value (``getitem(%4, 0)``) and
the pullback (``getitem(%4, 1)``), and ``pullbacks`` maps the value's Variable to the
Variables of the rrule op and the pullback. The backward half is `tapegrad.sweep`.

`grad`'s tape is private (``GradContext(private=True)``): nothing but its own unrecorded
sweep reads it, so each primitive is one op, ``fn(*args)`` with the primitive's value (the
ids in an error raised inside `grad` are the ones `trace` prints), the op keeps the pullback
itself (``op.pullback``), and a large array is held only as a stand-in of its shape: an
intermediate lives as long as it would in plain numpy unless a pullback needs it. What a
long tape holds per op is counted in benchmarks/README.md ("Memory per recorded op"): the
pullback in a slot of the op rather than in a table keyed by its Variable (8 bytes against
50-100 for a dict entry at its peak), and ``fn(*args)`` rather than ``rrule(fn, *args)``
(the arguments' tuple from `lift` kept as it is, rather than one more tuple per op).

Both kinds of record are made here, with the tape's and the tracer's one fast constructor
(`Tape.push_call`, `new_tracer`), which the private record writes out once (a test holds the
two to the same objects).
"""
from __future__ import annotations

import inspect
import operator
import types

import numpy as np

from .context import BaseContext, describe_call, is_traceable, lift, positional, traced_on
from .errors import (
    COMPLEX_FIX,
    ComplexValueError,
    NoRuleError,
    is_complex_value,
    qualified_name,
    type_str,
    ufunc_method_hint,
    user_location,
)
from .pytree import any_nested
from . import registry
from .registry import COMPLEX, NEEDS, NONDIFF, RULES, rrule, stand_in
from .tangents import getitem
from .tape import Call, Variable
from .tracer import Tracer, new_tracer, plain_options, wrap_result

__all__ = ["GradContext", "complex_error"]

_ndarray = np.ndarray
_float64 = np.float64
_F8 = registry.FLOAT64
#: the products of two numbers told which factor is a constant (see `GradContext.record`)
_SCALED = frozenset((np.multiply, np.divide))
_new = object.__new__  # a slotted object without a call of its __init__


class GradContext(BaseContext):
    """Records primitives through their rrules, for the reverse sweep.

    A function is a primitive when it has a rule or is marked non-differentiable. A
    `primitive`-marked user function without a rule is traced through; any other function
    without a rule raises `NoRuleError`.

    ``private=True`` (what `grad` uses) is for a tape that nothing but its own unrecorded sweep
    (`back_values`) reads: each primitive is one op, ``fn(*args)`` with the primitive's value,
    its pullback is kept on it (``op.pullback``), and a large array value is held only as a
    `stand_in` of its shape and dtype.
    """

    #: set once a complex value is on the tape (a complex argument, or the result of a rule
    #: written for complex values): from then on each rule's arguments are checked (a rule
    #: outside `registry.COMPLEX` that meets one raises), and the sweep gives a real argument
    #: the real part of its cotangent (`sweep.real_part_for`)
    complex_seen = False

    def __init__(self, private=False):
        #: value Variable -> (the rrule op's Variable, the pullback's Variable); empty on a
        #: private tape, whose ops keep their pullbacks themselves (``op.pullback``)
        self.pullbacks = {}
        self.private = private
        # read for every primitive: an instance attribute is a specialized load, a class
        # attribute read through an instance a generic lookup each time
        cls = type(self)
        self.complex_seen = cls.complex_seen
        if cls is not GradContext and (cls.is_primitive is not GradContext.is_primitive
                or cls.record_primitive is not GradContext.record_primitive):
            # a subclass that decides what is a primitive, or records one its own way, is
            # asked about every call, as BaseContext asks
            self.record = types.MethodType(BaseContext.record, self)

    def complex_input(self, value, path):
        """A complex argument: taken (autograd's convention, see the README), and noted."""
        self.complex_seen = True

    def is_primitive(self, fn, *args) -> bool:
        return fn in RULES or fn in NONDIFF or not is_traceable(fn)

    def record_primitive(self, tape, fn, *args, **kwargs):
        if fn not in RULES:
            if fn in NONDIFF:
                out = BaseContext.record_primitive(self, tape, fn, *args, **kwargs)
                if self.complex_seen and fn not in COMPLEX and is_complex_value(out):
                    # np.sign of a complex z is z/|z|, not piecewise constant: a derivative
                    # that stops here would be silently wrong
                    raise complex_error(describe_call(fn, args, kwargs), getattr(out, "_val", out))
                return out
            raise NoRuleError(
                f"no rrule for {describe_call(fn, args, kwargs)} at {user_location()}; "
                f"{ufunc_method_hint(fn, RULES)}register "
                f"one with @tapegrad.rrule({qualified_name(fn)}), or mark it "
                f"tapegrad.nondifferentiable({qualified_name(fn)}) if its derivative is zero"
            )
        return GradContext.record(self, tape, fn, args, kwargs)

    def record(self, tape, fn, args, kwargs):
        """Record ``rrule(fn, *args)`` and its two reads (on a private tape, ``fn(*args)``
        with the pullback on the op) and return the traced value of ``fn(*args)``. A function
        without a rule goes to `BaseContext.record`, which decides what it is.

        A function with a rule is always a primitive here, so the base context's decision is
        skipped for it: this is the per-primitive cost of every gradient.
        """
        rule = RULES.get(fn)
        if rule is None:
            return BaseContext.record(self, tape, fn, args, kwargs)
        if kwargs and not plain_options(kwargs) and any_nested(kwargs.values(), traced_on(tape)):
            kwargs = _concrete_ints(kwargs, tape)
            if any_nested(kwargs.values(), traced_on(tape)):
                args, kwargs = positional(fn, args, kwargs)
        vals, targs = lift(args, tape)
        rule_kwargs = kwargs
        if fn in NEEDS:
            # which arguments are traced: only their tangents will be read. Told when it helps:
            # a constant beside an array, or a constant factor or divisor of a number (whose
            # pullback then keeps the constant alone). `lift` puts a constant in both lists as
            # the same object, a traced value as value and Variable
            if len(vals) == 2:  # a binary operator: the same, without the maps
                a, b = vals
                ta, tb = targs
                if (ta is a or tb is b) and (type(a) is _ndarray or type(b) is _ndarray or fn in _SCALED):
                    needs = (ta is not a, tb is not b)
                    rule_kwargs = {**kwargs, "needs": needs} if kwargs else {"needs": needs}
            elif _ndarray in map(type, vals):
                needs = tuple(map(operator.is_not, targs, vals))
                if False in needs:
                    rule_kwargs = {**kwargs, "needs": needs} if kwargs else {"needs": needs}
        try:
            pair = rule(*vals, **rule_kwargs) if rule_kwargs else rule(*vals)
        except TypeError:
            _check_rule_takes(rule, fn, args, vals, kwargs, rule_kwargs)
            raise
        y, pb = pair
        ty = type(y)
        if ty is _ndarray:
            dtype = y.dtype
            if dtype is _F8:  # the common dtype, known real and not integral
                integral = packed = False
            else:
                kind = dtype.kind
                if kind == "c":
                    self._allow_complex(fn, args, kwargs, y)
                integral = kind in "iub"
                packed = False
        elif ty is float or ty is _float64:
            integral = packed = False
        else:
            if is_complex_value(y):
                self._allow_complex(fn, args, kwargs, y)
            integral = isinstance(y, (np.integer, np.bool_))
            packed = isinstance(y, (tuple, list))
        if self.complex_seen and fn not in COMPLEX and any(map(is_complex_value, vals)):
            # a complex value made by a rule that handles it, reaching one that does not
            raise complex_error(describe_call(fn, args, kwargs), next(v for v in vals if is_complex_value(v)), "takes")
        # an integer result of a float argument (np.sum(x, dtype=int), x.astype(int)) is
        # piecewise constant: its derivative is zero, so its pullback is never asked. (Integer
        # arguments, ints given where floats could be, keep the derivative of the real function)
        if integral:
            integral = _from_floats(vals, targs)
        if self.private:
            if ty is _ndarray and y.nbytes >= registry.STAND_IN_BYTES:
                kept = stand_in(y)
                if _ndarray in map(type, targs):
                    # the rule has run, and of its arguments only the Variables are read from
                    # here on: a large constant is kept as its shape, not held until the sweep
                    # (asked only of a large result, which is where large constants meet, so
                    # that small-array code does not pay for the check)
                    targs = tuple(map(stand_in, targs))
            else:
                kept = y
            # `Tape.push_call` written out, once, for grad's hot path (a call per primitive is
            # measurable there: benchmarks/README.md, "One constructor"); tests/test_sweep.py
            # checks that it builds what push_call builds, slot for slot
            op = _new(Call)
            op.fn = fn  # (not ``rrule(fn, *targs)``: a tuple less per op; the sweep adds fn back)
            op.args = targs
            op.kwargs = kwargs or None
            op.val = kept
            op.note = ""
            # the pullback is kept on its op (an integral result's is never asked)
            op.pullback = None if integral else pb
            ops = tape.ops
            ops.append(op)
            op.id = len(ops)
            yv = op.var = _new(Variable)
            yv._op = op
            if not packed:  # `new_tracer`, written out and checked likewise
                out = _new(Tracer)
                out._tape = tape
                out._var = yv
                out._val = y
                return out
        else:  # the rule's (value, pullback) as the rrule op's value, and a read of each
            push = tape.push_call
            rv = push(rrule, (fn,) + targs, kwargs or None, pair)
            yv = push(getitem, (rv, 0), None, y)
            pv = push(getitem, (rv, 1), None, pb)
            if not integral:
                self.pullbacks[yv] = (rv, pv)
        if packed:  # a tuple or list result: one Tracer per element
            return wrap_result(self, tape, yv, y, fn)
        return new_tracer(tape, yv, y)

    def _allow_complex(self, fn, args, kwargs, y):
        """A complex result is kept only from a rule written for complex values (`complex_rules`)."""
        if fn not in COMPLEX:
            raise complex_error(describe_call(fn, args, kwargs), y)
        self.complex_seen = True  # from now on, each rule's arguments are checked too


def _from_floats(vals, targs) -> bool:
    """True when a traced argument among `vals` holds floating-point numbers."""
    for v, t in zip(vals, targs):
        if t is not v and (type(v) is float or isinstance(v, (_ndarray, np.floating)) and v.dtype.kind == "f"):
            return True
    return False


def complex_error(what, value, verb="gives"):
    """The error for a complex value met in a gradient: `what` made it (a call, an argument)."""
    return ComplexValueError(
        f"{what} at {user_location()} {verb} {type_str(value) if not isinstance(value, (tuple, list)) else 'a complex value'}: "
        f"{COMPLEX_FIX}"
    )


def _check_rule_takes(rule, fn, args, vals, kwargs, rule_kwargs):
    """After a TypeError from a rule: if the call does not fit the rule's signature (np.multiply
    with dtype=, which numpy takes and the rule does not), say so and what to do instead."""
    kwargs = kwargs or {}
    try:
        inspect.signature(rule).bind(*vals, **(rule_kwargs or {}))
    except TypeError:
        names = [k for k in kwargs if k not in inspect.signature(rule).parameters]
        unknown = ", ".join(f"{k}=" for k in names) or "these arguments"
        raise NoRuleError(
            f"{describe_call(fn, args, kwargs)} at {user_location()}: the rule of "
            f"{qualified_name(fn)} does not take {unknown}; leave it out (for dtype=, convert "
            f"the result with .astype), or register a rule that takes it with "
            f"@tapegrad.rrule({qualified_name(fn)})"
        ) from None
    except ValueError:  # no signature to check against
        pass


def _concrete_ints(kwargs, tape):
    """Traced integers passed by keyword (axis=, n=) are structure, not data: take their values,
    each with a guard, as range() would."""
    def one(v):
        if type(v) is Tracer and v._tape is tape and np.result_type(v._val).kind in "iu":
            return operator.index(v)
        if type(v) in (list, tuple):
            return type(v)(one(x) for x in v)
        return v

    return {k: one(v) for k, v in kwargs.items()}

"""Reverse mode: the gradient context and the user's entry points.

Forward: `GradContext` records each primitive as ``rrule(fn, *args)`` followed by two reads,
the value (``getitem(%4, 0)``) and the pullback (``getitem(%4, 1)``), and remembers which
pullback belongs to which value. Backward: the sweep of `tapegrad.sweep`, recorded onto the
same tape (`pullback`) or run on values alone (`grad`).

`grad`'s tape is private (``GradContext(private=True)``): nothing but its own sweep reads
it, so each primitive is one op, ``rrule(fn, *args)`` with the primitive's value (the ids in
an error raised inside `grad` are the ones `trace` prints), the pullback is kept beside it,
and a large array is held only as a stand-in of its shape: an intermediate lives as long as
it would in plain numpy unless a pullback needs it. `grad` also keeps Python's cyclic
collector paused until its tape has been freed (reference counting frees it; `Tape.__del__`
breaks the op/Variable cycles). `pullback` keeps every value: its tape is
the user's. benchmarks/README.md has the measurements behind these choices.
"""
from __future__ import annotations

import gc
import inspect
import operator
import types

import numpy as np

from .context import BaseContext, describe_call, is_traceable, lift, positional, traced_on
from .tracing import trace
from .errors import (
    COMPLEX_FIX,
    ComplexValueError,
    NoRuleError,
    SeedError,
    StaleInputError,
    is_complex_value,
    qualified_name,
    restore_warnings,
    route_warnings,
    type_str,
    ufunc_method_hint,
    user_location,
)
from .pytree import Boxed, any_nested, flatten, tangent_of
from . import registry
from .registry import COMPLEX, NEEDS, NONDIFF, RULES, rrule, stand_in
from .sweep import back, back_values
from .tangents import NO_TANGENT, ZERO, getitem
from .tape import Call, Input, Variable, paused_gc
from .tracer import Tracer, plain_options, wrap_result

__all__ = ["GradContext", "Pullback", "grad", "gradient", "pullback"]

_ndarray = np.ndarray
_new = object.__new__  # an object of a slotted class, without a call of its __init__
_float64 = np.float64
_F8 = registry.FLOAT64
_ONE_FLOAT64 = np.float64(1.0)  # the default seed of a numpy float result (numpy scalars are immutable)


class GradContext(BaseContext):
    """Records primitives through their rrules, for the reverse sweep.

    A function is a primitive when it has a rule or is marked non-differentiable. A
    `primitive`-marked user function without a rule is traced through; any other function
    without a rule raises `NoRuleError`.

    ``private=True`` (what `grad` uses) is for a tape that nothing but its own unrecorded sweep
    (`back_values`) reads: each primitive is one op, ``rrule(fn, *args)`` with the primitive's
    value, its pullback is kept beside it, and a large array value is held only as a
    `stand_in` of its shape and dtype.
    """

    #: set once a complex value is on the tape (a complex argument, or the result of a rule
    #: written for complex values): from then on each rule's arguments are checked (a rule
    #: outside `registry.COMPLEX` that meets one raises), and the sweep gives a real argument
    #: the real part of its cotangent (`sweep.real_part_for`)
    complex_seen = False

    def __init__(self, private=False):
        #: value Variable -> (the rrule op's Variable, the pullback's Variable), or on a
        #: private tape the pullback itself (the value's op is the rrule op)
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
        """Record ``rrule(fn, *args)`` (and, on a tape that is not private, its two reads) and
        return the traced value of ``fn(*args)``. A function without a rule goes to
        `BaseContext.record`, which decides what it is.

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
            # which arguments are traced: only their tangents will be read. Told when it helps,
            # a constant beside an array (two numbers cost nothing to keep). `lift` puts a
            # constant in both lists as the same object, a traced value as value and Variable
            if len(vals) == 2:  # a binary operator: the same, without the maps
                a, b = vals
                ta, tb = targs
                if (ta is a or tb is b) and (type(a) is _ndarray or type(b) is _ndarray):
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
                    # here on: a large constant (W6's distance matrix, its noise matrix) is
                    # kept as its shape, not held until the sweep. (Asked only of a large
                    # result, which is where large constants meet: a check per primitive
                    # cost 5% of the per-op cost of small-array code)
                    targs = tuple(map(stand_in, targs))
            else:
                kept = y
            # tape.push_call, written out: every primitive of every gradient comes here
            op = _new(Call)
            op.fn = rrule
            op.args = (fn,) + targs
            op.kwargs = kwargs or None
            op.val = kept
            op.note = ""
            ops = tape.ops
            ops.append(op)
            op.id = len(ops)
            yv = op.var = _new(Variable)
            yv._op = op
            if not integral:
                self.pullbacks[yv] = pb
        else:  # the rule's (value, pullback) as the rrule op's value, and a read of each
            push = tape.push_call
            rv = push(rrule, (fn,) + targs, kwargs or None, pair)
            yv = push(getitem, (rv, 0), None, y)
            pv = push(getitem, (rv, 1), None, pb)
            if not integral:
                self.pullbacks[yv] = (rv, pv)
        if packed:  # a tuple or list result: one Tracer per element
            return wrap_result(self, tape, yv, y, fn)
        # Tracer(tape, yv, y) without a call of Tracer.__init__: this is the hottest line
        out = _new(Tracer)
        out._tape = tape
        out._var = yv
        out._val = y
        return out

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



def _default_seed(y, where):
    if type(y) is float:
        return 1.0
    if type(y) is _float64:  # a numpy float gets a numpy float (a loss reduced by np.sum or np.mean)
        return _ONE_FLOAT64
    if np.size(_innermost(y)) != 1:
        raise SeedError(
            f"{where} returned {type_str(y)}, not a scalar, so the gradient taken at "
            f"{user_location()} needs a seed: pass "
            f"seed= an array of the same shape (the vector in a vector-Jacobian product), "
            f"for example seed=np.ones({np.shape(y)})"
        )
    if is_complex_value(y):
        # a gradient is of a real number; which real number a complex result stands for is
        # the caller's choice (autograd and JAX refuse it too, unless told it is holomorphic)
        raise SeedError(
            f"{where} returned {type_str(y)}, a complex number, so the gradient taken at "
            f"{user_location()} needs a seed: pass seed=1.0 for the gradient of its real part "
            f"(for a holomorphic {where}, its derivative f'(z), as autograd's holomorphic_grad), "
            f"seed=-1j for that of its imaginary part, or return a real number such as "
            f"np.abs(...) ** 2"
        )
    # one number, perhaps in an array of size 1 (shape (1,), as scipy.optimize objectives
    # return): the seed 1 of its shape and dtype, as autograd takes it (1.0 for a traced number)
    inner = _innermost(y)
    if isinstance(y, (np.ndarray, np.generic)) or np.ndim(inner):
        if inner.dtype.kind in "fc":
            one = np.ones(np.shape(inner), dtype=inner.dtype)
            return one if np.ndim(inner) else one[()]
    return 1.0


def _innermost(x):
    """The plain value inside a value traced by enclosing traces or a dual number."""
    while isinstance(x, Boxed):
        x = x._val
    return x


def _complex_seed(y, seed):
    """A real seed of a complex result, as a complex value of the result's dtype: the rules'
    pullbacks see cotangents of their values' dtype. A traced or dual seed (of an enclosing
    trace: a pullback differentiated with respect to its cotangent) is cast by a recorded
    ``astype``, so that its derivative flows back through the cast."""
    if not is_complex_value(y) or np.iscomplexobj(_innermost(seed)):
        return seed
    dtype = np.result_type(_innermost(y))
    if isinstance(seed, Boxed):
        return seed.astype(dtype)
    return np.asarray(seed, dtype=dtype) if isinstance(seed, np.ndarray) else dtype.type(seed)


def _numeric(x) -> bool:
    """A number (not a bool) or an array of numbers, also traced by an enclosing trace or dual:
    what a result or a seed may be."""
    x = _innermost(x)
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iufc"
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, bool)


def _check_seed(y, seed, where):
    """A seed is a number or an array of numbers of the result's shape (plain, or traced by an
    enclosing trace: the cotangent of a pullback that is itself differentiated)."""
    if type(seed) is float and type(y) is float:
        return
    if not _numeric(seed):
        raise SeedError(
            f"the seed given at {user_location()} is {type_str(seed)}; a seed is a number, or an "
            f"array of numbers of the result's shape ({where} returned {type_str(y)})"
            + (": pass np.asarray(seed)" if isinstance(seed, (list, tuple)) else "")
        )
    if np.iscomplexobj(_innermost(seed)) and not np.iscomplexobj(_innermost(y)):
        raise SeedError(
            f"the seed given at {user_location()} is complex, but {where} returned a real "
            f"{type_str(y)}; pass a real seed"
        )
    if np.shape(_innermost(seed)) != np.shape(_innermost(y)):
        raise SeedError(
            f"the seed given at {user_location()} has shape {np.shape(_innermost(seed))} but {where} returned "
            f"{type_str(y)}; pass a seed of the result's shape, {np.shape(_innermost(y))}"
        )


def _check_result(f, value):
    """A result has a derivative when it is a number, an array of numbers, or a tuple, list or
    dict of those; anything else (None, a string, a set) raises, naming what came back."""
    if type(value) is float or type(value) is _float64:  # (W3's and W4's losses are numpy floats)
        return
    _, leaves = flatten(value)
    for leaf in leaves:
        while isinstance(leaf, Boxed):  # a value traced by an enclosing trace, or a dual number
            leaf = leaf._val
        if _numeric(leaf):
            continue
        what = type(value).__name__ if leaf is value else f"a {type(value).__name__} holding {type_str(leaf)}"
        raise TypeError(
            f"{getattr(f, '__name__', 'f')} returned {what} at {user_location()}, which has no "
            f"derivative; return a number, an array of numbers, or a tuple, list or dict of them"
        )


class Pullback:
    """``back(dy) -> (df, *dargs)``: the reverse sweep of one recorded call, runnable many times.

    `tape` holds the forward program and, after a call, the backward program of that call.
    """

    def __init__(self, f, args, tape, value):
        self.f = f
        self.args = args
        self.tape = tape
        self.value = value
        self._n_forward = len(tape.ops)
        self._inputs = None

    def keep_inputs(self):
        """Keep a copy of each input array, so that `back` can tell if one was changed in place
        (the recorded pullbacks hold the arrays themselves, and would use the new values)."""
        self._inputs = [(op, op.val.copy()) for op in self.tape.ops
                        if type(op) is Input and type(op.val) is _ndarray]

    def _check_inputs(self):
        for op, kept in self._inputs or ():
            if not np.array_equal(op.val, kept, equal_nan=True):
                raise StaleInputError(
                    f"the input {op.var}{' (' + op.note + ')' if op.note else ''}::{type_str(op.val)} "
                    f"of this pullback was changed in place after pullback() recorded it, and the "
                    f"pullback run at {user_location()} would mix old and new values; call "
                    f"pullback again after changing it, or change a copy"
                )

    def __call__(self, dy=None):
        self._check_inputs()
        token = route_warnings()
        try:
            return self._sweep(dy, record=True)
        finally:
            restore_warnings(token)

    def _sweep(self, dy, record):
        """The reverse sweep from `dy`: recorded onto the tape (`back`), or, for `grad`, whose
        tape nobody reads afterwards, computed without recording (`back_values`)."""
        tape = self.tape
        y = self.value
        structured = tape.meta.get("structured_result", False)
        if dy is None and type(y) is float and not structured:
            dy = 1.0  # `_default_seed` of a float, without the call (a scalar gradient's fixed cost)
        elif dy is None:
            name = getattr(self.f, "__name__", "f")
            if structured:
                raise SeedError(
                    f"{name} returned a {type(y).__name__}, so the gradient taken at "
                    f"{user_location()} needs a seed: pass "
                    f"seed= a {type(y).__name__} of the same structure, one seed per entry "
                    f"(1.0 for a scalar entry, an array of its shape for an array)"
                )
            dy = _default_seed(y, name)
        elif not structured:
            _check_seed(y, dy, getattr(self.f, "__name__", "f"))
            if type(dy) is not float or type(y) is not float:
                dy = _complex_seed(y, dy)
        del tape.ops[self._n_forward:]
        if record:
            with paused_gc():
                derivs = back(tape, dy)
            #: Variable of each input -> Variable of its derivative, after the last call
            self.derivatives = derivs

            def derivative_of(var):
                d = derivs.get(var)
                return None if d is None else d._op.val
        else:
            derivative_of = back_values(tape, dy).get  # (grad keeps the collector paused)
        concrete = tape.meta.get("concrete", ())

        fspec, argspecs, kwspecs = tape.meta["inputs"]
        memo = {}
        grads = [ZERO if fspec.kind == "static" else tangent_of(fspec, derivative_of, concrete, memo)]
        for s in argspecs:  # (an argument not differentiated, W4's X and y, without a call)
            grads.append(NO_TANGENT if s.kind == "static" else tangent_of(s, derivative_of, concrete, memo))
        if kwspecs:
            grads.append({k: tangent_of(s, derivative_of, concrete, memo) for k, s in kwspecs.items()})
        return tuple(grads)

    def __repr__(self):
        return f"<pullback of {getattr(self.f, '__name__', self.f)!r} at {self.value!r}>"


def pullback(f, *args, **kwargs):
    """Run `f` and return ``(y, back)``; ``back(dy)`` returns ``(df, *dargs)``.

    ``back()`` with no argument uses the seed 1 (scalar results only). ``back.tape`` is the
    recorded program: the forward part, and the backward part of the last call of `back`.
    The recorded pullbacks hold the input arrays themselves: change one in place and `back`
    raises `StaleInputError` rather than mix old and new values.

    Examples
    --------
    >>> import tapegrad
    >>> y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> y
    0.18181818181818182
    >>> back(1.0)
    (ZeroTangent(), 0.0743801652892562, -0.09917355371900827)
    """
    token = route_warnings()  # numpy's warnings inside rules point at the user's line
    try:
        value, tape = trace(f, *args, ctx=GradContext(), **kwargs)
    finally:
        restore_warnings(token)
    _check_result(f, value)
    back = Pullback(f, args, tape, value)
    back.keep_inputs()
    return value, back


def grad(f, *args, seed=None, **kwargs):
    """Value and gradient: ``grad(f, *args) -> (value, (df, *dargs))``.

    `df` is the gradient with respect to `f` itself (`ZeroTangent()` for a plain function).
    Each gradient has the type of its argument: a float for a float or int, an ndarray of the
    same shape and dtype for an ndarray; `ZeroTangent()` where no path reaches an argument and
    `NoTangent()` where it cannot have a derivative (an integer used as a count). A non-scalar
    result needs a `seed` of its shape: the gradient is then a vector-Jacobian product.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.grad(lambda x: np.sin(np.cos(x)), 0.9)
    (0.5823447254418763, (ZeroTangent(), -0.6367993086184733))

    The tape is private to the call, so it records a large array result only by its shape
    and dtype (`tapegrad.registry.stand_in`): an intermediate that no pullback needs is freed
    as soon as `f` drops it, as plain numpy would free it. The reverse sweep runs without
    being recorded (`back_values`), and the values the pullbacks keep are freed as it leaves
    them behind (as PyTorch's ``backward()`` frees saved tensors). Use `pullback` to keep the
    whole forward-and-backward tape and read it; the gradients are the same, bit for bit.
    """
    # The collector stays paused until the tape has been freed: resumed earlier, its first
    # pass would walk every op of a tape that reference counting is about to free anyway.
    token = route_warnings()  # numpy's warnings inside rules point at the user's line
    gc_was_on = gc.isenabled()  # `paused_gc`, without making its object (a fixed cost)
    gc.disable()
    try:
        value, tape = trace(f, *args, ctx=GradContext(private=True), **kwargs)
        _check_result(f, value)
        back_ = Pullback(f, args, tape, value)
        grads = back_._sweep(seed, record=False)  # the tape goes after this one sweep
        del back_, tape
    finally:
        if gc_was_on:
            gc.enable()
        restore_warnings(token)
    return value, grads


def gradient(f, *args, seed=None, **kwargs):
    """Only the gradients with respect to the arguments: ``gradient(f, *args) -> dargs``.

    Examples
    --------
    >>> import tapegrad
    >>> tapegrad.gradient(lambda x, y: x * y + y, 2.0, 3.0)
    (3.0, 3.0)
    """
    return grad(f, *args, seed=seed, **kwargs)[1][1:]

"""Reverse mode: the gradient context, the reverse sweep and the user's entry points.

Forward: `GradContext` records each primitive as ``rrule(fn, *args)`` followed by two reads,
the value (``getitem(%4, 0)``) and the pullback (``getitem(%4, 1)``), and remembers which
pullback belongs to which value.

Backward (`back`): push the seed as a constant; walk the forward ops from the result back to
the first; for each value that has received a derivative push ``pullback(dy)`` and one read
per argument that is a Variable; `set_or_add_deriv` stores the first share of a derivative
and pushes an `accum` for every further share. The backward program is pushed onto the same
tape and run as it is pushed, so the tape ends up holding the whole forward-and-backward
program: `pullback` and a trace of `grad` show it.

`grad` itself runs the same sweep without recording it (`back_values`): its tape is private
and freed at once, so the backward ops were never read, and building them (an op, a
Variable, an argument tuple and a note per read) was half the cost of a gradient. The
pullbacks run, and their tangents are read and summed, in the same order as in `back`, so a
traced `grad` (a compiled gradient, a higher derivative) records the same program.

Speed, where it shows in the code (benchmarks/README.md has the measurements):
- `GradContext.record` and `back_values` are the per-primitive cost of a gradient: the first
  builds its three ops inline (``object.__new__`` and slot stores, no ``__init__`` call), the
  second tests the common tangent types first, with no helper call per argument.
- `grad` keeps Python's cyclic collector paused until its tape has been freed (reference
  counting frees it; `Tape.__del__` breaks the op/Variable cycles), and `back_values` drops
  each value from the tape once nothing later in the sweep reads it, which keeps large
  intermediates from piling up. Its tape records large arrays as stand-ins
  (``GradContext(keep_values=False)``), and rules keep stand-ins of the arguments they need
  only the shape of, so an intermediate lives as long as it would in plain numpy unless a
  pullback needs it. `pullback` keeps every value: its tape is the user's.
"""
from __future__ import annotations

import inspect
import operator

import numpy as np

from .context import BaseContext, _holds_tracer, describe_call, is_marked_primitive, lift
from .errors import (
    NoRuleError,
    RuleError,
    SeedError,
    TapegradError,
    qualified_name,
    type_str,
    user_location,
)
from . import registry
from .registry import _NEEDS, _NONDIFF, _RULES, Thunk, getitem, rrule, stand_in
from .pytree import tangent_of
from .tangents import NO_TANGENT, ZERO, accum
from .tape import Call, Constant, Input, Variable, _new, paused_gc
from .tracer import Tracer, trace, wrap_result

__all__ = ["GradContext", "grad", "gradient", "pullback", "back", "back_values", "step_back",
           "set_or_add_deriv"]


_ndarray, _float64 = np.ndarray, np.float64


class GradContext(BaseContext):
    """Records primitives through their rrules, for the reverse sweep.

    A function is a primitive when it has a rule or is marked non-differentiable. A
    `primitive`-marked user function without a rule is traced through; any other function
    without a rule raises `NoRuleError`.

    With ``keep_values=False`` (what `grad` uses) the tape holds a large array result only as
    a `stand_in` of its shape and dtype, for a tape that nothing but its own sweep reads.
    """

    def __init__(self, keep_values=True):
        #: value Variable -> (rrule call Variable, pullback Variable)
        self.pullbacks = {}
        # a subclass that changes what is primitive takes the general path of BaseContext
        self._general = type(self).is_primitive is not GradContext.is_primitive
        #: False: large array results are recorded as stand-ins (see the class docstring)
        self.keep_values = keep_values

    def is_primitive(self, fn, *args) -> bool:
        return fn in _RULES or fn in _NONDIFF or not is_marked_primitive(fn)

    def record(self, tape, fn, args, kwargs):
        # The common case, a function with a rule called on positional values, is recorded
        # here in one piece; anything else (and any subclass that changes the decision) takes
        # the general path of BaseContext.record.
        rule = _RULES.get(fn)
        if rule is None or kwargs or self._general:
            return BaseContext.record(self, tape, fn, args, kwargs)
        # each argument: its value for the rule, and what the tape records (its Variable).
        # Two arguments (every binary operator) are unrolled: 2.7% of a scalar gradient.
        if len(args) == 2:
            a, b = args
            ta, tb = type(a), type(b)
            if ta is Tracer and a._tape is tape:
                av, a = a._val, a._var
            elif ta is list or ta is tuple:
                return BaseContext.record(self, tape, fn, args, kwargs)
            else:
                av = a
            if tb is Tracer and b._tape is tape:
                bv, b = b._val, b._var
            elif tb is list or tb is tuple:
                return BaseContext.record(self, tape, fn, args, kwargs)
            else:
                bv = b
            # a constant's tangent will not be read: a rule that asks is told (for arrays,
            # where it lets the rule keep less; two numbers cost nothing to keep)
            if (a is av or b is bv) and (type(av) is _ndarray or type(bv) is _ndarray) and fn in _NEEDS:
                pair = rule(av, bv, needs=(a is not av, b is not bv))
            else:
                pair = rule(av, bv)
            targs = (fn, a, b)
        elif len(args) == 1 and type(args[0]) is Tracer and args[0]._tape is tape:
            a = args[0]
            pair = rule(a._val)
            targs = (fn, a._var)
        else:
            vals = []
            targs = [fn]
            for a in args:
                ta = type(a)
                if ta is Tracer and a._tape is tape:
                    vals.append(a._val)
                    targs.append(a._var)
                elif ta is list or ta is tuple:
                    return BaseContext.record(self, tape, fn, args, kwargs)
                else:
                    vals.append(a)
                    targs.append(a)
            if fn in _NEEDS:
                pair = rule(*vals, needs=tuple(type(t) is Variable for t in targs[1:]))
            else:
                pair = rule(*vals)
            targs = tuple(targs)
        y, pb = pair  # the rule's (value, pullback) is the rrule op's value as it is
        kept = y
        if type(y) is _ndarray and not self.keep_values and y.nbytes >= registry.STAND_IN_BYTES:
            kept = stand_in(y)
            pair = (kept, pb)
        # the three pushes of Tape.push_call, written out: this is the hottest path there is
        ops = tape.ops
        n = len(ops)
        rc = _new(Call)
        rc.fn = rrule
        rc.args = targs
        rc.kwargs = None
        rc.val = pair
        rc.note = ""
        rc.id = n + 1
        rv = rc.var = _new(Variable)
        rv._op = rc
        yc = _new(Call)
        yc.fn = getitem
        yc.args = (rv, 0)
        yc.kwargs = None
        yc.val = kept
        yc.note = ""
        yc.id = n + 2
        yv = yc.var = _new(Variable)
        yv._op = yc
        pc = _new(Call)
        pc.fn = getitem
        pc.args = (rv, 1)
        pc.kwargs = None
        pc.val = pb
        pc.note = ""
        pc.id = n + 3
        pv = pc.var = _new(Variable)
        pv._op = pc
        ops += (rc, yc, pc)
        self.pullbacks[yv] = (rv, pv)
        if isinstance(y, (tuple, list)):
            return wrap_result(self, tape, yv, y, fn)
        out = _new(Tracer)
        out._tape = tape
        out._var = yv
        out._val = y
        return out

    def record_primitive(self, tape, fn, *args, **kwargs):
        rule = _RULES.get(fn)
        if rule is None:
            if fn in _NONDIFF:
                return BaseContext.record_primitive(self, tape, fn, *args, **kwargs)
            raise NoRuleError(
                f"no rrule for {describe_call(fn, args, kwargs)} at {user_location()}; register "
                f"one with @tapegrad.rrule({qualified_name(fn)}), or mark it "
                f"tapegrad.nondifferentiable({qualified_name(fn)}) if its derivative is zero"
            )
        if kwargs and _holds_tracer(kwargs.values(), tape):
            kwargs = _concrete_ints(kwargs, tape)
            if _holds_tracer(kwargs.values(), tape):
                args, kwargs = _positional(fn, args, kwargs)
        vals, targs = lift(args, tape)
        rule_kwargs = kwargs
        if fn in _NEEDS:  # which arguments are traced: only their tangents will be read
            rule_kwargs = {**kwargs, "needs": tuple(
                type(t) is Variable or (type(t) in (list, tuple) and _holds_variable(t)) for t in targs)}
        try:
            y, pb = rule(*vals, **rule_kwargs) if rule_kwargs else rule(*vals)
        except TypeError:
            _check_rule_takes(rule, fn, args, vals, kwargs, rule_kwargs)
            raise
        kept = y if self.keep_values else stand_in(y)
        push = tape.push_call
        rv = push(rrule, (fn, *targs), kwargs or None, (kept, pb))
        yv = push(getitem, (rv, 0), None, kept)
        pv = push(getitem, (rv, 1), None, pb)
        self.pullbacks[yv] = (rv, pv)
        return wrap_result(self, tape, yv, y, fn)


def _check_rule_takes(rule, fn, args, vals, kwargs, rule_kwargs):
    """After a TypeError from a rule: if the call does not fit the rule's signature (np.multiply
    with dtype=, which numpy takes and the rule does not), say so and what to do instead."""
    try:
        inspect.signature(rule).bind(*vals, **rule_kwargs)
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


def _positional(fn, args, kwargs, kind=Tracer):
    """Move traced (or dual) keyword arguments into position, so that their tangents are returned."""
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


#: value types whose shares add with + (accum handles the rest: zeros, tuples, dicts, ...)
_PLAIN = {float, np.ndarray, np.float64}


def _sum_shares(a, b):
    """Two shares of one derivative, added: two numbers or two arrays (the common case) add
    directly; `accum` knows the rest (zeros, tuples, dicts, ...)."""
    return a + b if type(a) is type(b) and type(a) in _PLAIN else accum(a, b)


def set_or_add_deriv(tape, derivs, var, dx):
    """Store `dx` as the derivative of `var`, or push an accumulation if it already has one."""
    old = derivs.get(var)
    if old is None:
        derivs[var] = dx
    else:
        val = _sum_shares(old._op.val, dx._op.val)
        derivs[var] = tape.push_call(accum, (old, dx), None, val, ("accumulate d%s", var))


def _shape(x):
    s = getattr(x, "shape", None)
    return () if s is None else tuple(s)


def _tangent(dxs_val, index, arg, holder, rule_fn):
    """``dxs_val[index]`` as the tangent of `arg` (a Thunk evaluated), or None for a zero or
    no-tangent; a tangent not of its argument's shape raises, naming the rule."""
    dval = getitem(dxs_val, index)
    if dval is ZERO or dval is NO_TANGENT:
        return None
    xval = arg._op.val
    if type(xval) is _ndarray and _shape(dval) != xval.shape:
        raise _misshapen_error(dval, xval, arg, holder, index, rule_fn)
    return dval


def _misshapen_error(dval, xval, arg, holder, index, rule_fn):
    return RuleError(
        f"the pullback of {qualified_name(rule_fn)} (for {holder}, in the gradient taken at "
        f"{user_location()}) returned a tangent of shape {_shape(dval)} for argument "
        f"{index}, {arg}::{type_str(xval)}; fix the rule registered with "
        f"@tapegrad.rrule({qualified_name(rule_fn)}) to return tangents shaped like its "
        f"arguments (tapegrad.unbroadcast sums away broadcast axes)"
    )


def _read_tangents(tape, reads, dxs, dxs_val, holder, arg, index, rule_fn):
    """Append ``(arg, tangent)`` to `reads` for `arg`, a Variable or a list/tuple holding some.

    With a tape, each tangent is pushed as a read of ``dxs[index]`` and appended as its
    Variable; with ``tape=None`` (the unrecorded sweep of `grad`) as its value.
    """
    if type(arg) is Variable:
        dval = _tangent(dxs_val, index, arg, holder, rule_fn)
        if dval is None:
            return
        if tape is not None:
            dval = tape.push_call(getitem, (dxs, index), None, dval, ("d%s/d%s", holder, arg))
        reads.append((arg, dval))
    elif type(arg) in (list, tuple) and _holds_variable(arg):
        dval = getitem(dxs_val, index)
        if dval is ZERO or dval is NO_TANGENT:
            return
        sub = None if tape is None else tape.push(Call(getitem, (dxs, index), None, dval))
        for j, a in enumerate(arg):
            _read_tangents(tape, reads, sub, dval, holder, a, j, rule_fn)


def _holds_variable(seq):
    return any(type(a) is Variable or (type(a) in (list, tuple) and _holds_variable(a)) for a in seq)


def step_back(tape, var, derivs):
    """One step of the sweep: push the pullback of `var`'s primitive, read its tangents, accumulate.

    The pullback call and one read per traced argument are pushed. The first share of a
    derivative is stored at once; the ``accum`` of each further share (and the reads inside
    list arguments) come after all the reads.
    """
    rv, pv = tape.ctx.pullbacks[var]
    args = rv._op.args
    dy = derivs[var]
    dxs_val = pv._op.val(dy._op.val)
    if type(dxs_val) is not tuple or len(dxs_val) != len(args):
        raise _pullback_arity_error(var, args, dxs_val)
    dxs = tape.push_call(pv, (dy,), None, dxs_val, ("pullback for %s", var))
    later = []
    for i in range(1, len(args)):
        arg = args[i]
        if type(arg) is not Variable:
            _read_tangents(tape, later, dxs, dxs_val, var, arg, i, args[0])
            continue
        dval = _tangent(dxs_val, i, arg, var, args[0])
        if dval is None:
            continue
        dx = tape.push_call(getitem, (dxs, i), None, dval, ("d%s/d%s", var, arg))
        if arg in derivs:
            later.append((arg, dx))
        else:
            derivs[arg] = dx
    for arg, dx in later:
        set_or_add_deriv(tape, derivs, arg, dx)


def _pullback_arity_error(var, args, dxs_val):
    argtypes = ", ".join(f"{a}::{type_str(a._op.val)}" if type(a) is Variable else type_str(a)
                         for a in args[1:])
    return RuleError(
        f"the pullback of {qualified_name(args[0])}({argtypes}) (for {var}, in the gradient "
        f"taken at {user_location()}) returned {type_str(dxs_val)} of length "
        f"{len(dxs_val) if hasattr(dxs_val, '__len__') else '?'}; fix the rule registered with "
        f"@tapegrad.rrule({qualified_name(args[0])}) to return a tuple of {len(args)}: the "
        f"function's own tangent (NO_TANGENT), then one per positional argument"
    )


def back(tape, seed):
    """The reverse sweep over `tape` from its result; returns ``{Variable: derivative Variable}``."""
    result = tape.result
    derivs = {result: tape.push(Constant(seed, note="seed"))}
    last = result._op.id
    # the recorded primitives, newest first: the pullbacks dict keeps recording order
    for var in reversed(tape.ctx.pullbacks):
        if var in derivs and var._op.id <= last:
            step_back(tape, var, derivs)
    return derivs


def back_values(tape, seed):
    """The sweep of `back` without recording it: ``{input Variable: derivative value}``.

    `grad` uses it: its tape is private, so nobody would read the backward ops, and building
    them was half the cost of a gradient. The pullbacks are called, their tangents read and
    summed in the same order as `back` does, so a trace of `grad` (a compiled gradient, a
    higher derivative) records the same program. Each value leaves the tape as soon as
    nothing later needs it: a primitive's value and pullback before the pullback runs, a
    derivative once it has been passed on, so large intermediates do not pile up.
    """
    pullbacks = tape.ctx.pullbacks
    result = tape.result
    derivs = {result: seed}
    last = result._op.id
    for var in reversed(pullbacks):
        dy = derivs.pop(var, None)
        if dy is None or var._op.id > last:
            continue
        rv, pv = pullbacks[var]
        args = rv._op.args
        pullback_fn = pv._op.val
        # the pullback keeps what it needs in its closure; the rest goes before it allocates
        rv._op.val = var._op.val = pv._op.val = None
        dxs_val = pullback_fn(dy)
        del pullback_fn, dy
        if type(dxs_val) is not tuple or len(dxs_val) != len(args):
            raise _pullback_arity_error(var, args, dxs_val)
        later = None
        for i in range(1, len(args)):
            arg = args[i]
            if type(arg) is not Variable:
                if type(arg) is list or type(arg) is tuple:
                    later = later or []
                    _read_tangents(None, later, None, dxs_val, var, arg, i, args[0])
                continue
            # `_tangent`, written out with the common types first: this loop is the sweep's
            # per-primitive cost
            dval = dxs_val[i]
            td = type(dval)
            if td is Thunk:
                dval = dval.fn()
                td = type(dval)
            xval = arg._op.val
            if td is _ndarray:
                misshapen = type(xval) is _ndarray and dval.shape != xval.shape
            elif td is float or td is _float64:
                misshapen = type(xval) is _ndarray and xval.shape != ()
            elif dval is ZERO or dval is NO_TANGENT:
                continue
            else:
                misshapen = type(xval) is _ndarray and _shape(dval) != xval.shape
            if misshapen:
                raise _misshapen_error(dval, xval, arg, var, i, args[0])
            # set-or-add: a first share is stored at once, the sums come after all the reads
            if arg not in derivs:
                derivs[arg] = dval
            elif later is None:
                later = [(arg, dval)]
            else:
                later.append((arg, dval))
        if later is not None:
            for arg, dval in later:
                old = derivs.get(arg)
                if old is None:
                    derivs[arg] = dval
                elif type(old) is type(dval) and type(old) in _PLAIN:  # `_sum_shares`, written out
                    derivs[arg] = old + dval
                else:
                    derivs[arg] = accum(old, dval)
            later = old = None
        # nothing of this step may outlive it: the tangents' tuple, its unread thunks (which
        # hold the cotangent) and the shares would stay alive through the next pullback
        dxs_val = dval = None
    return derivs


def _default_seed(y, where):
    if type(y) is float:
        return 1.0
    if np.ndim(y) != 0:
        raise SeedError(
            f"{where} returned {type_str(y)}, not a scalar, so the gradient taken at "
            f"{user_location()} needs a seed: pass "
            f"seed= an array of the same shape (the vector in a vector-Jacobian product), "
            f"for example seed=np.ones({np.shape(y)})"
        )
    if isinstance(y, (np.ndarray, np.generic)) and y.dtype.kind in "fc":
        return np.ones((), dtype=y.dtype)[()]
    return 1.0


def _check_seed(y, seed, where):
    if type(seed) is float and type(y) is float:
        return
    if np.shape(seed) != np.shape(y):
        raise SeedError(
            f"the seed given at {user_location()} has shape {np.shape(seed)} but {where} returned "
            f"{type_str(y)}; pass a seed of the result's shape, {np.shape(y)}"
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
        self._n_forward = len(tape)

    def __call__(self, dy=None):
        return self._sweep(dy, record=True)

    def _sweep(self, dy, record):
        """The reverse sweep from `dy`: recorded onto the tape (`back`), or, for `grad`, whose
        tape nobody reads afterwards, computed without recording (`back_values`)."""
        tape = self.tape
        y = self.value
        name = getattr(self.f, "__name__", "f")
        structured = tape.meta.get("structured_result", False)
        if dy is None:
            if structured:
                raise SeedError(
                    f"{name} returned a {type(y).__name__}, so the gradient taken at "
                    f"{user_location()} needs a seed: pass "
                    f"seed= a {type(y).__name__} of the same structure, one seed per entry "
                    f"(1.0 for a scalar entry, an array of its shape for an array)"
                )
            dy = _default_seed(y, name)
        elif not structured:
            _check_seed(y, dy, name)
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
        df = ZERO if fspec.kind == "static" else tangent_of(fspec, derivative_of, concrete, memo)
        grads = [df] + [tangent_of(s, derivative_of, concrete, memo) for s in argspecs]
        if kwspecs:
            grads.append({k: tangent_of(s, derivative_of, concrete, memo) for k, s in kwspecs.items()})
        return tuple(grads)

    def __repr__(self):
        return f"<pullback of {getattr(self.f, '__name__', self.f)!r} at {self.value!r}>"


def pullback(f, *args, **kwargs):
    """Run `f` and return ``(y, back)``; ``back(dy)`` returns ``(df, *dargs)``.

    ``back()`` with no argument uses the seed 1 (scalar results only). ``back.tape`` is the
    recorded program: the forward part, and the backward part of the last call of `back`.

    Examples
    --------
    >>> import tapegrad
    >>> y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> y
    0.18181818181818182
    >>> back(1.0)
    (ZeroTangent(), 0.0743801652892562, -0.09917355371900827)
    """
    value, tape = trace(f, *args, ctx=GradContext(), **kwargs)
    return value, Pullback(f, args, tape, value)


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
    with paused_gc():
        value, tape = trace(f, *args, ctx=GradContext(keep_values=False), **kwargs)
        back_ = Pullback(f, args, tape, value)
        grads = back_._sweep(seed, record=False)  # the tape goes after this one sweep
        del back_, tape
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

"""The reverse sweep: from the seed back to the inputs, one pullback per recorded primitive.

A gradient tape (see `tapegrad.gradcontext.GradContext`) remembers, for each primitive's value, its
rrule op and its pullback. The sweep walks those values from the newest to the oldest; for
each one that has received a derivative ``dy`` it

1. calls the pullback on ``dy``, which returns ``(dfn, *dargs)``: the function's own
   tangent, then one per positional argument;
2. reads the tangent of every argument that is a Variable (`read_tangent`: a `Thunk` is
   evaluated only here, ZERO and NO_TANGENT carry nothing, a tangent not of its argument's
   shape is a bug in the rule and raises);
3. stores each tangent as the derivative of its argument, or adds it to the derivative
   already there (`set_or_add_deriv`: the first share is stored, every further share is
   added with `accum`).

`back_steps` is the one body of these steps, with a strategy chosen once per sweep: record
them onto the tape itself (`back`, what `pullback` uses: a pullback call, one read per
tangent, one `accum` per further share, so that the tape ends up holding the whole
forward-and-backward program), or compute values only (`back_values`, what `grad` uses, over
the private tape of `GradContext(private=True)`, one op per primitive: nobody reads that tape,
so building the backward ops would be wasted work, and each value is freed as soon as nothing
later needs it). The two ways run the pullbacks, reads and sums in one order, so `grad` equals
`pullback` bit for bit and a trace of `grad` (a compiled gradient, a higher derivative)
records the same program.
"""
from __future__ import annotations

import numpy as np

from .errors import DOING, RuleError, qualified_name, type_str, user_location
from .tangents import NO_TANGENT, ZERO, Thunk, accum, getitem
from .tape import Constant, Variable

__all__ = ["back", "back_values", "step_back", "back_steps", "set_or_add_deriv", "read_tangent", "checked_tangent",
           "add_shares", "real_part_for", "raised_in_pullback"]

_ndarray, _float64 = np.ndarray, np.float64

#: value types whose shares add with + (accum handles the rest: zeros, tuples, dicts, ...)
_PLAIN = {float, np.ndarray, np.float64}


def add_shares(a, b):
    """Two shares of one derivative, added: two numbers or two arrays (the common case) add
    directly; `accum` knows the rest (zeros, tuples, dicts, ...)."""
    return a + b if type(a) is type(b) and type(a) in _PLAIN else accum(a, b)


def set_or_add_deriv(tape, derivs, var, dx):
    """Store `dx` as the derivative of `var`, or add it to the one already there. With a
    `tape`, derivatives are Variables and the sum is pushed as an ``accum``; with
    ``tape=None`` they are values (the unrecorded sweep)."""
    old = derivs.get(var)
    if old is None:
        derivs[var] = dx
    elif tape is None:
        derivs[var] = add_shares(old, dx)
    else:
        val = add_shares(old._op.val, dx._op.val)
        derivs[var] = tape.push_call(accum, (old, dx), None, val, ("accumulate d%s", var))


def read_tangent(dxs, index, arg, holder, rule_fn):
    """``dxs[index]`` as the tangent of the Variable `arg` (a Thunk evaluated), or None for a
    zero or no-tangent; a tangent not of its argument's shape raises, naming the rule.
    (`back_steps` reads the two common cases itself: a number for a number, an array of the
    argument's shape.)
    """
    dval = dxs[index]
    if type(dval) is Thunk:
        try:
            dval = dval.fn()
        except FloatingPointError as exc:
            raise raised_in_pullback(exc, rule_fn, holder) from None
    return checked_tangent(dval, index, arg, holder, rule_fn)


def checked_tangent(dval, index, arg, holder, rule_fn):
    """`read_tangent` of an evaluated tangent: `dval`, or None for a zero or no-tangent."""
    td = type(dval)
    xval = arg._op.val
    if td is _ndarray:
        misshapen = type(xval) is _ndarray and dval.shape != xval.shape
    elif td is float or td is _float64:
        misshapen = type(xval) is _ndarray and xval.shape != ()
    elif dval is ZERO or dval is NO_TANGENT:
        return None
    else:
        misshapen = type(xval) is _ndarray and np.shape(dval) != xval.shape
    if misshapen:
        raise RuleError(
            f"the pullback of {qualified_name(rule_fn)} (for {holder}, in the gradient taken at "
            f"{user_location()}) returned a tangent of shape {np.shape(dval)} for argument "
            f"{index}, {arg}::{type_str(xval)}; fix the rule registered with "
            f"@tapegrad.rrule({qualified_name(rule_fn)}) to return tangents shaped like its "
            f"arguments (tapegrad.extend.unbroadcast sums away broadcast axes)"
        )
    return dval


def _kind(v) -> str:
    """The dtype kind of a value ("c" for complex, "" for a Python int or float)."""
    if type(v) is complex:
        return "c"
    dt = getattr(v, "dtype", None)
    return dt.kind if isinstance(dt, np.dtype) else ""


def real_part_for(dval, xval):
    """The cotangent `dval` of the argument value `xval`: its real part when `xval` is real.

    Under autograd's convention (see the README) a real argument of a rule with a complex
    result gets the real part of what the holomorphic formula gives (``x * z`` with a real x:
    ``Re(g z)``). The rules written for complex values do this themselves; the sweep does it
    again for every argument once a tape holds a complex value (``complex_seen``), so that a
    real argument always gets a real gradient. Real tapes never come here.
    """
    if _kind(dval) == "c" and _kind(xval) != "c":
        return np.real(dval)
    return dval


def _read_nested(tape, shares, dxs, dxs_val, holder, arg, index, rule_fn, real=False):
    """Append ``(Variable, tangent)`` to `shares` for each Variable inside the list or tuple
    argument `arg` (``np.stack([a, b])``), whose tangent is a sequence of the same shape.

    With a tape each read is pushed (``dxs`` is the Variable of the tangents) and the share is
    its Variable; with ``tape=None`` the share is the value.
    """
    dval = getitem(dxs_val, index)
    if dval is ZERO or dval is NO_TANGENT:
        return
    sub = None if tape is None else tape.push_call(getitem, (dxs, index), None, dval)
    for j, a in enumerate(arg):
        if type(a) is Variable:
            d = read_tangent(dval, j, a, holder, rule_fn)
            if d is not None:
                r = real_part_for(d, a._op.val) if real else d
                if tape is not None:
                    d = tape.push_call(getitem, (sub, j), None, d, ("d%s/d%s", holder, a))
                    if r is not d._op.val:
                        d = tape.push_call(np.real, (d,), None, r)
                else:
                    d = r
                shares.append((a, d))
        elif type(a) in (list, tuple):
            _read_nested(tape, shares, sub, dval, holder, a, j, rule_fn, real)


def raised_in_pullback(exc, fn, var):
    """numpy's FloatingPointError from a pullback, under ``np.seterr(all="raise")`` or an
    ``np.errstate`` that raises: the same error, saying which derivative met it and where."""
    return FloatingPointError(
        f"{exc} in the derivative of {qualified_name(fn)} (for {var}, in the gradient taken at "
        f"{user_location()}): numpy's error state asks it to raise (np.seterr or np.errstate); "
        f"the derivative is infinite or undefined at this point (sqrt or log at 0, a division by "
        f"0). Move the point, or take the gradient under np.errstate(all=\"warn\") to get inf "
        f"or nan with a warning instead"
    )


def _arity_error(var, args, dxs):
    """The error for a pullback that did not return one tangent per argument plus its own."""
    argtypes = ", ".join(f"{a}::{type_str(a._op.val)}" if type(a) is Variable else type_str(a)
                         for a in args[1:])
    return RuleError(
        f"the pullback of {qualified_name(args[0])}({argtypes}) (for {var}, in the gradient "
        f"taken at {user_location()}) returned {type_str(dxs)} of length "
        f"{len(dxs) if hasattr(dxs, '__len__') else '?'}; fix the rule registered with "
        f"@tapegrad.rrule({qualified_name(args[0])}) to return a tuple of {len(args)}: the "
        f"function's own tangent (NO_TANGENT), then one per positional argument"
    )


# --- the sweep ---


def back(tape, seed):
    """The reverse sweep over `tape` from its result, recorded onto it (`pullback` uses it):
    ``{Variable: derivative Variable}``."""
    derivs = {tape.result: tape.push(Constant(seed, note="seed"))}
    back_steps(tape, derivs, reversed(tape.ctx.pullbacks.items()), record=True)
    return derivs


def back_values(tape, seed):
    """The sweep of `back` on values alone, over a private tape (one op per primitive, see
    `GradContext`): ``{Variable: derivative value}``. `grad` uses it (see the module docstring)."""
    derivs = {tape.result: seed}
    back_steps(tape, derivs, reversed(tape.ops), record=False)
    return derivs


def step_back(tape, var, derivs):
    """One step of the recorded sweep: push the pullback of `var`'s primitive, read its
    tangents, accumulate (nothing for a `var` without a derivative in `derivs`)."""
    back_steps(tape, derivs, ((var, tape.ctx.pullbacks[var]),), record=True)


def back_steps(tape, derivs, steps, record):
    """The reverse sweep's one body: for each step of `steps`, newest first, whose value has a
    derivative in `derivs`, call the pullback, read the tangents of the traced arguments and
    set or add each one as a derivative.

    With ``record=True`` every step is pushed onto `tape` (the pullback call, one read per
    tangent, one ``accum`` per further share) and a derivative is the Variable of its value;
    a step is ``(value Variable, (rrule op's Variable, pullback's Variable))``. With
    ``record=False`` nothing is pushed, a derivative is a value, the tape is private and a
    step is one of its ops (an rrule op keeps its pullback, ``op.pullback``; any other op
    has None there and is passed over), and each value leaves the
    tape as soon as nothing later needs it: a primitive's value and pullback before the
    pullback runs, a derivative once it has been passed on, so that large intermediates do
    not pile up.

    A first share of a derivative is stored at once, further shares are added after all the
    reads of the step (a read may evaluate a Thunk, which a trace of `grad` records: both
    ways run the pullbacks, reads and sums in one order, so they make the same program and
    the same bits). Unrecorded, two plain numbers or arrays are summed at once, as the end of
    the step would sum them: their sum records nothing on any tape.
    """
    ctx = tape.ctx
    real = getattr(ctx, "complex_seen", False)
    recorded_or_real = record or real  # (one test per argument where neither is)
    onto = tape if record else None  # the tape the backward program is recorded onto
    push = tape.push_call
    take = derivs.get if record else derivs.pop  # unrecorded, a derivative goes once passed on
    # Only the seeded value and the arguments of the ops swept so far get a derivative, and an
    # argument is older than its op: no op newer than the seeded value is reached
    for step in steps:
        if record:
            var, (rv, pv) = step
            dy_var = take(var, None)
            if dy_var is None:
                continue
            args = rv._op.args
            pullback = pv._op.val
            dy = dy_var._op.val
        else:
            pullback = step.pullback
            if pullback is None:
                continue
            var = step.var
            dy = take(var, None)
            if dy is None:
                continue
            args = (step.fn,) + step.args  # (a private op is fn(*args): see GradContext)
            # the pullback keeps what it needs in its closure; the rest goes before it allocates
            step.pullback = step.val = None
        try:
            dxs_val = pullback(dy)
        except FloatingPointError as exc:
            raise raised_in_pullback(exc, args[0], var) from None
        del pullback, dy
        n = len(args)
        if type(dxs_val) is not tuple or len(dxs_val) != n:
            raise _arity_error(var, args, dxs_val)
        dxs = push(pv, (dy_var,), None, dxs_val, ("pullback for %s", var)) if record else None
        later = None
        for i in range(1, n):
            arg = args[i]
            if type(arg) is not Variable:
                if type(arg) is list or type(arg) is tuple:
                    if later is None:
                        later = []
                    _read_nested(onto, later, dxs, dxs_val, var, arg, i, args[0], real)
                continue
            # the two common cases (a number for a number, an array of the argument's shape)
            # read here, as they are this loop's per-argument cost; the rest by read_tangent
            dval = dxs_val[i]
            td = type(dval)
            xval = arg._op.val
            if td is _ndarray:
                if type(xval) is not _ndarray or dval.shape != xval.shape:
                    dval = read_tangent(dxs_val, i, arg, var, args[0])  # (an array: never None)
            elif td is not float and td is not _float64 or type(xval) is _ndarray:
                dval = read_tangent(dxs_val, i, arg, var, args[0])
                if dval is None:
                    continue
            if recorded_or_real:
                if record:
                    share = push(getitem, (dxs, i), None, dval, ("d%s/d%s", var, arg))
                    if real:
                        r = real_part_for(dval, xval)
                        if r is not dval:
                            share = push(np.real, (share,), None, r)
                    dval = share
                else:
                    dval = real_part_for(dval, xval)
            old = derivs.get(arg)
            if old is None:
                derivs[arg] = dval
            elif later is not None:
                later.append((arg, dval))
            elif type(old) is not type(dval) or type(old) not in _PLAIN:  # (a Variable is not)
                later = [(arg, dval)]
            else:  # add_shares of two plain values
                derivs[arg] = old + dval
        if later is not None:
            for arg, dval in later:
                set_or_add_deriv(onto, derivs, arg, dval)
            later = old = None
        # nothing of this step may outlive it: the tangents' tuple, its unread thunks (which
        # hold the cotangent) and the shares would stay alive through the next pullback
        dxs_val = dval = xval = None


# numpy's warnings met while summing shares (inf + -inf) name the sum, not "numpy"
DOING[back_steps.__code__] = DOING[add_shares.__code__] = DOING[accum.__code__] = (
    "the sum of the derivatives that reach one value")

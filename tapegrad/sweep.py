"""The reverse sweep: from the seed back to the inputs, one pullback per recorded primitive.

A gradient tape (see `tapegrad.grad.GradContext`) remembers, for each primitive's value, its
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

`back` records all of this onto the tape itself (a pullback call, one read per tangent,
one `accum` per further share), so the tape ends up holding the whole forward-and-backward
program. `back_values` runs the same steps on values alone, over the private tape of `grad`
(one op per primitive, `GradContext(private=True)`): nobody reads that tape, so building
the backward ops would be wasted work (half the cost of a gradient). The two share every
piece above and run the pullbacks, reads and sums in the same order, so
`grad` equals `pullback` bit for bit and a trace of `grad` (a compiled gradient, a higher
derivative) records the same program.
"""
from __future__ import annotations

import numpy as np

from .errors import RuleError, qualified_name, type_str, user_location
from .tangents import NO_TANGENT, ZERO, Thunk, accum, getitem
from .tape import Constant, Variable

__all__ = ["back", "back_values", "step_back", "set_or_add_deriv", "read_tangent", "checked_tangent",
           "add_shares", "real_part_for", "raised_in_pullback"]

_ndarray, _float64 = np.ndarray, np.float64

#: value types whose shares add with + (accum handles the rest: zeros, tuples, dicts, ...)
_PLAIN = {float, np.ndarray, np.float64}


def add_shares(a, b):
    """Two shares of one derivative, added: two numbers or two arrays (the common case) add
    directly; `accum` knows the rest (zeros, tuples, dicts, ...)."""
    return a + b if type(a) is type(b) and type(a) in _PLAIN else accum(a, b)


def set_or_add_deriv(tape, derivs, var, dx):
    """Store `dx` as the derivative of `var`, or push an accumulation if it already has one."""
    old = derivs.get(var)
    if old is None:
        derivs[var] = dx
    else:
        val = add_shares(old._op.val, dx._op.val)
        derivs[var] = tape.push_call(accum, (old, dx), None, val, ("accumulate d%s", var))


def read_tangent(dxs, index, arg, holder, rule_fn):
    """``dxs[index]`` as the tangent of the Variable `arg` (a Thunk evaluated), or None for a
    zero or no-tangent; a tangent not of its argument's shape raises, naming the rule.

    The type tests come most common first: this is the sweep's per-argument cost.
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


# --- the recorded sweep ---


def step_back(tape, var, derivs):
    """One step of the sweep: push the pullback of `var`'s primitive, read its tangents, accumulate.

    The pullback call and one read per traced argument are pushed. The first share of a
    derivative is stored at once; the ``accum`` of each further share (and the reads inside
    list arguments) come after all the reads.
    """
    rv, pv = tape.ctx.pullbacks[var]
    args = rv._op.args
    dy = derivs[var]
    try:
        dxs_val = pv._op.val(dy._op.val)
    except FloatingPointError as exc:
        raise raised_in_pullback(exc, args[0], var) from None
    if type(dxs_val) is not tuple or len(dxs_val) != len(args):
        raise _arity_error(var, args, dxs_val)
    dxs = tape.push_call(pv, (dy,), None, dxs_val, ("pullback for %s", var))
    real = getattr(tape.ctx, "complex_seen", False)
    later = []
    for i in range(1, len(args)):
        arg = args[i]
        if type(arg) is not Variable:
            if type(arg) is list or type(arg) is tuple:
                _read_nested(tape, later, dxs, dxs_val, var, arg, i, args[0], real)
            continue
        dval = read_tangent(dxs_val, i, arg, var, args[0])
        if dval is None:
            continue
        dx = tape.push_call(getitem, (dxs, i), None, dval, ("d%s/d%s", var, arg))
        if real:
            r = real_part_for(dval, arg._op.val)
            if r is not dval:
                dx = tape.push_call(np.real, (dx,), None, r)
        if arg in derivs:
            later.append((arg, dx))
        else:
            derivs[arg] = dx
    for arg, dx in later:
        set_or_add_deriv(tape, derivs, arg, dx)


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


# --- the same sweep on values alone ---


def back_values(tape, seed):
    """The sweep of `back` without recording it, over a private tape (one op per primitive, see
    `GradContext`): ``{Variable: derivative value}``.

    `grad` uses it (see the module docstring). Each value leaves the tape as soon as nothing
    later needs it: a primitive's value and pullback before the pullback runs, a derivative
    once it has been passed on, so large intermediates do not pile up.
    """
    pullbacks = tape.ctx.pullbacks
    real = getattr(tape.ctx, "complex_seen", False)
    derivs = {tape.result: seed}
    pop = derivs.pop
    # Only the result and the arguments of the ops swept so far get a derivative, and an
    # argument is older than its op: no op newer than the result is reached (`back` checks ids)
    for var, pullback_fn in reversed(pullbacks.items()):
        dy = pop(var, None)
        if dy is None:
            continue
        # a private tape (`GradContext(private=True)`): the value's op is the rrule op
        op = var._op
        args = op.args
        # the pullback keeps what it needs in its closure; the rest goes before it allocates
        pullbacks[var] = op.val = None
        try:
            dxs_val = pullback_fn(dy)
        except FloatingPointError as exc:
            raise raised_in_pullback(exc, args[0], var) from None
        del pullback_fn, dy
        n = len(args)
        if type(dxs_val) is not tuple or len(dxs_val) != n:
            raise _arity_error(var, args, dxs_val)
        later = None
        for i in range(1, n):
            arg = args[i]
            if type(arg) is not Variable:
                if type(arg) is list or type(arg) is tuple:
                    later = later or []
                    _read_nested(None, later, None, dxs_val, var, arg, i, args[0], real)
                continue
            # read_tangent, its two common cases written out (a number for a number, an
            # array of the argument's shape), as they are this loop's per-argument cost
            dval = dxs_val[i]
            td = type(dval)
            if td is Thunk:
                try:
                    dval = dval.fn()
                except FloatingPointError as exc:
                    raise raised_in_pullback(exc, args[0], var) from None
                td = type(dval)
            xval = arg._op.val
            if td is _ndarray:
                if type(xval) is not _ndarray or dval.shape != xval.shape:
                    dval = checked_tangent(dval, i, arg, var, args[0])  # (an array: never None)
            elif (td is not float and td is not _float64) or type(xval) is _ndarray:
                dval = checked_tangent(dval, i, arg, var, args[0])
                if dval is None:
                    continue
            if real:
                dval = real_part_for(dval, xval)
            # set-or-add as in step_back: a first share at once, the sums after all the reads
            # (a read may evaluate a Thunk, which a trace of `grad` records: the same order
            # of operations as `back` makes the same program). Two plain numbers or arrays
            # are summed at once: their sum records nothing on any tape, and it is the sum
            # the end of the step would make, in the same order
            old = derivs.get(arg)
            if old is None:
                derivs[arg] = dval
            elif later is not None:
                later.append((arg, dval))
            elif type(old) is type(dval) and type(old) in _PLAIN:  # add_shares, written out
                derivs[arg] = old + dval
            else:
                later = [(arg, dval)]
        if later is not None:
            for arg, dval in later:
                old = derivs.get(arg)
                derivs[arg] = dval if old is None else add_shares(old, dval)
            later = old = None
        # nothing of this step may outlive it: the tangents' tuple, its unread thunks (which
        # hold the cotangent) and the shares would stay alive through the next pullback
        dxs_val = dval = xval = None
    return derivs

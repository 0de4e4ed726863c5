"""Dual numbers: a value and its variation, and the forward rules each numpy call applies.

A `Dual` carries a value and its variation (a value array and a variation array of the same
shape, not an array of objects). Plain numpy code runs on it unchanged, through the same
operators and protocols as a Tracer; each numpy call goes to `dual_call`, which applies a
*forward rule* ``frule(dargs, *args, **kwargs) -> (y, dy)``.

Forward and reverse rules share the registry: a function with an explicit forward rule
(`@frule(fn)`) uses it; a function with only a reverse rule gets its forward rule from the
reverse one (`derived_frule`), since ``J v`` is the gradient of ``u -> <pullback(u), v>``
(pullbacks are linear in ``u`` and traceable); a function with neither raises `NoRuleError`
naming it. So no function that can be differentiated one way is silently missing the other.

Nesting: `tapegrad.forward.jvp` gives its Duals a tag from the clock that traces also read
(`arraylike.new_epoch`), so every combination nests: a jvp inside a jvp (forward over forward)
keeps the two variations apart, a jvp inside a traced function (reverse over forward) handles
the calls its Duals share with the trace's Tracers, and a trace inside a jvp (forward over
reverse) records them. Zero tangents have their primal's shape and dtype at every level.
"""
from __future__ import annotations

import numpy as np

from .arraylike import VIEWS, ArrayLike, note_view
from .buffers import Buffer, HoldsBuffer, TracedBuffer, unbuffer_all
from .context import describe_call, is_marked_primitive, positional
from .grad import grad
from .errors import (
    BRANCH_HINT,
    COMPLEX_FIX,
    ComplexValueError,
    ConcreteValueError,
    NoRuleError,
    is_complex_value,
    StaleViewError,
    qualified_name,
    scalar_cast_error,
    type_str,
    ufunc_method_hint,
    user_location,
)
from .hints import filler_hint, foreign_function_hint, numpy_call_hint
from .pytree import any_nested, map_nested, nested
from .registry import COMPLEX, FRULES, NONDIFF, RULES
from .structures import replace_items
from .tangents import NO_TANGENT, ZERO, Thunk, getitem
from .tracer import innermost_tape, newer_boxed, record_call

__all__ = ["Dual", "dual_call", "derived_frule", "zero_tangent", "real_pairing", "dual_value"]


class Dual(ArrayLike):
    """A value and its variation: ``Dual(2.0, 1.0)``, or ``Dual(array, variation_array)``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> y = np.sin(tapegrad.Dual(0.0, 1.0)) * 3
    >>> y
    Dual(0.0, 3.0)

    `tag` is the nesting level: `jvp` gives the Duals of each call a new, higher tag, so a
    ``jvp`` inside a function that ``jvp`` differentiates keeps its variation apart from the
    outer one (no perturbation confusion). A call sees the Duals of its highest tag as dual
    numbers and Duals of lower tags as constants (their own calls handle them). Duals made by
    hand have tag 0, one level.
    """

    __slots__ = ("_val", "delta", "tag", "_base", "_views")

    @staticmethod
    def _dispatch(fn, args, kwargs):
        return dual_call(fn, args, kwargs)

    def __init__(self, val, delta, tag=0):
        self._val = val
        self.delta = delta
        self.tag = tag

    @property
    def val(self):
        return self._val

    def __array__(self, dtype=None, copy=None):
        hint = filler_hint()  # np.full(shape, dual) asks numpy for the fill value's dtype
        if hint:
            raise ConcreteValueError(hint)
        if np.result_type(self._val).kind in "iub" and (dtype is None or np.dtype(dtype).kind in "iub"):
            # integers or booleans (an index, a mask) carry no variation: numpy takes their values
            return np.array(self._val, dtype=dtype)
        if dtype is not None and np.ndim(self._val) == 0:
            kind = np.dtype(dtype).kind
            if kind in "iub":
                # np.int64(d), np.bool_(d): piecewise constant, derivative zero, as int(d) and bool(d)
                return np.array(self._val, dtype=dtype)
            if kind in "fc":
                raise scalar_cast_error(f"the dual value {type_str(self._val)}", dtype)
        hint = numpy_call_hint("dual")
        raise ConcreteValueError(  # (inside a scipy function, the hint names tapegrad's replacement)
            f"{foreign_function_hint()}numpy tried to turn a dual value ({type_str(self._val)}) into a plain array at "
            f"{user_location()}, which would drop its variation"
            + (f". {hint}" if hint else "; build arrays with np.stack / np.concatenate and use numpy "
                                        "functions rather than math or other libraries"))

    def __bool__(self):
        return bool(self._val)

    def __index__(self):
        return int(np.asarray(self._val).__index__())

    def __int__(self):
        return int(self._val)

    def __round__(self, ndigits=None):
        return round(self._val) if ndigits is None else np.round(self, ndigits)

    def __float__(self):
        raise self._dropped("float")

    def item(self, *args):
        raise self._dropped("item", BRANCH_HINT)

    def tolist(self):
        raise self._dropped("tolist", BRANCH_HINT)

    def _dropped(self, what, how=""):
        """The refusal of a conversion to a plain number, which would drop the variation (as
        a traced value refuses it; a Dual had no item() or tolist(): AttributeError)."""
        return ConcreteValueError(  # (inside a scipy function, the hint names tapegrad's replacement)
            f"{foreign_function_hint()}{what}() of a dual value at {user_location()} would drop its "
            f"variation; use numpy functions (np.sin, np.exp, ...) on it instead{how}"
        )

    def __repr__(self):
        return f"Dual({_show(self._val)}, {_show(self.delta)})"

    def __hash__(self):
        # as a traced value (Tracer.__hash__): a number hashes by its value, and a dual value
        # hashed by identity would let {a, b} keep two equal numbers apart
        raise TypeError(
            f"the dual value {type_str(self._val)} was used in a set or as a dict key at "
            f"{user_location()}; a dual value has no hash (its value carries a variation); key "
            f"by a name or a position, or keep the values in a list"
        )

    # --- in-place writes (see ArrayLike.__setitem__) ---
    def _take(self, new):
        if type(new) is Dual and new.tag == self.tag:
            self._val, self.delta = new._val, new.delta
        else:
            self._val, self.delta = new, zero_tangent(new)

    def _label(self):
        return f"the dual value {type_str(self._val)}"

    _described = _label  # (how a message names it, as a Tracer's ``the traced value %3::...``)

    def _make_stale(self, reason):
        self.delta = _Stale(reason)


def _show(v):
    if isinstance(v, np.generic):
        return repr(v.item())
    return repr(v)


class _Stale:
    """The variation of a dual view whose base was written in place: any use raises."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


# --- applying forward rules ---


#: the constructors of an array shaped like their argument (see `_writable`)
_MADE_LIKE = frozenset((np.zeros_like, np.ones_like, np.empty_like, np.full_like))


def _top_tag(args):
    """The highest tag among the Duals of a call's arguments (inside lists and tuples); a
    preallocated buffer among them raises `HoldsBuffer` (the call is made again unboxed)."""
    top = 0
    for a in nested(args):
        t = type(a)
        if t is Dual:
            if a.tag > top:
                top = a.tag
        elif t is Buffer or t is TracedBuffer:
            raise HoldsBuffer
    return top


def _split(args, tag):
    """(values, variations) of call arguments: a Dual of `tag` gives its value and variation,
    also inside lists and tuples; anything else, a Dual of a lower tag too, is a constant,
    with variation ZERO."""
    vals, dargs = [], []
    for a in args:
        t = type(a)
        if t is Dual and a.tag == tag:
            vals.append(dual_value(a))
            dargs.append(a.delta)
        elif (t is list or t is tuple) and any_nested(a, _is_dual):
            vals.append(t(map_nested(lambda v: dual_value(v, tag), a)))
            dargs.append(t(map_nested(lambda v: _delta(v, tag), a)))
        else:
            vals.append(a)
            dargs.append(ZERO)
    return vals, dargs


def _is_dual(a):
    return type(a) is Dual


def _is_buffer(a):
    return type(a) is Buffer or type(a) is TracedBuffer


def dual_value(a, tag=None):
    """The value of a Dual (of `tag`, if given); anything else as it is."""
    if type(a) is not Dual or (tag is not None and a.tag != tag):
        return a
    if type(a.delta) is _Stale:
        raise StaleViewError(a.delta.reason + f"; it was used again at {user_location()}")
    return a._val


def _delta(a, tag):
    return a.delta if type(a) is Dual and a.tag == tag else ZERO


def _wrap(y, dy, tag):
    if isinstance(y, (tuple, list)):
        if dy is ZERO or dy is NO_TANGENT:
            return y
        return replace_items(y, [_wrap(a, b, tag) for a, b in zip(y, dy)])
    if dy is ZERO or dy is NO_TANGENT:
        return y  # nothing varies: a plain value
    if np.shape(dy) != np.shape(y):
        dy = np.broadcast_to(dy, np.shape(y))
    return Dual(y, dy, tag)


def dual_call(fn, args, kwargs):
    """Apply `fn` to arguments some of which are Duals: ``fn``'s forward rule on values and variations."""
    tape = innermost_tape(args, kwargs)
    if tape is not None and newer_boxed(args, kwargs, tape) is None:
        # a traced value among the arguments, of a trace inside this forward pass: the trace
        # records the call (Duals are its constants); a Dual made inside the trace handles it
        return record_call(fn, args, kwargs)
    kwargs = kwargs or {}
    if any_nested(kwargs.values(), _is_buffer):
        kwargs = dict(zip(kwargs, unbuffer_all(kwargs.values())))
    if any_nested(kwargs.values(), _is_dual):
        args, kwargs = positional(fn, args, kwargs, Dual)  # dual values by keyword move into position
    try:
        tag = _top_tag(args)
    except HoldsBuffer:  # a buffer: its plain array, or the dual value it stands for
        return dual_call(fn, unbuffer_all(args), kwargs)
    vals, dargs = _split(args, tag)
    if fn not in COMPLEX and fn not in NONDIFF and any(map(is_complex_value, vals)):
        _refuse_complex(fn, args, kwargs, vals, dargs, None)  # (before its rule runs on them)
    rule = FRULES.get(fn)
    if rule is not None:
        y, dy = rule(dargs, *vals, **kwargs)
    elif fn in RULES:
        y, dy = derived_frule(fn, vals, dargs, kwargs)
    elif fn in NONDIFF:
        out = fn(*vals, **kwargs)
        if fn not in COMPLEX and is_complex_value(out) and any(d is not ZERO for d in dargs):
            _refuse_complex(fn, args, kwargs, vals, dargs, out)  # np.sign(z) = z/|z| is not flat
        return _writable(fn, args, out, tag)
    elif is_marked_primitive(fn):
        return fn.__wrapped__(*args, **kwargs)  # no rule: run its body on the Duals
    else:
        raise NoRuleError(
            f"no forward rule for {describe_call(fn, args, kwargs)} at {user_location()}: it has "
            f"neither @tapegrad.frule({qualified_name(fn)}) nor @tapegrad.rrule({qualified_name(fn)}); "
            f"{ufunc_method_hint(fn, RULES)}register one (a reverse rule gives forward mode too)"
        )
    if fn not in COMPLEX and is_complex_value(y):
        _refuse_complex(fn, args, kwargs, vals, dargs, y)
    out = _wrap(y, dy, tag)
    if fn in VIEWS and type(args[0]) is Dual:
        note_view(out, fn, args, kwargs)
    return _writable(fn, args, out, tag)


def _writable(fn, args, out, tag):
    """`out`, or for np.zeros_like & co. of a dual value holding a traced one (a forward pass
    inside a gradient), whose result is a traced array that varies by nothing: that array as
    a dual value, which can take the writes of dual values the user's code fills it with."""
    if fn in _MADE_LIKE and type(args[0]) is Dual and type(out) is not Dual and isinstance(out, ArrayLike):
        return Dual(out, zero_tangent(out), tag)
    return out


def _refuse_complex(fn, args, kwargs, vals, dargs, y):
    """A complex value met by a rule not written for complex values (`registry.COMPLEX`): as in
    a gradient, raise rather than give a variation that may be silently wrong. A
    non-differentiable function (a comparison, isnan) may take complex values: only a complex
    result of one (np.sign(z) = z/|z|) is refused."""
    if y is None:  # before the rule: a complex value that varies (a complex constant beside
        # the dual values is not differentiated; a complex result is checked after the rule)
        complex_varying = [v for v, d in zip(vals, dargs) if d is not ZERO and is_complex_value(v)]
        if not complex_varying:
            return
        culprit = complex_varying[0]
    else:
        culprit = y
    verb = "gives" if culprit is y else "takes"
    raise ComplexValueError(
        f"{describe_call(fn, args, kwargs)} at {user_location()} {verb} "
        f"{type_str(culprit) if not isinstance(culprit, (tuple, list)) else 'a complex value'}: {COMPLEX_FIX}")


def _zeros_like(y):
    """A zero tangent of the primal `y`: its shape and (float) dtype, also when `y` is traced or dual."""
    if isinstance(y, (tuple, list)):
        return replace_items(y, [_zeros_like(v) for v in y])
    return zero_tangent(y)


def zero_tangent(y):
    """Zeros of the shape and float dtype of `y`'s innermost value (through Tracers and Duals).

    A zero tangent is never a bare ``0.0`` standing for an array: a rule that reshapes or
    indexes it (or a pullback seeded with it) would see the wrong shape.
    """
    while isinstance(y, ArrayLike):
        y = y._val
    if isinstance(y, (np.ndarray, np.generic)):
        dtype = y.dtype if y.dtype.kind in "fc" else np.dtype(np.float64)
        z = np.zeros(np.shape(y), dtype=dtype)
        return z if isinstance(y, np.ndarray) else z[()]
    if isinstance(y, complex):
        return 0j
    return 0.0


def real_pairing(t, d):
    """<t, d> = Re Σ t·d: the real part of the sum of the elementwise product (over nested lists
    for sequence arguments), with no conjugate. Under autograd's convention (see the README) a
    cotangent t of z pairs with a variation d of z so: ``df = Re Σ t·dz``.

    The tangent of a list argument may hold a `Thunk` per entry (the sweep reads only those of
    traced entries): one is evaluated only here, where its entry varies."""
    if type(t) in (list, tuple):
        total = 0.0
        for a, b in zip(t, d):
            if a is ZERO or a is NO_TANGENT or b is ZERO:
                continue
            if type(a) is Thunk:
                a = a.fn()
                if a is ZERO or a is NO_TANGENT:
                    continue
            total = total + real_pairing(a, b)
        return total
    p = t * d
    if is_complex_value(p):
        p = np.real(p)  # (real before the sum: a sum of real numbers is all a pairing needs)
    return np.sum(p)


def derived_frule(fn, vals, dargs, kwargs):
    """The forward rule of `fn` from its reverse rule: J·d is the gradient of u -> <pullback(u), d>."""
    y, pb = RULES[fn](*vals, **kwargs)
    live = [(i + 1, d) for i, d in enumerate(dargs) if d is not ZERO]
    if not live:
        return y, ZERO

    def pairing(u):
        ts = pb(u)
        total = 0.0
        for i, d in live:
            t = getitem(ts, i)
            if t is ZERO or t is NO_TANGENT:
                continue
            total = total + real_pairing(t, d)
        return total

    _, (_, dy) = grad(pairing, _zeros_like(y), wrt=0)
    # the gradient of u -> Re Σ u·(J d) under autograd's convention is J d itself, also for
    # a complex u (see real_pairing)
    return y, dy

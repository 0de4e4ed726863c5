"""Forward mode: dual numbers, forward rules, jvp, Jacobians, Hessians.

A `Dual` carries a value and its variation (a value array and a variation array of the same
shape, not an array of objects). Plain numpy code runs on it unchanged, through the same
operators and protocols as a Tracer; each numpy call applies a *forward rule*
``frule(dargs, *args, **kwargs) -> (y, dy)``.

Forward and reverse rules share the registry: a function with an explicit forward rule
(`@frule(fn)`) uses it; a function with only a reverse rule gets its forward rule from the
reverse one, since ``J v`` is the gradient of ``u -> <pullback(u), v>`` (pullbacks are
linear in ``u`` and traceable); a function with neither raises `NoRuleError` naming it.
So no function that can be differentiated one way is silently missing the other.

Entry points: `jvp(f, args, tangents)`, `jacobian(f, x, mode="fwd" | "rev")`, `hessian(f, x)`
(forward over reverse) and `hvp(f, x, v)` (without forming the Hessian).
"""
from __future__ import annotations

import numpy as np

from .arraylike import VIEWS, ArrayLike, note_view
from .context import describe_call, is_marked_primitive, positional
from .grad import grad, gradient, pullback
from .errors import (
    ConcreteValueError,
    NoRuleError,
    StaleViewError,
    qualified_name,
    type_str,
    user_location,
)
from .literals import dual_literals
from .pytree import any_nested, map_nested
from .registry import FRULES, NONDIFF, RULES, frule
from .tangents import NO_TANGENT, ZERO, getitem
from .tracer import Tracer, plain_scalar, record_call

__all__ = ["Dual", "frule", "jvp", "jacobian", "hessian", "hvp", "dual_call"]


class Dual(ArrayLike):
    """A value and its variation: ``Dual(2.0, 1.0)``, or ``Dual(array, variation_array)``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> y = np.sin(tapegrad.Dual(0.0, 1.0)) * 3
    >>> y
    Dual(0.0, 3.0)
    """

    __slots__ = ("_val", "delta", "_base", "_views")

    @staticmethod
    def _dispatch(fn, args, kwargs):
        return dual_call(fn, args, kwargs)

    def __init__(self, val, delta):
        self._val = val
        self.delta = delta

    @property
    def val(self):
        return self._val

    def __array__(self, dtype=None, copy=None):
        raise ConcreteValueError(
            f"numpy tried to turn a dual value ({type_str(self._val)}) into a plain array at "
            f"{user_location()}, which would drop its variation; build arrays with np.stack / "
            f"np.concatenate and use numpy functions rather than math or other libraries"
        )

    def __bool__(self):
        return bool(self._val)

    def __index__(self):
        return int(np.asarray(self._val).__index__())

    def __int__(self):
        return int(self._val)

    def __round__(self, ndigits=None):
        return round(self._val) if ndigits is None else np.round(self, ndigits)

    def __float__(self):
        raise ConcreteValueError(
            f"float() of a dual value at {user_location()} would drop its variation; use numpy "
            f"functions (np.sin, np.exp, ...) on it instead"
        )

    def __repr__(self):
        return f"Dual({_show(self._val)}, {_show(self.delta)})"

    # --- in-place writes (see ArrayLike.__setitem__) ---
    def _take(self, new):
        if type(new) is Dual:
            self._val, self.delta = new._val, new.delta
        else:
            self._val, self.delta = new, np.zeros_like(new)

    def _label(self):
        return f"the dual value {type_str(self._val)}"

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


def _split(args):
    """(values, variations) of call arguments: a Dual gives its value and variation, also
    inside lists and tuples; anything else is a constant, with variation ZERO."""
    vals, dargs = [], []
    for a in args:
        t = type(a)
        if t is Dual:
            vals.append(_value(a))
            dargs.append(a.delta)
        elif (t is list or t is tuple) and any_nested(a, _is_dual):
            vals.append(t(map_nested(_value, a)))
            dargs.append(t(map_nested(_delta, a)))
        else:
            vals.append(a)
            dargs.append(ZERO)
    return vals, dargs


def _is_dual(a):
    return type(a) is Dual


def _is_tracer(a):
    return type(a) is Tracer


def _value(a):
    if type(a) is not Dual:
        return a
    if type(a.delta) is _Stale:
        raise StaleViewError(a.delta.reason + f"; it was used again at {user_location()}")
    return a._val


def _delta(a):
    return a.delta if type(a) is Dual else ZERO


def _wrap(y, dy):
    if isinstance(y, (tuple, list)):
        if dy is ZERO or dy is NO_TANGENT:
            return y
        return _like_seq(y, [_wrap(a, b) for a, b in zip(y, dy)])
    if dy is ZERO or dy is NO_TANGENT:
        return y  # nothing varies: a plain value
    if np.shape(dy) != np.shape(y):
        dy = np.broadcast_to(dy, np.shape(y))
    return Dual(y, dy)


def dual_call(fn, args, kwargs):
    """Apply `fn` to arguments some of which are Duals: ``fn``'s forward rule on values and variations."""
    if any_nested(args, _is_tracer) or (kwargs and any_nested(kwargs.values(), _is_tracer)):
        # a traced value among the arguments: the trace records the call (Duals are its constants)
        return record_call(fn, args, kwargs)
    kwargs = kwargs or {}
    if any_nested(kwargs.values(), _is_dual):
        args, kwargs = positional(fn, args, kwargs, Dual)  # dual values by keyword move into position
    vals, dargs = _split(args)
    rule = FRULES.get(fn)
    if rule is not None:
        y, dy = rule(dargs, *vals, **kwargs)
    elif fn in RULES:
        y, dy = derived_frule(fn, vals, dargs, kwargs)
    elif fn in NONDIFF:
        return fn(*vals, **kwargs)
    elif is_marked_primitive(fn):
        return fn.__wrapped__(*args, **kwargs)  # no rule: run its body on the Duals
    else:
        raise NoRuleError(
            f"no forward rule for {describe_call(fn, args, kwargs)} at {user_location()}: it has "
            f"neither @tapegrad.frule({qualified_name(fn)}) nor @tapegrad.rrule({qualified_name(fn)}); "
            f"register one (a reverse rule gives forward mode too)"
        )
    out = _wrap(y, dy)
    if fn in VIEWS and type(args[0]) is Dual:
        note_view(out, fn, args, kwargs)
    return out


def _like_seq(seq, items):
    """items in the sequence type of seq (a NamedTuple such as numpy's EighResult included)."""
    if isinstance(seq, tuple) and hasattr(seq, "_fields"):
        return type(seq)(*items)
    return type(seq)(items)


def _zeros_like(y):
    if isinstance(y, (tuple, list)):
        return _like_seq(y, [_zeros_like(v) for v in y])
    if isinstance(y, np.ndarray):
        return np.zeros_like(y, dtype=y.dtype if y.dtype.kind in "fc" else np.float64)
    return 0.0


def _pair(t, d):
    """<t, d>: the sum of the elementwise product (over nested lists for sequence arguments)."""
    if type(t) in (list, tuple):
        total = 0.0
        for a, b in zip(t, d):
            if a is ZERO or a is NO_TANGENT or b is ZERO:
                continue
            total = total + _pair(a, b)
        return total
    return np.sum(t * d)


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
            total = total + _pair(t, d)
        return total

    _, (_, dy) = grad(pairing, _zeros_like(y), wrt=0)
    return y, dy


# --- entry points ---


def tangent_of_result(out, like):
    if type(out) is Dual:
        return out.delta
    if isinstance(out, (tuple, list)):
        return _like_seq(out, [tangent_of_result(o, o) for o in out])
    return np.zeros_like(out) if isinstance(out, np.ndarray) else 0.0


def _primal_of(out):
    if type(out) is Dual:
        return out._val
    if isinstance(out, (tuple, list)):
        return _like_seq(out, [_primal_of(o) for o in out])
    return out


def jvp(f, args, tangents):
    """Value and Jacobian-vector product: ``jvp(f, (x, ...), (v, ...)) -> (f(x), J v)``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> y, dy = tapegrad.jvp(lambda x, y: x * np.sin(y), (2.0, 0.0), (1.0, 1.0))
    >>> float(y), float(dy)
    (0.0, 2.0)
    """
    if len(args) != len(tangents):
        raise TypeError(f"jvp takes one tangent per argument: {len(args)} args, {len(tangents)} tangents")
    duals = []
    for a, t in zip(args, tangents):
        if np.shape(a) != np.shape(t):
            raise ValueError(f"a tangent has shape {np.shape(t)} for an argument of shape {np.shape(a)}")
        duals.append(Dual(a, t))
    with dual_literals():  # np.array([d1, d2]) of dual values
        out = f(*duals)
    return plain_scalar(_primal_of(out)), plain_scalar(tangent_of_result(out, out))


def jacobian(f, x, mode: str = "rev"):
    """The Jacobian of `f` at `x`, shaped ``f(x).shape + x.shape``.

    ``mode="fwd"`` makes one dual pass per input direction; ``mode="rev"`` one pullback per
    output. Forward is cheaper when there are fewer inputs than outputs.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> f = lambda x: np.array([1.0, 2.0]) * x[0] * x[1]
    >>> tapegrad.jacobian(f, np.array([3.0, 4.0]), mode="fwd")
    array([[4., 3.],
           [8., 6.]])
    """
    x = np.asarray(x, dtype=np.result_type(x, float)) if not isinstance(x, ArrayLike) else x
    n = int(np.prod(np.shape(x)))
    if mode == "fwd":
        cols = []
        for i in range(n):
            e = np.zeros(n, dtype=np.result_type(x, float))
            e[i] = 1.0
            y, dy = jvp(f, (x,), (e.reshape(np.shape(x)),))
            cols.append(np.reshape(dy, -1) if np.ndim(dy) else np.reshape(dy, (1,)))
        yshape = np.shape(y)
        return np.reshape(np.stack(cols, axis=-1), yshape + np.shape(x))
    if mode == "rev":
        y, back = pullback(f, x)
        m = int(np.prod(np.shape(y)))
        rows = []
        for j in range(m):
            e = np.zeros(m, dtype=np.result_type(y, float))
            e[j] = 1.0
            seed = e.reshape(np.shape(y)) if np.ndim(y) else e[0]
            g = back(seed)[1]
            rows.append(np.reshape(np.zeros(np.shape(x)) if g is ZERO else g, -1))
        return np.reshape(np.stack(rows, axis=0), np.shape(y) + np.shape(x))
    raise ValueError(f"jacobian mode is 'fwd' or 'rev', not {mode!r}")


def hessian(f, x):
    """The Hessian of a scalar `f` at `x`, by forward mode over the reverse-mode gradient.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    return jacobian(lambda x: gradient(f, x)[0], x, mode="fwd")


def hvp(f, x, v):
    """The Hessian-vector product ``H(x) v`` without forming the Hessian (forward over reverse).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    """
    return jvp(lambda x: gradient(f, x)[0], (x,), (v,))[1]

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
and `hvp(f, x, v)` (without forming the Hessian), reverse over reverse unless ``mode="fwd"``.
All take and give structures as `grad` does.

Nesting: `jvp` gives its Duals a tag from the clock that traces also read
(`arraylike.new_epoch`), so every combination nests: a jvp inside a jvp (forward over forward)
keeps the two variations apart, a jvp inside a traced function (reverse over forward) handles
the calls its Duals share with the trace's Tracers, and a trace inside a jvp (forward over
reverse) records them. Zero tangents have their primal's shape and dtype at every level.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .arraylike import VIEWS, ArrayLike, new_epoch, note_view
from .buffers import Buffer, HoldsBuffer, TracedBuffer, unbuffer, unbuffer_all
from .context import describe_call, is_marked_primitive, positional
from .grad import grad, gradient, pullback
from .errors import (
    COMPLEX_FIX,
    ComplexValueError,
    ConcreteValueError,
    NoRuleError,
    is_complex_value,
    too_deep_error,
    StaleViewError,
    qualified_name,
    scalar_cast_error,
    type_str,
    ufunc_method_hint,
    user_location,
)
from .hints import filler_hint, numpy_call_hint, plain_store_error
from .literals import dual_literals
from .pytree import any_nested, fill_zeros, finalize, flatten, map_nested, nested, rebuild_object, unflatten
from .registry import COMPLEX, FRULES, NONDIFF, RULES, frule
from .tangents import NO_TANGENT, ZERO, Tangent, Thunk, getitem
from .tracer import innermost_tape, newer_boxed, plain_scalar, record_call

__all__ = ["Dual", "frule", "jvp", "jacobian", "hessian", "hvp", "dual_call"]


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
        raise ConcreteValueError(
            f"numpy tried to turn a dual value ({type_str(self._val)}) into a plain array at "
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
        raise ConcreteValueError(
            f"float() of a dual value at {user_location()} would drop its variation; use numpy "
            f"functions (np.sin, np.exp, ...) on it instead"
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
            vals.append(_value(a))
            dargs.append(a.delta)
        elif (t is list or t is tuple) and any_nested(a, _is_dual):
            vals.append(t(map_nested(lambda v: _value(v, tag), a)))
            dargs.append(t(map_nested(lambda v: _delta(v, tag), a)))
        else:
            vals.append(a)
            dargs.append(ZERO)
    return vals, dargs


def _is_dual(a):
    return type(a) is Dual


def _is_buffer(a):
    return type(a) is Buffer or type(a) is TracedBuffer


def _value(a, tag=None):
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
        return _like_seq(y, [_wrap(a, b, tag) for a, b in zip(y, dy)])
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


def _like_seq(seq, items):
    """items in the sequence type of seq (a NamedTuple such as numpy's EighResult included)."""
    if isinstance(seq, tuple) and hasattr(seq, "_fields"):
        return type(seq)(*items)
    return type(seq)(items)


def _zeros_like(y):
    """A zero tangent of the primal `y`: its shape and (float) dtype, also when `y` is traced or dual."""
    if isinstance(y, (tuple, list)):
        return _like_seq(y, [_zeros_like(v) for v in y])
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


def _pair(t, d):
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
            total = total + _pair(a, b)
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
            total = total + _pair(t, d)
        return total

    _, (_, dy) = grad(pairing, _zeros_like(y), wrt=0)
    # the gradient of u -> Re Σ u·(J d) under autograd's convention is J d itself, also for
    # a complex u (see _pair)
    return y, dy


# --- entry points ---


def tangent_of_result(out, tag=None):
    """The tangent carried by a forward-mode result: a Dual's variation (of the Duals of `tag`,
    if given), zeros of a constant's shape and dtype, in the same structure (tuple, list,
    NamedTuple, dict; a `Tangent` for a dataclass or a Tangent), NoTangent for what has none."""
    return _walk_result(out, lambda v: _tangent_leaf(v, tag), True)


def _tangent_leaf(v, tag):
    if type(v) is Dual and (tag is None or v.tag == tag):
        return v.delta
    if isinstance(v, (np.ndarray, np.generic, ArrayLike, int, float, complex)):
        return zero_tangent(v)
    return NO_TANGENT


def _primal_of(out, tag=None):
    """`out` with every Dual (of `tag`, if given) replaced by its value (through containers)."""
    return _walk_result(out, lambda v: _value(v, tag), False)


def _walk_result(out, leaf, tangent):
    """`out` with `leaf` applied at each leaf of its tuples, lists, NamedTuples, dicts, Tangents and
    dataclasses (as a `tangent`, a dataclass becomes a Tangent)."""
    t = type(out)
    if t is Dual:
        return leaf(out)
    if t is Buffer or t is TracedBuffer:  # a preallocated buffer: the array or Dual it holds
        return leaf(unbuffer(out))
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return t(*[_walk_result(v, leaf, tangent) for v in out])
    if t is tuple or t is list:
        return t(_walk_result(v, leaf, tangent) for v in out)
    if isinstance(out, dict):
        return {k: _walk_result(v, leaf, tangent) for k, v in out.items()}
    if t is Tangent:
        return Tangent(out.primal_type, **{k: _walk_result(v, leaf, tangent) for k, v in out.fields.items()})
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        fields = {f.name: _walk_result(getattr(out, f.name), leaf, tangent) for f in dataclasses.fields(out)}
        return Tangent(t, **fields) if tangent else rebuild_object(out, fields)
    return leaf(out)


def _duals(arg, tangent, i, tag):
    """Argument `arg` with each float leaf made a Dual of `tag` carrying the tangent of the same place."""
    spec, leaves = flatten(arg, argument=True)
    if spec.kind == "leaf":
        return Dual(arg, _checked(arg, tangent, f"argument {i}"), tag)
    ts = []
    try:
        _tangent_leaves(spec, tangent, f"argument {i}", ts)
    except RecursionError:
        raise too_deep_error(f"the tangent of argument {i}") from None
    return unflatten(spec, [Dual(x, t, tag) for x, t in zip(leaves, ts)])


def new_tag():
    """A tag for the Duals of one forward-mode pass, later than every tag and trace before it."""
    return new_epoch()


def _tangent_leaves(spec, t, where, out, seen=None):
    """The tangents of the leaves of `spec`, in `flatten`'s order: a spec met again (a shared
    array, a list that holds itself) has its leaves once, as `flatten` gave them."""
    if spec.kind == "static":
        return
    seen = set() if seen is None else seen
    if id(spec) in seen:
        return
    seen.add(id(spec))
    if spec.kind == "leaf":
        out.append(_checked(spec.primal, t, where))
        return
    for k, child in zip(spec.keys, spec.children):
        if isinstance(t, Tangent):
            sub = t.fields.get(k, ZERO)
        elif spec.kind == "object":
            sub = getattr(t, k)
        else:
            sub = t[k]
        _tangent_leaves(child, sub, f"{where}[{k!r}]", out, seen)


def _checked(x, t, where):
    if t is ZERO:
        return zero_tangent(x)
    if np.shape(x) != np.shape(t):
        raise ValueError(f"the tangent of {where} has shape {np.shape(t)} for a value of shape {np.shape(x)}")
    if np.iscomplexobj(t) and not np.iscomplexobj(x):
        # a real value moves along real directions only: the imaginary part would be dropped
        # by some rules and kept by others
        raise ValueError(f"the tangent of {where} is complex for a real value; pass a real tangent, "
                         f"or make the value complex (x.astype(complex)) to move it off the real line")
    return t


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
    tag = new_tag()
    duals = [_duals(a, t, i, tag) for i, (a, t) in enumerate(zip(args, tangents))]
    with dual_literals():  # np.array([d1, d2]) of dual values, buffers from np.zeros & co.
        try:
            out = f(*duals)
        except ValueError as exc:
            error = plain_store_error(exc, "dual")
            if error is None:
                raise
            raise error from exc
    return _plain(_primal_of(out, tag)), _plain(tangent_of_result(out, tag))


def _plain(out):
    """0-d results as numbers, as `grad` gives them, and arrays as plain ndarrays (not the
    subclasses rules compute with), also inside containers."""
    if isinstance(out, (tuple, list)) and not hasattr(out, "_fields"):
        return type(out)(_plain(v) for v in out)
    if isinstance(out, dict):
        return {k: _plain(v) for k, v in out.items()}
    if isinstance(out, np.ndarray) and type(out) is not np.ndarray:
        return out.view(np.ndarray)
    return plain_scalar(out) if not isinstance(out, (tuple, list)) else out


def jacobian(f, x, mode: str = "rev", holomorphic: bool = False):
    """The Jacobian of `f` at `x`, shaped ``f(x).shape + x.shape``.

    ``mode="fwd"`` makes one dual pass per input direction; ``mode="rev"`` one pullback per
    output. Forward is cheaper when there are fewer inputs than outputs. Both differentiate
    again: ``jacobian(lambda x: jacobian(f, x), x)`` is the array of second derivatives.

    `x` and the result of `f` may be structures, as for `grad`: tuples, lists, dicts,
    NamedTuples, dataclasses and objects (by their float leaves). The Jacobian then has the
    structure of the result, and in place of each of its leaves the structure of `x` (a
    `Tangent` for an object), holding the block ``d result_leaf / d x_leaf`` shaped
    ``result_leaf.shape + x_leaf.shape`` (JAX's convention).

    Complex values (autograd's convention, see the README): a complex result of a real `x` gives
    the complex Jacobian ``df/dx`` in both modes. A complex `x` needs ``holomorphic=True``
    (JAX's rule): the Jacobian is then ``df/dz``, the same in both modes; for a function that is
    not holomorphic no complex matrix is its derivative, and it raises `ComplexValueError`.
    `hessian` of a real function of a complex `x` raises too: use `hvp`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> f = lambda x: np.array([1.0, 2.0]) * x[0] * x[1]
    >>> tapegrad.jacobian(f, np.array([3.0, 4.0]), mode="fwd")
    array([[4., 3.],
           [8., 6.]])
    >>> J = tapegrad.jacobian(lambda p: {"s": p["a"] * p["b"]}, {"a": 2.0, "b": np.ones(2)})
    >>> J["s"]["a"], J["s"]["b"]
    (array([1., 1.]), array([[2., 0.],
           [0., 2.]]))
    """
    if mode not in ("fwd", "rev"):
        raise ValueError(f"jacobian mode is 'fwd' or 'rev', not {mode!r}")
    spec, leaves = flatten(x, argument=True)
    if not holomorphic and any(map(is_complex_value, leaves)):
        raise ComplexValueError(
            f"the Jacobian taken at {user_location()} is with respect to a complex "
            f"{type_str(next(v for v in leaves if is_complex_value(v)))}: a complex Jacobian matrix "
            f"(df/dz) exists only for a holomorphic function; pass holomorphic=True if it is "
            f"(as JAX's jacfwd/jacrev ask), or take real and imaginary parts as two real "
            f"arguments, f(x + 1j*y), for the full real Jacobian"
        )
    if spec.kind == "leaf" and isinstance(x, (np.ndarray, ArrayLike)):
        out = _array_jacobian(f, x, mode)
        if out is not None:
            return out
    shapes = [np.shape(v) for v in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    dtype = np.result_type(*[_inner_dtype(v) for v in leaves], float)
    flat = (np.concatenate([np.reshape(v, -1) for v in leaves]) if len(leaves) > 1
            else np.reshape(leaves[0], -1) if leaves else np.zeros(0))
    if isinstance(flat, np.ndarray):
        flat = flat.astype(dtype)
    ends = np.cumsum(sizes).tolist()
    starts = [0] + ends[:-1]
    seen = []

    # the constants ride in a default argument: reverse mode differentiates a closure's leaves
    def flat_f(v, _c=(f, spec, starts, ends, shapes, seen)):
        f, spec, starts, ends, shapes, seen = _c
        parts = [np.reshape(v[a:b], s) for a, b, s in zip(starts, ends, shapes)]
        out = f(unflatten(spec, parts))
        ospec, oleaves = flatten(out)
        seen.append((ospec, [np.shape(o) for o in oleaves]))
        pieces = [np.reshape(o, -1) for o in oleaves]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    J = _array_jacobian(flat_f, flat, mode, structured=True)
    ospec, oshapes = seen[-1]
    rows = []
    r = 0
    for oshape in oshapes:
        m = int(np.prod(oshape))
        blocks = [np.reshape(J[r:r + m, a:b], oshape + s) for a, b, s in zip(starts, ends, shapes)]
        rows.append(_pack(spec, iter(blocks).__next__))
        r += m
    return _pack(ospec, iter(rows).__next__)


def _inner_dtype(v):
    while isinstance(v, ArrayLike):
        v = v._val
    return np.result_type(v)


_PACKING = object()  # in `_pack`'s memo: a spec whose parts are being packed


def _pack(spec, take, memo=None):
    """The structure `spec` describes with `take()` at each leaf, as a tangent (NoTangent where
    static). A spec met again (a shared array) gives the same value, as `flatten` gave one leaf."""
    if spec.kind == "static":
        return NO_TANGENT
    memo = {} if memo is None else memo
    done = memo.get(id(spec))
    if done is _PACKING:
        raise TypeError(
            f"the Jacobian or Hessian at {user_location()} is taken with respect to an argument "
            f"that holds itself (a list or dict inside itself), and a block matrix of such a "
            f"structure would be infinite; pass the numbers as an array or a structure without "
            f"a cycle (grad, jvp and check_grad take cyclic arguments)"
        )
    if done is not None:
        return done
    if spec.kind == "leaf":
        out = take()
    else:
        memo[id(spec)] = _PACKING
        out = spec.pack([_pack(c, take, memo) for c in spec.children], tangent=True)
    memo[id(spec)] = out
    return out


def _array_jacobian(f, x, mode, structured=False):
    """The Jacobian of `f` from an array to an array (None if the result is a structure)."""
    if not isinstance(x, ArrayLike):
        x = np.asarray(x, dtype=np.result_type(x, float))
    n = int(np.prod(np.shape(x)))
    if mode == "fwd":
        cols = []
        for i in range(n):
            e = np.zeros(n, dtype=np.result_type(_inner_dtype(x), float))
            e[i] = 1.0
            y, dy = jvp(f, (x,), (e.reshape(np.shape(x)),))
            if not structured and _is_structure(y):
                return None
            cols.append(np.reshape(dy, -1) if np.ndim(dy) else np.reshape(dy, (1,)))
        if n == 0:
            y = f(x)
            if not structured and _is_structure(y):
                return None
            return np.zeros(np.shape(y) + np.shape(x))
        return np.reshape(np.stack(cols, axis=-1), np.shape(y) + np.shape(x))
    y, back = pullback(f, x)
    if not structured and _is_structure(y):
        return None
    m = int(np.prod(np.shape(y)))
    real_x_complex_y = is_complex_value(y) and not is_complex_value(x)
    rows = []
    for j in range(m):
        e = np.zeros(m, dtype=np.result_type(_inner_dtype(y), float))
        e[j] = 1.0
        seed = e.reshape(np.shape(y)) if np.ndim(y) else e[0]
        g = back(seed)[1]
        g = zero_tangent(x) if g is ZERO else g
        if real_x_complex_y:
            # the seed 1 gives the gradient of Re y_j, and -1j that of Im y_j: together dy_j/dx
            g_im = back(-1j * seed)[1]
            g = g + 1j * (zero_tangent(x) if g_im is ZERO else g_im)
        rows.append(np.reshape(g, -1))
    if m == 0:
        return np.zeros(np.shape(y) + np.shape(x))
    return np.reshape(np.stack(rows, axis=0), np.shape(y) + np.shape(x))


def _is_structure(y):
    return isinstance(y, (tuple, list, dict, Tangent))


def _gradient_of(f, inner="rev"):
    """x -> the gradient of scalar `f` at x, zeros (not ZeroTangent) where no path reaches a leaf;
    by reverse mode, or (``inner="fwd"``) by one forward pass per input direction."""
    if inner == "fwd":
        return lambda x, _f=f: _forward_gradient(_f, x)

    def gradient_of(x, _f=f):
        g = gradient(_f, x)[0]
        spec, _ = flatten(x, argument=True)
        leaves = []
        _tangent_leaves(spec, g, "the gradient", leaves)
        return _pack(spec, iter(leaves).__next__)
    return gradient_of


def _forward_gradient(f, x):
    """The gradient of scalar `f` at `x` by forward mode: one jvp per real direction of each
    leaf. A complex entry takes two, along 1 and along i: under autograd's convention (see the
    README) its gradient g pairs as ``df = Re(g·dz)``, so ``Re g`` is the derivative along 1
    and ``-Im g`` the one along i (the gradient of a real function of complex values, which
    no complex Jacobian gives)."""
    spec, leaves = flatten(x, argument=True)
    parts = []
    for k, leaf in enumerate(leaves):
        shape = np.shape(_inner(leaf))
        n = int(np.prod(shape))
        dtype = np.result_type(_inner_dtype(leaf), float)
        units = (1.0, 1j) if dtype.kind == "c" else (1.0,)
        entries = []
        for i in range(n):
            along = []
            for unit in units:
                e = np.zeros(n, dtype=dtype)
                e[i] = unit
                ts = [zero_tangent(v) for v in leaves]
                ts[k] = e.reshape(shape)
                along.append(jvp(f, (x,), (unflatten(spec, ts),))[1])
            entries.append(along[0] - 1j * along[1] if len(along) == 2 else along[0])
        parts.append(np.reshape(np.stack(entries), shape) if n else np.zeros(shape, dtype=dtype))
    return _pack(spec, iter(parts).__next__)


def _inner(v):
    """The plain value inside traced or dual values."""
    while isinstance(v, ArrayLike):
        v = v._val
    return v


#: how `hessian` and `hvp` compose the two passes when no mode is given: reverse over reverse,
#: the faster in benchmarks/hessian.py (benchmarks/README.md has the numbers): most forward
#: rules are derived from reverse ones, at the cost of a small gradient per call
HESSIAN_MODE = "rev"

#: the modes of `hessian` and `hvp`: "outer-inner"; "rev" and "fwd" name the outer pass over
#: a reverse-mode gradient
_SECOND_ORDER_MODES = {"rev": ("rev", "rev"), "fwd": ("fwd", "rev"), "rev-rev": ("rev", "rev"),
                       "fwd-rev": ("fwd", "rev"), "rev-fwd": ("rev", "fwd"), "fwd-fwd": ("fwd", "fwd")}


def _second_order_mode(mode, what, extra=()):
    """``(outer, inner)`` of a mode of `hessian` or `hvp`; anything else raises, and a number in
    the place of the mode (``hessian(f, 1.0, 2.0)``: a second argument) says how to pass several."""
    modes = _SECOND_ORDER_MODES.get(mode) if isinstance(mode, str) else None
    if modes is not None:
        return modes
    if extra or not isinstance(mode, str):
        given = ", ".join(type_str(v) for v in (mode, *extra))
        raise TypeError(
            f"{what} at {user_location()} takes one point x (a number, an array or a structure "
            f"of them), then its mode; it was given {given} after x. For a function of several "
            f"arguments, pass them as one tuple: {what}(lambda xs: f(*xs), (x1, x2, ...))"
        )
    raise ValueError(f"{what} mode is one of {', '.join(map(repr, _SECOND_ORDER_MODES))} "
                     f"(outer-inner; 'rev' and 'fwd' are 'rev-rev' and 'fwd-rev'), not {mode!r}")


def hessian(f, x, mode: str = HESSIAN_MODE, *extra):
    """The Hessian of a scalar `f` at `x`.

    `mode` names the outer pass, then the inner one that gives the gradient: ``"rev-rev"``
    (the default, also ``"rev"``) records the gradient once and takes one reverse pass over it
    per gradient entry; ``"fwd-rev"`` (also ``"fwd"``) one forward-mode pass over the
    reverse-mode gradient per input direction; ``"rev-fwd"`` and ``"fwd-fwd"`` take the
    gradient by forward mode, one pass per input direction. All give the same numbers;
    reverse over reverse is the faster (benchmarks/hessian.py, 3 to 30 times). `x` may be a structure, as for `grad`: the Hessian is
    then the structure of `x` holding, at each leaf, the structure of `x` again (see
    `jacobian`), ``H[a][b]`` shaped ``a.shape + b.shape``. For a function of several
    arguments, pass them as one tuple: ``hessian(lambda xs: f(*xs), (a, b))``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    >>> H = tapegrad.hessian(lambda p: p["a"] ** 2 * p["b"], {"a": 1.0, "b": 2.0}, mode="fwd")
    >>> float(H["a"]["a"]), float(H["a"]["b"]), float(H["b"]["b"])
    (4.0, 2.0, 0.0)
    """
    outer, inner = _second_order_mode(mode, "hessian", extra)
    leaves = flatten(x, argument=True)[1]
    if any(map(is_complex_value, leaves)):
        raise ComplexValueError(
            f"the Hessian taken at {user_location()} is with respect to a complex "
            f"{type_str(next(v for v in leaves if is_complex_value(v)))}: the gradient of a real "
            f"function of complex values is not holomorphic, so no complex matrix is its "
            f"derivative; use hvp(f, x, v) for H v (the gradient of the derivative along v), "
            f"or take real and imaginary parts as two real arguments, f(x + 1j*y), for the "
            f"real Hessian"
        )
    return jacobian(_gradient_of(f, inner), x, mode=outer)


def hvp(f, x, v, mode: str = HESSIAN_MODE, *extra):
    """The Hessian-vector product ``H(x) v`` without forming the Hessian.

    `mode` names the outer pass, then the inner one, as for `hessian`: ``"rev-rev"`` (the
    default, also ``"rev"``): the gradient of ``<grad f(x), v>``; ``"fwd-rev"`` (also
    ``"fwd"``): the forward-mode derivative of the gradient along `v`; ``"rev-fwd"``: the
    gradient of the forward-mode derivative ``jvp(f, x, v)``; ``"fwd-fwd"``: the forward-mode
    derivative along `v` of the forward-mode gradient. The same numbers. `x` and `v` may be
    structures of the same shape, as for `grad`; the result has
    the structure of the gradient. For a complex `x` (autograd's convention, see the README)
    ``H v`` is the gradient of ``Re Σ grad f(x)·v``, the derivative of f along v, and both
    modes agree.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    >>> tapegrad.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]), mode="fwd")
    array([6., 0.])
    """
    outer, inner = _second_order_mode(mode, "hvp", extra)
    if outer == "fwd":
        hv = jvp(_gradient_of(f, inner), (x,), (v,))[1]
    elif inner == "fwd":
        # the gradient of the directional derivative, taken by forward mode
        def derivative_along_v(x, _c=(f, v)):
            f, v = _c
            return jvp(f, (x,), (v,))[1]

        hv = gradient(derivative_along_v, x)[0]
    else:
        hv = _hvp_reverse(f, x, v)
    # H v in the gradient's types (a float for a float, an array for an array), and zeros
    # where no second-order path reaches (a Hessian's entries are numbers, as `hessian`'s)
    return finalize(fill_zeros(hv, x), x)


def _hvp_reverse(f, x, v):
    """H v as the gradient of ``<grad f(x), v>`` (reverse over reverse)."""
    spec, _ = flatten(x, argument=True)
    vs = []
    _tangent_leaves(spec, v, "v", vs)

    def along_v(x, _c=(f, spec, vs)):
        f, spec, vs = _c
        gs = []
        _tangent_leaves(spec, gradient(f, x)[0], "the gradient", gs)
        # Re Σ g·v, the pairing of autograd's convention: for a complex x too, both modes
        # give the same H v (the gradient of the directional derivative along v)
        return sum(_pair(g, d) for g, d in zip(gs, vs))

    return gradient(along_v, x)[0]

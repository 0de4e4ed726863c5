"""Rules for scipy.special's log-sum-exp family: logsumexp, softmax and log_softmax.

These are plain Python functions in scipy, not ufuncs, and they convert their input with
``np.asarray`` (through scipy's array-API layer) before numpy sees it, so a Tracer passed to
them raises `ConcreteValueError`: neither ``__array_function__`` nor ``__array_ufunc__`` is
reached. The rules are registered for scipy's functions, and the functions of the same names
here (`logsumexp`, `softmax`, `log_softmax`) record scipy's function as one primitive when a
Tracer is among their arguments; the error raised by scipy's own function names them.
"""
from __future__ import annotations

import operator

import numpy as np
import scipy.special as sp

from ..errors import register_replacement
from ..registry import rrule, unbroadcast
from ..tangents import NO_TANGENT, Thunk, ZERO
from .special import call_as_primitive

__all__ = ["logsumexp", "softmax", "log_softmax"]


def _restore_axes(y, ndim, axis, keepdims):
    """Put back the reduced axes of `y` as length 1, so that it broadcasts against the input."""
    if keepdims or axis is None or ndim == 0:
        return y  # a full reduction is a scalar, which broadcasts as it is
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(y, tuple(sorted(int(a) % ndim for a in axes)))


# --- traceable entry points ---


def _static_axis(axis):
    """An axis as plain ints: a traced int (an axis captured by the traced function) is read
    once, as the shapes it indexes are fixed while tracing."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return operator.index(axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """`scipy.special.logsumexp` that traced values can reach (same arguments and results).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.rules.logsumexp import logsumexp
    >>> tapegrad.gradient(lambda a: logsumexp(a), np.log(np.array([1.0, 3.0])))[0]  # softmax
    array([0.25, 0.75])
    """
    axis = _static_axis(axis)
    # b goes by position (with axis before it), so that a traced b receives its gradient
    args = (a,) if b is None else (a, axis, b)
    kwargs = {"axis": axis} if b is None and axis is not None else {}
    if keepdims:
        kwargs["keepdims"] = keepdims
    if return_sign:
        kwargs["return_sign"] = return_sign
    return call_as_primitive(sp.logsumexp, args, kwargs)


def softmax(x, axis=None):
    """`scipy.special.softmax` that traced values can reach."""
    axis = _static_axis(axis)
    return call_as_primitive(sp.softmax, (x,), {} if axis is None else {"axis": axis})


def log_softmax(x, axis=None):
    """`scipy.special.log_softmax` that traced values can reach."""
    axis = _static_axis(axis)
    return call_as_primitive(sp.log_softmax, (x,), {} if axis is None else {"axis": axis})


for _name in __all__:
    register_replacement(f"scipy.special.{_name}", f"tapegrad.rules.logsumexp.{_name}")


# --- rules ---

_LOGSUMEXP_PARAMS = ("axis", "b", "keepdims", "return_sign")


@rrule(sp.logsumexp)
def logsumexp_rrule(a, *rest, **kwargs):
    params = dict(zip(_LOGSUMEXP_PARAMS, rest), **kwargs)
    axis, b = params.get("axis"), params.get("b")
    keepdims, return_sign = params.get("keepdims", False), params.get("return_sign", False)
    out = call_as_primitive(sp.logsumexp, (a, *rest), kwargs)  # traced again at second order
    y, sign = out if return_sign else (out, None)

    def logsumexp_pullback(dz):
        # y = log Σ b eᵃ: dy/da = b eᵃ / Σ b eᵃ = b exp(a - y) (times the sign of the sum when
        # return_sign); dy/db = exp(a - y). An all-zero sum (y = -inf) gives nan, as in autograd.
        dy = dz[0] if return_sign else dz
        ndim = max(np.ndim(a), np.ndim(b))
        if dy is ZERO:  # only the sign was used: it is piecewise constant
            return (NO_TANGENT, ZERO, *(ZERO if i == 1 else NO_TANGENT for i in range(len(rest))))
        w = np.exp(a - _restore_axes(y, ndim, axis, keepdims))
        if return_sign:
            w = w * _restore_axes(sign, ndim, axis, keepdims)
        dw = _restore_axes(dy, ndim, axis, keepdims) * w
        da = Thunk(lambda: unbroadcast(dw if b is None else dw * b, a))
        # b may be broadcast against a larger than a: give dw the shape of both first
        db = Thunk(lambda: unbroadcast(np.broadcast_to(dw, np.broadcast_shapes(np.shape(a), np.shape(b))), b))
        return (
            NO_TANGENT,
            da,
            *(db if i == 1 and b is not None else NO_TANGENT for i in range(len(rest))),
        )

    return out, logsumexp_pullback


def _softmax_axis(rest, kwargs):
    return rest[0] if rest else kwargs.get("axis")


@rrule(sp.softmax)
def softmax_rrule(x, *rest, **kwargs):
    axis = _softmax_axis(rest, kwargs)
    y = call_as_primitive(sp.softmax, (x, *rest), kwargs)

    def softmax_pullback(dy):
        # d softmax: y ⊙ (dy - <dy, y>) along the axis
        inner = np.sum(dy * y, axis=axis, keepdims=True)
        return (NO_TANGENT, y * (dy - inner), *(NO_TANGENT for _ in rest))

    return y, softmax_pullback


@rrule(sp.log_softmax)
def log_softmax_rrule(x, *rest, **kwargs):
    axis = _softmax_axis(rest, kwargs)
    y = call_as_primitive(sp.log_softmax, (x, *rest), kwargs)

    def log_softmax_pullback(dy):
        # log softmax = x - logsumexp(x): dx = dy - softmax(x) Σ dy along the axis
        total = np.sum(dy, axis=axis, keepdims=True)
        return (NO_TANGENT, dy - np.exp(y) * total, *(NO_TANGENT for _ in rest))

    return y, log_softmax_pullback

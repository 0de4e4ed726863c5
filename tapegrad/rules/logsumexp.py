"""Rules for the log-sum-exp family of `tapegrad.scipy.special`: logsumexp, softmax and log_softmax.

scipy's functions convert their input with ``np.asarray`` before numpy sees it, so a Tracer
cannot reach them; the replacements of the same names record scipy's function, wrapped as
one primitive, and the rules are registered on what they record. The rules and their
pullbacks call it again, so that a Tracer records them at second order.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole

from ..broadcasting import unbroadcast
from ..scipy.special import log_softmax_op, logsumexp_op, softmax_op
from ..tangents import NO_TANGENT, ZERO, Thunk


def _restore_axes(y, ndim, axis, keepdims):
    """Put back the reduced axes of `y` as length 1, so that it broadcasts against the input."""
    if keepdims or axis is None or ndim == 0:
        return y  # a full reduction is a scalar, which broadcasts as it is
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(y, tuple(sorted(int(a) % ndim for a in axes)))


_LOGSUMEXP_PARAMS = ("axis", "b", "keepdims", "return_sign")


@rrule(logsumexp_op, formula=whole("{dy} · exp({a[0]} - {y}), broadcast back over {over}"))
def logsumexp_rrule(a, *rest, **kwargs):
    params = dict(zip(_LOGSUMEXP_PARAMS, rest), **kwargs)
    axis, b = params.get("axis"), params.get("b")
    keepdims, return_sign = params.get("keepdims", False), params.get("return_sign", False)
    out = logsumexp_op(a, *rest, **kwargs)  # traced again at second order
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


@rrule(softmax_op, formula=whole("{y} · ({dy} - Σ({dy} · {y}) over {over})"))
def softmax_rrule(x, *rest, **kwargs):
    axis = _softmax_axis(rest, kwargs)
    y = softmax_op(x, *rest, **kwargs)

    def softmax_pullback(dy):
        # d softmax: y ⊙ (dy - <dy, y>) along the axis
        inner = np.sum(dy * y, axis=axis, keepdims=True)
        return (NO_TANGENT, y * (dy - inner), *(NO_TANGENT for _ in rest))

    return y, softmax_pullback


@rrule(log_softmax_op, formula=whole("{dy} - exp({y}) · Σ{dy} over {over}"))
def log_softmax_rrule(x, *rest, **kwargs):
    axis = _softmax_axis(rest, kwargs)
    y = log_softmax_op(x, *rest, **kwargs)

    def log_softmax_pullback(dy):
        # log softmax = x - logsumexp(x): dx = dy - softmax(x) Σ dy along the axis
        total = np.sum(dy, axis=axis, keepdims=True)
        return (NO_TANGENT, dy - np.exp(y) * total, *(NO_TANGENT for _ in rest))

    return y, log_softmax_pullback

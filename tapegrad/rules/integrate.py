"""The rule of odeint (``tapegrad.scipy.integrate.odeint``): gradients by the adjoint method.

For dy/dt = f(y, t, θ) observed at t₀ < ... < t_{T-1} with cotangents gᵢ of y(tᵢ), the adjoint
λ(t) runs backwards from t_{T-1}: between observations dλ/dt = -λᵀ ∂f/∂y, dθ̄/dt = -λᵀ ∂f/∂θ,
and at each tᵢ it takes the jump gᵢ; λ(t₀) is ȳ₀. The time points get t̄ᵢ = gᵢ·f(yᵢ, tᵢ) for
i > 0, and t̄₀ = -Σᵢ gᵢ·f(yᵢ, tᵢ) plus the integral of -λᵀ ∂f/∂t. The backward passes are
themselves odeint calls on the state (y, λ, t̄₀, θ̄), with the vector-Jacobian products of f
taken by tapegrad. The pullback runs on plain values (no second derivatives: scipy's
integrator cannot be traced).

Forward mode integrates the tangent δ alongside y: dδ/dt = ∂f/∂y δ + ∂f/∂θ dθ from
δ(t₀) = dy₀ - f(y₀, t₀) dt₀, and the tangent at tᵢ is δ(tᵢ) + f(yᵢ, tᵢ) dtᵢ.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate

from ..forward import jvp
from ..grad import pullback
from ..registry import frule, rrule
from ..scipy.integrate import odeint_op
from ..tangents import NO_TANGENT, ZERO, getitem
from ._shapes import cast_like


def _flat(tangent, like):
    """A tangent as a flat float array of `like`'s size (zeros for ZeroTangent)."""
    if tangent is ZERO or tangent is NO_TANGENT:
        return np.zeros(np.size(like))
    return np.ravel(np.asarray(tangent, dtype=float))


def _unflatten(flat, args):
    """The flat parameter tangent split back into one tangent per entry of `args`, of its type."""
    out, start = [], 0
    for a in args:
        n = np.size(a)
        piece = flat[start:start + n]
        start += n
        if isinstance(a, np.ndarray):
            out.append(np.reshape(piece, np.shape(a)).astype(np.result_type(a.dtype, np.float32)))
        elif isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            out.append(NO_TANGENT)  # a count or a flag
        else:
            out.append(float(piece[0]))
    return type(args)(out) if not hasattr(args, "_fields") else type(args)(*out)


@rrule(odeint_op)
def odeint_rrule(func, y0, t, args, **kwargs):
    if kwargs.get("full_output"):
        raise NotImplementedError("tapegrad differentiates odeint without full_output=True; leave it out")
    if kwargs.get("tfirst"):
        def f(y, tt, *a):
            return func(tt, y, *a)
    else:
        f = func
    yt = odeint_op(func, y0, t, args, **kwargs)
    rest = {k: v for k, v in kwargs.items() if k != "tfirst"}
    d = np.size(y0)
    sizes = [np.size(a) for a in args]
    p = sum(sizes)

    def vjp(y, tt, theta, cot):
        """f(y, t, θ) and cotᵀ ∂f/∂(y, t, θ), by tapegrad (θ flat)."""
        params, start = [], 0
        for a, n in zip(args, sizes):
            piece = theta[start:start + n]
            start += n
            params.append(np.reshape(piece, np.shape(a)) if isinstance(a, np.ndarray) else
                          (a if isinstance(a, (int, np.integer)) else float(piece[0])))
        value, back = pullback(lambda y, tt, *ps: f(y, tt, *ps), np.reshape(y, np.shape(y0)), float(tt), *params)
        grads = back(np.reshape(cot, np.shape(value)))
        dy, dtt = getitem(grads, 1), getitem(grads, 2)
        dtheta = np.concatenate([_flat(getitem(grads, 3 + i), a) for i, a in enumerate(args)]) if args else np.zeros(0)
        tval = 0.0 if dtt is ZERO or dtt is NO_TANGENT else float(dtt)
        return np.ravel(value), _flat(dy, y0), tval, dtheta

    def augmented(state, tt):
        y, lam = state[:d], state[d:2 * d]
        dydt, dlam, dtt, dtheta = vjp(y, tt, theta0, -lam)
        return np.concatenate([dydt, dlam, [dtt], dtheta])

    theta0 = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in args]) if args else np.zeros(0)

    def odeint_pullback(g):
        g = np.reshape(np.asarray(g, dtype=float), (len(t), d))
        states = np.reshape(yt, (len(t), d))
        lam, t0bar, thetabar = g[-1].copy(), 0.0, np.zeros(p)
        tbar = np.zeros(len(t))
        for i in range(len(t) - 1, 0, -1):
            fi = np.ravel(f(np.reshape(states[i], np.shape(y0)), t[i], *args))
            tbar[i] = g[i] @ fi
            t0bar -= tbar[i]
            start = np.concatenate([states[i], lam, [t0bar], thetabar])
            end = scipy.integrate.odeint(augmented, start, np.array([t[i], t[i - 1]]), **rest)[1]
            lam, t0bar, thetabar = end[d:2 * d] + g[i - 1], end[2 * d], end[2 * d + 1:]
        tbar[0] = t0bar
        dy0 = cast_like(np.reshape(lam, np.shape(y0)), y0) if isinstance(y0, np.ndarray) else float(lam[0])
        dt = cast_like(np.reshape(tbar, np.shape(t)), t) if isinstance(t, np.ndarray) else type(t)(tbar)
        return NO_TANGENT, NO_TANGENT, dy0, dt, _unflatten(thetabar, args)

    return yt, odeint_pullback


@frule(odeint_op)
def odeint_frule(dargs, func, y0, t, args, **kwargs):
    f = (lambda y, tt, *a: func(tt, y, *a)) if kwargs.get("tfirst") else func
    rest = {k: v for k, v in kwargs.items() if k not in ("tfirst", "full_output")}
    _, dy0, dt, dargs_ = dargs
    d = np.size(y0)
    dy0 = np.zeros(d) if dy0 is ZERO else np.ravel(np.asarray(dy0, dtype=float))
    dt = np.zeros(np.shape(t)) if dt is ZERO else np.asarray(dt, dtype=float)
    dparams = [np.zeros(np.shape(a)) if dargs_ is ZERO or dargs_[i] is ZERO else dargs_[i]
               for i, a in enumerate(args)]
    dparams = [p if isinstance(a, np.ndarray) else float(np.sum(p)) for p, a in zip(dparams, args)]

    def f_flat(y, tt):
        return np.ravel(f(np.reshape(y, np.shape(y0)), tt, *args))

    def with_tangent(state, tt):
        y, delta = np.reshape(state[:d], np.shape(y0)), np.reshape(state[d:], np.shape(y0))
        value, tangent = jvp(lambda y, *ps: f(y, tt, *ps), (y, *args), (delta, *dparams))
        return np.concatenate([np.ravel(value), np.ravel(tangent)])

    yt = odeint_op(func, y0, t, args, **kwargs)
    start = np.concatenate([np.ravel(np.asarray(y0, dtype=float)), dy0 - f_flat(y0, t[0]) * dt[0]])
    both = scipy.integrate.odeint(with_tangent, start, t, **rest)
    tangent = both[:, d:] + np.stack([f_flat(yi, ti) for yi, ti in zip(np.reshape(yt, (len(t), d)), t)]) * dt[:, None]
    return yt, np.reshape(tangent, np.shape(yt)).astype(yt.dtype)

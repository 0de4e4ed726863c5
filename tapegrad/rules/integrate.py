"""The rule of odeint (``tapegrad.scipy.integrate.odeint``): gradients by the adjoint method.

For dy/dt = f(y, t, θ) observed at t₀ < ... < t_{T-1} with cotangents gᵢ of y(tᵢ), the adjoint
λ(t) runs backwards from t_{T-1}: between observations dλ/dt = -λᵀ ∂f/∂y, dθ̄/dt = -λᵀ ∂f/∂θ,
and at each tᵢ it takes the jump gᵢ; λ(t₀) is ȳ₀. The time points get t̄ᵢ = gᵢ·f(yᵢ, tᵢ) for
i > 0, and t̄₀ = -Σᵢ gᵢ·f(yᵢ, tᵢ) plus the integral of -λᵀ ∂f/∂t.

The pullback is one op, `odeint_cotangent`. On plain values it is the machinery of
``tapegrad.rules.ivp`` with scipy's LSODA (odeint's method) at odeint's tolerances: forward
sensitivities for a small system, else λ integrated backward on a dense forward solution
(`_checkpointed`); traced (a compiled gradient, a replayed tape) it is recorded as one call that
replays the same. Its own rule, for second derivatives, differentiates the adjoint written in
traceable numpy (`_backward_cotangent`): odeint calls on the state (y, λ, t̄₀, θ̄) integrated
backward, with the vector-Jacobian products of f taken by tapegrad.

Forward mode through the pullback (`odeint_cotangent`'s forward rule, a Hessian forward over
reverse) is the second-order adjoint of ``tapegrad.rules.ivp`` for (ȳ₀, θ̄) and the tangent of
t̄'s formula; moving time points enter both (their terms are in the rule's comments).

Forward mode integrates the tangent δ alongside y: dδ/dt = ∂f/∂y δ + ∂f/∂θ dθ from
δ(t₀) = dy₀ - f(y₀, t₀) dt₀, and the tangent at tᵢ is δ(tᵢ) + f(yᵢ, tᵢ) dtᵢ.

The traceable forms call the differentiable `odeint_op` itself, on an augmented state whose
dynamics (`_AdjointDynamics`, `_TangentDynamics`) take every value they depend on through
odeint's `args`: scipy calls them on plain arrays (the tangent dynamics run a compiled program
there), and when the rule is being differentiated (a second derivative, in any combination of
modes) tapegrad records that inner odeint and differentiates it by these same rules.
"""
from __future__ import annotations

import numpy as np

from ..forward import jvp
from ..context import primitive
from ..grad import gradient, pullback
from ..registry import frule, rrule, whole
from ..dual import derived_frule
from ..pytree import any_nested
from ..scipy._implicit import flat_tangent, zeros_like_leaf
from ..scipy._ivp import IvpProblem
from ..scipy.integrate import odeint_op
from ..structures import Boxed, replace_items
from ..tangents import NO_TANGENT, ZERO, getitem
from ._odeprograms import Program
from ._shapes import cast_like
from . import ivp

_DEFAULT_TOL = 1.49012e-8  # scipy's odeint's rtol and atol when not given


def _is_count(a) -> bool:
    """An int argument (a count or a flag): passed along, never differentiated."""
    return isinstance(a, (int, np.integer)) and not isinstance(a, bool)


def _one(x):
    """A scalar tangent as a vector of length 1 (zeros for ZeroTangent / NoTangent)."""
    return np.zeros(1) if x is ZERO or x is NO_TANGENT else np.reshape(x, (1,))


def _as_number(x):
    """A 0-d tangent of a Python float argument: a float when plain, the traced scalar as is."""
    return x if isinstance(x, Boxed) else float(x)


def _unflatten(flat, args):
    """The flat parameter tangent split back into one tangent per entry of `args`, of its type."""
    out, start = [], 0
    for a in args:
        n = np.size(a)
        piece = flat[start:start + n]
        start += n
        if _is_count(a):
            out.append(NO_TANGENT)
        elif isinstance(a, np.ndarray) or (isinstance(a, Boxed) and np.ndim(a) > 0):
            out.append(cast_like(np.reshape(piece, np.shape(a)), a))
        else:
            out.append(_as_number(piece[0]))
    return replace_items(args, out)


def _float64(args) -> tuple:
    """The parameters with every float array in float64, as scipy integrates: a float32
    parameter would give the adjoint's right-hand side float32 roundoff, which the solver's
    tolerances cannot meet."""
    return tuple(np.astype(a, np.float64) if getattr(a, "dtype", None) in (np.float16, np.float32) else a
                 for a in args)


def _distinct(params) -> tuple:
    """The parameters as distinct objects: an array given twice (a weight two layers share) is two
    parameters, each taking its own share of the derivative, where tapegrad's gradient and jvp
    would take it as one value reachable two ways (and give each place the sum)."""
    seen, out = set(), []
    for a in params:
        if isinstance(a, np.ndarray):
            if id(a) in seen:
                a = a.view()
            seen.add(id(a))
        out.append(a)
    return tuple(out)


def _untfirst(func, kwargs):
    """`func` in the (y, t, *args) order, and the keyword arguments of the odeint calls the rules make."""
    f = _TimeFirst(func) if kwargs.get("tfirst") else func
    return f, {k: v for k, v in kwargs.items() if k != "tfirst"}


def _tolerances(rest, d, size, tangent):
    """The keyword arguments for an odeint of a longer state (`size` entries, the first d the
    state's): a per-component rtol or atol of the state is tiled over the tangent's copy of it
    (`tangent`), or for the adjoint's state, whose entries have units of their own, its tightest
    value taken for all (odepack refuses an array of another length)."""
    out = dict(rest)
    for key in ("rtol", "atol"):
        v = out.get(key)
        if v is not None and np.ndim(v):
            v = np.broadcast_to(np.asarray(v, dtype=float), (d,))
            out[key] = np.tile(v, size // d) if tangent else float(np.min(v))
    return out


def _vjp(f, y, tt, params, cot):
    """f(y, t, *params) and the gradient of cotᵀ f with respect to (f, y, t, *params).

    A traced cotangent (the adjoint itself differentiated) cannot seed a pullback: then cot
    is an argument of the scalar cotᵀ f, whose gradient tapegrad takes."""
    params = _distinct(params)
    if not isinstance(cot, Boxed):
        value, back = pullback(f, y, tt, *params)
        return value, back(np.reshape(cot, np.shape(value)))

    def weighted(y, tt, w, *ps):
        return np.sum(np.ravel(f(y, tt, *ps)) * w)

    grads = gradient(weighted, y, tt, cot, *params)
    return f(y, tt, *params), (ZERO, grads[0], grads[1], *grads[3:])


class _TimeFirst:
    """func(t, y, *args) called as f(y, t, *args)."""

    def __init__(self, func):
        self.func = func

    def __call__(self, y, tt, *args):
        return self.func(tt, y, *args)


class _AdjointDynamics:
    """The dynamics of the state (y, λ, t̄₀, θ̄) run backwards: (f, -λᵀ∂f/∂y, -λᵀ∂f/∂t, -λᵀ∂f/∂θ).

    A function of values alone (the parameters come in as odeint's `args`; an object rather
    than a closure, so that tapegrad does not follow what it holds), differentiated by tapegrad
    along the way: scipy calls it on plain arrays, and tapegrad traces it when the odeint of
    the adjoint is itself differentiated (second derivatives)."""

    def __init__(self, f, shape):
        self.f, self.shape, self.d = f, shape, int(np.prod(shape))

    def __call__(self, state, tt, *params):
        d = self.d
        y, lam = np.reshape(state[:d], self.shape), state[d:2 * d]
        value, grads = _vjp(self.f, y, tt, params, -lam)
        dtheta = [flat_tangent(getitem(grads, 3 + i), a) for i, a in enumerate(params)]
        return np.concatenate([np.ravel(value), flat_tangent(getitem(grads, 1), y), _one(getitem(grads, 2)), *dtheta])


@rrule(odeint_op, formula=whole(
    None,
    "λ(t₀): the adjoint λ integrated back from the last time, dλ/dt = -λᵀ·∂f/∂y, "
    "taking the jump {dy}ᵢ at each tᵢ",
    "{dy}ᵢ·f(yᵢ, tᵢ) at i > 0; at t₀ minus their sum, plus ∫ -λᵀ·∂f/∂t",
    "∫ λᵀ·∂f/∂θ dt from t₀ to the last time (θ the parameters)",
))
def odeint_rrule(func, y0, t, args, **kwargs):
    if kwargs.get("full_output"):
        raise NotImplementedError("tapegrad differentiates odeint without full_output=True; leave it out")
    yt = odeint_op(func, y0, t, args, **kwargs)
    d, n = int(np.size(y0)), len(t)

    def odeint_pullback(g):
        # one op, recorded as such when the values are traced (a compiled or replayed gradient)
        cot = odeint_cotangent(func, y0, t, args, yt, g, **kwargs)
        lam, tbar, thetabar = cot[:d], cot[d:d + n], cot[d + n:]
        dy0 = cast_like(np.reshape(lam, np.shape(y0)), y0) if np.ndim(y0) or hasattr(y0, "dtype") else \
            _as_number(lam[0])
        dt = cast_like(np.reshape(tbar, np.shape(t)), t) if isinstance(t, (np.ndarray, Boxed)) else type(t)(tbar)
        return NO_TANGENT, NO_TANGENT, dy0, dt, _unflatten(thetabar, args)

    return yt, odeint_pullback


@primitive(traceable=False)
def odeint_cotangent(func, y0, t, args, yt, g, **kwargs):
    """(ȳ₀, t̄, θ̄) flat, the cotangent of odeint's inputs for the cotangent g of its solution yt,
    on plain values: the adjoint on a checkpointed forward solution (`_checkpointed`). What the
    pullback records when its values are traced, so that a compiled gradient or a replayed tape
    runs it, never the adjoint that integrates the state backward (`_backward_cotangent`, which
    overflows on a stiff problem and serves second derivatives only)."""
    f, rest = _untfirst(func, kwargs)
    return _checkpointed(f, rest, y0, t, args, yt, g)


def _backward_cotangent(func, y0, t, args, yt, g, kwargs):
    """`odeint_cotangent` in traceable numpy: the state (y, λ, t̄₀, θ̄) integrated backward by
    `odeint_op` itself, which the rules differentiate again (second derivatives)."""
    f, rest = _untfirst(func, kwargs)
    n, d, shape = len(t), int(np.size(y0)), np.shape(y0)
    p = sum(np.size(a) for a in args)
    dynamics = _AdjointDynamics(f, shape)
    adjoint_options = _tolerances(rest, d, 2 * d + 1 + p, tangent=False)
    g = np.astype(np.reshape(g, (n, d)), np.float64)  # the adjoint runs in float64
    states = np.astype(np.reshape(yt, (n, d)), np.float64)
    lam, t0bar, thetabar = g[-1], np.zeros(1), np.zeros(p)
    tbar = [None] * n
    params = _float64(args)
    for i in range(n - 1, 0, -1):
        tbar[i] = g[i] @ np.ravel(f(np.reshape(states[i], shape), t[i], *args))
        t0bar = t0bar - tbar[i]
        start = np.concatenate([states[i], lam, t0bar, thetabar])
        end = odeint_op(dynamics, start, np.stack([t[i], t[i - 1]]), params, **adjoint_options)[1]
        lam, t0bar, thetabar = end[d:2 * d] + g[i - 1], end[2 * d:2 * d + 1], end[2 * d + 1:]
    tbar[0] = t0bar[0]
    return np.concatenate([np.ravel(lam), np.stack(tbar), np.ravel(thetabar)])


class _BackwardCotangent:
    """`_backward_cotangent` of one odeint's func and options: an object, not a closure, so that
    tapegrad does not take the options (rtol, atol) for values to differentiate."""

    def __init__(self, func, kwargs):
        self.func, self.kwargs = func, kwargs

    def __call__(self, y0, t, args, yt, g):
        return _backward_cotangent(self.func, y0, t, args, yt, g, self.kwargs)


@rrule(odeint_cotangent, formula=whole(None, "the backward adjoint's derivative", None, None, None, None))
def odeint_cotangent_rrule(func, y0, t, args, yt, g, **kwargs):
    value = odeint_cotangent(func, y0, t, args, yt, g, **kwargs)

    def odeint_cotangent_pullback(dv):
        back = pullback(_BackwardCotangent(func, kwargs), y0, t, args, yt, g)[1]
        return (NO_TANGENT, NO_TANGENT, *back(dv)[1:])

    return value, odeint_cotangent_pullback


class _TangentDynamics:
    """The dynamics of the state (y, δ): (f, ∂f/∂y δ + ∂f/∂θ dθ), the m parameters and then
    their tangents coming in as odeint's `args` (a function of values, as `_AdjointDynamics`)."""

    def __init__(self, f, shape, m):
        self.f, self.shape, self.d, self.m = f, shape, int(np.prod(shape)), m
        self.program = Program(self.eager, key=(("odeint tangent", shape, m), self.forward))

    def forward(self, state, tt, *params):
        """What `eager` differentiates: the program's key (`Program`)."""
        return self.f(np.reshape(state[:self.d], self.shape), tt, *params[:self.m])

    def __call__(self, state, tt, *params):
        # on plain values (scipy's calls) a program compiled on the first; traced ones (the tangent
        # solve differentiated again) go through jvp itself
        if any(isinstance(v, Boxed) for v in (state, tt, *params)):
            return self.eager(state, tt, *params)
        return self.program(state, tt, *params)

    def eager(self, state, tt, *params):
        d, m = self.d, self.m
        y, delta = np.reshape(state[:d], self.shape), np.reshape(state[d:], self.shape)
        value, tangent = jvp(_AtTime(self.f, tt), (y, *_distinct(params[:m])), (delta, *params[m:]))
        return np.concatenate([np.ravel(value), flat_tangent(tangent, y)])


class _AtTime:
    """f(y, t, *args) at a fixed t, as a function of (y, *args)."""

    def __init__(self, f, tt):
        self.f, self.tt = f, tt

    def __call__(self, y, *args):
        return self.f(y, self.tt, *args)


@frule(odeint_op)
def odeint_frule(dargs, func, y0, t, args, **kwargs):
    if kwargs.get("full_output"):
        raise NotImplementedError("tapegrad differentiates odeint without full_output=True; leave it out")
    f, rest = _untfirst(func, kwargs)
    _, dy0, dt, dargs_ = dargs
    d, shape = np.size(y0), np.shape(y0)
    dy0 = flat_tangent(dy0, y0)
    dt = np.zeros(np.shape(t)) if dt is ZERO or dt is NO_TANGENT else dt
    dparams = []
    for i, a in enumerate(args):
        da = ZERO if dargs_ is ZERO or dargs_ is NO_TANGENT else dargs_[i]
        if da is ZERO or da is NO_TANGENT:
            da = np.zeros(np.shape(a)) if isinstance(a, np.ndarray) else 0.0
        dparams.append(da)

    def f_flat(y, tt):
        return np.ravel(f(np.reshape(y, shape), tt, *args))

    yt = odeint_op(func, y0, t, args, **kwargs)
    start = np.concatenate([np.ravel(y0), dy0 - f_flat(y0, t[0]) * dt[0]])
    both = odeint_op(_TangentDynamics(f, shape, len(args)), start, t, _float64((*args, *dparams)),
                     **_tolerances(rest, d, 2 * d, tangent=True))
    ends = np.stack([f_flat(yi, ti) for yi, ti in zip(np.reshape(yt, (len(t), d)), t)])
    tangent = both[:, d:] + ends * np.reshape(dt, (len(t), 1))
    return yt, cast_like(np.reshape(tangent, np.shape(yt)), yt)


# --- first order on plain values: the adjoint on a checkpointed forward solution ---


class _OdeintCaptured:
    """odeint's f(y, t, *args) as solve_ivp's fun(t, y), its float args the leaves (ints, counts, stay)."""

    def __init__(self, f, shape, args):
        self.f, self.shape, self.args = f, shape, args

    def bind(self, leaves):
        it = iter(leaves)
        args = tuple(a if _is_count(a) else next(it) for a in self.args)
        return (lambda tt, y: np.ravel(self.f(np.reshape(y, self.shape), tt, *args))), ()


def _lsoda_problem(f, rest, y0, t, args):
    """(the solve_ivp problem of odeint's: LSODA at odeint's tolerances, its times, its leaves)."""
    times = np.asarray(t, dtype=float)
    options = {k: _DEFAULT_TOL if rest.get(k) is None else rest[k] for k in ("rtol", "atol")}
    if rest.get("hmax"):
        options["max_step"] = rest["hmax"]
    options["rtol"] = float(np.min(options["rtol"]))  # (solve_ivp takes a scalar rtol)
    problem = IvpProblem(_OdeintCaptured(f, np.shape(y0), args), (float(times[0]), float(times[-1])), times,
                         "LSODA", options)
    return problem, times, tuple(a for a in args if not _is_count(a))


def _checkpointed(f, rest, y0, t, args, yt, g):
    """(ȳ₀, t̄, θ̄) flat on plain values by the pullbacks of ``tapegrad.rules.ivp`` with scipy's LSODA
    (odeint's method) at odeint's tolerances, picked as there (`strategy`): forward sensitivities
    for a small system, else the adjoint, λ integrated backward on a dense forward solution, never
    the state integrated backward (which overflows on a stiff problem, Robertson's). The time
    points: t̄ᵢ = gᵢ·f(yᵢ, tᵢ) for i > 0 and t̄₀ = -λ(t₀⁺)·f(y₀, t₀)."""
    problem, times, leaves = _lsoda_problem(f, rest, y0, t, args)
    n, d, shape = len(times), int(np.size(y0)), np.shape(y0)
    g = np.reshape(np.asarray(g, dtype=float), (n, d))
    if ivp.strategy(problem, d, sum(int(np.size(a)) for a in leaves)) == "forward":
        dy0, dtheta = ivp.sensitivities(problem, times, y0, leaves, g.T)
    else:
        problem.result = problem.solve(y0, leaves)  # (its njev says whether LSODA went stiff)
        dy0, dtheta = ivp.adjoint(problem, times, problem.result.sol, y0, leaves, g.T)
    slopes = np.stack([np.ravel(f(np.reshape(yi, shape), ti, *args)) for yi, ti in zip(np.reshape(yt, (n, d)), times)])
    tbar = np.sum(g * slopes, axis=1)
    tbar[0] = -(dy0 - g[0]) @ slopes[0]
    flat, pieces = [], iter(np.split(dtheta, np.cumsum([np.size(a) for a in leaves])[:-1]) if leaves else ())
    for a in args:
        flat.append(np.zeros(1) if _is_count(a) else np.ravel(next(pieces)))
    return np.concatenate([np.ravel(dy0), tbar, *flat])


# --- forward mode through the adjoint ---


def _is_zero(d) -> bool:
    return d is ZERO or d is NO_TANGENT


@frule(odeint_cotangent)
def odeint_cotangent_frule(dargs, func, y0, t, args, yt, g, **kwargs):
    # ȳ₀ and θ̄ by the second-order adjoint (`tapegrad.rules.ivp.second_adjoint`), t̄ by the
    # tangent of its formula (`_checkpointed`); traced values (a trace inside this forward
    # pass) by the rule derived from the reverse one
    _, dy0, dt, dargs_, dyt, dg = dargs
    if any_nested([y0, t, args, yt, g, dargs], lambda v: isinstance(v, Boxed)):
        return derived_frule(odeint_cotangent, (func, y0, t, args, yt, g), dargs, kwargs)
    value = odeint_cotangent(func, y0, t, args, yt, g, **kwargs)
    f, rest = _untfirst(func, kwargs)
    problem, times, leaves = _lsoda_problem(f, rest, y0, t, args)
    n, d, shape = len(times), int(np.size(y0)), np.shape(y0)
    dparams = [ZERO if _is_zero(dargs_) else dargs_[i] for i in range(len(args))]
    dleaves = [da for a, da in zip(args, dparams) if not _is_count(a)]
    plain_dleaves = tuple(zeros_like_leaf(a) if _is_zero(da) else da for a, da in zip(leaves, dleaves))
    G = np.reshape(np.asarray(g, dtype=float), (n, d))
    dG = np.zeros_like(G) if _is_zero(dg) else np.reshape(np.asarray(dg, dtype=float), (n, d))
    dT = np.zeros(n) if _is_zero(dt) else np.reshape(np.asarray(dt, dtype=float), n)
    Y = np.reshape(np.asarray(yt, dtype=float), (n, d))
    dY = np.zeros_like(Y) if _is_zero(dyt) else np.reshape(np.asarray(dyt, dtype=float), (n, d))
    slopes, ybar = _Slopes(f, shape, args), value[:d]
    S, dS = jvp(slopes, (Y, times, *leaves), (dY, dT, *plain_dleaves))  # f(Yᵢ, tᵢ), along (dY, dt, dθ)
    # moving times: ∂L/∂tᵢ = gᵢ·f(yᵢ, tᵢ) (i > 0) and ∂L/∂t₀ = -(ȳ₀ - g₀)·f(y₀, t₀) (L = Σ gᵢ·y(tᵢ),
    # whose y₀- and θ-derivatives ȳ₀ and θ̄ are), differentiated in y₀ and θ: y(t₀) moves by
    # -f₀ dt₀ (dy₀ there), yᵢ's weight J_yᵀ gᵢ dtᵢ joins dgᵢ, and the rest is direct
    dy0_flat, moved = flat_tangent(dy0, y0), np.zeros((n, d))
    extra_y0, extra_theta = np.zeros(d), [zeros_like_leaf(a) for a in leaves]
    if np.any(dT):
        W = G * dT[:, None]
        W[0] = -(ybar - G[0]) * dT[0]
        dW = gradient(_Weighted(slopes, times, W), Y, *leaves)
        moved, extra_y0 = np.concatenate([np.zeros((1, d)), dW[0][1:]]), dW[0][0]
        extra_theta = [zeros_like_leaf(a) if _is_zero(e) else e for a, e in zip(leaves, dW[1:])]
        dy0_flat = dy0_flat - S[0] * dT[0]
    dG_all = dG + moved
    if not np.any(dy0_flat) and all(_is_zero(da) for da in dleaves):
        linear = odeint_cotangent(func, y0, t, args, yt, dG_all, **kwargs)  # (ȳ₀, θ̄) are linear in g
        dcot = np.concatenate([linear[:d], np.concatenate([np.ravel(p) for p, a in zip(
            np.split(linear[d + n:], np.cumsum([np.size(a) for a in args])[:-1]), args) if not _is_count(a)]
            or [np.zeros(0)])])
    else:
        dcot = ivp.second_adjoint(problem, times, y0, leaves, np.reshape(dy0_flat, shape), dleaves, G.T,
                                  dG_all.T)[1]
    dcot = dcot + np.concatenate([np.ravel(extra_y0), *[np.ravel(e) for e in extra_theta]])
    # t̄ᵢ = gᵢ·f(yᵢ, tᵢ) (i > 0), t̄₀ = -(ȳ₀ - g₀)·f(y₀, t₀): their tangent
    dtbar = np.sum(dG * S + G * dS, axis=1)
    dybar = dcot[:d]
    dtbar[0] = -(dybar - dG[0]) @ S[0] - (ybar - G[0]) @ dS[0]
    flat, pieces = [], iter(np.split(dcot[d:], np.cumsum([np.size(a) for a in leaves])[:-1]) if leaves else ())
    for a in args:
        flat.append(np.zeros(1) if _is_count(a) else np.ravel(next(pieces)))
    return value, np.concatenate([dybar, dtbar, *flat])


class _Weighted:
    """(Y, *leaves) -> Σ W ⊙ f(Yᵢ, tᵢ) at fixed times: its gradient holds the weights J_yᵀ Wᵢ
    and the parameters' Σ f_θᵀ Wᵢ of moving times."""

    def __init__(self, slopes, times, W):
        self.slopes, self.times, self.W = slopes, times, W

    def __call__(self, Y, *leaves):
        return np.sum(self.W * self.slopes(Y, self.times, *leaves))


class _Slopes:
    """(Y, times, *leaves) -> f(Yᵢ, tᵢ) stacked, (n, d): the slopes at the output times, the
    counts of `args` kept in their places."""

    def __init__(self, f, shape, args):
        self.f, self.shape, self.args = f, shape, args

    def __call__(self, Y, times, *leaves):
        it = iter(leaves)
        args = tuple(a if _is_count(a) else next(it) for a in self.args)
        return np.stack([np.ravel(self.f(np.reshape(Y[i], self.shape), times[i], *args)) for i in range(len(Y))])

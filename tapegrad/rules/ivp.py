"""The rules of ``tapegrad.scipy._ivp.ivp_solution`` (what ``tapegrad.scipy.integrate.solve_ivp``
records): the adjoint method or forward sensitivities in reverse mode, forward sensitivities in
forward mode.

For dy/dt = f(t, y, θ) observed at t₁ ≤ ... ≤ t_T with cotangents gₖ, the adjoint λ runs backward
from t_T: between observations dλ/dt = -(∂f/∂y)ᵀλ and dθ̄/dt = -(∂f/∂θ)ᵀλ, at each tₖ it takes the
jump gₖ, and at t₀ it is ȳ₀ (θ̄ the parameters' cotangent). scipy integrates it backward at the
forward's tolerances (by the method `backward_method` picks), reading y(t) from the forward
solve's dense output (the forward solution interpolated, never integrated backward: that is
unstable where the problem is stiff).
Forward sensitivities (`sensitivities`) integrate S = ∂y/∂(y₀, θ) with y instead, and the
pullback is Σₖ S(tₖ)ᵀgₖ; `strategy` picks between the two by the method and the sizes. Either way
the products of f's Jacobian are one program per pullback, traced on its first evaluation and
compiled (``tapegrad.rules._odeprograms``), so that scipy's evaluations run plain numpy.

The pullback is one op, `ivp_cotangent`: on plain values it runs at once; on traced ones (a
compiled gradient, a traced gradient whose tape is replayed) it is recorded as one call, which
replays the fast pullback above, and its own rule differentiates the same map written in
traceable numpy (`_tangent_cotangent`: one tangent solve per input direction), which is how
second derivatives in reverse mode go.

Forward mode integrates the tangent v alongside y: dv/dt = ∂f/∂y v + ∂f/∂θ dθ from v(t₀) = dy₀,
as one more `ivp_solution` of the state (y, v) whose dynamics take θ and dθ as its captured
values (a compiled program on plain values, jvp itself on traced ones). Being an `ivp_solution`
itself, it is differentiated by these same rules: so are second derivatives.

Forward mode through the pullback (a Hessian forward over reverse) is the second-order adjoint
(`second_adjoint`): the tangent v solved forward with y, then λ with its tangent μ backward,
dμ/dt = -(∂f/∂y)ᵀμ - (d(∂f/∂y)ᵀ along v, dθ)λ, taking the cotangents' tangents as jumps.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.integrate as _si

from ..dual import derived_frule
from ..forward import jvp
from ..context import primitive
from ..grad import grad, pullback
from ..registry import frule, rrule, whole
from ..scipy._implicit import distinct_leaves, flat_tangent, plain, split_flat, zeros_like_leaf
from ..scipy._ivp import IvpProblem, ivp_solution
from ..structures import Boxed
from ..tangents import NO_TANGENT, ZERO
from ._odeprograms import Dense, Program, backward, odeint_options


class _TangentCaptured:
    """The captured values of the tangent problem: the base problem's θ, then their tangents dθ.
    Bound to plain values (scipy's solve), its dynamics run one compiled program, traced on the
    first evaluation (`Program`); bound to traced ones (a second derivative), the eager jvp."""

    def __init__(self, base, n, m):
        self.base, self.n, self.m = base, n, m
        self.program = Program(self.products, key=(("tangent", n, m), self.forward))

    def bind(self, leaves):
        if _traced(*leaves):
            return _TangentDynamics(self.base, self.n, leaves[:self.m], leaves[self.m:]), ()
        return _CompiledTangent(self.program, tuple(leaves)), ()

    def products(self, t, z, *leaves):
        return _TangentDynamics(self.base, self.n, leaves[:self.m], leaves[self.m:])(t, z)

    def forward(self, t, z, *leaves):
        """What `products` differentiates: the program's key (`Program`)."""
        return self.base.rhs(leaves[:self.m])(t, z[:self.n])


class _CompiledTangent:
    """The tangent dynamics on plain values: the compiled program of `_TangentDynamics`."""

    def __init__(self, program, leaves):
        self.program, self.leaves = program, leaves

    def __call__(self, t, z):
        return self.program(t, z, *self.leaves)


class _TangentDynamics:
    """(y, v) -> (f, ∂f/∂y v + ∂f/∂θ dθ), by one jvp of f."""

    def __init__(self, base, n, theta, dtheta):
        self.base, self.n, self.theta, self.dtheta = base, n, theta, dtheta

    def __call__(self, t, z):
        n = self.n

        def f(y, *theta):
            return np.ravel(self.base.rhs(theta)(t, y))

        value, tangent = jvp(f, (z[:n], *distinct_leaves(self.theta)), (z[n:], *self.dtheta))
        return np.concatenate([value, flat_tangent(tangent, value)])


def _options_for(problem, n, copies):
    """The forward solve's options for a state of `copies` blocks of n: atol per component tiled."""
    options = {k: v for k, v in problem.options.items() if k != "vectorized"}
    if np.ndim(options.get("atol", 0.0)):
        options["atol"] = np.tile(np.broadcast_to(np.asarray(options["atol"], float), (n,)), copies)
    return options


def _tangent_solve(problem, times, y0, leaves, dy0, dleaves):
    """The tangent v (n, T) at the output times, as one `ivp_solution` of (y, v): traceable."""
    n = int(np.size(y0))
    tangent = IvpProblem(_TangentCaptured(problem, n, len(leaves)), problem.t_span, times, problem.method,
                         _options_for(problem, n, 2))
    tangent.where = problem.where
    start = np.concatenate([np.ravel(y0), flat_tangent(dy0, y0)])
    dleaves = tuple(zeros_like_leaf(v) if d is ZERO or d is NO_TANGENT else d for v, d in zip(leaves, dleaves))
    both = ivp_solution(tangent, start, *leaves, *dleaves)
    return both[n:]


class _Adjoint:
    """The backward dynamics of (λ, θ̄): (-(∂f/∂y)ᵀλ, -(∂f/∂θ)ᵀλ) at y(t) from the dense output.

    The vjp is the gradient program of λ·f (θ packed in one flat vector), traced once on the
    first evaluation and compiled to Python (`tapegrad.rules._odeprograms.Program`): each later
    evaluation runs the program alone."""

    def __init__(self, problem, dense, leaves, n):
        self.dense, self.n = Dense(dense), n
        self.theta = _packed(leaves)
        self.weighted = _weighted(problem, leaves)
        self.vjp_program = Program(self.products, key=(("adjoint",), self.weighted))

    def vjp(self, y, lam, t):
        """(∂f/∂y)ᵀλ and (∂f/∂θ)ᵀλ, one flat vector."""
        return self.vjp_program(y, lam, t, self.theta)

    def products(self, y, lam, t, theta):
        grads = grad(self.weighted, y, lam, t, theta, wrt=(0, 3))[1]
        return np.concatenate([flat_tangent(grads[1], y), flat_tangent(grads[4], theta)])

    def __call__(self, t, state):
        return -self.vjp_program(self.dense(t), state[:self.n], float(t), self.theta)

    def jacobian(self, t, state):
        """∂/∂(λ, θ̄) of the dynamics, for the implicit methods: -(∂f/∂y)ᵀ and -(∂f/∂θ)ᵀ in λ's
        columns, from n vjps with the unit vectors (exact, where scipy would take differences of
        an interpolant that is smooth only piecewise)."""
        n, y = self.n, self.dense(t)
        rows = np.stack([self.vjp(y, e, float(t)) for e in np.eye(n)])  # row i: (∂f_i/∂y, ∂f_i/∂θ)
        out = np.zeros((state.size, state.size))
        out[:, :n] = -rows.T
        return out


def _flat_rhs(problem, like):
    """f(y, t, θ) flat, θ one flat vector of the values `like` describes. A closure of
    non-differentiable values only (the problem, the leaves' shapes)."""
    shapes = tuple(np.shape(v) if isinstance(v, np.ndarray) else None for v in like)

    def rhs(y, t, theta):
        leaves, start = [], 0
        for shape in shapes:
            n = 1 if shape is None else int(np.prod(shape))
            leaves.append(theta[start] if shape is None else np.reshape(theta[start:start + n], shape))
            start += n
        return np.ravel(problem.rhs(leaves)(t, y))

    return rhs


def _weighted(problem, like):
    """λ·f(t, y, θ), θ one flat vector: its gradient in y and θ is the vector-Jacobian product
    the adjoint needs."""
    rhs = _flat_rhs(problem, like)

    def weighted(y, lam, t, theta):
        return np.sum(lam * rhs(y, t, theta))

    return weighted


class _Sensitivities:
    """The dynamics of (y, S), S = ∂y/∂(y₀, θ) an n × (n + p) matrix: (f, ∂f/∂y S + [0 | ∂f/∂θ]).
    f and its Jacobian rows (n vector-Jacobian products with the unit vectors) are one program,
    traced on the first evaluation and compiled."""

    def __init__(self, problem, leaves, n):
        self.n = n
        self.theta = _packed(leaves)
        self.m = n + self.theta.size
        self.rhs, self.weighted = _flat_rhs(problem, leaves), _weighted(problem, leaves)
        self.program = Program(self.value_and_jacobian, key=(("sensitivities",), self.forward))

    def forward(self, y, t, theta):
        """What `value_and_jacobian` differentiates: the program's key (`Program`)."""
        return self.rhs(y, t, theta)

    def value_and_jacobian(self, y, t, theta):
        rows = [grad(self.weighted, y, e, t, theta, wrt=(0, 3))[1] for e in np.eye(self.n)]
        return np.concatenate([self.rhs(y, t, theta)] + [flat_tangent(r[1], y) for r in rows] +
                              [flat_tangent(r[4], theta) for r in rows])

    def __call__(self, t, z):
        n, m = self.n, self.m
        out = self.program(z[:n], float(t), self.theta)
        jy, jtheta = np.reshape(out[n:n + n * n], (n, n)), np.reshape(out[n + n * n:], (n, m - n))
        ds = jy @ np.reshape(z[n:], (n, m))
        ds[:, n:] += jtheta
        return np.concatenate([out[:n], np.ravel(ds)])


def _packed(leaves):
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in leaves] or [np.zeros(0)])


def strategy(problem, n, p) -> str:
    """How the pullback of a plain cotangent is computed, for a state of n components and p
    parameters: ``"forward"`` (forward sensitivities: one solve of y and its n × (n + p)
    sensitivity matrix, f and n vector-Jacobian products per evaluation) for LSODA when
    n·(n + p) ≤ 4; ``"adjoint"`` otherwise (one vector-Jacobian product per evaluation, with
    the forward solve's dense output and a backward solve from each output time to the next,
    by `backward_method`).

    Measured (benchmarks/README.md, gradient ÷ one plain solve, the programs compiled by an
    earlier gradient): with an explicit Runge–Kutta method the adjoint is as cheap or cheaper
    even at n = p = 1 (a Runge–Kutta step restarts for free at an output time). LSODA's adjoint
    is solved by RK45 where the forward solve stayed non-stiff (`backward_method`): at n = 2,
    p = 4 (Lotka–Volterra) it takes 3.9–4.7× against the sensitivities' 5.1–5.3×, at n = 2,
    p = 1 4.1× against 5.2×, at n = p = 1 5.9× against 4.9× (the sensitivities' one program, f
    and one vjp, against the adjoint's backward solve of its own). On the stiff Robertson
    problem (n = p = 3) the adjoint wins with every stiff method (Radau 2.2–2.7× against 6.8×,
    BDF 2.1–2.8× against 5.7×, LSODA 3.9–4.7× against 12×), and for Radau and BDF the
    sensitivities' Newton iterations difference the Jacobian of the whole n(1 + n + p) system
    (an analytic block-diagonal one, without the second derivatives, was tried: Newton
    converged so slowly on Robertson that they took 16× and 78×)."""
    small = problem.method == "LSODA" and n * (n + p) <= 4 and np.ndim(problem.options.get("rtol", 1e-3)) == 0
    return "forward" if small else "adjoint"


def sensitivities(problem, times, y0, leaves, g):
    """(ȳ₀, θ̄ flat) by forward sensitivities: S = ∂y/∂(y₀, θ) integrated with y from S(t₀) = [I | 0],
    then Σₖ S(tₖ)ᵀ gₖ. Each column of S is held to the state's atol divided by its parameter's
    magnitude (CVODES' scaling), so a sensitivity to a large rate constant is not lost in it."""
    n = int(np.size(y0))
    leaves = tuple(plain(v) for v in leaves)
    dynamics = _Sensitivities(problem, leaves, n)
    m = dynamics.m
    options = {k: v for k, v in problem.options.items() if k not in ("vectorized", "jac", "jac_sparsity", "lband",
                                                                     "uband")}
    atol = np.broadcast_to(np.asarray(problem.options.get("atol", 1e-6), dtype=float), (n,))
    scale = np.concatenate([np.ones(n), np.where(dynamics.theta == 0, 1.0, np.abs(dynamics.theta))])
    options["atol"] = np.concatenate([atol, np.ravel(atol[:, None] / scale[None, :])])
    start = np.concatenate([np.ravel(plain(y0)).astype(float), np.ravel(np.eye(n, m))])
    if problem.method == "LSODA":
        ys, message = _odepack(dynamics, problem.t_span[0], start, times, options)
    else:
        res = _si.solve_ivp(dynamics, problem.t_span, start, method=problem.method, t_eval=times, **options)
        ys, message = res.y, None if res.success else res.message
    if message is not None:
        raise problem.fail(f"the forward sensitivities' solve failed ({message})",
                           "tighten rtol/atol of the forward solve, or pick a stiff method (Radau, BDF)")
    cot = np.einsum("imk,ik->m", np.reshape(ys[n:], (n, m, len(times))), g)
    return cot[:n], cot[n:]


def _odepack(fun, t0, start, times, options):
    """(the state at `times`, (size, T); None or the failure) by scipy's odeint: the same LSODA as
    solve_ivp's, stepped in Fortran to the output times where solve_ivp's LSODA returns to Python
    at every step (a third of a small solve's time). solve_ivp's options under odeint's names, and
    no cap on the steps (solve_ivp has none)."""
    grid = np.asarray(times, dtype=float)
    first = bool(len(grid)) and grid[0] == t0
    grid = grid if first else np.concatenate([[t0], grid])
    kwargs = odeint_options(options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _si.ODEintWarning)
        ys, info = _si.odeint(fun, start, grid, tfirst=True, full_output=True, mxstep=10 ** 8, **kwargs)
    ok = info["message"] == "Integration successful."
    return (ys if first else ys[1:]).T, None if ok else info["message"]


#: the methods that take a Jacobian of the dynamics
_IMPLICIT = ("Radau", "BDF", "LSODA")


def adjoint(problem, times, dense, y0, leaves, g):
    """(ȳ₀, θ̄ flat): λ integrated backward from the last output time, taking each output's jump."""
    n = int(np.size(y0))
    p = sum(int(np.size(v)) for v in leaves)
    leaves = tuple(plain(v) for v in leaves)
    dynamics = _Adjoint(problem, dense, leaves, n)
    state = _backward_solve(problem, dynamics, times, np.zeros(n + p), g)
    return state[:n], state[n:]


#: the method of the non-stiff backward solves
NONSTIFF_BACKWARD = "RK45"


def backward_method(problem, result=None):
    """The method of the adjoint's backward solve, from the forward's, its rtol and what its
    solve did (`result`, else the problem's last). The adjoint of a non-stiff problem is
    non-stiff, of a stiff one stiff; the method that integrates it best need not be the forward's
    (measured, benchmarks/README.md):

    - RK23 and RK45: RK45 (`NONSTIFF_BACKWARD`; after RK23 it takes half the time RK23 does, at
      rtol 1e-6 and 1e-10 alike); DOP853: RK45 above rtol 1e-8, DOP853 at tighter ones (where
      its order pays);
    - LSODA where the forward solve never switched to its stiff steps (no LU decomposition,
      ``njev == 0``): RK45, which restarts at each output time for free where LSODA restarts
      at first order;
    - the stiff methods (Radau, BDF, LSODA that went stiff): LSODA with the adjoint's exact
      Jacobian. Radau's and BDF's steps labour on the adjoint, whose dynamics read the forward
      solution's interpolant, smooth only piecewise (on Robertson's problem Radau took five
      times the forward's evaluations, and scipy's BDF stalls at tight tolerances); LSODA's
      variable-order steps, in Fortran, switch to Adams where the adjoint is not stiff.
    """
    method = problem.method
    if method in ("RK23", "RK45"):
        return NONSTIFF_BACKWARD
    if method == "DOP853":
        return "DOP853" if float(np.min(problem.options.get("rtol", 1e-3))) <= 1e-8 else NONSTIFF_BACKWARD
    if method in ("Radau", "BDF", "LSODA"):
        result = problem.result if result is None else result
        stayed_nonstiff = method == "LSODA" and result is not None and getattr(result, "njev", 1) == 0
        return NONSTIFF_BACKWARD if stayed_nonstiff else "LSODA"
    return method  # a solver class of the user's


def _backward_solve(problem, dynamics, times, state, jumps, result=None):
    """`backward` with the adjoint's method and options: the forward's method (BDF's is Radau),
    the Jacobian from `dynamics.jacobian` for the implicit ones, one absolute tolerance."""
    method = backward_method(problem, result)
    options = {k: v for k, v in problem.options.items() if k not in ("vectorized", "first_step", "atol", "jac",
                                                                     "jac_sparsity", "lband", "uband")}
    if method != problem.method:  # the options all methods take
        options = {k: v for k, v in options.items() if k in ("rtol", "max_step")}
    if "rtol" in options:  # (one for the adjoint's state, as atol)
        options["rtol"] = float(np.min(options["rtol"]))
    # λ and θ̄ have units of their own: the tightest of the user's absolute tolerances for all,
    # but no tighter than 1% of rtol (a tiny atol for a state near zero, Robertson's 1e-14, stalls
    # the adjoint's first step, whose θ̄ starts at zero)
    options["atol"] = max(float(np.min(problem.options.get("atol", 1e-6))), 1e-2 * problem.options.get("rtol", 1e-3))
    if method in _IMPLICIT:
        options["jac"] = dynamics.jacobian

    def fail(message):
        return problem.fail(f"the adjoint's backward solve failed ({message})",
                            "tighten rtol/atol of the forward solve, or use forward mode (jvp)")

    return backward(dynamics, times, problem.t_span[0], state, jumps, method, options, fail)


def _traced(*values) -> bool:
    return any(isinstance(v, Boxed) for v in values)


@primitive(traceable=False)
def ivp_cotangent(problem, dY, y0, *leaves):
    """(ȳ₀, θ̄) flat, the cotangent of `ivp_solution`'s inputs for the cotangent dY of its
    solution, on plain values: by the adjoint on the forward solve's dense output or by forward
    sensitivities (`strategy`). What the pullback records when its values are traced, so that a
    compiled gradient or a replayed tape runs this and not the tangent solves of second order."""
    times, dense = problem.dense_at(y0, leaves)
    n, p = int(np.size(y0)), sum(int(np.size(v)) for v in leaves)
    g = np.reshape(np.asarray(dY, dtype=float), (n, len(times)))
    if strategy(problem, n, p) == "forward":
        dy0, dtheta = sensitivities(problem, times, y0, leaves, g)
    else:
        dy0, dtheta = adjoint(problem, times, dense, y0, leaves, g)
    return np.concatenate([dy0, dtheta])


def _tangent_cotangent(problem, dY, y0, *leaves):
    """`ivp_cotangent` in traceable numpy: dY against the tangent solve of each input direction
    (n + p solves of (y, v)), which the rules differentiate again (second derivatives)."""
    n = int(np.size(y0))
    times = problem.dense_at(y0, leaves)[0]
    dY = np.reshape(dY, (n, len(times)))
    directions = [(e, [zeros_like_leaf(v) for v in leaves]) for e in np.eye(n)]
    for i, v in enumerate(leaves):
        for e in np.eye(int(np.size(v))):
            d = [zeros_like_leaf(u) for u in leaves]
            d[i] = np.reshape(e, np.shape(v)) if np.ndim(v) else float(e[0])
            directions.append((np.zeros(n), d))
    return np.stack([np.sum(dY * _tangent_solve(problem, times, y0, leaves, dy, dl)) for dy, dl in directions])


class _TangentCotangent:
    """`_tangent_cotangent` of one problem: an object, not a closure, so that tapegrad does not
    walk the problem (its times, its tolerances) for values to differentiate."""

    def __init__(self, problem):
        self.problem = problem

    def __call__(self, dY, y0, *leaves):
        return _tangent_cotangent(self.problem, dY, y0, *leaves)


@rrule(ivp_cotangent, formula=whole(lambda names, values, kwargs: [
    None, "the tangent solves' (∂y/∂·)ᵀ applied to {dy}, differentiated"] + [None] * (len(values) - 2)))
def ivp_cotangent_rrule(problem, dY, y0, *leaves):
    value = ivp_cotangent(problem, dY, y0, *leaves)

    def ivp_cotangent_pullback(dv):
        # the derivative of the adjoint: that of the same map in traceable form
        back = pullback(_TangentCotangent(problem), dY, y0, *leaves)[1]
        return (NO_TANGENT, NO_TANGENT, *back(dv)[1:])

    return value, ivp_cotangent_pullback


@rrule(ivp_solution, formula=whole(lambda names, values, kwargs: [
    None, "λ(t₀): the adjoint λ integrated back from the last output time, dλ/dt = -(∂f/∂y)ᵀ·λ, "
          "taking the jump {dy}ₖ at each output time"] + [
    "∫ (∂f/∂θ)ᵀ·λ dt from t₀ to the last output time (θ: the args and the values f captures)"] * (len(values) - 2)))
def ivp_solution_rrule(problem, y0, *leaves):
    Y = ivp_solution(problem, y0, *leaves)
    n = int(np.size(y0))

    def ivp_solution_pullback(dY):
        # one op, recorded as such when the values are traced (a compiled or replayed gradient)
        cot = ivp_cotangent(problem, dY, y0, *leaves)
        dy0, dtheta = cot[:n], cot[n:]
        dy0 = np.reshape(dy0, np.shape(y0)) if np.ndim(y0) else dy0[0]
        return (NO_TANGENT, NO_TANGENT, dy0, *split_flat(dtheta, leaves))

    return Y, ivp_solution_pullback


@frule(ivp_cotangent)
def ivp_cotangent_frule(dargs, problem, dY, y0, *leaves):
    # the tangent of Σₖ S(tₖ)ᵀgₖ: the same map of the tangent dg, plus the Hessian of Σₖ gₖ·y(tₖ)
    # along (dy₀, dθ), by the second-order adjoint (`second_adjoint`)
    if _traced(dY, y0, *leaves, *dargs):  # inside a trace: the rule derived from the reverse one
        return derived_frule(ivp_cotangent, (problem, dY, y0, *leaves), dargs, {})
    value = ivp_cotangent(problem, dY, y0, *leaves)
    ddY, dy0, dleaves = dargs[1], dargs[2], dargs[3:]
    if all(d is ZERO or d is NO_TANGENT for d in (dy0, *dleaves)):
        return value, ZERO if ddY is ZERO or ddY is NO_TANGENT else ivp_cotangent(problem, ddY, y0, *leaves)
    times = problem.dense_at(y0, leaves)[0]
    n = int(np.size(y0))
    g = np.reshape(np.asarray(dY, dtype=float), (n, len(times)))
    dg = np.zeros_like(g) if ddY is ZERO or ddY is NO_TANGENT else np.reshape(np.asarray(ddY, dtype=float), g.shape)
    return value, second_adjoint(problem, times, y0, leaves, dy0, dleaves, g, dg)[1]


class _SecondAdjoint:
    """The backward dynamics of (λ, μ, θ̄, dθ̄), μ and dθ̄ the tangents of λ and θ̄ as y, θ move
    along (v, dθ): -(Jᵀλ, Jᵀμ + dJᵀλ, J_θᵀλ, J_θᵀμ + dJ_θᵀλ) (J = ∂f/∂y, J_θ = ∂f/∂θ, dJ their
    derivatives along (v, dθ)), y and v read from the tangent solve's dense output. One program:
    the jvp of the adjoint's vector-Jacobian product, traced on the first evaluation and compiled."""

    def __init__(self, problem, dense, leaves, dleaves, n):
        self.dense, self.n = Dense(dense), n
        self.theta, self.dtheta = _packed(leaves), _packed(dleaves)
        self.weighted = _weighted(problem, leaves)
        self.program = Program(self.products, key=(("second adjoint",), self.forward))

    def forward(self, y, v, lam, mu, t, theta, dtheta):
        """What `products` differentiates: the program's key (`Program`)."""
        return self.weighted(y, lam, t, theta)

    def products(self, y, v, lam, mu, t, theta, dtheta):
        def vjp(y, lam, theta):
            grads = grad(self.weighted, y, lam, t, theta, wrt=(0, 3))[1]
            return np.concatenate([flat_tangent(grads[1], y), flat_tangent(grads[4], theta)])

        value, tangent = jvp(vjp, (y, lam, theta), (v, mu, dtheta))
        n = self.n
        return np.concatenate([value[:n], tangent[:n], value[n:], tangent[n:]])

    def __call__(self, t, state):
        n, yv = self.n, self.dense(t)
        return -self.program(yv[:n], yv[n:], state[:n], state[n:2 * n], float(t), self.theta, self.dtheta)

    def jacobian(self, t, state):
        """The dynamics are linear in (λ, μ) and free of (θ̄, dθ̄): their columns are the dynamics
        of the unit vectors (2n evaluations, exact)."""
        out = np.zeros((state.size, state.size))
        for j in range(2 * self.n):
            e = np.zeros(state.size)
            e[j] = 1.0
            out[:, j] = self(t, e)
        return out


def second_adjoint(problem, times, y0, leaves, dy0, dleaves, g, dg):
    """((ȳ₀, θ̄) flat, their tangent) along (dy₀, dθ) and the cotangents' tangent dg: the tangent v
    of y solved forward with y (dense output kept), then (λ, μ, θ̄, dθ̄) backward, λ taking the
    jumps g and μ the jumps dg (`_SecondAdjoint`). Exact (the derivative of the adjoint, not
    differences of it) for one forward and one backward solve of twice the sizes."""
    n, p = int(np.size(y0)), sum(int(np.size(v)) for v in leaves)
    leaves = tuple(plain(v) for v in leaves)
    dleaves = tuple(zeros_like_leaf(v) if d is ZERO or d is NO_TANGENT else plain(d) for v, d in zip(leaves, dleaves))
    tangent = IvpProblem(_TangentCaptured(problem, n, len(leaves)), problem.t_span, times, problem.method,
                         _options_for(problem, n, 2))
    tangent.where = problem.where
    res = tangent.solve(np.concatenate([np.ravel(plain(y0)), flat_tangent(dy0, y0)]), (*leaves, *dleaves))
    dynamics = _SecondAdjoint(problem, res.sol, leaves, dleaves, n)
    state = _backward_solve(problem, dynamics, times, np.zeros(2 * (n + p)), np.concatenate([g, dg]), res)
    return (np.concatenate([state[:n], state[2 * n:2 * n + p]]),
            np.concatenate([state[n:2 * n], state[2 * n + p:]]))


@frule(ivp_solution)
def ivp_solution_frule(dargs, problem, y0, *leaves):
    Y = ivp_solution(problem, y0, *leaves)
    return Y, _tangent_solve(problem, problem.times, y0, leaves, dargs[1], dargs[2:])

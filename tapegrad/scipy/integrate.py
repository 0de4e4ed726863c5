"""scipy.integrate.odeint that traced values can go through, with gradients by the adjoint method.

scipy converts its inputs with ``np.asarray``, which a traced value refuses: inside a function
being differentiated call `odeint` from here instead (same name and arguments). The gradient
with respect to the initial state `y0`, the time points `t` and the parameters passed in `args`
is computed by integrating the adjoint equations backwards in time (the rule is in
``tapegrad.rules.integrate``); `func` itself is differentiated by tapegrad along the way.

Parameters that should receive gradients go in `args`: `func` is called by scipy on plain
values, so a traced value it captures in a closure cannot be followed (tapegrad raises).
`args` may nest (a list of ``(W, b)`` pairs, dicts, dataclasses): every float leaf gets its
gradient, in the structure it was given in.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy.integrate import odeint
>>> def decay(y, t, k):
...     return -k * y
>>> def final(y0, k):
...     return odeint(decay, y0, np.array([0.0, 1.0]), args=(k,))[-1, 0]
>>> dy0, dk = tapegrad.gradient(final, np.array([2.0]), 0.5)
>>> round(float(dy0[0]), 6), round(dk, 6)  # y(1) = y0 e^(-k): e^(-k), -y0 e^(-k)
(0.606531, -1.213061)
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.integrate as _si

from ..solvernoise import note_adaptive_solver
from ..context import primitive
from ..errors import user_location
from ..hints import register_replacement
from ..pytree import flatten, unflatten
from ..structures import Boxed, any_nested
from ._implicit import Captured, SolverError, plain
from ._ivp import IvpProblem, ivp_solution
from ._quad import quad, quad_vec

__all__ = ["odeint", "solve_ivp", "quad", "quad_vec", "SolverError"]

_DEFAULT_TOL = 1.49012e-8  # scipy's odeint's rtol and atol when not given


@primitive(traceable=False)
def odeint_op(func, y0, t, args, **kwargs):
    """What `odeint` records: scipy's odeint with `args` by position, so that it gets a gradient.
    A failed integration (odepack's "Excess work done", an illegal input) raises `SolverError`
    rather than returning the values odepack reached with a warning."""
    if kwargs.get("full_output"):
        return _si.odeint(func, y0, t, args=tuple(args), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _si.ODEintWarning)
        y, info = _si.odeint(func, y0, t, args=tuple(args), full_output=True, **kwargs)
    if info["message"] != "Integration successful.":
        raise SolverError(
            f"odeint at {user_location()} failed: {info['message']}; "
            f"raise mxstep, loosen rtol/atol, or shorten the time span: a solution that was not computed has "
            f"no derivative")
    return y


# the tape, errors and the rule listing name it as the function the user calls
odeint_op.__name__ = odeint_op.__qualname__ = "odeint"


class _NestedArgs:
    """`func` called with odeint's flat parameters put back into the structure of the user's
    `args` (a list of ``(W, b)`` pairs): the rule sees one flat tuple of leaves, and every float
    leaf gets its gradient. An object rather than a closure, as the rule's dynamics are."""

    def __init__(self, func, spec):
        self.func, self.spec = func, spec
        self.__name__ = getattr(func, "__name__", type(func).__name__)  # the tape shows the user's function

    def __call__(self, a, b, *leaves):  # (y, t) or, with tfirst, (t, y): passed along as they come
        return self.func(a, b, *unflatten(self.spec, leaves))

    def __repr__(self):
        return f"{getattr(self.func, '__name__', 'func')} with args {self.spec!r}"


def _flat_args(func, args):
    """`func` and `args` as odeint_op takes them: `args` flat (numbers and arrays, by position),
    `func` taking them so. Nested args are flattened by tapegrad.pytree, as arguments are."""
    spec, leaves = flatten(args, argument=True)
    if all(child.kind == "leaf" for child in spec.children):
        return func, args
    # the spec holds the values it was made of, traced ones too: made again of placeholders
    # (distinct 0-d arrays, so that a shared leaf stays one), it holds the structure alone
    placeholders = [np.zeros(()) for _ in leaves]
    spec = flatten(unflatten(spec, placeholders), argument=True)[0]
    return _NestedArgs(func, spec), tuple(leaves)


def odeint(func, y0, t, args=(), **kwargs):
    """`scipy.integrate.odeint` that traced values can go through: y0, t and the entries of `args`
    are differentiable (by the adjoint method), the other keyword arguments are scipy's.

    Derivatives of every order are supported, in every combination of modes (`grad` of `grad`,
    `hessian`, `jvp` of `grad`, `grad` of `jvp`, `jvp` of `jvp`): the rules integrate the
    adjoint (reverse mode) or the tangent (forward mode) with this same `odeint`, so a second
    derivative differentiates those integrations in turn. Each order adds an integration of a
    state about twice as long, and the derivatives are as accurate as the solver: set `rtol`
    and `atol` tighter than the accuracy you need. `func` must be written in numpy that
    tapegrad can trace, with the parameters to differentiate in `args` (not captured), and
    `full_output=True` has no derivative.

    Parameters
    ----------
    func : callable
        ``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst=True``), the right-hand side.
    y0 : float or ndarray
        The initial state, at ``t[0]``.
    t : ndarray
        The time points, monotonic, at which the state is returned.
    args : tuple
        Further arguments of `func`; float entries and float arrays are differentiable, ints
        are passed along unchanged. Entries may nest (tuples, lists, dicts, dataclasses: a
        neural ODE's list of ``(W, b)`` pairs): each float leaf is differentiable.
    **kwargs
        scipy's keyword arguments (`rtol`, `atol`, `tfirst`, `hmax`, ...).

    Returns
    -------
    ndarray
        The state at each time point, shape ``(len(t), y0.size)``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.integrate import odeint
    >>> odeint(lambda y, t: -y, np.array([1.0]), np.array([0.0, np.log(2.0)]))[:, 0].round(6)
    array([1. , 0.5])

    The second derivative of y(1) = y₀ e^(-k) in k is y₀ e^(-k):

    >>> def final(k):
    ...     return odeint(lambda y, t, k: -k * y, np.array([2.0]), np.array([0.0, 1.0]), (k,),
    ...                   rtol=1e-10, atol=1e-10)[-1, 0]
    >>> round(float(tapegrad.hessian(final, 0.5)), 6), round(2 * float(np.exp(-0.5)), 6)
    (1.213061, 1.213061)
    """
    # check_grad, told, says that central differences of an adaptive solver are the noisy side
    note_adaptive_solver("tapegrad.scipy.integrate.odeint",
                         max(_DEFAULT_TOL if kwargs.get(k) is None else np.max(kwargs[k]) for k in ("rtol", "atol")))
    func, args = _flat_args(func, tuple(args))
    return odeint_op(func, y0, t, args, **kwargs)


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None, vectorized=False,
              args=None, **options):
    """`scipy.integrate.solve_ivp` whose solution is differentiable in `y0` and in what `fun`
    depends on (its `args`, the values it captures in a closure, a bound object or a partial).

    Every method (RK45, RK23, DOP853, Radau, BDF, LSODA), `t_eval`, `args` and scipy's options
    (`rtol`, `atol` per component too, `max_step`, ...). Reverse mode is the adjoint method: λ
    integrated backward by scipy at the same tolerances (by RK45 after a non-stiff solve, by
    LSODA with the adjoint's exact Jacobian after a stiff one: `tapegrad.rules.ivp.backward_method`),
    the forward solution read from its dense output (interpolated, not integrated backward), the
    adjoint's right-hand side one program compiled per gradient; for a small LSODA problem
    (n·(n+p) ≤ 4 for n states and p parameters) forward sensitivities are cheaper and are taken
    instead. Forward mode integrates the tangent alongside the state (forward sensitivities).
    Second derivatives compose: forward sensitivities of the sensitivities, and forward over
    reverse by the second-order adjoint. The derivatives are as accurate as the solves: set
    `rtol` and `atol` tighter than the accuracy you need. Returns scipy's OdeResult, its `y`
    traced; the output times `t` have no derivative (traced `t_span` or `t_eval` are refused:
    `grad` and `pullback` trace the values a function captures, `gradient` does not), nor do
    `events` or `dense_output`, which are refused when the solution is differentiated. A solve
    that fails raises `SolverError`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.integrate import solve_ivp
    >>> def final(k):  # y' = -k y, y(0) = 2: y(1) = 2 e^(-k)
    ...     sol = solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([2.0]), rtol=1e-10, atol=1e-12)
    ...     return sol.y[0, -1]
    >>> round(tapegrad.gradient(final, 0.5)[0], 8), round(-2 * float(np.exp(-0.5)), 8)
    (-1.21306132, -1.21306132)
    """
    args = () if args is None else tuple(args) if isinstance(args, (tuple, list)) else (args,)
    captured = Captured((fun, args))
    if not captured.leaves and not any_nested([y0, t_span, t_eval], lambda v: isinstance(v, Boxed)):
        return _si.solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, dense_output=dense_output,
                             events=events, vectorized=vectorized, args=args or None, **options)
    refused = ("t_span or t_eval holds a traced value: the output times have no derivative here; differentiate "
               "with respect to a parameter of fun that scales time instead (times your function captures are "
               "traced by grad and pullback, which differentiate captured values too: use tapegrad.gradient, or "
               "wrt= naming the arguments)" if any_nested(
                   [t_span, t_eval], lambda v: isinstance(v, Boxed)) else
               "dense_output=True has no derivative (the interpolant is a plain object); list the times in t_eval"
               if dense_output else
               "events have no derivative here (the event times would need one); integrate to a fixed time, or "
               "find the event with tapegrad.scipy.optimize.brentq on the solution" if events is not None else None)
    if refused:
        raise SolverError(f"solve_ivp at {user_location()}: {refused}")
    note_adaptive_solver("tapegrad.scipy.integrate.solve_ivp",
                         max(options.get("rtol", 1e-3), float(np.max(options.get("atol", 1e-6)))))
    if isinstance(y0, (list, tuple)):
        y0 = np.stack(y0)
    problem = IvpProblem(captured, tuple(float(plain(t)) for t in t_span),
                         None if t_eval is None else np.asarray(t_eval, dtype=float), method,
                         dict(options, vectorized=vectorized) if vectorized else dict(options))
    y = ivp_solution(problem, y0, *captured.take())
    res = problem.result
    res.y, res.sol = y, None
    return res


def register_solver_advice(fn, advice):
    """Name `advice`, what to use instead, in the error a traced value meets in scipy's `fn`: under
    its public name (scipy.integrate.solve_ivp) and under the name the error's walk of the stack
    gives it, from its module's public parts (scipy.integrate._ivp.ivp: scipy.integrate.ivp.solve_ivp)."""
    register_replacement(f"{'.'.join(fn.__module__.split('.')[:2])}.{fn.__name__}", advice)
    register_replacement(".".join(p for p in fn.__module__.split(".") if not p.startswith("_")) + f".{fn.__name__}",
                         advice)


register_solver_advice(_si.odeint, "tapegrad.scipy.integrate.odeint")
register_solver_advice(_si.solve_ivp, (
    "tapegrad.scipy.integrate.solve_ivp (same arguments), differentiated by the adjoint method and forward "
    "sensitivities"))
register_solver_advice(_si.quad, (
    "tapegrad.scipy.integrate.quad (same arguments; one quad per dimension, nested, for dblquad, tplquad and "
    "nquad), differentiated under the integral sign and at the limits"))
register_solver_advice(_si.quad_vec, (
    "tapegrad.scipy.integrate.quad_vec (same arguments), differentiated under the integral sign and at the limits"))
for _nquad in (_si.dblquad, _si.tplquad, _si.nquad):
    register_solver_advice(_nquad, (
        "tapegrad.scipy.integrate.quad nested, one per dimension (quad(lambda x: quad(lambda y: f(y, x), c, d)[0], "
        "a, b)), which tapegrad differentiates under the integral sign at every level"))
del _nquad

"""The op `tapegrad.scipy.integrate.quad` and `quad_vec` record: an integral computed by scipy on
plain values, differentiated under the integral sign.

``quad_value(problem, a, b, *leaves)`` is ∫ₐᵇ f(t, θ) dt, θ the traced values f captures or its
`args` hold (`tapegrad.scipy._implicit.Captured`), computed by scipy's adaptive `quad` (a scalar
integrand) or `quad_vec` (an array-valued one). Its rules (``tapegrad.rules.quad``) never
differentiate scipy's subdivision: ∂/∂θ ∫f = ∫∂f/∂θ, and by Leibniz d/db = f(b), d/da = -f(a).
The integral of ∂f/∂θ is itself a `quad_value`, of a new `QuadProblem` whose integrand is a
vector-Jacobian product (reverse mode, one `quad_vec` of the flat parameters' cotangent) or a
Jacobian-vector product (forward mode) of f: a second derivative differentiates that integral
under the integral sign in turn.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.integrate as _si

from ..solvernoise import note_adaptive_solver
from ..context import primitive
from ..errors import user_location
from ..structures import Boxed
from ._implicit import Captured, SolverError, plain

__all__ = ["QuadProblem", "quad_value", "quad", "quad_vec"]

#: scipy's quad's tolerances, given to the derivative integrals too when the user gives none
_QUAD_TOL = 1.49e-8
#: a derivative integral whose rounding errors stop it short of its tolerance is kept if this
#: accurate relative to ∫|f|
_ROUNDOFF = 1e-10
#: quad's options that change what is integrated, not how: they have no derivative here
_REFUSED = {"weight": "a weight function (weight=, wvar=)", "wvar": "a weight function (weight=, wvar=)",
            "wopts": "a weight function's moments (wopts=)", "complex_func": "complex_func=True"}

NOT_CONVERGED = ("raise limit, loosen epsabs/epsrel, or split the range at the integrand's kinks and "
                  "singularities with points=[...]: an integral that was not computed has no derivative")
_ROUNDED = ("rounding errors stop it short of the tolerance asked for: loosen epsabs/epsrel (an integral near "
            "zero cannot meet a tight relative tolerance; give an epsabs)")
_NOT_DIFFERENTIABLE = ("the derivative of the integrand is not integrable there, so the integral cannot be "
                       "differentiated under the integral sign (a singularity or kink of f that moves with the "
                       "parameters: change variables so that it sits at a fixed point, such as a limit), or it "
                       "needs a looser epsabs/epsrel or a higher limit")


class QuadProblem:
    """One integral: the integrand (``integrand.at(leaves)`` is t ↦ f(t) with the captured values
    bound to `leaves`, in traceable numpy), whether its value is an array (`vector`: scipy's
    quad_vec, else quad) and scipy's `options` for that function.

    `solve` keeps scipy's error estimate (`abserr`) and its full output (`info`) of the last
    solve; `name` and `where` (the user's line) name the integral in errors. A derivative
    integral is a `QuadProblem` too, made by `derived` from its base (same limits, options
    and line), so that its failure names the user's call."""

    def __init__(self, integrand, vector, options, name="quad", where=None):
        self.integrand, self.vector, self.options, self.name = integrand, vector, options, name
        self.where = user_location() if where is None else where
        self.abserr = self.info = None
        self.label, self.fix = name, NOT_CONVERGED

    def derived(self, integrand, vector, label, what):
        """The problem of a derivative integral of this one, on the same range with the same
        tolerances (quad's epsabs, epsrel and points carried over to quad_vec). `label` names it
        on a tape (``<quad vjp problem at model.py:12>``), `what` in errors."""
        options = self.options if vector == self.vector else {
            k: v for k, v in self.options.items() if k in ("epsabs", "epsrel", "points")}
        base = self.label.split(" ")[0]
        derived = QuadProblem(integrand, vector, options, f"{base} ({what})", self.where)
        derived.label, derived.fix = f"{base} {label}", _NOT_DIFFERENTIABLE
        return derived

    def values(self, leaves):
        """t ↦ f(t) on the plain values of `leaves`: what scipy integrates."""
        return self.integrand.at([plain(v) for v in leaves])

    def solve(self, a, b, leaves):
        """∫ₐᵇ f on plain values; a failed integral raises `SolverError`."""
        f, a, b = self.values(leaves), float(plain(a)), float(plain(b))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _si.IntegrationWarning)
            if not self.vector:
                out = _si.quad(f, a, b, full_output=1, **self.options)
                y, self.abserr, self.info = out[:3]
                failed = len(out) > 3 and out[3] or None
                roundoff = failed is not None and "roundoff" in failed
            else:
                y, self.abserr, self.info = _si.quad_vec(f, a, b, full_output=True, **self.options)
                failed = None if self.info.success else self.info.message
                roundoff = self.info.status == 2
            if roundoff and self.fix is _NOT_DIFFERENTIABLE and self._rounded(f, a, b, y):
                failed = None
        if failed is None and not np.all(np.isfinite(y)):
            failed = f"the integral is {y}"
        if failed is not None:
            raise self.fail(f"scipy's {'quad_vec' if self.vector else 'quad'} did not converge "
                            f"({' '.join(str(failed).split())})", _ROUNDED if roundoff else self.fix)
        return np.array(y, dtype=float) if np.ndim(y) else float(y)

    def _rounded(self, f, a, b, y) -> bool:
        """A derivative integral that rounding errors stopped short of the user's tolerance is as
        good as floating point allows when its error is small beside ∫|f| (computed only then,
        roughly): the tolerance was tighter than a derivative near zero can be computed to."""
        try:
            magnitude = _si.quad_vec(lambda t: np.abs(np.ravel(f(t))), a, b, epsrel=1e-3)[0]
        except Exception:  # (no scale to judge by: the failure stands)
            return False
        return float(np.max(self.abserr)) <= _ROUNDOFF * max(float(np.max(magnitude)), float(np.max(np.abs(y))))

    def fail(self, what, fix):
        return SolverError(f"{self.name} at {self.where}: {what}; {fix}")

    def __repr__(self):
        return f"<{self.label} problem at {self.where}>"


@primitive(traceable=False)
def quad_value(problem, a, b, *leaves):
    """∫ₐᵇ f(t, leaves) dt, by scipy's quad or quad_vec on plain values (see the module docstring)."""
    return problem.solve(a, b, leaves)


class _Integrand:
    """The user's integrand: f(t, *args) with the captured values bound to `leaves` (once per
    solve, not per point)."""

    def __init__(self, captured):
        self.captured = captured

    def at(self, leaves, compiled=True):  # (the user's own function: nothing to compile)
        func, args = self.captured.bind(leaves)
        return lambda t: func(t, *args)


def _traced(*values) -> bool:
    return any(isinstance(v, Boxed) for v in values)


def _problem(name, func, a, b, args, options, vector):
    """The `QuadProblem` of a call whose integral is traced, or None when nothing is traced."""
    args = args if isinstance(args, tuple) else (args,)
    captured = Captured((func, args))
    if not captured.leaves and not _traced(a, b):
        return None, captured
    refused = sorted({_REFUSED[k] for k, v in options.items() if k in _REFUSED and v not in (None, False)})
    if refused:
        raise SolverError(
            f"{name} at {user_location()}: {' and '.join(refused)} has no derivative here; write the weight "
            f"into the integrand (quad(lambda t: f(t) * np.cos(w * t), a, b) for weight='cos', wvar=w), which "
            f"tapegrad differentiates under the integral sign")
    if "points" in options and options["points"] is not None:
        options = dict(options, points=[float(plain(p)) for p in options["points"]])
    note_adaptive_solver(f"tapegrad.scipy.integrate.{name}",
                         max(options.get("epsrel", _QUAD_TOL), options.get("epsabs", _QUAD_TOL if name == "quad" else 0.0)))
    return QuadProblem(_Integrand(captured), vector, options, name), captured


def quad(func, a, b, args=(), full_output=0, **options):
    """`scipy.integrate.quad` whose integral is differentiable in its limits and in what `func`
    depends on (its `args`, the values it captures in a closure, a bound object or a partial).

    The integral is scipy's (QUADPACK's adaptive quadrature, infinite limits and `points`
    included), never differentiated through its subdivision: the derivative in a parameter θ is
    the integral of ∂f/∂θ (differentiation under the integral sign, computed by scipy's
    `quad_vec` of the vector-Jacobian product of `func`, or by `quad` for one number), and in
    the limits it is Leibniz's, ``d/db = f(b)``, ``d/da = -f(a)`` (zero at an infinite limit).
    Both modes and every order compose: the derivative integral is recorded as an integral in
    turn. An integral that scipy does not compute to its tolerance (its IntegrationWarning), or
    a derivative integral that fails, raises `SolverError`. `weight=` has no derivative (write
    the weight into the integrand). Returns ``(y, abserr)`` as scipy does, `y` traced;
    ``(y, abserr, infodict)`` with `full_output`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.integrate import quad
    >>> def area(a, b):  # ∫₀ᵇ sin(a t) dt = (1 - cos(ab)) / a
    ...     return quad(lambda t: np.sin(a * t), 0.0, b)[0]
    >>> da, db = tapegrad.gradient(area, 2.0, 1.0)
    >>> round(da, 12), round(float(np.sin(2.0) / 2.0 - (1 - np.cos(2.0)) / 4.0), 12)  # b sin(ab)/a - (1 - cos(ab))/a²
    (0.100612004276, 0.100612004276)
    >>> round(db, 12), round(float(np.sin(2.0)), 12)  # d/db = f(b)
    (0.909297426826, 0.909297426826)

    An infinite range: the Gaussian ∫ exp(-θt²) dt = √(π/θ), whose derivative is -√π θ^(-3/2) / 2:

    >>> gauss = lambda theta: quad(lambda t: np.exp(-theta * t ** 2), -np.inf, np.inf)[0]
    >>> round(tapegrad.gradient(gauss, 2.0)[0], 10), round(-np.sqrt(np.pi) / 2 * 2.0 ** -1.5, 10).item()
    (-0.3133285343, -0.3133285343)
    """
    problem, captured = _problem("quad", func, a, b, args, dict(options), vector=False)
    if problem is None:
        return _si.quad(func, a, b, args=captured.objs[1], full_output=full_output, **options)
    problem.options = dict({"epsabs": _QUAD_TOL, "epsrel": _QUAD_TOL}, **problem.options)
    y = quad_value(problem, a, b, *captured.take())
    return (y, problem.abserr, problem.info) if full_output else (y, problem.abserr)


def quad_vec(f, a, b, epsabs=1e-200, epsrel=1e-8, *, full_output=False, args=(), **options):
    """`scipy.integrate.quad_vec` of an array-valued integrand, differentiable as `quad` is: in
    the limits and in what `f` depends on (its `args`, the values it captures).

    Returns ``(y, err)`` as scipy does, `y` traced; ``(y, err, info)`` with `full_output`. The
    derivative integrals are `quad_vec`'s too, with the same tolerances and options (`norm`,
    `points`, `limit`, ...); one that does not converge raises `SolverError`, as does the
    integral itself.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.integrate import quad_vec
    >>> def moments(s):  # ∫₀¹ (t, t², t³) e^(-st) dt; d/ds is -∫ (t², t³, t⁴) e^(-st) dt
    ...     return quad_vec(lambda t: t ** np.arange(1.0, 4.0) * np.exp(-s * t), 0.0, 1.0)[0]
    >>> J = tapegrad.jacobian(moments, 0.5)
    >>> expected = -quad_vec(lambda t: t ** np.arange(2.0, 5.0) * np.exp(-0.5 * t), 0.0, 1.0)[0]
    >>> bool(np.allclose(J, expected, rtol=1e-10))
    True
    """
    options = dict(options, epsabs=epsabs, epsrel=epsrel)
    problem, captured = _problem("quad_vec", f, a, b, args, options, vector=True)
    if problem is None:
        return _si.quad_vec(f, a, b, full_output=full_output, args=captured.objs[1], **options)
    y = quad_value(problem, a, b, *captured.take())
    return (y, problem.abserr, problem.info) if full_output else (y, problem.abserr)

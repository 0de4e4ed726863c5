"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg``, ``tapegrad.scipy.special`` and ``tapegrad.scipy.signal`` have
scipy's names and signatures; on plain values each calls scipy, on traced or dual values it
is recorded as one primitive. ``tapegrad.scipy.stats`` holds scipy.stats' distributions
written with differentiable numpy and scipy.special calls (and scipy's own other methods),
and ``tapegrad.scipy.integrate`` odeint with gradients by the adjoint method.

scipy.optimize's solvers are not differentiated yet: given a traced value (a parameter the
function they solve captures), they raise an error naming the call, the line and the way to
differentiate a root or a minimum, by the implicit function theorem in a rule of your own.
"""
import scipy.optimize as _so

from . import integrate, linalg, signal, special, stats
from .integrate import register_solver_advice

__all__ = ["integrate", "linalg", "signal", "special", "stats"]

# --- scipy.optimize: not differentiated; the error says how to differentiate a root or a minimum ---

_ROOT = ("the implicit function theorem (scipy's root finders are not differentiated, and tapegrad has "
         "none of its own yet): find the root on plain values in a function marked "
         "@tapegrad.primitive(traceable=False) and give it a rule (@tapegrad.rrule) with "
         "dx/dθ = {} at the root of f(x, θ) = 0 (the guide's page \"What tapegrad refuses\" shows one)")
_MINIMUM = ("the implicit function theorem on ∇ₓf(x, θ) = 0 (scipy's minimizers are not differentiated, "
            "and tapegrad has none of its own yet): minimize on plain values in a function marked "
            "@tapegrad.primitive(traceable=False) and give it a rule (@tapegrad.rrule) with "
            "dx/dθ = -(∇ₓ²f)⁻¹ ∂(∇ₓf)/∂θ at the minimum; the minimum's value f(x(θ), θ) has derivative "
            "∂f/∂θ there")


for _fn in (_so.brentq, _so.brenth, _so.ridder, _so.bisect, _so.toms748, _so.newton, _so.root_scalar):
    register_solver_advice(_fn, _ROOT.format("-(∂f/∂θ)/(∂f/∂x)"))
for _fn in (_so.root, _so.fsolve):
    register_solver_advice(_fn, _ROOT.format("-(∂f/∂x)⁻¹ ∂f/∂θ (a solve with the Jacobian)"))
for _fn in (_so.minimize, _so.minimize_scalar, _so.least_squares, _so.curve_fit):
    register_solver_advice(_fn, _MINIMUM)
del _fn

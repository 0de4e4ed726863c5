"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg``, ``tapegrad.scipy.special`` and ``tapegrad.scipy.signal`` have
scipy's names and signatures; on plain values each calls scipy, on traced or dual values it
is recorded as one primitive. ``tapegrad.scipy.stats`` holds scipy.stats' distributions
written with differentiable numpy and scipy.special calls (and scipy's own other methods),
and ``tapegrad.scipy.integrate`` odeint with gradients by the adjoint method.

``tapegrad.scipy.optimize`` has scipy.optimize's root finders (more solvers come by family), their
solutions differentiated by the implicit function theorem; scipy's own, given a traced value,
raise an error that names the replacement.
"""
import scipy.optimize as _so

from . import integrate, linalg, optimize, signal, special, stats
from .integrate import register_solver_advice

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]

# --- scipy.optimize: scipy's own solvers cannot see traced values; the error names tapegrad's ---

_MINIMUM = ("the implicit function theorem on ∇ₓf(x, θ) = 0 (scipy's minimizers are not differentiated, "
            "and tapegrad has none of its own yet): minimize on plain values in a function marked "
            "@tapegrad.primitive(traceable=False) and give it a rule (@tapegrad.rrule) with "
            "dx/dθ = -(∇ₓ²f)⁻¹ ∂(∇ₓf)/∂θ at the minimum; the minimum's value f(x(θ), θ) has derivative "
            "∂f/∂θ there")

for _name in optimize.__all__:
    if hasattr(_so, _name) and callable(getattr(_so, _name)):
        register_solver_advice(getattr(_so, _name), (
            f"tapegrad.scipy.optimize.{_name} (tapegrad.scipy.optimize has scipy.optimize's solvers under their "
            f"names, with the same arguments, and differentiates their solutions by the implicit function theorem)"))
for _fn in (_so.minimize, _so.minimize_scalar, _so.least_squares, _so.curve_fit):
    if _fn.__name__ not in optimize.__all__:
        register_solver_advice(_fn, _MINIMUM)
del _fn, _name

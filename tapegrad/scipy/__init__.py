"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg``, ``tapegrad.scipy.special`` and ``tapegrad.scipy.signal`` have
scipy's names and signatures; on plain values each calls scipy, on traced or dual values it
is recorded as one primitive. ``tapegrad.scipy.stats`` holds scipy.stats' distributions
written with differentiable numpy and scipy.special calls (and scipy's own other methods),
and ``tapegrad.scipy.integrate`` odeint with gradients by the adjoint method.

scipy.optimize's solvers are not differentiated yet: given a traced value (a parameter the
function they solve captures), they raise an error naming the call, the line and the way to
differentiate a root or a minimum, by the implicit function theorem in a rule of your own.

Each submodule is imported when first used (``tapegrad.scipy.stats`` imports scipy.stats, which
takes longer than all of tapegrad): ``import tapegrad`` imports no part of scipy.
"""
import importlib
import sys

from ..onimport import when_imported

__all__ = ["integrate", "linalg", "signal", "special", "stats"]


def __getattr__(name):
    """``tapegrad.scipy.stats`` and the others, imported on first use."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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




def _advise_on_optimize():
    """Name the way to differentiate a root or a minimum in the error scipy.optimize's solvers
    give a traced value: once the program imports scipy.optimize (it must, to call them)."""
    so, advise = sys.modules["scipy.optimize"], importlib.import_module(f"{__name__}.integrate").register_solver_advice
    for fn in (so.brentq, so.brenth, so.ridder, so.bisect, so.toms748, so.newton, so.root_scalar):
        advise(fn, _ROOT.format("-(∂f/∂θ)/(∂f/∂x)"))
    for fn in (so.root, so.fsolve):
        advise(fn, _ROOT.format("-(∂f/∂x)⁻¹ ∂f/∂θ (a solve with the Jacobian)"))
    for fn in (so.minimize, so.minimize_scalar, so.least_squares, so.curve_fit):
        advise(fn, _MINIMUM)


when_imported("scipy.optimize", _advise_on_optimize)

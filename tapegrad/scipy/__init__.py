"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg``, ``tapegrad.scipy.special`` and ``tapegrad.scipy.signal`` have
scipy's names and signatures; on plain values each calls scipy, on traced or dual values it
is recorded as one primitive. ``tapegrad.scipy.stats`` holds scipy.stats' distributions
written with differentiable numpy and scipy.special calls (and scipy's own other methods),
and ``tapegrad.scipy.integrate`` odeint with gradients by the adjoint method.

``tapegrad.scipy.optimize`` has scipy.optimize's solvers under their names, their solutions
differentiated by the implicit function theorem, and ``tapegrad.scipy.integrate`` has
``solve_ivp`` (the adjoint method); scipy's own, given a traced value, raise an error that
names the replacement.

Each submodule is imported when first used (``tapegrad.scipy.stats`` imports scipy.stats, which
takes longer than all of tapegrad): ``import tapegrad`` imports no part of scipy.
"""
import importlib
import sys

from ..onimport import when_imported

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]


def __getattr__(name):
    """``tapegrad.scipy.stats`` and the others, imported on first use."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# --- scipy.optimize: scipy's own solvers cannot see traced values; the error names tapegrad's ---

_CURVE_FIT = ("tapegrad.scipy.optimize.least_squares of the residuals (scipy's curve_fit is not "
              "differentiated: least_squares(lambda p: model(x, *p) - y, p0) fits the same parameters, "
              "and tapegrad differentiates the fit by the implicit function theorem on its optimality "
              "condition)")


def _advise_on_optimize():
    """Name tapegrad's replacement in the error scipy.optimize's solvers give a traced value:
    once the program imports scipy.optimize (it must, to call them)."""
    so = sys.modules["scipy.optimize"]
    advise = importlib.import_module(f"{__name__}.integrate").register_solver_advice
    ours = importlib.import_module(f"{__name__}.optimize").__all__
    for name in ours:
        if callable(getattr(so, name, None)):
            advise(getattr(so, name), (
                f"tapegrad.scipy.optimize.{name} (tapegrad.scipy.optimize has scipy.optimize's solvers "
                f"under their names, with the same arguments, and differentiates their solutions by the "
                f"implicit function theorem)"))
    advise(so.curve_fit, _CURVE_FIT)


when_imported("scipy.optimize", _advise_on_optimize)

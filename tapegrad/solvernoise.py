"""Solvers whose results carry an error of their own, noted while `check_grad` runs.

Central differences of a solver's result divide its error by their step: an adaptive
integrator's result moves by about its tolerance as its steps change (``odeint``, ``solve_ivp``,
``quad``: `note_adaptive_solver`), an iterative solver's solution is off by about the residual it
stopped at (the roots, minima, fits and fixed points of `tapegrad.scipy.optimize`:
`note_stopping_point`). When a check that ran one fails, `advice` says that the differences are
the likely noisy side, and which step and tolerances check the gradient. Outside a check,
noting does nothing.
"""
from __future__ import annotations

import contextvars
import math

__all__ = ["checking", "note_adaptive_solver", "note_stopping_point", "watch", "unwatch", "advice"]

#: {solver name: (how far off its result may be, True for an iterative solver's stopping point)}
#: of the solvers run during a check_grad (None outside one)
_NOTED = contextvars.ContextVar("tapegrad_noisy_solvers", default=None)


def checking() -> bool:
    """True while a `check_grad` runs in this context: a solver notes its accuracy then only."""
    return _NOTED.get() is not None


def watch():
    """Start noting (the outermost `check_grad`): a token for `unwatch`, or None inside a check."""
    return None if _NOTED.get() is not None else _NOTED.set({})


def unwatch(token) -> None:
    """End what `watch` started (nothing for its None)."""
    if token is not None:
        _NOTED.reset(token)


def _note(name, amount, stopped):
    seen = _NOTED.get()
    if seen is not None:
        seen[name] = (max(seen.get(name, (0.0,))[0], float(amount)), stopped)


def note_adaptive_solver(name: str, tolerance: float) -> None:
    """Tell a running `check_grad` that an adaptive solver ran at `tolerance` (the looser of its
    rtol and atol): if the check fails, its message says that central differences of such a
    solver are the noisy side, and which `eps`, `rtol` and `atol` to check with instead.
    ``tapegrad.scipy.integrate.odeint`` calls it; outside a check it does nothing.

    Examples
    --------
    >>> import tapegrad
    >>> tapegrad.checks.note_adaptive_solver("my_solver", 1e-8)  # no check running: nothing
    """
    _note(name, tolerance, False)


def note_stopping_point(name: str, residual: float) -> None:
    """Tell a running `check_grad` that an iterative solver (a root, a minimum, a fixed point of
    `tapegrad.scipy.optimize`) stopped where its residual was `residual`: its solution is off by
    about that much, which central differences divide by their step. If the check fails, its
    message says so and which `eps`, `rtol` and `atol` to check with."""
    _note(name, max(float(residual), 1e-14), True)


def _up(x: float) -> float:
    """`x` rounded up to one significant digit (6.05e-6 -> 7e-6)."""
    scale = 10.0 ** math.floor(math.log10(x))
    return math.ceil(x / scale) * scale


def _steps_for(tol):
    """The eps and rtol (= atol) that check a gradient through a solver accurate to `tol`: its
    result is off by about tol (a few times tol, globally, and it jumps as the steps change),
    which central differences divide by eps, while their truncation error is about eps²;
    eps = tol^(1/3) balances the two at tol^(2/3), and rtol allows a hundred times that."""
    return _up(tol ** (1 / 3)), _up(100 * tol ** (2 / 3))


def advice(eps) -> str:
    """Why a check that ran such solvers may fail with a correct gradient, and what to pass
    instead; "" when none ran."""
    seen = _NOTED.get()
    if not seen:
        return ""
    tol = max(amount for amount, _ in seen.values())
    step = eps if eps is not None else 1e-6
    good_eps, good_rtol = _steps_for(tol)
    said = []
    for stopped, how in ((False, "an adaptive solver, with tolerances up to"),
                         (True, "which stopped where its residual was")):
        names = sorted(n for n, (_, kind) in seen.items() if kind is stopped)
        if names:
            said.append(f"{' and '.join(names)}, {how} {max(seen[n][0] for n in names):.2g}")
    adaptive = any(not kind for _, kind in seen.values())
    text = (f"; the function called {'; and '.join(said)}: its result moves by about {tol:.2g} as its "
            f"steps change, so central "
            f"differences with eps={step:g} are off by about {tol:.2g}/{step:g} = {tol / step:.2g} of "
            f"its scale (more at tolerances near 1e-12, where rounding adds up): they, not the gradient, "
            f"are the likely noisy side. Check with "
            f"check_grad(..., eps={good_eps:g}, rtol={good_rtol:g}, atol={good_rtol:g})")
    if tol > 1.5e-10 and adaptive:
        tight_eps, tight_rtol = _steps_for(1e-10)
        text += (f", or make the solver tighter (rtol=1e-10, atol=1e-10) and check with eps={tight_eps:g}, "
                 f"rtol={tight_rtol:g}, atol={tight_rtol:g}")
    return text

"""Traceable replacements for scipy functions that convert their inputs with ``np.asarray``.

``tapegrad.scipy.linalg``, ``tapegrad.scipy.special`` and ``tapegrad.scipy.signal`` have
scipy's names and signatures; on plain values each calls scipy, on traced or dual values it
is recorded as one primitive. ``tapegrad.scipy.stats`` holds scipy.stats' distributions
written with differentiable numpy and scipy.special calls, and ``tapegrad.scipy.integrate``
odeint with gradients by the adjoint method.
"""
from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]

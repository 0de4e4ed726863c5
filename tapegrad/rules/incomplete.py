"""Rules for the regularized incomplete gamma and beta functions (gammainc, gammaincc, betainc),
the reciprocal gamma function rgamma, the multivariate log-gamma multigammaln, and gammasgn.

The incomplete functions are differentiated in x, where their slope is a density. The
derivative of the incomplete gamma functions in the shape a has no closed form: it is computed
by quadrature (`gammainc_da`, one ``scipy.integrate.quad`` per element, accurate to about 1e-9
relative), which is a primitive without a rule of its own, so a second derivative through it
raises `NoRuleError`. betainc's a and b are not differentiated: differentiating one raises
`NoRuleError` (see `special_params`). multigammaln is a plain Python function in scipy: its
rule is registered on the replacement `tapegrad.scipy.special.multigammaln`.
"""
from __future__ import annotations

import numpy as np
import scipy.integrate
import scipy.special as sp

from ..context import primitive
from ..registry import nondifferentiable, rrule, unbroadcast
from ..scipy.special import multigammaln
from ..tangents import NO_TANGENT, Thunk
from .special_params import no_derivative

# --- incomplete gamma and beta functions ---


def _gamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^(-x) / Γ(a), in logs (xlogy: 0·log 0 = 0 at x = 0)."""
    return np.exp(sp.xlogy(a - 1, x) - x - sp.gammaln(a))


def _gammainc_da_one(a, x):
    """∂P(a, x)/∂a at one point, by quadrature of t^(a-1) e^(-t) log t / Γ(a).

    With ∂P/∂a = ∫₀ˣ t^(a-1) e^(-t) log t dt / Γ(a) - P ψ(a) where P < 1/2, and through the upper
    tail Q = 1 - P otherwise (∂P/∂a = -∂Q/∂a), so that neither difference cancels.
    """
    if not (a > 0) or np.isnan(x):
        return np.nan
    if x <= 0 or np.isinf(x):
        return 0.0
    lg = sp.gammaln(a)
    p = sp.gammainc(a, x)
    opts = {"epsabs": 0.0, "epsrel": 1e-12, "limit": 400}
    if p < 0.5:
        if a < 1:  # t^(a-1) log t is singular at 0: quad's algebraic-logarithmic weight takes it
            val = scipy.integrate.quad(lambda t: np.exp(-t - lg), 0.0, x, weight="alg-loga", wvar=(a - 1, 0), **opts)[0]
        else:
            val = scipy.integrate.quad(lambda t: np.exp((a - 1) * np.log(t) - t - lg) * np.log(t), 0.0, x,
                                       points=[min(a - 1, x)] if 0 < a - 1 < x else None, **opts)[0]
        return val - p * sp.digamma(a)
    q = sp.gammaincc(a, x)
    val = scipy.integrate.quad(lambda t: np.exp((a - 1) * np.log(t) - t - lg) * np.log(t), x, np.inf, **opts)[0]
    return -(val - q * sp.digamma(a))


@primitive(traceable=False)
def gammainc_da(a, x):
    """∂/∂a of the regularized lower incomplete gamma function P(a, x), elementwise (broadcast).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.rules.incomplete import gammainc_da
    >>> round(float(gammainc_da(1.0, 1.0)), 10)  # at a = 1: ∫₀¹ e⁻ᵗ log t dt - (1 - e⁻¹) ψ(1)
    -0.4317297106
    """
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.array([_gammainc_da_one(ai, xi) for ai, xi in zip(a.ravel(), x.ravel())]).reshape(a.shape)
    return out[()] if out.ndim == 0 else out


@rrule(sp.gammainc)
def gammainc_rrule(a, x):
    def gammainc_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * gammainc_da(a, x), a)),
                Thunk(lambda: unbroadcast(dy * _gamma_density(a, x), x)))

    return sp.gammainc(a, x), gammainc_pullback


@rrule(sp.gammaincc)
def gammaincc_rrule(a, x):
    def gammaincc_pullback(dy):
        # Q = 1 - P
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * -gammainc_da(a, x), a)),
                Thunk(lambda: unbroadcast(dy * -_gamma_density(a, x), x)))

    return sp.gammaincc(a, x), gammaincc_pullback


@rrule(sp.betainc)
def betainc_rrule(a, b, x):
    def betainc_pullback(dy):
        # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
        density = np.exp(sp.xlogy(a - 1, x) + sp.xlog1py(b - 1, -x) - sp.betaln(a, b))
        return (NO_TANGENT, no_derivative(sp.betainc, "a", a), no_derivative(sp.betainc, "b", b),
                Thunk(lambda: unbroadcast(dy * density, x)))

    return sp.betainc(a, b, x), betainc_pullback


# --- gamma function variants ---


@rrule(sp.rgamma)
def rgamma_rrule(x):
    y = sp.rgamma(x)

    def rgamma_pullback(dy):
        # d/dx 1/Γ(x) = -ψ(x)/Γ(x)
        return NO_TANGENT, dy * (-y * sp.digamma(x))

    return y, rgamma_pullback


@rrule(multigammaln)
def multigammaln_rrule(a, d):
    def multigammaln_pullback(dy):
        # log Γ_d(a) = d(d-1)/4 log π + Σⱼ log Γ(a - j/2): d/da = Σⱼ ψ(a - j/2), j = 0 .. d-1
        slope = sum(sp.digamma(a - j / 2) for j in range(int(d)))
        return NO_TANGENT, dy * slope, NO_TANGENT

    return multigammaln(a, d), multigammaln_pullback


# --- signs ---

nondifferentiable(sp.gammasgn)

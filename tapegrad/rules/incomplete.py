"""Rules for the regularized incomplete gamma and beta functions (gammainc, gammaincc, betainc),
the reciprocal gamma function rgamma, the multivariate log-gamma multigammaln, and gammasgn.

The incomplete functions are differentiated in x, where their slope is a density; their
derivatives in the shape parameters have no closed form, and differentiating one raises
`NoRuleError` (see `special_params`). multigammaln is a plain Python function in scipy: its
rule is registered on the replacement `tapegrad.scipy.special.multigammaln`.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ..registry import nondifferentiable, rrule, unbroadcast
from ..scipy.special import multigammaln
from ..tangents import NO_TANGENT, Thunk
from .special_params import no_derivative

# --- incomplete gamma and beta functions ---


def _gamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^(-x) / Γ(a), in logs (xlogy: 0·log 0 = 0 at x = 0)."""
    return np.exp(sp.xlogy(a - 1, x) - x - sp.gammaln(a))


@rrule(sp.gammainc)
def gammainc_rrule(a, x):
    def gammainc_pullback(dy):
        return (NO_TANGENT, no_derivative(sp.gammainc, "a", a),
                Thunk(lambda: unbroadcast(dy * _gamma_density(a, x), x)))

    return sp.gammainc(a, x), gammainc_pullback


@rrule(sp.gammaincc)
def gammaincc_rrule(a, x):
    def gammaincc_pullback(dy):
        # Q = 1 - P
        return (NO_TANGENT, no_derivative(sp.gammaincc, "a", a),
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

"""Rules for the regularized incomplete gamma and beta functions (gammainc, gammaincc, betainc),
the reciprocal gamma function rgamma, the multivariate log-gamma multigammaln, and gammasgn.

The incomplete functions are differentiated in x, where their slope is a density. The
derivative of the incomplete gamma functions in the shape a has no closed form: it is computed
by quadrature (`gammainc_da`, one ``scipy.integrate.quad`` per element), which is a primitive
without a rule of its own, so a second derivative through it raises `NoRuleError`. The
derivatives of betainc in its shapes a and b are computed the same way (`betainc_da`,
`betainc_db`), first order only too. Each integrates the density times log t (log(1-t) for b)
minus its mean, over the smaller tail, split around the density's peak: accurate to about
1e-11 relative for moderate shapes and to about 1e-10 (what central differences of scipy's own
functions can confirm) for shapes up to 1e6. multigammaln is a plain Python function in scipy:
its rule is registered on the replacement `tapegrad.scipy.special.multigammaln`.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.special as sp

from ..context import primitive
from ..onimport import OnFirstUse
from ..registry import nondifferentiable, partials, rrule
from ..broadcasting import unbroadcast
from ..scipy.special import multigammaln
from ..tangents import NO_TANGENT, Thunk
from ._shapes import call_option

_integrate = OnFirstUse("scipy.integrate")  # (imported at the first quadrature: see tapegrad.onimport)

# --- incomplete gamma and beta functions ---


def _quad(f, lo, hi, **kwargs):
    """scipy.integrate.quad's value to 1e-12 relative, without its roundoff warning: where the
    integrand changes sign the tolerance is out of reach, but the result is within ~1e-15 of
    the integrand's scale, which is what the derivatives here are checked to."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _integrate.IntegrationWarning)
        return _integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-12, limit=400, **kwargs)[0]


def gamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^(-x) / Γ(a), in logs (xlogy: 0·log 0 = 0 at x = 0)."""
    return np.exp(sp.xlogy(a - 1, x) - x - sp.gammaln(a))


def beta_density(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b), in logs."""
    return np.exp(sp.xlogy(a - 1, x) + sp.xlog1py(b - 1, -x) - sp.betaln(a, b))


def _gamma_breaks(a, x, lo, hi):
    """Points of (lo, hi) where the mass of tᵃ⁻¹ e⁻ᵗ may sit, for quad to split at: around its
    mode a - 1 (width √a) and a few of its e-folding lengths from x (for large a it is a narrow
    peak that quad would otherwise step over)."""
    pts = []
    if a > 1:
        pts += [a - 1 + k * np.sqrt(a) for k in (-30, -8, -2, 0, 2, 8, 30)]
    slope = abs((a - 1) / x - 1)
    if slope > 0:
        pts += [x + s * k / slope for k in (1, 8, 40) for s in (-1, 1)]
    return sorted(p for p in set(pts) if lo < p < hi)


def _gammainc_da_one(a, x):
    """∂P(a, x)/∂a at one point, by quadrature of t^(a-1) e^(-t) log t / Γ(a).

    With ∂P/∂a = ∫₀ˣ t^(a-1) e^(-t) (log t - ψ(a)) dt / Γ(a) where P < 1/2, and through the upper
    tail Q = 1 - P otherwise (∂P/∂a = -∂Q/∂a).
    """
    if not (a > 0) or np.isnan(x):
        return np.nan
    if x <= 0 or np.isinf(x):
        return 0.0
    lg = sp.gammaln(a)
    p = sp.gammainc(a, x)

    psi = sp.digamma(a)

    def integrand(t):
        # log t - ψ(a) inside the integral: for large a, log t is nearly ψ(a) where the mass is,
        # and subtracting P ψ(a) afterwards would cancel most of the digits
        return np.exp((a - 1) * np.log(t) - t - lg) * (np.log(t) - psi)

    if p < 0.5:
        if a < 1:  # t^(a-1) log t is singular at 0: quad's algebraic-logarithmic weight takes it
            val = _quad(lambda t: np.exp(-t - lg), 0.0, x, weight="alg-loga", wvar=(a - 1, 0))
            return val - p * psi
        return _quad(integrand, 0.0, x, points=_gamma_breaks(a, x, 0.0, x) or None)
    # quad takes no points on an infinite interval: the finite stretch holding them, then the rest
    pts = _gamma_breaks(a, x, x, np.inf)
    edge = pts[-1] if pts else x
    val = _quad(integrand, edge, np.inf)
    if pts:
        val += _quad(integrand, x, edge, points=pts[:-1] or None)
    return -val


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


@rrule(sp.gammainc, formula=partials(
    "∂gammainc/∂{a[0]} (no closed form: by quadrature)",
    "{a[1]}^({a[0]}-1)·exp(-{a[1]})/Γ({a[0]})",
))
def gammainc_rrule(a, x):
    """scipy.special.gammainc: x in closed form, a by quadrature (first order only)."""

    def gammainc_pullback(dy):
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * gammainc_da(a, x), a)),
                Thunk(lambda: unbroadcast(dy * gamma_density(a, x), x)))

    return sp.gammainc(a, x), gammainc_pullback


@rrule(sp.gammaincc, formula=partials(
    "(-∂gammainc/∂{a[0]}) (no closed form: by quadrature)",
    "(-{a[1]}^({a[0]}-1)·exp(-{a[1]})/Γ({a[0]}))",
))
def gammaincc_rrule(a, x):
    """scipy.special.gammaincc: x in closed form, a by quadrature (first order only)."""

    def gammaincc_pullback(dy):
        # Q = 1 - P
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * -gammainc_da(a, x), a)),
                Thunk(lambda: unbroadcast(dy * -gamma_density(a, x), x)))

    return sp.gammaincc(a, x), gammaincc_pullback


def _breaks(a, b, x, lo, hi):
    """Points of (lo, hi) where the mass of tᵃ⁻¹ (1-t)ᵇ⁻¹ may sit, for quad to split at: around
    its mode and, where it climbs towards x, a few of its e-folding lengths from x (for large
    shapes it is a narrow peak that quad would otherwise step over)."""
    pts = []
    if a > 1 and b > 1:
        mode = (a - 1) / (a + b - 2)
        sd = np.sqrt(mode * (1 - mode) / (a + b + 1))
        pts += [mode + k * sd for k in (-30, -8, -2, 0, 2, 8, 30)]
    slope = abs((a - 1) / x - (b - 1) / (1 - x))
    if slope > 0:
        pts += [x + s * k / slope for k in (1, 8, 40) for s in (-1, 1)]
    return sorted(p for p in set(pts) if lo < p < hi) or None


def _betainc_dshape_one(a, b, x, wrt_a):
    """∂I_x(a, b)/∂a (`wrt_a`) or ∂/∂b at one point, by quadrature.

    With L(t) = log t for a, log(1 - t) for b, and its mean
    ∫₀¹ tᵃ⁻¹ (1-t)ᵇ⁻¹ L(t) dt / B(a, b) = ψ(a) - ψ(a + b), resp. ψ(b) - ψ(a + b):
    ∂I/∂a = ∫₀ˣ tᵃ⁻¹ (1-t)ᵇ⁻¹ (L(t) - mean) dt / B where I < 1/2, and minus the same over the
    upper tail otherwise. An endpoint singularity (a < 1 at 0, b < 1 at 1) goes into quad's
    algebraic(-logarithmic) weight, with the mean times I subtracted after.
    """
    if not (a > 0 and b > 0) or np.isnan(x):
        return np.nan
    if x <= 0 or x >= 1:
        return 0.0
    lb = sp.betaln(a, b)
    full = sp.digamma(a if wrt_a else b) - sp.digamma(a + b)

    def log_factor(t):
        return np.log(t) if wrt_a else np.log1p(-t)

    def integrand(t):
        # L(t) minus its mean inside the integral: for large shapes L is nearly that mean where
        # the mass is, and subtracting I times it afterwards would cancel most of the digits
        return np.exp(sp.xlogy(a - 1, t) + sp.xlog1py(b - 1, -t) - lb) * (log_factor(t) - full)

    p = sp.betainc(a, b, x)
    if p < 0.5:
        if a < 1:  # tᵃ⁻¹ is singular at 0 (log t too, for a): both go into the weight
            val = _quad(lambda t: np.exp(sp.xlog1py(b - 1, -t) - lb) * (1.0 if wrt_a else np.log1p(-t)), 0.0, x,
                        weight="alg-loga" if wrt_a else "alg", wvar=(a - 1, 0))
            return val - p * full
        return _quad(integrand, 0.0, x, points=_breaks(a, b, x, 0.0, x))
    if b < 1:  # (1-t)ᵇ⁻¹ is singular at 1 (log(1-t) too, for b): both go into the weight
        val = _quad(lambda t: np.exp(sp.xlogy(a - 1, t) - lb) * (np.log(t) if wrt_a else 1.0), x, 1.0,
                    weight="alg" if wrt_a else "alg-logb", wvar=(0, b - 1))
        return -(val - sp.betaincc(a, b, x) * full)
    return -_quad(integrand, x, 1.0, points=_breaks(a, b, x, x, 1.0))


def _betainc_dshape(a, b, x, wrt_a):
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    out = np.array([_betainc_dshape_one(ai, bi, xi, wrt_a) for ai, bi, xi in zip(a.ravel(), b.ravel(), x.ravel())])
    out = out.reshape(a.shape)
    return out[()] if out.ndim == 0 else out


@primitive(traceable=False)
def betainc_da(a, b, x):
    """∂/∂a of the regularized incomplete beta function I_x(a, b), elementwise (broadcast).

    Examples
    --------
    >>> from tapegrad.rules.incomplete import betainc_da
    >>> round(float(betainc_da(1.0, 1.0, 0.5)), 10)  # I_x(a, 1) = xᵃ: x log x
    -0.3465735903
    """
    return _betainc_dshape(a, b, x, True)


@primitive(traceable=False)
def betainc_db(a, b, x):
    """∂/∂b of the regularized incomplete beta function I_x(a, b), elementwise (broadcast).

    Examples
    --------
    >>> from tapegrad.rules.incomplete import betainc_db
    >>> round(float(betainc_db(1.0, 1.0, 0.5)), 10)  # I_x(1, b) = 1 - (1-x)ᵇ: -(1-x) log(1-x)
    0.3465735903
    """
    return _betainc_dshape(a, b, x, False)


@rrule(sp.betainc, formula=partials(
    "∂betainc/∂{a[0]} (no closed form: by quadrature)",
    "∂betainc/∂{a[1]} (no closed form: by quadrature)",
    "{a[2]}^({a[0]}-1)·(1 - {a[2]})^({a[1]}-1)/B({a[0]}, {a[1]})",
))
def betainc_rrule(a, b, x):
    """scipy.special.betainc: x in closed form, a and b by quadrature (first order only)."""

    def betainc_pullback(dy):
        density = beta_density(a, b, x)  # a and b by quadrature
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * betainc_da(a, b, x), a)),
                Thunk(lambda: unbroadcast(dy * betainc_db(a, b, x), b)),
                Thunk(lambda: unbroadcast(dy * density, x)))

    return sp.betainc(a, b, x), betainc_pullback


# --- gamma function variants ---


@rrule(sp.rgamma, formula=partials("(-{y}·ψ({a[0]}))"))
def rgamma_rrule(x):
    y = sp.rgamma(x)

    def rgamma_pullback(dy):
        # d/dx 1/Γ(x) = -ψ(x)/Γ(x)
        return NO_TANGENT, dy * (-y * sp.digamma(x))

    return y, rgamma_pullback


def _multigammaln(names, values, kwargs):
    """log Γ_d(a) is a sum of d log-gammas, so its slope is a sum of d digammas."""
    d = call_option(values, kwargs, "d", 1)
    last = f"{int(d) - 1}" if isinstance(d, (int, np.integer)) else "{a[1]} - 1"
    return ["Σⱼ ψ({a[0]} - j/2) over j = 0 … " + last, None]


@rrule(multigammaln, formula=partials(_multigammaln))
def multigammaln_rrule(a, d):
    def multigammaln_pullback(dy):
        # log Γ_d(a) = d(d-1)/4 log π + Σⱼ log Γ(a - j/2): d/da = Σⱼ ψ(a - j/2), j = 0 .. d-1
        slope = sum(sp.digamma(a - j / 2) for j in range(int(d)))
        return NO_TANGENT, dy * slope, NO_TANGENT

    return multigammaln(a, d), multigammaln_pullback


# --- signs ---

nondifferentiable(sp.gammasgn)

"""Rules for the distribution functions of scipy.special, differentiated in the variable, whose
slope is the distribution's density (or minus it, for the complements): stdtr (Student's t, in
t), chdtr and chdtrc (χ², in x), gdtr and gdtrc (gamma, in x and in the rate a), pdtr and pdtrc
(Poisson, in the mean m), bdtr and bdtrc (binomial, in p), fdtr and fdtrc (F, in x), nbdtr and
nbdtrc (negative binomial, in p).

The shape parameters (degrees of freedom, the gamma shape) have no closed-form derivative: a
gradient that reaches one raises NoRuleError naming it and the way out, writing the function
with gammainc / betainc, whose shapes tapegrad differentiates by quadrature. The counts k and n
are integers (scipy truncates a float one): their tangents are NoTangent.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from .incomplete import beta_density, gamma_density
from .special_params import no_derivative

_LN2 = math.log(2.0)
_LN_PI = math.log(math.pi)


def _shape(fn, name, value, through):
    """The tangent of a shape parameter: refused, naming the incomplete function to write `fn` with."""
    return no_derivative(fn, name, value, f"it has no closed form; write the function as {through}, whose "
                                          f"shape parameters tapegrad differentiates by quadrature (first order)")


# --- Student's t ---


@rrule(sp.stdtr, formula=partials(
    "∂stdtr/∂{a[0]} (no closed form: refused)",
    "Γ(({a[0]}+1)/2)/(√({a[0]}π)·Γ({a[0]}/2))·(1 + {a[1]}²/{a[0]})^(-({a[0]}+1)/2)",
))
def stdtr_rrule(df, t):
    """∂t: the density of Student's t with df degrees of freedom; df refused."""

    def stdtr_pullback(dy):
        half = (df + 1) / 2
        density = np.exp(sp.gammaln(half) - sp.gammaln(df / 2) - 0.5 * (np.log(df) + _LN_PI)
                         - half * np.log1p(t * t / df))
        return (NO_TANGENT, _shape(sp.stdtr, "df", df, "scipy.special.betainc(df/2, 1/2, df/(df + t²)) on each side of 0"),
                Thunk(lambda: unbroadcast(dy * density, t)))

    return sp.stdtr(df, t), stdtr_pullback


# --- χ² and gamma ---


@rrule(sp.chdtr, formula=partials(
    "∂chdtr/∂{a[0]} (no closed form: refused)",
    "({a[1]}/2)^({a[0]}/2-1)·exp(-{a[1]}/2)/(2·Γ({a[0]}/2))",
))
def chdtr_rrule(v, x):
    """P(v/2, x/2): ∂x: the χ² density; v refused."""

    def chdtr_pullback(dy):
        return (NO_TANGENT, _shape(sp.chdtr, "v", v, "scipy.special.gammainc(v/2, x/2)"),
                Thunk(lambda: unbroadcast(dy * (gamma_density(v / 2, x / 2) / 2), x)))

    return sp.chdtr(v, x), chdtr_pullback


@rrule(sp.chdtrc, formula=partials(
    "∂chdtrc/∂{a[0]} (no closed form: refused)",
    "(-({a[1]}/2)^({a[0]}/2-1)·exp(-{a[1]}/2)/(2·Γ({a[0]}/2)))",
))
def chdtrc_rrule(v, x):
    """Q(v/2, x/2): ∂x: minus the χ² density; v refused."""

    def chdtrc_pullback(dy):
        return (NO_TANGENT, _shape(sp.chdtrc, "v", v, "scipy.special.gammaincc(v/2, x/2)"),
                Thunk(lambda: unbroadcast(dy * (gamma_density(v / 2, x / 2) / -2), x)))

    return sp.chdtrc(v, x), chdtrc_pullback


@rrule(sp.gdtr, formula=partials(
    "{a[2]}·({a[0]}·{a[2]})^({a[1]}-1)·exp(-{a[0]}·{a[2]})/Γ({a[1]})",
    "∂gdtr/∂{a[1]} (no closed form: refused)",
    "{a[0]}·({a[0]}·{a[2]})^({a[1]}-1)·exp(-{a[0]}·{a[2]})/Γ({a[1]})",
))
def gdtr_rrule(a, b, x):
    """P(b, ax) (a the rate, b the shape): ∂x: a·g(b, ax); ∂a: x·g(b, ax), g the gamma density; b refused."""

    def gdtr_pullback(dy):
        d = dy * gamma_density(b, a * x)
        return (NO_TANGENT, Thunk(lambda: unbroadcast(d * x, a)), _shape(sp.gdtr, "b", b, "scipy.special.gammainc(b, a*x)"),
                Thunk(lambda: unbroadcast(d * a, x)))

    return sp.gdtr(a, b, x), gdtr_pullback


@rrule(sp.gdtrc, formula=partials(
    "(-{a[2]}·({a[0]}·{a[2]})^({a[1]}-1)·exp(-{a[0]}·{a[2]})/Γ({a[1]}))",
    "∂gdtrc/∂{a[1]} (no closed form: refused)",
    "(-{a[0]}·({a[0]}·{a[2]})^({a[1]}-1)·exp(-{a[0]}·{a[2]})/Γ({a[1]}))",
))
def gdtrc_rrule(a, b, x):
    """Q(b, ax): ∂x: -a·g(b, ax); ∂a: -x·g(b, ax); b refused."""

    def gdtrc_pullback(dy):
        d = dy * -gamma_density(b, a * x)
        return (NO_TANGENT, Thunk(lambda: unbroadcast(d * x, a)), _shape(sp.gdtrc, "b", b, "scipy.special.gammaincc(b, a*x)"),
                Thunk(lambda: unbroadcast(d * a, x)))

    return sp.gdtrc(a, b, x), gdtrc_pullback


# --- Poisson ---


@rrule(sp.pdtr, formula=partials(None, "(-{a[1]}^⌊{a[0]}⌋·exp(-{a[1]})/⌊{a[0]}⌋!)"))
def pdtr_rrule(k, m):
    """Σⱼ≤ₖ mʲe⁻ᵐ/j! = Q(⌊k⌋+1, m): ∂m: minus the Poisson probability of ⌊k⌋; k is a count."""

    def pdtr_pullback(dy):
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * -gamma_density(np.floor(k) + 1, m), m))

    return sp.pdtr(k, m), pdtr_pullback


@rrule(sp.pdtrc, formula=partials(None, "{a[1]}^⌊{a[0]}⌋·exp(-{a[1]})/⌊{a[0]}⌋!"))
def pdtrc_rrule(k, m):
    """P(⌊k⌋+1, m): ∂m: the Poisson probability of ⌊k⌋; k is a count."""

    def pdtrc_pullback(dy):
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * gamma_density(np.floor(k) + 1, m), m))

    return sp.pdtrc(k, m), pdtrc_pullback


# --- binomial and negative binomial ---


@rrule(sp.bdtr, formula=partials(None, None, "(-{a[2]}^k·(1 - {a[2]})^(n-k-1)/B(n - k, k + 1)), k = ⌊{a[0]}⌋, n = ⌊{a[1]}⌋"))
def bdtr_rrule(k, n, p):
    """I₁₋ₚ(n - k, k + 1): ∂p: -pᵏ(1-p)ⁿ⁻ᵏ⁻¹/B(n - k, k + 1); k and n are counts."""

    def bdtr_pullback(dy):
        kf, nf = np.floor(k), np.floor(n)
        return NO_TANGENT, NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * -beta_density(kf + 1, nf - kf, p), p))

    return sp.bdtr(k, n, p), bdtr_pullback


@rrule(sp.bdtrc, formula=partials(None, None, "{a[2]}^k·(1 - {a[2]})^(n-k-1)/B(n - k, k + 1), k = ⌊{a[0]}⌋, n = ⌊{a[1]}⌋"))
def bdtrc_rrule(k, n, p):
    """Iₚ(k + 1, n - k): ∂p: pᵏ(1-p)ⁿ⁻ᵏ⁻¹/B(k + 1, n - k); k and n are counts."""

    def bdtrc_pullback(dy):
        kf, nf = np.floor(k), np.floor(n)
        return NO_TANGENT, NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * beta_density(kf + 1, nf - kf, p), p))

    return sp.bdtrc(k, n, p), bdtrc_pullback


@rrule(sp.nbdtr, formula=partials(None, None, "{a[2]}^(n-1)·(1 - {a[2]})^k/B(n, k + 1), k = ⌊{a[0]}⌋, n = ⌊{a[1]}⌋"))
def nbdtr_rrule(k, n, p):
    """Iₚ(n, k + 1): ∂p: pⁿ⁻¹(1-p)ᵏ/B(n, k + 1); k and n are counts."""

    def nbdtr_pullback(dy):
        return (NO_TANGENT, NO_TANGENT, NO_TANGENT,
                Thunk(lambda: unbroadcast(dy * beta_density(np.floor(n), np.floor(k) + 1, p), p)))

    return sp.nbdtr(k, n, p), nbdtr_pullback


@rrule(sp.nbdtrc, formula=partials(None, None, "(-{a[2]}^(n-1)·(1 - {a[2]})^k/B(n, k + 1)), k = ⌊{a[0]}⌋, n = ⌊{a[1]}⌋"))
def nbdtrc_rrule(k, n, p):
    """I₁₋ₚ(k + 1, n): ∂p: -pⁿ⁻¹(1-p)ᵏ/B(n, k + 1); k and n are counts."""

    def nbdtrc_pullback(dy):
        return (NO_TANGENT, NO_TANGENT, NO_TANGENT,
                Thunk(lambda: unbroadcast(dy * -beta_density(np.floor(n), np.floor(k) + 1, p), p)))

    return sp.nbdtrc(k, n, p), nbdtrc_pullback


# --- F ---


def _f_density(dfn, dfd, x):
    """The F density: (d₁/d₂)^(d₁/2) x^(d₁/2-1) (1 + d₁x/d₂)^(-(d₁+d₂)/2)/B(d₁/2, d₂/2)."""
    h1, h2 = dfn / 2, dfd / 2
    r = dfn / dfd
    return np.exp(h1 * np.log(r) + sp.xlogy(h1 - 1, x) - (h1 + h2) * np.log1p(r * x) - sp.betaln(h1, h2))


@rrule(sp.fdtr, formula=partials(
    "∂fdtr/∂{a[0]} (no closed form: refused)", "∂fdtr/∂{a[1]} (no closed form: refused)",
    "(d₁/d₂)^(d₁/2)·{a[2]}^(d₁/2-1)·(1 + d₁·{a[2]}/d₂)^(-(d₁+d₂)/2)/B(d₁/2, d₂/2), d₁ = {a[0]}, d₂ = {a[1]}",
))
def fdtr_rrule(dfn, dfd, x):
    """∂x: the F density; the degrees of freedom refused."""

    def fdtr_pullback(dy):
        through = "scipy.special.betainc(dfn/2, dfd/2, dfn*x/(dfd + dfn*x))"
        return (NO_TANGENT, _shape(sp.fdtr, "dfn", dfn, through), _shape(sp.fdtr, "dfd", dfd, through),
                Thunk(lambda: unbroadcast(dy * _f_density(dfn, dfd, x), x)))

    return sp.fdtr(dfn, dfd, x), fdtr_pullback


@rrule(sp.fdtrc, formula=partials(
    "∂fdtrc/∂{a[0]} (no closed form: refused)", "∂fdtrc/∂{a[1]} (no closed form: refused)",
    "(-(d₁/d₂)^(d₁/2)·{a[2]}^(d₁/2-1)·(1 + d₁·{a[2]}/d₂)^(-(d₁+d₂)/2)/B(d₁/2, d₂/2)), d₁ = {a[0]}, d₂ = {a[1]}",
))
def fdtrc_rrule(dfn, dfd, x):
    """∂x: minus the F density; the degrees of freedom refused."""

    def fdtrc_pullback(dy):
        through = "scipy.special.betaincc(dfn/2, dfd/2, dfn*x/(dfd + dfn*x))"
        return (NO_TANGENT, _shape(sp.fdtrc, "dfn", dfn, through), _shape(sp.fdtrc, "dfd", dfd, through),
                Thunk(lambda: unbroadcast(dy * -_f_density(dfn, dfd, x), x)))

    return sp.fdtrc(dfn, dfd, x), fdtrc_pullback

"""More scipy.stats distributions with gradients, built as those of `tapegrad.scipy.stats` are
(which re-exports them): expon, lognorm, laplace, cauchy, uniform, logistic, halfnorm, invgamma,
weibull_min, pareto (continuous: logpdf, pdf, cdf, logcdf, sf, logsf, with loc and scale) and
binom, nbinom, bernoulli, geom (discrete: logpmf, pmf, cdf, logcdf, sf, logsf, with loc).

Each is written with numpy and scipy.special calls that traced values go through, so it is
differentiable in x and in the continuous parameters, to any order, except where a cdf goes
through ``gammainc``/``betainc`` with a traced shape (invgamma's a, nbinom's n: first order, by
quadrature, as for gamma and beta). Outside the support the densities are 0 (log-densities
-inf), as in scipy. The moments (``mean``, ``var``, ``std``) are differentiated too, where they
exist; every other method is scipy's own, on plain values.

Examples
--------
>>> import tapegrad
>>> from tapegrad.scipy.stats import expon
>>> tapegrad.gradient(lambda s: expon.logpdf(2.0, 0.0, s), 1.0)[0]  # d(-x/s - log s)/ds = x/s² - 1/s
1.0
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as _sp
import scipy.stats as _stats

from .stats import Distribution, Univariate, on_support, z_score

__all__ = ["expon", "lognorm", "laplace", "cauchy", "uniform", "logistic", "halfnorm", "invgamma", "weibull_min",
           "pareto", "binom", "nbinom", "bernoulli", "geom"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _where(cond, x, y):
    return np.where(cond, x, y)


def _log(p):
    """log p, -inf where p is 0 (outside the support) without numpy's divide-by-zero warning."""
    positive = p > 0
    return np.where(positive, np.log(np.where(positive, p, 1.0)), -np.inf)


class _Continuous(Distribution):
    """logcdf and logsf from cdf and sf, -inf where they are 0, as scipy's (quietly)."""

    def logcdf(self, x, *args, **kwargs):
        return _log(self.cdf(x, *args, **kwargs))

    def logsf(self, x, *args, **kwargs):
        return _log(self.sf(x, *args, **kwargs))


# --- continuous, on the half line or the whole line ---


class _Expon(_Continuous):
    """The exponential distribution: ``expon.logpdf(x, loc=0, scale=1)``."""

    name = "expon"
    _scipy = _stats.expon

    def logpdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -z, -np.inf) - np.log(scale)

    def cdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -np.expm1(-z), 0.0)

    def sf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: np.exp(-z), 1.0)

    def logsf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -z, 0.0)

    def entropy(self, loc=0, scale=1):
        return 1.0 + np.log(scale) + 0 * loc

    def mean(self, loc=0, scale=1):
        return loc + scale

    def var(self, loc=0, scale=1):
        return scale * scale + 0.0 * loc


class _Lognorm(_Continuous):
    """The log-normal distribution: ``lognorm.logpdf(x, s, loc=0, scale=1)``, log(x) ~ N(log scale, s²)."""

    name = "lognorm"
    _scipy = _stats.lognorm

    def logpdf(self, x, s, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: -0.5 * (np.log(z) / s) ** 2 - np.log(s * z) - _HALF_LOG_2PI,
                          -np.inf) - np.log(scale)

    def cdf(self, x, s, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: _sp.ndtr(np.log(z) / s), 0.0)

    def sf(self, x, s, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: _sp.ndtr(-np.log(z) / s), 1.0)

    def mean(self, s, loc=0, scale=1):
        return loc + scale * np.exp(s * s / 2)

    def var(self, s, loc=0, scale=1):
        return scale * scale * np.expm1(s * s) * np.exp(s * s) + 0.0 * loc


class _Laplace(_Continuous):
    """The Laplace distribution: ``laplace.logpdf(x, loc=0, scale=1)``."""

    name = "laplace"
    _scipy = _stats.laplace

    def logpdf(self, x, loc=0, scale=1):
        return -np.abs(z_score(x, loc, scale)) - np.log(2 * scale)

    def cdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        half_tail = 0.5 * np.exp(-np.abs(z))
        return _where(z < 0, half_tail, 1 - half_tail)

    def sf(self, x, loc=0, scale=1):
        return self.cdf(-z_score(x, loc, scale))

    def entropy(self, loc=0, scale=1):
        return 1 + np.log(2 * scale) + 0 * loc

    def mean(self, loc=0, scale=1):
        return loc + 0.0 * scale

    def var(self, loc=0, scale=1):
        return 2 * scale * scale + 0.0 * loc


class _Cauchy(_Continuous):
    """The Cauchy distribution: ``cauchy.logpdf(x, loc=0, scale=1)`` (no moments: scipy's own give nan/inf)."""

    name = "cauchy"
    _scipy = _stats.cauchy

    def logpdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return -np.log1p(z * z) - np.log(math.pi * scale)

    def cdf(self, x, loc=0, scale=1):
        return 0.5 + np.arctan(z_score(x, loc, scale)) / math.pi

    def sf(self, x, loc=0, scale=1):
        return 0.5 - np.arctan(z_score(x, loc, scale)) / math.pi

    def entropy(self, loc=0, scale=1):
        return math.log(4 * math.pi) + np.log(scale) + 0 * loc


class _Uniform(_Continuous):
    """The uniform distribution on [loc, loc + scale]: ``uniform.logpdf(x, loc=0, scale=1)``."""

    name = "uniform"
    _scipy = _stats.uniform

    def logpdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support((z >= 0) & (z <= 1), z, lambda z: 0.0 * z, -np.inf) - np.log(scale)

    def cdf(self, x, loc=0, scale=1):
        return np.clip(z_score(x, loc, scale), 0.0, 1.0)

    def sf(self, x, loc=0, scale=1):
        return 1 - self.cdf(x, loc, scale)

    def entropy(self, loc=0, scale=1):
        return np.log(scale) + 0 * loc

    def mean(self, loc=0, scale=1):
        return loc + scale / 2

    def var(self, loc=0, scale=1):
        return scale * scale / 12 + 0.0 * loc


class _Logistic(_Continuous):
    """The logistic distribution: ``logistic.logpdf(x, loc=0, scale=1)``, cdf the logistic sigmoid."""

    name = "logistic"
    _scipy = _stats.logistic

    def logpdf(self, x, loc=0, scale=1):
        z = np.abs(z_score(x, loc, scale))  # the density is even: no overflow in exp(-|z|)
        return -z - 2 * np.log1p(np.exp(-z)) - np.log(scale)

    def cdf(self, x, loc=0, scale=1):
        return _sp.expit(z_score(x, loc, scale))

    def sf(self, x, loc=0, scale=1):
        return _sp.expit(-z_score(x, loc, scale))

    def logcdf(self, x, loc=0, scale=1):
        return _sp.log_expit(z_score(x, loc, scale))

    def logsf(self, x, loc=0, scale=1):
        return _sp.log_expit(-z_score(x, loc, scale))

    def entropy(self, loc=0, scale=1):
        return 2.0 + np.log(scale) + 0 * loc

    def mean(self, loc=0, scale=1):
        return loc + 0.0 * scale

    def var(self, loc=0, scale=1):
        return scale * scale * (math.pi ** 2 / 3) + 0.0 * loc


class _Halfnorm(_Continuous):
    """The half-normal distribution: ``halfnorm.logpdf(x, loc=0, scale=1)``, the absolute value of a standard normal, scaled."""

    name = "halfnorm"
    _scipy = _stats.halfnorm

    def logpdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -0.5 * z * z + 0.5 * math.log(2 / math.pi), -np.inf) - np.log(scale)

    def cdf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: _sp.erf(z / math.sqrt(2)), 0.0)

    def sf(self, x, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: _sp.erfc(z / math.sqrt(2)), 1.0)

    def mean(self, loc=0, scale=1):
        return loc + scale * math.sqrt(2 / math.pi)

    def var(self, loc=0, scale=1):
        return scale * scale * (1 - 2 / math.pi) + 0.0 * loc


class _Invgamma(_Continuous):
    """The inverse gamma distribution: ``invgamma.logpdf(x, a, loc=0, scale=1)``; cdf and sf
    through gammaincc/gammainc of 1/x (differentiable in a by quadrature, first order only)."""

    name = "invgamma"
    _scipy = _stats.invgamma

    def logpdf(self, x, a, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: -(a + 1) * np.log(z) - 1 / z - _sp.gammaln(a), -np.inf) - np.log(scale)

    def cdf(self, x, a, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: _sp.gammaincc(a, 1 / z), 0.0)

    def sf(self, x, a, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z > 0, z, lambda z: _sp.gammainc(a, 1 / z), 1.0)

    def mean(self, a, loc=0, scale=1):
        return _where(a > 1, scale / _where(a > 1, a - 1, 1.0) + loc, np.inf)

    def var(self, a, loc=0, scale=1):
        finite = a > 2
        am1 = _where(finite, a - 1, 2.0)
        return _where(finite, scale * scale / (am1 * am1 * (am1 - 1)) + 0.0 * loc, np.inf)


class _WeibullMin(_Continuous):
    """The Weibull distribution: ``weibull_min.logpdf(x, c, loc=0, scale=1)``."""

    name = "weibull_min"
    _scipy = _stats.weibull_min

    def logpdf(self, x, c, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: np.log(c) + _sp.xlogy(c - 1, z) - z ** c, -np.inf) - np.log(scale)

    def cdf(self, x, c, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -np.expm1(-z ** c), 0.0)

    def sf(self, x, c, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: np.exp(-z ** c), 1.0)

    def logsf(self, x, c, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 0, z, lambda z: -z ** c, 0.0)

    def mean(self, c, loc=0, scale=1):
        return scale * _sp.gamma(1 + 1 / c) + loc

    def var(self, c, loc=0, scale=1):
        g1 = _sp.gamma(1 + 1 / c)
        return scale * scale * (_sp.gamma(1 + 2 / c) - g1 * g1) + 0.0 * loc


class _Pareto(_Continuous):
    """The Pareto distribution: ``pareto.logpdf(x, b, loc=0, scale=1)``, on z ≥ 1."""

    name = "pareto"
    _scipy = _stats.pareto

    def logpdf(self, x, b, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 1, z, lambda z: np.log(b) - (b + 1) * np.log(z), -np.inf) - np.log(scale)

    def cdf(self, x, b, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 1, z, lambda z: -np.expm1(-b * np.log(z)), 0.0)

    def sf(self, x, b, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 1, z, lambda z: np.exp(-b * np.log(z)), 1.0)

    def logsf(self, x, b, loc=0, scale=1):
        z = z_score(x, loc, scale)
        return on_support(z >= 1, z, lambda z: -b * np.log(z), 0.0)

    def mean(self, b, loc=0, scale=1):
        return _where(b > 1, b * scale / _where(b > 1, b - 1, 1.0) + loc, np.inf)

    def var(self, b, loc=0, scale=1):
        finite = b > 2
        bm1 = _where(finite, b - 1, 2.0)
        return _where(finite, scale * scale * b / (bm1 * bm1 * (bm1 - 1)) + 0.0 * loc, np.inf)


# --- discrete: counts are not differentiated, the probabilities and sizes are ---


class _Discrete(Univariate):
    """pmf, logcdf and logsf from logpmf, cdf and sf (-inf where they are 0, quietly)."""

    def pmf(self, k, *args, **kwargs):
        return np.exp(self.logpmf(k, *args, **kwargs))

    def logcdf(self, k, *args, **kwargs):
        return _log(self.cdf(k, *args, **kwargs))

    def logsf(self, k, *args, **kwargs):
        return _log(self.sf(k, *args, **kwargs))


def _count(k, loc):
    """k - loc, whether it is a whole number ≥ 0, and a harmless stand-in (0) where it is not."""
    k = k - loc
    whole = (k >= 0) & (k == np.floor(k))
    return k, whole, np.where(whole, k, 0)


class _Binom(_Discrete):
    """The binomial distribution: ``binom.logpmf(k, n, p, loc=0)``, differentiable in p; cdf and sf
    through betainc (in p, any order)."""

    name = "binom"
    _scipy = _stats.binom

    def logpmf(self, k, n, p, loc=0):
        k, whole, kk = _count(k, loc)
        inside = whole & (k <= n)
        kk = np.where(inside, kk, 0)
        value = (_sp.gammaln(n + 1) - _sp.gammaln(kk + 1) - _sp.gammaln(n - kk + 1)
                 + _sp.xlogy(kk, p) + _sp.xlog1py(n - kk, -p))
        return np.where(inside, value, -np.inf)

    def cdf(self, k, n, p, loc=0):
        k = np.floor(k - loc)
        inside = (k >= 0) & (k < n)
        kk = np.where(inside, k, 0)
        # P(K ≤ k) = I_{1-p}(n - k, k + 1)
        return np.where(inside, _sp.betainc(n - kk, kk + 1, 1 - p), np.where(k < 0, 0.0, 1.0))

    def sf(self, k, n, p, loc=0):
        k = np.floor(k - loc)
        inside = (k >= 0) & (k < n)
        kk = np.where(inside, k, 0)
        return np.where(inside, _sp.betainc(kk + 1, n - kk, p), np.where(k < 0, 1.0, 0.0))

    def mean(self, n, p, loc=0):
        return n * p + loc

    def var(self, n, p, loc=0):
        return n * p * (1 - p) + 0.0 * loc


class _Nbinom(_Discrete):
    """The negative binomial distribution: ``nbinom.logpmf(k, n, p, loc=0)`` (failures before the
    n-th success), differentiable in n and p; cdf and sf through betainc (in n by quadrature,
    first order only)."""

    name = "nbinom"
    _scipy = _stats.nbinom

    def logpmf(self, k, n, p, loc=0):
        k, whole, kk = _count(k, loc)
        value = (_sp.gammaln(kk + n) - _sp.gammaln(n) - _sp.gammaln(kk + 1) + n * np.log(p)
                 + _sp.xlog1py(kk, -p))
        return np.where(whole, value, -np.inf)

    def cdf(self, k, n, p, loc=0):
        k = np.floor(k - loc)
        kk = np.where(k >= 0, k, 0)
        return np.where(k >= 0, _sp.betainc(n, kk + 1, p), 0.0)

    def sf(self, k, n, p, loc=0):
        k = np.floor(k - loc)
        kk = np.where(k >= 0, k, 0)
        return np.where(k >= 0, _sp.betainc(kk + 1, n, 1 - p), 1.0)

    def mean(self, n, p, loc=0):
        return n * (1 - p) / p + loc

    def var(self, n, p, loc=0):
        return n * (1 - p) / (p * p) + 0.0 * loc


class _Bernoulli(_Discrete):
    """The Bernoulli distribution: ``bernoulli.logpmf(k, p, loc=0)``, differentiable in p."""

    name = "bernoulli"
    _scipy = _stats.bernoulli

    def logpmf(self, k, p, loc=0):
        k = k - loc
        return np.where(k == 1, np.log(p) + 0.0 * k, np.where(k == 0, np.log1p(-p) + 0.0 * k, -np.inf))

    def cdf(self, k, p, loc=0):
        k = k - loc
        return np.where(k < 0, 0.0, np.where(k < 1, 1 - p + 0.0 * k, 1.0))

    def sf(self, k, p, loc=0):
        k = k - loc
        return np.where(k < 0, 1.0, np.where(k < 1, p + 0.0 * k, 0.0))

    def entropy(self, p, loc=0):
        return -_sp.xlogy(p, p) - _sp.xlog1py(1 - p, -p) + 0 * loc

    def mean(self, p, loc=0):
        return p + loc

    def var(self, p, loc=0):
        return p * (1 - p) + 0.0 * loc


class _Geom(_Discrete):
    """The geometric distribution: ``geom.logpmf(k, p, loc=0)``, trials up to the first success (k ≥ 1)."""

    name = "geom"
    _scipy = _stats.geom

    def logpmf(self, k, p, loc=0):
        k, whole, kk = _count(k, loc)
        inside = whole & (k >= 1)
        kk = np.where(inside, kk, 1)
        return np.where(inside, _sp.xlog1py(kk - 1, -p) + np.log(p), -np.inf)

    def cdf(self, k, p, loc=0):
        k = np.floor(k - loc)
        kk = np.where(k >= 1, k, 1)
        return np.where(k >= 1, -np.expm1(kk * np.log1p(-p)), 0.0)

    def sf(self, k, p, loc=0):
        k = np.floor(k - loc)
        kk = np.where(k >= 1, k, 0)
        return np.where(k >= 1, np.exp(kk * np.log1p(-p)), 1.0)

    def mean(self, p, loc=0):
        return 1 / p + loc

    def var(self, p, loc=0):
        return (1 - p) / (p * p) + 0.0 * loc


expon = _Expon()
lognorm = _Lognorm()
laplace = _Laplace()
cauchy = _Cauchy()
uniform = _Uniform()
logistic = _Logistic()
halfnorm = _Halfnorm()
invgamma = _Invgamma()
weibull_min = _WeibullMin()
pareto = _Pareto()
binom = _Binom()
nbinom = _Nbinom()
bernoulli = _Bernoulli()
geom = _Geom()

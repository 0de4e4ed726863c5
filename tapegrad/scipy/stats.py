"""scipy.stats distributions with gradients: norm, t, gamma, beta, chi2, poisson, dirichlet and
multivariate_normal, with scipy's names and signatures.

``tapegrad.scipy.stats.norm.logpdf(x, loc, scale)`` takes the arguments of
``scipy.stats.norm.logpdf`` and returns the same values (broadcasting as scipy does), but is
written with numpy and scipy.special calls that traced values go through, so it is
differentiable in `x`, `loc`, `scale` and the shape parameters (to any order, except through
the cdfs described below). scipy's own methods convert their inputs with ``np.asarray`` and
cannot see traced values.

The cdf and sf of t and beta go through ``scipy.special.betainc``, and those of gamma, chi2 and
poisson through ``gammainc``/``gammaincc``, whose shape parameters are differentiated by
quadrature (first order only: a second derivative in a shape parameter raises ``NoRuleError``;
in `x`, `loc` and `scale` any order). poisson.entropy sums the pmf (see
`poisson_mean_gammaln`); it stays accurate where scipy's own sum stops converging (μ above
about 1000). multivariate_normal.cdf and logcdf take plain values only: scipy integrates
them by randomized quasi-Monte Carlo, and a traced argument raises ``NoRuleError``.
Outside a distribution's support the densities are 0 (log-densities -inf), as in scipy.

Each distribution also differentiates its moments (``mean``, ``var``, ``std``; dirichlet's
``cov``) and norm its quantiles (``ppf``, ``isf``, ``median``, ``interval``, ``stats``), and
offers every other attribute and method of scipy's distribution of the same name (``rvs``,
``fit``, ``gamma.ppf``, ``random_state``, ...): those are scipy's own, on plain values, and a
traced argument raises ``NoRuleError`` naming the method. Calling a distribution freezes it
as in scipy: ``norm(loc, scale).logpdf(x)`` is ``norm.logpdf(x, loc, scale)``, differentiable
in the frozen parameters too.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy.stats import norm
>>> float(norm.logpdf(0.0))  # -log √(2π)
-0.9189385332046727
>>> tapegrad.gradient(lambda mu: norm.logpdf(1.0, mu, 2.0), 0.0)[0]  # (x - μ) / σ²
0.25
>>> tapegrad.gradient(lambda s: norm(1.0, s).ppf(0.975), 2.0)[0]  # z₀.₉₇₅
1.959963984540054
>>> norm.rvs(size=3, random_state=0).round(3)  # scipy's own, on plain values
array([1.764, 0.4  , 0.979])
"""
from __future__ import annotations

import functools
import importlib
import math

import numpy as np
import scipy.special as _sp

import scipy.stats as _stats

from ..context import primitive
from ..errors import NoRuleError, type_str, user_location
from ..pytree import Boxed, find_nested

__all__ = ["norm", "t", "gamma", "beta", "chi2", "poisson", "dirichlet", "multivariate_normal",
           # in tapegrad.scipy.stats_more, which builds on the classes here: read at first use
           "expon", "lognorm", "laplace", "cauchy", "uniform", "logistic", "halfnorm", "invgamma", "weibull_min",
           "pareto", "binom", "nbinom", "bernoulli", "geom"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


# --- scipy's own methods, and frozen distributions ---


def _plain(v):
    """The plain value a traced or dual value stands for (itself for a plain one)."""
    while isinstance(v, Boxed):
        v = v._val
    return v


def _traced(*values) -> bool:
    """True when a traced or dual value is among `values` (inside lists, tuples and dicts' values too)."""
    return find_nested([list(v.values()) if isinstance(v, dict) else v for v in values], Boxed) is not None


def _describe(args, kwargs=None) -> str:
    """``traced float64[3], float64, scale=traced float64``: the arguments of a call, as errors show them."""
    def one(a):
        return f"traced {type_str(_plain(a))}" if isinstance(a, Boxed) else type_str(a)
    return ", ".join([one(a) for a in args] + [f"{k}={one(v)}" for k, v in (kwargs or {}).items()])


def _refuse_traced(call, args, kwargs, reason, params=()):
    """Raise `NoRuleError` for `call` ("tapegrad.scipy.stats.norm.rvs") if a traced value is among
    its arguments (or among `params`, a frozen distribution's): `reason` says why it has no
    derivative and what to do."""
    if _traced(args, kwargs, *params):
        raise NoRuleError(f"tapegrad has no derivative of {call}({_describe(args, kwargs)}) at "
                          f"{user_location()}: {reason}")


def _scipys_own(method, call, scipy_name, dist, params=()):
    """scipy's `method` as an attribute of the tapegrad distribution `dist`: scipy's own on plain
    values; a traced argument (or frozen parameter, in `params`) raises, naming `call` and the
    methods that are differentiated."""
    advice = ""
    if scipy_name.endswith(".rvs") and isinstance(dist, _Distribution):
        advice = ("; for samples differentiable in loc and scale (the reparameterization trick), draw "
                  "them with loc=0, scale=1 and transform them: loc + scale * sample")
    reason = (f"it is {scipy_name}, scipy's own, which tapegrad does not differentiate (scipy converts "
              f"its arguments to plain arrays). Call it on plain values; tapegrad differentiates "
              f"{dist.name}'s {', '.join(sorted(dist._differentiable))}{advice}")

    @functools.wraps(method)
    def scipys_own(*args, **kwargs):
        _refuse_traced(call, args, kwargs, reason, params)
        return method(*args, **kwargs)

    scipys_own.plain_values_only = True  # docs/rules.md says so
    return scipys_own


class _ScipyDistribution:
    """A distribution with scipy's name: its own methods are differentiable, and every other
    public attribute of scipy's distribution (`_scipy`) is scipy's, reached through it (setting
    one, ``random_state``, sets scipy's). Calling it freezes it, as in scipy."""

    name = ""
    _scipy = None
    #: the names of the methods written here, not scipy's own (freeze too)
    _own = frozenset()
    #: the methods that take traced values (not those that refuse them, nor freeze)
    _differentiable = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._own = frozenset(n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n)))
        cls._differentiable = frozenset(n for n in cls._own - {"freeze"}
                                        if not getattr(getattr(cls, n), "plain_values_only", False))

    def __getattr__(self, name):
        # only names this class does not define come here: scipy's own
        if name.startswith("_"):
            raise AttributeError(f"{self!r} has no attribute {name!r}")
        value = getattr(self._scipy, name)
        if callable(value):
            return _scipys_own(value, f"{self!r}.{name}", f"scipy.stats.{self.name}.{name}", self)
        return value

    def __setattr__(self, name, value):
        if not name.startswith("_") and not hasattr(type(self), name) and hasattr(self._scipy, name):
            setattr(self._scipy, name, value)  # scipy's own state (random_state): scipy's object keeps it
        else:
            object.__setattr__(self, name, value)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | {n for n in dir(self._scipy) if not n.startswith("_")})

    def __call__(self, *args, **kwds):
        return _Frozen(self, args, kwds)

    def __repr__(self):
        return f"tapegrad.scipy.stats.{self.name}"


class _Frozen:
    """A distribution with its parameters fixed, ``tapegrad.scipy.stats.norm(loc, scale)``, as
    scipy's frozen distributions: ``norm(loc, scale).logpdf(x)`` is ``norm.logpdf(x, loc, scale)``
    (differentiable in the parameters too), and the other attributes are those of scipy's frozen
    distribution, made from the parameters' values (a traced parameter makes them raise)."""

    def __init__(self, dist, args, kwds):
        object.__setattr__(self, "dist", dist)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwds", kwds)

    def _scipys(self):
        """scipy's frozen distribution, made once, of the parameters' plain values."""
        frozen = self.__dict__.get("_scipy_frozen")
        if frozen is None:
            plain = [_plain(a) for a in self.args]
            frozen = self.dist._scipy(*plain, **{k: _plain(v) for k, v in self.kwds.items()})
            object.__setattr__(self, "_scipy_frozen", frozen)
        return frozen

    def __getattr__(self, name):
        if name.startswith("_") or name in ("dist", "args", "kwds"):  # (not yet set: a copy being made)
            raise AttributeError(f"frozen distribution has no attribute {name!r}")
        if name in self.dist._own - {"freeze"}:
            method = getattr(self.dist, name)

            @functools.wraps(method)
            def frozen(*args, **kwds):
                return method(*args, *self.args, **{**self.kwds, **kwds})
            return frozen
        value = getattr(self._scipys(), name)
        if callable(value):
            return _scipys_own(value, f"{self!r}.{name}", f"scipy.stats.{self.dist.name}(...).{name}", self.dist,
                               (self.args, self.kwds))
        if isinstance(value, (float, np.ndarray, np.generic)) and _traced(self.args, self.kwds):
            raise NoRuleError(
                f"tapegrad has no derivative of {self!r}.{name} at {user_location()}: it is scipy's own "
                f"attribute, made of the parameters' values. Read it from the parameters you passed, "
                f"or use the differentiable methods: {', '.join(sorted(self.dist._differentiable))}")
        return value

    def __setattr__(self, name, value):
        setattr(self._scipys(), name, value)  # scipy's own state (random_state)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | {n for n in dir(self._scipys()) if not n.startswith("_")}
                      | (self.dist._own - {"freeze"}))

    def __repr__(self):
        if _traced(self.args, self.kwds):
            return f"{self.dist!r}({_describe(self.args, self.kwds)})"
        return f"{self.dist!r}({', '.join([repr(a) for a in self.args] + [f'{k}={v!r}' for k, v in self.kwds.items()])})"


def _z(x, loc, scale):
    return (x - loc) / scale


def _on_support(inside, z, expr, outside):
    """`expr(z)` where `inside`, `outside` elsewhere; `expr` sees a harmless 0.5 off the support
    (so that neither the value nor its derivative there is nan)."""
    return np.where(inside, expr(np.where(inside, z, 0.5)), outside)


class _Univariate(_ScipyDistribution):
    """A distribution of scipy.stats' rv_continuous / rv_discrete kind: freeze, and std from var."""

    def freeze(self, *args, **kwds):
        """The distribution with its parameters fixed, as calling it does (scipy's freeze)."""
        return self(*args, **kwds)

    def std(self, *args, **kwds):
        return np.sqrt(self.var(*args, **kwds))


class _Distribution(_Univariate):
    """The methods every continuous distribution here derives from its logpdf, cdf and sf."""

    def pdf(self, x, *args, **kwargs):
        return np.exp(self.logpdf(x, *args, **kwargs))

    def logcdf(self, x, *args, **kwargs):
        return np.log(self.cdf(x, *args, **kwargs))

    def logsf(self, x, *args, **kwargs):
        return np.log(self.sf(x, *args, **kwargs))


# --- normal ---


class _Norm(_Distribution):
    """The normal distribution: ``norm.logpdf(x, loc=0, scale=1)`` and the rest as in scipy.

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.stats import norm
    >>> tapegrad.gradient(lambda s: norm.logpdf(0.0, 0.0, s), 2.0)[0]  # -1/σ at x = μ
    -0.5
    """

    name = "norm"
    _scipy = _stats.norm

    def logpdf(self, x, loc=0, scale=1):
        z = _z(x, loc, scale)
        return -0.5 * (z * z) - np.log(scale) - _HALF_LOG_2PI

    def cdf(self, x, loc=0, scale=1):
        return _sp.ndtr(_z(x, loc, scale))

    def logcdf(self, x, loc=0, scale=1):
        return _sp.log_ndtr(_z(x, loc, scale))

    def sf(self, x, loc=0, scale=1):
        return _sp.ndtr(-_z(x, loc, scale))

    def logsf(self, x, loc=0, scale=1):
        return _sp.log_ndtr(-_z(x, loc, scale))

    def entropy(self, loc=0, scale=1):
        return 0.5 + _HALF_LOG_2PI + np.log(scale) + 0 * loc

    def ppf(self, q, loc=0, scale=1):
        return loc + scale * _sp.ndtri(q)

    def isf(self, q, loc=0, scale=1):
        return loc - scale * _sp.ndtri(q)

    def median(self, loc=0, scale=1):
        return self.ppf(0.5, loc, scale)

    def interval(self, confidence, loc=0, scale=1):
        if np.any((confidence > 1) | (confidence < 0)):
            raise ValueError("alpha must be between 0 and 1 inclusive")  # scipy's words
        return self.ppf((1.0 - confidence) / 2, loc, scale), self.ppf((1.0 + confidence) / 2, loc, scale)

    def mean(self, loc=0, scale=1):
        return loc + 0.0 * scale

    def var(self, loc=0, scale=1):
        return scale * scale + 0.0 * loc

    def stats(self, loc=0, scale=1, moments="mv"):
        zero = 0.0 * (loc + scale)  # skewness and excess kurtosis, in the parameters' shape
        out = [v for m, v in [("m", self.mean(loc, scale)), ("v", self.var(loc, scale)), ("s", zero), ("k", zero)]
               if m in moments]
        return out[0] if len(out) == 1 else tuple(out)


# --- Student's t ---


class _T(_Distribution):
    """Student's t distribution: ``t.logpdf(x, df, loc=0, scale=1)``; cdf and sf through betainc
    (differentiable in df by quadrature, first order only).

    Examples
    --------
    >>> from tapegrad.scipy.stats import t
    >>> float(t.cdf(0.0, 3.0))
    0.5
    """

    name = "t"
    _scipy = _stats.t

    def logpdf(self, x, df, loc=0, scale=1):
        z = _z(x, loc, scale)
        half = (df + 1) / 2
        return (_sp.gammaln(half) - _sp.gammaln(df / 2) - 0.5 * np.log(df * math.pi) - np.log(scale)
                - half * np.log1p(z * z / df))

    def cdf(self, x, df, loc=0, scale=1):
        z = _z(x, loc, scale)
        # the tail beyond |z| is I_{df/(df + z²)}(df/2, 1/2) / 2
        tail = 0.5 * _sp.betainc(df / 2, 0.5, df / (df + z * z))
        return np.where(z > 0, 1 - tail, tail)

    def sf(self, x, df, loc=0, scale=1):
        return self.cdf(-_z(x, loc, scale), df)

    def entropy(self, df, loc=0, scale=1):
        half = (df + 1) / 2
        return (half * (_sp.digamma(half) - _sp.digamma(df / 2))
                + 0.5 * np.log(df) + _sp.betaln(df / 2, 0.5) + np.log(scale) + 0 * loc)

    def mean(self, df, loc=0, scale=1):
        return np.where(df > 1, loc + 0.0 * (df + scale), np.inf)  # as scipy: inf where df ≤ 1

    def var(self, df, loc=0, scale=1):
        # df/(df - 2) σ² for df > 2; as scipy: inf for 1 < df ≤ 2, nan for df ≤ 1
        finite = df > 2
        return np.where(finite, scale * scale * df / np.where(finite, df - 2, 1.0) + 0.0 * loc,
                        np.where(df > 1, np.inf, np.nan))


# --- gamma and chi-squared ---


class _Gamma(_Distribution):
    """The gamma distribution: ``gamma.logpdf(x, a, loc=0, scale=1)``; cdf and sf through
    gammainc/gammaincc (differentiable in a by quadrature, first order only).

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.stats import gamma
    >>> round(tapegrad.gradient(lambda a: gamma.logpdf(1.0, a), 1.0)[0], 12)  # -ψ(1) = γ
    0.577215664902
    """

    name = "gamma"
    _scipy = _stats.gamma

    def logpdf(self, x, a, loc=0, scale=1):
        z = _z(x, loc, scale)
        return _on_support(z >= 0, z, lambda z: _sp.xlogy(a - 1, z) - z - _sp.gammaln(a), -np.inf) - np.log(scale)

    def cdf(self, x, a, loc=0, scale=1):
        z = _z(x, loc, scale)
        return _on_support(z >= 0, z, lambda z: _sp.gammainc(a, z), 0.0)

    def sf(self, x, a, loc=0, scale=1):
        z = _z(x, loc, scale)
        return _on_support(z >= 0, z, lambda z: _sp.gammaincc(a, z), 1.0)

    def entropy(self, a, loc=0, scale=1):
        return a + _sp.gammaln(a) + (1 - a) * _sp.digamma(a) + np.log(scale) + 0 * loc

    def mean(self, a, loc=0, scale=1):
        return a * scale + loc

    def var(self, a, loc=0, scale=1):
        return a * scale * scale + 0.0 * loc


class _Chi2(_Distribution):
    """The chi-squared distribution: ``chi2.logpdf(x, df, loc=0, scale=1)``, the gamma
    distribution with shape df/2 and scale 2·scale.

    Examples
    --------
    >>> from tapegrad.scipy.stats import chi2
    >>> round(float(chi2.cdf(2.0, 2.0)), 12)  # 1 - e⁻¹
    0.632120558829
    """

    name = "chi2"
    _scipy = _stats.chi2

    def logpdf(self, x, df, loc=0, scale=1):
        return gamma.logpdf(x, df / 2, loc, 2 * scale)

    def cdf(self, x, df, loc=0, scale=1):
        return gamma.cdf(x, df / 2, loc, 2 * scale)

    def sf(self, x, df, loc=0, scale=1):
        return gamma.sf(x, df / 2, loc, 2 * scale)

    def entropy(self, df, loc=0, scale=1):
        return gamma.entropy(df / 2, loc, 2 * scale)

    def mean(self, df, loc=0, scale=1):
        return gamma.mean(df / 2, loc, 2 * scale)

    def var(self, df, loc=0, scale=1):
        return gamma.var(df / 2, loc, 2 * scale)


# --- beta ---


class _Beta(_Distribution):
    """The beta distribution: ``beta.logpdf(x, a, b, loc=0, scale=1)``; cdf and sf through
    betainc (differentiable in a and b by quadrature, first order only).

    Examples
    --------
    >>> from tapegrad.scipy.stats import beta
    >>> float(beta.pdf(0.5, 2.0, 2.0))  # 6 x (1 - x)
    1.5
    """

    name = "beta"
    _scipy = _stats.beta

    def logpdf(self, x, a, b, loc=0, scale=1):
        z = _z(x, loc, scale)
        inside = (z >= 0) & (z <= 1)
        density = _on_support(inside, z, lambda z: _sp.xlogy(a - 1, z) + _sp.xlog1py(b - 1, -z) - _sp.betaln(a, b),
                              -np.inf)
        return density - np.log(scale)

    def cdf(self, x, a, b, loc=0, scale=1):
        z = np.clip(_z(x, loc, scale), 0.0, 1.0)
        return _sp.betainc(a, b, z)

    def sf(self, x, a, b, loc=0, scale=1):
        return 1 - self.cdf(x, a, b, loc, scale)

    def entropy(self, a, b, loc=0, scale=1):
        return (_sp.betaln(a, b) - (a - 1) * _sp.digamma(a) - (b - 1) * _sp.digamma(b)
                + (a + b - 2) * _sp.digamma(a + b) + np.log(scale) + 0 * loc)

    def mean(self, a, b, loc=0, scale=1):
        return a / (a + b) * scale + loc

    def var(self, a, b, loc=0, scale=1):
        total = a + b
        return a * b / (total * total * (total + 1)) * scale * scale + 0.0 * loc


# --- Poisson ---


def _poisson_mean_gammaln_one(mu, m):
    """E[log Γ(K + m)] for K ~ Poisson(μ), summed over the k where the pmf is not negligible
    (12 standard deviations and 40 more on the right, beyond which it is below 1e-30).

    The pmf goes by its ratios p(k+1)/p(k) = μ/(k+1) out from the mode and over its own sum
    (exp(k log μ - μ - log k!) would lose ten digits at μ = 1e4 to the cancelling terms), and
    log Γ(k + m) is centred on log Γ(μ + m).
    """
    if not mu >= 0 or np.isinf(mu):
        return np.nan
    if mu == 0:
        return float(_sp.gammaln(m))
    spread = 12 * math.sqrt(mu)
    lo, mode, hi = max(0, math.floor(mu - spread - 20)), math.floor(mu), math.ceil(mu + spread + 40)
    up = np.cumprod(mu / np.arange(mode + 1, hi + 1))          # p(k)/p(mode), k = mode+1 .. hi
    down = np.cumprod(np.arange(mode, lo, -1) / mu)[::-1]      # p(k)/p(mode), k = lo .. mode-1
    pmf = np.concatenate([down, [1.0], up])
    k = np.arange(lo, hi + 1, dtype=np.float64)
    centre = _sp.gammaln(mu + m)
    return float(centre + np.sum(pmf * (_sp.gammaln(k + m) - centre)) / np.sum(pmf))


@primitive(traceable=False)
def poisson_mean_gammaln(mu, m):
    """E[log Γ(K + m)] for K ~ Poisson(μ), elementwise in `mu`; `m` is a positive integer.

    poisson.entropy is μ - μ log μ + E[log K!] = μ - μ log μ + poisson_mean_gammaln(μ, 1).
    Since d/dμ E[f(K)] = E[f(K + 1) - f(K)], its derivative in μ is
    ``poisson_mean_gammaln(mu, m + 1) - poisson_mean_gammaln(mu, m)`` (= E[log(K + m)]), the
    same primitive: the rule in ``tapegrad.rules.stats`` is traced again at any order.

    Examples
    --------
    >>> from tapegrad.scipy.stats import poisson_mean_gammaln
    >>> float(poisson_mean_gammaln(0.0, 3))  # K = 0: log Γ(3) = log 2
    0.6931471805599453
    """
    mu = np.asarray(mu, dtype=np.float64)
    out = np.array([_poisson_mean_gammaln_one(v, m) for v in mu.ravel()]).reshape(mu.shape)
    return out[()] if out.ndim == 0 else out



class _Poisson(_Univariate):
    """The Poisson distribution: ``poisson.logpmf(k, mu, loc=0)``, pmf, cdf, logcdf, sf, logsf
    and entropy, differentiable in mu (k is a count).

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.stats import poisson
    >>> tapegrad.gradient(lambda mu: poisson.logpmf(3, mu), 2.0)[0]  # k/μ - 1
    0.5
    """

    name = "poisson"
    _scipy = _stats.poisson

    def logpmf(self, k, mu, loc=0):
        k = k - loc
        whole = (k >= 0) & (k == np.floor(k))
        return np.where(whole, _sp.xlogy(k, mu) - _sp.gammaln(np.where(whole, k, 0) + 1) - mu, -np.inf)

    def pmf(self, k, mu, loc=0):
        return np.exp(self.logpmf(k, mu, loc))

    def cdf(self, k, mu, loc=0):
        k = np.floor(k - loc)
        # P(K ≤ k) = Q(k + 1, μ), the regularized upper incomplete gamma function
        return np.where(k >= 0, _sp.gammaincc(np.where(k >= 0, k, 0) + 1, mu), 0.0)

    def sf(self, k, mu, loc=0):
        k = np.floor(k - loc)
        return np.where(k >= 0, _sp.gammainc(np.where(k >= 0, k, 0) + 1, mu), 1.0)

    def logcdf(self, k, mu, loc=0):
        return np.log(self.cdf(k, mu, loc))

    def logsf(self, k, mu, loc=0):
        return np.log(self.sf(k, mu, loc))

    def entropy(self, mu, loc=0):
        # -Σ p log p with log p = k log μ - μ - log k!: μ - μ log μ + E[log K!]
        return mu - _sp.xlogy(mu, mu) + poisson_mean_gammaln(mu, 1) + 0 * loc

    def mean(self, mu, loc=0):
        return mu + loc

    def var(self, mu, loc=0):
        return mu + 0.0 * loc


# --- Dirichlet ---


def _log_beta(alpha):
    """log B(α) = Σ log Γ(αᵢ) - log Γ(Σ αᵢ)."""
    return np.sum(_sp.gammaln(alpha)) - _sp.gammaln(np.sum(alpha))


class _Dirichlet(_ScipyDistribution):
    """The Dirichlet distribution: ``dirichlet.logpdf(x, alpha)`` with the components along the
    first axis of x, as in scipy (x of shape (K,) or (K, N)), pdf and entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.stats import dirichlet
    >>> float(dirichlet.pdf(np.array([0.5, 0.5]), np.array([1.0, 1.0])))  # uniform on the simplex
    1.0
    """

    name = "dirichlet"
    _scipy = _stats.dirichlet

    def logpdf(self, x, alpha):
        return np.sum(np.transpose(_sp.xlogy(alpha - 1, np.transpose(x))), axis=0) - _log_beta(alpha)

    def pdf(self, x, alpha):
        return np.exp(self.logpdf(x, alpha))

    def entropy(self, alpha):
        total = np.sum(alpha)
        k = np.shape(alpha)[-1]
        return (_log_beta(alpha) + (total - k) * _sp.digamma(total)
                - np.sum((alpha - 1) * _sp.digamma(alpha)))

    def mean(self, alpha):
        return alpha / np.sum(alpha)

    def var(self, alpha):
        total = np.sum(alpha)
        return alpha * (total - alpha) / (total * total * (total + 1))

    def cov(self, alpha):
        share = alpha / np.sum(alpha)
        return (np.diag(share) - np.outer(share, share)) / (np.sum(alpha) + 1)


# --- multivariate normal ---


class _MultivariateNormal(_ScipyDistribution):
    """The multivariate normal distribution: ``multivariate_normal.logpdf(x, mean=None, cov=1)``
    with the dimension along the last axis of x, pdf and entropy (cdf and logcdf on plain values
    only); `cov` a matrix, a vector (its
    diagonal) or a number (times the identity), as in scipy.

    The gradient with respect to `cov` is that of the formula with the whole matrix (scipy reads
    a symmetric matrix); for a symmetric perturbation it is the exact one.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.stats import multivariate_normal
    >>> tapegrad.gradient(lambda x: multivariate_normal.logpdf(x, np.zeros(2), 4.0), np.ones(2))[0]
    array([-0.25, -0.25])
    """

    name = "multivariate_normal"
    _scipy = _stats.multivariate_normal

    def _cov(self, cov, d):
        if np.ndim(cov) < 2:  # a number times the identity, or the diagonal
            return np.eye(d) * cov
        return cov

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        d = np.shape(x)[-1] if np.ndim(x) else 1
        dev = x if mean is None else x - mean
        c = self._cov(cov, d)
        _, logdet = np.linalg.slogdet(c)
        sol = np.linalg.solve(c, np.reshape(dev, (-1, d)).T).T
        maha = np.sum(np.reshape(dev, (-1, d)) * sol, axis=-1)
        out = -0.5 * (maha + logdet + d * math.log(2 * math.pi))
        return np.reshape(out, np.shape(dev)[:-1]) if np.ndim(dev) > 1 else out[0]

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        return np.exp(self.logpdf(x, mean, cov, allow_singular))

    def cdf(self, x, mean=None, cov=1, allow_singular=False, **kwargs):
        """scipy's value on plain arguments; a traced one raises `NoRuleError` (see `logcdf`)."""
        self._refuse_traced("cdf", (x, mean, cov))
        return _stats.multivariate_normal.cdf(x, mean, cov, allow_singular, **kwargs)

    def logcdf(self, x, mean=None, cov=1, allow_singular=False, **kwargs):
        """scipy's value on plain arguments. A traced argument raises `NoRuleError`: scipy
        integrates the density by randomized quasi-Monte Carlo (Genz), to about 1e-5 only, with
        no derivative to follow."""
        self._refuse_traced("logcdf", (x, mean, cov))
        return _stats.multivariate_normal.logcdf(x, mean, cov, allow_singular, **kwargs)

    cdf.plain_values_only = logcdf.plain_values_only = True  # docs/rules.md says so

    def _refuse_traced(self, method, args):
        _refuse_traced(f"{self!r}.{method}", args, None,
                       f"scipy computes it by randomized quasi-Monte Carlo integration, accurate to about "
                       f"1e-5, which has no derivative to follow. Call it on plain values, outside the "
                       f"differentiated function; in one dimension use tapegrad.scipy.stats.norm.{method}")

    def entropy(self, mean=None, cov=1):
        d = np.shape(mean)[-1] if mean is not None and np.ndim(mean) else (np.shape(cov)[-1] if np.ndim(cov) else 1)
        _, logdet = np.linalg.slogdet(self._cov(cov, d))
        return 0.5 * (logdet + d * (1 + math.log(2 * math.pi)))


norm = _Norm()
t = _T()
gamma = _Gamma()
chi2 = _Chi2()
beta = _Beta()
poisson = _Poisson()
dirichlet = _Dirichlet()
multivariate_normal = _MultivariateNormal()


# --- the distributions of tapegrad.scipy.stats_more, under this module's name ---

#: the building blocks stats_more uses, by public names
Distribution, Univariate, z_score, on_support = _Distribution, _Univariate, _z, _on_support


def __getattr__(name):
    """``tapegrad.scipy.stats.expon`` and the others of `tapegrad.scipy.stats_more` (which imports
    this module for its classes: read here at first use, not imported back)."""
    more = importlib.import_module(f"{__package__}.stats_more")
    if name in more.__all__:
        return getattr(more, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

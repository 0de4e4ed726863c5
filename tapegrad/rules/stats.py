"""Rules for the primitives of tapegrad.scipy.stats: the Poisson expectation its entropy sums."""
from __future__ import annotations

from ..registry import partials, rrule
from ..scipy.stats import poisson_mean_gammaln
from ..tangents import NO_TANGENT, Thunk


@rrule(poisson_mean_gammaln, formula=partials("(poisson_mean_gammaln({a[0]}, {a[1]} + 1) - {y})", None))
def poisson_mean_gammaln_rrule(mu, m):
    """tapegrad.scipy.stats.poisson_mean_gammaln: its derivative in mu is itself at m + 1 minus itself at m."""

    def poisson_mean_gammaln_pullback(dy):
        # d/dμ E[f(K)] = E[f(K + 1) - f(K)] for K ~ Poisson(μ); traced again at second order
        return (NO_TANGENT, Thunk(lambda: dy * (poisson_mean_gammaln(mu, m + 1) - poisson_mean_gammaln(mu, m))),
                NO_TANGENT)

    return poisson_mean_gammaln(mu, m), poisson_mean_gammaln_pullback

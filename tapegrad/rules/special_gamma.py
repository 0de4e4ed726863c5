"""Rules for the functions of scipy.special built on the gamma function: binom and poch of real
arguments, and loggamma, also of complex ones.

binom(n, k) = Γ(n+1)/(Γ(k+1)Γ(n-k+1)) and poch(z, m) = Γ(z+m)/Γ(z) are differentiated in every
argument by their log-derivatives, differences of digammas (where the gammas are finite: at
their poles scipy's values are limits, and so are the slopes there only where the digammas'
poles cancel). loggamma is log Γ on the principal branch, holomorphic off the negative real
axis: its slope is ψ(z) for real and complex z alike (autograd's convention: the pullback of a
complex argument is ȳ·ψ(z), with no conjugate). Its second derivative is ψ′, which tapegrad has
for real values only: a second derivative of loggamma at a complex value raises
ComplexValueError (at digamma) instead of a number.
"""
from __future__ import annotations

import scipy.special as sp

from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk

# --- gamma function quotients ---


@rrule(sp.binom, formula=partials("{y}·(ψ({a[0]} + 1) - ψ({a[0]} - {a[1]} + 1))",
                                  "{y}·(ψ({a[0]} - {a[1]} + 1) - ψ({a[1]} + 1))"))
def binom_rrule(n, k):
    """binom(n, k) = Γ(n+1)/(Γ(k+1)Γ(n-k+1)): ∂n: binom·(ψ(n+1) - ψ(n-k+1)); ∂k: binom·(ψ(n-k+1) - ψ(k+1))."""
    y = sp.binom(n, k)

    def binom_pullback(dy):
        dlog = dy * y
        psi_rest = sp.digamma(n - k + 1)
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dlog * (sp.digamma(n + 1) - psi_rest), n)),
                Thunk(lambda: unbroadcast(dlog * (psi_rest - sp.digamma(k + 1)), k)))

    return y, binom_pullback


@rrule(sp.poch, formula=partials("{y}·(ψ({a[0]} + {a[1]}) - ψ({a[0]}))", "{y}·ψ({a[0]} + {a[1]})"))
def poch_rrule(z, m):
    """poch(z, m) = Γ(z+m)/Γ(z): ∂z: poch·(ψ(z+m) - ψ(z)); ∂m: poch·ψ(z+m)."""
    y = sp.poch(z, m)

    def poch_pullback(dy):
        dlog = dy * y
        psi_sum = sp.digamma(z + m)
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dlog * (psi_sum - sp.digamma(z)), z)),
                Thunk(lambda: unbroadcast(dlog * psi_sum, m)))

    return y, poch_pullback


@rrule(sp.loggamma, complex=True, formula=partials("ψ({a[0]})"))
def loggamma_rrule(z):
    """log Γ(z) on the principal branch: ψ(z), for real x > 0 and complex z off the negative real axis."""

    def loggamma_pullback(dy):
        # holomorphic: ȳ·ψ(z) (the real part for a real z is taken by the sweep)
        return NO_TANGENT, dy * sp.digamma(z)

    return sp.loggamma(z), loggamma_pullback

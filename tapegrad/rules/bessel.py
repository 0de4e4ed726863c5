"""Rules for the Bessel functions of scipy.special with a real order: jv, yv, iv, ive, kv, yn
and the fixed orders j0, j1, y0, y1.

Their derivatives in x are recurrences of neighbouring orders (``J'ᵥ = (Jᵥ₋₁ - Jᵥ₊₁) / 2``
and its kin), written with the same ufuncs so that the pullbacks are traced again at second
order. The derivative with respect to a real order v has no closed form: it is computed
(for x > 0; nan elsewhere) by quadrature of the integral representations (DLMF 10.9.6 for Jᵥ,
10.9.7 for Yᵥ, 10.32.4 for Iᵥ, 10.32.9 for Kᵥ) differentiated under the integral sign, or,
where Jᵥ or Iᵥ is small against its integrands (v > -1 and x small against v), by the power
series Σₖ (±1)ᵏ (x/2)²ᵏ⁺ᵛ (log(x/2) - ψ(k+v+1)) / (k! Γ(k+v+1)); both to about 1e-13 relative
to the function's scale, except where Jᵥ is exponentially small but the series cancels (x a
little below a large v, e.g. v = 150, x = 100), where the error is about 1e-18 absolute. These are primitives without rules of their own (`jv_dv`, `yv_dv`,
`iv_dv`, `ive_dv`, `kv_dv`, `kve_dv`): a second derivative in the order raises `NoRuleError`.
The order is read only when it is differentiated: a constant order (the usual case) costs nothing.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.special as sp

from ..context import primitive
from ..onimport import OnFirstUse
from ..registry import partials, rrule
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk

_integrate = OnFirstUse("scipy.integrate")  # (imported at the first quadrature: see tapegrad.onimport)

# --- derivatives in the order, at one point (x > 0) ---

_QUAD = {"epsabs": 1e-15, "epsrel": 1e-12, "limit": 400}


def _quad(f, lo, hi):
    # exp(-x sinh t) and its kin underflow to 0 (and sinh t overflows) far out: both harmless;
    # quad's roundoff warning comes where the result is already within ~1e-15 of the integrals' scale
    with np.errstate(over="ignore", invalid="ignore", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", _integrate.IntegrationWarning)
        return _integrate.quad(f, lo, hi, **_QUAD)[0]


def _series_dv(v, x, sign, limit):
    """∂/∂v of Σₖ signᵏ (x/2)²ᵏ⁺ᵛ / (k! Γ(k+v+1)) (Jᵥ for sign -1, Iᵥ for +1), v > -1, or None
    once the magnitudes of its terms add up past `limit` (its rounding, relative to them, would
    then exceed the quadrature's)."""
    log_h, h2 = np.log(x / 2), (x / 2) ** 2
    total, size, k = 0.0, 0.0, 0
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        term = np.exp(v * log_h - sp.gammaln(v + 1))  # (x/2)ᵛ / Γ(v+1)
        while True:
            piece = term * (log_h - sp.digamma(k + v + 1))
            total, size = total + piece, size + abs(piece)
            if not size <= limit:
                return None
            if (k > 2 and abs(term) < 1e-17 * abs(total)) or k > 500:
                return total
            k += 1
            term *= sign * h2 / (k * (k + v))


def _jv_dv_one(v, x):
    if not x > 0:
        return np.nan
    if v > -1:
        total = _series_dv(v, x, -1.0, 10.0)  # below 10, its rounding is below the quadrature's (~1e-15)
        if total is not None:
            return total
    s, c = np.sin(v * np.pi), np.cos(v * np.pi)
    # Jᵥ(x) = ∫₀^π cos(x sin θ - vθ) dθ/π - sin(vπ)/π ∫₀^∞ exp(-x sinh t - vt) dt
    head = _quad(lambda th: th * np.sin(x * np.sin(th) - v * th), 0.0, np.pi) / np.pi
    tail = _quad(lambda t: np.exp(-x * np.sinh(t) - v * t), 0.0, np.inf)
    tail_t = _quad(lambda t: t * np.exp(-x * np.sinh(t) - v * t), 0.0, np.inf) if s != 0 else 0.0
    return head - c * tail + s / np.pi * tail_t


def _yv_dv_one(v, x):
    if not x > 0:
        return np.nan
    s, c = np.sin(v * np.pi), np.cos(v * np.pi)
    # Yᵥ(x) = ∫₀^π sin(x sin θ - vθ) dθ/π - ∫₀^∞ (e^(vt) + e^(-vt) cos vπ) exp(-x sinh t) dt/π
    head = -_quad(lambda th: th * np.cos(x * np.sin(th) - v * th), 0.0, np.pi) / np.pi
    tail = _quad(lambda t: t * np.exp(v * t - x * np.sinh(t)) - (t * c + np.pi * s) * np.exp(-v * t - x * np.sinh(t)),
                 0.0, np.inf)
    return head - tail / np.pi


def _ive_dv_one(v, x):
    """∂/∂v of e⁻ˣ Iᵥ(x)."""
    if not x > 0:
        return np.nan
    if v > -1 and x < 600:  # (beyond, the series' terms would overflow before it is refused)
        total = _series_dv(v, x, 1.0, 10.0 * np.exp(x))
        if total is not None:
            return total * np.exp(-x)
    s, c = np.sin(v * np.pi), np.cos(v * np.pi)
    # Iᵥ(x) = ∫₀^π e^(x cos θ) cos(vθ) dθ/π - sin(vπ)/π ∫₀^∞ exp(-x cosh t - vt) dt, times e⁻ˣ
    head = -_quad(lambda th: th * np.exp(x * (np.cos(th) - 1)) * np.sin(v * th), 0.0, np.pi) / np.pi
    tail = _quad(lambda t: np.exp(-x * (np.cosh(t) + 1) - v * t), 0.0, np.inf)
    tail_t = _quad(lambda t: t * np.exp(-x * (np.cosh(t) + 1) - v * t), 0.0, np.inf) if s != 0 else 0.0
    return head - c * tail + s / np.pi * tail_t


def _kve_dv_one(v, x):
    """∂/∂v of eˣ Kᵥ(x): Kᵥ(x) = ∫₀^∞ exp(-x cosh t) cosh(vt) dt."""
    if not x > 0:
        return np.nan
    return _quad(lambda t: t * (np.exp(v * t - x * (np.cosh(t) - 1)) - np.exp(-v * t - x * (np.cosh(t) - 1))) / 2,
                 0.0, np.inf)


def _elementwise(one, v, x):
    v, x = np.broadcast_arrays(np.asarray(v, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.array([one(vi, xi) for vi, xi in zip(v.ravel(), x.ravel())]).reshape(v.shape)
    return out[()] if out.ndim == 0 else out


@primitive(traceable=False)
def jv_dv(v, x):
    """∂Jᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0.

    Examples
    --------
    >>> import numpy as np, scipy.special as sp
    >>> from tapegrad.rules.bessel import jv_dv
    >>> si, ci = sp.sici(2.0)  # at v = ½: √(2/πx) (Ci(2x) sin x - Si(2x) cos x), DLMF 10.15.3
    >>> bool(np.isclose(jv_dv(0.5, 1.0), np.sqrt(2 / np.pi) * (ci * np.sin(1.0) - si * np.cos(1.0)), rtol=1e-13))
    True
    """
    return _elementwise(_jv_dv_one, v, x)


@primitive(traceable=False)
def yv_dv(v, x):
    """∂Yᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0."""
    return _elementwise(_yv_dv_one, v, x)


@primitive(traceable=False)
def ive_dv(v, x):
    """∂ive(v, x)/∂v = e⁻ˣ ∂Iᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0."""
    return _elementwise(_ive_dv_one, v, x)


@primitive(traceable=False)
def iv_dv(v, x):
    """∂Iᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf where Iᵥ itself overflows
        return _elementwise(_ive_dv_one, v, x) * np.exp(np.asarray(x, dtype=np.float64))


@primitive(traceable=False)
def kve_dv(v, x):
    """∂kve(v, x)/∂v = eˣ ∂Kᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0."""
    return _elementwise(_kve_dv_one, v, x)


@primitive(traceable=False)
def kv_dv(v, x):
    """∂Kᵥ(x)/∂v, elementwise (broadcast); nan for x ≤ 0. At v = 0 it is 0 (K₋ᵥ = Kᵥ)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # as Kᵥ itself under- and overflows
        return _elementwise(_kve_dv_one, v, x) * np.exp(-np.asarray(x, dtype=np.float64))


# --- Bessel functions of the first and second kind ---


@rrule(sp.jv, formula=partials(
    "∂jv/∂{a[0]} (no closed form: by quadrature)",
    "(jv({a[0]} - 1, {a[1]}) - jv({a[0]} + 1, {a[1]}))/2",
))
def jv_rrule(v, x):
    """scipy.special.jv: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def jv_pullback(dy):
        # J'ᵥ(x) = (Jᵥ₋₁(x) - Jᵥ₊₁(x)) / 2
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * jv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * ((sp.jv(v - 1, x) - sp.jv(v + 1, x)) / 2), x)))

    return sp.jv(v, x), jv_pullback


@rrule(sp.yv, formula=partials(
    "∂yv/∂{a[0]} (no closed form: by quadrature)",
    "(yv({a[0]} - 1, {a[1]}) - yv({a[0]} + 1, {a[1]}))/2",
))
def yv_rrule(v, x):
    """scipy.special.yv: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def yv_pullback(dy):
        # Y'ᵥ(x) = (Yᵥ₋₁(x) - Yᵥ₊₁(x)) / 2
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * yv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * ((sp.yv(v - 1, x) - sp.yv(v + 1, x)) / 2), x)))

    return sp.yv(v, x), yv_pullback


@rrule(sp.yn, formula=partials(None, "(yn({a[0]} - 1, {a[1]}) - yn({a[0]} + 1, {a[1]}))/2"))
def yn_rrule(n, x):
    def yn_pullback(dy):
        # the order is an integer: Y'ₙ(x) = (Yₙ₋₁(x) - Yₙ₊₁(x)) / 2, of n truncated as scipy takes it
        k = np.trunc(n)
        return NO_TANGENT, NO_TANGENT, Thunk(lambda: unbroadcast(dy * ((sp.yn(k - 1, x) - sp.yn(k + 1, x)) / 2), x))

    return sp.yn(n, x), yn_pullback


@rrule(sp.j0, formula=partials("(-j1({a[0]}))"))
def j0_rrule(x):
    def j0_pullback(dy):
        # J₀' = -J₁
        return NO_TANGENT, dy * -sp.j1(x)

    return sp.j0(x), j0_pullback


@rrule(sp.j1, formula=partials("(j0({a[0]}) - jv(2, {a[0]}))/2"))
def j1_rrule(x):
    def j1_pullback(dy):
        # J₁' = (J₀ - J₂) / 2, finite at 0
        return NO_TANGENT, dy * ((sp.j0(x) - sp.jv(2, x)) / 2)

    return sp.j1(x), j1_pullback


@rrule(sp.y0, formula=partials("(-y1({a[0]}))"))
def y0_rrule(x):
    def y0_pullback(dy):
        # Y₀' = -Y₁
        return NO_TANGENT, dy * -sp.y1(x)

    return sp.y0(x), y0_pullback


@rrule(sp.y1, formula=partials("(y0({a[0]}) - yv(2, {a[0]}))/2"))
def y1_rrule(x):
    def y1_pullback(dy):
        # Y₁' = (Y₀ - Y₂) / 2
        return NO_TANGENT, dy * ((sp.y0(x) - sp.yv(2, x)) / 2)

    return sp.y1(x), y1_pullback


# --- modified Bessel functions ---


@rrule(sp.iv, formula=partials(
    "∂iv/∂{a[0]} (no closed form: by quadrature)",
    "(iv({a[0]} - 1, {a[1]}) + iv({a[0]} + 1, {a[1]}))/2",
))
def iv_rrule(v, x):
    """scipy.special.iv: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def iv_pullback(dy):
        # I'ᵥ(x) = (Iᵥ₋₁(x) + Iᵥ₊₁(x)) / 2
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * iv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * ((sp.iv(v - 1, x) + sp.iv(v + 1, x)) / 2), x)))

    return sp.iv(v, x), iv_pullback


@rrule(sp.ive, formula=partials(
    "∂ive/∂{a[0]} (no closed form: by quadrature)",
    "((ive({a[0]} - 1, {a[1]}) + ive({a[0]} + 1, {a[1]}))/2 - sign({a[1]})·{y})",
))
def ive_rrule(v, x):
    """scipy.special.ive: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""
    y = sp.ive(v, x)

    def ive_pullback(dy):
        # ive = exp(-|x|) Iᵥ: d/dx = (iveᵥ₋₁ + iveᵥ₊₁) / 2 - sign(x) iveᵥ
        slope = (sp.ive(v - 1, x) + sp.ive(v + 1, x)) / 2 - np.sign(x) * y
        return NO_TANGENT, Thunk(lambda: unbroadcast(dy * ive_dv(v, x), v)), Thunk(lambda: unbroadcast(dy * slope, x))

    return y, ive_pullback


@rrule(sp.kv, formula=partials(
    "∂kv/∂{a[0]} (no closed form: by quadrature)",
    "(-(kv({a[0]} - 1, {a[1]}) + kv({a[0]} + 1, {a[1]}))/2)",
))
def kv_rrule(v, x):
    """scipy.special.kv: x by the recurrence of neighbouring orders, the order v by quadrature (first order only)."""

    def kv_pullback(dy):
        # K'ᵥ(x) = -(Kᵥ₋₁(x) + Kᵥ₊₁(x)) / 2
        return (NO_TANGENT, Thunk(lambda: unbroadcast(dy * kv_dv(v, x), v)),
                Thunk(lambda: unbroadcast(dy * (-(sp.kv(v - 1, x) + sp.kv(v + 1, x)) / 2), x)))

    return sp.kv(v, x), kv_pullback

"""Rule of the IIR filter op `tapegrad.scipy.signal.lfilter_core` (what lfilter, sosfilt and
filtfilt record): y = (1/A)(B x) along one axis, A(z) y = B(z) x with a[0] not necessarily 1.

With g = (1/A)ᵀ ȳ, the cotangent run backward through 1/A (flip, filter by [1] / a, flip):

- x̄ = Bᵀ g, the same filter run backward over the reversed cotangent: x̄ = flip(lfilter(b, a, flip(ȳ)));
- perturbing A(z) y = B(z) x gives A(z) dy = dB(z) x - dA(z) y, so b̄ₖ = Σₙ gₙ xₙ₋ₖ and
  āₖ = -Σₙ gₙ yₙ₋ₖ (a₀ included: its share is what scipy's normalization by a₀ makes it).

The pullback calls the op again, so second derivatives trace through it.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..scipy.signal import lfilter_core
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._shapes import like


def _lagged(v, k):
    """V[..., n, j] = v[..., n - j] (0 before the start): the last k samples seen at each n."""
    n = np.shape(v)[-1]
    padded = np.concatenate([np.zeros(np.shape(v)[:-1] + (k - 1,)), v], axis=-1) if k > 1 else v
    return padded[..., np.arange(n)[:, None] - np.arange(k)[None, :] + (k - 1)]


def _coefficient_grad(g, v, k):
    """Σₙ gₙ vₙ₋ⱼ for j < k, summed over every other axis."""
    lagged = _lagged(v, k)
    total = np.sum(np.reshape(g, (-1, np.shape(g)[-1]))[:, :, None] * np.reshape(lagged, (-1,) + np.shape(lagged)[-2:]),
                   axis=(0, 1))
    return total


@rrule(lfilter_core, formula=whole(
    "Σₙ gₙ·{a[2]}ₙ₋ₖ, g = {dy} run backward through 1/A",
    "-Σₙ gₙ·{y}ₙ₋ₖ, g = {dy} run backward through 1/A",
    "flip(lfilter({a[0]}, {a[1]}, flip({dy}))): the same filter run backward",
    None,
))
def lfilter_core_rrule(b, a, x, *rest, **kwargs):
    axis = rest[0] if rest else kwargs.get("axis", -1)
    y = lfilter_core(b, a, x, axis)
    one = np.ones(1)

    def lfilter_core_pullback(dy):
        if dy is ZERO:
            return NO_TANGENT, ZERO, ZERO, ZERO, *(NO_TANGENT for _ in rest)
        g = np.flip(lfilter_core(one, a, np.flip(np.moveaxis(dy, axis, -1), -1), -1), -1)  # (1/A)ᵀ ȳ

        def dx():
            return like(np.moveaxis(np.flip(lfilter_core(b, one, np.flip(g, -1), -1), -1), -1, axis), x)

        def db():
            return like(_coefficient_grad(g, np.moveaxis(x, axis, -1), np.shape(b)[0]), b)

        def da():
            return like(-_coefficient_grad(g, np.moveaxis(y, axis, -1), np.shape(a)[0]), a)

        return NO_TANGENT, Thunk(db), Thunk(da), Thunk(dx), *(NO_TANGENT for _ in rest)

    return y, lfilter_core_pullback

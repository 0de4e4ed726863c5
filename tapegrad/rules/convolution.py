"""Rules for numpy's 1-d convolve and correlate.

With N = len(a) and M = len(v) (a 0-d argument counts as length 1), both functions are crops of
a full result F of length N + M - 1:

    convolve:   F[n] = Σₘ a[m] v[n - m]                          (symmetric in a and v)
    correlate:  F[k + M - 1] = Σₙ a[n + k] conj(v[n]),  k = -(M-1) … N-1

'valid' keeps F[L-1 : L-1 + |N-M| + 1] and 'same' keeps max(N, M) entries from (L-1)//2, with
L = min(N, M). np.correlate with N < M computes correlate(v, conj a) and reverses it, so its
'same' window starts at L//2 instead (the two differ for an even L). The crop is read from the
length of numpy's result, whichever way the mode was written. The pullback first puts ȳ back
into a zero full-size G at the same place; then

    convolve:   ā = convolve(G, flip(v), 'valid'),   v̄ = convolve(G, flip(a), 'valid')
    correlate:  ā = convolve(G, conj(v), 'valid'),   v̄ = conj(convolve(flip(G), a, 'valid'))

(G is never shorter than the other argument, so numpy swaps nothing there). The pullbacks call
np.convolve again, so second derivatives trace through these rules.

Under autograd's complex convention (df = Re Σ c·dz): convolve is bilinear, holomorphic in each
argument, so its pullback holds as written (no conjugate). correlate is holomorphic in a and
antiholomorphic in v: from Re Σₖ gₖ Σₙ a[n+k] conj(dv[n]) = Re Σₙ conj(Σₖ gₖ a[n+k]) dv[n],
v's cotangent is the conjugate of the real formula. A real argument beside a complex one gets
the real part of its cotangent (`like`).

Complex values (the rules declared with ``complex=True``): convolve is bilinear, correlate
conjugates v (its cotangent conjugated): the complex tests in tests/rules/test_convolution.py
pass for both.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..tangents import NO_TANGENT, Thunk
from ._forward import multilinear_frule
from ._shapes import conj, like, no_tangents


def _length(x) -> int:
    """The length numpy sees: a 0-d argument (a number) is one element."""
    shape = np.shape(x)
    return shape[0] if shape else 1


def _crop_start(n, m, out, reversed_same=False):
    """Where numpy's result of length `out` starts in the full result of length n + m - 1."""
    short = min(n, m)
    if out == n + m - 1:  # 'full' (also 'same' and 'valid' when short == 1: all start at 0)
        return 0
    if out == max(n, m) - short + 1:  # 'valid'
        return short - 1
    return short // 2 if reversed_same else (short - 1) // 2  # 'same'


def _uncrop(dy, start, full):
    """ȳ of the cropped result, back in the full result's place (zeros around it)."""
    out = np.shape(dy)[0]
    return dy if out == full else np.pad(dy, (start, full - start - out))


def _tangent(t, x):
    """`t`, the cotangent of the 1-d view of `x`, in x's shape and dtype."""
    if np.ndim(x) == 0:
        t = np.reshape(t, ())
    return like(t, x)


@rrule(np.convolve, complex=True, forward=multilinear_frule(np.convolve), formula=whole(
    "convolve({dy}, flip({a[1]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it",
    "convolve({dy}, flip({a[0]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it",
    None,
))
def convolve_rrule(a, v, *args, **kwargs):
    y = np.convolve(a, v, *args, **kwargs)
    n, m = _length(a), _length(v)
    full = n + m - 1
    start = _crop_start(n, m, np.shape(y)[0])

    def convolve_pullback(dy):
        g = _uncrop(dy, start, full)
        return (
            NO_TANGENT,
            Thunk(lambda: _tangent(np.convolve(g, np.flip(v), "valid"), a)),
            Thunk(lambda: _tangent(np.convolve(g, np.flip(a), "valid"), v)),
            *no_tangents(args),
        )

    return y, convolve_pullback


@rrule(np.correlate, complex=True, forward=multilinear_frule(np.correlate), formula=whole(
    "convolve({dy}, conj({a[1]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it",
    "conj(convolve(flip({dy}), {a[0]}, 'valid')), {dy} first zero-padded to the 'full' length where the mode cropped it",
    None,
))
def correlate_rrule(a, v, *args, **kwargs):
    y = np.correlate(a, v, *args, **kwargs)
    n, m = _length(a), _length(v)
    full = n + m - 1
    start = _crop_start(n, m, np.shape(y)[0], reversed_same=n < m)

    def correlate_pullback(dy):
        g = _uncrop(dy, start, full)
        return (
            NO_TANGENT,
            Thunk(lambda: _tangent(np.convolve(g, conj(v), "valid"), a)),
            Thunk(lambda: _tangent(conj(np.convolve(np.flip(g), a, "valid")), v)),
            *no_tangents(args),
        )

    return y, correlate_pullback

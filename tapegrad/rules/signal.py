"""Rules for scipy.signal's convolve (its replacement ``tapegrad.scipy.signal.convolve``).

The full convolution y[n] = Σₖ a[k] b[n - k] has ā[k] = Σₙ ȳ[n] b[n - k]: the 'valid'
convolution of ȳ with b flipped along every axis (and b̄ likewise with a). The 'same' and
'valid' modes crop the full result around its centre, as scipy does; their pullback first puts
ȳ back into a zero full-size array at the same place. The pullback calls the replacement
again, so second derivatives trace through it.

The convolution is bilinear (holomorphic in each argument), so under autograd's complex
convention (df = Re Σ c·dz) the same pullback holds for complex arrays: a correlation, with
no conjugate; a real argument convolved with a complex one gets the real part.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..scipy.signal import convolve
from ..tangents import NO_TANGENT, Thunk
from ._shapes import bind, call_option, like, no_tangents


def _uncrop(dy, full_shape):
    """ȳ of a cropped result, put back into the full result's shape (zeros around), centred as scipy crops."""
    pads = [((f - s) // 2, f - s - (f - s) // 2) for f, s in zip(full_shape, np.shape(dy))]
    return dy if all(p == (0, 0) for p in pads) else np.pad(dy, pads)


def _convolve(names, values, kwargs):
    """Each input's tangent is the correlation of ȳ with the other input."""
    mode = call_option(values, kwargs, "mode", 2)
    undo = "" if mode in (None, "full") else f", {{dy}} first zero-padded to the 'full' size ({mode!r} cropped it)"
    return [f"{{dy}} correlated with {{a[1]}}: convolve({{dy}}, flip({{a[1]}}), 'valid'){undo}",
            f"{{dy}} correlated with {{a[0]}}: convolve({{dy}}, flip({{a[0]}}), 'valid'){undo}",
            None]


@rrule(convolve, complex=True, formula=whole(_convolve))
def convolve_rrule(in1, in2, *args, **kwargs):
    method = bind(convolve, (in1, in2, *args), kwargs).get("method", "auto")
    y = convolve(in1, in2, *args, **kwargs)
    full_shape = tuple(a + b - 1 for a, b in zip(np.shape(in1), np.shape(in2)))

    def convolve_pullback(dy):
        g = _uncrop(dy, full_shape)
        return (
            NO_TANGENT,
            Thunk(lambda: like(convolve(g, np.flip(in2), mode="valid", method=method), in1)),
            Thunk(lambda: like(convolve(g, np.flip(in1), mode="valid", method=method), in2)),
            *no_tangents(args),
        )

    return y, convolve_pullback

"""np.fft.hfft and np.fft.ihfft, traced through to the rules of irfft and rfft.

numpy defines them so (``numpy/fft/_pocketfft.py``): ``hfft(a, n) = irfft(conj(a), n)`` and
``ihfft(a, n) = conj(rfft(a, n))``, each with the opposite normalisation ("backward" and
"forward" swapped, "ortho" kept). Written with numpy calls on traced values (numpy's bodies
convert with ``np.asarray``; ``declare(fn, traced_by=...)`` sends the call here), the tape
holds conjugate and irfft, or rfft and conjugate, whose rules give the derivatives.
"""
from __future__ import annotations

import numpy as np

from ..registry import declare

__all__ = ["hfft", "ihfft"]

_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm):
    if norm not in _SWAPPED:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _SWAPPED[norm]


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.hfft`` on traced values: irfft of the conjugate, with the opposite norm."""
    if out is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.fft.hfft with out=; use its result")
    if n is None:
        n = (np.shape(a)[axis] - 1) * 2
    return np.fft.irfft(np.conj(a), n, axis, norm=_norm(norm))


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ihfft`` on traced values: the conjugate of rfft, with the opposite norm."""
    if out is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.fft.ihfft with out=; use its result")
    return np.conj(np.fft.rfft(a, n, axis, norm=_norm(norm)))


declare(np.fft.hfft, traced_by=hfft)
declare(np.fft.ihfft, traced_by=ihfft)

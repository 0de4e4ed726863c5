"""np.histogramdd and np.histogram2d on traced values: differentiable in the weights (and,
with ``density=True``, through the normalisation), traced through.

``histₖ = Σᵢ wᵢ [sampleᵢ in bin k]``: each sample point's bin is numpy's (``searchsorted`` on
each axis's edges, the last edge closed), found from the plain sample; the weighted counts are
then one ``np.bincount`` of the traced weights (a scatter-add, whose rule gathers the
cotangent of each weight's bin), reshaped, the outlier bins cut off, as numpy computes them.
The counts are piecewise constant in the sample: no derivative reaches it. The edges are
numpy's, computed from plain values: a traced sample whose edges numpy would take from its
minimum and maximum (``bins`` a count with no ``range=``) is refused, as the edges would then
depend on it (np.histogram's rule covers the 1-d case); so is a traced ``range`` or ``bins``.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ..arraylike import ArrayLike
from ..errors import user_location
from ..registry import declare
from ..views import concrete

__all__ = ["histogramdd", "histogram2d"]


def _explicit_edges(bins, d):
    """Whether every axis's edges are given (a sequence of d arrays), not counted from the data."""
    if np.ndim(bins) == 0 or isinstance(bins, str):
        return False
    return all(np.ndim(b) == 1 for b in bins) if len(bins) == d else False


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """``np.histogramdd`` on traced weights: numpy's bins from the plain sample, the weighted
    counts by one np.bincount."""
    traced_sample = isinstance(sample, ArrayLike) or (
        isinstance(sample, (list, tuple)) and any(isinstance(s, ArrayLike) for s in sample))
    if isinstance(range, ArrayLike) or isinstance(bins, ArrayLike) or (
            isinstance(bins, (list, tuple)) and any(isinstance(b, ArrayLike) for b in bins)):
        raise NotImplementedError(f"tapegrad has no derivative of numpy.histogramdd in its bins or range "
                                  f"at {user_location()}; pass them as plain values")
    if isinstance(sample, (list, tuple)):
        cols = list(sample)
    else:
        cols = [sample] if np.ndim(sample) == 1 else [sample[:, i] for i in builtins.range(np.shape(sample)[1])]
    plain = np.stack([np.asarray(concrete(c)) for c in cols], axis=1)
    n, d = plain.shape
    if traced_sample and range is None and not _explicit_edges(bins, d):
        raise NotImplementedError(
            f"numpy.histogramdd of a traced sample at {user_location()}: numpy takes the edges from the "
            f"sample's minimum and maximum, which tapegrad does not differentiate here; pass range= or the "
            f"edges as bins=, or use np.histogram on each axis (whose rule does)")
    _, edges = np.histogramdd(plain, bins, range)
    nbin = tuple(len(e) + 1 for e in edges)  # with the two outlier bins of each axis
    # each point's bin, by numpy's steps on the sample as given (recorded when it is traced, so a
    # replayed or compiled gradient bins new values anew); the last bin is closed
    index = [np.where(np.equal(c, e[-1]), np.searchsorted(e, c, side="right") - 1, np.searchsorted(e, c, side="right"))
             for c, e in zip(cols, edges)]
    flat = np.ravel_multi_index(index, nbin)
    size = math.prod(nbin)
    if weights is None:
        hist = np.bincount(flat, minlength=size).astype(float)
    else:
        w = weights if isinstance(weights, ArrayLike) else np.asarray(weights)
        hist = np.bincount(flat, np.ravel(w), minlength=size)
    hist = np.reshape(hist, nbin)[(slice(1, -1),) * d]
    if density:
        total = np.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = len(e) - 1
            hist = hist / np.reshape(np.diff(e), shape)
        hist = hist / total
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """``np.histogram2d`` on traced weights: histogramdd of (x, y), numpy's definition."""
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb != 1 and nb != 2:
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


for _fn in __all__:
    declare(getattr(np, _fn), traced_by=globals()[_fn])
del _fn

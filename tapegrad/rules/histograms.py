"""Rules for histograms: np.histogram.

``hist, edges = np.histogram(a, bins, range, density, weights)``. The counts are piecewise
constant in a (an element moves from one bin to the next in a jump): they pass nothing back to
a, nor to the edges. What is differentiable:

- The edges. With ``bins`` an int or the name of numpy's estimator ('auto', 'fd', ...) numpy
  takes ``edges = linspace(lo, hi, n + 1)`` with (lo, hi) the range, or without one the minimum
  and the maximum of a (each widened by 1/2 when they are equal): so
  ``∂edgesₖ/∂lo = 1 - k/n`` and ``∂edgesₖ/∂hi = k/n`` (n, the number of bins, is piecewise
  constant too), and the cotangents of lo and hi go to range, or to the smallest and the
  largest element of a, shared at a tie as in np.min's and np.max's rules. With ``bins`` a
  sequence of edges, ``edges = bins``.
- The weighted counts, in the weights: ``histₖ = Σ wᵢ [aᵢ in bin k]``, so each weight gets the
  cotangent of its element's bin (numpy's bins: ``edgesₖ ≤ a < edgesₖ₊₁``, the last one closed;
  0 outside the range).
- With ``density=True``, ``histₖ = cₖ/(S·wdₖ)`` (c the counts or weighted counts, S their sum,
  wd the bin widths): ``c̄ⱼ = (h̄ⱼ/wdⱼ - Σₖ h̄ₖ histₖ)/S`` and ``wd̄ₖ = -h̄ₖ histₖ/wdₖ``. The
  widths are differences of the edges, so a density depends on a through the minimum and the
  maximum (when numpy chooses the edges), and on range or bins otherwise.

The pullback computes from a, the edges and the histogram with numpy calls (the bin of each
element by np.searchsorted, read with np.take_along_axis), so that it is differentiated again
at second order in every combination of modes.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..tangents import NO_TANGENT, ZERO, Thunk
from ._shapes import bind, cast_like, like, positional_names, tangent_dtype

# --- histogram ---


def _bins_of(a, edges):
    """(the bin of each element of a, flattened, clipped into 0 … n-1; whether it is in one),
    as numpy bins it: edgesₖ ≤ a < edgesₖ₊₁, the last bin closed (a nan is in none)."""
    flat = np.ravel(a)
    n = np.shape(edges)[0] - 1
    j = np.searchsorted(edges, flat, side="right") - 1
    j = np.where(np.equal(flat, edges[n]), n - 1, j)
    inside = np.logical_and(j >= 0, j < n)
    return np.clip(j, 0, n - 1), inside


def _to_ends(g_edges, n):
    """The cotangents of the two ends of ``linspace(lo, hi, n + 1)`` given the edges' cotangent."""
    t = np.arange(n + 1) / n
    return np.sum(g_edges * (1 - t)), np.sum(g_edges * t)


def _shared(g, a, end):
    """`g`, the cotangent of the minimum or the maximum `end` of a, shared among the elements
    equal to it (evenly at a tie, as the rules of np.min and np.max share it)."""
    hit = np.astype(np.equal(a, end), tangent_dtype(a, g))
    return hit * (g / np.sum(hit))


def _pair_tangent(g_lo, g_hi, pair):
    """The tangent of range=(lo, hi): a tuple or list of two, or an array of two."""
    if isinstance(pair, (tuple, list)):
        return type(pair)((like(g_lo, pair[0]), like(g_hi, pair[1])))
    return cast_like(np.stack([g_lo, g_hi]), pair)


@rrule(np.histogram, formula=whole(
    "Σₖ {dy}[1]ₖ·(1 - k/n) to the smallest and Σₖ {dy}[1]ₖ·k/n to the largest element of {a[0]} (shared at a tie), "
    "when numpy takes the edges from them (with density, {dy}[1] includes -{dy}[0]·{y}[0]/width at each bin's "
    "ends); 0 from the counts, which are piecewise constant",
    "{dy}[1] (the edges given), with density -{dy}[0]·{y}[0]/width added at each bin's ends",
    "(Σₖ {dy}[1]ₖ·(1 - k/n), Σₖ {dy}[1]ₖ·k/n): the edges are linspace(lo, hi, n + 1)",
    None,
    "{dy}[0] of the bin each element of {a[0]} falls in (0 outside the range; with density, "
    "({dy}[0]/width - Σ {dy}[0]·{y}[0])/Σ weights)",
))
def histogram_rrule(a, *args, **kwargs):
    """Counts are piecewise constant (0 to a); edges from the range or a's min and max (shared at a tie), or bins; weights, and density through the widths."""
    b = bind(np.histogram, (a, *args), kwargs)
    bins, span, weights = b.get("bins", 10), b.get("range"), b.get("weights")
    density = bool(b.get("density"))
    hist, edges = np.histogram(a, *args, **kwargs)
    n = np.shape(edges)[0] - 1
    # numpy's edges are linspace(lo, hi, n + 1) when it chooses them; lo and hi are a's ends
    # without a range=
    spaced = isinstance(bins, str) or not isinstance(bins, (list, tuple)) and np.ndim(bins) == 0
    ends = None
    if spaced and span is None and np.size(a):
        ends = np.min(a), np.max(a)
    positional = positional_names(np.histogram, 1 + len(args))

    def histogram_pullback(dout):
        dhist, dedges = dout
        weighted = density or weights is not None  # else the counts pass nothing back
        dcounts = ZERO if dhist is ZERO or not weighted else dhist
        g_edges = dedges
        if density and dhist is not ZERO:
            # hist = c/(S·wd): the counts' share and the widths' share
            widths = np.diff(edges)
            j, inside = _bins_of(a, edges)
            total = np.sum(inside) if weights is None else np.sum(np.where(inside, np.ravel(weights), 0))
            dcounts = (dhist / widths - np.sum(dhist * hist)) / total
            dwidths = -(dhist * hist) / widths
            zero = np.zeros(1, tangent_dtype(edges, dwidths))
            from_widths = np.concatenate([zero, dwidths]) - np.concatenate([dwidths, zero])
            g_edges = from_widths if g_edges is ZERO else g_edges + from_widths

        def dweights():
            j, inside = _bins_of(a, edges)
            dw = np.where(inside, np.take_along_axis(dcounts, j, 0), 0)
            return cast_like(np.reshape(dw, np.shape(weights)), weights)

        def dbins():
            if isinstance(bins, (list, tuple)):
                return type(bins)(like(g_edges[k], v) for k, v in enumerate(bins))
            return like(g_edges, bins)

        def da():
            g_lo, g_hi = _to_ends(g_edges, n)
            return cast_like(_shared(g_lo, a, ends[0]) + _shared(g_hi, a, ends[1]), a)

        # the counts are piecewise constant: a gets a share only through the edges it decides
        tangents = {"a": ZERO, "bins": ZERO, "range": ZERO, "weights": ZERO}
        if g_edges is not ZERO:
            if not spaced:
                tangents["bins"] = Thunk(dbins)
            elif span is not None:
                tangents["range"] = Thunk(lambda: _pair_tangent(*_to_ends(g_edges, n), span))
            elif ends is not None:
                tangents["a"] = Thunk(da)
        if dcounts is not ZERO and weights is not None:
            tangents["weights"] = Thunk(dweights)
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in positional)

    return (hist, edges), histogram_pullback

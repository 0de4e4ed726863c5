"""Rules for order statistics and second moments: percentile, quantile (and their nan forms),
cov and corrcoef.

Quantiles. Along the reduced axes each result is ``(1 - t)·s[lo] + t·s[hi]``, where ``s`` is
the group sorted and ``lo``, ``hi``, ``t`` depend only on the group's size n, the level q and
the method (numpy's own formulas, for each of its 13 methods: ``lo = hi`` for the selecting
ones, lower, higher, nearest, inverted_cdf and closest_observation; ``t = 1/2`` for midpoint;
the fractional part of the virtual index for linear and the Hyndman-Fan family). For a fixed
order the result is linear in a: the cotangent goes to the elements sorted into places lo and
hi, with weights 1 - t and t. The sort is np.argsort(kind="stable"), so at a tie the cotangent
goes to the tied element that the stable order puts in that place (the first of them in
memory order for place lo), as JAX and autograd do through their sort; np.median's rule
shares it among the tied elements instead. The pullback scatters ``dy @ W`` (W: the weights
of each level on the sorted places) back through the inverse permutation with
np.take_along_axis, so it stays numpy calls that a Tracer records again. A group holding nan
has a nan percentile and a nan gradient (as np.median's); the nan forms count the n values
that are not nan, and a nan gets 0.

The levels q are differentiated too (a level a closure captures is one of its values that
`grad` differentiates). For linear and the Hyndman-Fan methods (interpolated_inverted_cdf,
hazen, weibull, median_unbiased, normal_unbiased) t is the fractional part of numpy's virtual
index g(q), ``(n - 1)q`` for linear and ``nq + α + q(1 - α - β) - 1`` for the others, so for a
fixed order ``∂y/∂q = (s[hi] - s[lo])·g'(q)``, with ``g'(q) = n - 1`` for linear and
``n + 1 - α - β`` for the others, divided by 100 for the percentiles (q in percent). Where y has
a kink the derivative is the one numpy's formula gives, the right-hand one (towards larger q):
at an integer virtual index k numpy takes lo = k, hi = k + 1 and t = 0; where it clips the
index to the first or the last place (g(q) < 0 or g(q) ≥ n - 1: q = 1, and the Hyndman-Fan
methods near 0 and 1) lo = hi and the derivative is 0, the right-hand one again (and 0 at q = 1,
which has no right-hand side). The other methods are piecewise constant in q, and q gets 0: the selecting ones, midpoint
(t is 0 or 1/2) and averaged_inverted_cdf (t is 1/2 or 1). The nan forms take each group's
count of values that are not nan for n, and an all-nan group gives q nothing; in the other
forms a group holding nan gives q a nan, as it gives a. The gap s[hi] - s[lo] is computed from
a in the pullback, with numpy calls, so that a second derivative sees its dependence on a
(``∂²y/∂q∂a = g'(q)·(e_hi - e_lo)`` in sorted order); ``∂²y/∂q² = 0`` (t is linear in q between
the kinks). q may be a number, an array, or a list or tuple of numbers, whose tangent is a list
or tuple of the entries' tangents. A gradient that tells the rule (``needs``) that q is a
constant keeps neither a nor its sort order for it; weights= (numpy's, for inverted_cdf) is
refused.

cov. With X the variables as rows (numpy's layout: ``rowvar=False`` transposes, ``y`` is
stacked below), w = fweights·aweights (1 without), ``Xc = X - avg_w(X)`` and
``C = Xc diag(w) Xcᵀ/f`` (f = N - ddof, or numpy's weighted form), the cotangent is
``X̄ = (Ḡ + Ḡᵀ) Xc diag(w)/f``: the mean's own term ``-(X̄c w)1ᵀ/Σw`` vanishes, since each row
of Xc has weighted sum 0. For aweights a (w = φ·a, φ the fweights or 1), ``∂C/∂w_k =
xc_k xc_kᵀ/f - C·(∂f/∂w_k)/f`` (the mean's term vanishes again), so ``ā_k = φ_k·xc_kᵀ Ḡ xc_k/f -
⟨Ḡ, C⟩·(∂f/∂a_k)/f``; fweights are integer counts (numpy checks), so a traced one raises.

corrcoef. ``R = C/√(d dᵀ)`` with d = diag C: ``C̄ = Ḡ/√(d dᵀ)`` and ``d̄_i = -Σ_j (Ḡ_ij R_ij +
Ḡ_ji R_ji)/(2 d_i)`` on the diagonal, then cov's pullback. numpy clips R to [-1, 1]; that only
corrects rounding, and where |R| = 1 the unclipped derivative is 0 (R is at its extreme), so
the unclipped formula is used everywhere. One variable gives R = 1 (0-d) and a zero gradient.

Complex values are left out (numpy's quantiles refuse them; cov and corrcoef of complex
arrays raise in a gradient).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import qualified_name, user_location
from ..registry import rrule, stand_in, whole
from ..tangents import NO_TANGENT, ZERO, Thunk
from .special_params import no_derivative
from ._shapes import bind, cast_like, dtype_of, like, mT, positional_names, reduced_axes


# --- quantiles ---

#: the Hyndman-Fan methods with a virtual index n q + α + q(1 - α - β) - 1: (α, β)
_HYNDMAN_FAN = {
    "interpolated_inverted_cdf": (0, 1),
    "hazen": (0.5, 0.5),
    "weibull": (0, 0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
#: the methods whose result is one element of the group (numpy: an integer index, no gamma)
_SELECTING = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
#: every method the rules differentiate (all of numpy's)
_METHODS = frozenset(("linear", "averaged_inverted_cdf", "midpoint", *_HYNDMAN_FAN, *_SELECTING))


def _boundaries(index, keep_previous):
    """numpy's `_discrete_interpolation_to_boundaries`: floor(index) where `keep_previous`
    holds, else the next place; never below 0."""
    previous = np.floor(index)
    gamma = index - previous
    res = np.where(keep_previous(gamma, index), previous, previous + 1)
    return np.where(res < 0, 0, res)


def _places(method, n, q):
    """``(lo, hi, t)``: the sorted places a quantile interpolates between and the weight of hi,
    by numpy's formulas (`numpy.lib._function_base_impl._QuantileMethods`), written with numpy
    calls on n and q so that they run on Tracers too. `n` is the group size (a Python int, or
    for the nan forms the count of each group, cast to q's dtype, as numpy's arithmetic with a
    Python int gives the same numbers)."""
    if method in _SELECTING:
        if method == "lower":
            idx = np.floor((n - 1) * q)
        elif method == "higher":
            idx = np.ceil((n - 1) * q)
        elif method == "nearest":
            idx = np.round((n - 1) * q)  # half to even, as numpy's np.around
        elif method == "inverted_cdf":
            idx = _boundaries((n * q) - 1, lambda gamma, _: gamma == 0)
        else:  # closest_observation: the nearest even order statistic (1-based) at gamma 0
            idx = _boundaries((n * q) - 1 - 0.5,
                              lambda gamma, index: np.logical_and(gamma == 0, np.floor(index) % 2 == 1))
        return idx, idx, np.zeros(np.shape(idx), dtype_of(q))
    if method == "linear":
        virtual = (n - 1) * q
    elif method == "midpoint":
        virtual = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    elif method == "averaged_inverted_cdf":
        virtual = (n * q) - 1
    else:
        alpha, beta = _HYNDMAN_FAN[method]
        virtual = n * q + (alpha + q * (1 - alpha - beta)) - 1
    previous = np.floor(virtual)
    t = virtual - previous
    if method == "midpoint":
        t = np.where(virtual % 1 == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        t = np.where(t == 0, 0.5, 1.0)
    # numpy's _get_indexes: past the last place both are the last, before the first the first
    above = virtual >= n - 1
    below = virtual < 0
    lo = np.where(below, 0, np.where(above, n - 1, previous))
    hi = np.where(below, 0, np.where(above, n - 1, previous + 1))
    return lo, hi, np.where(lo == hi, 0.0, t)


def _index_slope(method, n):
    """g'(q), the derivative of the virtual index g(q) in the level: ``n - 1`` for linear,
    ``n + 1 - α - β`` for the Hyndman-Fan methods (`n` a number, or the count of each group);
    None for the methods whose result is piecewise constant in q (the selecting ones, midpoint,
    whose t is 0 or 1/2, and averaged_inverted_cdf, whose t is 1/2 or 1)."""
    if method == "linear":
        return n - 1
    if method in _HYNDMAN_FAN:
        alpha, beta = _HYNDMAN_FAN[method]
        return n + (1 - alpha - beta)
    return None


def _level_weights(lo, hi, t, n):
    """The weight of each sorted place 0..n-1 in each quantile: ``(1 - t)`` at lo, ``t`` at hi
    (their sum, 1, where they are one place). Shape ``lo.shape + (n,)``."""
    places = np.arange(n)
    lo, hi, t = np.expand_dims(lo, -1), np.expand_dims(hi, -1), np.expand_dims(t, -1)
    return (1 - t) * (places == lo) + t * (places == hi)


def _stacked(q):
    """Levels given as a list or tuple (of numbers, or of traced numbers) as an array; an array
    or a number as it is."""
    if type(q) is list or type(q) is tuple:
        return np.stack([_stacked(v) for v in q]) if len(q) else np.asarray(q, dtype=np.float64)
    return q


def _levels(q, percent):
    """The levels `q` (an array, a number or a Tracer: see `_stacked`) as numpy reads them:
    fractions (percentiles divided by 100), flattened, inexact."""
    if percent:
        q = np.true_divide(q, 100)
    elif not (hasattr(q, "shape") and hasattr(q, "dtype")):
        q = np.asanyarray(q)
    if dtype_of(q).kind != "f":  # integer levels (0 or 1) of np.quantile: the same places
        q = np.astype(q, np.float64)
    return np.reshape(q, (-1,))


def _level_tangent(t, q):
    """`t`, shaped like the levels, as the tangent of q: in q's dtype, a number for a number,
    and for a list or tuple of levels a list or tuple of its entries' tangents."""
    if type(q) is list or type(q) is tuple:
        return type(q)(_level_tangent(t[i], v) for i, v in enumerate(q))
    return like(t, q)


def _quantile_rule(fn, a, args, kwargs, needs, percent, nan_form):
    """The rule of the four: `percent` for the percentiles (q/100), `nan_form` for the nan
    forms. (Flags, not tests of `fn`: a trace may put stand-ins in numpy's namespace.)"""
    b = bind(fn, (a, *args), kwargs)
    name = qualified_name(fn)
    for option in ("out", "weights"):
        if b.get(option) is not None:
            raise NotImplementedError(
                f"tapegrad has no derivative of {name} with {option}= (at {user_location()}); "
                + ("use the returned value instead" if option == "out" else
                   "weights= (method='inverted_cdf' only) is not differentiated")
            )
    q = b["q"]
    method = b.get("method", "linear")
    axis, keepdims = b.get("axis"), bool(b.get("keepdims", False))
    # numpy's own value (overwrite_input= left out: the same numbers, and a is read below)
    y = fn(a, q, axis=axis, method=method, keepdims=keepdims)
    if method not in _METHODS:
        raise NotImplementedError(
            f"tapegrad has no derivative of {name} with method={method!r}; it differentiates "
            f"the methods {', '.join(sorted(_METHODS))}"
        )
    # the tangents to compute: a and q unless the gradient says one is a constant (`needs`,
    # one flag per positional argument; q given by keyword is a constant)
    names = positional_names(fn, 1 + len(args))
    traced = None if needs is None else dict(zip(names, needs))
    a_read = traced is None or traced.get("a", False)
    q_read = traced is None or traced.get("q", False)
    shape = np.shape(a)
    ndim = len(shape)
    axes = reduced_axes(axis, ndim)
    kept = tuple(i for i in range(ndim) if i not in axes)
    n = math.prod(shape[i] for i in axes)
    k = math.prod(shape[i] for i in kept)
    last = tuple(range(len(kept), ndim))
    moved = np.moveaxis(a, axes, last) if axes != last else a
    moved_shape = np.shape(moved)
    groups = np.reshape(moved, (k, n))  # one group of n values per row
    # the sorting permutation (stable) and the sorted place of each element, its inverse
    order = np.argsort(groups, axis=-1, kind="stable")
    rank = np.argsort(order, axis=-1, kind="stable")
    stacked = _stacked(q)
    q_shape = np.shape(stacked)
    levels = _levels(stacked, percent)
    count = np.shape(levels)[0]
    inexact = dtype_of(a).kind == "f"
    group_nan = valid = weights = None
    if nan_form and inexact:
        # each group has its own size: its values that are not nan (sorted first)
        valid = np.sum(np.logical_not(np.isnan(groups)), axis=-1, keepdims=True)
        sizes = np.astype(valid, dtype_of(levels))  # (k, 1)
        lo, hi, t = _places(method, sizes, levels)  # (k, levels)
        if a_read:
            weights = _level_weights(lo, hi, t, n)  # (k, levels, n)
            weights = np.where(np.expand_dims(valid, -1) > 0, weights, 0.0)  # an all-nan group: 0
    else:
        sizes = n
        lo, hi, t = _places(method, n, levels)
        if a_read:
            weights = _level_weights(lo, hi, t, n)  # (levels, n)
        if inexact:
            group_nan = np.sum(np.isnan(groups), axis=-1, keepdims=True) > 0
            if type(group_nan) is np.ndarray and not group_nan.any():
                group_nan = None
    # ∂/∂q: (s[hi] - s[lo])·g'(q) (see the module docstring); 0 for the piecewise-constant methods
    slope = _index_slope(method, sizes) if q_read else None
    if slope is not None:
        lo_at = np.broadcast_to(np.astype(lo, np.intp), (k, count))
        hi_at = np.broadcast_to(np.astype(hi, np.intp), (k, count))
        one_place = lo == hi
    a_like = stand_in(a)  # (da needs a's shape and dtype only)
    if not a_read:
        rank = None
    if not q_read or slope is None:
        groups = order = None

    def quantile_pullback(dy):
        # dy: the levels' axes first, then the groups (keepdims adds only axes of length 1)
        d = mT(np.reshape(dy, (count, k)))  # (k, levels)

        def da():
            if np.ndim(weights) == 3:
                # Σ over the levels of dy times the weights of this group's places
                placed = np.reshape(np.matmul(np.expand_dims(d, -2), weights), (k, n))
            else:
                placed = np.matmul(d, weights)  # (k, n): the cotangent of each sorted place
            g = np.take_along_axis(placed, rank, axis=-1)
            if group_nan is not None:
                g = np.where(group_nan, np.nan * g, g)  # (linear in dy: forward mode derives from it)
            g = np.reshape(g, moved_shape)
            if axes != last:
                g = np.moveaxis(g, last, axes)
            return cast_like(g, a_like)

        def dq():
            if slope is None:
                dlevels = np.zeros((count,), dtype_of(levels))
            else:
                # the gap between the two order statistics each level lies between, computed
                # from a (numpy calls: a second derivative sees its dependence on a)
                s = np.take_along_axis(groups, order, axis=-1)
                gap = np.take_along_axis(s, hi_at, axis=-1) - np.take_along_axis(s, lo_at, axis=-1)
                gap = np.where(one_place, 0.0, gap)  # clipped to an end: flat (and no inf - inf)
                if valid is not None:
                    gap = np.where(valid > 0, gap, 0.0)  # an all-nan group: its nan does not move
                elif group_nan is not None:
                    gap = np.where(group_nan, np.nan, gap)  # (nan·d below: linear in dy)
                dlevels = np.sum(d * gap * slope, axis=0)
                if percent:
                    dlevels = dlevels / 100
            return _level_tangent(np.reshape(dlevels, q_shape), q)

        tangents = {"a": da() if a_read else NO_TANGENT, "q": Thunk(dq) if q_read else NO_TANGENT}
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in names)

    return y, quantile_pullback


@rrule(np.percentile, formula=whole(
    "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that percentile {a[1]} "
    "lies between (t its fraction, numpy's method; a tie in the stable sort's order)",
    "{dy}·(s[hi] - s[lo])·g'/100 summed over the groups (s: {a[0]} sorted; g' the slope of numpy's virtual index: "
    "n - 1 for linear, n + 1 - α - β for Hyndman-Fan); 0 for the piecewise-constant methods",
))
def percentile_rrule(a, *args, needs=None, **kwargs):
    """a: 1 - t and t to the two order statistics q lies between (stable order at a tie); q: their gap·g'(q)/100.

    g'(q), the slope of numpy's virtual index in q, is n - 1 for linear and n + 1 - α - β for the
    Hyndman-Fan methods; the other methods are piecewise constant in q, which gets 0.
    """
    return _quantile_rule(np.percentile, a, args, kwargs, needs, percent=True, nan_form=False)


@rrule(np.quantile, formula=whole(
    "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that quantile {a[1]} "
    "lies between (t its fraction, numpy's method; a tie in the stable sort's order)",
    "{dy}·(s[hi] - s[lo])·g' summed over the groups (s: {a[0]} sorted; g' the slope of numpy's virtual index: "
    "n - 1 for linear, n + 1 - α - β for Hyndman-Fan); 0 for the piecewise-constant methods",
))
def quantile_rrule(a, *args, needs=None, **kwargs):
    """a: 1 - t and t to the two order statistics q lies between (stable order at a tie); q: their gap·g'(q).

    g'(q), the slope of numpy's virtual index in q, is n - 1 for linear and n + 1 - α - β for the
    Hyndman-Fan methods; the other methods are piecewise constant in q, which gets 0.
    """
    return _quantile_rule(np.quantile, a, args, kwargs, needs, percent=False, nan_form=False)


@rrule(np.nanpercentile, formula=whole(
    "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that percentile "
    "{a[1]} lies between among the values that are not nan (t its fraction), 0 at nan",
    "{dy}·(s[hi] - s[lo])·g'/100 summed over the groups (s: the n values of {a[0]} that are not nan, sorted; g' as "
    "for percentile); 0 for the piecewise-constant methods",
))
def nanpercentile_rrule(a, *args, needs=None, **kwargs):
    """As np.percentile's, among the values that are not nan (n their count); a nan gets 0."""
    return _quantile_rule(np.nanpercentile, a, args, kwargs, needs, percent=True, nan_form=True)


@rrule(np.nanquantile, formula=whole(
    "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that quantile "
    "{a[1]} lies between among the values that are not nan (t its fraction), 0 at nan",
    "{dy}·(s[hi] - s[lo])·g' summed over the groups (s: the n values of {a[0]} that are not nan, sorted; g' as "
    "for quantile); 0 for the piecewise-constant methods",
))
def nanquantile_rrule(a, *args, needs=None, **kwargs):
    """As np.quantile's, among the values that are not nan (n their count); a nan gets 0."""
    return _quantile_rule(np.nanquantile, a, args, kwargs, needs, percent=False, nan_form=True)


# (q comes in *args, or by keyword: the listing of the rules names the two differentiated)
for _rule in (percentile_rrule, quantile_rrule, nanpercentile_rrule, nanquantile_rrule):
    _rule.differentiable = ("a", "q")


# --- covariance and correlation ---


def _as_array(v):
    """A constant given as a list or tuple as an array; arrays and Tracers as they are."""
    return np.asarray(v) if isinstance(v, (list, tuple)) else v


class _Layout:
    """How np.cov and np.corrcoef lay m (and y) out as rows of variables, and the way back."""

    def __init__(self, m, y, rowvar, dtype):
        self.m, self.y = m, y
        if dtype is None:
            dtype = np.result_type(dtype_of(m), *(() if y is None else (dtype_of(y),)), np.float64)
        self.dtype = np.dtype(dtype)
        xm, self.m_turned = self._rows(m, not rowvar and np.ndim(m) != 1)
        pieces = [xm]
        self.split = np.shape(xm)[0]
        if y is not None:
            # numpy turns y when it is not a single row once made 2-d (np.cov's own test)
            xy, self.y_turned = self._rows(y, not rowvar and (np.shape(y) if np.ndim(y) >= 2 else (1,))[0] != 1)
            pieces.append(xy)
        self.X = pieces[0] if y is None else np.concatenate(pieces, axis=0)

    def _rows(self, v, turn):
        shape = np.shape(v)
        x = np.reshape(v, (1,) * (2 - len(shape)) + shape) if len(shape) < 2 else v
        if dtype_of(x) != self.dtype:
            x = np.astype(x, self.dtype)
        return (mT(x) if turn else x), turn

    def back(self, dX):
        """The tangents of m and y (ZERO without y) from the tangent of the stacked rows."""
        dm = dX[:self.split]
        dm = cast_like(np.reshape(mT(dm) if self.m_turned else dm, np.shape(self.m)), self.m)
        if self.y is None:
            return dm, ZERO
        dy = dX[self.split:]
        return dm, cast_like(np.reshape(mT(dy) if self.y_turned else dy, np.shape(self.y)), self.y)


def _floats(v):
    """Weights as numpy's cov reads them: float64."""
    v = _as_array(v)
    return v if dtype_of(v) == np.float64 else np.astype(v, np.float64)


def _laid_out(fn, x, args, kwargs):
    """(bound arguments, numpy's value, `_Layout` of x and y) of np.cov or np.corrcoef."""
    b = bind(fn, (x, *args), kwargs)
    value = fn(x, *args, **kwargs)
    other = b.get("y")
    layout = _Layout(_as_array(x), None if other is None else _as_array(other), b.get("rowvar", True), b.get("dtype"))
    return b, value, layout


@rrule(np.cov, formula=whole(
    "({dy} + {dy}ᵀ)·Xc·w/f, rows of {a[0]} (Xc: the variables as rows, less their mean; w the weights, "
    "1 without; f = N - ddof, or numpy's weighted form)",
    "({dy} + {dy}ᵀ)·Xc·w/f, rows of {a[1]}",
    None,
    None,
    None,
    None,
    "φₖ·xcₖᵀ·{dy}·xcₖ/f - ⟨{dy}, {y}⟩·(∂f/∂aₖ)/f for each observation k (φ the fweights, 1 without)",
))
def cov_rrule(m, *args, **kwargs):
    """Differentiable in m, y and aweights (not fweights, which are integer counts)."""
    b, c, layout = _laid_out(np.cov, m, args, kwargs)
    X, other = layout.X, layout.y
    p, N = np.shape(X)
    ddof = b.get("ddof")
    if ddof is None:
        ddof = 1 if b.get("bias", False) == 0 else 0
    fweights, aweights = b.get("fweights"), b.get("aweights")
    f = None if fweights is None else _floats(fweights)
    a = None if aweights is None else _floats(aweights)
    w = f if a is None else a if f is None else f * a
    if w is None:
        Xc = X - np.mean(X, axis=1, keepdims=True)
        fact = max(N - ddof, 0)  # numpy: 0 (and a warning) when there are too few observations
    else:
        total = np.sum(w)
        Xc = X - np.sum(X * w, axis=1, keepdims=True) / total
        if ddof == 0:
            fact = total
        elif a is None:
            fact = total - ddof
        else:
            fact = total - ddof * np.sum(w * a) / total
        fact = np.maximum(fact, 0.0)
    Xw = Xc if w is None else Xc * w
    names = positional_names(np.cov, 1 + len(args))

    def cov_pullback(dy):
        G = np.reshape(dy, (p, p))
        # C = Xc W Xcᵀ/f: X̄ = (Ḡ + Ḡᵀ) Xc W/f (the mean's share sums to 0)
        dm, dother = layout.back(np.matmul(G + mT(G), Xw) / fact)

        def daweights():
            # ∂C/∂w_k = xc_k xc_kᵀ/f (the mean's share vanishes again) - C ∂f/∂w_k/f, w = f·a
            quad = np.sum(Xc * np.matmul(G, Xc), axis=0)  # xc_kᵀ Ḡ xc_k for each observation k
            scale = 1.0 if f is None else f
            if ddof == 0:
                dfact = scale  # f = Σw
            else:  # f = Σw - ddof Σ(w a)/Σw
                dfact = scale * (1 - ddof * (2 * a * total - np.sum(w * a)) / (total * total))
            inner = np.sum(G * np.reshape(c, (p, p)))
            return cast_like(scale * quad / fact - inner * dfact / fact, aweights)

        tangents = {
            "m": dm,
            "y": NO_TANGENT if other is None else dother,
            "fweights": no_derivative(np.cov, "fweights", fweights,
                                      "frequency weights are integer counts (numpy checks that they are)"),
            "aweights": Thunk(daweights),
        }
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in names)

    return c, cov_pullback


@rrule(np.corrcoef, formula=whole(
    "(C̄ + C̄ᵀ)·Xc - diag(r/d)·Xc, rows of {a[0]} (Xc: the variables as rows, less their mean; "
    "d = diag(Xc·Xcᵀ), C̄ = {dy}/√(d dᵀ), r = row sums + column sums of {dy}·{y})",
    "(C̄ + C̄ᵀ)·Xc - diag(r/d)·Xc, rows of {a[1]}",
    None,
))
def corrcoef_rrule(x, *args, **kwargs):
    """Differentiable in x and y; the derivative of R unclipped (0 where |R| = 1, as the clip's)."""
    b, r, layout = _laid_out(np.corrcoef, x, args, kwargs)
    X, other = layout.X, layout.y
    p = np.shape(X)[0]
    # R does not depend on cov's normalization: the unnormalized C = Xc Xcᵀ and d = diag C
    Xc = X - np.mean(X, axis=1, keepdims=True)
    d = np.sum(Xc * Xc, axis=1)
    s = np.sqrt(d)
    names = positional_names(np.corrcoef, 1 + len(args))

    def corrcoef_pullback(dy):
        G = np.reshape(dy, (p, p))
        R = np.reshape(r, (p, p))
        # R = C/√(d dᵀ): C̄ = Ḡ/√(d dᵀ), d̄_i = -Σ_j (Ḡ_ij R_ij + Ḡ_ji R_ji)/(2 d_i), then
        # X̄ = (C̄ + C̄ᵀ) Xc + 2 diag(d̄) Xc
        Cbar = G / (np.expand_dims(s, -1) * np.expand_dims(s, 0))
        H = G * R
        dd = (np.sum(H, axis=1) + np.sum(H, axis=0)) / d
        dX = np.matmul(Cbar + mT(Cbar), Xc) - np.expand_dims(dd, -1) * Xc
        dx, dother = layout.back(dX)
        tangents = {"x": dx, "y": NO_TANGENT if other is None else dother}
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in names)

    return r, corrcoef_pullback

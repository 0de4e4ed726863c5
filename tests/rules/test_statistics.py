"""Rules of the order statistics and second moments: percentile, quantile, nanpercentile,
nanquantile, cov and corrcoef."""
import warnings
import weakref

import numpy as np
import pytest

import tapegrad.rules.statistics  # noqa: F401  (registers the rules)
import tapegrad
from tapegrad import ZERO, check_grad, grad, gradient, jvp
from tapegrad.errors import ComplexValueError
from tapegrad.rules import statistics

from _rule_tables import DTYPES

#: every method of numpy's quantiles (the rules differentiate them all)
METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
           "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
           "normal_unbiased"]
QUANTILES = [np.percentile, np.quantile, np.nanpercentile, np.nanquantile]
NAN_FORMS = {np.nanpercentile, np.nanquantile}
#: the methods whose result moves with q between the kinks (linear and Hyndman-Fan's)
CONTINUOUS = ["linear", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased", "normal_unbiased"]
#: the methods whose result is piecewise constant in q (its derivative is 0)
STEPS = [m for m in METHODS if m not in CONTINUOUS]
# constant levels held as module constants: an array in a lambda's closure would be
# differentiated by check_grad (the rows with a traced q say so)
PERCENTS = np.array([10.0, 50.0, 85.0])
FRACTIONS = np.array([[0.05, 0.5], [0.7, 1.0]])
# Traced levels: inputs() gives them values in [-1, 1], and `_near` moves them by at most
# 0.02 around levels where no method has a kink or a jump for the group sizes of the rows
# (found by scanning numpy's own results; n = 4 or 5 for LEVELS, 5 for LEVELS_2D with the
# continuous methods, 3 or 4 for LEVELS_NAN, 8 for LEVELS_8 with linear and hazen). 0.95 is
# past the last place for some methods (clipped: derivative 0), inside for others.
LEVELS = np.array([0.45, 0.56, 0.95])
LEVELS_2D = np.array([[0.36, 0.45], [0.55, 0.64]])
LEVELS_NAN = np.array([[0.29, 0.45], [0.55, 0.71]])
LEVELS_8 = np.array([0.24, 0.5, 0.63])
DATA = np.random.default_rng(15).permutation(np.linspace(-1, 1, 15)).reshape(3, 5)
FWEIGHTS = np.array([1, 2, 1, 3, 1, 2])
AWEIGHTS = np.array([0.5, 1.5, 1.0, 2.0, 0.75, 1.25])


def row(label, fn, shapes, f):
    return pytest.param(fn, shapes, f, id=f"{fn.__name__} {label}".strip())


def _near(level, u):
    """A level moved by u in [-1, 1]: at most 0.02 either way."""
    return level + 0.02 * u


#: (rule, input shapes, function of the inputs going through the rule)
TABLE = [
    row("", np.percentile, [(7,)], lambda x: np.percentile(x, 30)),
    row("q array axis=1", np.percentile, [(3, 5)], lambda x: np.percentile(x, PERCENTS, axis=1)),
    row("axis=0 keepdims", np.percentile, [(3, 5)], lambda x: np.percentile(x, PERCENTS, axis=0, keepdims=True)),
    row("axis tuple", np.percentile, [(2, 3, 4)], lambda x: np.percentile(x, 40.0, axis=(0, 2))),
    row("axis tuple keepdims q array", np.percentile, [(2, 3, 4)],
        lambda x: np.percentile(x, PERCENTS, axis=(-1, 0), keepdims=True)),
    row("axis=None keepdims", np.percentile, [(2, 3, 4)], lambda x: np.percentile(x, 62.5, None, keepdims=True)),
    row("of 0-d", np.percentile, [()], lambda x: np.percentile(x, 75)),
    *[row(f"method={m}", np.percentile, [(3, 5)], lambda x, m=m: np.percentile(x, PERCENTS, axis=1, method=m))
      for m in METHODS],
    row("", np.quantile, [(7,)], lambda x: np.quantile(x, 0.3)),
    row("2-d q axis=-1", np.quantile, [(3, 5)], lambda x: np.quantile(x, FRACTIONS, axis=-1)),
    row("axis tuple keepdims", np.quantile, [(2, 3, 4)], lambda x: np.quantile(x, 0.85, (0, 1), keepdims=True)),
    row("by position method keepdims", np.quantile, [(2, 3, 4)],
        lambda x: np.quantile(x, FRACTIONS, 1, None, False, "hazen", True)),
    *[row(f"method={m}", np.quantile, [(2, 3, 4)], lambda x, m=m: np.quantile(x, FRACTIONS, axis=2, method=m))
      for m in ("lower", "nearest", "midpoint", "median_unbiased")],
    # the nan forms: inputs() puts nans into the array (none is a whole group)
    row("", np.nanpercentile, [(7,)], lambda x: np.nanpercentile(x, 30)),
    row("q array axis=1", np.nanpercentile, [(3, 5)], lambda x: np.nanpercentile(x, PERCENTS, axis=1)),
    row("axis tuple keepdims", np.nanpercentile, [(2, 3, 4)],
        lambda x: np.nanpercentile(x, PERCENTS, axis=(0, 2), keepdims=True)),
    row("axis=None", np.nanpercentile, [(2, 3, 4)], lambda x: np.nanpercentile(x, 45.0)),
    *[row(f"method={m}", np.nanpercentile, [(3, 5)],
          lambda x, m=m: np.nanpercentile(x, PERCENTS, axis=1, method=m)) for m in METHODS],
    row("", np.nanquantile, [(7,)], lambda x: np.nanquantile(x, 0.7)),
    row("2-d q axis=0 keepdims", np.nanquantile, [(3, 5)], lambda x: np.nanquantile(x, FRACTIONS, axis=0, keepdims=True)),
    row("axis=-1 weibull", np.nanquantile, [(2, 3, 4)], lambda x: np.nanquantile(x, FRACTIONS, -1, method="weibull")),
    # q traced: the second input is u in [-1, 1], the level _near(level, u)
    row("q traced", np.percentile, [(7,), ()], lambda x, u: np.percentile(x, 100 * _near(0.46, u))),
    *[row(f"q array traced method={m}", np.percentile, [(3, 5), (3,)],
          lambda x, u, m=m: np.percentile(x, 100 * _near(LEVELS, u), axis=1, method=m)) for m in METHODS],
    row("q traced axis tuple keepdims", np.percentile, [(2, 3, 4), (3,)],
        lambda x, u: np.percentile(x, 100 * _near(LEVELS_8, u), axis=(-1, 0), keepdims=True)),
    row("2-d q traced axis=-1", np.quantile, [(3, 5), (2, 2)], lambda x, u: np.quantile(x, _near(LEVELS_2D, u), axis=-1)),
    row("q traced axis tuple hazen", np.quantile, [(2, 3, 4), ()],
        lambda x, u: np.quantile(x, _near(0.47, u), (0, 2), method="hazen")),
    row("q traced by keyword", np.quantile, [(3, 5), (3,)], lambda x, u: np.quantile(x, q=_near(LEVELS, u), axis=1)),
    row("q list of traced and constant levels", np.quantile, [(7,), (2,)],
        lambda x, u: np.quantile(x, [_near(0.46, u[0]), 0.5, _near(0.63, u[1])])),
    # q alone (the data a module constant): the check sees the derivative in q by itself
    *[row(f"q alone method={m}", np.quantile, [(2, 2)],
          lambda u, m=m: np.quantile(DATA, _near(LEVELS_2D, u), axis=1, method=m)) for m in CONTINUOUS],
    row("q traced", np.nanpercentile, [(7,), ()], lambda x, u: np.nanpercentile(x, 100 * _near(0.46, u))),
    *[row(f"q array traced method={m}", np.nanpercentile, [(3, 5), (3,)],
          lambda x, u, m=m: np.nanpercentile(x, 100 * _near(LEVELS, u), axis=1, method=m)) for m in METHODS],
    *[row(f"2-d q traced method={m}", np.nanquantile, [(2, 3, 4), (2, 2)],
          lambda x, u, m=m: np.nanquantile(x, _near(LEVELS_NAN, u), axis=-1, method=m)) for m in CONTINUOUS],
    row("q traced axis=0 keepdims", np.nanquantile, [(3, 5), ()],
        lambda x, u: np.nanquantile(x, _near(0.3, u), axis=0, keepdims=True)),
    row("", np.cov, [(3, 6)], lambda m: np.cov(m)),
    row("rowvar=False", np.cov, [(6, 3)], lambda m: np.cov(m, rowvar=False)),
    row("y", np.cov, [(3, 6), (2, 6)], lambda m, y: np.cov(m, y)),
    row("y rowvar=False", np.cov, [(6, 2), (6, 3)], lambda m, y: np.cov(m, y, rowvar=False)),
    row("y one row rowvar=False", np.cov, [(6, 2), (1, 6)], lambda m, y: np.cov(m, y, False)),
    row("1-d", np.cov, [(6,)], lambda m: np.cov(m)),
    row("1-d with 1-d y", np.cov, [(6,), (6,)], lambda m, y: np.cov(m, y)),
    row("one row", np.cov, [(1, 6)], lambda m: np.cov(m)),
    row("bias", np.cov, [(3, 6)], lambda m: np.cov(m, bias=True)),
    row("ddof", np.cov, [(3, 6)], lambda m: np.cov(m, None, True, False, 3)),
    row("constant weights", np.cov, [(3, 6)], lambda m: np.cov(m, fweights=FWEIGHTS, aweights=AWEIGHTS)),
    row("fweights", np.cov, [(2, 6), (6,)], lambda m, y: np.cov(m, y, fweights=FWEIGHTS, ddof=2)),
    # aweights are differentiated too (kept positive: 1.5 + a with a in (-1, 1))
    row("aweights", np.cov, [(3, 6), (6,)], lambda m, a: np.cov(m, None, True, False, None, None, 1.5 + a)),
    row("aweights fweights ddof=2", np.cov, [(3, 6), (6,)],
        lambda m, a: np.cov(m, None, True, False, 2, FWEIGHTS, 1.5 + a)),
    row("aweights fweights bias", np.cov, [(3, 6), (6,)],
        lambda m, a: np.cov(m, None, True, True, None, FWEIGHTS, 1.5 + a)),
    row("", np.corrcoef, [(3, 6)], lambda x: np.corrcoef(x)),
    row("rowvar=False", np.corrcoef, [(6, 3)], lambda x: np.corrcoef(x, rowvar=False)),
    row("y", np.corrcoef, [(2, 6), (1, 6)], lambda x, y: np.corrcoef(x, y)),
    row("y rowvar=False", np.corrcoef, [(6, 2), (6, 2)], lambda x, y: np.corrcoef(x, y, False)),
    row("1-d pair", np.corrcoef, [(6,), (6,)], lambda x, y: np.corrcoef(x, y)),
    row("one variable", np.corrcoef, [(6,)], lambda x: np.corrcoef(x) * x),
]

EXERCISED = {p.values[0] for p in TABLE}


def _spread(shape):
    """Distinct values a wide step apart in (-1, 1), in a fixed shuffled order: no two close
    enough for central differences to change the sort (ties and kinks break them)."""
    n = int(np.prod(shape))
    return np.random.default_rng(n).permutation(np.linspace(-1, 1, n)).reshape(shape)


def _with_nans(x):
    """x with nans at a few places: each group keeps values that are not nan."""
    x = np.array(x, dtype=np.float64)
    flat = x.reshape(-1)
    if flat.size > 1:
        flat[1::7] = np.nan
    return x


def inputs(rng, shapes, dtype, fn):
    if fn in QUANTILES:
        xs = [rng.permutation(np.linspace(-1, 1, int(np.prod(s)))).reshape(s) for s in shapes]
        if fn in NAN_FORMS:
            xs[0] = _with_nans(xs[0])  # the data (a second input is the levels)
    else:
        xs = [rng.uniform(-1, 1, size=s) for s in shapes]
    return [x.astype(dtype) for x in xs]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """Each rule's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype, fn))


def _sq(f):
    return lambda *xs: np.sum(f(*xs) ** 2) / 2


_M = np.array([[0.3, -1.2, 0.8, 1.9, -0.4, 0.1], [1.1, 0.2, -0.7, 0.5, 1.6, -1.5], [-0.9, 0.6, 1.4, -0.2, 0.9, 0.4]])

#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = [
    (np.percentile, _sq(lambda x: np.percentile(x, PERCENTS, axis=1)), (_spread((3, 5)),)),
    (np.quantile, _sq(lambda x: np.quantile(x, FRACTIONS, axis=(0, 2), method="hazen")), (_spread((2, 3, 4)),)),
    (np.nanpercentile, _sq(lambda x: np.nanpercentile(x, PERCENTS, axis=1)), (_with_nans(_spread((3, 5))),)),
    (np.nanquantile, _sq(lambda x: np.nanquantile(x, 0.4, axis=-1, method="midpoint")), (_with_nans(_spread((2, 3, 4))),)),
    # q traced: ∂²/∂q² = 0, ∂²/∂q∂x through the gap s[hi] - s[lo]
    (np.percentile, _sq(lambda x, q: np.percentile(x, q, axis=1)), (_spread((3, 5)), 100 * LEVELS)),
    (np.quantile, _sq(lambda x, q: np.quantile(x, [q, 0.5], axis=(0, 2), method="hazen")), (_spread((2, 3, 4)), 0.47)),
    (np.nanquantile, _sq(lambda x, q: np.nanquantile(x, q, axis=-1, method="weibull")),
     (_with_nans(_spread((2, 3, 4))), LEVELS_NAN)),
    (np.cov, _sq(lambda m, y: np.cov(m, y)), (_M[:2], _M[2:])),
    (np.cov, _sq(lambda m, a: np.cov(m, None, False, False, 2, None, a)), (_M.T.copy(), 1.5 + _M[0])),
    (np.corrcoef, _sq(lambda x, y: np.corrcoef(x, y, rowvar=False)), (_M.T[:, :2].copy(), _M.T[:, 2:].copy())),
]


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(fn, f, args):
    """The pullbacks are numpy code a Tracer records: second derivatives match central
    differences (0 almost everywhere for the piecewise-linear quantiles)."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


# --- quantiles: closed forms ---


@pytest.mark.parametrize("shape, axis", [((7,), None), ((6,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), (0, 2))],
                         ids=str)
def test_percentile_50_is_the_median(shape, axis):
    """The 50th percentile is the median (numpy's definition for both): the same gradient."""
    x = _spread(shape)
    for keepdims in (False, True):
        seed = np.cos(np.arange(1.0, 1.0 + np.size(np.median(x, axis, keepdims=keepdims))))
        seed = seed.reshape(np.shape(np.median(x, axis, keepdims=keepdims)))
        a = grad(lambda x: np.percentile(x, 50, axis, keepdims=keepdims), x, seed=seed)[1][1]
        b = grad(lambda x: np.median(x, axis, keepdims=keepdims), x, seed=seed)[1][1]
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)


def test_quantile_weights_the_two_order_statistics():
    """np.quantile(x, q) of 5 values is (1 - t) s[1] + t s[2] at q = 0.3 (virtual index 1.2):
    0.8 to the second smallest element, 0.2 to the third, 0 elsewhere."""
    x = np.array([0.4, -1.0, 2.0, 0.1, 1.5])  # sorted: -1.0, 0.1, 0.4, 1.5, 2.0
    np.testing.assert_allclose(gradient(lambda x: np.quantile(x, 0.3), x)[0], [0.2, 0.0, 0.0, 0.8, 0.0])
    # percentile 30 is the same level; 'lower' and 'higher' take one of the two
    np.testing.assert_allclose(gradient(lambda x: np.percentile(x, 30), x)[0], [0.2, 0.0, 0.0, 0.8, 0.0])
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 0.3, method="lower"), x)[0], [0, 0, 0, 1, 0])
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 0.3, method="higher"), x)[0], [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 0.3, method="midpoint"), x)[0],
                                  [0.5, 0, 0, 0.5, 0])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_gradient_reproduces_the_value(method, n):
    """For a fixed order a quantile is Σ w·x with weights summing to 1: the gradient is w, so
    ⟨gradient, x⟩ is the value itself and the gradient sums to 1, for every level and method
    (numpy's own index rules, at the levels where they switch: k/n, k/(n-1), 0 and 1)."""
    x = _spread((n,)) * 3 + 0.25
    levels = np.unique(np.clip(np.concatenate([np.linspace(0, 1, 21), np.arange(n + 1) / n,
                                               np.arange(n) / max(n - 1, 1)]), 0, 1))
    for q in levels:
        # (q a default argument: grad differentiates the values a closure captures)
        value, (_, g) = grad(lambda x, q=q: np.quantile(x, q, method=method), x)
        assert value == np.quantile(x, q, method=method)
        np.testing.assert_allclose(np.sum(g * x), value, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(np.sum(g), 1.0, rtol=1e-14)
        assert np.all(g >= 0)


@pytest.mark.parametrize("fn", QUANTILES, ids=lambda f: f.__name__)
def test_value_is_numpys_own(fn):
    """The traced value is numpy's result, bit for bit, with its shape and dtype."""
    x = _spread((3, 4)).astype(np.float32)
    q = PERCENTS if "percentile" in fn.__name__ else PERCENTS / 100
    for kwargs in ({}, {"axis": 1, "keepdims": True}, {"axis": 0, "method": "weibull"}):
        want = fn(x, q, **kwargs)
        value, _ = grad(lambda x, q=q, kw=kwargs: fn(x, q, **kw), x, seed=np.ones(np.shape(want), want.dtype))
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_array_equal(value, want)


def test_ties_follow_the_stable_sort():
    """At a tie each sorted place is the element np.argsort(kind='stable') puts there: the
    first of the tied elements in memory order takes the lower place (as JAX's and autograd's
    sort); np.median's rule shares instead."""
    x = np.array([1.0, 3.0, 3.0, 0.0])  # stable order: 0.0 (3), 1.0 (0), 3.0 (1), 3.0 (2)
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 1.0), x)[0], [0, 0, 1, 0])
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 2 / 3), x)[0], [0, 1, 0, 0])
    np.testing.assert_array_equal(gradient(lambda x: np.percentile(x, 50), x)[0], [0.5, 0.5, 0, 0])
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 5 / 6), x)[0], [0, 0.5, 0.5, 0])


def test_python_number_and_0d():
    """A number is its own percentile: slope 1."""
    assert gradient(lambda x: np.percentile(x, 30), 2.5)[0] == 1.0
    np.testing.assert_array_equal(gradient(lambda x: np.quantile(x, 0.3), np.array(2.5))[0], 1.0)


# --- quantiles: nan ---


@pytest.mark.parametrize("fn, pct", [(np.nanpercentile, 100), (np.nanquantile, 1)], ids=lambda v: getattr(v, "__name__", ""))
def test_nan_forms_skip_nans(fn, pct):
    """The nan forms differentiate the quantile of the values that are not nan: the nans get 0,
    the rest what np.quantile of those values alone gives."""
    x = np.array([[0.4, np.nan, -1.0, 2.0, 0.1], [np.nan, 1.5, np.nan, -0.3, 0.9]])
    q = np.array([0.25, 0.6]) * pct
    g = gradient(lambda x, q=q: np.sum(fn(x, q, axis=1) * np.array([1.0, 2.0])), x)[0]  # (levels, groups)
    assert g[0, 1] == 0 and g[1, 0] == 0 and g[1, 2] == 0
    for i, w in enumerate([1.0, 2.0]):
        keep = ~np.isnan(x[i])
        want = gradient(lambda v, q=q / pct, w=w: w * np.sum(np.quantile(v, q)), x[i][keep])[0]
        np.testing.assert_allclose(g[i][keep], want, rtol=1e-15)


def test_all_nan_group_gets_zero():
    """An all-nan group has a nan quantile (numpy warns) and no element to differentiate: zeros."""
    x = np.array([[np.nan, np.nan, np.nan], [0.3, -0.2, 0.9]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = gradient(lambda x: np.nansum(np.nanquantile(x, 0.5, axis=1)), x)[0]
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, 0, 0]])


def test_percentile_of_a_group_holding_nan_is_nan():
    """np.percentile of a group holding nan is nan, and so is its gradient (as np.median's); the
    other groups are untouched."""
    x = np.array([[0.4, np.nan, -1.0], [0.3, -0.2, 0.9]])
    g = gradient(lambda x: np.nansum(np.percentile(x, 50, axis=1)), x)[0]
    assert np.all(np.isnan(g[0]))
    np.testing.assert_array_equal(g[1], [1, 0, 0])
    # forward mode (derived from the pullback as its derivative in dy) moves the nan group's
    # result by nan too, as the gradient's pairing with the direction does (it took a constant
    # nan for 0: a variation of 1.0 along ones, where the gradient gives nan)
    along = np.ones_like(x)
    dy = tapegrad.jvp(lambda x: np.percentile(x, 50, axis=1), (x,), (along,))[1]
    assert np.isnan(dy[0]) and dy[1] == 1.0
    assert np.isnan(tapegrad.jvp(lambda x: np.sum(np.percentile(x, 50, axis=1)), (x,), (along,))[1])


# --- quantiles: the levels ---


def test_level_derivative_of_linear_is_the_gap_times_n_minus_1():
    """np.quantile(x, q) = (1 - t) s[lo] + t s[hi], t the fraction of the virtual index (n - 1)q:
    ∂/∂q = (s[hi] - s[lo])·(n - 1); np.percentile takes q in percent: a hundredth of it."""
    x = np.array([0.4, -1.0, 2.0, 0.1, 1.5])
    s = np.sort(x)  # -1.0, 0.1, 0.4, 1.5, 2.0
    for q in (0.1, 0.3, 0.55, 0.9):
        lo = int(np.floor(4 * q))
        want = (s[lo + 1] - s[lo]) * 4
        assert gradient(lambda x, q: np.quantile(x, q), x, q)[1] == pytest.approx(want, rel=1e-14)
        assert gradient(lambda x, p: np.percentile(x, p), x, 100 * q)[1] == pytest.approx(want / 100, rel=1e-14)
    # an array of levels: one derivative each, weighted by the seed
    q = np.array([[0.1, 0.3], [0.55, 0.9]])
    seed = np.array([[1.0, -2.0], [0.5, 3.0]])
    lo = np.floor(4 * q).astype(int)
    _, (_, _, dq) = grad(lambda x, q: np.quantile(x, q), x, q, seed=seed)
    np.testing.assert_allclose(dq, seed * (s[lo + 1] - s[lo]) * 4, rtol=1e-14)


@pytest.mark.parametrize("method, alpha, beta", [
    ("linear", 1, 1), ("interpolated_inverted_cdf", 0, 1), ("hazen", 0.5, 0.5), ("weibull", 0, 0),
    ("median_unbiased", 1 / 3, 1 / 3), ("normal_unbiased", 3 / 8, 3 / 8)], ids=lambda v: str(v))
@pytest.mark.parametrize("fn, scale", [(np.quantile, 1), (np.percentile, 100)], ids=lambda v: getattr(v, "__name__", ""))
def test_level_derivative_of_the_continuous_methods(fn, scale, method, alpha, beta):
    """Hyndman and Fan's continuous methods interpolate at the virtual index g(q) = nq + α +
    q(1 - α - β) - 1 (numpy's table): ∂/∂q = (s[hi] - s[lo])·(n + 1 - α - β) where g is inside
    [0, n - 1), 0 where numpy clips it to the first or the last place."""
    x = _spread((6,)) * 3 + 0.5
    s, n = np.sort(x), 6
    for q in np.linspace(0.005, 0.995, 37):
        g = n * q + alpha + q * (1 - alpha - beta) - 1
        if abs(g - round(g)) < 1e-6:
            continue  # a kink: see test_level_derivative_at_a_kink_is_the_right_hand_one
        if g < 0 or g >= n - 1:
            want = 0.0
        else:
            lo = int(np.floor(g))
            want = (s[lo + 1] - s[lo]) * (n + 1 - alpha - beta)
        got = gradient(lambda x, q: fn(x, q, method=method), x, scale * q)[1]
        assert got == pytest.approx(want / scale, rel=1e-12, abs=1e-15), q


@pytest.mark.parametrize("method", STEPS)
def test_level_derivative_of_the_piecewise_constant_methods_is_zero(method):
    """The selecting methods, midpoint (t is 0 or 1/2) and averaged_inverted_cdf (t is 1/2 or 1)
    do not move with q between their jumps: q gets 0, of its own shape and dtype."""
    x = _spread((6,))
    for q in np.linspace(0.0, 1.0, 21):
        assert gradient(lambda x, q: np.quantile(x, q, method=method), x, q)[1] == 0.0
    q = np.array([[5.0, 45.0], [62.0, 100.0]], dtype=np.float32)
    _, (_, _, dq) = grad(lambda x, q: np.percentile(x, q, method=method), x, q, seed=np.ones((2, 2)))
    assert dq.dtype == np.float32 and dq.shape == (2, 2)
    np.testing.assert_array_equal(dq, 0)


def test_level_derivative_at_a_kink_is_the_right_hand_one():
    """Where the virtual index is an integer k numpy takes lo = k, hi = k + 1, t = 0: the
    derivative is the right-hand one, towards the next place (q = 0 too); where numpy clips
    the index to the last place it is 0 (q = 1 for linear, and earlier for the Hyndman-Fan
    methods), as below the first (weibull below q = 1/(n + 1))."""
    x = np.array([0.4, -1.0, 2.0, 0.1, 1.5])
    s = np.sort(x)
    h = 1e-7
    for k, q in enumerate([0.0, 0.25, 0.5, 0.75]):  # (n - 1)q = k exactly
        want = (s[k + 1] - s[k]) * 4
        assert gradient(lambda x, q: np.quantile(x, q), x, q)[1] == pytest.approx(want, rel=1e-14)
        assert (np.quantile(x, q + h) - np.quantile(x, q)) / h == pytest.approx(want, rel=1e-6)
    assert gradient(lambda x, q: np.quantile(x, q), x, 1.0)[1] == 0.0
    assert gradient(lambda x, p: np.percentile(x, p, method="hazen"), x, 95.0)[1] == 0.0  # g = 4.25
    assert gradient(lambda x, q: np.quantile(x, q, method="weibull"), x, 0.1)[1] == 0.0  # g = -0.4


def test_level_captured_by_a_closure_is_differentiated():
    """grad differentiates the values a closure captures: the level of make(90.0) gets its
    derivative in the closure's Tangent (a float for a float), and x the gradient it gets
    when the level is a constant."""
    def make(q):
        return lambda x: np.percentile(x, q)

    x = np.array([0.4, -1.0, 2.0, 0.1, 1.5])
    s = np.sort(x)
    value, (df, dx) = grad(make(90.0), x)
    assert value == np.percentile(x, 90.0)
    np.testing.assert_array_equal(dx, grad(lambda x, q=90.0: np.percentile(x, q), x)[1][1])
    assert type(df.q) is float and df.q == pytest.approx((s[4] - s[3]) * 4 / 100, rel=1e-14)  # 4·0.9 = 3.6
    # an array of levels in a closure gets an array tangent (here of a nan form)
    f = (lambda q: lambda x: np.sum(np.nanquantile(x, q)))(LEVELS.copy())
    _, (df, _) = grad(f, x)
    assert df.q.shape == (3,) and df.q.dtype == np.float64
    check_grad(f, x)  # (check_grad moves the closure's values too)


def test_levels_in_a_list_get_a_list_of_tangents():
    """A list (or tuple) of levels holding traced numbers gets a list (or tuple) of tangents, in
    both modes; its constant entries beside them are fine, and so is a constant list."""
    x = np.array([0.4, -1.0, 2.0, 0.1, 1.5])
    s = np.sort(x)
    d3, d6 = (s[2] - s[1]) * 4, (s[3] - s[2]) * 4  # q = 0.3: g = 1.2; q = 0.6: g = 2.4
    assert gradient(lambda x, q: np.sum(np.quantile(x, [q, 0.5])), x, 0.3)[1] == pytest.approx(d3, rel=1e-14)
    for levels in ([0.3, 0.6], (0.3, 0.6)):
        dq = gradient(lambda x, q: np.sum(np.quantile(x, q) * np.array([1.0, 2.0])), x, levels)[1]
        assert type(dq) is type(levels)
        np.testing.assert_allclose(dq, [d3, 2 * d6], rtol=1e-14)
    _, dy = jvp(lambda x, q: np.quantile(x, [q, 0.5]), (x, 0.3), (np.zeros(5), 1.0))
    np.testing.assert_allclose(dy, [d3, 0.0], rtol=1e-14)
    np.testing.assert_allclose(gradient(lambda x: np.sum(np.quantile(x, [0.0, 1.0])), x)[0], [0, 1, 1, 0, 0])


def test_nan_forms_level_derivative_counts_the_values_that_are_not_nan():
    """The nan forms' n is each group's count of values that are not nan: q gets what np.quantile
    of those values alone gives it, summed over the groups; an all-nan group gives nothing."""
    x = np.array([[0.4, np.nan, -1.0, 2.0, 0.1], [np.nan, 1.5, np.nan, -0.3, 0.9], [np.nan] * 5])
    q = np.array([0.25, 0.6])
    weights = np.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-nan group
        dq = gradient(lambda x, q: np.nansum(np.nanquantile(x, q, axis=1) * weights), x, q)[1]
        dp = gradient(lambda x, p: np.nansum(np.nanpercentile(x, p, axis=1) * weights), x, 100 * q)[1]
    want = sum(w * gradient(lambda v, q: np.sum(np.quantile(v, q)), row[~np.isnan(row)], q)[1]
               for w, row in zip(weights[:2], x[:2]))
    np.testing.assert_allclose(dq, want, rtol=1e-14)
    np.testing.assert_allclose(dp, want / 100, rtol=1e-14)


def test_percentile_of_a_group_holding_nan_gives_q_nan():
    """np.percentile of a group holding nan is nan whatever q: q's derivative is nan, as x's."""
    x = np.array([[0.4, np.nan, -1.0], [0.3, -0.2, 0.9]])
    assert np.isnan(gradient(lambda x, q: np.nansum(np.percentile(x, q, axis=1)), x, 30.0)[1])
    assert gradient(lambda x, q: np.percentile(x[1], q), x, 30.0)[1] == pytest.approx((0.3 + 0.2) * 2 / 100)


def test_constant_arguments_get_no_tangent():
    """A gradient tells the rule which arguments are constants (``needs``): their tangents are
    NoTangent, and for a constant q the pullback keeps neither the data nor its sort order, so
    a large intermediate goes as soon as the function drops it (a traced q needs it)."""
    x = _spread((3, 5))
    _, back = tapegrad.rrule(np.percentile, x, 30.0, axis=1, needs=(True, False))
    _, da, dq = back(np.ones(3))
    assert da.shape == (3, 5) and dq is tapegrad.NO_TANGENT
    _, back = tapegrad.rrule(np.percentile, x, 30.0, axis=1, needs=(False, True))
    _, da, dq = back(np.ones(3))
    assert da is tapegrad.NO_TANGENT and type(dq) is tapegrad.extend.Thunk and np.shape(dq.fn()) == ()
    for traced in (False, True):
        freed = []

        def f(x, q, traced=traced):
            a = x + 1.0  # add keeps only stand-ins
            ref = weakref.ref(a._val)
            b = np.percentile(a, q if traced else PERCENTS, axis=1)
            del a
            freed.append(ref() is None)
            return np.sum(b)

        grad(f, _spread((64, 64)), PERCENTS, wrt=(0, 1))
        assert freed == [not traced]


# --- quantiles: what is refused ---


def test_unsupported_method_is_refused_naming_it(monkeypatch):
    """A method numpy takes and the rules do not know raises NotImplementedError naming it
    (numpy's own ValueError for a name numpy does not know)."""
    monkeypatch.setattr(statistics, "_METHODS", statistics._METHODS - {"hazen"})
    with pytest.raises(NotImplementedError, match=r"method='hazen'"):
        gradient(lambda x: np.quantile(x, 0.3, method="hazen"), np.arange(4.0))
    with pytest.raises(ValueError, match="not a valid method"):
        gradient(lambda x: np.quantile(x, 0.3, method="cubic"), np.arange(4.0))


def test_weights_and_out_are_refused():
    """weights= (numpy's, for method='inverted_cdf' only) is not differentiated: it raises.
    (out= never reaches the rule in a gradient: tapegrad writes the result into it; a direct
    call of the rule with out= raises.)"""
    with pytest.raises(NotImplementedError, match="weights="):
        gradient(lambda x, w=np.ones(4): np.quantile(x, 0.3, method="inverted_cdf", weights=w), np.arange(4.0))
    with pytest.raises(NotImplementedError, match="out="):
        tapegrad.rrule(np.percentile, np.arange(4.0), 30, out=np.zeros(()))


# --- cov and corrcoef: closed forms ---


def test_cov_of_two_variables_closed_form():
    """cov(x, y)[0, 1] = Σ(x - x̄)(y - ȳ)/(N - 1): its gradient in x is (y - ȳ)/(N - 1), and
    cov(x)'s is np.var(x, ddof=1)'s, 2(x - x̄)/(N - 1)."""
    x, y = _M[0], _M[1]
    gx, gy = gradient(lambda x, y: np.cov(x, y)[0, 1], x, y)
    np.testing.assert_allclose(gx, (y - y.mean()) / 5, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(gy, (x - x.mean()) / 5, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(gradient(np.cov, x)[0], 2 * (x - x.mean()) / 5, rtol=1e-14)
    np.testing.assert_allclose(gradient(lambda x: np.cov(x, bias=True), x)[0], gradient(np.var, x)[0], rtol=1e-14)


def test_cov_with_aweights_closed_form():
    """With aweights a and ddof=0, C = Σ a_k (x_k - x̄_a)²/Σa: ∂C/∂a_k = ((x_k - x̄_a)² - C)/Σa."""
    x, a = _M[0], AWEIGHTS
    c = np.cov(x, aweights=a, ddof=0)
    centred = x - np.average(x, weights=a)
    ga = gradient(lambda a: np.cov(x, None, True, False, 0, None, a), a)[0]
    np.testing.assert_allclose(ga, (centred ** 2 - c) / np.sum(a), rtol=1e-13)


def test_cov_fweights_traced_is_refused():
    """fweights are integer counts (numpy checks): a traced one raises naming it."""
    x = _M[0]
    with pytest.raises(NotImplementedError, match=r"numpy.cov with respect to its argument fweights"):
        gradient(lambda x, f: np.sum(np.cov(x, None, True, False, None, f)), x, np.ones(6))
    # a constant list of counts is fine
    check_grad(lambda x: np.cov(x, None, True, False, None, [1, 2, 1, 3, 1, 2]), x)


def test_corrcoef_of_a_linear_pair_is_flat():
    """R of y = 2x + 1 and x is 1, its maximum: the gradient is 0, as numpy's clip to [-1, 1]
    would also give."""
    x = _M[0]
    gx, gy = gradient(lambda x, y: np.corrcoef(x, y)[0, 1], x, 2 * x + 1)
    np.testing.assert_allclose(gx, 0, atol=1e-13)
    np.testing.assert_allclose(gy, 0, atol=1e-13)
    gx = gradient(lambda x, y: np.corrcoef(x, y)[0, 1], x, -0.5 * x + 3)[0]
    np.testing.assert_allclose(gx, 0, atol=1e-13)


def test_corrcoef_is_invariant_to_scale_and_shift():
    """R does not change when a variable is scaled or shifted: its gradient is orthogonal to each
    row of the data and to the constant rows."""
    g = gradient(lambda x: np.sum(np.corrcoef(x) * np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 3.0], [1.0, 1.0, 0.0]])), _M)[0]
    np.testing.assert_allclose(np.sum(g * _M, axis=1), 0, atol=1e-13)
    np.testing.assert_allclose(np.sum(g, axis=1), 0, atol=1e-13)
    assert np.max(np.abs(g)) > 0.1


def test_corrcoef_of_one_variable_is_constant():
    """One variable: R = c/c = 1 (a 0-d result), with zero gradient."""
    g = gradient(np.corrcoef, _M[0])[0]
    np.testing.assert_allclose(g, 0, atol=1e-15)


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef], ids=lambda f: f.__name__)
def test_cov_value_is_numpys_own(fn):
    """The traced value is numpy's result, bit for bit (float64 from float32 data, as numpy)."""
    m, y = _M.astype(np.float32), _M[:1] * 2
    for args in ((m,), (m, y), (m[0],), (m.T, y.T, False)):
        want = fn(*args)
        value, _ = grad(lambda *a: fn(*a), *args, seed=np.ones(np.shape(want)))
        # (a 0-d result comes back as the float it is)
        assert np.shape(value) == np.shape(want) and np.asarray(value).dtype == want.dtype
        np.testing.assert_array_equal(value, want)


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef], ids=lambda f: f.__name__)
def test_complex_data_is_refused(fn):
    """cov and corrcoef are not declared for complex values: a gradient refuses them clearly."""
    with pytest.raises(ComplexValueError):
        gradient(lambda z: np.real(np.sum(fn(z))), _M + 1j * _M[::-1])


def test_unread_arguments_get_no_tangent():
    """Arguments not traced are not read: y=None, constant weights, the levels."""
    _, (_, dm) = grad(lambda m: np.sum(np.cov(m, None, True, False, None, FWEIGHTS, AWEIGHTS)), _M)
    assert dm.shape == _M.shape
    _, (_, dx) = grad(lambda x: np.sum(np.cov(FWEIGHTS * 1.0, x)), _M[0])
    assert dx is not ZERO and dx.shape == (6,)


# --- compiled gradients replay the rules at new values ---


W3 = np.array([1.0, -2.0, 0.5])
FEATURES = np.arange(9.0).reshape(3, 3)


@pytest.mark.parametrize("f, nans", [
    (lambda x: np.nansum(np.percentile(x, 30, axis=1) * W3), True),
    (lambda x: np.nansum(np.nanquantile(x, FRACTIONS, axis=1, method="hazen") * W3), True),
    (lambda x: np.sum(np.cov(x, aweights=AWEIGHTS[:5]) * FEATURES), False),
    (lambda x: np.sum(np.corrcoef(x) * FEATURES), False),
], ids=["percentile", "nanquantile", "cov", "corrcoef"])
def test_compiled_gradient_replays_at_new_values(f, nans):
    """A compiled gradient's program recomputes the sort order, the nan counts and the centred
    data at each call: it agrees with grad at values in another order, also once nans (and
    a group of nans only) appear."""
    cg = tapegrad.compiled_grad(f, tiers=False)
    rng = np.random.default_rng(5)
    for i in range(5):
        x = rng.standard_normal((3, 5))
        if nans and i >= 3:
            x[0, :3] = np.nan
            if i == 4:
                x[2] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value, (_, g) = cg(x)
            want, (_, expected) = grad(f, x)
        np.testing.assert_allclose(value, want, rtol=1e-13)
        np.testing.assert_allclose(g, expected, rtol=1e-13, atol=1e-15)
    assert cg.cache_info()["programs"] == 1


def test_compiled_gradient_replays_with_traced_levels():
    """A compiled gradient in x and q recomputes the places, the weights and the gaps from the
    levels at each call: it agrees with grad at new data and at levels in other places."""
    def f(x, q):
        return np.sum(np.percentile(x, q, axis=1, method="hazen") * W3)

    cg = tapegrad.compiled_grad(f, tiers=False)
    rng = np.random.default_rng(7)
    for _ in range(5):
        x, q = rng.standard_normal((3, 5)), rng.uniform(1, 99, size=(2, 1))
        value, (_, gx, gq) = cg(x, q)
        want, (_, ex, eq) = grad(f, x, q)
        np.testing.assert_allclose(value, want, rtol=1e-13)
        np.testing.assert_allclose(gx, ex, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(gq, eq, rtol=1e-13, atol=1e-15)
    assert cg.cache_info()["programs"] == 1

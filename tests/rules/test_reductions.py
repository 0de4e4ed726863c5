"""Rules of the reductions: sums, means, products, extrema (nanmax and nanmin too), moments,
cumulative sums and products."""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad, grad
from tapegrad.registry import COMPLEX, RULES
from tapegrad.tangents import getitem

from _complex import check_complex_jvp, check_complex_rule

REDUCTIONS = [np.sum, np.mean, np.prod, np.max, np.amax, np.min, np.amin, np.ptp, np.median, np.std,
              np.var, np.nansum, np.nanmean, np.nanmax, np.nanmin]
SCANS = [np.cumsum, np.cumprod]
#: (shape, axis) pairs: every kind of axis where the shape has one
SHAPE_AXIS = [((), None), ((3,), None), ((3,), 0), ((3,), -1), ((2, 3), None), ((2, 3), 0),
              ((2, 3), -1), ((2, 3), (0, 1)), ((2, 3, 2), (0, -1))]
SCAN_SHAPE_AXIS = [((), None), ((3,), None), ((3,), 0), ((2, 3), None), ((2, 3), 0), ((2, 3), -1)]
DTYPES = [np.float64, np.float32]
#: average: (shape of a, axis, shape of the weights or None)
AVERAGES = [((3,), None, None), ((2, 3), 0, None), ((2, 3), None, (2, 3)), ((2, 3), -1, (2, 3)),
            ((2, 3), -1, (3,)), ((2, 3), 0, (2,)), ((2, 3, 2), (0, 2), (2, 2))]

EXERCISED = {*REDUCTIONS, *SCANS, np.average}


def name(v):
    return getattr(v, "__name__", "")


def uniform(rng, shape, dtype=np.float64):
    """Distinct values away from 0, where every reduction here is smooth."""
    return rng.uniform(0.5, 1.5, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", SHAPE_AXIS, ids=str)
@pytest.mark.parametrize("fn", REDUCTIONS, ids=name)
def test_reduction_rule(fn, shape, axis, keepdims, dtype, rng):
    """A reduction's gradient matches central differences for every axis, keepdims and dtype."""
    if fn is np.std and shape == ():
        pytest.skip("std of one element is 0 and its derivative nan (0/0), see test_std_of_constant_is_nan")
    # axis by position: a tuple of ints captured by a closure and passed by keyword reaches the
    # rule traced (the core lifts positional arguments only)
    check_grad(lambda x: fn(x, axis, keepdims=keepdims), uniform(rng, shape, dtype))


@pytest.mark.parametrize("fn", REDUCTIONS, ids=name)
def test_reduction_takes_axis_by_keyword(fn, rng):
    """axis= and keepdims= by name, or through the method of a traced array, work as by position."""
    x = uniform(rng, (2, 3, 2))
    check_grad(lambda x: fn(x, axis=-1), x)
    check_grad(lambda x: fn(x, axis=(0, -1), keepdims=True), x)
    if hasattr(np.ndarray, name(fn)):
        check_grad(lambda x: getattr(x, name(fn))(0), x)


@pytest.mark.parametrize("fn", [f for f in REDUCTIONS + SCANS if f is not np.std], ids=name)
def test_reduction_of_python_scalar(fn):
    """A Python float is reduced like a 0-d array and gets a float gradient."""
    value, (_, dx) = grad(lambda x: np.sum(fn(x)), 1.25)
    assert type(dx) is float
    check_grad(fn, 1.25)


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape, axis", SCAN_SHAPE_AXIS, ids=str)
@pytest.mark.parametrize("fn", SCANS, ids=name)
def test_scan_rule(fn, shape, axis, dtype, rng):
    """cumsum and cumprod match central differences along every axis, also flattened (None)."""
    check_grad(lambda x: fn(x, axis), uniform(rng, shape, dtype))


# --- products with zeros ---


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 0), (0, 2)], [(0, 1), (1, 1)]], ids=["one", "two", "spread"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_prod_with_zeros(zeros, axis, rng):
    """prod is right where the input has one or two zeros in a group (no division by x)."""
    x = uniform(rng, (2, 3))
    for at in zeros:
        x[at] = 0.0
    check_grad(lambda x: np.prod(x, axis), x)


def test_prod_with_one_zero_passes_the_others_product():
    """With one zero, only the zero gets a share: the product of the others."""
    _, (_, dx) = grad(lambda x: np.prod(x), np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(dx, [0.0, 6.0, 0.0])
    _, (_, dx) = grad(lambda x: np.prod(x), np.array([0.0, 0.0, 3.0]))
    np.testing.assert_array_equal(dx, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("axis", [None, 0, -1], ids=str)
def test_cumprod_with_zeros(axis, rng):
    """cumprod is right where the input has one or two zeros along the axis."""
    x = uniform(rng, (2, 4))
    x[0, 1] = x[1, 0] = x[1, 2] = 0.0
    check_grad(lambda x: np.cumprod(x, axis), x)


# --- extrema ---


@pytest.mark.parametrize("fn, share", [(np.max, [0.0, 0.5, 0.5]), (np.min, [0.5, 0.0, 0.5]),
                                       (np.amax, [0.0, 0.5, 0.5]), (np.ptp, [0.5, 0.5, 0.5]),
                                       (np.nanmax, [0.0, 0.5, 0.5]), (np.nanmin, [0.5, 0.0, 0.5])], ids=name)
def test_extremum_ties_split_evenly(fn, share):
    """Elements tied for the extremum share its derivative evenly (autograd's and JAX's choice)."""
    x = np.array([1.0, 3.0, 3.0]) if fn not in (np.min, np.nanmin) else np.array([1.0, 3.0, 1.0])
    if fn is np.ptp:
        x = np.array([1.0, 3.0, 3.0, 1.0])
        share = [-0.5, 0.5, 0.5, -0.5]
    _, (_, dx) = grad(fn, x)
    np.testing.assert_array_equal(dx, share)


def test_max_when_initial_wins():
    """A maximum decided by initial= does not depend on the array."""
    _, (_, dx) = grad(lambda x: np.sum(np.max(x, axis=1, initial=2.0)), np.array([[1.0, 3.0], [0.5, 1.5]]))
    np.testing.assert_array_equal(dx, [[0.0, 1.0], [0.0, 0.0]])


# --- sums and means with where=, initial=, dtype= ---


@pytest.mark.parametrize("fn, kwargs", [(np.sum, {}), (np.mean, {}), (np.max, {"initial": 0.0}),
                                        (np.min, {"initial": 9.0}), (np.nanmax, {"initial": 0.0}),
                                        (np.nanmin, {"initial": 9.0})], ids=lambda v: name(v) or None)
def test_where_selects_the_elements_that_receive_shares(fn, kwargs, rng):
    """sum, mean, max and min with where= pass shares only to the selected elements."""
    where = np.array([[True, False, True], [False, False, True]])
    # initial= rides in a default argument: a float in the closure would be traced
    check_grad(lambda x, c=kwargs: fn(x, axis=1, where=where, **c), uniform(rng, (2, 3)))


def test_sum_with_dtype_keeps_the_input_dtype(rng):
    """sum(x, dtype=float64) of a float32 x gives a float32 tangent."""
    x = uniform(rng, (2, 3), np.float32)
    _, back = tapegrad.rrule(np.sum, x, dtype=np.float64)
    assert back(np.float64(1.0))[1].dtype == np.float32
    check_grad(lambda x: np.sum(x, dtype=np.float64), x)


def test_prod_with_initial(rng):
    """prod with initial= scales the derivative by initial."""
    check_grad(lambda x: np.prod(x, axis=0, initial=3.0), uniform(rng, (2, 3)))


@pytest.mark.parametrize("fn", [np.sum, np.nansum, np.prod, np.max, np.min, np.amax, np.amin, np.nanmax,
                                np.nanmin], ids=name)
@pytest.mark.parametrize("t", [0.3, 2.0, -2.0])
def test_traced_initial_is_differentiated(fn, t, rng):
    """A traced initial= (an argument, or a float a closure captures) gets its derivative, in
    both modes and beside the array's: it is added to each sum, a factor of each product, and
    the value of each extremum it decides alone (before, its gradient was a silent zero)."""
    check_grad(lambda x, t: fn(x, axis=1, initial=t), uniform(rng, (2, 3)), t)


def test_traced_initial_closed_forms():
    """d/dt Σ sum(x, axis=1, initial=t) = 2 (one per row); of the products, the rows'
    products; of the maxima, the number of rows whose maximum t is (here the second)."""
    x = np.array([[1.0, 3.0], [0.5, 1.5]])
    assert grad(lambda t: np.sum(np.sum(x, axis=1, initial=t)), 2.0)[1][1] == 2.0
    assert grad(lambda t: np.sum(np.prod(x, axis=1, initial=t)), 2.0)[1][1] == 3.0 + 0.75
    assert grad(lambda t: np.sum(np.max(x, axis=1, initial=t)), 2.0)[1][1] == 1.0
    assert grad(lambda t: np.sum(np.min(x, axis=1, initial=t)), 2.0)[1][1] == 0.0

    def scaled(t):
        return lambda x: np.sum(np.sum(x, axis=1, initial=t))  # t captured by the closure

    _, (df, dx) = grad(scaled(2.0), x)
    assert df.t == 2.0 and dx.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("fn", [np.nansum, np.nanmean, np.nanmax, np.nanmin], ids=name)
def test_nan_elements_receive_no_share(fn, rng):
    """nansum, nanmean, nanmax and nanmin skip nans, and the nans get a zero derivative."""
    x = uniform(rng, (2, 3))
    x[0, 1] = np.nan
    _, (_, dx) = grad(lambda x: np.sum(fn(x, axis=1)), x)
    assert dx[0, 1] == 0.0
    check_grad(lambda x: fn(x, axis=1), x)


@pytest.mark.parametrize("fn, pick", [(np.nanmax, np.argmax), (np.nanmin, np.argmin)], ids=name)
def test_nan_extremum_goes_to_the_extremum_among_the_others(fn, pick):
    """nanmax and nanmin pass each group's cotangent to its largest (smallest) element that is not
    nan: the gradient of max (min) of the group with its nans left out."""
    x = np.array([[0.3, np.nan, 1.7, -0.4], [np.nan, 2.5, -1.0, 0.9]])
    dy = np.array([2.0, -3.0])
    _, (_, dx) = grad(lambda x: np.sum(fn(x, axis=1) * dy), x)
    expected = np.zeros_like(x)
    for i, row in enumerate(x):
        expected[i, pick(np.where(np.isnan(row), -np.inf if fn is np.nanmax else np.inf, row))] = dy[i]
    np.testing.assert_array_equal(dx, expected)


@pytest.mark.parametrize("fn", [np.nanmax, np.nanmin], ids=name)
def test_nan_extremum_of_nans_only_passes_nothing(fn):
    """A group of nans only has the result nan (numpy warns), which no element equals: its elements
    get 0, as in JAX (perturbing a nan leaves it nan), not nan; initial= given, it is the result
    and gets the cotangent."""
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, (_, dx) = grad(lambda x: np.nansum(fn(x, axis=1)), x)
    assert y == 1.0
    np.testing.assert_array_equal(dx, [[0.0, 0.0], [1.0, 0.0]])
    _, (_, dx, dt) = grad(lambda x, t: np.sum(fn(x, axis=1, initial=t)), x, 0.5 if fn is np.nanmax else 1.5)
    np.testing.assert_array_equal(dx, [[0.0, 0.0], [1.0, 0.0]])
    assert dt == 1.0


# --- moments ---


@pytest.mark.parametrize("call", [
    lambda fn, x: fn(x, ddof=1),
    lambda fn, x: fn(x, 0, None, None, 1),
    lambda fn, x: fn(x, axis=-1, correction=1, keepdims=True),
], ids=["ddof", "ddof-by-position", "correction"])
@pytest.mark.parametrize("fn", [np.std, np.var], ids=name)
def test_moments_with_ddof(fn, call, rng):
    """std and var honour ddof (by name or position) and correction."""
    check_grad(lambda x: call(fn, x), uniform(rng, (3, 4)))


def test_std_of_constant_is_nan():
    """Where std is 0 its derivative is undefined: nan (0/0), as in autograd and JAX."""
    with np.errstate(invalid="ignore", divide="ignore"):
        _, (_, dx) = grad(np.std, np.array([2.0, 2.0]))
    assert np.all(np.isnan(dx))


# --- average ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis, wshape", AVERAGES, ids=str)
def test_average_rule(shape, axis, wshape, keepdims, dtype, rng):
    """average's gradient matches for a and for the weights, whatever their layout."""
    a = uniform(rng, shape, dtype)
    if wshape is None:
        check_grad(lambda a: np.average(a, axis, keepdims=keepdims), a)
    else:
        check_grad(lambda a, w: np.average(a, axis, w, keepdims=keepdims), a, uniform(rng, wshape, dtype))


@pytest.mark.parametrize("wshape", [None, (2, 3), (3,)], ids=str)
def test_average_returned_sum_of_weights(wshape, rng):
    """With returned=True both the average and the sum of the weights pass derivatives back."""
    a = uniform(rng, (2, 3))
    w = None if wshape is None else uniform(rng, wshape)
    check_grad(lambda a, w: np.sum(np.average(a, -1, w, True)[0] * 2.0 + np.average(a, -1, w, True)[1] ** 2), a, w)
    check_grad(lambda a, w: np.average(a, 1, w, True)[1], a, w)


# --- rules themselves: dtype and traceability ---


def _rule_cases():
    for fn in REDUCTIONS:
        yield fn, (0,), {}
        yield fn, (), {"axis": (0, 1), "keepdims": True}
    for fn in SCANS:
        yield fn, (1,), {}
        yield fn, (), {}
    yield np.average, (0, np.array([0.5, 1.0])), {}


@pytest.mark.parametrize("fn, args, kwargs", list(_rule_cases()), ids=lambda v: name(v) or None)
def test_rule_keeps_float32(fn, args, kwargs, rng):
    """Each pullback, given a float32 cotangent, returns a float32 tangent shaped like the input."""
    x = uniform(rng, (2, 3), np.float32)
    y, back = tapegrad.rrule(fn, x, *args, **kwargs)
    dx = getitem(back(np.ones_like(y)), 1)
    assert dx.dtype == np.float32 and dx.shape == x.shape


class RecordEverything(tapegrad.context.BaseContext):
    """Records every call whole, as the trace of a gradient will, without needing rules."""

    def is_primitive(self, fn, *args):
        return True


@pytest.mark.parametrize("fn, args, kwargs", list(_rule_cases()), ids=lambda v: name(v) or None)
def test_rule_is_traceable(fn, args, kwargs, rng):
    """A rule and its pullback run on Tracers (no in-place writes, no float()) and agree with plain values."""
    x = uniform(rng, (2, 3))
    x[0, 1] = 0.0
    dy = rng.standard_normal(np.shape(fn(x, *args, **kwargs)))

    def rule_then_pullback(x, dy, fn=fn, args=args, kwargs=kwargs):  # defaults: not traced
        return getitem(tapegrad.rrule(fn, x, *args, **kwargs)[1](dy), 1)

    got, tape = tapegrad.trace(rule_then_pullback, x, dy, ctx=RecordEverything())
    np.testing.assert_allclose(got, rule_then_pullback(x, dy))
    assert len(tape) > 3


def test_mean_of_no_elements_is_nan_with_a_nan_free_empty_gradient():
    """np.mean of an empty array is nan (numpy warns); its gradient is the empty array, not a
    ZeroDivisionError from the pullback."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, (_, dx) = grad(lambda x: np.mean(x), np.ones(0))
    assert np.isnan(value) and dx.shape == (0,) and dx.dtype == np.float64


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Each reduction over all axes and over one, each scan, the weighted average, ddof."""
    rng = np.random.default_rng(6)
    rows = []
    for fn in REDUCTIONS + SCANS:
        for axis in (None, 1):
            rows.append((fn, lambda a, c=(fn, axis): c[0](a, axis=c[1]), (uniform(rng, (2, 3)),)))
    for fn in (np.std, np.var):
        rows.append((fn, lambda a, fn=fn: fn(a, axis=0, ddof=1), (uniform(rng, (3, 2)),)))
    rows.append((np.average, lambda a, w: np.average(a, axis=-1, weights=w),
                 (uniform(rng, (2, 3)), uniform(rng, (3,)))))
    rows.append((np.average, lambda a: np.average(a, axis=0), (uniform(rng, (2, 3)),)))
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()


# --- complex values (autograd's convention: tests/rules/_complex.py) ---


def cplx(rng, shape):
    """Complex values with both parts away from 0."""
    return uniform(rng, shape) + 1j * uniform(rng, shape)


def crow(label, fn, *args, **kwargs):
    return pytest.param(fn, args, kwargs, id=f"{fn.__name__} {label}")


def _complex_table():
    rng = np.random.default_rng(11)
    z23, z3, z232 = cplx(rng, (2, 3)), cplx(rng, (3,)), cplx(rng, (2, 3, 2))
    z0 = cplx(rng, (2, 4))
    z0[0, 1] = z0[1, 2] = z0[1, 3] = 0.0  # zeros in a product: one, and two in a group
    znan = cplx(rng, (2, 3))
    znan[0, 1] = complex(np.nan, 1.0)
    return [
        crow("all", np.sum, z23),
        crow("axis", np.sum, z232, (0, 2)),
        crow("keepdims", np.sum, z23, axis=1, keepdims=True),
        crow("where", np.sum, z23, axis=1, where=np.array([True, False, True])),
        crow("all", np.mean, z23),
        crow("axis keepdims", np.mean, z232, -1, keepdims=True),
        crow("where", np.mean, z23, axis=0, where=np.array([[True, False, True], [True, True, False]])),
        crow("nan skipped", np.nansum, znan, 1),
        crow("nan skipped", np.nanmean, znan, 1),
        crow("all", np.prod, z3),
        crow("axis", np.prod, z232, 1),
        crow("zeros", np.prod, z0, 1),
        crow("zeros all", np.prod, z0[0]),
        crow("initial", np.prod, z23, 0, initial=2.0 - 1j),
        crow("flat", np.cumsum, z23),
        crow("axis", np.cumsum, z232, 1),
        crow("flat", np.cumprod, z3),
        crow("axis zeros", np.cumprod, z0, -1),
        crow("no weights", np.average, z23, 0),
        crow("complex weights", np.average, z23, 1, cplx(rng, (3,))),
        crow("real weights", np.average, z23, None, uniform(rng, (2, 3))),
        crow("real a, complex weights", np.average, uniform(rng, (2, 3)), -1, cplx(rng, (2, 3))),
        crow("returned", np.average, z23, 1, cplx(rng, (2, 3)), True),
        crow("all", np.var, z23),
        crow("axis ddof", np.var, z232, (0, 2), ddof=1),
        crow("keepdims", np.var, z23, axis=0, keepdims=True),
        crow("all", np.std, z23),
        crow("axis ddof", np.std, z232, 1, ddof=1),
        crow("correction", np.std, z23, axis=-1, correction=1, keepdims=True),
        # picks in numpy's lexicographic order (real parts first)
        crow("all", np.max, z23),
        crow("axis", np.max, z232, 1),
        crow("keepdims", np.amax, z23, axis=0, keepdims=True),
        crow("all", np.min, z23),
        crow("axis", np.amin, z232, (0, 2)),
        crow("axis", np.ptp, z23, 1),
        crow("odd", np.median, z3),
        crow("even axis", np.median, z232, 1),
    ]


COMPLEX_TABLE = _complex_table()
#: forward mode on complex values needs the core's complex tangents (a derived forward rule
#: takes complex arguments)
COMPLEX_RULES = {p.values[0] for p in COMPLEX_TABLE}


@pytest.mark.parametrize("fn, args, kwargs", COMPLEX_TABLE)
def test_complex_reduction_pullback(fn, args, kwargs, rng):
    """The dot-product test of each reduction's pullback on complex (and mixed) arguments."""
    check_complex_rule(fn, *args, rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn, args, kwargs", COMPLEX_TABLE)
def test_complex_reduction_jvp(fn, args, kwargs, rng):
    """Forward mode through each reduction on complex arguments matches central differences."""
    check_complex_jvp(fn, *args, rng=rng, kwargs=kwargs)


def test_complex_reductions_are_declared():
    """The rules of the complex table are those the reductions declare for complex values."""
    assert COMPLEX_RULES == {fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) == "tapegrad.rules.reductions"}


@pytest.mark.parametrize("fn, expected", [(np.max, [0, 0, 2]), (np.min, [0, 1, 0]), (np.ptp, [0, -1, 2])],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_extremum_of_complex_follows_numpys_lexicographic_order(fn, expected):
    """numpy orders complex numbers by real part first: of z = (x₀, i x₁, 2 x₂) at x = 1 the max
    is 2x₂ and the min i x₁, so Re((1 - i)·max) = 2x₂, Re((1 - i)·min) = x₁, and ptp their difference."""
    _, (_, dx) = grad(lambda x: np.real((1 - 1j) * fn(x * np.array([1, 1j, 2]))), np.ones(3))
    np.testing.assert_array_equal(dx, expected)


def test_var_of_complex_has_the_closed_form_gradient():
    """var(z) = mean |z - mean z|², so its cotangent is 2 conj(z - mean z)/n (dy = 1)."""
    z = np.array([1 + 2j, -0.5 + 1j, 3 - 1j])
    _, back = tapegrad.rrule(np.var, z)
    np.testing.assert_allclose(getitem(back(1.0), 1), 2 * np.conj(z - np.mean(z)) / 3, rtol=1e-14)


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts),
    written as Re Σ (2 z conj(z) - z²) so that the complex values meet np.real only at the end."""
    return np.real(np.sum(2 * z * np.conj(z) - z * z))


def _complex_order2_rows(every_mode=False):
    """Complex values made from two real arrays x + iy, through each complex reduction."""
    rng = np.random.default_rng(12)
    cases = [
        (np.sum, lambda z: power(np.sum(z, axis=0) * z)),
        (np.mean, lambda z: power(np.mean(z, axis=1) * z[0, :2])),
        (np.nansum, lambda z: power(np.nansum(z * z, axis=1))),
        (np.nanmean, lambda z: power(np.nanmean(z * z, axis=0))),
        (np.prod, lambda z: power(np.prod(z, axis=1))),
        (np.cumsum, lambda z: power(np.cumsum(z * z, axis=1))),
        (np.cumprod, lambda z: power(np.cumprod(z, axis=1))),
        # (the complex weights ride in a default argument: check_grad would trace a closure's)
        (np.average, lambda z, w=cplx(rng, (3,)): power(np.average(z * z, axis=1, weights=w))),
        (np.var, lambda z: np.sum(np.var(z * z, axis=1))),
        (np.var, lambda z: np.sum(np.var(z, axis=0, ddof=1) ** 2)),
        (np.std, lambda z: np.sum(np.std(z * z, axis=1))),
    ]
    x, y = uniform(rng, (2, 3)), uniform(rng, (2, 3))
    marks = []
    return [pytest.param(fn, f, x, y, id=f"{name(fn)}{i}", marks=marks) for i, (fn, f) in enumerate(cases)]


@pytest.mark.parametrize("fn, f, x, y", _complex_order2_rows())
def test_complex_reduction_second_order(fn, f, x, y):
    """Second derivatives through a real parametrization z = x + iy match central differences
    (reverse over reverse)."""
    check_grad(lambda x, y: f(x + 1j * y), x, y, order=2, modes=("rev",))


@pytest.mark.parametrize("fn, f, x, y", _complex_order2_rows(every_mode=True))
def test_complex_reduction_second_order_in_every_mode(fn, f, x, y):
    """The same, in the four combinations of forward and reverse mode."""
    check_grad(lambda x, y: f(x + 1j * y), x, y, order=2)


def test_spread_cotangent_of_a_full_reduction_is_read_only():
    """The cotangent np.sum(x) and np.mean(x) pass back is a view of one number, as np.broadcast_to
    gives it: read-only, and the gradient the user gets is the same."""
    x = np.arange(6.0).reshape(2, 3)
    for fn, share in [(np.sum, 1.0), (np.mean, 1 / 6)]:
        _, (_, dx) = grad(fn, x)
        np.testing.assert_array_equal(dx, np.full((2, 3), share))
        assert dx.shape == (2, 3) and dx.dtype == np.float64 and not dx.flags.writeable


@pytest.mark.parametrize("shape, axis", [((4, 3), 1), ((4, 3), 0), ((2, 3, 4), (0, 2)), ((0, 3), 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_spread_cotangent_of_a_keepdims_reduction_is_a_read_only_view(shape, axis, dtype):
    """The cotangent of np.sum(x, axis=..., keepdims=True) is spread to x's shape as
    np.broadcast_to spreads it: the same values, a read-only view of the cotangent."""
    x = np.ones(shape, dtype)
    dy = (np.arange(np.prod(np.sum(x, axis=axis, keepdims=True).shape)) + 1.5).astype(dtype)
    dy = dy.reshape(np.sum(x, axis=axis, keepdims=True).shape)
    _, back = tapegrad.registry.RULES[np.sum](x, axis=axis, keepdims=True)
    dx = back(dy)[1]
    np.testing.assert_array_equal(dx, np.broadcast_to(dy, shape))
    assert dx.shape == shape and dx.dtype == dtype and not dx.flags.writeable
    assert dx.size == 0 or np.shares_memory(dx, dy)


def test_max_pullback_shares_a_tie_to_the_bit():
    """max's pullback gives hit * (dy/count): the bits of (dy * hit)/count, a tie split evenly."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 0.1], [7.0, 7.0, 7.0]])
    dy = np.array([[0.3], [-1.7], [0.1]])
    y, back = tapegrad.registry.RULES[np.max](x, axis=1, keepdims=True)
    hit = (x == y).astype(float)
    np.testing.assert_array_equal(back(dy)[1], np.broadcast_to(dy, x.shape) * hit / np.sum(hit, axis=1, keepdims=True))

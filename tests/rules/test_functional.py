"""np.piecewise and np.apply_along_axis of traced values: traced through (the user's functions'
own ops are recorded), with numpy's values and the derivatives of those functions."""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad, gradient, hessian, jvp, trace
from tapegrad.errors import ConcreteValueError

from _rule_tables import DTYPES

#: no rules: both functions are traced through (tapegrad/rules/functional.py), so no ORDER2 rows
EXERCISED: set = set()

#: points away from the kinks at 0 and ±1 of the branches below
X = np.array([-1.6, -0.7, -0.2, 0.3, 0.8, 1.4])


def ids(v):
    return v if isinstance(v, str) else ""


#: (label, f, argument shapes): each call goes through np.piecewise with traced x
PIECEWISE = [
    ("two branches", lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, np.sin]), [X]),
    # sqrt never sees the negative elements, as in numpy: no nan in the value or the gradient
    ("sqrt of its own elements", lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, np.sqrt]), [X]),
    ("otherwise", lambda x: np.piecewise(x, [x < -1, x > 1], [lambda t: t ** 3, np.exp, lambda t: 2 * t]), [X]),
    ("constant branch", lambda x: np.piecewise(x, [x < 0], [0.5, np.cos]), [X]),
    ("traced constant", lambda x, a: np.piecewise(x, [x < 0], [a, lambda t: a * t]), [X, 0.7]),
    ("extra args and keywords", lambda x, k: np.piecewise(x, [x < 0, x >= 0], [lambda t, k, p: t * k,
                                                                             lambda t, k, p: t ** p * k], k, p=2.0),
     [X, 1.3]),
    ("one condition", lambda x: np.piecewise(x, x > 0, [lambda t: t ** 2]), [X]),
    ("overlapping: the last wins", lambda x: np.piecewise(x, [x < 1, x > -1], [np.sin, np.cos]), [X]),
    ("2-d", lambda x: np.piecewise(x, [x < 0, x >= 0], [np.tanh, lambda t: t * t]), [X.reshape(2, 3)]),
    ("a number", lambda s: np.piecewise(s, [s < 0, s >= 0], [lambda t: -t, lambda t: t ** 3]), [0.7]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("label, f, args", PIECEWISE, ids=ids)
def test_piecewise_gradient(label, f, args, dtype):
    """np.piecewise's gradient is each branch's on its own elements: central differences agree in both modes."""
    check_grad(f, *[np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args])


@pytest.mark.parametrize("label, f, args", PIECEWISE, ids=ids)
def test_piecewise_value_is_numpys(label, f, args):
    """Traced, np.piecewise gives numpy's own result: values, shape and dtype (a 0-d array for a number)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no branch sees elements outside its condition
        value, _ = trace(f, *args)
    expected = f(*args)
    assert type(value) is type(expected) and np.shape(value) == np.shape(expected)
    np.testing.assert_array_equal(value, expected)


def test_piecewise_tape_reads_as_numpys_steps():
    """The tape holds numpy's steps in numpy's names: y = zeros_like(x); y[cond] = func(x[cond])."""
    _, tape = trace(lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, np.sin]), X)
    assert str(tape) == """Tape
  inp %1::function lambda
  inp %2::float64[6]   # x
  %3 = less(%2, 0)::bool[6]
  %4 = greater_equal(%2, 0)::bool[6]
  %5 = zeros_like(%2)::float64[6]
  %6 = getitem(%2, %3)::float64[3]
  %7 = power(%6, 2)::float64[3]
  %8 = updated(%5, %3, %7)::float64[6]
  %9 = getitem(%2, %4)::float64[3]
  %10 = sin(%9)::float64[3]
  %11 = updated(%8, %4, %10)::float64[6]"""


def test_piecewise_closed_form():
    """d/dx of |x| written as piecewise is sign(x); a traced constant branch gets the number of its elements."""
    np.testing.assert_array_equal(
        gradient(lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t])), X)[0], np.sign(X))
    assert gradient(lambda a: np.sum(np.piecewise(X + 0 * a, [X < 0], [a, 1.0])), 0.5) == (3.0,)


SMOOTH = lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 3, lambda t: np.sin(t) * t]) ** 2)  # noqa: E731


def test_piecewise_second_order_reverse_over_either():
    """The derivative functions are traced through again: ⟨∇f, v⟩ differentiated in reverse and
    forward mode, and both Hessians, match central differences."""
    v = np.linspace(0.5, 1.5, 6)
    check_grad(lambda x: np.sum(gradient(SMOOTH, x)[0] * v), X)
    fd = np.stack([(gradient(SMOOTH, X + 1e-6 * e)[0] - gradient(SMOOTH, X - 1e-6 * e)[0]) / 2e-6 for e in np.eye(6)])
    np.testing.assert_allclose(hessian(SMOOTH, X), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian(SMOOTH, X, mode="fwd"), fd, rtol=1e-6, atol=1e-8)


def test_piecewise_second_order_forward_over_forward():
    """jvp of a jvp: the second directional derivative matches central differences."""
    v = np.linspace(0.5, 1.5, 6)
    second = jvp(lambda x: jvp(SMOOTH, (x,), (v,))[1], (X,), (v,))[1]
    first = lambda x: jvp(SMOOTH, (x,), (v,))[1]  # noqa: E731
    assert second == pytest.approx((first(X + 1e-6 * v) - first(X - 1e-6 * v)) / 2e-6, rel=1e-6)


def test_piecewise_gradient_of_a_jvp():
    """Reverse over forward: the gradient of a jvp through np.piecewise, and through x[x > 0]
    (a mask computed from traced values indexes the plain variation), match central differences."""
    v = np.linspace(0.5, 1.5, 6)
    check_grad(lambda x: jvp(SMOOTH, (x,), (v,))[1], X, modes=("rev",))
    check_grad(lambda x: jvp(lambda y: np.sum(y[y > 0] ** 2), (x,), (v,))[1], X, modes=("rev",))


def test_piecewise_of_a_plain_x_with_traced_branches_refuses():
    """numpy dispatches np.piecewise on x and the conditions only: with both plain its own body
    runs, which refuses to write a traced branch into its plain result (no silent zero);
    x made traced, the same call is differentiated."""
    f = lambda a: np.sum(np.piecewise(X, [X < 0], [lambda t: a * t, lambda t: a]))  # noqa: E731
    with pytest.raises(ConcreteValueError):
        gradient(f, 0.5)
    g = lambda a: np.sum(np.piecewise(X + 0 * a, [X < 0], [lambda t: a * t, lambda t: a]))  # noqa: E731
    assert gradient(g, 0.5) == (pytest.approx(np.sum(X[X < 0]) + 3),)


def test_piecewise_checks_the_number_of_functions_as_numpy():
    """Neither n nor n + 1 functions for n conditions: numpy's ValueError."""
    with pytest.raises(ValueError, match="either 2 or 3 functions are expected"):
        gradient(lambda x: np.sum(np.piecewise(x, [x < 0, x > 1], [np.sin])), X)


# --- apply_along_axis ---

A = np.array([[0.3, -1.2, 0.8, 0.5], [1.1, 0.2, -0.6, 0.9], [-0.4, 0.7, 1.3, -0.8]])
B = np.stack([A, A[::-1] * 0.5])

#: (label, f, arguments): each call goes through np.apply_along_axis with a traced array
APPLY = [
    ("to a number, axis=1", lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), 1, a), [A]),
    ("to a number, axis=0", lambda a: np.apply_along_axis(lambda r: np.sum(np.sin(r)), 0, a), [A]),
    ("to a vector", lambda a: np.apply_along_axis(lambda r: np.cumsum(r) * r[0], 1, a), [A]),
    ("to a matrix, 3-d, axis=1", lambda b: np.apply_along_axis(lambda r: np.outer(r, r[:2]), 1, b), [B]),
    ("shorter result, axis=-1", lambda b: np.apply_along_axis(lambda r: np.sort(r)[1:3] * 2, -1, b), [B]),
    ("traced extra argument", lambda b, s: np.apply_along_axis(lambda r, s: np.sum(np.tanh(r * s)), 2, b, s), [B, 0.7]),
    ("keyword argument", lambda a: np.apply_along_axis(lambda r, k=1.0: r * k, 0, a, k=3.0), [A]),
    ("1-d", lambda v: np.apply_along_axis(lambda r: r @ r, 0, v), [A[0]]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("label, f, args", APPLY, ids=ids)
def test_apply_along_axis_gradient(label, f, args, dtype):
    """The gradient of np.apply_along_axis is its function's on each slice: central differences agree in both modes."""
    check_grad(f, *[np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args])


@pytest.mark.parametrize("label, f, args", APPLY, ids=ids)
def test_apply_along_axis_value_is_numpys(label, f, args):
    """Traced, np.apply_along_axis gives numpy's result: values, shape (the result's axes where axis was), dtype."""
    value, _ = trace(f, *args)
    expected = f(*args)
    assert type(value) is type(expected) and np.shape(value) == np.shape(expected)
    np.testing.assert_allclose(value, expected, rtol=1e-15)


@pytest.mark.parametrize("label, f, args", APPLY[:4], ids=ids)
def test_apply_along_axis_second_order(label, f, args):
    """No index is traced: second derivatives match central differences in all four combinations of modes."""
    check_grad(f, *args, order=2)


def test_apply_along_axis_records_the_function_once_per_slice():
    """The tape holds each slice, the function's own ops on it, and one stack: numpy's loop, unrolled."""
    _, tape = trace(lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), 1, a), A[:2])
    assert str(tape) == """Tape
  inp %1::function lambda
  inp %2::float64[2,4]   # a
  %3 = getitem(%2, (0, ...))::float64[4]
  %4 = power(%3, 2)::float64[4]
  %5 = sum(%4)::float64
  %6 = getitem(%2, (1, ...))::float64[4]
  %7 = power(%6, 2)::float64[4]
  %8 = sum(%7)::float64
  %9 = stack([%5, %8])::float64[2]"""


def test_apply_along_axis_closed_form():
    """Row sums of squares: the gradient of their sum is 2a."""
    np.testing.assert_array_equal(gradient(lambda a: np.sum(np.apply_along_axis(lambda r: r @ r, 1, a)), A)[0], 2 * A)


def test_apply_along_axis_of_an_empty_iteration_raises_as_numpy():
    """An iteration axis of length 0: numpy's ValueError."""
    with pytest.raises(ValueError, match="Cannot apply_along_axis when any iteration dimensions are 0"):
        tapegrad.trace(lambda a: np.apply_along_axis(np.sum, 1, a), np.ones((0, 3)))

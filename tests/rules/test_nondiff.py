"""The table of non-differentiable functions: each is recorded on the tape, a gradient that only
goes through it is zero, and a gradient that also takes a differentiable path is that path's."""
import numpy as np
import scipy.special
import pytest

from tapegrad import ZERO, ComplexValueError, check_grad, fill_zeros, grad, gradient, trace
from tapegrad.errors import short_name, ufunc_method

#: points away from every jump of the functions below (integers, halves, 0.3, multiples of 0.7)
X = np.array([[-1.62, -0.41, 0.21], [0.88, 1.33, 1.94]])


def sorter(x):
    return np.argsort(x, axis=-1)


#: (function, how the test calls it on x): each call returns a value piecewise constant in x
NONDIFF = [
    (np.less, lambda x: np.less(x, 0.3)),
    (np.less_equal, lambda x: np.less_equal(x, 0.3)),
    (np.greater, lambda x: x > 0.3),
    (np.greater_equal, lambda x: np.greater_equal(0.3, x)),
    (np.equal, lambda x: np.equal(x, 0.5)),
    (np.not_equal, lambda x: x != 0.5),
    (np.logical_and, lambda x: np.logical_and(x > 0, x < 1)),
    (np.logical_or, lambda x: np.logical_or(x < 0, x > 1)),
    (np.logical_xor, lambda x: np.logical_xor(x > 0, x > 1)),
    (np.logical_not, lambda x: np.logical_not(x > 0)),
    (np.all, lambda x: np.all(x > 0, axis=0)),
    (np.any, lambda x: np.any(x > 1, axis=1, keepdims=True)),
    # (whole-array tests, one bool, as `if np.array_equal(a, b):` reads it; of signs, which a
    # step of central differences leaves as they are)
    (np.array_equal, lambda x: np.array_equal(x > 0, X > 0) + np.zeros_like(x)),
    (np.array_equiv, lambda x: np.array_equiv(x > 0, X[1] > 0) + np.zeros_like(x)),
    (np.floor, np.floor),
    (np.ceil, np.ceil),
    (np.round, lambda x: np.round(x, 1)),
    (np.around, np.around),
    (np.rint, np.rint),
    (np.trunc, np.trunc),
    (np.fix, np.fix),
    (np.floor_divide, lambda x: x // 0.7),
    (np.sign, np.sign),
    (np.signbit, np.signbit),
    (np.isnan, np.isnan),
    (np.isfinite, np.isfinite),
    (np.isinf, np.isinf),
    (np.isposinf, np.isposinf),
    (np.isneginf, np.isneginf),
    (np.iscomplex, np.iscomplex),
    (np.isreal, np.isreal),
    (np.argmax, np.argmax),
    (np.argmin, lambda x: np.argmin(x, axis=0)),
    (np.argsort, sorter),
    (np.nonzero, lambda x: np.sum(np.nonzero(x > 0)[1])),
    (np.flatnonzero, lambda x: np.sum(np.flatnonzero(x > 0))),
    (np.argwhere, lambda x: np.sum(np.argwhere(x > 0), axis=0)[1]),
    (np.searchsorted, lambda x: np.searchsorted(np.array([-1.0, 0.0, 1.0]), x)),
    (np.count_nonzero, lambda x: np.count_nonzero(x > 0, axis=0)),
    (np.zeros_like, np.zeros_like),
    (np.ones_like, np.ones_like),
    # empty_like's values are whatever memory held: only its shape is used
    (np.empty_like, lambda x: np.ones_like(np.empty_like(x))),
    (np.bitwise_and, lambda x: np.bitwise_and(sorter(x), 1)),
    (np.bitwise_or, lambda x: np.bitwise_or(sorter(x), 2)),
    (np.bitwise_xor, lambda x: np.bitwise_xor(sorter(x), 3)),
    (np.invert, lambda x: ~sorter(x)),
    (np.left_shift, lambda x: np.left_shift(sorter(x), 1)),
    (np.right_shift, lambda x: np.right_shift(sorter(x), 1)),
    (np.isclose, lambda x: np.isclose(x, 0.88, atol=0.1)),
    (np.allclose, lambda x: np.allclose(x, X, atol=0.1) + np.zeros_like(x)),
    (np.argpartition, lambda x: np.argpartition(x, 1, axis=1)),
    (scipy.special.gammasgn, scipy.special.gammasgn),
    (scipy.special.round, scipy.special.round),
    # bins, membership, sort keys, index conversions, ranks
    (np.digitize, lambda x: np.digitize(x, [0.0, 1.0])),
    (np.isin, lambda x: np.isin(np.round(x), [1.0, 2.0])),
    (np.lexsort, lambda x: np.lexsort((x[0], x[1]))),
    (np.nanargmax, lambda x: np.nanargmax(x, axis=0)),
    (np.nanargmin, np.nanargmin),
    (np.diag_indices_from, lambda x: np.diag_indices_from(x[:, :2])[0][:, None]),
    (np.tril_indices_from, lambda x: np.tril_indices_from(x)[1]),
    (np.triu_indices_from, lambda x: np.triu_indices_from(x, 1)[0]),
    (np.ravel_multi_index, lambda x: np.ravel_multi_index((sorter(x), sorter(x)), (3, 3))),
    (np.unravel_index, lambda x: np.unravel_index(sorter(x), (3, 1))[0]),
    (np.linalg.matrix_rank, np.linalg.matrix_rank),
    # integers, bits, dates
    (np.gcd, lambda x: np.gcd(sorter(x), 2)),
    (np.lcm, lambda x: np.lcm(sorter(x), 2)),
    (np.bitwise_count, lambda x: np.bitwise_count(sorter(x))),
    (np.packbits, lambda x: np.packbits(x > 0, axis=-1)),
    (np.unpackbits, lambda x: np.unpackbits(np.astype(sorter(x), np.uint8), axis=-1, count=3)),
    (np.isnat, lambda x: np.isnat(np.astype(sorter(x), "datetime64[D]"))),
    (np.busday_offset, lambda x: np.busday_offset("2024-01-01", sorter(x), roll="forward").astype(float)),
    (np.busday_count, lambda x: np.busday_count("2024-01-01", np.datetime64("2024-01-01") + sorter(x))),
    (np.is_busday, lambda x: np.is_busday(np.datetime64("2024-01-01") + sorter(x))),
    # the ulp at x: constant between powers of 2
    (np.spacing, np.spacing),
]


def above(x):
    return x > 0.3


#: the methods of the non-differentiable two-input ufuncs, each on values it takes (the booleans
#: of a comparison, the integers of an argsort, floats): (ufunc, x -> the values)
METHOD_INPUTS = [
    (np.less, above), (np.less_equal, above), (np.greater, above), (np.greater_equal, above),
    (np.equal, above), (np.not_equal, above), (np.logical_and, above), (np.logical_or, above),
    (np.logical_xor, above), (np.floor_divide, lambda x: x), (np.bitwise_and, sorter),
    (np.bitwise_or, sorter), (np.bitwise_xor, sorter), (np.left_shift, sorter), (np.right_shift, sorter),
    (np.gcd, sorter), (np.lcm, sorter),
]
for _uf, _of in METHOD_INPUTS:
    # outer: a column against a row shifted off the column's values, so that the result is x's shape
    NONDIFF.append((_uf.outer, lambda x, uf=_uf, of=_of: uf.outer(of(x)[:, 0], of(x[1] + 0.5))))
    if _uf is np.floor_divide:  # (its reduce passes a group of one through: not piecewise constant)
        continue
    NONDIFF += [
        (_uf.reduce, lambda x, uf=_uf, of=_of: uf.reduce(of(x))),
        (_uf.accumulate, lambda x, uf=_uf, of=_of: uf.accumulate(of(x))),
        (_uf.reduceat, lambda x, uf=_uf, of=_of: uf.reduceat(of(x), [0, 1])),
    ]
del _uf, _of
DTYPES = [np.float64, np.float32]

#: a first argument with steps (zeros), for the functions smooth in their second argument only
STEPS = np.array([[0.0, -0.41, 0.0], [0.88, 0.0, 1.94]])
#: (function, call of x and a second argument y, y): piecewise constant in x, smooth in y
PARTLY = [
    (np.heaviside, lambda x, y: np.heaviside(x, y), np.array([0.25, 0.5, 0.75])),
    (np.full_like, lambda x, y: np.full_like(x, y), 0.5),
]
EXERCISED = {fn for fn, _ in NONDIFF} | {fn for fn, _, _ in PARTLY}
#: (rule's function, f to differentiate twice, args at a smooth point)
ORDER2 = [
    (np.heaviside, lambda y: np.sum(np.heaviside(np.array([0.0, 1.0, 0.0]), y) ** 3), (np.array([0.3, 0.6, 0.9]),)),
    # (a traced first argument: numpy dispatches full_like on it alone, so a plain one would run
    # numpy's own body, whose np.copyto a dual fill value cannot reach)
    (np.full_like, lambda y: np.sum(np.full_like(y * np.ones(3), y) ** 3), (0.7,)),
]


def name(v):
    return short_name(v) if ufunc_method(v) else getattr(v, "__name__", "")


@pytest.mark.parametrize("fn, use", NONDIFF, ids=name)
def test_nondifferentiable_is_recorded(fn, use):
    """The function is one op of the tape, under its own name, with a plain (non-traced) meaning."""
    value, tape = trace(use, X)
    assert fn in [getattr(op, "fn", None) for op in tape.ops]
    np.testing.assert_array_equal(value, use(X))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("fn, use", NONDIFF, ids=name)
def test_gradient_only_through_nondifferentiable_is_zero(fn, use, dtype):
    """A gradient reaching only a piecewise-constant function stops there: ZeroTangent, zeros of x's shape."""
    x = X.astype(dtype)
    _, (_, dx) = grad(lambda x: np.sum(use(x) * 1.0), x)
    assert dx is ZERO
    zeros = fill_zeros(dx, x)
    assert zeros.shape == x.shape and not zeros.any()


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("fn, use", NONDIFF, ids=name)
def test_gradient_through_both_paths(fn, use, dtype):
    """In x · g(x) with g piecewise constant, the gradient is g(x): the differentiable path alone."""
    x = X.astype(dtype)
    check_grad(lambda x: np.sum(x * use(x)), x)
    expected = np.broadcast_to(use(x), x.shape).astype(dtype)
    np.testing.assert_array_equal(gradient(lambda x: np.sum(x * use(x)), x)[0], expected)


@pytest.mark.parametrize("fn", [np.floor, np.sign, np.isnan, np.round], ids=name)
def test_nondifferentiable_of_python_scalar(fn):
    """A Python float through a piecewise-constant function gets no gradient, and no error."""
    assert grad(lambda x: fn(x) * 1.0, 1.25)[1][1] is ZERO
    assert gradient(lambda x: x * fn(x), 1.25) == (float(fn(1.25)),)


def test_mask_from_comparison_selects_gradient(rng):
    """x · (x > 0) is relu: the comparison gives the mask and no gradient of its own."""
    x = rng.uniform(-2, 2, size=(2, 3))
    np.testing.assert_array_equal(gradient(lambda x: np.sum(x * (x > 0)), x)[0], (x > 0) * 1.0)


def test_argmax_index_selects_gradient(rng):
    """x[argmax(x)] is max: the index carries no gradient, the element read does."""
    x = rng.uniform(-2, 2, size=5)
    expected = np.zeros(5)
    expected[np.argmax(x)] = 1.0
    np.testing.assert_array_equal(gradient(lambda x: x[np.argmax(x)], x)[0], expected)


@pytest.mark.parametrize("op, fn", [(lambda a: a & 1, np.bitwise_and), (lambda a: a | 2, np.bitwise_or),
                                    (lambda a: a ^ 3, np.bitwise_xor)], ids=["and", "or", "xor"])
def test_bitwise_operators_on_traced_ints(op, fn):
    """``a & 1`` on a traced int array is numpy's bitwise_and, as on a plain array (same values)."""
    value, tape = trace(lambda x: op(sorter(x)), X)
    np.testing.assert_array_equal(value, op(sorter(X)))
    assert fn in [getattr(o, "fn", None) for o in tape.ops]


@pytest.mark.parametrize("fn, use, y", PARTLY, ids=lambda v: getattr(v, "__name__", ""))
def test_partly_differentiable_functions_are_smooth_in_their_other_argument(fn, use, y):
    """heaviside's second argument and full_like's fill value carry a derivative; the first argument none."""
    # (STEPS, a global, is no capture that check_grad would perturb; adding 0 · y traces it, as
    # full_like of a plain array and a traced fill value is numpy's copyto, which has no rule)
    check_grad(lambda y: np.sum(use(STEPS + 0.0 * np.sum(y), y) ** 2), y)
    _, (_, dx, _) = grad(lambda x, y: np.sum(use(x, y) * 3.0), STEPS, y)
    assert dx is ZERO


def test_heaviside_of_zero_passes_the_gradient_to_its_second_argument():
    """d/dy heaviside(x, y) is 1 where x == 0 and 0 elsewhere (before: ZeroTangent everywhere)."""
    x = np.array([0.0, -1.0, 0.0, 2.0])
    _, (_, _, dy) = grad(lambda x, y: np.sum(np.heaviside(x, y) * np.arange(1.0, 5.0)), x, np.full(4, 0.5))
    np.testing.assert_array_equal(dy, [1.0, 0.0, 3.0, 0.0])
    assert gradient(lambda v: np.sum(np.full_like(x, v) * np.arange(1.0, 5.0)), 0.5) == (10.0,)


@pytest.mark.parametrize("fn", [np.zeros_like, np.ones_like, np.round, np.around, np.rint],
                         ids=lambda f: f.__name__)
def test_nondifferentiable_of_a_complex_value_contributes_zero(fn):
    """A complex value through a piecewise-constant function (each part rounded apart, or only its
    shape read): the derivative flows only through the other path, z·conj(z) here."""
    x = np.array([1.2, -2.7])
    f = lambda x: np.sum(np.real(fn(x * (1 + 1j)) + x * (1 + 1j) * (x * (1 - 1j))))  # noqa: E731
    np.testing.assert_allclose(gradient(f, x)[0], 4 * x)


def test_sign_of_a_complex_value_is_refused():
    """np.sign(z) is z/|z| for complex z: not piecewise constant, so a zero derivative would be
    silently wrong; it is refused naming the call."""
    with pytest.raises(ComplexValueError, match=r"numpy.sign\("):
        grad(lambda x: np.sum(np.real(np.sign(x * (1 + 1j)))), np.array([1.0, 2.0]))


@pytest.mark.parametrize("test", [lambda x: np.all(x > 0), lambda x: np.any(x < 0), lambda x: (x > 0).all(),
                                  lambda x: np.array_equal(x > 0, np.ones(3, bool))], ids=["all", "any", "method", "equal"])
def test_branch_on_a_whole_array_test(test):
    """``if np.all(x > 0):`` picks a branch: the gradient is the branch's, and the tape guards the test."""
    def f(x):
        if test(x):
            return np.sum(x ** 2)
        return np.sum(x)

    x = np.array([0.5, 1.5, 2.5])
    np.testing.assert_array_equal(gradient(f, x)[0], 2 * x if test(x) else np.ones(3))
    _, tape = trace(f, x)
    assert "guard" in str(tape)


def test_common_type_of_traced_values_is_numpys():
    """np.common_type of traced values is the type numpy gives for their dtypes (no NoRuleError)."""
    x = np.array([1.0, 2.0], np.float32)
    assert gradient(lambda x: np.sum(x.astype(np.common_type(x, x))), x)[0].tolist() == [1.0, 1.0]
    value, _ = trace(lambda x: np.common_type(x), x)
    assert value is np.float32

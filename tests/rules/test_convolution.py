"""Rules of np.convolve and np.correlate: every mode (positional or by keyword), either argument
the longer, equal lengths, length 1 and 0-d, constants beside traced values, the same array as
both arguments, complex values; the crop of each mode is numpy's own."""
import tapegrad.rules.convolution  # noqa: F401  (registers the rules)

import numpy as np
import pytest

from tapegrad import check_grad, grad, gradient, trace
from tapegrad.registry import COMPLEX
from tapegrad.tangents import is_zero

from _complex import check_complex_jvp, check_complex_rule, complex_of, power
from _rule_tables import DTYPES

#: plain constants beside traced arguments (a filter, a signal)
KERNEL = np.array([0.5, -1.25, 2.0])
SIGNAL = np.array([0.3, -0.7, 1.1, 0.4, -1.6, 0.9])
MODES = ["full", "same", "valid"]


def row(label, fn, shapes, f):
    return pytest.param(fn, shapes, f, id=f"{fn.__name__} {label}")


def _table():
    rows = []
    for fn in (np.convolve, np.correlate):
        for mode in MODES:
            # 'same' with an even shorter length too: there np.correlate's window starts one later
            # when len(a) < len(v) (numpy computes correlate(v, a) and reverses it)
            for shapes in ([(7,), (3,)], [(3,), (7,)], [(6,), (4,)], [(4,), (6,)], [(5,), (5,)]):
                label = f"{mode} {shapes[0][0]}x{shapes[1][0]}"
                rows.append(row(label, fn, shapes, lambda a, v, fn=fn, mode=mode: fn(a, v, mode)))
            rows += [
                row(f"mode= {mode} 6x4", fn, [(6,), (4,)], lambda a, v, fn=fn, mode=mode: fn(a, v, mode=mode)),
                row(f"mode= {mode} 2x5", fn, [(2,), (5,)], lambda a, v, fn=fn, mode=mode: fn(a, v, mode=mode)),
                row(f"{mode} length 1 second", fn, [(5,), (1,)], lambda a, v, fn=fn, mode=mode: fn(a, v, mode)),
                row(f"{mode} length 1 first", fn, [(1,), (4,)], lambda a, v, fn=fn, mode=mode: fn(a, v, mode)),
                row(f"{mode} both length 1", fn, [(1,), (1,)], lambda a, v, fn=fn, mode=mode: fn(a, v, mode)),
                row(f"{mode} constant second", fn, [(5,)], lambda a, fn=fn, mode=mode: fn(a, KERNEL, mode)),
                row(f"{mode} constant first", fn, [(4,)], lambda v, fn=fn, mode=mode: fn(SIGNAL, v, mode=mode)),
                row(f"{mode} integer constant", fn, [(4,)],
                    lambda v, fn=fn, mode=mode: fn(v, np.array([2, -1, 3, 1, -2]), mode)),
                row(f"{mode} same array twice", fn, [(5,)], lambda x, fn=fn, mode=mode: fn(x, x, mode)),
                row(f"{mode} inside a function", fn, [(6,), (3,)],
                    lambda a, v, fn=fn, mode=mode: np.sum(np.sin(fn(a * a, v, mode)) * np.arange(
                        1.0, 1.0 + np.shape(fn(np.ones(6), np.ones(3), mode))[0]))),
            ]
        rows.append(row("default mode", fn, [(5,), (3,)], lambda a, v, fn=fn: fn(a, v)))
    for mode in MODES:  # numpy's convolve takes a 0-d argument as length 1 (its correlate refuses one)
        rows += [
            row(f"{mode} 0-d first", np.convolve, [(), (4,)], lambda a, v, mode=mode: np.convolve(a, v, mode)),
            row(f"{mode} 0-d second", np.convolve, [(4,), ()], lambda a, v, mode=mode: np.convolve(a, v, mode=mode)),
            row(f"{mode} 0-d both", np.convolve, [(), ()], lambda a, v, mode=mode: np.convolve(a, v, mode)),
        ]
    return rows


#: (rule, input shapes, function of the inputs going through the rule)
TABLE = _table()

EXERCISED = {p.values[0] for p in TABLE}

#: (rule, function to differentiate twice, args at a smooth point); 'same' with an even shorter
#: length in both orders, and the same array as both arguments
_A7, _V4 = np.sin(np.arange(1.0, 8.0)), np.cos(np.arange(1.0, 5.0))
ORDER2 = [
    (np.convolve, lambda a, v: np.sum(np.convolve(a, v, "same") ** 2) / 2, (_A7, _V4)),
    (np.convolve, lambda x: np.sum(np.convolve(x, x, mode="valid") ** 3) / 3, (_A7[:4],)),
    (np.correlate, lambda a, v: np.sum(np.correlate(a, v, "same") ** 2) / 2, (_V4, _A7)),
    (np.correlate, lambda a, v: np.sum(np.correlate(a, v, mode="full") ** 2) / 2, (_A7, _V4)),
]


def inputs(rng, shapes, dtype):
    return [rng.uniform(-1, 1, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """Each row's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype))


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(fn, f, args):
    """The pullbacks call np.convolve again: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


# --- the crop, values and tangents' types ---


@pytest.mark.parametrize("fn", [np.convolve, np.correlate], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_value_is_numpys_own(fn, mode, rng):
    """The traced value is numpy's result exactly, type, dtype and all, for every pair of lengths."""
    for n in range(1, 7):
        for m in range(1, 7):
            a, v = rng.standard_normal(n), rng.standard_normal(m).astype(np.float32)
            value, _ = trace(lambda a, v: fn(a, v, mode), a, v)
            expected = fn(a, v, mode)
            assert type(value) is type(expected) and value.dtype == expected.dtype
            np.testing.assert_array_equal(value, expected)


def _jacobian_by_numpy(fn, mode, a, v, wrt):
    """∂y/∂(argument wrt), column by column: numpy's own fn on unit vectors (y is linear in each)."""
    cols = []
    for i in range(len((a, v)[wrt])):
        e = np.zeros(len((a, v)[wrt]))
        e[i] = 1.0
        cols.append(fn(e, v, mode) if wrt == 0 else fn(a, e, mode))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("fn", [np.convolve, np.correlate], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_gradient_is_the_transposed_numpy_operator(fn, mode, rng):
    """d/da Σ w·fn(a, v) is Σₙ wₙ ∂yₙ/∂aᵢ, the columns taken from numpy on unit vectors: the
    pullback crops exactly where numpy does, for every pair of lengths up to 6."""
    for n in range(1, 7):
        for m in range(1, 7):
            a, v = rng.integers(-4, 5, n).astype(float), rng.integers(-4, 5, m).astype(float)
            w = rng.integers(-4, 5, len(fn(a, v, mode))).astype(float)
            da, dv = gradient(lambda a, v: np.sum(w * fn(a, v, mode)), a, v)
            np.testing.assert_array_equal(da, w @ _jacobian_by_numpy(fn, mode, a, v, 0), err_msg=f"{n}x{m}")
            np.testing.assert_array_equal(dv, w @ _jacobian_by_numpy(fn, mode, a, v, 1), err_msg=f"{n}x{m}")


def test_full_convolution_gradient_closed_form():
    """y[n] = Σₖ a[k] v[n-k], so ā[i] = Σₖ w[i+k] v[k] and v̄[j] = Σₖ w[j+k] a[k]: explicit sums."""
    a, v = np.array([1.0, -2.0, 0.5, 3.0]), np.array([2.0, 1.5, -1.0])
    w = np.array([1.0, 2.0, -1.0, 0.5, 4.0, -3.0])
    da, dv = gradient(lambda a, v: np.sum(w * np.convolve(a, v)), a, v)
    np.testing.assert_array_equal(da, [sum(w[i + k] * v[k] for k in range(3)) for i in range(4)])
    np.testing.assert_array_equal(dv, [sum(w[j + k] * a[k] for k in range(4)) for j in range(3)])


def test_full_correlation_gradient_closed_form():
    """y[k + M-1] = Σₙ a[n+k] v[n], so ā[i] = Σₙ w[i-n+M-1] v[n], v̄[n] = Σᵢ w[i-n+M-1] a[i]."""
    a, v = np.array([1.0, -2.0, 0.5]), np.array([2.0, 1.5, -1.0, 0.25, 3.0])
    w = np.array([1.0, 2.0, -1.0, 0.5, 4.0, -3.0, 2.5])
    da, dv = gradient(lambda a, v: np.sum(w * np.correlate(a, v, "full")), a, v)
    np.testing.assert_array_equal(da, [sum(w[i - n + 4] * v[n] for n in range(5)) for i in range(3)])
    np.testing.assert_array_equal(dv, [sum(w[i - n + 4] * a[i] for i in range(3)) for n in range(5)])


def test_sum_of_full_convolution():
    """Σ convolve(a, v) = Σa Σv: each a has slope Σv and each v slope Σa."""
    a, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0, 2.0])
    da, dv = gradient(lambda a, v: np.sum(np.convolve(a, v)), a, v)
    np.testing.assert_array_equal(da, [5.5, 5.5, 5.5])
    np.testing.assert_array_equal(dv, [6.0, 6.0, 6.0, 6.0])


def test_valid_correlation_of_equal_lengths_is_a_dot_product():
    """correlate(a, v) of equal lengths is [a·v]: gradients v and a."""
    a, v = np.array([1.0, -2.0, 0.5, 3.0]), np.array([2.0, 1.5, -1.0, 0.25])
    da, dv = gradient(lambda a, v: np.correlate(a, v)[0], a, v)
    np.testing.assert_array_equal(da, v)
    np.testing.assert_array_equal(dv, a)
    da, dv = gradient(lambda a, v: np.convolve(a, v, "valid")[0], a, v)  # a·flip(v)
    np.testing.assert_array_equal(da, v[::-1])
    np.testing.assert_array_equal(dv, a[::-1])


def test_complex_valid_correlation_is_vdot():
    """correlate(a, v) of equal complex lengths is [Σ a conj(v)] = [vdot(v, a)]: the same gradients."""
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal(4) + 1j * rng.standard_normal(4), rng.standard_normal(4) + 1j * rng.standard_normal(4)
    by_correlate = gradient(lambda a, v: power(np.correlate(a, v)), a, v)
    by_vdot = gradient(lambda a, v: power(np.vdot(v, a)), a, v)
    for got, want in zip(by_correlate, by_vdot):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_same_array_as_both_arguments():
    """d/dx Σ convolve(x, x) = 2 Σx at every element (each x appears once per factor)."""
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.convolve(x, x)), x)[0], [-1.0, -1.0, -1.0])


def test_tangents_have_the_arguments_types():
    """A float32 argument beside a float64 one gets a float32 tangent; a 0-d array a 0-d tangent,
    a Python float a float; an integer array is a constant."""
    a32, v = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0])
    da, dv = gradient(lambda a, v: np.sum(np.correlate(a, v, "same") ** 2), a32, v)
    assert da.dtype == np.float32 and dv.dtype == np.float64
    d0, dv = gradient(lambda s, v: np.sum(np.convolve(s, v) ** 2), np.array(1.5), v)
    assert np.shape(d0) == () and dv.shape == (2,)
    _, (_, ds, _) = grad(lambda s, v: np.sum(np.convolve(v, s, "same") ** 2), 1.5, v)
    assert type(ds) is float and ds == 1.5 * 2 * (0.25 + 1.0)
    _, (_, dk, dv) = grad(lambda k, v: np.sum(np.convolve(k, v)), np.array([1, 2, 3]), v)
    assert is_zero(dk)  # no tangent: an integer array is a constant
    np.testing.assert_array_equal(dv, [6.0, 6.0])


def test_python_lists_and_numbers_beside_a_traced_argument():
    """numpy takes lists and numbers: they are constants of the rule."""
    v = np.array([0.5, -1.0, 2.0])
    check_grad(lambda v: np.convolve([1.0, 2.0, -1.0, 0.5], v, "same"), v)
    check_grad(lambda v: np.correlate(v, [2.0], mode="full"), v)
    check_grad(lambda v: np.convolve(v, 2.0, mode="full"), v)


def test_arguments_numpy_refuses_fail_as_in_numpy():
    """A 2-d argument, or a 0-d one of correlate: numpy's own error, not a wrong gradient."""
    with pytest.raises(ValueError, match="object too deep"):
        gradient(lambda x: np.sum(np.convolve(x, np.ones(2))), np.ones((2, 2)))
    with pytest.raises(ValueError, match="object of too small depth"):
        gradient(lambda x: np.sum(np.correlate(np.ones(3), x)), 1.5)


# --- complex values, under autograd's convention (tests/rules/_complex.py) ---


def _c(rng, n):
    return rng.standard_normal(n) + 1j * rng.standard_normal(n)


def _r(rng, n):
    return rng.standard_normal(n)


def crow(label, fn, make, kwargs=None):
    return pytest.param(fn, make, kwargs or {}, id=f"{fn.__name__} {label}")


#: (rule, argument makers, keyword arguments): complex and mixed, every mode, either argument longer
COMPLEX_TABLE = [
    crow("full", np.convolve, lambda rng: (_c(rng, 5), _c(rng, 3))),
    crow("same longer v", np.convolve, lambda rng: (_c(rng, 3), _c(rng, 6), "same")),
    crow("valid real a", np.convolve, lambda rng: (_r(rng, 6), _c(rng, 4)), {"mode": "valid"}),
    crow("same real v", np.convolve, lambda rng: (_c(rng, 5), _r(rng, 4)), {"mode": "same"}),
    crow("0-d v", np.convolve, lambda rng: (_c(rng, 4), np.array(0.5 - 1.5j), "same")),
    crow("same array twice", np.convolve, lambda rng: (lambda z: (z, z, "same"))(_c(rng, 4))),
    crow("valid", np.correlate, lambda rng: (_c(rng, 6), _c(rng, 3))),
    crow("valid equal", np.correlate, lambda rng: (_c(rng, 4), _c(rng, 4))),
    crow("same longer v", np.correlate, lambda rng: (_c(rng, 4), _c(rng, 7), "same")),
    crow("same longer a", np.correlate, lambda rng: (_c(rng, 7), _c(rng, 4)), {"mode": "same"}),
    crow("full real a", np.correlate, lambda rng: (_r(rng, 2), _c(rng, 5), "full")),
    crow("same real v", np.correlate, lambda rng: (_c(rng, 5), _r(rng, 4), "same")),
    crow("full real a longer", np.correlate, lambda rng: (_r(rng, 6), _c(rng, 3)), {"mode": "full"}),
    crow("same array twice", np.correlate, lambda rng: (lambda z: (z, z, "full"))(_c(rng, 4))),
]


@pytest.mark.parametrize("fn, make, kwargs", COMPLEX_TABLE)
def test_complex_rule(fn, make, kwargs, rng):
    """The dot-product test of the pullback along random complex directions: no conjugate for
    convolve, v's cotangent conjugated for correlate; a real argument gets a real cotangent."""
    check_complex_rule(fn, *make(rng), rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn, make, kwargs", COMPLEX_TABLE)
def test_complex_jvp(fn, make, kwargs, rng):
    check_complex_jvp(fn, *make(rng), rng=rng, kwargs=kwargs)


def _complex_filter(x, y):
    z = complex_of(x, y)
    return power(np.correlate(np.convolve(z, y[:3] - 2j * x[:3], "same"), z[1:5] * 1j, "full"))


def test_complex_end_to_end(rng):
    """Reverse and forward mode through a complex convolution then correlation, against central
    differences in x and y."""
    check_grad(_complex_filter, rng.standard_normal(6), rng.standard_normal(6))


def test_complex_second_order(rng):
    check_grad(_complex_filter, rng.standard_normal(6), rng.standard_normal(6), order=2)


def test_complex_rules_are_declared():
    assert {np.convolve, np.correlate} <= COMPLEX

"""Rule of scipy.signal.convolve (through tapegrad.scipy.signal.convolve): every mode, 1-d and
2-d, either input the larger, both methods."""
import numpy as np
import pytest

from tapegrad import check_grad, gradient
from tapegrad.scipy.signal import convolve

from _rule_tables import DTYPES

SHAPES = [((7,), (3,)), ((3,), (7,)), ((6,), (4,)), ((5,), (5,)), ((5, 4), (2, 3)), ((3, 2), (4, 5)), ((4, 4), (3, 4))]
MODES = ["full", "same", "valid"]

EXERCISED = {convolve}

#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = [(convolve, lambda a, b: np.sum(convolve(a, b, "same") ** 2) / 2,
           (np.sin(np.arange(1.0, 8.0)), np.cos(np.arange(1.0, 4.0))))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolve_rule(shapes, mode, method, dtype, rng):
    """Both inputs' gradients match central differences, mode and method by position or name."""
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    check_grad(lambda a, b: convolve(a, b, mode, method), a, b)
    check_grad(lambda a, b: convolve(a, b, mode=mode, method=method), a, b)


def test_convolve_of_python_floats_in_an_array():
    """Σ convolve(x, k) = Σx Σk, so each x has slope Σk and each k slope Σx."""
    x, k = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    dx, dk = gradient(lambda x, k: np.sum(convolve(x, k)), x, k)
    np.testing.assert_array_equal(dx, [-0.5, -0.5, -0.5])
    np.testing.assert_array_equal(dk, [6.0, 6.0])


@pytest.mark.parametrize("rule, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(rule, f, args):
    """The pullback convolves again: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)

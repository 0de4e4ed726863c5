"""Tracers behave like the values they hold: operators, attributes, methods, iteration."""
import numpy as np

from tapegrad import check_grad, grad, gradient, trace


def test_attributes_read_the_value(rng):
    """shape, dtype, ndim, size and len answer from the traced value without recording."""
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x),
                    npshape=np.shape(x))
        return np.sum(x)

    _, tape = trace(f, np.ones((2, 3), dtype=np.float32))
    assert seen == dict(shape=(2, 3), dtype=np.float32, ndim=2, size=6, len=2, npshape=(2, 3))
    assert len(tape) == 3


def test_reflected_and_unary_operators(rng):
    """Every operator works with the Tracer on either side; gradients match central differences."""
    def f(x):
        return np.sum(2.0 - x + (3.0 / (x + 4)) * x ** 2 + 2 ** x - (-x) + (+x))

    check_grad(f, rng.uniform(0.5, 1.5, 4))


def test_methods_forward_to_numpy(rng):
    """x.T, x.sum(axis), x.reshape, x.dot, x.transpose behave as on arrays."""
    def f(x):
        return x.T.dot(x).sum(axis=0).reshape(1, 3).transpose().sum()

    x = rng.standard_normal((2, 3))
    (dx,) = gradient(f, x)
    # the entries of xᵀx sum to Σ_k (Σ_i x_ki)², so d/dx_ki = 2 Σ_j x_kj
    np.testing.assert_allclose(dx, 2 * x.sum(axis=1, keepdims=True) * np.ones((1, 3)), atol=1e-12)


def test_iteration_over_first_axis(rng):
    """Iterating over a Tracer yields one traced row per element of the first axis."""
    x = rng.standard_normal((3, 2))

    def f(x):
        total = 0.0
        for row in x:
            total = total + np.sum(row * row)
        return total

    (dx,) = gradient(f, x)
    np.testing.assert_allclose(dx, 2 * x, atol=1e-12)


def test_comparison_drives_control_flow():
    """if on a traced comparison takes the branch of the value at trace time."""
    def relu_ish(x):
        if x > 0:
            return x * 3.0
        return x * 0.5

    assert grad(relu_ish, 2.0)[1][1] == 3.0
    assert grad(relu_ish, -2.0)[1][1] == 0.5

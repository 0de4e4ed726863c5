"""The worked examples of the core, end to end: values and gradients to 1e-12."""
import numpy as np
import pytest

from tapegrad import ZeroTangent, NoTangent, check_grad, grad, gradient, ngradient, pullback, trace


def f_ratio(a, b):
    return a / (a + b * b)


def test_ratio_value_and_pullback():
    """a/(a + b*b) at (2, 3): value and both partials match the closed form."""
    y, back = pullback(f_ratio, 2.0, 3.0)
    assert y == pytest.approx(0.18181818181818182, abs=1e-12)
    df, da, db = back(1.0)
    assert df is ZeroTangent()
    assert da == pytest.approx(0.0743801652892562, abs=1e-12)
    assert db == pytest.approx(-0.09917355371900827, abs=1e-12)
    assert type(da) is float and type(db) is float


def test_sin_cos():
    """sin(cos(x)) at 0.9 and cos(sin(x)) at 1.0 match their closed forms."""
    y, (_, dx) = grad(lambda x: np.sin(np.cos(x)), 0.9)
    assert y == pytest.approx(0.5823447254418763, abs=1e-12)
    assert dx == pytest.approx(-0.6367993086184733, abs=1e-12)
    assert dx == pytest.approx(-np.cos(np.cos(0.9)) * np.sin(0.9), abs=1e-12)
    _, (_, dx) = grad(lambda x: np.cos(np.sin(x)), 1.0)
    assert dx == pytest.approx(-0.40286244305285346, abs=1e-12)


def g(a, b):
    return a * b


def h(a):
    return np.sin(a)


def f_gh(x1, x2):
    return g(x1, x2) + h(x1)


def test_gh_traced_through_user_functions():
    """User functions are traced through: only the three primitives reach the tape."""
    y, tape = trace(f_gh, 2.0, 3.0)
    assert y == pytest.approx(6.909297426825682, abs=1e-12)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function f_gh\n"
        "  inp %2::float64   # x1\n"
        "  inp %3::float64   # x2\n"
        "  %4 = multiply(%2, %3)::float64\n"
        "  %5 = sin(%2)::float64\n"
        "  %6 = add(%4, %5)::float64"
    )
    y, grads = grad(f_gh, 2.0, 3.0)
    assert grads[0] is ZeroTangent()
    assert grads[1] == pytest.approx(2.5838531634528574, abs=1e-12)
    assert grads[2] == pytest.approx(2.0, abs=1e-12)


def power_loop(x, n):
    r = 1
    for _ in range(n):
        r *= x
    return r


def test_pow_loop_with_int_count():
    """A loop whose count is an int argument: gradient 3x² in x, NoTangent for the count."""
    y, (_, dx, dn) = grad(power_loop, 2.0, 3)
    assert y == 8.0
    assert dx == pytest.approx(12.0, abs=1e-12)
    assert dn is NoTangent()


def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2


def test_haaland_against_central_differences():
    """All three partials of the Haaland friction factor agree with central differences to 1e-6."""
    args = (0.01, 1.0, 3000.0)
    _, grads = grad(haaland, *args)
    numeric = ngradient(haaland, *args, eps=1e-7)
    for ad, fd in zip(grads[1:], numeric, strict=True):
        assert ad == pytest.approx(fd, rel=1e-6)
    check_grad(haaland, *args)


def test_log_expression_against_hand_derivative():
    """-log(x² + 2eˣ + (x+1)/x) at 2.3 matches the derivative worked out by hand."""
    x = 2.3
    hand = -(2 * x + 2 * np.exp(x) - 1 / x**2) / (x**2 + 2 * np.exp(x) + (x + 1) / x)
    (dx,) = gradient(lambda x: -np.log(x**2 + 2 * np.exp(x) + (x + 1) / x), x)
    assert dx == pytest.approx(hand, abs=1e-12)


def test_trace_of_matrix_product(rng):
    """d trace(A @ B) / dA = Bᵀ and / dB = Aᵀ for random 30x30 matrices."""
    A, B = rng.standard_normal((30, 30)), rng.standard_normal((30, 30))
    dA, dB = gradient(lambda A, B: np.trace(A @ B), A, B)
    np.testing.assert_allclose(dA, B.T, atol=1e-12)
    np.testing.assert_allclose(dB, A.T, atol=1e-12)
    assert dA.dtype == A.dtype and dA.shape == A.shape


def test_fanout_accumulates():
    """A variable used twice receives the sum of both shares."""
    _, (_, dx) = grad(lambda x: x * np.sin(x), 0.7)
    assert dx == pytest.approx(np.sin(0.7) + 0.7 * np.cos(0.7), abs=1e-12)
    _, (_, dx) = grad(lambda x: x + x + x, 1.5)
    assert dx == 3.0


def test_grad_when_output_is_input():
    """A function that returns one input: gradient 1 for it, ZeroTangent for the other."""
    y, (_, dx, dy) = grad(lambda x, y: x, 2.0, 5.0)
    assert (y, dx, dy) == (2.0, 1.0, ZeroTangent())


def test_grad_when_output_is_constant():
    """A result that does not depend on the inputs gives ZeroTangent for every input."""
    y, (_, dx) = grad(lambda x: 4.0, 2.0)
    assert y == 4.0 and dx is ZeroTangent()


def test_grad_when_an_input_is_unused():
    """An input no path reaches gets ZeroTangent, the others their derivative."""
    _, (_, dx, dy) = grad(lambda x, y: np.exp(x), 0.0, 1.0)
    assert dx == 1.0 and dy is ZeroTangent()


def test_int_argument_in_arithmetic_gets_float_gradient():
    """An int argument used in arithmetic is differentiated, with a float gradient."""
    _, (_, dn) = grad(lambda n: n * n * 1.5, 3)
    assert dn == 9.0 and type(dn) is float


def test_array_gradient_keeps_shape_and_dtype(rng):
    """float32 in, float32 gradient of the same shape out."""
    x = rng.standard_normal((2, 3)).astype(np.float32)
    (dx,) = gradient(lambda x: np.sum(np.tanh(x) * x), x)
    assert dx.dtype == np.float32 and dx.shape == (2, 3)
    np.testing.assert_allclose(dx, np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-5)


def test_broadcasting_is_undone(rng):
    """Gradients of broadcast operands are summed back to their shapes."""
    x, y = rng.standard_normal((2, 1)), rng.standard_normal((1, 3))
    dx, dy = gradient(lambda x, y: np.sum(x * y + x / (2 + y * y)), x, y)
    assert dx.shape == (2, 1) and dy.shape == (1, 3)
    check_grad(lambda x, y: np.sum(x * y + x / (2 + y * y)), x, y)


def test_pullback_is_a_vector_jacobian_product(rng):
    """back(v) for an array result is vᵀJ, checked against the explicit Jacobian of sin."""
    x = rng.standard_normal(4)
    v = rng.standard_normal(4)
    y, back = pullback(np.sin, x)
    np.testing.assert_allclose(back(v)[1], v * np.cos(x), atol=1e-14)
    # a second call starts afresh: nothing accumulates between calls
    np.testing.assert_allclose(back(2 * v)[1], 2 * v * np.cos(x), atol=1e-14)


def test_mixed_operands(rng):
    """Tracers mix with ndarrays, numpy scalars and Python numbers on either side of an operator."""
    A = rng.standard_normal((3, 3))
    c = np.float64(0.5)

    def f(x):
        z = (A @ x) * c + 2.0 - x / 3 + 1 / (1 + x**2) + (-x) ** 2
        return np.sum(z @ A) + np.sum(x.T.dot(A)) - np.trace(A + np.transpose(x.reshape(3, 1) * x))

    check_grad(f, rng.standard_normal(3))

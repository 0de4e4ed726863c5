"""tapegrad.scipy.integrate.quad and quad_vec: scipy's integrals differentiated under the integral
sign (parameters) and by Leibniz's rule (limits), in both modes and at second order; against
antiderivatives, central differences, and scipy's own failures turned into errors."""
import re

import numpy as np
import pytest
import scipy.integrate

import tapegrad
from tapegrad import check_grad, gradient, hessian, jacobian, jvp
from tapegrad.scipy._quad import quad_value
from tapegrad.scipy.integrate import SolverError, quad, quad_vec

EXERCISED = {quad_value}

TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}


def sine_area(a, b):
    """∫₀ᵇ sin(a t) dt = (1 - cos(ab)) / a: a captured, b a limit."""
    return quad(lambda t: np.sin(a * t), 0.0, b, **TIGHT)[0]


def gaussian(theta):
    """∫ exp(-θ t²) dt over the whole line = √(π/θ)."""
    return quad(lambda t: np.exp(-theta * t ** 2), -np.inf, np.inf, **TIGHT)[0]


def damped(theta, a, b):
    """∫ₐᵇ e^(-θ₀ t) cos(θ₁ t) dt, θ passed in args: both limits and a vector of parameters."""
    return quad(lambda t, th: np.exp(-th[0] * t) * np.cos(th[1] * t), a, b, args=(theta,), **TIGHT)[0]


def sines(theta, b):
    """quad_vec of (sin(θᵢ t))ᵢ from 0 to b = ((1 - cos(θᵢ b)) / θᵢ)ᵢ."""
    return quad_vec(lambda t: np.sin(theta * t), 0.0, b, epsrel=1e-13)[0]


ORDER2 = [
    (quad_value, sine_area, (2.0, 1.0)),
    (quad_value, gaussian, (2.0,)),
    (quad_value, damped, (np.array([0.5, 2.0]), 0.2, 1.3)),
    (quad_value, lambda theta, b: np.sum(sines(theta, b) ** 2), (np.array([0.5, 1.0, 2.0]), 1.3)),
]


# --- closed forms ---


def test_sine_integral_and_its_derivatives_in_the_parameter_and_the_limit():
    """∫₀ᵇ sin(at) dt = (1 - cos(ab))/a: ∂/∂a = b sin(ab)/a - (1 - cos(ab))/a², ∂/∂b = sin(ab),
    in reverse and forward mode, and the Hessian's three entries."""
    a, b = 2.0, 1.0
    s, c = np.sin(a * b), np.cos(a * b)
    assert sine_area(a, b) == pytest.approx((1 - c) / a, rel=1e-14)
    da, db = gradient(sine_area, a, b)
    assert da == pytest.approx(b * s / a - (1 - c) / a ** 2, rel=1e-12)
    assert db == pytest.approx(s, rel=1e-14)
    assert jvp(sine_area, (a, b), (1.0, 0.0))[1] == pytest.approx(da, rel=1e-12)
    assert jvp(sine_area, (a, b), (0.0, 1.0))[1] == pytest.approx(db, rel=1e-14)
    H = hessian(lambda x: sine_area(x[0], x[1]), np.array([a, b]))
    daa = b ** 2 * c / a - 2 * b * s / a ** 2 + 2 * (1 - c) / a ** 3
    np.testing.assert_allclose(H, [[daa, b * c], [b * c, a * c]], rtol=1e-10)


def test_gaussian_over_the_whole_line():
    """∫ exp(-θt²) dt = √(π/θ) over (-inf, inf): d/dθ = -√π θ^(-3/2)/2, d²/dθ² = 3√π θ^(-5/2)/4."""
    theta = 2.0
    assert gaussian(theta) == pytest.approx(np.sqrt(np.pi / theta), rel=1e-13)
    assert gradient(gaussian, theta)[0] == pytest.approx(-np.sqrt(np.pi) / 2 * theta ** -1.5, rel=1e-10)
    assert jvp(gaussian, (theta,), (1.0,))[1] == pytest.approx(-np.sqrt(np.pi) / 2 * theta ** -1.5, rel=1e-10)
    assert float(hessian(gaussian, theta)) == pytest.approx(3 * np.sqrt(np.pi) / 4 * theta ** -2.5, rel=1e-9)


def test_lower_limit_gets_minus_the_integrand():
    """d/da ∫ₐᵇ f = -f(a): ∫ₐ¹ t² dt = (1 - a³)/3, d/da = -a²."""
    assert gradient(lambda a: quad(lambda t: t ** 2, a, 1.0)[0], 0.5)[0] == pytest.approx(-0.25, rel=1e-14)
    assert jvp(lambda a: quad(lambda t: t ** 2, a, 1.0)[0], (0.5,), (1.0,))[1] == pytest.approx(-0.25, rel=1e-14)


def test_an_infinite_limit_passes_no_derivative():
    """∫ₐ^∞ e^(-kt) dt = e^(-ka)/k: the finite limit gets -f(a), the parameter its own share."""
    def tail(k, a):
        return quad(lambda t: np.exp(-k * t), a, np.inf, **TIGHT)[0]

    k, a = 1.5, 0.4
    dk, da = gradient(tail, k, a)
    assert da == pytest.approx(-np.exp(-k * a), rel=1e-12)
    assert dk == pytest.approx(-a * np.exp(-k * a) / k - np.exp(-k * a) / k ** 2, rel=1e-10)


def test_limits_alone_get_the_integrand_at_every_order():
    """Nothing captured, both limits traced: ∫ₐᵇ sin = cos a - cos b, gradient (-sin a, sin b),
    Hessian diag(-cos a, cos b), in every combination of modes."""
    def f(a, b):
        return quad(np.sin, a, b)[0]

    a, b = 0.3, 1.1
    np.testing.assert_allclose(gradient(f, a, b), (-np.sin(a), np.sin(b)), rtol=1e-14)
    np.testing.assert_allclose(hessian(lambda x: f(x[0], x[1]), np.array([a, b])),
                               np.diag([-np.cos(a), np.cos(b)]), rtol=1e-14)
    check_grad(f, a, b, order=2)


def test_quad_vec_of_a_vector_integrand():
    """quad_vec of (sin(θᵢ t))ᵢ on [0, b] is ((1 - cos(θᵢ b))/θᵢ)ᵢ: its Jacobian in θ is diagonal,
    b sin(θᵢ b)/θᵢ - (1 - cos(θᵢ b))/θᵢ², and in b it is (sin(θᵢ b))ᵢ, in both modes. (At
    epsrel=1e-13 some derivative integrals stop short of the tolerance on rounding errors, which
    scipy reports; they are kept, being accurate to 1e-10.)"""
    theta, b = np.array([0.5, 1.0, 2.0]), 1.3
    np.testing.assert_allclose(sines(theta, b), (1 - np.cos(theta * b)) / theta, rtol=1e-13)
    expected = b * np.sin(theta * b) / theta - (1 - np.cos(theta * b)) / theta ** 2
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(jacobian(lambda th: sines(th, b), theta, mode=mode), np.diag(expected),
                                   rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(jacobian(lambda b: sines(theta, b), b, mode=mode), np.sin(theta * b), rtol=1e-13)


def test_a_double_integral_of_nested_quads():
    """∫₀¹∫₀¹ e^(-a(x+y)) dy dx = g(a)², g(a) = (1 - e^(-a))/a: the inner quad, called by the
    outer integrand, is differentiated under the outer integral in turn."""
    def double(a):
        return quad(lambda x: quad(lambda y: np.exp(-a * (x + y)), 0.0, 1.0)[0], 0.0, 1.0)[0]

    a = 0.7
    g = (1 - np.exp(-a)) / a
    dg = np.exp(-a) / a - (1 - np.exp(-a)) / a ** 2
    assert double(a) == pytest.approx(g ** 2, rel=1e-12)
    assert gradient(double, a)[0] == pytest.approx(2 * g * dg, rel=1e-9)
    assert jvp(double, (a,), (1.0,))[1] == pytest.approx(2 * g * dg, rel=1e-9)


# --- central differences, both modes, second order ---


@pytest.mark.parametrize("f, args", [row[1:] for row in ORDER2], ids=["sine", "gaussian", "damped", "quad_vec"])
def test_gradients_match_central_differences_at_second_order(f, args):
    """Every row's first and second derivatives, in every combination of modes, match central
    differences of scipy's integral at tight tolerances."""
    check_grad(f, *args, order=2)


def test_args_and_captured_values_both_get_their_share():
    """A parameter captured by the integrand and another passed in args: ∫₀¹ c e^(kt) dt = c(e^k - 1)/k."""
    def f(c, k):
        return quad(lambda t, k: c * np.exp(k * t), 0.0, 1.0, args=(k,), **TIGHT)[0]

    c, k = 1.5, 0.8
    dc, dk = gradient(f, c, k)
    assert dc == pytest.approx((np.exp(k) - 1) / k, rel=1e-12)
    assert dk == pytest.approx(c * (np.exp(k) / k - (np.exp(k) - 1) / k ** 2), rel=1e-12)


# --- scipy's results and options ---


def test_plain_values_get_scipys_own_results():
    """With nothing traced, quad and quad_vec are scipy's (same values, same error estimates)."""
    assert quad(np.sin, 0.0, 1.0) == scipy.integrate.quad(np.sin, 0.0, 1.0)
    y, err = quad_vec(lambda t: np.array([t, t ** 2]), 0.0, 1.0)
    np.testing.assert_allclose(y, [0.5, 1 / 3], rtol=1e-14)


def test_full_output_keeps_scipys_info_with_the_traced_value():
    """full_output gives (y, abserr, infodict) for quad and (y, err, info) for quad_vec, y traced."""
    def f(a):
        y, err, info = quad(lambda t: np.sin(a * t), 0.0, 1.0, full_output=1)
        assert err < 1e-12 and info["neval"] > 0
        z, err_vec, info_vec = quad_vec(lambda t: np.sin(a * t) * np.ones(2), 0.0, 1.0, full_output=True)
        assert info_vec.success and err_vec < 1e-6
        return y + z[1]

    assert gradient(f, 2.0)[0] == pytest.approx(2 * (np.sin(2.0) / 2 - (1 - np.cos(2.0)) / 4), rel=1e-10)


def test_points_split_the_range_of_the_integral_and_its_derivative():
    """∫₀² |t - 1| e^(kt) dt with points=[1.0]: the derivative integral is split at the kink too."""
    def f(k):
        return quad(lambda t: np.abs(t - 1.0) * np.exp(k * t), 0.0, 2.0, points=[1.0], **TIGHT)[0]

    check_grad(f, 0.3, order=2)


def test_an_integrand_that_branches_on_t_gets_each_branchs_derivative():
    """The derivative integrand is compiled once per integral; where the user's integrand takes
    another branch at another t (a Python `if`), the program's guard sends that point to the
    integrand itself: ∫₀¹ (at for t < 1/2, a²t after) dt = a/8 + 3a²/8, d/da = 1/8 + 3a/4."""
    def f(a):
        def g(t):
            if t < 0.5:
                return a * t
            return a ** 2 * t
        return quad(g, 0.0, 1.0, points=[0.5], **TIGHT)[0]

    assert gradient(f, 2.0)[0] == pytest.approx(1 / 8 + 3 * 2.0 / 4, rel=1e-13)
    assert jvp(f, (2.0,), (1.0,))[1] == pytest.approx(1 / 8 + 3 * 2.0 / 4, rel=1e-13)
    assert float(hessian(f, 2.0)) == pytest.approx(3 / 4, rel=1e-12)


def _lines_hidden(tape):
    """The tape's text with the user's line numbers as N (the problems are named by them)."""
    return re.sub(r"test_quad\.py:\d+", "test_quad.py:N", str(tape))


def test_the_tape_records_one_integral():
    """The integral is one op on the tape, its problem named by the user's line."""
    _, tape = tapegrad.trace(sine_area, 2.0, 1.0)
    text = _lines_hidden(tape)
    assert text == (
        "Tape\n"
        "  inp %1::function sine_area\n"
        "  inp %2::float64   # a\n"
        "  inp %3::float64   # b\n"
        "  %4 = quad_value(<quad problem at test_quad.py:N>, 0.0, %3, %2)::float64")


def test_the_reverse_pass_of_a_pullback_is_an_integral_of_the_vjp():
    """A pullback's tape through a pullback of its own records the derivative integral as one more
    quad_value, of the vector-Jacobian product of the integrand (a second derivative differentiates it)."""
    def slope(a):
        return gradient(lambda a: quad(lambda t: np.sin(a * t), 0.0, 1.0)[0], a)[0]

    _, tape = tapegrad.trace(slope, 2.0)
    text = _lines_hidden(tape)
    assert text == (
        "Tape\n"
        "  inp %1::function slope\n"
        "  inp %2::float64   # a\n"
        "  %3 = quad_value(<quad problem at test_quad.py:N>, 0.0, 1.0, %2)::float64\n"
        "  %4 = quad_value(<quad vjp problem at test_quad.py:N>, 0.0, 1.0, 1.0, %2)::float64\n"
        "  %5 = reshape(%4, (-1,))::float64[1]\n"
        "  %6 = getitem(%5, 0:1)::float64[1]\n"
        "  %7 = getitem(%6, 0)::float64")


# --- failures ---


def test_an_integral_that_does_not_converge_raises_naming_the_line_and_the_fix():
    """∫₀¹ 1/(at) dt diverges: scipy's IntegrationWarning becomes a SolverError."""
    with pytest.raises(SolverError) as info:
        gradient(lambda a: quad(lambda t: 1 / (a * t), 0.0, 1.0)[0], 0.3)
    message = str(info.value)
    assert re.match(r"quad at test_quad\.py:\d+: scipy's quad did not converge \(The maximum number of "
                    r"subdivisions \(50\) has been achieved\.", message)
    assert message.endswith("; raise limit, loosen epsabs/epsrel, or split the range at the integrand's kinks and "
                            "singularities with points=[...]: an integral that was not computed has no derivative")


def test_a_derivative_integral_that_does_not_converge_raises():
    """∫₀¹ |t - a|^(-1/2) dt converges (split at a), but ∂/∂a of the integrand, ~|t - a|^(-3/2),
    is not integrable: differentiation under the integral sign does not hold, and says so, in
    both modes."""
    def f(a):
        return quad(lambda t: np.abs(t - a) ** -0.5, 0.0, 1.0, points=[a])[0]

    assert f(0.3) == pytest.approx(2 * np.sqrt(0.3) + 2 * np.sqrt(0.7), rel=1e-8)
    for differentiate in (lambda: gradient(f, 0.3), lambda: jvp(f, (0.3,), (1.0,))):
        with pytest.raises(SolverError, match=r"quad \(the integral of \(?∂f/∂θ\)?(ᵀ·ȳ|·dθ)\) at test_quad\.py:\d+: "
                                              r"scipy's quad did not converge .*; the derivative of the integrand "
                                              r"is not integrable there"):
            differentiate()


def test_a_derivative_near_zero_at_a_tight_tolerance_is_kept():
    """E[X] for X ~ Normal(μ, σ), at μ = 0 with epsabs = 1e-13: ∂/∂σ is an integral of zero,
    which rounding errors stop short of the tolerance; it is kept, being zero to 1e-10 of
    ∫|∂f/∂σ|, in both modes and at second order (d²/dσ² = 0 too)."""
    def mean(mu, sigma):
        density = lambda x: np.exp(-(x - mu) ** 2 / (2 * sigma ** 2)) / (sigma * np.sqrt(2 * np.pi))
        return quad(lambda x: x * density(x), -np.inf, np.inf, epsabs=1e-13, epsrel=1e-13)[0]

    np.testing.assert_allclose(gradient(mean, 0.0, 1.0), (1.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(jacobian(lambda v: mean(v[0], v[1]), np.array([0.0, 1.0]), mode="fwd"), [1.0, 0.0],
                               atol=1e-12)
    np.testing.assert_allclose(hessian(lambda v: mean(v[0], v[1]), np.array([0.0, 1.0])), np.zeros((2, 2)),
                               atol=1e-12)


def test_a_weight_function_is_refused_with_the_integrand_to_write():
    """weight= has no derivative here: the error says to write the weight into the integrand."""
    with pytest.raises(SolverError, match=re.escape(
            "a weight function (weight=, wvar=) has no derivative here; write the weight into the integrand")):
        gradient(lambda a: quad(lambda t: np.exp(-a * t), 0.0, 1.0, weight="cos", wvar=2.0)[0], 0.5)


def test_scipys_quad_given_a_traced_value_names_this_quad():
    """scipy's own quad, dblquad and quad_vec, given a traced value, name tapegrad's replacement."""
    quad_fix = (r"scipy\.integrate\.quad cannot see traced values: use tapegrad\.scipy\.integrate\.quad \(same arguments; "
                r"one quad per dimension, nested, for dblquad, tplquad and nquad\), differentiated under the integral sign")
    with pytest.raises(tapegrad.ConcreteValueError, match=quad_fix):
        gradient(lambda a: scipy.integrate.quad(lambda t: np.sin(a * t), 0.0, 1.0)[0], 2.0)
    with pytest.raises(tapegrad.ConcreteValueError, match=quad_fix):
        gradient(lambda a: scipy.integrate.dblquad(lambda y, x: a * x * y, 0.0, 1.0, 0.0, 1.0)[0], 2.0)
    with pytest.raises(tapegrad.ConcreteValueError, match=r"scipy\.integrate\.quad_vec cannot see traced values: use "
                                                          r"tapegrad\.scipy\.integrate\.quad_vec \(same arguments\)"):
        gradient(lambda a: scipy.integrate.quad_vec(lambda t: np.sin(a * t) * np.ones(2), 0.0, 1.0)[0][0], 2.0)

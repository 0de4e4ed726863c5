"""Rule of odeint (tapegrad.scipy.integrate.odeint): gradients with respect to the initial state,
the time points and the parameters in args, by the adjoint method (reverse) and by forward
sensitivities (forward mode)."""
import numpy as np
import pytest

from tapegrad import check_grad, gradient, hessian, jvp
from tapegrad.solvernoise import checking
from tapegrad.rules import integrate as integrate_rules
from tapegrad.rules.integrate import odeint_cotangent
from tapegrad.scipy.integrate import odeint, odeint_op

from _rule_tables import DTYPES

TOL = {"rtol": 1e-11, "atol": 1e-11}
#: tight enough for central differences of a first derivative, and for the gradient on plain values
#: (the adjoint on a checkpointed solution) to agree with the traced rule's (a compiled gradient) to 1e-10
ORDER2_TOL = {"rtol": 1e-12, "atol": 1e-12}


def oscillator(y, t, a, b):
    """A damped, driven, time-dependent oscillator: every argument matters."""
    return np.array([a * y[1], -b * y[0] - 0.1 * y[1] * t + 0.2 * np.sin(t)])


def decay(y, t, k):
    return -k * y


def lotka_volterra(t, y, theta):
    """tfirst form, with the parameters in one array."""
    return np.array([theta[0] * y[0] - theta[1] * y[0] * y[1], theta[1] * y[0] * y[1] - theta[2] * y[1]])


EXERCISED = {odeint_op, odeint_cotangent}


def _trajectory(y0, t, a, b):
    return odeint(oscillator, y0, t, args=(a, b), **ORDER2_TOL)


def _predator_prey(y0, theta):
    return odeint(lotka_volterra, y0, np.array([0.0, 0.3, 0.6]), (theta,), tfirst=True, **ORDER2_TOL)[1:]


def affine(y, t, pairs):
    """dy/dt = a y + c, with its parameters as a neural ODE passes its layers: [(a, c)]."""
    ((a, c),) = pairs
    return a * y + c


def _affine_at(y0, a, c):
    # tighter than ORDER2_TOL: at 1e-10 central differences of y(1) are off by 2e-4 here
    return odeint(affine, np.stack([y0]), np.array([0.0, 1.0]), args=([(a, c)],), rtol=1e-12, atol=1e-12)[-1, 0]


#: the whole trajectory in y0, every time point and both parameters; tfirst with an array
#: parameter; parameters nested in args
ORDER2 = [
    (odeint_op, _trajectory, (np.array([1.0, 0.5]), np.array([0.0, 0.4, 0.7]), 1.3, np.array(0.7))),
    (odeint_op, _predator_prey, (np.array([1.0, 0.8]), np.array([1.1, 0.4, 0.9]))),
    (odeint_op, _affine_at, (1.5, 0.3, 0.7)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_gradients_of_y0_t_and_args(dtype):
    """The loss of a trajectory is differentiated in y0, every time point and both parameters."""
    y0, t = np.array([1.0, 0.5], dtype=dtype), np.array([0.0, 0.5, 1.2, 2.0], dtype=dtype)

    def loss(y0, t, a, b):
        return np.sum(odeint(oscillator, y0, t, args=(a, b), **TOL) ** 2)

    check_grad(loss, y0, t, 1.3, np.array(0.7, dtype=dtype), rtol=1e-5 if dtype == np.float64 else None)


def test_tfirst_and_an_array_parameter():
    """func(t, y, θ) with tfirst=True, θ an array, and args given by position."""
    def final(y0, theta):
        return odeint(lotka_volterra, y0, np.linspace(0.0, 1.0, 5), (theta,), tfirst=True, **TOL)[-1]

    check_grad(final, np.array([1.0, 0.8]), np.array([1.1, 0.4, 0.9]), rtol=1e-5)


def test_exponential_decay_closed_form():
    """y(t) = y₀ e^(-k t): ∂y(1)/∂y₀ = e^(-k), ∂y(1)/∂k = -y₀ e^(-k), ∂y(1)/∂t₁ = -k y(1)."""
    def final(y0, t, k):
        return odeint(decay, y0, t, args=(k,), **TOL)[-1, 0]

    dy0, dt, dk = gradient(final, np.array([2.0]), np.array([0.0, 1.0]), 0.5)
    e = np.exp(-0.5)
    np.testing.assert_allclose(dy0, [e], rtol=1e-8)
    np.testing.assert_allclose(dt, [0.5 * 2 * e, -0.5 * 2 * e], rtol=1e-8)
    assert dk == pytest.approx(-2 * e, rel=1e-8)


def mlp(y, t, layers, options):
    """A neural ODE's dynamics: layers a list of (W, b) pairs, options a dict with a float and an int."""
    for W, b in layers:
        y = np.tanh(W @ y + b)
    return options["gain"] * y + 0.0 * options["depth"]


def test_nested_args_of_a_neural_ode(rng):
    """args holding a list of (W, b) pairs and a dict: every float leaf gets its gradient, in the
    structure given, matching central differences in both modes."""
    layers = [(0.5 * rng.standard_normal((2, 2)), 0.1 * rng.standard_normal(2)) for _ in range(2)]

    def loss(y0, layers, gain):
        ys = odeint(mlp, y0, np.array([0.0, 0.5, 1.0]), args=(layers, {"gain": gain, "depth": 2}), **TOL)
        return np.sum(ys ** 2)

    dy0, dlayers, dgain = gradient(loss, np.array([1.0, -0.5]), layers, 0.7)
    assert type(dlayers) is list and [type(d) for d in dlayers] == [tuple, tuple]
    assert [np.shape(d) for pair in dlayers for d in pair] == [(2, 2), (2,), (2, 2), (2,)]
    check_grad(loss, np.array([1.0, -0.5]), layers, 0.7, rtol=1e-5)


def test_nested_args_closed_form():
    """dy/dt = a y + c with args=([(a, c)],): y(1) = y₀eᵃ + c(eᵃ - 1)/a, so ∂y/∂y₀ = eᵃ,
    ∂y/∂c = (eᵃ - 1)/a, ∂y/∂a = y₀eᵃ + c(a eᵃ - eᵃ + 1)/a²."""
    y0, a, c = 1.5, 0.3, 0.7
    (dpairs,) = gradient(lambda pairs: odeint(affine, np.array([y0]), np.array([0.0, 1.0]), args=(pairs,),
                                              **TOL)[-1, 0], [(a, c)])
    e = np.exp(a)
    assert type(dpairs) is list and type(dpairs[0]) is tuple
    np.testing.assert_allclose(dpairs[0], [y0 * e + c * (a * e - e + 1) / a ** 2, (e - 1) / a], rtol=1e-8)
    assert gradient(_affine_at, y0, a, c)[0] == pytest.approx(e, rel=1e-8)


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_a_parameter_given_twice_gets_both_shares(nested):
    """The same array in two places of args (a weight two layers share) gets the sum of its two
    shares, once: it was given the sum at each place, twice the derivative."""
    W = np.array([[0.3, -0.2], [0.1, 0.4]])

    def loss(y0, W):
        if nested:
            args = ([(W, np.zeros(2)), (W, np.ones(2))], {"gain": 1.0, "depth": 2})
            return np.sum(odeint(mlp, y0, np.array([0.0, 1.0]), args=args, **TOL))
        return np.sum(odeint(lambda y, t, A, B: A @ y - 0.5 * B @ y, y0, np.array([0.0, 1.0]), args=(W, W), **TOL))

    check_grad(loss, np.array([1.0, -0.5]), W, rtol=1e-5)


def test_full_output_is_refused():
    """full_output returns a dictionary of solver details: the gradient refuses it, saying so."""
    with pytest.raises(NotImplementedError, match="without full_output"):
        gradient(lambda y0: np.sum(odeint(decay, y0, np.array([0.0, 1.0]), (0.5,), full_output=True)[0]), np.ones(1))


def _decay_at(p):
    """y(t₁) = y₀ e^(-k t₁) from y(0) = y₀, for p = (y₀, k, t₁)."""
    return odeint(decay, p[:1], np.stack([0.0, p[2]]), args=(p[1],), **ORDER2_TOL)[-1, 0]


def _decay_hessian(y0, k, t1):
    e = np.exp(-k * t1)
    return np.array([[0.0, -t1 * e, -k * e],
                     [-t1 * e, y0 * t1 ** 2 * e, y0 * (k * t1 - 1.0) * e],
                     [-k * e, y0 * (k * t1 - 1.0) * e, y0 * k ** 2 * e]])


def _rev_over_fwd(f, p):
    return np.stack([gradient(lambda p: jvp(f, (p,), (e,))[1], p)[0] for e in np.eye(p.size)])


def _fwd_over_fwd(f, p):
    return np.array([[jvp(lambda p: jvp(f, (p,), (e,))[1], (p,), (u,))[1] for u in np.eye(p.size)]
                     for e in np.eye(p.size)])


@pytest.mark.parametrize("second", [
    pytest.param(lambda f, p: hessian(f, p, mode="rev"), id="rev-rev"),
    pytest.param(lambda f, p: hessian(f, p, mode="fwd"), id="fwd-rev"),
    pytest.param(_rev_over_fwd, id="rev-fwd"),
    pytest.param(_fwd_over_fwd, id="fwd-fwd"),
])
def test_second_derivatives_of_exponential_decay_closed_form(second):
    """The Hessian of y(t₁) = y₀ e^(-k t₁) in (y₀, k, t₁), in each combination of modes."""
    p = np.array([2.0, 0.5, 1.0])
    np.testing.assert_allclose(second(_decay_at, p), _decay_hessian(*p), rtol=1e-7, atol=1e-9)


def test_forward_over_reverse_takes_moving_time_points_itself(monkeypatch):
    """hessian(mode="fwd-rev") of y(t₁) = y₀ e^(-k (t₁ - t₀)) in (y₀, k, t₀, t₁): the forward rule of
    odeint's pullback moves both time points itself (the second-order adjoint, not the rule
    derived from the reverse one, which costs a traced backward solve per direction) and gives
    the closed form."""
    def derived(*args):
        raise AssertionError("the forward rule was derived from the reverse one")

    monkeypatch.setattr(integrate_rules, "derived_frule", derived)

    def final(p):
        return odeint(decay, np.stack([p[0]]), np.stack([p[2], p[3]]), args=(p[1],), **ORDER2_TOL)[-1, 0]

    y0, k, t0, t1 = p = np.array([2.0, 0.5, 0.3, 1.2])
    s, e = t1 - t0, np.exp(-k * (t1 - t0))
    expected = np.array([[0.0, -s * e, k * e, -k * e],
                         [-s * e, y0 * s * s * e, y0 * e * (1 - k * s), y0 * e * (k * s - 1)],
                         [k * e, y0 * e * (1 - k * s), y0 * k * k * e, -y0 * k * k * e],
                         [-k * e, y0 * e * (k * s - 1), -y0 * k * k * e, y0 * k * k * e]])
    np.testing.assert_allclose(hessian(final, p, mode="fwd-rev"), expected, rtol=1e-7, atol=1e-9)


def _grad_of(f):
    return lambda k: gradient(f, k)[0]


def _jvp_of(f):
    return lambda k: jvp(f, (k,), (1.0,))[1]


@pytest.mark.parametrize("wrap", [
    pytest.param((_grad_of, _grad_of, _grad_of), id="rev-rev-rev"),
    pytest.param((_jvp_of, _grad_of, _jvp_of), id="fwd-rev-fwd"),
])
def test_third_derivative_of_exponential_decay_closed_form(wrap):
    """d³/dk³ of y(1) = y₀ e^(-k) is -y₀ e^(-k): the rules of the rules are differentiable too."""
    def final(k):
        return odeint(decay, np.array([2.0]), np.array([0.0, 1.0]), args=(k,), **ORDER2_TOL)[-1, 0]

    third = final
    for w in wrap:
        third = w(third)
    assert third(0.5) == pytest.approx(-2.0 * np.exp(-0.5), rel=1e-7)


def van_der_pol(y, t, mu):
    return np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


def _van_der_pol_sum(mu, **tolerances):
    return np.sum(odeint(van_der_pol, np.array([2.0, 0.0]), np.linspace(0.0, 5.0, 6), (mu,), **tolerances))


def test_check_grad_failing_through_odeint_says_why_and_what_to_pass():
    """At odeint's default tolerances central differences of van der Pol's oscillator miss its
    (correct) derivative: check_grad's error says that the solver is the noisy side and which
    eps, rtol and atol (or solver tolerances) to check with, and each suggestion passes."""
    with pytest.raises(AssertionError, match=r"central differences give .*; the function called "
                                             r"tapegrad\.scipy\.integrate\.odeint, an adaptive solver, with "
                                             r"tolerances up to 1\.5e-08: .* they, not the gradient, are the "
                                             r"likely noisy side\. Check with check_grad\(\.\.\., eps=0\.003, "
                                             r"rtol=0\.0007, atol=0\.0007\), or make the solver tighter \(rtol="
                                             r"1e-10, atol=1e-10\) and check with eps=0\.0005, rtol=3e-05, "
                                             r"atol=3e-05$"):
        check_grad(_van_der_pol_sum, 1.0)
    check_grad(_van_der_pol_sum, 1.0, eps=0.003, rtol=0.0007, atol=0.0007)
    check_grad(lambda mu: _van_der_pol_sum(mu, rtol=1e-10, atol=1e-10), 1.0, eps=0.0005, rtol=3e-05, atol=3e-05)
    assert not checking()  # nothing is noted outside a check


def test_check_grad_of_a_second_derivative_through_odeint_says_why():
    """check_grad(order=2) through odeint: the advice is given once, by the outermost check, and passes."""
    def final(y0, a, c):
        return odeint(affine, np.stack([y0]), np.array([0.0, 1.0]), args=([(a, c)],), rtol=1e-10, atol=1e-10)[-1, 0]

    with pytest.raises(AssertionError, match=r"tolerances up to 1e-10: .*Check with check_grad\(\.\.\., "
                                             r"eps=0\.0005, rtol=3e-05, atol=3e-05\)$") as info:
        check_grad(final, 1.5, 0.3, 0.7, order=2)
    assert str(info.value).count("adaptive solver") == 1
    check_grad(final, 1.5, 0.3, 0.7, order=2, eps=0.0005, rtol=3e-05, atol=3e-05)


def test_check_grad_without_a_solver_says_nothing_of_solvers():
    """A failing check of a function that ran no adaptive solver gives the plain message, even
    after checks that did run one."""
    check_grad(lambda k: _decay_at(np.array([2.0, k, 1.0])), 0.5, rtol=1e-5)
    with pytest.raises(AssertionError) as info:
        check_grad(lambda x: np.sum(np.sin(x)), np.ones(3), rtol=-1.0, atol=0.0)  # nothing can pass
    assert "solver" not in str(info.value)

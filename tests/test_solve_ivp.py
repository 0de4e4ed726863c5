"""tapegrad.scipy.integrate.solve_ivp: the adjoint method in reverse mode (on the forward solve's
dense output), forward sensitivities in forward mode and at second order, every method; and
odeint on the same adjoint: per-component tolerances, the stiff Robertson problem, failures."""
import functools
import sys
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.integrate

import tapegrad
from tapegrad import check_grad, gradient, hessian, jvp
from tapegrad.registry import declarations_undone
from tapegrad.rules import _odeprograms as odeprograms, ivp as ivp_rules
from tapegrad.rules._odeprograms import Dense
from tapegrad.rules.ivp import ivp_cotangent
from tapegrad.scipy._ivp import IvpProblem, ivp_solution
from tapegrad.scipy.integrate import SolverError, odeint, solve_ivp
from tapegrad.tangents import NO_TANGENT

EXERCISED = {ivp_solution, ivp_cotangent}

METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"]
TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def lotka_volterra(t, y, a, b, c, d):
    return np.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])


def _decay_at_one(k, y0):
    """y' = -k y from y0: y(1) = y0 e^(-k), captured k."""
    return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), y0, t_eval=np.array([0.5, 1.0]), **TIGHT).y


def _predator_prey(theta):
    sol = solve_ivp(lotka_volterra, (0.0, 1.0), np.array([1.0, 0.5]), t_eval=np.array([0.5, 1.0]),
                    args=tuple(theta[i] for i in range(4)), **TIGHT)
    return sol.y


ORDER2 = [
    (ivp_solution, _decay_at_one, (0.7, np.array([2.0, 1.0]))),
    (ivp_solution, _predator_prey, (np.array([1.0, 0.8, 0.9, 0.6]),)),
]


@pytest.mark.parametrize("method", METHODS)
def test_exponential_decay_closed_form(method):
    """y' = -k y, y(0) = y0: y(t) = y0 e^(-kt); ∂y(1)/∂k = -y0 e^(-k), ∂y(1)/∂y0 = e^(-k), ∂²y(1)/∂k² = y0 e^(-k)."""
    def final(k, y0):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([y0]), method=method, **TIGHT).y[0, -1]

    k, y0 = 0.5, 2.0
    e = np.exp(-k)
    dk, dy0 = gradient(final, k, y0)
    assert dk == pytest.approx(-y0 * e, rel=1e-6) and dy0 == pytest.approx(e, rel=1e-6)
    assert jvp(final, (k, y0), (1.0, 0.0))[1] == pytest.approx(-y0 * e, rel=1e-6)
    assert float(hessian(lambda k: final(k, y0), k)) == pytest.approx(y0 * e, rel=1e-5)


#: Lotka–Volterra's parameters, where the tests below differentiate it
LV_THETA = np.array([1.0, 0.8, 0.9, 0.6])
#: a direction that mixes every parameter: a derivative along it (a jvp, a Hessian-vector
#: product) stands in for the whole Jacobian or Hessian of a second mode, one solve for four
MIXING = np.array([1.0, -0.6, 0.35, 0.8])
#: the tolerances of the references: DOP853 solves these in a few hundred steps
REFERENCE = {"rtol": 1e-12, "atol": 1e-14}


def _lv_loss(theta, method, t_end, times, tol=TIGHT):
    sol = solve_ivp(lotka_volterra, (0.0, t_end), np.array([1.0, 0.5]), method=method, t_eval=times,
                    args=tuple(theta[i] for i in range(4)), **tol)
    return np.sum(sol.y ** 2)


@functools.cache
def _lv_gradient_reference():
    """Central differences (h = 1e-5) of the loss over t = 0, 1, ..., 5 solved by DOP853 at 1e-12:
    the solution's derivative to about 1e-7, whichever method the gradient under test takes."""
    h = 1e-5
    times = np.linspace(0.0, 5.0, 6)
    return np.array([(_lv_loss(LV_THETA + h * e, "DOP853", 5.0, times, REFERENCE) -
                      _lv_loss(LV_THETA - h * e, "DOP853", 5.0, times, REFERENCE)) / (2 * h) for e in np.eye(4)])


@pytest.mark.parametrize("method", METHODS)
def test_lotka_volterra_parameter_gradient(method):
    """The Lotka–Volterra parameters' gradient of a loss over t_eval matches central differences
    (of a DOP853 solve at 1e-12: the same derivative, computed once), in reverse (adjoint) and
    forward (sensitivities, along a direction that mixes every parameter) mode, for every method."""
    def loss(theta):
        return _lv_loss(theta, method, 5.0, np.linspace(0.0, 5.0, 6))

    numeric = _lv_gradient_reference()
    np.testing.assert_allclose(gradient(loss, LV_THETA)[0], numeric, rtol=1e-5)
    # one tangent solve, not jacobian(mode="fwd")'s four (3 s of RK23's steps at 1e-10): a
    # wrong sensitivity of any parameter moves the derivative along MIXING
    np.testing.assert_allclose(jvp(loss, (LV_THETA,), (MIXING,))[1], numeric @ MIXING, rtol=1e-5)


def test_robertson_with_bdf_and_radau():
    """The stiff Robertson problem: the rate constants' gradient matches central differences at
    tight tolerances with BDF and Radau (the adjoint reads the forward solution, never integrates
    the state backward). One reference serves both, BDF's differences: the methods' solutions
    share their derivative to 4e-8 here, and Radau's differences cost three times BDF's."""
    def robertson(t, y, k1, k2, k3):
        return np.stack([-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2],
                         k2 * y[1] ** 2])

    def loss(k, method):
        y = solve_ivp(robertson, (0.0, 100.0), np.array([1.0, 0.0, 0.0]), method=method,
                      t_eval=np.array([1.0, 10.0, 100.0]), args=(k[0], k[1], k[2]), rtol=1e-10,
                      atol=np.array([1e-12, 1e-16, 1e-12])).y
        return np.sum(y[:, -1] * np.array([1.0, 1e4, 1.0]))

    k = np.array([0.04, 3e7, 1e4])
    numeric = np.array([(loss(k * (1 + 1e-4 * e), "BDF") - loss(k * (1 - 1e-4 * e), "BDF")) / (2e-4 * k @ e)
                        for e in np.eye(3)])
    for method in ("Radau", "BDF"):
        np.testing.assert_allclose(gradient(lambda k: loss(k, method), k)[0], numeric, rtol=1e-6)


def _robertson(t, y, k1, k2, k3):
    return np.stack([-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2], k2 * y[1] ** 2])


def _robertson_loss(k):
    y = solve_ivp(_robertson, (0.0, 100.0), np.array([1.0, 0.0, 0.0]), method="BDF",
                  t_eval=np.array([1.0, 10.0, 100.0]), args=(k[0], k[1], k[2]), rtol=1e-10,
                  atol=np.array([1e-12, 1e-16, 1e-12])).y
    return np.sum(y[:, -1] * np.array([1.0, 1e4, 1.0]))


def _relative_differences(loss, k):
    return np.array([(loss(k * (1 + 1e-4 * e)) - loss(k * (1 - 1e-4 * e))) / (2e-4 * k @ e) for e in np.eye(3)])


def test_compiled_grad_of_robertson_with_bdf_runs_the_checkpointed_adjoint():
    """compiled_grad of the stiff Robertson problem (BDF): its program records the pullback as one
    ivp_cotangent op (the adjoint on the forward solve's dense output, not the tangent solves of
    second order) and matches the eager gradient, at the traced point and at another, and
    central differences at the other (at the traced point the eager gradient is held to them by
    test_robertson_with_bdf_and_radau, the same loss)."""
    g = tapegrad.compiled_grad(_robertson_loss, tiers=False)
    for k in (np.array([0.04, 3e7, 1e4]), np.array([0.05, 2e7, 1.2e4])):
        for _ in range(2):  # traced, then the compiled program
            value, (_, dk) = g(k)
        np.testing.assert_allclose(dk, gradient(_robertson_loss, k)[0], rtol=1e-9)
    np.testing.assert_allclose(dk, _relative_differences(_robertson_loss, k), rtol=1e-5)
    assert g.cache_info()["hits"] == 3  # (the second point has the first's signature)
    source = g.source(k)
    assert "ivp_cotangent(" in source and source.count("ivp_solution(") == 1


def test_replayed_gradient_tape_runs_the_adjoint_at_new_inputs():
    """A traced gradient's tape, replayed at new parameters, gives their gradient: the pullback's
    op solves afresh where the forward solve it reads was at other values."""
    theta = np.array([1.0, 0.8, 0.9, 0.6])
    loss = lambda theta: np.sum(_predator_prey(theta) ** 2)  # noqa: E731
    _, tape = tapegrad.trace(lambda th: gradient(loss, th)[0], theta)
    other = np.array([1.1, 0.7, 1.0, 0.5])
    np.testing.assert_allclose(tape.replay(None, other), gradient(loss, other)[0], rtol=1e-9)
    assert any(getattr(op, "fn", None) is ivp_cotangent for op in tape)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("how", ["adjoint", "forward"])
def test_adjoint_and_forward_sensitivities_agree_with_central_differences(method, how, monkeypatch):
    """Both pullbacks, the adjoint and forward sensitivities, forced in turn, give the Lotka–Volterra
    gradient (parameters and y0) of central differences, for every method."""
    monkeypatch.setattr(ivp_rules, "strategy", lambda *args: how)

    def loss(theta, y0):
        sol = solve_ivp(lotka_volterra, (0.0, 3.0), y0, method=method, t_eval=np.linspace(0.5, 3.0, 6),
                        args=tuple(theta[i] for i in range(4)), **TIGHT)
        return np.sum(sol.y ** 2)

    check_grad(loss, np.array([1.0, 0.8, 0.9, 0.6]), np.array([1.0, 0.5]), rtol=1e-5)


def test_strategy_picks_forward_sensitivities_for_small_lsoda_problems():
    """Forward sensitivities for LSODA while n·(n + p) ≤ 4; the adjoint for more parameters and for
    every other method."""
    def problem(method, **options):
        return IvpProblem(None, (0.0, 1.0), None, method, options)

    assert ivp_rules.strategy(problem("LSODA"), 1, 3) == "forward"
    assert ivp_rules.strategy(problem("LSODA"), 2, 1) == "adjoint"
    assert ivp_rules.strategy(problem("LSODA"), 2, 4) == "adjoint"
    assert ivp_rules.strategy(problem("LSODA", rtol=np.array([1e-6, 1e-7])), 1, 1) == "adjoint"
    assert [ivp_rules.strategy(problem(m), 1, 1) for m in METHODS if m != "LSODA"] == ["adjoint"] * 5


def test_backward_method_follows_the_forward_solves_stiffness():
    """The adjoint's backward solve: RK45 after the explicit methods (DOP853 at tight tolerances)
    and after LSODA where the forward solve stayed non-stiff (no LU decomposition); LSODA after
    the stiff methods and after LSODA that switched to BDF (Robertson)."""
    def method_after(method, fun, y0, args, t_end, **tol):
        problem = IvpProblem(None, (0.0, t_end), None, method, tol)
        problem.result = scipy.integrate.solve_ivp(fun, (0.0, t_end), y0, method=method, args=args, **tol)
        return ivp_rules.backward_method(problem)

    lv = (lotka_volterra, [1.0, 0.5], (1.0, 0.8, 0.9, 0.6), 5.0)
    robertson = (_robertson, [1.0, 0.0, 0.0], (0.04, 3e7, 1e4), 100.0)
    assert method_after("LSODA", *lv, rtol=1e-8) == ivp_rules.NONSTIFF_BACKWARD == "RK45"
    assert method_after("LSODA", *robertson, rtol=1e-6, atol=1e-10) == "LSODA"
    assert [method_after(m, *lv) for m in METHODS[:5]] == ["RK45", "RK45", "RK45", "LSODA", "LSODA"]
    assert method_after("DOP853", *lv, rtol=1e-9) == "DOP853"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("t_span", [(0.0, 3.0), (3.0, 0.0)], ids=["ascending", "descending"])
def test_dense_reads_what_scipys_dense_output_reads(method, t_span):
    """The adjoint's reader of the forward solution gives scipy's OdeSolution values, at the
    pieces' ends and between them, in either direction of time."""
    sol = scipy.integrate.solve_ivp(lotka_volterra, t_span, [1.0, 0.5], method=method, args=(1.0, 0.8, 0.9, 0.6),
                                    dense_output=True, rtol=1e-8, atol=1e-10).sol
    dense = Dense(sol)
    for t in np.concatenate([np.linspace(0.0, 3.0, 37), sol.ts]):
        np.testing.assert_allclose(dense(t), sol(t), rtol=1e-12, atol=1e-14)


def test_a_right_hand_side_that_branches_on_time():
    """f branches on t (a guard in the compiled vector-Jacobian program): the evaluations on the
    other branch are answered eagerly, and the gradient matches central differences."""
    def final(k):
        def f(t, y):
            return -k * y if t < 0.5 else -2.0 * k * y
        return solve_ivp(f, (0.0, 1.0), np.array([1.0]), method="RK45", t_eval=np.array([0.5, 1.0]),
                         **TIGHT).y[0, -1]

    assert gradient(final, 0.7)[0] == pytest.approx(-1.5 * np.exp(-1.5 * 0.7), rel=1e-6)


def test_captured_values_args_and_y0_together():
    """A parameter captured, one in args and y0: each gets its share, as central differences say."""
    def final(a, b, y0):
        sol = solve_ivp(lambda t, y, b: np.stack([-a * y[0] + b * y[1], -b * y[1]]), (0.0, 1.5), y0, args=(b,),
                        **TIGHT)
        return np.sum(sol.y[:, -1] ** 2)

    check_grad(final, 0.4, 0.7, np.array([1.0, 0.5]), rtol=1e-5)


def test_per_component_atol():
    """atol given per component reaches the solves of the adjoint and the tangent at their sizes."""
    def final(k):
        return solve_ivp(lotka_volterra, (0.0, 1.0), np.array([1.0, 0.5]), args=(k, 0.8, 0.9, 0.6),
                         method="Radau", rtol=1e-10, atol=np.array([1e-12, 1e-11])).y[0, -1]

    check_grad(final, 1.0, rtol=1e-5)


def test_result_is_scipys_with_y_traced():
    """The OdeResult is scipy's: t, nfev, status, message; y traced; plain values are scipy's call."""
    ours = solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]))
    theirs = scipy.integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]))
    np.testing.assert_array_equal(ours.y, theirs.y)

    def read(k):
        sol = solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([1.0]), t_eval=np.array([0.25, 1.0]), **TIGHT)
        assert sol.success and sol.status == 0 and sol.nfev > 0 and sol.sol is None
        np.testing.assert_array_equal(sol.t, [0.25, 1.0])
        return sol.y[0, 1]

    assert gradient(read, 0.5)[0] == pytest.approx(-np.exp(-0.5), rel=1e-7)


@pytest.mark.parametrize("kwargs, match", [
    (dict(dense_output=True), "dense_output=True has no derivative"),
    (dict(events=lambda t, y: y[0] - 0.5), "events have no derivative"),
])
def test_refused_options_name_themselves(kwargs, match):
    """dense_output and events, when the solution is differentiated: a SolverError with the line."""
    with pytest.raises(SolverError, match=rf"^solve_ivp at test_solve_ivp\.py:\d+: {match}"):
        gradient(lambda k: solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([1.0]), **kwargs).y[0, -1], 0.5)


def test_traced_times_are_refused():
    """A traced end time: the output times have no derivative here, said with the line."""
    with pytest.raises(SolverError, match=r"t_span or t_eval holds a traced value"):
        gradient(lambda T: solve_ivp(lambda t, y: -y, (0.0, T), np.array([1.0])).y[0, -1], 1.0)


def test_a_failed_solve_raises():
    """A blow-up (y' = y², y(0) = 1 explodes at t = 1): scipy's failure is a SolverError naming the fix."""
    with pytest.raises(SolverError, match=r"solve_ivp at test_solve_ivp\.py:\d+: scipy's solve_ivp \(RK45\) failed"):
        gradient(lambda a: solve_ivp(lambda t, y: a * y ** 2, (0.0, 2.0), np.array([1.0])).y[0, -1], 1.0)


@pytest.mark.parametrize("method", ["RK45", "Radau", "LSODA"])
def test_forward_over_reverse_hessian_runs_the_second_order_adjoint(method, monkeypatch):
    """hessian(mode="fwd-rev") of a Lotka–Volterra loss goes through ivp_cotangent's forward rule
    (one tangent solve forward, one second-order adjoint backward), and matches reverse over
    reverse (along a direction that mixes every row) and central differences of the gradient."""
    calls = []
    second = ivp_rules.second_adjoint
    monkeypatch.setattr(ivp_rules, "second_adjoint", lambda *a: calls.append(1) or second(*a))

    def loss(theta):
        return _lv_loss(theta, method, 2.0, np.array([1.0, 2.0]))

    H = hessian(loss, LV_THETA, mode="fwd-rev")
    assert len(calls) == 4  # one per direction
    # reverse over reverse along one direction, not the whole Hessian (four sweeps, each six
    # tangent solves: 5 s of Radau): a wrong entry of H moves H·v too
    np.testing.assert_allclose(H @ MIXING, tapegrad.hvp(loss, LV_THETA, MIXING, mode="rev-rev"), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(H, _lv_hessian_reference(), rtol=1e-5, atol=1e-5)


@functools.cache
def _lv_hessian_reference():
    """Central differences (h = 1e-5) of the gradient of the loss over t = 1, 2, DOP853 at 1e-12
    (DOP853's gradient is checked against central differences of the loss itself above)."""
    def grad_at(theta):
        return gradient(lambda th: _lv_loss(th, "DOP853", 2.0, np.array([1.0, 2.0]), REFERENCE), theta)[0]

    return np.stack([(grad_at(LV_THETA + 1e-5 * e) - grad_at(LV_THETA - 1e-5 * e)) / 2e-5 for e in np.eye(4)])


def test_forward_rule_of_the_pullback_takes_a_moving_cotangent_and_y0():
    """jvp through the pullback, where the cotangent, y0 and a captured parameter all move: the
    tangent of (ȳ₀, θ̄) matches central differences of the pullback."""
    def cotangent(y0, k, w):
        def final(y0, k):
            sol = solve_ivp(lambda t, y: np.stack([-k * y[0] * y[1], k * y[0] - y[1]]), (0.0, 1.5), y0,
                            t_eval=np.array([0.5, 1.5]), **TIGHT)
            return sol.y
        y, back = tapegrad.pullback(final, y0, k)
        dy0, dk = back(w * np.ones((2, 2)) + y)[1:]
        return np.concatenate([dy0, [dk]])

    args = (np.array([1.0, 0.5]), 0.7, 0.3)
    directions = (np.array([0.2, -0.4]), 0.5, 1.5)
    _, tangent = jvp(cotangent, args, directions)
    h = 1e-5
    plus = cotangent(*(a + h * d for a, d in zip(args, directions)))
    minus = cotangent(*(a - h * d for a, d in zip(args, directions)))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-7)


# --- odeint on the same adjoint ---


def robertson_odeint(y, t, k1, k2, k3):
    return np.stack([-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2], k2 * y[1] ** 2])


def test_odeint_robertson_gradient():
    """odeint on Robertson's stiff problem: reverse and forward mode match central differences at
    tight tolerances (the old adjoint integrated the state backward and overflowed to NaN)."""
    def loss(k):
        ys = odeint(robertson_odeint, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 10.0, 100.0]),
                    args=(k[0], k[1], k[2]), rtol=1e-11, atol=np.array([1e-13, 1e-17, 1e-13]), mxstep=50000)
        return np.sum(ys[-1] * np.array([1.0, 1e4, 1.0]))

    k = np.array([0.04, 3e7, 1e4])
    numeric = np.array([(loss(k * (1 + 1e-4 * e)) - loss(k * (1 - 1e-4 * e))) / (2e-4 * k @ e) for e in np.eye(3)])
    np.testing.assert_allclose(gradient(loss, k)[0], numeric, rtol=1e-5)
    np.testing.assert_allclose(tapegrad.jacobian(loss, k, mode="fwd"), numeric, rtol=1e-5)


def test_compiled_grad_of_odeint_robertson_runs_the_checkpointed_adjoint():
    """compiled_grad of odeint on Robertson's stiff problem: the program records the pullback as
    one odeint_cotangent op (the adjoint on a checkpointed forward solution; the old traced adjoint
    integrated the state backward and went wrong) and matches central differences and eager grad."""
    def loss(k):
        ys = odeint(robertson_odeint, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 10.0, 100.0]),
                    args=(k[0], k[1], k[2]), rtol=1e-11, atol=np.array([1e-13, 1e-17, 1e-13]), mxstep=50000)
        return np.sum(ys[-1] * np.array([1.0, 1e4, 1.0]))

    k = np.array([0.04, 3e7, 1e4])
    g = tapegrad.compiled_grad(loss, tiers=False)
    for _ in range(2):
        _, (_, dk) = g(k)
    assert g.cache_info()["hits"] == 1 and "odeint_cotangent(" in g.source(k)
    np.testing.assert_allclose(dk, _relative_differences(loss, k), rtol=1e-5)
    np.testing.assert_allclose(dk, gradient(loss, k)[0], rtol=1e-9)


def test_odeint_per_component_atol_in_both_modes():
    """An atol array of the state's length: both modes work (odepack refused the adjoint's longer
    state before) and match central differences."""
    def final(theta):
        return odeint(lotka_volterra, np.array([1.0, 0.5]), np.array([0.0, 1.0]), args=tuple(theta), tfirst=True,
                      rtol=1e-10, atol=np.array([1e-12, 1e-11]))[-1, 0]

    check_grad(final, np.array([1.0, 0.8, 0.9, 0.6]), rtol=1e-5)
    check_grad(lambda a: final(np.stack([a, 0.8, 0.9, 0.6])), 1.0, order=2, rtol=1e-4)


def test_odeint_forward_over_reverse_runs_the_second_order_adjoint(monkeypatch):
    """hessian(mode="fwd-rev") through odeint goes through odeint_cotangent's forward rule (the
    second-order adjoint, once per direction) and matches reverse over reverse (along a direction
    that mixes every row)."""
    calls = []
    second = ivp_rules.second_adjoint
    monkeypatch.setattr(ivp_rules, "second_adjoint", lambda *a: calls.append(1) or second(*a))

    def loss(theta):
        return np.sum(odeint(lotka_volterra, np.array([1.0, 0.5]), np.array([0.0, 1.0, 2.0]),
                             args=tuple(theta[i] for i in range(4)), tfirst=True, rtol=1e-10, atol=1e-12) ** 2)

    theta = np.array([1.0, 0.8, 0.9, 0.6])
    H = hessian(loss, theta, mode="fwd-rev")
    assert len(calls) == 4
    np.testing.assert_allclose(H @ MIXING, tapegrad.hvp(loss, theta, MIXING, mode="rev-rev"), rtol=1e-6, atol=1e-6)


def test_odeint_forward_rule_of_the_pullback_takes_a_moving_cotangent_y0_and_a_count():
    """jvp through odeint's pullback, the cotangent, y0 and a parameter moving beside an int in
    args: the tangent of (ȳ₀, θ̄, t̄) matches central differences of the pullback."""
    def cotangent(y0, k, w, times):
        def final(y0, k, times):
            return odeint(lambda y, t, k, m: np.stack([-k * y[0] * y[1] * m, k * y[0] - y[1]]), y0, times,
                          args=(k, 2), rtol=1e-11, atol=1e-12)
        y, back = tapegrad.pullback(final, y0, k, times)
        _, dy0, dk, dt = back(w * np.ones((3, 2)) + y)
        return np.concatenate([dy0, [dk], dt])

    args = (np.array([1.0, 0.5]), 0.7, 0.3, np.array([0.0, 0.5, 1.5]))
    directions = (np.array([0.2, -0.4]), 0.5, 1.5, np.zeros(3))
    _, tangent = jvp(cotangent, args, directions)
    h = 1e-5
    plus = cotangent(*(a + h * d for a, d in zip(args, directions)))
    minus = cotangent(*(a - h * d for a, d in zip(args, directions)))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-7)


def test_odeint_failure_raises():
    """odepack's "Excess work done" (mxstep too small) is a SolverError, not a warning and wrong values."""
    with pytest.raises(SolverError, match=r"^odeint at test_solve_ivp\.py:\d+ failed: Excess work done"):
        odeint(robertson_odeint, np.array([1.0, 0.0, 0.0]), np.array([0.0, 100.0]), args=(0.04, 3e7, 1e4), mxstep=5)


# --- the adjoint's compiled programs, kept across gradients by their forward's tape ---

#: read by `_scaled_decay` as a global: a program that baked it in must not outlive a change
SCALE = 1.0


def _scaled_decay(k):
    """y' = -SCALE k y from 2: y(1) = 2 e^(-SCALE k), ∂y(1)/∂k = -2 SCALE e^(-SCALE k)."""
    return solve_ivp(lambda t, y: -SCALE * k * y, (0.0, 1.0), np.array([2.0]), **TIGHT).y[0, -1]


def recorded(monkeypatch, owner, name, pick):
    """A list of ``pick(*args)`` of each call of ``owner.name`` from here on (which still runs)."""
    seen, real = [], getattr(owner, name)

    def spy(*args):
        seen.append(pick(*args))
        return real(*args)

    monkeypatch.setattr(owner, name, spy)
    return seen


@pytest.fixture
def compiles(monkeypatch):
    """The programs compiled from here on (a list that grows by one per compile), no program kept before."""
    monkeypatch.setattr(odeprograms, "PROGRAMS", OrderedDict())
    return recorded(monkeypatch, odeprograms, "compile_source", lambda src, namespace: src)


def test_the_next_gradient_of_a_problem_reuses_its_adjoint_program(compiles):
    """An optimizer's next step: the adjoint program is found by its forward's tape (not traced
    and compiled again), and computes the derivative at the new point."""
    for k in (0.5, 0.9, 1.3):
        assert gradient(_scaled_decay, k)[0] == pytest.approx(-2.0 * np.exp(-k), rel=1e-6)
    assert len(compiles) == 1


def test_a_changed_global_gets_a_program_of_its_own(compiles, monkeypatch):
    """f reads a global, which changes between gradients: its forward records another constant,
    so the gradient is the new f's, from a program of its own."""
    assert gradient(_scaled_decay, 0.5)[0] == pytest.approx(-2.0 * np.exp(-0.5), rel=1e-6)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)
    assert gradient(_scaled_decay, 0.5)[0] == pytest.approx(-6.0 * np.exp(-1.5), rel=1e-6)
    assert len(compiles) == 2


def test_a_replaced_rule_gets_a_program_of_its_own(compiles):
    """A rule registered again for a function f calls: the next gradient follows the new rule."""
    @tapegrad.primitive
    def rate(k, y):
        return -k * y

    def final(k):
        return solve_ivp(lambda t, y: rate(k, y), (0.0, 1.0), np.array([2.0]), **TIGHT).y[0, -1]

    with declarations_undone():
        @tapegrad.rrule(rate)
        def rate_rrule(k, y):
            return rate(k, y), lambda dy: (NO_TANGENT, -np.sum(y * dy), -k * dy)

        assert gradient(final, 0.5)[0] == pytest.approx(-2.0 * np.exp(-0.5), rel=1e-6)

        @tapegrad.rrule(rate)
        def rate_rrule_halved(k, y):  # a rule with half the derivative in k: what the next gradient must see
            return rate(k, y), lambda dy: (NO_TANGENT, -0.5 * np.sum(y * dy), -k * dy)

        assert gradient(final, 0.5)[0] == pytest.approx(-np.exp(-0.5), rel=1e-6)
    assert len(compiles) == 2


def test_a_large_constant_is_compared_by_compiling_afresh(compiles):
    """A constant array larger than a key holds (`KEY_BYTES`): each gradient compiles its own
    program, and each is right."""
    A = np.diag(np.linspace(1.0, 2.0, 100))
    assert A.nbytes > odeprograms.KEY_BYTES

    def final(k):
        return solve_ivp(lambda t, y: -k * (A @ y), (0.0, 1.0), np.ones(100), **TIGHT).y[:, -1].sum()

    for k in (0.5, 0.7):
        assert gradient(final, k)[0] == pytest.approx(-np.sum(np.diag(A) * np.exp(-k * np.diag(A))), rel=1e-6)
    assert len(compiles) == 2


def test_the_adjoint_program_writes_its_result_as_one_array_of_sums(compiles):
    """(∂f/∂y)ᵀλ and (∂f/∂θ)ᵀλ, flattened and joined, are one array of the sums of each
    position's terms (not scatters into two arrays of zeros, their ravels and a concatenate),
    and λ is read as it comes (not reshaped to its own shape)."""
    def final(k):
        return solve_ivp(lambda t, y: np.stack([-k * y[0] * y[1], k * y[0]]), (0.0, 1.0), np.array([1.0, 2.0]),
                         **TIGHT).y[0, -1]

    gradient(final, 0.5)
    assert compiles[0] == """\
def replay(fn, y, lam, t, theta):
    v6 = theta[0]
    v7 = -v6
    v8 = y[0]
    v9 = v7 * v8
    v10 = y[1]
    v11 = lam[(0,)]
    v12 = lam[(1,)]
    v13 = v12 * v8
    v14 = v12 * v6
    v15 = v11 * v10
    v16 = v11 * v9
    v17 = v15 * v8
    v18 = v15 * v7
    v19 = v14 + v18
    v20 = -v17
    v21 = v13 + v20
    v22 = np.array([v19, v16, v21])
    return v22"""
    check_grad(final, 0.5, order=2)


def test_lsoda_backward_solve_stays_inside_the_forward_solution(monkeypatch):
    """The stiff adjoint's LSODA (stepped by odeint) reads the forward solution only inside its
    time span: it never steps past an output time or t₀ to interpolate back, which would
    extrapolate the forward solution beyond its first piece. The gradient matches LSODA's
    forward solve differenced."""
    read = recorded(monkeypatch, Dense, "__call__", lambda dense, t: t)

    def loss(k):
        y = solve_ivp(_robertson, (0.5, 100.0), np.array([1.0, 0.0, 0.0]), method="LSODA",
                      t_eval=np.array([1.0, 10.0, 100.0]), args=(k[0], k[1], k[2]), rtol=1e-10,
                      atol=np.array([1e-12, 1e-16, 1e-12])).y
        return np.sum(y[:, -1] * np.array([1.0, 1e4, 1.0]))

    k = np.array([0.04, 3e7, 1e4])
    g = gradient(loss, k)[0]
    assert ivp_rules.backward_method(IvpProblem(None, (0.5, 100.0), None, "LSODA", {}), SimpleNamespace(njev=3)) == \
        "LSODA"
    assert read and min(read) >= 0.5 and max(read) <= 100.0
    numeric = np.array([(loss(k * (1 + 1e-4 * e)) - loss(k * (1 - 1e-4 * e))) / (2e-4 * k @ e) for e in np.eye(3)])
    np.testing.assert_allclose(g, numeric, rtol=1e-5)


def test_a_failed_lsoda_backward_solve_raises(monkeypatch):
    """odeint's failure inside the stiff adjoint (here made to report "Excess work done") is a
    SolverError naming the backward solve and what to do, never a gradient of a half-done solve."""
    real = scipy.integrate.odeint

    def failing(*args, **kwargs):
        ys, info = real(*args, **kwargs)
        return ys, dict(info, message="Excess work done on this call (perhaps wrong Dfun type).")

    def loss(k):
        return solve_ivp(_robertson, (0.0, 10.0), np.array([1.0, 0.0, 0.0]), method="BDF", t_eval=np.array([10.0]),
                         args=(k[0], k[1], k[2]), rtol=1e-6, atol=1e-10).y[0, -1]

    monkeypatch.setattr(scipy.integrate, "odeint", failing)
    with pytest.raises(SolverError, match=r"solve_ivp at test_solve_ivp\.py:\d+: the adjoint's backward solve failed "
                                          r"\(Excess work done.*\); tighten rtol/atol"):
        gradient(loss, np.array([0.04, 3e7, 1e4]))

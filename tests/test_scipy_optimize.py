"""tapegrad.scipy.optimize: scipy's solvers with their solutions differentiated by the implicit
function theorem, through `args` and through values the functions capture, in both modes and at
second order; scipy's result objects; clear errors where no derivative exists."""
import re

import numpy as np
import pytest
import scipy.optimize

import tapegrad
from tapegrad import check_grad, gradient, hessian, jvp
from tapegrad.scipy import optimize as opt
from tapegrad.scipy._implicit import implicit_solution
from tapegrad.scipy.optimize import SolverError

EXERCISED = {implicit_solution}


def cube(t, a):
    return t ** 3 - a


def _cube_root_closure(a):
    return opt.brentq(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14)


def _vector_newton(a):
    return opt.newton(lambda t: t ** 3 + t - a, np.ones(3), tol=1e-14)


def _through_a_root(a, b):
    """A root used inside a larger program: x(a, b) with x³ + b x = a, then x·b."""
    x = opt.root_scalar(lambda t, b: t ** 3 + b * t - a, args=(b,), bracket=(-5.0, 5.0), xtol=1e-14).root
    return x * b + np.sin(x)


#: (the rule's function, a function through it, its arguments): the conformance layer runs each
#: through every entry point, the second order included
ORDER2 = [
    (implicit_solution, _cube_root_closure, (2.0,)),
    (implicit_solution, _vector_newton, (np.array([1.0, 2.0, 3.0]),)),
    (implicit_solution, _through_a_root, (1.5, 0.7)),
]


# --- scalar roots ---

BRACKETING = [opt.brentq, opt.brenth, opt.bisect, opt.ridder, opt.toms748]


@pytest.mark.parametrize("solver", BRACKETING, ids=lambda f: f.__name__)
def test_bracketing_root_of_a_closure_closed_form(solver):
    """The root of t³ - a is a^(1/3), of derivative a^(-2/3)/3 and second derivative
    -2/9 a^(-5/3), through a captured a, in reverse, forward and second order."""
    def root(a):
        return solver(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14)

    a = 2.0
    assert root(a) == pytest.approx(a ** (1 / 3), rel=1e-12)
    assert gradient(root, a)[0] == pytest.approx(a ** (-2 / 3) / 3, rel=1e-9)
    assert jvp(root, (a,), (1.0,))[1] == pytest.approx(a ** (-2 / 3) / 3, rel=1e-9)
    assert hessian(root, a) == pytest.approx(-2 / 9 * a ** (-5 / 3), rel=1e-8)


def test_the_issues_example():
    """tapegrad.gradient(lambda a: brentq(lambda t: t**3 - a, 0, 5), 2.0) is a^(-2/3)/3."""
    (g,) = gradient(lambda a: opt.brentq(lambda t: t ** 3 - a, 0, 5), 2.0)
    assert type(g) is float and g == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-10)


@pytest.mark.parametrize("solver", BRACKETING, ids=lambda f: f.__name__)
def test_bracketing_root_through_args(solver):
    """a given in args rather than captured: the same derivative."""
    assert gradient(lambda a: solver(cube, 0.0, 5.0, args=(a,), xtol=1e-14), 2.0)[0] == \
        pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-9)


ROOT_SCALAR = [
    dict(method="brentq", bracket=(0.0, 5.0)), dict(method="brenth", bracket=(0.0, 5.0)),
    dict(method="bisect", bracket=(0.0, 5.0)), dict(method="ridder", bracket=(0.0, 5.0)),
    dict(method="toms748", bracket=(0.0, 5.0)), dict(bracket=[0.0, 5.0]),
    dict(method="newton", x0=1.0, fprime=lambda t, a, b: 3 * b * t ** 2),
    dict(method="secant", x0=1.0, x1=2.0),
    dict(method="halley", x0=1.0, fprime=lambda t, a, b: 3 * b * t ** 2, fprime2=lambda t, a, b: 6 * b * t),
    dict(x0=1.0),
]


@pytest.mark.parametrize("kwargs", ROOT_SCALAR, ids=lambda k: k.get("method", "default-" + "-".join(k)))
def test_root_scalar_every_method(kwargs):
    """root_scalar's RootResults, its root traced, for every method: b t³ - a = 0 has the root
    (a/b)^(1/3); the gradient matches the closed form and central differences in both modes."""
    def root(a, b):
        return opt.root_scalar(lambda t, a, b: b * t ** 3 - a, args=(a, b), xtol=1e-14, **kwargs).root

    a, b = 2.0, 1.5
    da, db = gradient(root, a, b)
    r = (a / b) ** (1 / 3)
    assert da == pytest.approx(r / (3 * a), rel=1e-8) and db == pytest.approx(-r / (3 * b), rel=1e-8)
    check_grad(root, a, b)


def test_root_scalar_with_fprime_true():
    """fprime=True: f returns its value and derivative, as scipy takes them; the value is what vanishes."""
    def root(a):
        return opt.root_scalar(lambda t: (t ** 3 - a, 3 * t ** 2), x0=1.0, fprime=True, method="newton").root

    assert gradient(root, 2.0)[0] == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-9)


def test_root_scalar_returns_scipys_object():
    """The result is scipy's RootResults with scipy's counts, its root the traced root."""
    ours = opt.root_scalar(cube, args=(2.0,), bracket=(0.0, 5.0))
    theirs = scipy.optimize.root_scalar(cube, args=(2.0,), bracket=(0.0, 5.0))
    assert type(ours) is type(theirs) and ours.root == theirs.root and ours.iterations == theirs.iterations

    def read(a):
        r = opt.root_scalar(cube, args=(a,), bracket=(0.0, 5.0))
        assert type(r) is type(theirs) and r.converged and r.function_calls == theirs.function_calls
        return r.root

    assert gradient(read, 2.0)[0] == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-9)


def test_full_output_gives_scipys_tuple():
    """full_output=True: (root, RootResults), the root traced in both places."""
    x, info = opt.brentq(cube, 0.0, 5.0, args=(2.0,), full_output=True)
    assert x == scipy.optimize.brentq(cube, 0.0, 5.0, args=(2.0,)) and info.converged

    def both(a):
        x, info = opt.brentq(cube, 0.0, 5.0, args=(a,), full_output=True)
        return x + info.root

    assert gradient(both, 2.0)[0] == pytest.approx(2 * 2.0 ** (-2 / 3) / 3, rel=1e-9)


def test_plain_values_are_scipys_own_result():
    """Nothing traced: scipy's call, unchanged, bit for bit."""
    assert opt.brentq(cube, 0, 5, args=(2.0,)) == scipy.optimize.brentq(cube, 0, 5, args=(2.0,))
    assert opt.newton(cube, 1.0, args=(2.0,)) == scipy.optimize.newton(cube, 1.0, args=(2.0,))


def test_newton_secant_and_halley():
    """newton with fprime (Newton), without (secant), with fprime2 (Halley): one derivative."""
    expected = 2.0 ** (-2 / 3) / 3
    for kwargs in ({}, {"fprime": lambda t, a: 3 * t ** 2},
                   {"fprime": lambda t, a: 3 * t ** 2, "fprime2": lambda t, a: 6 * t}):
        assert gradient(lambda a: opt.newton(cube, 1.0, args=(a,), tol=1e-14, **kwargs), 2.0)[0] == \
            pytest.approx(expected, rel=1e-9)


def test_vectorized_newton_is_elementwise():
    """An array x0 solves elementwise: the Jacobian of the roots is diagonal, a^(-2/3)/3 for t³ - a."""
    a = np.array([1.0, 2.0, 3.0])
    J = tapegrad.jacobian(lambda a: opt.newton(lambda t: t ** 3 - a, np.ones(3), tol=1e-14), a)
    np.testing.assert_allclose(J, np.diag(a ** (-2 / 3) / 3), rtol=1e-9)
    J = tapegrad.jacobian(lambda a: opt.newton(lambda t: t ** 3 - a, np.ones(3), tol=1e-14), a, mode="fwd")
    np.testing.assert_allclose(J, np.diag(a ** (-2 / 3) / 3), rtol=1e-9)


def test_captured_array_parameter_and_an_object():
    """Values captured through an array, a bound method's object and a partial all get their share."""
    class Cubic:
        def __init__(self, c):
            self.c = c

        def __call__(self, t):
            return self.c[0] * t ** 3 + self.c[1] * t - self.c[2]

    def root(c):
        return opt.brentq(Cubic(c), -5.0, 5.0, xtol=1e-14)

    c = np.array([1.0, 0.5, 2.0])
    (dc,) = gradient(root, c)
    x = root(c)
    fx = 3 * c[0] * x ** 2 + c[1]
    np.testing.assert_allclose(dc, -np.array([x ** 3, x, -1.0]) / fx, rtol=1e-9)
    check_grad(root, c)


def test_check_grad_failing_through_a_solver_says_where_it_stopped():
    """least_squares at its default tolerances stops where its residual is ~1e-8: a check at the
    default step fails on central differences' noise (about 1e-3 of the slope, against rtol
    1e-6), and says so, with the residual it stopped at and a step and tolerances that pass."""
    t = np.linspace(0.0, 1.0, 5)

    def fit(y):
        return opt.least_squares(lambda p, yy: p[0] * np.exp(-p[1] * t) - yy, np.ones(2), args=(y,)).x[0]

    y = 2.0 * np.exp(-1.3 * t) + 0.05 * np.sin(np.arange(5.0))
    with pytest.raises(AssertionError) as info:
        check_grad(fit, y)
    message = str(info.value)
    found = re.search(r"the function called least_squares \(trf\), which stopped where its residual was "
                      r"[\d.e-]+: .* Check with check_grad\(\.\.\., eps=([\d.e-]+), rtol=([\d.e-]+), "
                      r"atol=([\d.e-]+)\)$", message)
    assert found, message
    eps, rtol, atol = map(float, found.groups())
    check_grad(fit, y, eps=eps, rtol=rtol, atol=atol)


def test_third_order():
    """d³/da³ of a^(1/3) is 10/27 a^(-8/3): the rule of the rule's derivative is differentiable too."""
    def root(a):
        return opt.brentq(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14)

    def second(a):
        return gradient(lambda a: gradient(root, a)[0], a)[0]

    assert gradient(second, 2.0)[0] == pytest.approx(10 / 27 * 2.0 ** (-8 / 3), rel=1e-7)


def test_a_root_where_the_derivative_vanishes_raises():
    """t³ - a at a = 0: ∂f/∂x = 0 at the root, which has no derivative there: SolverError with the line."""
    with pytest.raises(SolverError, match=r"^brentq at test_scipy_optimize\.py:\d+: ∂f/∂x is singular at the "
                                          r"solution x\* = 0\.0"):
        gradient(lambda a: opt.brentq(lambda t: t ** 3 - a, -1.0, 1.0), 0.0)


@pytest.mark.parametrize("disp", [True, False])
def test_a_root_that_was_not_found_raises(disp):
    """maxiter too small: scipy's failure (an error or a flag) is a SolverError naming the line and the fix."""
    with pytest.raises(SolverError, match=r"^brentq at test_scipy_optimize\.py:\d+: scipy did not .*raise maxiter"):
        gradient(lambda a: opt.brentq(lambda t: t ** 3 - a, 0.0, 5.0, maxiter=3, disp=disp), 2.0)


def test_vectorized_newton_that_did_not_converge_raises():
    """An entry that did not converge makes the whole solve fail: no derivative of an unfound root."""
    with pytest.raises(SolverError, match="did not converge"):
        gradient(lambda a: np.sum(opt.newton(lambda t: t ** 2 + a, np.ones(2), maxiter=5, disp=False)),
                 np.array([1.0, -1.0]))


@pytest.mark.parametrize("call", [
    lambda a: scipy.optimize.brentq(lambda t: t ** 3 - a, 0, 5),
    lambda a: scipy.optimize.toms748(lambda t: t ** 3 - a, 0, 5),
], ids=["brentq", "toms748"])
def test_scipys_own_solver_names_tapegrads(call):
    """scipy's own solver reached by a traced or dual value says to use tapegrad.scipy.optimize's."""
    name = "brentq" if "brentq" in call.__code__.co_names else "toms748"
    for run in (lambda: gradient(call, 2.0), lambda: jvp(call, (2.0,), (1.0,))):
        with pytest.raises(tapegrad.ConcreteValueError,
                           match=rf"scipy\.optimize\.{name} cannot see traced values: use "
                                 rf"tapegrad\.scipy\.optimize\.{name} "):
            run()


# --- vector roots and fixed points ---

A2 = np.array([[2.0, 1.0], [0.5, 3.0]])


def _cubic_system(A, b):
    """A x + x³/10 = b, solved by fsolve."""
    return opt.fsolve(lambda x: A @ x + 0.1 * x ** 3 - b, np.zeros(2), xtol=1e-12)


def _linear_root(b):
    return opt.root(lambda x, A: A @ x - b, np.zeros(2), args=(A2,), tol=1e-13).x


def _babylon(a):
    return opt.fixed_point(lambda x, a: 0.5 * (x + a / x), 1.0, args=(a,), xtol=1e-14)


ORDER2 += [
    (implicit_solution, _cubic_system, (A2, np.array([1.0, 2.0]))),
    (implicit_solution, _linear_root, (np.array([1.0, -0.5]),)),
    (implicit_solution, _babylon, (2.0,)),
]


def test_root_stopped_at_rounding_level_is_a_solution():
    """scipy's hybr ends a linear system at its exact root with "not making good progress" (no
    step can lower a residual of 1e-16) for a fifth of the right-hand sides: a residual at
    rounding level is a solution, differentiated like the others, in both modes."""
    for seed in range(40):
        b = np.random.default_rng(seed).standard_normal(2)
        np.testing.assert_allclose(tapegrad.jacobian(lambda b: opt.root(lambda x: A2 @ x - b, np.zeros(2)).x, b),
                                   np.linalg.inv(A2), rtol=1e-8, err_msg=f"seed {seed}")


@pytest.mark.parametrize("method", ["hybr", "lm", "broyden1", "krylov", "df-sane"])
def test_root_of_a_linear_system_closed_form(method):
    """A x = b has x = A⁻¹ b: the Jacobian of the root in b is A⁻¹, in both modes, every method."""
    def solution(b):
        return opt.root(lambda x: A2 @ x - b, np.zeros(2), method=method, tol=1e-13).x

    b = np.array([1.0, -0.5])
    np.testing.assert_allclose(solution(b), np.linalg.solve(A2, b), rtol=1e-8)
    np.testing.assert_allclose(tapegrad.jacobian(solution, b), np.linalg.inv(A2), rtol=1e-8)
    np.testing.assert_allclose(tapegrad.jacobian(solution, b, mode="fwd"), np.linalg.inv(A2), rtol=1e-8)


def test_root_returns_scipys_result_with_x_traced():
    """root's OptimizeResult: scipy's fields, x traced; jac=True takes fun's (value, Jacobian)."""
    def read(b):
        res = opt.root(lambda x: (A2 @ x - b, A2), np.zeros(2), jac=True, tol=1e-13)
        assert res.success and res.nfev >= 1 and isinstance(res.message, str)
        return np.sum(res.x)

    np.testing.assert_allclose(gradient(read, np.array([1.0, -0.5]))[0], np.linalg.inv(A2).sum(axis=0), rtol=1e-8)


def test_fsolve_of_a_nonlinear_system_in_both_modes_and_second_order():
    """A x + x³/10 = b: the solution's derivatives in A and b match central differences, to second order."""
    check_grad(lambda A, b: np.sum(_cubic_system(A, b) ** 2), A2, np.array([1.0, 2.0]), order=2)


def test_fsolve_full_output():
    """full_output gives scipy's (x, infodict, ier, mesg), x traced."""
    def read(b):
        x, info, ier, mesg = opt.fsolve(lambda x: A2 @ x - b, np.zeros(2), full_output=True)
        assert ier == 1 and "nfev" in info
        return np.sum(x)

    np.testing.assert_allclose(gradient(read, np.array([1.0, -0.5]))[0], np.linalg.inv(A2).sum(axis=0), rtol=1e-7)


def test_fsolve_that_did_not_converge_raises():
    """x² + 1 = 0 has no real root: fsolve's failure (ier ≠ 1) is a SolverError when differentiated."""
    with pytest.raises(SolverError, match=r"^fsolve at test_scipy_optimize\.py:\d+: scipy did not converge"):
        gradient(lambda a: opt.fsolve(lambda x: x ** 2 + a, np.ones(1))[0], 1.0)


def test_fixed_point_closed_form():
    """Babylon's iteration x = (x + a/x)/2 has the fixed point √a: derivative 1/(2√a), second -1/(4 a^(3/2))."""
    a = 2.0
    assert float(gradient(_babylon, a)[0]) == pytest.approx(0.5 / np.sqrt(a), rel=1e-10)
    assert float(hessian(_babylon, a)) == pytest.approx(-0.25 * a ** -1.5, rel=1e-8)
    assert float(jvp(_babylon, (a,), (1.0,))[1]) == pytest.approx(0.5 / np.sqrt(a), rel=1e-10)


def test_fixed_point_where_the_map_has_slope_one_raises():
    """x = x² + a at a = 1/4 touches its fixed point x = 1/2 with slope 1: I - ∂g/∂x is singular."""
    with pytest.raises(SolverError, match=r"I - ∂g/∂x is singular"):
        gradient(lambda a: opt.fixed_point(lambda x: x ** 2 + a, 0.5, method="iteration"), 0.25)


# --- minima ---


def _quadratic_minimizer(b):
    """The minimizer of ½xᵀAx - bᵀx + Σx⁴/100, by trust-exact with the exact Hessian: it converges to
    rounding, as the conformance layer's central differences need (BFGS at gtol 1e-11 stops some
    1e-8 short, which puts central differences 1e-3 off along some directions; every method's
    derivative is checked against the closed form below)."""
    S = np.array([[3.0, 1.0], [1.0, 2.0]])
    return opt.minimize(lambda x: 0.5 * x @ S @ x - b @ x + 0.01 * np.sum(x ** 4), np.zeros(2),
                        method="trust-exact", jac=lambda x: S @ x - b + 0.04 * x ** 3,
                        hess=lambda x: S + np.diag(0.12 * x ** 2), options={"gtol": 1e-11}).x


def _minimum_value(c):
    """The minimum of (x - c)² + x⁴ over x: its derivative is ∂f/∂c = -2(x* - c)."""
    return opt.minimize_scalar(lambda x: (x - c) ** 2 + x ** 4, options={"xtol": 1e-12}).fun


def _fit_decay(y):
    t = np.linspace(0.0, 1.0, 8)
    return opt.least_squares(lambda p: p[0] * np.exp(-p[1] * t) - y, np.ones(2), xtol=1e-15, ftol=1e-15,
                             gtol=1e-15).x


def _constrained_minimizer(b):
    """min x₀² + 2x₁² subject to x₀ + x₁ ≥ b (active for b > 0): x* = (2b/3, b/3). SLSQP with the
    exact gradients solves its quadratic subproblem exactly: to rounding, as central differences need."""
    return opt.minimize(lambda x: x[0] ** 2 + 2 * x[1] ** 2, np.zeros(2), jac=lambda x: np.stack([2 * x[0], 4 * x[1]]),
                        method="SLSQP", options={"ftol": 1e-12},
                        constraints=[{"type": "ineq", "fun": lambda x: x[0] + x[1] - b,
                                      "jac": lambda x: np.ones(2)}]).x


def _nearest_on_the_disk(c):
    """The point of the unit disk nearest (c, 1/2), for c with c² + 1/4 > 1: (c, 1/2)/√(c² + 1/4)."""
    target = np.stack([c, 0.5])
    return opt.minimize(lambda x: np.sum((x - target) ** 2), np.zeros(2), jac=lambda x: 2 * (x - target),
                        options={"ftol": 1e-12},
                        constraints={"type": "ineq", "fun": lambda x: 1.0 - x @ x, "jac": lambda x: -2 * x})


ORDER2 += [
    (implicit_solution, _constrained_minimizer, (1.5,)),
    (implicit_solution, lambda c: _nearest_on_the_disk(c).x, (2.0,)),
    (implicit_solution, _quadratic_minimizer, (np.array([1.0, -0.5]),)),
    (implicit_solution, _minimum_value, (1.0,)),
    # (exact data: Gauss-Newton converges to roundoff, as central differences of the fit need)
    (implicit_solution, _fit_decay, (2.0 * np.exp(-1.3 * np.linspace(0.0, 1.0, 8)),)),
]

S2 = np.array([[3.0, 1.0], [1.0, 2.0]])


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "CG", "Newton-CG", "TNC", "SLSQP", "trust-constr",
                                    "Nelder-Mead", "Powell"])
def test_minimizer_of_a_quadratic_closed_form(method):
    """½xᵀSx - bᵀx has the minimizer S⁻¹b: its Jacobian in b is S⁻¹, whichever method found it."""
    def argmin(b):
        options = {"xatol": 1e-12, "fatol": 1e-14, "maxiter": 10000} if method == "Nelder-Mead" else \
            {"xtol": 1e-12, "ftol": 1e-14} if method == "Powell" else None
        return opt.minimize(lambda x: 0.5 * x @ S2 @ x - b @ x, np.zeros(2), method=method, tol=1e-12,
                            jac=None if method in ("Nelder-Mead", "Powell") else lambda x: S2 @ x - b,
                            options=options).x

    b = np.array([1.0, -0.5])
    np.testing.assert_allclose(argmin(b), np.linalg.solve(S2, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tapegrad.jacobian(argmin, b), np.linalg.inv(S2), rtol=1e-5, atol=1e-6)


def test_minimum_value_has_the_partial_derivative():
    """d/dc of min_x f(x, c) is ∂f/∂c at the minimizer (the envelope theorem): -2(x* - c)."""
    x = opt.minimize_scalar(lambda x: (x - 1.0) ** 2 + x ** 4, options={"xtol": 1e-12}).x
    assert gradient(_minimum_value, 1.0)[0] == pytest.approx(-2 * (x - 1.0), rel=1e-10)


def test_minimize_scalar_minimizer_closed_form():
    """(x - c)² + x⁴: 2(x - c) + 4x³ = 0, so dx/dc = 2/(2 + 12x²), in both modes."""
    def argmin(c):
        return opt.minimize_scalar(lambda x: (x - c) ** 2 + x ** 4, options={"xtol": 1e-12}).x

    x = argmin(1.0)
    assert gradient(argmin, 1.0)[0] == pytest.approx(2 / (2 + 12 * x ** 2), rel=1e-7)
    assert jvp(argmin, (1.0,), (1.0,))[1] == pytest.approx(2 / (2 + 12 * x ** 2), rel=1e-7)


def test_minimize_with_bounds_holds_an_active_bound():
    """(x - c)² on [0, 1]²: at c = (2, 0.5) the first coordinate sits at its bound 1 (derivative 0),
    the second follows c (derivative 1)."""
    def argmin(c):
        return opt.minimize(lambda x: np.sum((x - c) ** 2), np.full(2, 0.2), method="L-BFGS-B",
                            bounds=[(0.0, 1.0), (0.0, 1.0)], options={"gtol": 1e-12}).x

    c = np.array([2.0, 0.5])
    np.testing.assert_allclose(tapegrad.jacobian(argmin, c), np.diag([0.0, 1.0]), atol=1e-10)
    np.testing.assert_allclose(tapegrad.jacobian(argmin, c, mode="fwd"), np.diag([0.0, 1.0]), atol=1e-10)


def test_minimize_scalar_bounded_at_its_bound():
    """(x - c)² on [0, 1], c = 2: the minimizer stays at 1 (derivative 0); c = 0.5 inside (derivative 1)."""
    def argmin(c):
        return opt.minimize_scalar(lambda x: (x - c) ** 2, bounds=(0.0, 1.0), method="bounded").x

    assert gradient(argmin, 2.0)[0] == 0.0
    assert gradient(argmin, 0.5)[0] == pytest.approx(1.0, rel=1e-9)


def test_a_weakly_active_bound_raises():
    """(x - 1)² on [0, 1]: the minimum sits on the bound with a zero gradient; any change of c
    moves it in or holds it, so there is no derivative: SolverError."""
    with pytest.raises(SolverError, match=r"at their bounds with a gradient of .* does not push outward"):
        gradient(lambda c: opt.minimize(lambda x: np.sum((x - c) ** 2), np.full(1, 0.2), method="L-BFGS-B",
                                        bounds=[(0.0, 1.0)]).x[0], 1.0)


@pytest.mark.filterwarnings("ignore:delta_grad == 0.0")  # trust-constr's quasi-Newton update on a quadratic
@pytest.mark.parametrize("method,options", [("COBYLA", {"tol": 1e-12, "maxiter": 10000}), ("COBYQA", {}),
                                            ("trust-constr", {"gtol": 1e-12, "xtol": 1e-14})])
def test_every_constrained_method_gives_the_active_inequalitys_derivative(method, options):
    """min x₀² + 2x₁² subject to x₀ + x₁ ≥ b by scipy's other constrained methods: x* = (2b/3, b/3)."""
    def argmin(b):
        return opt.minimize(lambda x: x[0] ** 2 + 2 * x[1] ** 2, np.zeros(2), method=method, options=options,
                            constraints=[{"type": "ineq", "fun": lambda x: x[0] + x[1] - b}]).x

    np.testing.assert_allclose(tapegrad.jacobian(argmin, 1.5), [2 / 3, 1 / 3], rtol=1e-6)


@pytest.mark.filterwarnings("ignore:delta_grad == 0.0")
def test_an_equality_constraint_closed_form():
    """min x₀² + x₁² subject to x₀ + x₁ = a: x* = (a/2, a/2), the minimum a²/2; by SLSQP and by
    trust-constr (scipy's two methods for constraints), in both modes and at second order."""
    for method, options in (("SLSQP", {"ftol": 1e-12}), ("trust-constr", {"gtol": 1e-12, "xtol": 1e-14})):
        def res(a):
            return opt.minimize(lambda x: np.sum(x ** 2), np.zeros(2), method=method, options=options,
                                constraints={"type": "eq", "fun": lambda x: x[0] + x[1] - a})

        np.testing.assert_allclose(tapegrad.jacobian(lambda a: res(a).x, 1.0), [0.5, 0.5], rtol=1e-6)
        np.testing.assert_allclose(tapegrad.jacobian(lambda a: res(a).x, 1.0, mode="fwd"), [0.5, 0.5], rtol=1e-6)
        assert gradient(lambda a: res(a).fun, 1.0)[0] == pytest.approx(1.0, rel=1e-6)
        assert float(hessian(lambda a: res(a).fun, 1.0)) == pytest.approx(1.0, rel=1e-6)


def test_an_active_inequality_closed_form():
    """min x₀² + 2x₁² subject to x₀ + x₁ ≥ b: at b = 1.5 active, x* = (2b/3, b/3) and the minimum
    2b²/3 (derivative 4b/3, second 4/3); at b = -1 inactive, x* = 0 with derivative 0."""
    np.testing.assert_allclose(tapegrad.jacobian(_constrained_minimizer, 1.5), [2 / 3, 1 / 3], rtol=1e-9)
    np.testing.assert_allclose(jvp(_constrained_minimizer, (1.5,), (1.0,))[1], [2 / 3, 1 / 3], rtol=1e-9)
    np.testing.assert_allclose(tapegrad.jacobian(_constrained_minimizer, -1.0), [0.0, 0.0], atol=1e-12)

    def minimum(b):
        return opt.minimize(lambda x: x[0] ** 2 + 2 * x[1] ** 2, np.zeros(2), method="SLSQP", options={"ftol": 1e-12},
                            constraints=[{"type": "ineq", "fun": lambda x: x[0] + x[1] - b}]).fun

    assert gradient(minimum, 1.5)[0] == pytest.approx(2.0, rel=1e-6)
    assert float(hessian(minimum, 1.5)) == pytest.approx(4 / 3, rel=1e-6)
    check_grad(_constrained_minimizer, 1.5, order=2)


def test_a_nonlinear_constraint_closed_form():
    """The point of the unit disk nearest (c, 1/2) is u/|u|, u = (c, 1/2): its derivative in c is
    (I - x xᵀ) e₁ / |u|; central differences agree at second order."""
    c = 2.0
    u = np.array([c, 0.5])
    x = u / np.linalg.norm(u)
    expected = (np.eye(2) - np.outer(x, x))[:, 0] / np.linalg.norm(u)
    np.testing.assert_allclose(tapegrad.jacobian(lambda c: _nearest_on_the_disk(c).x, c), expected, rtol=1e-8)
    check_grad(lambda c: _nearest_on_the_disk(c).x, c, order=2)


def test_bounds_with_constraints_are_inequalities():
    """(x - c)² on [0, 1] with a constraint x ≤ 5 that never binds: the bound holds x* = 1 for
    c = 2 (derivative 0), c = 0.5 lies inside (derivative 1), and at c = 1 the bound is active
    with a zero multiplier: SolverError."""
    def argmin(c):
        return opt.minimize(lambda x: np.sum((x - c) ** 2), np.full(1, 0.2), bounds=[(0.0, 1.0)], options={"ftol": 1e-12},
                            constraints={"type": "ineq", "fun": lambda x: 5.0 - x[0]}).x[0]

    assert gradient(argmin, 2.0)[0] == pytest.approx(0.0, abs=1e-12)
    assert gradient(argmin, 0.5)[0] == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(SolverError, match=r"^minimize \(SLSQP\) at test_scipy_optimize\.py:\d+: the inequality "
                                          r"constraints \[2\] hold with equality .* multipliers .* zero to rounding"):
        gradient(argmin, 1.0)


def test_dependent_active_constraints_raise():
    """The same inequality twice, active: the multipliers are not unique, and SolverError says so."""
    cons = [{"type": "ineq", "fun": lambda x: x[0] + x[1] - 1.0}, {"type": "ineq", "fun": lambda x: x[0] + x[1] - 1.0}]
    with pytest.raises(SolverError, match=r"the gradients of the active constraints \[0, 1\] are dependent"):
        gradient(lambda c: opt.minimize(lambda x: np.sum((x - c) ** 2), np.zeros(2), constraints=cons).x[0], 0.3)


def test_constraints_of_plain_values_are_scipys_and_objects_are_refused():
    """Nothing traced: scipy's result as it is, whatever form the constraints take. A
    LinearConstraint whose solution is differentiated is refused with the dict to write instead."""
    for cons in ({"type": "eq", "fun": lambda x: x[0] + x[1] - 1.0}, scipy.optimize.LinearConstraint(np.ones((1, 2)), 1.0, 1.0)):
        ours = opt.minimize(lambda x: np.sum(x ** 2), np.zeros(2), constraints=cons)
        theirs = scipy.optimize.minimize(lambda x: np.sum(x ** 2), np.zeros(2), constraints=cons)
        assert ours.success and np.array_equal(ours.x, theirs.x)
    with pytest.raises(TypeError, match=r"constraints given as dicts, .* not a LinearConstraint; write lb <= c\(x\)"):
        gradient(lambda c: opt.minimize(lambda x: np.sum((x - c) ** 2), np.zeros(2),
                                        constraints=scipy.optimize.LinearConstraint(np.ones((1, 2)), 1.0, 1.0)).x[0],
                 0.3)


def test_a_constrained_minimization_that_failed_raises_and_a_wrong_type_is_named():
    """maxiter=1 under a constraint: SLSQP reports failure, its point has no derivative
    (SolverError); a constraint whose 'type' is neither 'eq' nor 'ineq' is named."""
    def argmin(c, **kwargs):
        cons = {"type": kwargs.pop("kind", "ineq"), "fun": lambda x: x[0] + x[1] - 3.0}
        return opt.minimize(lambda x: np.sum((x - c) ** 4), np.zeros(2), constraints=cons, **kwargs).x[0]

    with pytest.raises(SolverError, match=r"^minimize \(SLSQP\) at test_scipy_optimize\.py:\d+: scipy did not converge"):
        gradient(lambda c: argmin(c, options={"maxiter": 1}), 1.0)
    with pytest.raises(ValueError, match=r"a constraint's 'type' is 'eq' or 'ineq', not 'eqn'"):
        gradient(lambda c: argmin(c, kind="eqn"), 1.0)


def test_a_minimization_that_failed_raises():
    """maxiter=1: minimize reports failure, and its point has no derivative: SolverError."""
    with pytest.raises(SolverError, match="scipy did not converge"):
        gradient(lambda c: opt.minimize(lambda x: np.sum((x - c) ** 4), np.zeros(2), method="BFGS",
                                        options={"maxiter": 1}).x[0], 1.0)


def test_a_singular_hessian_raises():
    """f(x) = (x₀ + x₁ - c)²: a valley of minimizers, the Hessian singular: SolverError."""
    with pytest.raises(SolverError, match=r"the Hessian ∇ₓ²f is singular"):
        gradient(lambda c: opt.minimize(lambda x: (x[0] + x[1] - c) ** 2, np.zeros(2), method="BFGS").x[0], 1.0)


def test_large_minimization_uses_a_krylov_solve():
    """300 unknowns (above the dense limit): GMRES on Hessian-vector products gives S⁻¹1 for ½xᵀSx - bᵀx."""
    n = 300
    rng = np.random.default_rng(0)
    M = rng.standard_normal((n, n))
    S = M @ M.T / n + np.eye(n)

    def total(b):
        return np.sum(opt.minimize(lambda x: 0.5 * x @ S @ x - b @ x, np.zeros(n), jac=lambda x: S @ x - b,
                                   method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000}).x)

    b = rng.standard_normal(n)
    np.testing.assert_allclose(gradient(total, b)[0], np.linalg.solve(S, np.ones(n)), rtol=1e-8, atol=1e-10)


def test_least_squares_fit_of_exact_data():
    """Fitting p₀ e^(-p₁ t) to exact data: the fit's Jacobian in the data is the pseudo-inverse of the model's Jacobian."""
    t = np.linspace(0.0, 1.0, 8)
    y = 2.0 * np.exp(-1.3 * t)
    A = np.stack([np.exp(-1.3 * t), -2.0 * t * np.exp(-1.3 * t)], axis=1)
    np.testing.assert_allclose(tapegrad.jacobian(_fit_decay, y), np.linalg.pinv(A), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tapegrad.jacobian(_fit_decay, y, mode="fwd"), np.linalg.pinv(A), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("loss", ["soft_l1", "huber", "cauchy", "arctan"])
def test_least_squares_robust_losses(loss):
    """Each of scipy's losses: the derivative of the fit matches central differences."""
    t = np.linspace(0.0, 1.0, 8)

    def fit(y):
        return np.sum(opt.least_squares(lambda p: p[0] * np.exp(-p[1] * t) - y, np.ones(2), loss=loss, f_scale=0.5,
                                        xtol=1e-15, ftol=1e-15, gtol=1e-15).x)

    # scipy stops these at an optimality of about 1e-9, where the CPU's rounding decides the last
    # iterate: central differences need a wide step, and carry ~1e-4 of the solver's noise and
    # their own truncation (arctan, along check_grad's direction: 1.1e-4 on one machine, 2e-5 by
    # Richardson's extrapolation); a wrong loss derivative is off by far more
    check_grad(fit, 2.0 * np.exp(-1.3 * t) + 0.3 * np.sin(7 * t), eps=1e-3, rtol=5e-4)


def test_least_squares_result_fields_are_traced():
    """cost and fun are recomputed at the traced minimizer: d cost/dy = -f at the fit (envelope)."""
    t = np.linspace(0.0, 1.0, 8)
    y = 2.0 * np.exp(-1.3 * t) + 0.05 * np.cos(5 * t)

    def cost(y):
        return opt.least_squares(lambda p: p[0] * np.exp(-p[1] * t) - y, np.ones(2), xtol=1e-15, ftol=1e-15,
                                 gtol=1e-15).cost

    res = scipy.optimize.least_squares(lambda p: p[0] * np.exp(-p[1] * t) - y, np.ones(2), xtol=1e-15, ftol=1e-15,
                                       gtol=1e-15)
    np.testing.assert_allclose(gradient(cost, y)[0], -res.fun, rtol=1e-6, atol=1e-9)

"""tapegrad.scipy.optimize: scipy's solvers with their solutions differentiated by the implicit
function theorem, through `args` and through values the functions capture, in both modes and at
second order; scipy's result objects; clear errors where no derivative exists."""
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

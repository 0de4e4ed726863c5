"""The replacements in tapegrad.scipy on their own: reachable after ``import tapegrad``, equal to
scipy on plain values, recorded as one op under the name the user wrote, named by the error
that scipy's own function raises on a traced value, in the rule listing and in generated
source. Their gradients are tested with the rules (tests/rules/test_special.py and
tests/rules/test_scipy_linalg.py). scipy's solvers, not differentiated, are refused with the
way to a derivative."""
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
import scipy.signal
import scipy.special

from tapegrad import (
    ConcreteValueError,
    check_grad,
    compiled_grad,
    grad,
    gradient,
    trace,
)
from tapegrad.tape import Call
from tapegrad.scipy.integrate import odeint, quad, solve_ivp
from tapegrad.scipy.optimize import brentq
from tapegrad.errors import qualified_name
from tapegrad.scipy import linalg as tsl, signal as tsg, special as tss
from tapegrad.show.listing import rule_rows, rules_markdown

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = {"special": (tss, scipy.special), "linalg": (tsl, scipy.linalg), "signal": (tsg, scipy.signal)}


def positive(rng):
    return (rng.uniform(0.5, 2.0, (2, 3)),)


def spd_and_vector(rng):
    m = rng.standard_normal((3, 3))
    return m @ m.T + 3 * np.eye(3), rng.standard_normal(3)


#: (module, name, the call made with `fn`, the replacement or scipy's function, inputs); a
#: factorization returns its tuple, of which the factor comes first
CALLS = [
    ("special", "logsumexp", lambda fn, x: fn(x), positive),
    ("special", "logsumexp", lambda fn, x: fn(x, 1, np.full(3, 0.5), keepdims=True), positive),
    ("special", "logsumexp", lambda fn, x: fn(x, axis=0, return_sign=True)[0], positive),
    ("special", "softmax", lambda fn, x: fn(x), positive),
    ("special", "softmax", lambda fn, x: fn(x, axis=0), positive),
    ("special", "log_softmax", lambda fn, x: fn(x, -1), positive),
    ("special", "polygamma", lambda fn, x: fn(1, x), positive),
    ("special", "multigammaln", lambda fn, x: fn(x, 1), positive),
    ("linalg", "solve_triangular", lambda fn, a, b: fn(a, b, lower=True), spd_and_vector),
    ("linalg", "cho_factor", lambda fn, a, b: fn(a, lower=True), spd_and_vector),
    ("linalg", "cho_solve", lambda fn, a, b: fn((a, False), b), spd_and_vector),
    ("linalg", "cholesky", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "expm", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "lu_factor", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "lu_solve", lambda fn, a, b: fn((a, np.arange(3)), b), spd_and_vector),
    ("linalg", "solve", lambda fn, a, b: fn(a, b), spd_and_vector),
    ("linalg", "sqrtm", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "solve_sylvester", lambda fn, a, b: fn(a, a, a), spd_and_vector),
    ("signal", "convolve", lambda fn, a, b: fn(a, a, "same"), spd_and_vector),
    ("linalg", "solve_banded", lambda fn, a, b: fn((1, 1), a, b), spd_and_vector),
]
TESTED_ELSEWHERE = ({("linalg", n) for n in [*tsl.linalg_more.__all__, "lu", "logm", "solve_continuous_lyapunov"]}
                    | {("signal", n) for n in tsg.__all__ if n != "convolve"})
IDS = [f"{module}.{name}-{i}" for i, (module, name, _, _) in enumerate(CALLS)]
NAMES = sorted({(module, name) for module, name, _, _ in CALLS})


def parts(out):
    return out if isinstance(out, tuple) else (out,)


def assert_same(ours, theirs):
    for x, y in zip(parts(ours), parts(theirs), strict=True):
        np.testing.assert_array_equal(x, y)


def test_every_replacement_has_a_row():
    """The table covers each module's __all__, so the tests below see every replacement; the
    ones recorded as numpy's ops or as compositions of ops, and logm (whose compiled gradient
    is traced on every call: scipy estimates norms with random draws), are tested in
    tests/rules/test_scipy_linalg_more.py and tests/rules/test_signal.py."""
    assert NAMES == sorted((m, n) for m, (ours, _) in MODULES.items() for n in ours.__all__
                           if (m, n) not in TESTED_ELSEWHERE)


def test_replacements_are_reachable_right_after_import_tapegrad():
    """In a fresh interpreter, ``import tapegrad`` alone makes tapegrad.scipy.special.logsumexp etc. attributes."""
    names = ", ".join(f"tapegrad.scipy.{m}.{n}" for m, n in NAMES)
    code = f"import tapegrad; print(tapegrad.__file__); {names}"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert pathlib.Path(done.stdout.strip()).parent == ROOT / "tapegrad"


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_replacement_agrees_with_scipy_on_plain_values(module, name, call, make, rng):
    """On plain values a replacement returns exactly what scipy returns."""
    ours, theirs = (getattr(m, name) for m in MODULES[module])
    args = make(rng)
    assert_same(call(ours, *args), call(theirs, *args))


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_replacement_is_one_op_named_as_written(module, name, call, make, rng):
    """On traced values a replacement is one op: the tape prints the name the user wrote, and
    errors and the listing give the path they import it from; its value is scipy's."""
    ours, theirs = (getattr(m, name) for m in MODULES[module])
    args = make(rng)
    value, tape = trace(lambda *xs: call(ours, *xs), *args)
    op = next(op for op in tape.ops if type(op) is Call)
    assert f"= {name}(" in str(tape)
    assert qualified_name(op.fn) == f"tapegrad.scipy.{module}.{name}"
    assert_same(value, call(theirs, *args))


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_scipy_original_on_traced_value_names_replacement(module, name, call, make, rng):
    """scipy's own function converts a traced value with np.asarray; the error names tapegrad's replacement."""
    theirs = getattr(MODULES[module][1], name)
    with pytest.raises(ConcreteValueError) as info:
        grad(lambda *xs: np.sum(parts(call(theirs, *xs))[0]), *make(rng))
    expected = f"scipy.{module}.{name} cannot see traced values: use tapegrad.scipy.{module}.{name} instead"
    assert expected in str(info.value)


@pytest.mark.parametrize("module, name", NAMES, ids=[f"{m}.{n}" for m, n in NAMES])
def test_rule_listing_names_the_replacement(module, name):
    """docs/rules.md lists the rule under the replacement, never under scipy's function, which refuses traced values."""
    listed = {row[0] for row in rule_rows()}
    assert f"tapegrad.scipy.{module}.{name}" in listed
    assert f"scipy.{module}.{name}" not in listed
    (note,) = [row[3] for row in rule_rows() if row[0] == f"tapegrad.scipy.{module}.{name}"]
    assert note.startswith(f"use for `scipy.{module}.{name}`, which cannot see traced values")


def test_rule_listing_names_the_stats_replacements():
    """docs/rules.md has a row for each tapegrad.scipy.stats distribution with its methods, and says
    which take plain values only (scipy's own, and multivariate_normal's Monte Carlo cdf)."""
    listed = rules_markdown()
    assert ("| `tapegrad.scipy.stats.dirichlet` | cov, entropy, logpdf, mean, pdf, rvs (plain values only), "
            "var |\n") in listed
    assert ("| `tapegrad.scipy.stats.multivariate_normal` | cdf (plain values only), entropy, fit (plain values "
            "only), logcdf (plain values only), logpdf, marginal (plain values only), pdf, rvs (plain values "
            "only) |\n") in listed


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_compiled_gradient_through_replacement(module, name, call, make, rng):
    """Generated source calls the replacement by its name, and the compiled gradient is grad's."""
    ours = getattr(MODULES[module][0], name)

    def f(*xs):
        return np.sum(parts(call(ours, *xs))[0])

    args = make(rng)
    compiled = compiled_grad(f)
    assert f" = {name}(" in compiled.source(*args)
    value, grads = compiled(*args)
    expected_value, expected_grads = grad(f, *args)
    assert value == expected_value
    for g, e in zip(grads, expected_grads, strict=True):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(g, e)
        else:
            assert g is e or g == e


# --- scipy's solvers: refused, naming the call, the line and the way to a derivative ---

def OPTIMIZE_FIX(name):
    return (f"use tapegrad.scipy.optimize.{name} (tapegrad.scipy.optimize has scipy.optimize's solvers under their "
            f"names, with the same arguments, and differentiates their solutions by the implicit function theorem)")


MINIMUM_FIX = "use tapegrad.scipy.optimize.least_squares of the residuals (scipy's curve_fit is not differentiated"
QUAD_FIX = ("use tapegrad.scipy.integrate.quad (same arguments; one quad per dimension, nested, for dblquad, tplquad "
            "and nquad), differentiated under the integral sign and at the limits")
ODEINT_FIX = "use tapegrad.scipy.integrate.solve_ivp (same arguments), differentiated by the adjoint method"


def cube(t, a):
    return t ** 3 - a


#: (what the error names, the call of a traced a, the fix it names); each calls the solver with a traced value
SOLVERS = [
    ("scipy.optimize.brentq", lambda a: scipy.optimize.brentq(lambda t: t ** 3 - a, 0, 5), OPTIMIZE_FIX("brentq")),
    ("scipy.optimize.brentq", lambda a: scipy.optimize.brentq(cube, 0, 5, args=(a,)), OPTIMIZE_FIX("brentq")),
    ("scipy.optimize.brenth", lambda a: scipy.optimize.brenth(lambda t: t ** 3 - a, 0, 5), OPTIMIZE_FIX("brenth")),
    ("scipy.optimize.ridder", lambda a: scipy.optimize.ridder(lambda t: t ** 3 - a, 0, 5), OPTIMIZE_FIX("ridder")),
    ("scipy.optimize.bisect", lambda a: scipy.optimize.bisect(lambda t: t ** 3 - a, 0, 5), OPTIMIZE_FIX("bisect")),
    ("scipy.optimize.toms748", lambda a: scipy.optimize.toms748(lambda t: t ** 3 - a, 0, 5), OPTIMIZE_FIX("toms748")),
    ("scipy.optimize.newton", lambda a: scipy.optimize.newton(lambda t: t ** 3 - 2, a), OPTIMIZE_FIX("newton")),
    ("scipy.optimize.brentq", lambda a: scipy.optimize.root_scalar(lambda t: t ** 3 - a, bracket=(0, 5)).root, OPTIMIZE_FIX("brentq")),
    ("scipy.optimize.fsolve", lambda a: scipy.optimize.fsolve(lambda t: t ** 3 - 2, np.stack([a]))[0],
     OPTIMIZE_FIX("fsolve")),
    ("scipy.optimize.minimize", lambda a: scipy.optimize.minimize(lambda t: np.sum((t - 1) ** 2), np.stack([a])).x[0],
     OPTIMIZE_FIX("minimize")),
    ("scipy.optimize.minimize_scalar", lambda a: scipy.optimize.minimize_scalar(lambda t: (t - a) ** 2).x,
     OPTIMIZE_FIX("minimize_scalar")),
    ("scipy.optimize.curve_fit", lambda a: scipy.optimize.curve_fit(lambda x, p: p * x, np.arange(3.0),
                                                                    a * np.arange(3.0))[0][0], MINIMUM_FIX),
    ("scipy.integrate.quad", lambda a: scipy.integrate.quad(lambda t: np.sin(a * t), 0, 1)[0], QUAD_FIX),
    ("scipy.integrate.quad", lambda a: scipy.integrate.quad(np.sin, 0, a)[0], QUAD_FIX),
    ("scipy.integrate.ivp.solve_ivp", lambda k: scipy.integrate.solve_ivp(lambda t, y: -k * y, (0, 1), np.ones(1)).y[0, -1],
     ODEINT_FIX),
    ("scipy.integrate.ivp.solve_ivp",
     lambda k: scipy.integrate.solve_ivp(lambda t, y, k: -k * y, (0, 1), np.ones(1), args=(k,), method="LSODA").y[0, -1],
     ODEINT_FIX),
    ("scipy.integrate.ivp.solve_ivp", lambda k: scipy.integrate.solve_ivp(lambda t, y: -y, (0, 1), np.stack([k])).y[0, -1],
     ODEINT_FIX),
    ("scipy.integrate.ivp.solve_ivp", lambda k: scipy.integrate.solve_ivp(lambda t, y: -y, (0, k), np.ones(1)).y[0, -1],
     ODEINT_FIX),
]


@pytest.mark.parametrize("name, call, fix", SOLVERS, ids=[f"{row[0].rsplit('.', 1)[1]}-{i}" for i, row in enumerate(SOLVERS)])
def test_scipy_solver_of_a_traced_value_names_itself_the_line_and_the_fix(name, call, fix):
    """A scipy solver reached by a traced value raises ConcreteValueError (brentq's compiled code
    ended in a SystemError) naming the solver, the user's line and how to get a derivative."""
    with pytest.raises(ConcreteValueError) as info:
        gradient(call, 2.0)
    message = str(info.value)
    assert f"{name} cannot see traced values: {fix}" in message
    assert re.search(r" at test_scipy\.py:\d+", message)


def test_minimize_and_fsolve_of_a_traced_objective_raise_the_refusal_they_caught():
    """minimize and fsolve catch tapegrad's refusal and fail with an error of their own (a
    ValueError; MINPACK's error): the trace raises the refusal they caught, which names the
    call and the fix, and says what followed."""
    with pytest.raises(ConcreteValueError, match=r"this was caught and <lambda> went on, then raised "
                                                 r"ValueError: .*must return a scalar") as info:
        gradient(lambda a: scipy.optimize.minimize(lambda t: np.sum((t - a) ** 2), np.zeros(2)).x[0], 2.0)
    assert f"scipy.optimize.minimize cannot see traced values: {OPTIMIZE_FIX('minimize')}" in str(info.value)
    with pytest.raises(ConcreteValueError, match=r"not a proper array of floats") as info:
        gradient(lambda a: scipy.optimize.fsolve(lambda t: t ** 3 - a, np.ones(1))[0], 2.0)
    assert "scipy.optimize.fsolve cannot see traced values: use tapegrad.scipy.optimize.fsolve" in str(info.value)


def test_solve_ivp_through_tapegrads_as_the_error_says():
    """The call the solve_ivp refusal names, tapegrad.scipy.integrate.solve_ivp with the same
    arguments, gives scipy's values and their derivative: y' = -k y, y(0) = 2: y(t) = 2 e^(-kt),
    dy(1)/dk = -2 e^(-k)."""
    def fun(t, y, k):
        return -k * y

    options = dict(t_eval=np.array([0.5, 1.0]), rtol=1e-10, atol=1e-10)
    sol = scipy.integrate.solve_ivp(fun, (0.0, 1.0), np.array([2.0]), args=(0.5,), **options)
    ours = solve_ivp(fun, (0.0, 1.0), np.array([2.0]), args=(0.5,), **options)
    np.testing.assert_array_equal(ours.y, sol.y)
    (dk,) = gradient(lambda k: solve_ivp(fun, (0.0, 1.0), np.array([2.0]), args=(k,), **options).y[0, -1], 0.5)
    assert dk == pytest.approx(-2 * np.exp(-0.5), rel=1e-7)


def test_a_root_differentiated_by_the_implicit_function_theorem_as_the_error_says():
    """The call the brentq refusal names, tapegrad.scipy.optimize.brentq with the same arguments,
    gives scipy's root x = a^(1/3) and its derivative by the implicit function theorem,
    dx/da = -(∂f/∂a)/(∂f/∂x) = 1/(3x²) = a^(-2/3)/3."""
    def cube_root(a):
        return brentq(cube, 0.0, 5.0, args=(a,), xtol=1e-14)

    assert cube_root(2.0) == scipy.optimize.brentq(cube, 0.0, 5.0, args=(2.0,), xtol=1e-14)
    assert gradient(cube_root, 2.0)[0] == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-12)
    check_grad(cube_root, 2.0)


def test_an_integral_differentiated_under_the_integral_sign_as_the_error_says():
    """The call the quad refusal names, tapegrad.scipy.integrate.quad with the same arguments,
    gives scipy's integral and its derivatives: ∫₀ᵇ sin(at) dt = (1 - cos(ab))/a, d/db = sin(ab),
    d/da = b sin(ab)/a - (1 - cos(ab))/a²."""
    def area(a, b):
        return quad(lambda t: np.sin(a * t), 0, b)[0]

    a, b = 2.0, 1.0
    assert quad(lambda t: np.sin(a * t), 0, b) == scipy.integrate.quad(lambda t: np.sin(a * t), 0, b)
    da, db = gradient(area, a, b)
    assert da == pytest.approx(b * np.sin(a * b) / a - (1 - np.cos(a * b)) / a ** 2, rel=1e-12)
    assert db == pytest.approx(np.sin(a * b), rel=1e-14)

"""Rules of scipy.special's elementary functions (log1p, expm1, exp2, exp10, cbrt, cosm1,
powm1, exprel, the trigonometry in degrees, radian, the Box-Cox transforms), its gamma
quotients (binom, poch, loggamma) and its losses (kl_div, huber, pseudo_huber)."""
import numpy as np
import pytest
import scipy.special as sp

import tapegrad.scipy.special as tsp
from tapegrad import ZERO, check_grad, grad, gradient
from tapegrad.rules.special_elementary import exprel_slope

from _complex import complex_table_tests
from _special_rows import CASES, check_row, exercised, order2_rows, row

TABLE = [
    row(sp.log1p, [(-0.5, 2)]), row(sp.expm1, [(-2, 2)]), row(sp.exp2, [(-2, 2)]), row(sp.exp10, [(-1, 1)]),
    row(sp.cbrt, [(0.5, 2)]), row(sp.cosm1, [(-2, 2)]), row(sp.powm1, [(0.5, 2), (-2, 2)]),
    row(sp.exprel, [(-3, 3)]), row(sp.exprel, [(-0.4, 0.4)], label="series"),
    row(sp.sindg, [(-100, 100)]), row(sp.cosdg, [(-100, 100)]), row(sp.tandg, [(-60, 60)]), row(sp.cotdg, [(20, 160)]),
    row(sp.radian, [(-5, 5), (-5, 5), (-5, 5)]),
    row(sp.boxcox, [(0.5, 3), (-1, 1)]), row(sp.boxcox, [(0.7, 1.4), (-0.2, 0.2)], label="series"),
    row(sp.boxcox1p, [(-0.5, 2), (-1, 1)]), row(sp.inv_boxcox, [(-1, 1), (-0.5, 0.5)]),
    row(sp.inv_boxcox, [(-1, 1), (-0.04, 0.04)], label="series"), row(sp.inv_boxcox1p, [(-1, 1), (-0.5, 0.5)]),
    row(sp.binom, [(2, 6), (0.3, 1.8)]), row(sp.poch, [(0.5, 3), (-0.4, 2)]), row(sp.loggamma, [(0.5, 3)]),
    row(sp.kl_div, [(0.2, 2), (0.2, 2)]), row(sp.huber, [(0.5, 1.5), (-3, 3)]), row(sp.pseudo_huber, [(0.5, 1.5), (-3, 3)]),
]

EXERCISED = exercised(TABLE)
#: (rule's function, function differentiated, float64 arguments): run by tests/conformance
ORDER2 = order2_rows(TABLE, 11)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fn, f, domains", TABLE)
def test_rule(fn, f, domains, case, rng):
    """Each rule matches central differences in both modes: at Python floats (float gradients),
    on arrays broadcast against each other, and in float32."""
    check_row(f, domains, case, rng)


def test_python_float_gets_a_float():
    """A Python float argument gets a float gradient."""
    assert type(grad(sp.log1p, 0.5)[1][1]) is float


@pytest.mark.parametrize("u", [0.0, 1e-9, -0.3, 0.45, 0.49999, 0.50001, -2.0, 7.0])
def test_exprel_slope_is_its_closed_form_and_series(u):
    """exprel′(u) = (eᵘ - exprel(u))/u, 1/2 at 0: the series below |u| = 1/2 and the closed form
    above agree with the closed form in extended precision (np.longdouble) where it keeps its digits."""
    lu = np.longdouble(u)
    want = 0.5 + u / 3 if abs(u) < 1e-6 else float((np.exp(lu) - np.expm1(lu) / lu) / lu)
    assert gradient(sp.exprel, u)[0] == pytest.approx(want, rel=1e-13 if abs(u) > 0.1 else 1e-15)
    assert exprel_slope(np.array(u)) == pytest.approx(want, rel=1e-13 if abs(u) > 0.1 else 1e-15)


def test_box_cox_slopes_in_lambda_at_zero():
    """At λ = 0: ∂boxcox/∂λ = log(x)²/2, ∂boxcox1p/∂λ = log1p(x)²/2, ∂inv_boxcox/∂λ = -eʸy²/2."""
    assert gradient(lambda lam: sp.boxcox(2.0, lam), 0.0)[0] == pytest.approx(np.log(2.0) ** 2 / 2, rel=1e-15)
    assert gradient(lambda lam: sp.boxcox1p(0.5, lam), 0.0)[0] == pytest.approx(np.log1p(0.5) ** 2 / 2, rel=1e-15)
    assert gradient(lambda lam: sp.inv_boxcox(1.5, lam), 0.0)[0] == pytest.approx(-np.exp(1.5) * 1.5 ** 2 / 2, rel=1e-15)
    assert gradient(lambda lam: sp.inv_boxcox1p(1.5, lam), 0.0)[0] == pytest.approx(-np.exp(1.5) * 1.5 ** 2 / 2, rel=1e-15)


@pytest.mark.parametrize("lam", [1e-7, 0.049, 0.051, -0.3])
def test_inv_boxcox_slope_in_lambda_on_both_sides_of_the_series(lam):
    """∂/∂λ of (1 + λy)^(1/λ) against its closed form in extended precision, across the switch at |λy| = 0.05."""
    y = np.longdouble(1.0)
    x = np.exp(np.log1p(lam * y) / lam)
    if lam == 1e-7:  # (where the closed form cancels even in extended precision: its series, t = λy)
        want = float(x * y * y * (-0.5 + 2 * lam * y / 3 - 3 * (lam * y) ** 2 / 4))
    else:
        want = float(x * (y / (lam * (1 + lam * y)) - np.log1p(lam * y) / lam ** 2))
    assert gradient(lambda lam: sp.inv_boxcox(1.0, lam), lam)[0] == pytest.approx(want, rel=1e-13)


def test_closed_forms():
    """Slopes at fixed points: binom(5, 2)′ in n is 10(ψ(6) - ψ(4)) = 10(1/5 + 1/4), in k 10(ψ(4) - ψ(3)); poch(2, 3)′ in
    m is 24ψ(5); huber's in δ outside is |r| - δ; pseudo_huber's in δ is r⁴/(δ³s(s+1)²)."""
    dn, dk = gradient(sp.binom, 5.0, 2.0)
    assert dn == pytest.approx(10 * (1 / 5 + 1 / 4), rel=1e-13) and dk == pytest.approx(10 / 3, rel=1e-13)
    assert gradient(sp.poch, 2.0, 3.0)[1] == pytest.approx(24 * sp.digamma(5.0), rel=1e-14)
    assert gradient(sp.huber, 1.0, -3.0) == (2.0, -1.0)
    s = np.sqrt(1 + (2.0 / 0.5) ** 2)
    assert gradient(sp.pseudo_huber, 0.5, 2.0)[0] == pytest.approx(2.0 ** 4 / (0.5 ** 3 * s * (s + 1) ** 2), rel=1e-14)
    assert gradient(sp.sindg, 60.0)[0] == pytest.approx(np.pi / 180 / 2, rel=1e-14)


def test_round_is_nondifferentiable():
    """scipy.special.round is piecewise constant: an input only it sees gets ZeroTangent()."""
    assert grad(sp.round, 1.3)[1][1] is ZERO


#: (fn, args, kwargs, wrt): loggamma is holomorphic off the negative real axis
COMPLEX_TABLE = [(sp.loggamma, (np.array([1.5 + 2j, 0.7 - 0.4j, -2.5 + 1j]),), {}, None),
                 (sp.loggamma, (np.array([0.7, 2.5]),), {}, None)]
test_complex_rule_pullback, test_complex_rule_jvp = complex_table_tests(COMPLEX_TABLE)


def test_loggamma_complex_slope_is_digamma():
    """d/dz log Γ(z) = ψ(z) at a complex z (the holomorphic derivative, seed 1)."""
    z = 1.5 + 2j
    assert grad(sp.loggamma, z, seed=1.0)[1][1] == pytest.approx(sp.digamma(z), rel=1e-14)


def test_logistic_regression_through_tapegrad_scipy_special():
    """The program that found the gap: a logistic regression's loss written with
    tapegrad.scipy.special's log1p and expit has the gradient of the same loss written with numpy's log1p."""
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((6, 3)), (rng.uniform(size=6) > 0.5).astype(float)

    def loss(w, log1p):
        p = tsp.expit(X @ w)
        return -np.sum(y * np.log(p) + (1 - y) * log1p(-p))

    w = rng.standard_normal(3)
    check_grad(lambda w: loss(w, tsp.log1p), w)
    np.testing.assert_allclose(gradient(lambda w: loss(w, tsp.log1p), w)[0],
                               gradient(lambda w: loss(w, np.log1p), w)[0], rtol=1e-14)

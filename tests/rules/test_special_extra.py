"""Rules of the Bessel functions, the incomplete gamma and beta functions, rgamma, multigammaln
and gammasgn of scipy.special: gradients in x, and a clear error for the parameters whose
derivative has no closed form."""
import numpy as np
import pytest
import scipy.special as sp

import tapegrad.scipy.special as tsp
from tapegrad import NoRuleError, ZERO, check_grad, grad, gradient

from _rule_tables import DTYPES, SHAPES, middle, name, sample

#: (ufunc of x alone, interval where it is smooth)
UNARY = [(sp.j0, (0.5, 4)), (sp.j1, (-3, 3)), (sp.y0, (0.5, 4)), (sp.y1, (0.5, 4)), (sp.rgamma, (0.3, 3))]
#: (ufunc of (parameter, x), the constant parameter, interval of x)
OF_X = [
    (sp.jv, 1.5, (0.5, 4)), (sp.jv, 0.0, (-3, 3)), (sp.yv, 2.5, (0.5, 4)), (sp.yn, 2, (0.5, 4)),
    (sp.iv, 1.5, (0.5, 3)), (sp.iv, 2.0, (-3, 3)), (sp.ive, 0.5, (0.2, 3)), (sp.kv, 1.5, (0.3, 3)),
    (sp.kv, 0.0, (0.3, 3)), (sp.gammainc, 2.5, (0.2, 4)), (sp.gammaincc, 0.7, (0.2, 4)),
]
#: with a parameter array broadcast against x
PARAM_ARRAYS = {sp.jv: np.array([0.0, 1.0, 2.5]), sp.gammainc: np.array([0.5, 1.0, 3.0]),
                sp.kv: np.array([0.5, 1.5, 2.0])}

EXERCISED = ({fn for fn, _ in UNARY} | {fn for fn, _, _ in OF_X}
             | {sp.betainc, tsp.multigammaln})

#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = ([(fn, fn, (middle(d),)) for fn, d in UNARY]
          + [(fn, (lambda x, fn=fn, v=v: fn(v, x)), (middle(d),)) for fn, v, d in OF_X]
          + [(sp.betainc, lambda x: sp.betainc(2.5, 1.5, x), (0.4,)),
             (tsp.multigammaln, lambda a: tsp.multigammaln(a, 3), (2.5,))])


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_rule(fn, domain, shape, dtype, rng):
    """Each function of x alone matches central differences for every shape and dtype."""
    check_grad(fn, sample(rng, domain, shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, v, domain", OF_X, ids=name)
def test_rule_in_x(fn, v, domain, shape, dtype, rng):
    """Each function of (parameter, x) is differentiated in x, the parameter held constant."""
    check_grad(lambda x, v=v: fn(v, x), sample(rng, domain, shape, dtype))  # (a closure's v would be traced)


@pytest.mark.parametrize("fn", list(PARAM_ARRAYS), ids=name)
def test_parameter_array_broadcasts_against_x(fn, rng):
    """A parameter array of shape (3,) against x of shape (2, 1): x's gradient is summed back."""
    v = PARAM_ARRAYS[fn]
    check_grad(lambda x, v=v: fn(v, x), sample(rng, (0.5, 3), (2, 1)))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shapes", [((), (), (3,)), ((3,), (2, 1), (2, 3)), ((), (), ())], ids=str)
def test_betainc_in_x(shapes, dtype, rng):
    """betainc(a, b, x) is differentiated in x, with a and b broadcast against it."""
    a, b = sample(rng, (0.5, 3), shapes[0]), sample(rng, (0.5, 3), shapes[1])
    check_grad(lambda x, a=a, b=b: sp.betainc(a, b, x), sample(rng, (0.1, 0.9), shapes[2], dtype))


@pytest.mark.parametrize("d", [1, 2, 4])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_multigammaln_rule(d, shape, rng):
    """multigammaln(a, d) matches central differences in a, and is the sum of its gammaln terms."""
    a = sample(rng, (2.0, 4.0), shape)
    check_grad(lambda a, d=d: tsp.multigammaln(a, d), a)
    expected = sum(sp.digamma(a - j / 2) for j in range(d))
    np.testing.assert_allclose(gradient(lambda a: np.sum(tsp.multigammaln(a, d)), a)[0], expected, rtol=1e-12)


def _half_order_slopes(x):
    """∂/∂v at v = ½ in closed form (DLMF 10.15.3, 10.15.4, 10.38.6, 10.38.7)."""
    si, ci = sp.sici(2 * x)
    root = np.sqrt(2 / (np.pi * x))
    di = -np.sqrt(1 / (2 * np.pi * x)) * (sp.exp1(2 * x) * np.exp(x) + sp.expi(2 * x) * np.exp(-x))
    return {sp.jv: root * (ci * np.sin(x) - si * np.cos(x)), sp.yv: root * (ci * np.cos(x) + (si - np.pi) * np.sin(x)),
            sp.iv: di, sp.ive: di * np.exp(-x), sp.kv: np.sqrt(np.pi / (2 * x)) * sp.exp1(2 * x) * np.exp(x)}


def _zero_order_slopes(x):
    """∂/∂v at v = 0: (π/2) Y₀, -(π/2) J₀, -K₀, 0 (DLMF 10.15.5, 10.38.5; K₋ᵥ = Kᵥ)."""
    return {sp.jv: np.pi / 2 * sp.y0(x), sp.yv: -np.pi / 2 * sp.j0(x), sp.iv: -sp.k0(x), sp.ive: -sp.k0e(x) * np.exp(-2 * x),
            sp.kv: 0.0}


BESSEL_OF_ORDER = [sp.jv, sp.yv, sp.iv, sp.ive, sp.kv]


@pytest.mark.parametrize("x", [0.05, 0.7, 3.0, 25.0])
@pytest.mark.parametrize("fn", BESSEL_OF_ORDER, ids=name)
def test_order_derivative_closed_forms(fn, x):
    """The derivative in the order at v = ½ and v = 0 is the closed form, to 1e-12 of the function's scale."""
    for v, slopes in [(0.5, _half_order_slopes(x)), (0.0, _zero_order_slopes(x))]:
        scale = max(abs(fn(v, x)), abs(slopes[fn]))
        assert abs(gradient(lambda v: fn(v, x), v)[0] - slopes[fn]) <= 1e-12 * scale


@pytest.mark.parametrize("v, x", [(-2.7, 0.5), (-1.0, 3.7), (0.3, 0.05), (1.5, 2.0), (7.2, 0.5), (20.0, 3.7),
                                  (60.0, 30.0), (2.5, 100.0)], ids=str)
@pytest.mark.parametrize("fn", BESSEL_OF_ORDER, ids=name)
def test_order_derivative_against_central_differences(fn, v, x):
    """Across the series region (x small against v), the quadrature region, negative orders and
    large x, ∂/∂v agrees with a central difference of scipy's function (relative to its scale)."""
    h = 1e-3  # a five-point stencil: truncation and rounding both near 1e-12
    fd = (8 * (fn(v + h, x) - fn(v - h, x)) - (fn(v + 2 * h, x) - fn(v - 2 * h, x))) / (12 * h)
    scale = max(abs(fn(v, x)), abs(fd))
    assert abs(gradient(lambda v: fn(v, x), v)[0] - fd) <= 1e-9 * scale


@pytest.mark.parametrize("fn", BESSEL_OF_ORDER, ids=name)
def test_order_and_x_together_with_broadcasting(fn, rng):
    """The order of shape (3,) and x of shape (2, 1), both differentiated, in both modes."""
    check_grad(fn, sample(rng, (0.2, 3.0), (3,)), sample(rng, (0.5, 4.0), (2, 1)))


def test_order_derivative_second_order_is_refused_and_negative_x_is_nan():
    """The quadrature has no rule of its own: a second derivative in v raises, naming it; for
    x < 0 (where a non-integer order gives nan) the order's derivative is nan, not a number."""
    with pytest.raises(NoRuleError, match=r"jv_dv"):
        gradient(lambda v: gradient(lambda v: sp.jv(v, 2.0), v)[0], 1.5)
    assert np.isnan(gradient(lambda v: sp.jv(v, -2.0), 2.0)[0])


@pytest.mark.parametrize("fn", [sp.gammainc, sp.gammaincc], ids=name)
@pytest.mark.parametrize("shapes", [((), ()), ((3,), (3,)), ((3,), ()), ((2, 1), (3,))], ids=str)
def test_incomplete_gamma_in_a_by_quadrature(fn, shapes, rng):
    """The shape a of gammainc / gammaincc is differentiated by quadrature, together with x,
    from a < 1 (a log singularity at 0) to both tails."""
    a = sample(rng, (0.3, 8.0), shapes[0])
    x = sample(rng, (0.05, 12.0), shapes[1])
    check_grad(fn, a, x)


@pytest.mark.parametrize("a, x", [(0.3, 0.01), (2.5, 10.0), (50.0, 45.0), (200.0, 250.0), (1000.0, 1000.0),
                                  (1e5, 99700.0), (1e6, 1001000.0)], ids=str)
def test_gammainc_in_a_against_finite_differences_far_out(a, x):
    """∂P/∂a by quadrature agrees with a central difference of scipy's gammainc where a and x are
    large (up to a = 1e6, where the density is a narrow peak and log t is nearly ψ(a) under it)."""
    h = (1e-6 if a > 1e4 else 1e-4) * a  # a five-point stencil
    fd = (8 * (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) - (sp.gammainc(a + 2 * h, x) - sp.gammainc(a - 2 * h, x))) / (12 * h)
    assert gradient(lambda a: sp.gammainc(a, x), a)[0] == pytest.approx(fd, rel=1e-8)


@pytest.mark.parametrize("shapes", [((), (), ()), ((3,), (2, 1), (3,)), ((), (3,), (2, 3))], ids=str)
def test_betainc_in_a_and_b_by_quadrature(shapes, rng):
    """The shapes a and b of betainc are differentiated by quadrature, together with x, from
    shapes below 1 (singular ends) to both tails, with broadcasting."""
    a, b = sample(rng, (0.3, 6.0), shapes[0]), sample(rng, (0.3, 6.0), shapes[1])
    check_grad(sp.betainc, a, b, sample(rng, (0.05, 0.95), shapes[2]))


@pytest.mark.parametrize("a, b, x", [(1.0, 1.0, 0.3), (1.0, 1.0, 0.9), (1.0, 4.0, 0.2)], ids=str)
def test_betainc_in_a_and_b_closed_forms(a, b, x):
    """With b = 1, I_x(a, 1) = xᵃ and ∂/∂a = xᵃ log x; with a = 1, I_x(1, b) = 1 - (1-x)ᵇ and
    ∂/∂b = -(1-x)ᵇ log(1-x)."""
    da, db, _ = gradient(sp.betainc, a, b, x)
    if b == 1.0:
        assert da == pytest.approx(x ** a * np.log(x), rel=1e-11)
    assert db == pytest.approx(-(1 - x) ** b * np.log1p(-x), rel=1e-11)


@pytest.mark.parametrize("a, b, x", [(0.3, 0.7, 0.01), (0.3, 0.7, 0.99), (3.0, 0.2, 0.999), (50.0, 40.0, 0.55),
                                     (200.0, 300.0, 0.4), (1000.0, 1000.0, 0.5), (50.0, 40.0, 0.2),
                                     # a narrow peak next to x (t.cdf at df = 1e6), large shapes
                                     (5e5, 0.5, 1e6 / (1e6 + 9)), (1e5, 3.0, 0.99998), (1e4, 2e4, 0.34)], ids=str)
def test_betainc_in_a_and_b_against_finite_differences_far_out(a, b, x):
    """∂I/∂a and ∂I/∂b by quadrature agree with central differences of scipy's betainc at
    singular ends, in the far tails and for large shapes."""
    da, db, _ = gradient(sp.betainc, a, b, x)

    def stencil(f, s):  # five points: truncation and rounding near 1e-12 of the slope
        h = 1e-4 * s
        return (8 * (f(s + h) - f(s - h)) - (f(s + 2 * h) - f(s - 2 * h))) / (12 * h)
    assert da == pytest.approx(stencil(lambda a: sp.betainc(a, b, x), a), rel=1e-8)
    assert db == pytest.approx(stencil(lambda b: sp.betainc(a, b, x), b), rel=1e-8)


def test_betainc_second_derivative_in_a_is_refused():
    """The quadrature has no rule of its own: a second derivative in a or b raises, naming it."""
    with pytest.raises(NoRuleError, match=r"betainc_da"):
        gradient(lambda a: gradient(lambda a: sp.betainc(a, 2.0, 0.3), a)[0], 1.5)
    with pytest.raises(NoRuleError, match=r"betainc_db"):
        gradient(lambda b: gradient(lambda b: sp.betainc(2.0, b, 0.3), b)[0], 1.5)


def test_gammainc_second_derivative_in_a_is_refused():
    """The quadrature has no rule of its own: a second derivative in a raises, naming it."""
    with pytest.raises(NoRuleError, match=r"gammainc_da"):
        gradient(lambda a: gradient(lambda a: sp.gammainc(a, 2.0), a)[0], 1.5)


def test_closed_forms():
    """Slopes at fixed points: J₀' = -J₁, P(a, x)' = xᵃ⁻¹e⁻ˣ/Γ(a), I_x(a, b)' = xᵃ⁻¹(1-x)ᵇ⁻¹/B(a, b)."""
    assert gradient(sp.j0, 1.3)[0] == pytest.approx(-sp.j1(1.3), rel=1e-14)
    assert gradient(lambda x: sp.gammainc(3.0, x), 2.0)[0] == pytest.approx(4 * np.exp(-2) / 2, rel=1e-13)
    assert gradient(lambda x: sp.betainc(2.0, 3.0, x), 0.25)[0] == pytest.approx(0.25 * 0.75 ** 2 * 12, rel=1e-13)
    assert gradient(sp.rgamma, 1.0)[0] == pytest.approx(np.euler_gamma, rel=1e-14)


def test_gammasgn_is_nondifferentiable():
    """gammasgn is piecewise constant: an input only it sees gets ZeroTangent()."""
    assert grad(sp.gammasgn, 1.5)[1][1] is ZERO


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(fn, f, args):
    """The pullbacks are scipy.special ufuncs again: second derivatives match central differences."""
    check_grad(lambda x: gradient(f, x)[0], *args)


def test_special_module_hands_out_scipys_ufuncs():
    """tapegrad.scipy.special.<ufunc> is scipy.special's own; an unknown name is an AttributeError."""
    assert tsp.gammainc is sp.gammainc and tsp.jv is sp.jv
    with pytest.raises(AttributeError, match="no attribute 'not_a_function'"):
        tsp.not_a_function

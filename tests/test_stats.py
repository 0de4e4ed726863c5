"""tapegrad.scipy.stats: scipy's values, and gradients in x, loc, scale and the shape parameters
that match central differences, with scipy's broadcasting."""
import numpy as np
import pytest
import scipy.stats

import tapegrad.scipy.stats as ts
from tapegrad import NoRuleError, check_grad, gradient

CONTINUOUS = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]


def case(name, method, make, grad_of="all"):
    return pytest.param(name, method, make, grad_of, id=f"{name}.{method}")


def u(rng, lo, hi, shape=()):
    return rng.uniform(lo, hi, size=shape)


#: (distribution, method, arguments maker, which arguments to differentiate: "all" or a count from the left)
TABLE = (
    [case("norm", m, lambda r: (u(r, -2, 2, (2, 3)), u(r, -1, 1, (3,)), u(r, 0.5, 2, (2, 1)))) for m in CONTINUOUS]
    + [case("t", m, lambda r: (u(r, -2, 2, (2, 3)), u(r, 1.5, 5), u(r, -1, 1, (3,)), u(r, 0.5, 2))) for m in ["pdf", "logpdf"]]
    # t's cdf goes through betainc: x, loc and scale only (df is passed as a constant)
    + [case("t", m, lambda r: (u(r, -2, 2, (2, 3)), 3.5, u(r, -1, 1, (3,)), u(r, 0.5, 2)), grad_of=(0, 2, 3))
       for m in ["cdf", "logcdf", "sf", "logsf"]]
    + [case("gamma", m, lambda r: (u(r, 1, 3, (2, 3)), u(r, 1.5, 3, (3,)), u(r, 0, 0.5), u(r, 0.5, 2)))
       for m in ["pdf", "logpdf"]]
    + [case("gamma", m, lambda r: (u(r, 1, 3, (2, 3)), u(r, 1.5, 3, (3,)), u(r, 0, 0.5), u(r, 0.5, 2)))
       for m in ["cdf", "logcdf", "sf", "logsf"]]
    + [case("chi2", m, lambda r: (u(r, 1, 3, (3,)), u(r, 2, 5), 0.0, u(r, 0.5, 2)), grad_of=(0, 1, 3))
       for m in ["pdf", "logpdf"]]
    + [case("chi2", m, lambda r: (u(r, 1, 3, (3,)), u(r, 2, 5), 0.0, u(r, 0.5, 2)), grad_of=(0, 1, 3)) for m in ["cdf", "sf"]]
    + [case("beta", m, lambda r: (u(r, 0.2, 0.8, (2, 3)), u(r, 1.5, 3, (3,)), u(r, 1.5, 3, (2, 1))))
       for m in ["pdf", "logpdf"]]
    + [case("beta", m, lambda r: (u(r, 0.2, 0.8, (2, 3)), 2.5, 1.5, u(r, -0.1, 0.1), u(r, 1, 1.2)), grad_of=(0, 3, 4))
       for m in ["cdf", "logcdf", "sf", "logsf"]]
    + [case("poisson", m, lambda r: (np.array([0.0, 1.0, 3.0, 6.0]), u(r, 1, 4, (2, 1))), grad_of=(1,))
       for m in ["pmf", "logpmf", "cdf", "logcdf", "sf", "logsf"]]
    + [case("dirichlet", m, lambda r: (np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]]), u(r, 1.5, 3, (3,))))
       for m in ["pdf", "logpdf"]]
    + [case("multivariate_normal", m, lambda r: (u(r, -1, 1, (4, 2)), u(r, -1, 1, (2,)),
                                                 np.array([[2.0, 0.3], [0.3, 1.0]])))
       for m in ["pdf", "logpdf"]]
    + [case("multivariate_normal", "logpdf", lambda r: (u(r, -1, 1, (2,)), np.zeros(2), u(r, 0.5, 2, (2,))), grad_of=(0, 2))]
    + [case("multivariate_normal", "pdf", lambda r: (u(r, -1, 1, (3, 2)), None, np.array([[1.5, 0.2], [0.2, 1.0]])), grad_of=(0, 2))]
)

ENTROPY = [
    ("norm", lambda r: (u(r, -1, 1, (3,)), u(r, 0.5, 2, (3,)))), ("t", lambda r: (u(r, 1.5, 5), 0.0, u(r, 0.5, 2))),
    ("gamma", lambda r: (u(r, 0.5, 3, (2,)), 0.0, u(r, 0.5, 2))), ("chi2", lambda r: (u(r, 1, 5), 0.0, u(r, 0.5, 2))),
    ("beta", lambda r: (u(r, 0.5, 3), u(r, 0.5, 3), 0.0, u(r, 0.5, 2))),
    ("dirichlet", lambda r: (u(r, 0.5, 3, (3,)),)),
    ("multivariate_normal", lambda r: (np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]]))),
]


def _split(args, grad_of):
    """The differentiated arguments, and f of them with the others fixed (as default arguments:
    check_grad would trace a closure's floats)."""
    idx = [i for i, a in enumerate(args) if a is not None] if grad_of == "all" else list(grad_of)

    def f(*xs, args=args, idx=idx, fn=None):
        full = list(args)
        for i, x in zip(idx, xs):
            full[i] = x
        return fn(*full)
    return idx, f


@pytest.mark.parametrize("name, method, make, grad_of", TABLE)
def test_values_are_scipys(name, method, make, grad_of, rng):
    """Each method returns scipy's values, with scipy's broadcast shape."""
    args = make(rng)
    ours, theirs = getattr(getattr(ts, name), method)(*args), getattr(getattr(scipy.stats, name), method)(*args)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert np.shape(ours) == np.shape(theirs)


@pytest.mark.parametrize("name, method, make, grad_of", TABLE)
def test_gradients_match_central_differences(name, method, make, grad_of, rng):
    """x, loc, scale and the shape parameters (where differentiable) match central differences in both modes."""
    args = make(rng)
    idx, f = _split(args, grad_of)
    fn = getattr(getattr(ts, name), method)
    check_grad(lambda *xs: f(*xs, fn=fn), *(args[i] for i in idx))


@pytest.mark.parametrize("name, make", ENTROPY, ids=[e[0] for e in ENTROPY])
def test_entropy(name, make, rng):
    """entropy is scipy's, and differentiable in every parameter."""
    args = make(rng)
    fn = getattr(getattr(ts, name), "entropy")
    np.testing.assert_allclose(fn(*args), getattr(scipy.stats, name).entropy(*args), rtol=1e-10)
    check_grad(fn, *args)


def test_norm_logpdf_closed_form():
    """d/dμ log φ = (x - μ)/σ², d/dσ log φ = ((x - μ)² - σ²)/σ³."""
    dmu, dsigma = gradient(lambda m, s: ts.norm.logpdf(1.0, m, s), 0.5, 2.0)
    assert dmu == pytest.approx(0.125) and dsigma == pytest.approx((0.25 - 4) / 8)


def test_poisson_logpmf_closed_form():
    """d/dμ log P(k; μ) = k/μ - 1, for each k at once."""
    (dmu,) = gradient(lambda mu: np.sum(ts.poisson.logpmf(np.array([0, 2, 5]), mu)), 2.0)
    assert dmu == pytest.approx(-1 + 0 - 1 + 1 - 1 + 2.5 - 0 + 0)


def test_shape_parameter_of_a_cdf_is_not_silently_zero():
    """beta.cdf's shape a goes through betainc, which has no derivative in a: an error, not a zero."""
    with pytest.raises(NoRuleError, match=r"scipy\.special\.betainc with respect to its argument a"):
        gradient(lambda a: ts.beta.cdf(0.5, a, 2.0), 2.0)


def test_outside_support_is_zero_density_with_finite_gradient():
    """Off the support the density is 0 (log-density -inf) and the gradient there 0, not nan."""
    assert ts.gamma.pdf(-1.0, 2.0) == 0.0 and ts.beta.logpdf(1.5, 2.0, 2.0) == -np.inf
    assert gradient(lambda x: ts.gamma.pdf(x, 2.0), -1.0) == (0.0,)


def test_second_order_through_norm_and_gamma(rng):
    """The methods are numpy and scipy.special calls: second derivatives match central differences."""
    check_grad(lambda s: gradient(lambda s: ts.norm.logcdf(0.3, 0.1, s), s)[0], 1.5)
    check_grad(lambda a: gradient(lambda a: ts.gamma.logpdf(1.2, a, 0.0, 1.3), a)[0], 2.5)

"""tapegrad.scipy.stats: scipy's values, and gradients in x, loc, scale and the shape parameters
that match central differences, with scipy's broadcasting; every other public name of scipy's
distributions (scipy's own, refusing traced values), and frozen distributions."""
import copy
import pickle

import numpy as np
import pytest
import scipy.special
import scipy.stats

import tapegrad.scipy.stats as ts
from tapegrad import NoRuleError, check_grad, gradient

#: the primitive poisson.entropy records (its rule is in tapegrad.rules.stats)
EXERCISED = {ts.poisson_mean_gammaln}
ORDER2 = [(ts.poisson_mean_gammaln, lambda mu: ts.poisson_mean_gammaln(mu, 1), (np.array([0.3, 2.0, 15.0]),)),
          (ts.poisson_mean_gammaln, lambda mu: ts.poisson_mean_gammaln(mu, 3), (4.5,)),
          # the distributions of tapegrad.scipy.stats_more, one continuous and one discrete (by a rule they record)
          (scipy.special.xlogy, lambda x, c, s: np.sum(ts.weibull_min.logpdf(x, c, 0.1, s)),
           (np.array([0.5, 1.5]), 1.7, 1.2)),
          (scipy.special.gammaln, lambda n, p: np.sum(ts.nbinom.logpmf(np.array([0.0, 2.0, 5.0]), n, p)), (2.5, 0.4))]

CONTINUOUS = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]


def case(name, method, make, grad_of="all"):
    return pytest.param(name, method, make, grad_of, id=f"{name}.{method}")


def u(rng, lo, hi, shape=()):
    return rng.uniform(lo, hi, size=shape)


LOC_SCALE = ["logpdf", "cdf", "sf", "logsf"]


def _loc_scale(r, lo, hi, *shapes):
    """x in [lo, hi), shape parameters, loc near 0 and scale near 1: inside the support."""
    return (u(r, lo, hi, (2, 3)), *shapes, u(r, -0.2, 0.2, (3,)), u(r, 0.8, 1.2, (2, 1)))


#: the distributions of tapegrad.scipy.stats_more, each method at points inside the support
MORE = (
    [case("expon", m, lambda r: _loc_scale(r, 1, 3)) for m in LOC_SCALE]
    + [case("lognorm", m, lambda r: _loc_scale(r, 1, 3, u(r, 0.5, 1.5))) for m in LOC_SCALE]
    + [case("laplace", m, lambda r: _loc_scale(r, -2, 2)) for m in LOC_SCALE]
    + [case("cauchy", m, lambda r: _loc_scale(r, -2, 2)) for m in LOC_SCALE]
    + [case("uniform", m, lambda r: _loc_scale(r, 0.3, 0.7)) for m in LOC_SCALE]
    + [case("logistic", m, lambda r: _loc_scale(r, -2, 2)) for m in LOC_SCALE + ["logcdf"]]
    + [case("halfnorm", m, lambda r: _loc_scale(r, 1, 3)) for m in LOC_SCALE]
    + [case("invgamma", m, lambda r: _loc_scale(r, 0.5, 3, u(r, 1.5, 3, (3,)))) for m in LOC_SCALE]
    + [case("weibull_min", m, lambda r: _loc_scale(r, 0.5, 3, u(r, 0.5, 3))) for m in LOC_SCALE]
    + [case("pareto", m, lambda r: _loc_scale(r, 2, 4, u(r, 1, 3))) for m in LOC_SCALE]
    + [case("binom", m, lambda r: (np.array([0.0, 1.0, 3.0, 6.0]), 6, u(r, 0.2, 0.8, (2, 1))), grad_of=(2,))
       for m in ["logpmf", "cdf", "sf"]]
    + [case("nbinom", m, lambda r: (np.array([0.0, 1.0, 3.0, 6.0]), u(r, 1.5, 4), u(r, 0.2, 0.8, (2, 1))),
            grad_of=(1, 2)) for m in ["logpmf", "cdf", "sf"]]
    + [case("bernoulli", m, lambda r: (np.array([0.0, 1.0, 1.0, 0.0]), u(r, 0.2, 0.8, (2, 1))), grad_of=(1,))
       for m in ["logpmf", "cdf", "sf"]]
    + [case("geom", m, lambda r: (np.array([1.0, 2.0, 5.0]), u(r, 0.2, 0.8, (2, 1)), 0.0), grad_of=(1,))
       for m in ["pmf", "logpmf", "cdf", "sf", "logsf"]]
)

#: (distribution, method, arguments maker, which arguments to differentiate: "all" or a count from the left)
TABLE = (
    [case("norm", m, lambda r: (u(r, -2, 2, (2, 3)), u(r, -1, 1, (3,)), u(r, 0.5, 2, (2, 1)))) for m in CONTINUOUS]
    + [case("t", m, lambda r: (u(r, -2, 2, (2, 3)), u(r, 1.5, 5), u(r, -1, 1, (3,)), u(r, 0.5, 2))) for m in ["pdf", "logpdf"]]
    # t's cdf goes through betainc, whose shapes are differentiated by quadrature
    + [case("t", m, lambda r: (u(r, -2, 2, (2, 3)), u(r, 1.5, 5, (2, 1)), u(r, -1, 1, (3,)), u(r, 0.5, 2)))
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
    + [case("beta", m, lambda r: (u(r, 0.2, 0.8, (2, 3)), u(r, 0.5, 3, (3,)), u(r, 0.5, 3, (2, 1)), u(r, -0.1, 0.1),
                                  u(r, 1, 1.2)))
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
    + MORE
)

ENTROPY = [
    ("norm", lambda r: (u(r, -1, 1, (3,)), u(r, 0.5, 2, (3,)))), ("t", lambda r: (u(r, 1.5, 5), 0.0, u(r, 0.5, 2))),
    ("gamma", lambda r: (u(r, 0.5, 3, (2,)), 0.0, u(r, 0.5, 2))), ("chi2", lambda r: (u(r, 1, 5), 0.0, u(r, 0.5, 2))),
    ("beta", lambda r: (u(r, 0.5, 3), u(r, 0.5, 3), 0.0, u(r, 0.5, 2))),
    ("dirichlet", lambda r: (u(r, 0.5, 3, (3,)),)),
    ("poisson", lambda r: (np.array([0.05, 0.7, 3.0, 40.0]), np.array([[0.0], [2.0]]))),
    ("multivariate_normal", lambda r: (np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]]))),
    ("expon", lambda r: (u(r, -1, 1), u(r, 0.5, 2, (2,)))), ("laplace", lambda r: (u(r, -1, 1), u(r, 0.5, 2))),
    ("cauchy", lambda r: (u(r, -1, 1), u(r, 0.5, 2))), ("uniform", lambda r: (u(r, -1, 1), u(r, 0.5, 2))),
    ("logistic", lambda r: (u(r, -1, 1), u(r, 0.5, 2))), ("bernoulli", lambda r: (u(r, 0.1, 0.9, (3,)),)),
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


def test_shape_parameters_of_the_cdfs_closed_forms():
    """beta.cdf(x, a, 1) = xᵃ: d/da = xᵃ log x; beta.cdf(x, 1, b) = 1 - (1-x)ᵇ: d/db = -(1-x)ᵇ log(1-x)."""
    assert gradient(lambda a: ts.beta.cdf(0.3, a, 1.0), 2.0)[0] == pytest.approx(0.09 * np.log(0.3), rel=1e-11)
    assert gradient(lambda b: ts.beta.cdf(0.3, 1.0, b), 2.0)[0] == pytest.approx(-0.49 * np.log(0.7), rel=1e-11)


def test_poisson_entropy_closed_form_and_far_out():
    """d/dμ H = -log μ + E[log(K + 1)]; for large μ, H is 0.5 log(2πeμ) - 1/(12μ) - 1/(24μ²) - 19/(360μ³)
    (where scipy's own sum no longer converges)."""
    k = np.arange(60.0)
    expected = -np.log(2.0) + np.sum(scipy.stats.poisson.pmf(k, 2.0) * np.log(k + 1))
    assert gradient(ts.poisson.entropy, 2.0)[0] == pytest.approx(expected, rel=1e-12)
    for mu, rel in [(1e4, 1e-11), (1e6, 1e-9)]:  # μ log μ and log μ! cancel: about 1e-16 μ log μ is lost
        series = 0.5 * np.log(2 * np.pi * np.e * mu) - 1 / (12 * mu) - 1 / (24 * mu ** 2) - 19 / (360 * mu ** 3)
        assert ts.poisson.entropy(mu) == pytest.approx(series, rel=rel)
    assert ts.poisson.entropy(0.0) == 0.0


def test_poisson_entropy_second_order():
    """poisson.entropy's derivative is the same primitive again: second derivatives match central differences."""
    check_grad(ts.poisson.entropy, np.array([0.3, 2.0, 15.0, 250.0]), order=2)


@pytest.mark.parametrize("method", ["cdf", "logcdf"])
def test_multivariate_normal_cdf_is_scipys_on_plain_values_and_refuses_a_traced_one(method):
    """scipy's Monte Carlo cdf on plain values; a traced argument raises, naming the method and the way out."""
    x, mean, cov = np.array([[0.5, 1.0], [-0.2, 0.3]]), np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]])
    np.testing.assert_allclose(getattr(ts.multivariate_normal, method)(x, mean, cov),
                               getattr(scipy.stats.multivariate_normal, method)(x, mean, cov), rtol=1e-4)
    with pytest.raises(NoRuleError, match=rf"multivariate_normal\.{method}\(traced float64\[2,2\], float64\[2\], "
                                          rf"float64\[2,2\]\) at test_stats\.py:\d+: .* tapegrad\.scipy\.stats\.norm\.{method}$"):
        gradient(lambda x, mean=mean, cov=cov: np.sum(getattr(ts.multivariate_normal, method)(x, mean, cov)), x)


@pytest.mark.parametrize("name, method, make, grad_of", TABLE)
def test_float32_arguments_get_float32_gradients(name, method, make, grad_of, rng):
    """Single-precision arguments: every differentiated one gets a float32 gradient of its own shape."""
    args = make(rng)
    idx, f = _split(args, grad_of)
    fn = getattr(getattr(ts, name), method)
    xs = [np.asarray(args[i], np.float32) for i in idx]
    grads = gradient(lambda *xs: np.sum(f(*xs, fn=fn)), *xs)
    assert [(np.asarray(g).dtype, np.shape(g)) for g in grads] == [(np.dtype(np.float32), np.shape(x)) for x in xs]


def test_outside_support_is_zero_density_with_finite_gradient():
    """Off the support the density is 0 (log-density -inf) and the gradient there 0, not nan."""
    assert ts.gamma.pdf(-1.0, 2.0) == 0.0 and ts.beta.logpdf(1.5, 2.0, 2.0) == -np.inf
    assert gradient(lambda x: ts.gamma.pdf(x, 2.0), -1.0) == (0.0,)


def test_second_order_through_norm_and_gamma(rng):
    """The methods are numpy and scipy.special calls: second derivatives match central differences."""
    check_grad(lambda s: gradient(lambda s: ts.norm.logcdf(0.3, 0.1, s), s)[0], 1.5)
    check_grad(lambda a: gradient(lambda a: ts.gamma.logpdf(1.2, a, 0.0, 1.3), a)[0], 2.5)


# --- scipy's other methods, and frozen distributions ---

#: parameters each distribution is frozen with (plain), for the tests of frozen distributions
FROZEN = {
    "norm": (0.3, 1.7), "t": (4.0, 0.2, 1.5), "gamma": (2.5, 0.1, 1.2), "chi2": (3.0, 0.0, 1.1),
    "beta": (2.0, 3.0, 0.0, 1.0), "poisson": (2.5,), "dirichlet": (np.array([1.5, 2.0, 3.0]),),
    "multivariate_normal": (np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]])),
    "expon": (0.3, 1.7), "lognorm": (0.8, 0.1, 1.2), "laplace": (0.3, 1.7), "cauchy": (0.3, 1.7),
    "uniform": (0.3, 1.7), "logistic": (0.3, 1.7), "halfnorm": (0.1, 1.2), "invgamma": (2.5, 0.1, 1.2),
    "weibull_min": (1.5, 0.1, 1.2), "pareto": (2.5, 0.1, 1.2), "binom": (6, 0.4), "nbinom": (3.5, 0.4),
    "bernoulli": (0.3,), "geom": (0.4,),
}


def public(obj):
    return [n for n in dir(obj) if not n.startswith("_")]


def test_every_distribution_has_frozen_parameters():
    """The tables below cover every distribution tapegrad.scipy.stats exposes."""
    assert sorted(FROZEN) == sorted(ts.__all__)


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_every_public_name_of_scipys_distribution_is_reachable(name):
    """Every public attribute and method of scipy's distribution of the same name is one of
    tapegrad's (methods callable), and dir() lists it."""
    ours, theirs = getattr(ts, name), getattr(scipy.stats, name)
    for attr in public(theirs):
        assert hasattr(ours, attr), attr
        assert callable(getattr(ours, attr)) == callable(getattr(theirs, attr)), attr
    assert set(public(theirs)) <= set(dir(ours))
    assert callable(ours)


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_every_public_name_of_scipys_frozen_distribution_is_reachable(name):
    """Calling a distribution freezes it as in scipy, with every public name of scipy's frozen distribution."""
    ours, theirs = getattr(ts, name)(*FROZEN[name]), getattr(scipy.stats, name)(*FROZEN[name])
    for attr in public(theirs):
        assert hasattr(ours, attr), attr
        assert callable(getattr(ours, attr)) == callable(getattr(theirs, attr)), attr
    assert set(public(theirs)) <= set(dir(ours))


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_frozen_methods_are_scipys_values(name, rng):
    """Each method tapegrad writes gives, frozen, what scipy's frozen distribution gives."""
    params = FROZEN[name]
    ours, theirs = getattr(ts, name)(*params), getattr(scipy.stats, name)(*params)
    x = {"poisson": np.array([0.0, 2.0, 5.0]), "dirichlet": np.array([0.2, 0.3, 0.5]),
         "multivariate_normal": rng.uniform(-1, 1, (3, 2)), "beta": np.array([0.2, 0.7]),
         "pareto": np.array([1.5, 2.9]), "geom": np.array([1.0, 3.0]), "bernoulli": np.array([0.0, 1.0])}.get(name, np.array([0.5, 1.9]))
    for method in sorted(getattr(ts, name)._own - {"freeze"}):
        if method in ("cdf", "logcdf") and name == "multivariate_normal":
            continue  # randomized quasi-Monte Carlo (tested above)
        call = {"interval": (0.9,), "ppf": (np.array([0.1, 0.8]),), "isf": (np.array([0.1, 0.8]),),
                "stats": ()}.get(method, () if method in ("entropy", "mean", "var", "std", "median", "cov") else (x,))
        np.testing.assert_allclose(getattr(ours, method)(*call), getattr(theirs, method)(*call), rtol=1e-10,
                                   err_msg=method)


def test_frozen_parameters_are_differentiated(rng):
    """norm(loc, scale).logpdf(x) is norm.logpdf(x, loc, scale): the frozen parameters get gradients,
    by keyword too."""
    x = rng.uniform(-1, 1, 4)
    frozen = gradient(lambda m, s: np.sum(ts.norm(m, scale=s).logpdf(x)), 0.3, 1.7)
    assert frozen == pytest.approx(gradient(lambda m, s: np.sum(ts.norm.logpdf(x, m, s)), 0.3, 1.7), rel=1e-14)
    check_grad(lambda a: ts.dirichlet(a).entropy() + np.sum(ts.dirichlet(a).mean() ** 2), np.array([1.5, 2.0, 3.0]))
    check_grad(lambda mean, cov: np.sum(ts.multivariate_normal(mean, cov).logpdf(x[:2])), *FROZEN["multivariate_normal"])


def test_scipys_own_methods_give_scipys_values():
    """A method tapegrad does not write is scipy's own: the same values, random draws included."""
    alpha = np.array([1.5, 2.0, 3.0])
    np.testing.assert_array_equal(ts.dirichlet.rvs(alpha, size=2, random_state=1),
                                  scipy.stats.dirichlet.rvs(alpha, size=2, random_state=1))
    np.testing.assert_array_equal(ts.norm.rvs(1.0, 2.0, size=3, random_state=0),
                                  scipy.stats.norm.rvs(1.0, 2.0, size=3, random_state=0))
    np.testing.assert_array_equal(ts.gamma.ppf([0.1, 0.5], 2.5), scipy.stats.gamma.ppf([0.1, 0.5], 2.5))
    np.testing.assert_array_equal(ts.poisson.median(3.2), scipy.stats.poisson.median(3.2))
    np.testing.assert_array_equal(ts.t(4.0).interval(0.9), scipy.stats.t(4.0).interval(0.9))
    data = np.array([0.3, 1.2, -0.4, 2.2])
    assert ts.norm.fit(data) == scipy.stats.norm.fit(data)
    assert (ts.norm.a, ts.norm.numargs, ts.gamma.shapes) == (scipy.stats.norm.a, 0, "a")


def test_setting_random_state_sets_scipys():
    """scipy's own state lives in scipy's object: seeding tapegrad's distribution seeds its draws."""
    was = scipy.stats.norm.random_state
    try:
        ts.norm.random_state = 7
        first = ts.norm.rvs(size=2)
        ts.norm.random_state = 7
        np.testing.assert_array_equal(scipy.stats.norm.rvs(size=2), first)
    finally:
        scipy.stats.norm.random_state = was
    frozen = ts.norm(1.0, 2.0)
    frozen.random_state = 3
    np.testing.assert_array_equal(frozen.rvs(size=2), scipy.stats.norm(1.0, 2.0).rvs(size=2, random_state=3))


@pytest.mark.parametrize("call, shown", [
    (lambda m: np.sum(ts.norm.rvs(m, 1.0, size=3)), r"norm\.rvs\(traced float64, float64, size=int64\)"),
    (lambda m: ts.gamma.ppf(0.5, m), r"gamma\.ppf\(float64, traced float64\)"),
    (lambda m: np.sum(ts.dirichlet.rvs(np.array([1.0, m]))), r"dirichlet\.rvs\(traced float64\[2\]\)"),
    (lambda m: ts.t(m).median(), r"t\(traced float64\)\.median\(\)"),
], ids=["norm.rvs", "gamma.ppf", "dirichlet.rvs", "frozen t.median"])
def test_scipys_own_method_refuses_a_traced_value(call, shown):
    """scipy's own method given a traced value (or frozen with one) raises NoRuleError naming the
    method, the line, that it is not differentiated, and what is."""
    with pytest.raises(NoRuleError, match=rf"tapegrad\.scipy\.stats\.{shown} at test_stats\.py:\d+: it is "
                                          r"scipy\.stats\.\S+, scipy's own, which tapegrad does not differentiate"
                                          r".* tapegrad differentiates \w+'s \w+, \w+"):
        gradient(call, 2.0)


def test_rvs_refusal_names_the_reparameterization():
    """The refusal of norm.rvs with a traced loc says how to draw samples differentiable in loc and scale."""
    with pytest.raises(NoRuleError, match=r"draw them with loc=0, scale=1 and transform them: loc \+ scale \* sample$"):
        gradient(lambda m: np.sum(ts.norm.rvs(m, 1.0, size=3)), 2.0)


def test_frozen_attribute_of_traced_parameters_is_refused():
    """An attribute scipy's frozen distribution computes from the parameters (multivariate_normal's
    mean) would drop their gradient: it raises, naming the attribute and the differentiable methods."""
    with pytest.raises(NoRuleError, match=r"multivariate_normal\(traced float64\[2\], float64\[2,2\]\)\.mean at "
                                          r"test_stats\.py:\d+: .* entropy, logpdf, pdf$"):
        gradient(lambda m: np.sum(ts.multivariate_normal(m, FROZEN["multivariate_normal"][1]).mean),
                 np.zeros(2))


#: (distribution, method, arguments maker, differentiated arguments): the moments and norm's quantiles
MOMENTS = (
    [case("norm", m, lambda r: (u(r, -1, 1, (3,)), u(r, 0.5, 2, (2, 1)))) for m in ["mean", "var", "std", "median"]]
    + [case("norm", m, lambda r: (u(r, 0.05, 0.95, (3,)), u(r, -1, 1, (2, 1)), u(r, 0.5, 2))) for m in ["ppf", "isf"]]
    + [case("t", m, lambda r: (u(r, 2.5, 6, (3,)), u(r, -1, 1), u(r, 0.5, 2))) for m in ["mean", "var", "std"]]
    + [case("gamma", m, lambda r: (u(r, 0.5, 3, (3,)), u(r, -1, 1), u(r, 0.5, 2))) for m in ["mean", "var", "std"]]
    + [case("chi2", m, lambda r: (u(r, 1, 5, (3,)), u(r, -1, 1), u(r, 0.5, 2))) for m in ["mean", "var", "std"]]
    + [case("beta", m, lambda r: (u(r, 0.5, 3, (3,)), u(r, 0.5, 3), u(r, -1, 1), u(r, 0.5, 2)))
       for m in ["mean", "var", "std"]]
    + [case("poisson", m, lambda r: (u(r, 0.5, 5, (3,)), 1.0), grad_of=(0,)) for m in ["mean", "var", "std"]]
    + [case("dirichlet", m, lambda r: (u(r, 0.5, 3, (4,)),)) for m in ["mean", "var", "cov"]]
    + [case(d, m, lambda r: (u(r, -1, 1, (3,)), u(r, 0.5, 2))) for m in ["mean", "var"]
       for d in ["expon", "laplace", "uniform", "logistic", "halfnorm"]]
    + [case(d, m, lambda r: (u(r, 2.5, 4, (3,)), u(r, -1, 1), u(r, 0.5, 2))) for m in ["mean", "var"]
       for d in ["lognorm", "invgamma", "weibull_min", "pareto"]]
    + [case("binom", m, lambda r: (6, u(r, 0.1, 0.9, (3,))), grad_of=(1,)) for m in ["mean", "var"]]
    + [case("nbinom", m, lambda r: (u(r, 1, 4), u(r, 0.1, 0.9, (3,)))) for m in ["mean", "var"]]
    + [case(d, m, lambda r: (u(r, 0.1, 0.9, (3,)),)) for m in ["mean", "var"] for d in ["bernoulli", "geom"]]
)


@pytest.mark.parametrize("name, method, make, grad_of", MOMENTS)
def test_moments_are_scipys_and_differentiable(name, method, make, grad_of, rng):
    """The moments (and norm's quantiles) are scipy's values, with scipy's shapes, and match central differences."""
    args = make(rng)
    ours, theirs = getattr(getattr(ts, name), method)(*args), getattr(getattr(scipy.stats, name), method)(*args)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert np.shape(ours) == np.shape(theirs)
    idx, f = _split(args, grad_of)
    fn = getattr(getattr(ts, name), method)
    check_grad(lambda *xs: f(*xs, fn=fn), *(args[i] for i in idx))


def test_norm_quantiles_closed_forms():
    """d/dq ppf = 1/φ(z) · σ, d/dσ ppf = z; interval is (ppf((1-c)/2), ppf((1+c)/2)); stats gives the moments asked."""
    z = scipy.special.ndtri(0.9)
    dq, dloc, dscale = gradient(lambda q, m, s: ts.norm.ppf(q, m, s), 0.9, 1.0, 2.0)
    assert (dq, dloc, dscale) == pytest.approx((2.0 / scipy.stats.norm.pdf(z), 1.0, z), rel=1e-12)
    assert gradient(lambda s: ts.norm.interval(0.8, 1.0, s)[1], 2.0)[0] == pytest.approx(z, rel=1e-12)
    assert ts.norm.stats(1.0, 2.0, moments="mvsk") == (1.0, 4.0, 0.0, 0.0)
    assert ts.norm.stats(1.0, 2.0, moments="v") == 4.0
    with pytest.raises(ValueError, match="between 0 and 1"):
        ts.norm.interval(1.5)


def test_t_moments_where_they_do_not_exist():
    """As scipy: t's mean is inf for df ≤ 1, its variance inf for 1 < df ≤ 2 and nan for df ≤ 1."""
    df = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    np.testing.assert_array_equal(ts.t.mean(df), scipy.stats.t.mean(df))
    np.testing.assert_array_equal(ts.t.var(df), scipy.stats.t.var(df))


def test_distributions_and_frozen_ones_pickle_and_copy():
    """A distribution and a frozen one survive pickling and deep copies, with their methods (scipy's too)."""
    frozen = pickle.loads(pickle.dumps(ts.norm(1.0, 2.0)))
    assert (repr(frozen), frozen.mean(), frozen.var()) == ("tapegrad.scipy.stats.norm(1.0, 2.0)", 1.0, 4.0)
    np.testing.assert_array_equal(frozen.rvs(size=2, random_state=0), scipy.stats.norm(1.0, 2.0).rvs(size=2, random_state=0))
    assert copy.deepcopy(ts.gamma(2.0)).median() == scipy.stats.gamma(2.0).median()
    assert pickle.loads(pickle.dumps(ts.dirichlet)).logpdf(np.array([0.5, 0.5]), np.ones(2)) == 0.0

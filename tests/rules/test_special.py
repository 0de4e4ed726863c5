"""Rules of scipy.special: its ufuncs, and those of the replacements in tapegrad.scipy.special
for the functions scipy writes in Python (polygamma, logsumexp, softmax, log_softmax).

What the replacements are on their own (names, results on plain values, the error that points
to them) is tested in tests/test_scipy.py."""
import numpy as np
import pytest
import scipy.special as sp

import tapegrad
from tapegrad import NO_TANGENT, check_grad, grad, gradient, rrule
from tapegrad.tangents import getitem

from _rule_tables import DTYPES, SHAPES, middle, name, sample
from tapegrad.scipy.special import log_softmax, logsumexp, polygamma, softmax
# what logsumexp, softmax and log_softmax record, once their arguments are normalized: their rules
from tapegrad.scipy.special import log_softmax_op, logsumexp_op, softmax_op

#: (ufunc, interval where it is smooth)
UNARY = [
    (sp.gammaln, (0.5, 3)), (sp.gamma, (0.5, 3)), (sp.digamma, (0.5, 3)), (sp.psi, (0.5, 3)),
    (sp.erf, (-2, 2)), (sp.erfc, (-2, 2)), (sp.erfinv, (-0.8, 0.8)), (sp.erfcinv, (0.2, 1.8)),
    (sp.erfcx, (-2, 2)), (sp.expit, (-3, 3)), (sp.logit, (0.1, 0.9)), (sp.log_expit, (-3, 3)),
    (sp.ndtr, (-2, 2)), (sp.log_ndtr, (-3, 2)), (sp.ndtri, (0.1, 0.9)),
    (sp.i0, (-2, 2)), (sp.i1, (-2, 2)), (sp.i0e, (0.1, 2)), (sp.i1e, (0.1, 2)),
    (sp.entr, (0.1, 2)),
]
#: (ufunc, interval of x, interval of y)
BINARY = [
    (sp.beta, (0.5, 3), (0.5, 3)), (sp.betaln, (0.5, 3), (0.5, 3)),
    (sp.xlogy, (-2, 2), (0.1, 3)), (sp.xlog1py, (-2, 2), (-0.5, 3)),
    (sp.rel_entr, (0.1, 2), (0.1, 2)),
]
#: the replacements of scipy.special's plain Python functions
REPLACEMENTS = [polygamma, logsumexp, softmax, log_softmax]
#: (shape, axis): every kind of axis where the shape has one
SHAPE_AXIS = [((), None), ((3,), None), ((3,), 0), ((3,), -1), ((2, 3), None), ((2, 3), 0),
              ((2, 3), -1), ((2, 3), (0, 1)), ((2, 3, 2), (0, -1))]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((1, 3), (2, 1)), ((), (2, 3))]
#: computed in float64 by scipy whatever the input (polygamma), so their tangents are too
FLOAT64_INSIDE = {sp.digamma}

EXERCISED = ({fn for fn, _ in UNARY} | {fn for fn, _, _ in BINARY}
             | {polygamma, logsumexp_op, softmax_op, log_softmax_op})


# --- ufuncs ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_rule(fn, domain, shape, dtype, rng):
    """Each unary scipy.special rule matches central differences for every shape and dtype."""
    check_grad(fn, sample(rng, domain, shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("xshape, yshape", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("fn, xdomain, ydomain", BINARY, ids=name)
def test_binary_rule(fn, xdomain, ydomain, xshape, yshape, dtype, rng):
    """Each binary scipy.special rule differentiates both arguments, broadcasting undone."""
    check_grad(fn, sample(rng, xdomain, xshape, dtype), sample(rng, ydomain, yshape, dtype))


@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_of_python_scalar_and_0d_array(fn, domain):
    """A Python float gets a float gradient and a 0-d array a 0-d array of its dtype."""
    x = middle(domain)
    check_grad(fn, x)
    assert type(grad(fn, x)[1][1]) is float
    for dtype in DTYPES:
        dx = grad(fn, np.array(x, dtype=dtype))[1][1]
        assert (dx.shape, dx.dtype) == ((), dtype)


@pytest.mark.parametrize("fn, xdomain, ydomain", BINARY, ids=name)
def test_binary_with_python_scalars(fn, xdomain, ydomain, rng):
    """Python floats on either side are differentiated like 0-d arrays."""
    check_grad(fn, middle(xdomain), middle(ydomain))
    check_grad(fn, middle(xdomain), sample(rng, ydomain, (2, 3)))


@pytest.mark.parametrize("fn, domain", [r for r in UNARY if r[0] not in FLOAT64_INSIDE], ids=name)
def test_pullback_keeps_float32(fn, domain):
    """Given float32 values and cotangent, a pullback computes in float32 (constants are weak)."""
    x = np.full((3,), middle(domain), dtype=np.float32)
    y, back = rrule(fn, x)
    assert getitem(back(np.ones(np.shape(y), dtype=np.float32)), 1).dtype == np.float32


@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_pullback_is_traceable(fn, domain):
    """A pullback is numpy code a Tracer can record: second derivatives match central differences."""
    check_grad(lambda t: gradient(fn, t)[0], middle(domain))


@pytest.mark.parametrize("fn, xdomain, ydomain", BINARY, ids=name)
def test_binary_pullback_is_traceable(fn, xdomain, ydomain):
    """Second derivatives of the binary rules, through both tangents, match central differences."""
    def both(x, y):
        dx, dy = gradient(fn, x, y)
        return dx + 3 * dy

    check_grad(both, middle(xdomain), middle(ydomain))


# --- polygamma ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("n", [0, 1, 2, 3, np.array([0, 1, 2])], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_polygamma_rule(n, shape, dtype, rng):
    """polygamma(n, x) is differentiated in x, for an int order or an int array broadcast against x."""
    check_grad(lambda x: polygamma(n, x), sample(rng, (0.5, 3), shape + (1,) * (np.ndim(n) > 0), dtype))


def test_polygamma_order_gets_no_tangent():
    """The order n is an integer: its tangent is NoTangent, and ψ⁽ⁿ⁾ has slope ψ⁽ⁿ⁺¹⁾."""
    _, back = rrule(polygamma, 1, 2.0)
    _, dn, dx = back(1.0)
    assert dn is NO_TANGENT and getitem((dx,), 0) == pytest.approx(sp.polygamma(2, 2.0))


def test_digamma_second_derivative_goes_through_polygamma():
    """ψ'' is ψ⁽²⁾: digamma's pullback calls the traceable polygamma, whose rule goes one order up."""
    second = gradient(lambda t: gradient(sp.digamma, t)[0], 1.5)[0]
    assert second == pytest.approx(sp.polygamma(2, 1.5), rel=1e-12)


# --- logsumexp, softmax, log_softmax ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", SHAPE_AXIS, ids=str)
def test_logsumexp_rule(shape, axis, keepdims, dtype, rng):
    """logsumexp matches central differences for every axis and keepdims, axis by position or name."""
    a = sample(rng, (-2, 2), shape, dtype)
    check_grad(lambda a: logsumexp(a, axis, keepdims=keepdims), a)
    check_grad(lambda a: logsumexp(a, axis=axis, keepdims=keepdims), a)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis, bshape", [((3,), None, (3,)), ((2, 3), 0, (2, 3)), ((2, 3), -1, (3,)),
                                                 ((2, 3), None, (2, 1)), ((3,), 0, (2, 3))], ids=str)
def test_logsumexp_with_weights(shape, axis, bshape, keepdims, rng):
    """Both a and the weights b get gradients, b broadcast against a in either direction."""
    a, b = sample(rng, (-2, 2), shape), sample(rng, (0.5, 2), bshape)
    check_grad(lambda a, b: logsumexp(a, axis, b, keepdims=keepdims), a, b)
    check_grad(lambda a, b: logsumexp(a, axis=axis, b=b, keepdims=keepdims), a, b)


@pytest.mark.parametrize("axis", [None, 0, -1], ids=str)
def test_logsumexp_with_sign(axis, rng):
    """With return_sign, log|Σ b eᵃ| is differentiated through negative weights; the sign is constant."""
    a, b = sample(rng, (-2, 2), (2, 3)), sample(rng, (-2, 2), (2, 3))
    check_grad(lambda a, b: logsumexp(a, axis, b, return_sign=True)[0], a, b)
    check_grad(lambda a, b: logsumexp(a, axis, b, keepdims=True, return_sign=True)[1] * a, a, b)


@pytest.mark.parametrize("fn", [softmax, log_softmax], ids=name)
@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape, axis", SHAPE_AXIS, ids=str)
def test_softmax_rule(fn, shape, axis, dtype, rng):
    """softmax and log_softmax match central differences for every axis, by position or by name."""
    x = sample(rng, (-2, 2), shape, dtype)
    check_grad(lambda x: fn(x, axis), x)
    check_grad(lambda x: fn(x, axis=axis), x)


@pytest.mark.parametrize("fn", REPLACEMENTS, ids=name)
def test_replacement_of_python_scalar(fn):
    """The replacements take Python floats as scipy does, and give float gradients."""
    f = (lambda x: fn(2, x)) if fn is polygamma else fn
    check_grad(f, 0.75)
    assert type(grad(f, 0.75)[1][1]) is float


def test_logsumexp_and_softmax_pullbacks_are_traceable(rng):
    """Second derivatives through logsumexp and log_softmax match central differences."""
    a = sample(rng, (-2, 2), (3,))
    check_grad(lambda a: gradient(lambda t: logsumexp(t), a)[0], a)
    check_grad(lambda a: gradient(lambda t: log_softmax(t)[0] + softmax(t)[1], a)[0], a)


# --- edges ---


def test_xlogy_at_x_zero_is_flat_in_y():
    """xlogy(0, y) is 0 for every y, so its y-gradient there is 0, also at y == 0 (no 0/0)."""
    assert gradient(sp.xlogy, 0.0, 2.0) == (pytest.approx(np.log(2.0)), 0.0)
    assert gradient(lambda y: sp.xlogy(0.0, y), 0.0) == (0.0,)
    assert gradient(lambda y: sp.xlog1py(0.0, y), -1.0) == (0.0,)


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_xlogy_mixed_second_derivative_at_x_zero(mode):
    """d/dx d/dy xlogy(x, y) = 1/y, also at x == 0, in every mode (the y-slope was a constant 0
    there, so the mixed derivative came out 0); xlog1py's is 1/(1 + y); and the Hessian of
    xlogy(x, x + 1) at 0 is 1/(x+1) + 1/(x+1)² = 2."""
    H = tapegrad.hessian(lambda v: sp.xlogy(v[0], v[1]), np.array([0.0, 2.0]), mode=mode)
    np.testing.assert_allclose(H, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)
    H = tapegrad.hessian(lambda v: sp.xlog1py(v[0], v[1]), np.array([0.0, 1.0]), mode=mode)
    np.testing.assert_allclose(H, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)
    assert tapegrad.hessian(lambda x: sp.xlogy(x, x + 1.0), 0.0, mode=mode) == 2.0


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-fwd"])
def test_i1_derivatives_near_and_at_zero(mode):
    """I₁'' = 3x/8 + 5x³/96 + ... and its third derivative 3/8 + ... near 0, in both modes (I₀ - I₁/x
    differentiated again cancelled terms of 1/x: 1.8e-7 for 3.8e-10 at 1e-9, a third derivative
    of -256; at 0 the slope's constant 1/2 gave 0); i1e's second derivative tends to -1 from the
    right."""
    for x in (0.0, 1e-9, -1e-7, 1e-4, 0.0099):
        want = 3 * x / 8 + 5 * x ** 3 / 96 + 7 * x ** 5 / 3072 + x ** 7 / 20480  # (I₁'s series, twice)
        assert tapegrad.hessian(sp.i1, x, mode=mode) == pytest.approx(want, rel=1e-12, abs=1e-300)
        third = tapegrad.gradient(lambda v: tapegrad.hessian(sp.i1, v, mode=mode), x)[0]
        assert third == pytest.approx(3 / 8 + 5 * x ** 2 / 32 + 35 * x ** 4 / 3072, rel=1e-12)
    assert tapegrad.hessian(sp.i1e, 1e-9, mode=mode) == pytest.approx(-1.0, rel=1e-8)


@pytest.mark.parametrize("fn, slope", [(sp.i1, 0.5), (sp.i1e, 0.5), (sp.i0e, 0.0), (sp.i0, 0.0)], ids=name)
def test_bessel_at_zero(fn, slope):
    """At 0, i1 and i1e have slope 1/2 (their limit); i0e takes 0 at its kink, as in JAX."""
    assert gradient(fn, 0.0) == (slope,)


def test_entr_at_zero_is_inf():
    """d/dx (-x log x) at 0 is +inf, as in JAX."""
    with np.errstate(divide="ignore"):
        assert gradient(sp.entr, 0.0) == (np.inf,)


def _erfcx_slope_series(x, terms=14):
    """2x·erfcx(x) - 2/√π from its asymptotic series, to float64 accuracy for x ≥ 20."""
    total, term = 0.0, 1.0
    for k in range(1, terms):
        term *= -(2 * k - 1) / (2 * x * x)
        total += term
    return 2 / np.sqrt(np.pi) * total


@pytest.mark.parametrize("x", [-3.0, 0.0, 1.0, 20.0, 49.9])
def test_erfcx_slope_is_its_closed_form(x):
    """d/dx erfcx(x) = 2x·erfcx(x) - 2/√π (with erfcx = exp(x²)·erfc(x))."""
    assert gradient(sp.erfcx, x)[0] == pytest.approx(2 * x * sp.erfcx(x) - 2 / np.sqrt(np.pi), rel=1e-12)


@pytest.mark.parametrize("x", [50.0, 50.1, 80.0, 1e3, 1e6, 1e9])
def test_erfcx_slope_far_right_keeps_its_digits(x):
    """For large x the slope ≈ -1/(√π x²) is not the difference of two numbers near 2/√π (which
    is 0 at x = 1e9): the asymptotic series gives it to float64 accuracy, continuously at 50."""
    assert gradient(sp.erfcx, x)[0] == pytest.approx(_erfcx_slope_series(x), rel=1e-14)


def test_erfcx_higher_derivatives_on_both_sides_of_the_switch():
    """The series branch is traced again too (its x is np.where'd, so no inf reaches the branch
    np.where drops): second and third derivatives match central differences at 0 and past 50."""
    check_grad(sp.erfcx, np.array([0.0, 0.3, 49.0, 51.0, 80.0]), order=3)


@pytest.mark.parametrize("x", [-800.0, -30.0, 0.0, 3.0, 40.0, 800.0])
def test_log_expit_slope_is_expit_of_minus_x(x):
    """d/dx log σ(x) = 1 - σ(x) = σ(-x): 1 far left, σ(-x) far right (not 1 - σ(x), which is 0 there)."""
    assert gradient(sp.log_expit, x)[0] == pytest.approx(sp.expit(-x), rel=1e-15)
    assert gradient(sp.log_expit, 40.0)[0] > 0


def test_log_ndtr_far_in_left_tail_is_finite():
    """log Φ(x) at x = -40 has slope φ/Φ ≈ -x, computed without 0/0."""
    assert gradient(sp.log_ndtr, -40.0)[0] == pytest.approx(40.025, rel=1e-4)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """One smooth point per rule (shape (3,), or (2, 3) against (3,) for two arguments)."""
    rng = np.random.default_rng(3)
    rows = [(fn, fn, (sample(rng, domain, (3,)),)) for fn, domain in UNARY]
    rows += [(fn, fn, (sample(rng, dx, (2, 3)), sample(rng, dy, (3,)))) for fn, dx, dy in BINARY]
    a = sample(rng, (-2, 2), (2, 3))
    rows += [
        (polygamma, lambda x: polygamma(2, x), (sample(rng, (0.5, 3), (3,)),)),
        (logsumexp_op, lambda a: logsumexp(a, axis=1), (a,)),
        (logsumexp_op, lambda a, b: logsumexp(a, axis=0, b=b), (a, sample(rng, (0.5, 2), (3,)))),
        (softmax_op, lambda a: softmax(a, axis=1), (a,)),
        (log_softmax_op, lambda a: log_softmax(a, axis=0), (a,)),
    ]
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()

"""Rules of numpy's elementwise functions: arithmetic, powers, exponentials, logarithms,
trigonometry, extrema, clip, where, remainders and the real and imaginary parts."""
import numpy as np
import pytest
import scipy.special

import tapegrad
from tapegrad import NO_TANGENT, ZERO, check_grad, compiled_grad, grad, gradient, pullback, rrule
from tapegrad.rules.arithmetic import as_count
from tapegrad.rules.piecewise import BranchCotangent, branch_cotangent
from tapegrad.tangents import getitem

from _complex import check_complex_jvp, check_complex_rule
from _rule_tables import BINARY, DTYPES, SHAPES, middle, name, sample

#: (function, interval where it is smooth)
UNARY = [
    (np.negative, (-2, 2)), (np.positive, (-2, 2)), (np.square, (-2, 2)),
    (np.reciprocal, (0.5, 2)), (np.sqrt, (0.5, 2)), (np.cbrt, (0.5, 2)),
    (np.exp, (-1, 1)), (np.exp2, (-1, 1)), (np.expm1, (-1, 1)),
    (np.log, (0.5, 2)), (np.log2, (0.5, 2)), (np.log10, (0.5, 2)), (np.log1p, (-0.5, 2)),
    (np.sin, (-2, 2)), (np.cos, (-2, 2)), (np.tan, (-1, 1)),
    (np.arcsin, (-0.8, 0.8)), (np.arccos, (-0.8, 0.8)), (np.arctan, (-2, 2)),
    (np.sinh, (-2, 2)), (np.cosh, (-2, 2)), (np.tanh, (-2, 2)),
    (np.arcsinh, (-2, 2)), (np.arccosh, (1.2, 3)), (np.arctanh, (-0.8, 0.8)),
    (np.deg2rad, (-2, 2)), (np.radians, (-2, 2)), (np.rad2deg, (-2, 2)), (np.degrees, (-2, 2)),
    (np.sinc, (0.1, 2)), (np.absolute, (0.1, 2)), (np.fabs, (-2, -0.1)),
    (np.real, (-2, 2)), (np.imag, (-2, 2)), (np.conjugate, (-2, 2)),
]
#: the same ufunc under another name: the rule is found through either
ALIASES = [(np.true_divide, np.divide), (np.mod, np.remainder), (np.abs, np.absolute),
           (np.conj, np.conjugate)]
#: (shape of x, shape of y): equal shapes, broadcasting both ways, a scalar against an array
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((1, 3), (2, 1)), ((), (2, 3)), ((3,), (2, 1))]
#: computed in float64 by numpy whatever the input (float_power), so their tangents are too
FLOAT64_INSIDE = {np.float_power}

EXERCISED = ({fn for fn, _ in UNARY} | {fn for fn, _, _ in BINARY} | {a for a, _ in ALIASES}
             | {np.clip, np.where, np.divmod, branch_cotangent, as_count})

UNTAKEN = np.array([True, False, False])
#: (rule's function, f to differentiate twice, args at a smooth point)
# (branch_cotangent's argument is zero where untaken, as np.where's rule makes it)
BRANCH_ORDER2 = [(branch_cotangent, lambda d: np.sum(np.sin(branch_cotangent(np.where(UNTAKEN, 0.0, d), UNTAKEN)) * d),
                  (np.array([0.3, -0.7, 1.1]),))]



def _order2_rows():
    """One smooth point per rule, for tests/rules/test_higher_order.py (second and third order)."""
    rng = np.random.default_rng(2)
    rows = [(fn, fn, (sample(rng, domain, (3,)),)) for fn, domain in UNARY]
    rows += [(fn, fn, (sample(rng, dx, (2, 3)), sample(rng, dy, (3,)))) for fn, dx, dy in BINARY]
    a, lo, hi = sample(rng, (-2, 2), (2, 3)), sample(rng, (-1, -0.1), (3,)), sample(rng, (0.1, 1), (2, 1))
    rows.append((np.clip, np.clip, (a, lo, hi)))
    cond = rng.uniform(size=(2, 3)) > 0.5
    rows.append((np.where, lambda x, y, c=cond: np.where(c, x, y),
                 (sample(rng, (-2, 2), (2, 3)), sample(rng, (-2, 2), (3,)))))
    # a condition of numbers is its truth (numpy's sinc computes where(x, x, eps)): the branch
    # of x is taken where x != 0 (it was read as "x == True", and no gradient flowed)
    rows.append((np.where, lambda x, y: np.where(np.array([0.0, 2.5, -1.0]), x, y),
                 (np.array([0.5, 2.0, -1.5]), np.array([1.5, -0.5, 0.25]))))
    rows.append((np.divmod, lambda x, y: np.divmod(x, y)[0] * x + np.divmod(x, y)[1],
                 (sample(rng, (-5, 5), (2, 3)), sample(rng, (0.7, 1.5), (3,)))))
    return rows


#: (rule's function, function differentiated, float64 arguments): see test_higher_order.py
ORDER2 = _order2_rows() + BRANCH_ORDER2


def lower(domain):
    """A point of the domain other than `middle`, so that x and y do not tie."""
    return (2 * domain[0] + domain[1]) / 3


# --- tables through check_grad ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_rule(fn, domain, shape, dtype, rng):
    """Each unary rule matches central differences for every shape and float dtype."""
    check_grad(fn, sample(rng, domain, shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("xshape, yshape", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("fn, xdomain, ydomain", BINARY, ids=name)
def test_binary_rule(fn, xdomain, ydomain, xshape, yshape, dtype, rng):
    """Each binary rule gives both arguments their gradient, broadcasting undone."""
    check_grad(fn, sample(rng, xdomain, xshape, dtype), sample(rng, ydomain, yshape, dtype))


@pytest.mark.parametrize("fn, domain", UNARY, ids=name)
def test_unary_of_python_scalar_and_0d_array(fn, domain):
    """A Python float gets a float gradient and a 0-d array a 0-d array of its dtype."""
    x = middle(domain)
    check_grad(fn, x)
    _, (_, dx) = grad(fn, x)
    assert dx is ZERO if fn is np.imag else type(dx) is float
    for dtype in DTYPES:
        x0 = np.array(x, dtype=dtype)
        check_grad(fn, x0)
        _, (_, dx) = grad(fn, x0)
        assert dx is ZERO if fn is np.imag else (dx.shape, dx.dtype) == ((), dtype)


@pytest.mark.parametrize("fn, xdomain, ydomain", BINARY, ids=name)
def test_binary_with_python_scalars(fn, xdomain, ydomain, rng):
    """A Python float on either side, or on both, is differentiated like a 0-d array."""
    x, y = middle(xdomain), lower(ydomain)
    check_grad(fn, x, y)
    check_grad(fn, x, sample(rng, ydomain, (2, 3)))
    check_grad(fn, sample(rng, xdomain, (3,)), y)
    check_grad(lambda t: fn(t, y), np.array(x, dtype=np.float32))


@pytest.mark.parametrize("alias, fn", ALIASES, ids=lambda v: name(v))
def test_alias_uses_the_same_rule(alias, fn, rng):
    """np.true_divide, np.mod, np.abs and np.conj are the same ufuncs as their long names."""
    assert alias is fn
    args = [sample(rng, (0.5, 2), (2, 3)) for _ in range(alias.nin)]
    check_grad(alias, *args)


@pytest.mark.parametrize("fn, domain", [row for row in UNARY if row[0] not in FLOAT64_INSIDE], ids=name)
def test_unary_pullback_keeps_float32(fn, domain):
    """Given float32 values and cotangent, a pullback computes in float32 (constants are weak)."""
    x = np.full((3,), middle(domain), dtype=np.float32)
    y, back = rrule(fn, x)
    dx = getitem(back(np.ones(np.shape(y), dtype=np.float32)), 1)
    assert dx is ZERO or dx.dtype == np.float32


@pytest.mark.parametrize("fn, xdomain, ydomain", [r for r in BINARY if r[0] not in FLOAT64_INSIDE], ids=name)
def test_binary_pullback_keeps_float32(fn, xdomain, ydomain):
    """Both tangents of a binary pullback stay float32 for float32 inputs."""
    x = np.full((2, 1), middle(xdomain), dtype=np.float32)
    y = np.full((3,), middle(ydomain), dtype=np.float32)
    z, back = rrule(fn, x, y)
    tangents = back(np.ones(np.shape(z), dtype=np.float32))
    for i in (1, 2):
        t = getitem(tangents, i)
        assert t is ZERO or t.dtype == np.float32


@pytest.mark.parametrize("fn, domain", [row for row in UNARY if row[0] is not np.imag], ids=name)
def test_unary_pullback_is_traceable(fn, domain):
    """A pullback is numpy code a Tracer can record: second derivatives match central differences."""
    check_grad(lambda t: gradient(fn, t)[0], middle(domain))


@pytest.mark.parametrize("fn, xdomain, ydomain", [r for r in BINARY if r[0] is not np.copysign], ids=name)
def test_binary_pullback_is_traceable(fn, xdomain, ydomain):
    """Second derivatives of binary rules, through both tangents, match central differences."""
    def both(x, y):
        dx, dy = gradient(fn, x, y)
        return dx + 3 * dy

    check_grad(both, middle(xdomain), lower(ydomain))


# --- powers ---


@pytest.mark.parametrize("fn", [np.power, np.float_power], ids=name)
@pytest.mark.parametrize("n, slope", [(0, 0.0), (1, 1.0), (2, 0.0), (3, 0.0)], ids=str)
def test_power_at_base_zero_with_integer_exponent_is_finite(fn, n, slope):
    """d/dx x**n at x == 0 is n 0**(n-1): 0 for n == 0 (not 0 * inf), 1 for n == 1, 0 above."""
    assert gradient(lambda x: fn(x, n), 0.0) == (slope,)
    assert gradient(lambda x, y: fn(x, y), 0.0, float(n))[0] == slope
    dx = gradient(lambda x: fn(x, np.array([0, 1, 2, 3])), np.zeros(4), seed=np.ones(4))[0]
    np.testing.assert_array_equal(dx, [0.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("fn", [np.power, np.float_power], ids=name)
def test_exponent_gradient_at_base_zero_is_zero(fn):
    """d/dy x**y at x == 0 is 0, as in autograd and JAX (log 0 is taken as 0: x**y is flat in y there)."""
    dy = gradient(lambda y: fn(0.0, y), np.array([0.0, 1.0, 2.5]), seed=np.ones(3))[0]
    np.testing.assert_array_equal(dy, [0.0, 0.0, 0.0])


def test_power_of_negative_base_with_integer_exponent():
    """(-2)**3 has slope 12, and its integer exponent, a count, gets no tangent (no log of -2)."""
    _, (_, dx, dn) = grad(lambda x, n: x ** n, -2.0, 3)
    assert dx == 12.0 and dn is ZERO
    assert rrule(np.power, -2.0, 3)[1](1.0)[2] is NO_TANGENT


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_an_int_exponent_is_a_count_at_second_order_too(mode):
    """sum(x ** n) + x[0] n with an int n: n is a count in the power (no d/dn) and a number in
    the product, in every mode and at second order: the Hessian's mixed blocks are both
    d/dx d(x[0] n)/dn = [1, 0] (reverse outer passes differentiated the slope n x**(n-1) in n
    through its factor n, 1.25 and 2.25, so the Hessian was not symmetric). `as_count` keeps
    the slope's n out of the derivative, and has no derivative of its own in either mode."""
    def f(p):
        return np.sum(p["x"] ** p["n"]) + p["x"][0] * p["n"]

    p = {"x": np.array([0.5, 1.5]), "n": 3}
    H = tapegrad.hessian(f, p, mode=mode)
    np.testing.assert_array_equal(H["x"]["n"], [1.0, 0.0])
    np.testing.assert_array_equal(H["n"]["x"], [1.0, 0.0])
    np.testing.assert_array_equal(H["x"]["x"], np.diag(3 * 2 * p["x"]))  # n (n-1) x**(n-2)
    hv = tapegrad.hvp(f, p, {"x": np.array([1.0, 0.0]), "n": 0}, mode=mode)
    assert hv["n"] == 1.0 and np.array_equal(hv["x"], [3.0, 0.0])
    # the rule itself: as_count(x) * x has the derivative of its second factor alone
    assert gradient(lambda x: as_count(x) * x, 3.0) == (3.0,)
    assert tapegrad.jvp(lambda x: as_count(x) * x, (3.0,), (1.0,)) == (9.0, 3.0)


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_power_mixed_second_derivative_at_a_zero_exponent(mode):
    """d/dx d/dy x**y = x**(y-1)(1 + y log x) is 1/x at y == 0, in every mode: the slope's guard
    against 0 * 0**-1 (at x == 0) took x**1 wherever y == 0, so one half of the Hessian read x
    (0.5 at x = 0.5, where it is 2) and the Hessian was not symmetric."""
    for fn in (np.power, np.float_power):
        for x, y in [(0.5, 0.0), (2.0, 0.0), (0.5, 1.5)]:
            H = tapegrad.hessian(lambda v: fn(v[0], v[1]), np.array([x, y]), mode=mode)
            cross = x ** (y - 1) * (1 + y * np.log(x))
            np.testing.assert_allclose(H, [[y * (y - 1) * x ** (y - 2), cross], [cross, np.log(x) ** 2 * x ** y]],
                                       rtol=1e-13, atol=1e-15)
    assert tapegrad.hessian(lambda v: v[0] ** v[1], np.array([0.0, 2.0]), mode=mode).tolist() == [[2.0, 0.0], [0.0, 0.0]]


def test_power_operator_with_int_base():
    """An int base raised to an int power gets a float gradient, without numpy's int ** -1 error."""
    assert gradient(lambda x: x ** 2, 3) == (6.0,)
    assert gradient(lambda x: x ** 0, 3) == (0.0,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize("y", [2, 2.0], ids=repr)
def test_square_power_matches_power_bit_for_bit(dtype, y):
    """x**2 of a float array is computed as np.square (the same bits), and its tangent, from a
    mean's broadcast cotangent or a full one, is dz * (2 * x) as rounded, float32 kept."""
    # (positive: the closure's float exponent is differentiated too, and needs log x)
    x = np.abs(np.random.default_rng(0).standard_normal((6, 5)).astype(dtype) * dtype(3))
    value, (_, dx) = grad(lambda x: np.mean(x ** y), x)
    assert value == np.mean(np.power(x, y))
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, np.broadcast_to(1.0 / x.size, x.shape).astype(dtype) * (2 * x))
    dz = np.arange(30.0).reshape(6, 5).astype(dtype)
    (dx,) = gradient(lambda x: np.power(x, y), x, seed=dz)
    np.testing.assert_array_equal(dx, dz * (2 * x))
    (dx,) = gradient(lambda x: np.power(x, y), x, seed=np.broadcast_to(dz[:1], x.shape))
    np.testing.assert_array_equal(dx, dz[:1] * (2 * x))


def test_sqrt_at_zero_is_inf():
    """d/dx √x at 0 is inf, as in autograd and JAX."""
    with np.errstate(divide="ignore"):
        assert gradient(np.sqrt, 0.0) == (np.inf,)


def test_tanh_pullback_of_a_large_array_is_the_formula_to_the_bit(rng):
    """A large array's tanh pullback works in a buffer of its own (out=): the same operations,
    so the same bits as dy * (1 - y*y), and the cotangent it is given is left as it was."""
    x, dy = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    y, back = tapegrad.registry.RULES[np.tanh](x)
    before = dy.copy()
    np.testing.assert_array_equal(back(dy)[1], dy * (1 - y * y))
    np.testing.assert_array_equal(dy, before)
    # float32 and a float64 cotangent keep numpy's promotion; a traced pullback (second order)
    # takes the plain expression
    y32, back32 = tapegrad.registry.RULES[np.tanh](x.astype(np.float32))
    assert back32(dy)[1].dtype == np.float64
    check_grad(lambda x: np.sum(np.tanh(x) ** 2), x[:8])
    h = tapegrad.hessian(lambda x: np.sum(np.tanh(x)), x[0, :3])
    np.testing.assert_allclose(np.diag(h), -2 * np.tanh(x[0, :3]) * (1 - np.tanh(x[0, :3]) ** 2), rtol=1e-12)


def test_small_float64_paths_are_the_formula_to_the_bit(rng, monkeypatch):
    """With the library's own stand-in threshold (the suite sets it to 0, which sends every
    array down the large-array paths), a short float64 vector takes tanh's pullback with a 0-d
    1.0 and ``c * t`` with c as a 0-d array: the same bits as the plain formulas, and second
    derivatives still traced through them."""
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", 1 << 14)
    x, dy, w = rng.standard_normal(10), rng.standard_normal(10), rng.standard_normal(10)
    y, back = tapegrad.registry.RULES[np.tanh](x)
    np.testing.assert_array_equal(back(dy)[1], dy * (1 - y * y))
    z, back = tapegrad.registry.RULES[np.multiply](0.5, x, needs=(False, True))
    np.testing.assert_array_equal(z, 0.5 * x)
    _, dc, dx = back(dy)
    assert isinstance(dc, tapegrad.NoTangent)
    np.testing.assert_array_equal(dx, dy * 0.5)
    _, (_, dx) = tapegrad.grad(lambda x: np.sum(0.5 * x + np.tanh(x * w)), x)
    np.testing.assert_array_equal(dx, 0.5 + (1 - np.tanh(x * w) ** 2) * w)
    check_grad(lambda x: np.sum(0.5 * np.tanh(x * w) ** 2), x, order=2)


# --- piecewise functions and their conventions ---


@pytest.mark.parametrize("fn", [np.absolute, np.fabs], ids=name)
def test_abs_at_zero_is_zero(fn):
    """d/dx |x| is sign(x): 0 at 0, as in autograd and JAX."""
    dx = gradient(fn, np.array([-1.5, 0.0, 2.0]), seed=np.ones(3))[0]
    np.testing.assert_array_equal(dx, [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("fn", [np.maximum, np.minimum, np.fmax, np.fmin], ids=name)
def test_extremum_tie_splits_gradient_in_half(fn):
    """At x == y each operand of maximum/minimum/fmax/fmin gets half, as in JAX and autograd."""
    assert gradient(fn, 1.5, 1.5) == (0.5, 0.5)
    dx, dy = gradient(fn, np.array([1.0, 2.0]), 2.0, seed=np.ones(2))
    assert dx[1] == 0.5 and dy == 0.5 + (1.0 if fn in (np.maximum, np.fmax) else 0.0)


@pytest.mark.parametrize("fn", [np.fmax, np.fmin], ids=name)
def test_fmax_fmin_pass_gradient_past_nan(fn):
    """fmax and fmin ignore a nan operand, so the other operand gets the whole gradient."""
    assert gradient(fn, 1.5, np.nan) == (1.0, 0.0)
    assert gradient(fn, np.nan, 1.5) == (0.0, 1.0)


def test_copysign_differentiates_magnitude_only():
    """copysign(x, y) has slope sign(x)·sign(y) in x (0 at x == 0) and zero in y."""
    dx = gradient(lambda x: np.copysign(x, np.array([-1.0, 1.0, -1.0])), np.array([2.0, -3.0, 0.0]),
                  seed=np.ones(3))[0]
    np.testing.assert_array_equal(dx, [-1.0, -1.0, 0.0])
    assert grad(np.copysign, 2.0, -1.0)[1][2] is ZERO


def test_arctan2_at_origin_is_nan():
    """atan2 has no limit at the origin: its gradient there is nan (JAX, autograd), without a
    warning; so is its variation in forward mode, derived from the pullback (which gave a
    constant nan, so that forward mode, its derivative in dz, took 0), and the second
    derivatives in every mode."""
    dy, dx = gradient(np.arctan2, 0.0, 0.0)
    assert np.isnan(dy) and np.isnan(dx)
    f = lambda t: np.arctan2(t - 1.0, (t - 1.0) ** 2)  # noqa: E731 - through the origin at t = 1
    assert np.isnan(tapegrad.jvp(f, (1.0,), (1.0,))[1])
    for mode in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"):
        assert np.isnan(tapegrad.hessian(f, 1.0, mode=mode)), mode


def test_hypot_at_origin_is_zero():
    """hypot(x, y) at the origin has gradient 0, like abs at 0 (and JAX's hypot)."""
    assert gradient(np.hypot, 0.0, 0.0) == (0.0, 0.0)


def test_sinc_at_zero_is_zero():
    """sinc is smooth at 0 with slope 0; the rule does not divide 0 by 0 there."""
    assert gradient(np.sinc, 0.0) == (0.0,)
    check_grad(np.sinc, np.array([-1e-3, 1e-3, 0.3]))


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_sinc_second_derivative_near_and_at_zero(mode):
    """sinc'' is -π²/3 + π⁴x²/10 near 0, in every mode: the quotient (cos(πx) - sinc x)/x lost
    its digits there (-5.4 at 1e-8, -9.9 at 1e-10) and the slope's constant 0 at 0 gave 0; the
    series below 1e-2 keeps them, and its edge joins the quotient."""
    for x in (0.0, 1e-10, -1e-8, 1e-6, 1e-4, 0.0099):
        want = -np.pi ** 2 / 3 + np.pi ** 4 * x ** 2 / 10 - np.pi ** 6 * x ** 4 / 168
        assert tapegrad.hessian(np.sinc, x, mode=mode) == pytest.approx(want, rel=1e-12), x
    x = np.array([0.0, 1e-8, 0.0101, 0.3])
    np.testing.assert_allclose(np.diag(tapegrad.hessian(lambda v: np.sum(np.sinc(v)), x, mode=mode)),
                               [tapegrad.hessian(np.sinc, float(v), mode=mode) for v in x], rtol=1e-12)
    third = tapegrad.gradient(lambda v: tapegrad.hessian(np.sinc, v, mode=mode), 0.0)[0]
    assert third == 0.0  # sinc is even


def test_imag_of_real_input_is_zero():
    """The imaginary part of a real input does not depend on it: its gradient is ZeroTangent."""
    assert grad(lambda x: np.sum(np.imag(x)), np.ones(3))[1][1] is ZERO
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.imag(x) + x), np.ones(3))[0], np.ones(3))


# --- clip ---

#: how clip's bounds can be written: by position, by keyword, one of them None; both modes of
#: check_grad apply to every form
BOTH = ("rev", "fwd")
CLIPS = [
    (lambda a, lo, hi: np.clip(a, lo, hi), BOTH),
    (lambda a, lo, hi: np.clip(a, lo, None), BOTH),
    (lambda a, lo, hi: np.clip(a, None, hi), BOTH),
    (lambda a, lo, hi: a.clip(lo, hi), BOTH),
    (lambda a, lo, hi: np.clip(a, a_min=lo, a_max=hi), BOTH),
    (lambda a, lo, hi: np.clip(a, lo, a_max=hi), BOTH),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shapes", [((), (), ()), ((2, 3), (2, 3), (2, 3)), ((2, 3), (2, 1), (3,)),
                                    ((3,), (), (2, 1))], ids=str)
@pytest.mark.parametrize("form", range(len(CLIPS)))
def test_clip_rule(form, shapes, dtype, rng):
    """clip gives gradients to a and to each traced bound, however the bounds are passed."""
    a = sample(rng, (-2, 2), shapes[0], dtype)
    lo = sample(rng, (-1, -0.1), shapes[1], dtype)
    hi = sample(rng, (0.1, 1), shapes[2], dtype)
    f, modes = CLIPS[form]
    check_grad(f, a, lo, hi, modes=modes)


def test_clip_with_constant_bounds_by_keyword(rng):
    """Constant bounds may use the keywords min= and max= of numpy 2."""
    a = sample(rng, (-2, 2), (2, 3))
    check_grad(lambda a: np.clip(a, min=-0.5, max=0.5), a)
    check_grad(lambda a: np.clip(a, max=0.5), a)


def test_clip_at_bound_splits_gradient_in_half():
    """At a == a_min (or a_max) a and the bound each get half, as clip is min(max(a, lo), hi) in JAX."""
    assert gradient(np.clip, -1.0, -1.0, 1.0) == (0.5, 0.5, 0.0)
    assert gradient(np.clip, 1.0, -1.0, 1.0) == (0.5, 0.0, 0.5)
    assert gradient(np.clip, 3.0, 2.0, 1.0) == (0.0, 0.0, 1.0)  # a_min > a_max gives a_max


# --- where ---


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("shapes", [((), (), ()), ((2, 3), (2, 3), (2, 3)), ((2, 1), (1, 3), (3,)),
                                    ((3,), (), (2, 3))], ids=str)
def test_where_rule(shapes, dtype, rng):
    """where sends the gradient to x where the condition holds and to y elsewhere."""
    cond = rng.uniform(size=shapes[0]) > 0.5
    x, y = sample(rng, (-2, 2), shapes[1], dtype), sample(rng, (-2, 2), shapes[2], dtype)
    check_grad(lambda x, y: np.where(cond, x, y), x, y)


def test_where_condition_computed_from_traced_value(rng):
    """A condition computed from the input itself gets no tangent; the branches do."""
    x = sample(rng, (-2, 2), (2, 3))
    check_grad(lambda x: np.where(x > 0, np.sin(x), x ** 2), x)
    assert rrule(np.where, x > 0, x, -x)[1](np.ones((2, 3)))[1] is NO_TANGENT


@pytest.mark.parametrize("f, x, expected", [
    (lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)), np.array([0.0, -1.0, 4.0]), [0.0, 0.0, 0.25]),
    (lambda x: np.sum(np.where(x != 0, 1 / x, 0.0)), np.array([0.0, 2.0]), [0.0, -0.25]),
    (lambda x: np.sum(np.where(x > 0, np.log(np.sqrt(x)) * 2, x)), np.array([0.0, -1.0, 2.0]), [1.0, 1.0, 0.5]),
    (lambda x: np.sum(np.where(x <= 0, 0.0, x ** 0.5 / x)), np.array([0.0, 4.0]), [0.0, -1 / 16]),
    (lambda x: np.where(x > 0, np.sqrt(x), 0.0), 0.0, 0.0),
    (lambda x: np.where(x > 0, np.sqrt(x), -x), 0.0, -1.0),
])
def test_where_untaken_branch_contributes_exactly_zero(f, x, expected):
    """The branch np.where did not take adds exactly zero, even where its derivative is inf or nan."""
    compiled = compiled_grad(f, tiers=False)  # its first call traces, its second runs the program
    with np.errstate(all="ignore"):
        for d in (grad(f, x)[1][1], pullback(f, x)[1](1.0)[1], compiled(x)[1][1], compiled(x)[1][1]):
            if d is ZERO:
                d = 0.0
            np.testing.assert_allclose(d, expected, rtol=1e-12, atol=0)  # zeros exactly
            assert type(d) in (float, np.ndarray)


def test_branch_cotangent_keeps_its_zeros_through_products_only(rng):
    """A branch's cotangent stays exactly zero at untaken places through *, / and -, and a sum or add is plain."""
    d = branch_cotangent(np.array([0.0, 2.0]), np.array([True, False]))
    inf = np.array([np.inf, 4.0])
    with np.errstate(all="ignore"):
        for out, want in [(d * inf, [0.0, 8.0]), (inf * d, [0.0, 8.0]), (d / np.zeros(2), [0.0, np.inf]),
                          (-d * np.nan, [0.0, np.nan])]:
            assert type(out) is BranchCotangent
            np.testing.assert_array_equal(out, want)
        assert type(d + inf) is np.ndarray and type(np.sum(d)) is np.float64
        assert np.isnan((np.zeros(2) / d)[0])  # zero only where the cotangent is a factor
    check_grad(lambda d: np.sum(branch_cotangent(d, np.array([True, False])) * d), rng.uniform(size=2))


def test_where_with_condition_only_is_indices(rng):
    """np.where(cond) returns indices, which carry no derivative."""
    x = sample(rng, (-2, 2), (2, 3))
    check_grad(lambda x: np.sum(x[np.where(x > 0)]), x)


# --- remainders ---


@pytest.mark.parametrize("fn, rounding", [(np.remainder, np.floor), (np.fmod, np.trunc)], ids=name)
def test_remainder_gradient_in_divisor_is_minus_quotient(fn, rounding):
    """d/dy (x mod y) is -floor(x/y) for remainder and -trunc(x/y) for fmod; d/dx is 1."""
    x, y = np.array([7.5, -7.5, 2.5]), np.array([2.0, 2.0, -2.0])
    dx, dy = gradient(fn, x, y, seed=np.ones(3))
    np.testing.assert_array_equal(dx, np.ones(3))
    np.testing.assert_array_equal(dy, -rounding(x / y))


@pytest.mark.parametrize("shapes", [((), ()), ((2, 3), (3,))], ids=str)
def test_divmod_rule(shapes, rng):
    """divmod's remainder is differentiated like remainder; its quotient is piecewise constant."""
    x, y = sample(rng, (-5, 5), shapes[0]), sample(rng, (0.7, 1.5), shapes[1])
    check_grad(lambda x, y: divmod(x, y)[1], x, y)
    check_grad(lambda x, y: np.divmod(x, y)[0] * x + np.divmod(x, y)[1], x, y)
    assert gradient(lambda x: np.divmod(x, 2.0)[0], 7.5) == (ZERO,)


# --- scalar arithmetic on Python operators ---

from hypothesis import given, settings, strategies as st  # noqa: E402

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
_SCALAR_KINDS = st.sampled_from([float, np.float64])


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS, y=_FLOATS, kx=_SCALAR_KINDS, ky=_SCALAR_KINDS,
       fn=st.sampled_from([np.add, np.subtract, np.multiply, np.divide]))
def test_scalar_arithmetic_rules_round_as_the_ufuncs_do(x, y, kx, ky, fn):
    """The scalar rules use Python's operators for speed: their values and tangents are the
    ufuncs' to the bit (inf and nan included), and x / 0.0 gives numpy's inf, not ZeroDivisionError."""
    x, y = kx(x), ky(y)
    with np.errstate(all="ignore"):
        value, back = rrule(fn, x, y)
        expected = fn(x, y)
        np.testing.assert_array_equal(value, expected)
        _, dx, dy = back(1.5)
        dx, dy = getitem((None, dx, dy), 1), getitem((None, dx, dy), 2)
        ex, ey = {np.add: (1.5, 1.5), np.subtract: (1.5, -1.5), np.multiply: (1.5 * y, 1.5 * x),
                  np.divide: (np.divide(1.5, y), np.divide(-1.5 * expected, y))}[fn]
    np.testing.assert_array_equal(dx, ex)
    np.testing.assert_array_equal(dy, ey)


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS, n=st.integers(-2**62, 2**62) | st.sampled_from([0, 1, -1, 2**53 + 1]), kx=_SCALAR_KINDS,
       int_first=st.booleans(), fn=st.sampled_from([np.add, np.subtract, np.multiply, np.divide]))
def test_scalar_arithmetic_with_an_int_rounds_as_the_ufuncs_do(x, n, kx, int_first, fn):
    """A float beside a Python int (``s / n``, ``2 * t``, ``1 - t``) takes the operators' path
    too: value and tangents are the ufuncs' to the bit, and a division by the int 0 still
    gives numpy's inf or nan."""
    args = (n, kx(x)) if int_first else (kx(x), n)
    with np.errstate(all="ignore"):
        value, back = rrule(fn, *args)
        expected = fn(*args)
        np.testing.assert_array_equal(value, expected)
        _, da, db = back(1.5)
        da, db = getitem((None, da, db), 1), getitem((None, da, db), 2)
        a, b = args
        ea, eb = {np.add: (1.5, 1.5), np.subtract: (1.5, -1.5), np.multiply: (np.multiply(1.5, b), np.multiply(1.5, a)),
                  np.divide: (np.divide(1.5, b), np.divide(-1.5 * expected, b))}[fn]
    np.testing.assert_array_equal(da, ea)
    np.testing.assert_array_equal(db, eb)


def test_division_of_a_number_by_an_int_is_differentiated(rng):
    """``np.sum(x) / n`` and ``n / s``: the int is a constant, the gradient the closed form."""
    x = rng.standard_normal(5)
    _, (_, dx) = grad(lambda x: -np.sum(x * x) / x.shape[0], x)
    np.testing.assert_allclose(dx, -2 * x / 5, rtol=1e-15)
    _, (_, ds) = grad(lambda s: 3 / s + 2 * s - 1, 1.5)
    assert ds == pytest.approx(-3 / 1.5**2 + 2, rel=1e-15)
    check_grad(lambda s: 3 / s + 2 * s - 1 + s / 4, 1.5)


def test_scalar_times_array_tangent_is_a_dot_product(rng):
    """d/ds sum(w * s * K) and d/ds sum(w * K / s): the scalar's tangent is sum(dz * K), taken as a dot
    product (no array of K's size); closed forms, and the compiled gradient agrees exactly."""
    import tapegrad

    K = rng.standard_normal((30, 40))
    w = rng.standard_normal((30, 40))
    f = lambda s, K, w: np.sum(w * (s * K)) + np.sum(w * (K / s))
    _, (_, ds, _, _) = grad(f, 2.0, K, w, wrt=0)
    assert type(ds) is float
    assert ds == pytest.approx(np.sum(w * K) - np.sum(w * K) / 4.0, rel=1e-13)
    g = tapegrad.compiled_grad(f, wrt=0)
    assert g(2.0, K, w)[1][1] == ds
    assert g.source(2.0, K, w).count("np.dot(") == 2  # one for s * K, one for K / s
    check_grad(f, 2.0, K, w)  # raises if reverse mode and central differences disagree


SINGULAR = [(np.log, 0.0), (np.log2, 0.0), (np.log10, 0.0), (np.log1p, -1.0), (np.arctanh, 1.0),
            (np.sqrt, 0.0), (np.cbrt, 0.0), (scipy.special.logit, 0.0)]


@pytest.mark.parametrize("fn, x", SINGULAR, ids=lambda v: getattr(v, "__name__", ""))
def test_singular_point_of_a_python_float_gives_numpys_inf(fn, x):
    """At a point where the derivative is infinite, a Python float argument gets numpy's inf,
    as a numpy float does, not Python's ZeroDivisionError."""
    with np.errstate(all="ignore"):
        from_float = grad(fn, x)[1][1]
        from_numpy = grad(fn, np.float64(x))[1][1]
    assert np.isinf(from_float) and from_float == from_numpy


WHERE_SECOND_ORDER = [
    # (f, x, Hessian diagonal) with the untaken branch singular at x[0] = 0
    (lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)), [0.0, 4.0, 1.0], [0.0, -1 / 32, -0.25]),
    (lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0) ** 2 * x), [0.0, 4.0, 1.0], [0.0, 2.0, 2.0]),
    (lambda x: np.sum(np.where(x != 0, 1 / x, 0.0)), [0.0, 2.0, -1.0], [0.0, 0.25, -2.0]),
    (lambda x: np.sum(np.where(x != 0, 1 / x, 0.0) * x ** 3), [0.0, 2.0, -1.0], [0.0, 2.0, 2.0]),
    (lambda x: np.sum(np.where(np.array([False, True, True]), np.sqrt(x), x)), [0.0, 4.0, 1.0],
     [0.0, -1 / 32, -0.25]),
]


@pytest.mark.parametrize("f, x, diagonal", WHERE_SECOND_ORDER)
def test_where_untaken_branch_contributes_exactly_zero_in_every_second_order_mode(f, x, diagonal):
    """Reverse over reverse, forward over reverse, reverse over forward and forward over forward: the untaken branch adds exactly zero."""
    x = np.array(x)
    e = np.eye(x.size)
    jvp_along = lambda v: (lambda x: tapegrad.jvp(f, (x,), (v,))[1])
    with np.errstate(all="ignore"):
        hessians = {
            "rev-rev": tapegrad.hessian(f, x, mode="rev"),
            "fwd-rev": tapegrad.hessian(f, x, mode="fwd"),
            "rev-fwd": np.array([grad(jvp_along(v), x)[1][1] for v in e]),
            "fwd-fwd": np.array([[tapegrad.jvp(jvp_along(v), (x,), (w,))[1] for w in e] for v in e]),
        }
        for mode, h in hessians.items():
            np.testing.assert_array_equal(h, np.diag(diagonal), err_msg=mode)
        assert tapegrad.jvp(f, (x,), (np.ones(3),))[1] == np.sum(grad(f, x)[1][1])


# --- complex values (autograd's convention: see the README and tests/rules/_complex.py) ---


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


_C = np.random.default_rng(11)


def cz(*shape):
    """Complex values off every branch cut of numpy's elementwise functions (which lie on the
    real and imaginary axes): real parts in (0.5, 1.5), imaginary parts in (0.2, 0.8)."""
    z = _C.uniform(0.5, 1.5, shape) + 1j * _C.uniform(0.2, 0.8, shape)
    return z if shape else complex(z)


def rx(*shape):
    """Positive real values (a real base of a complex power has a logarithm)."""
    x = _C.uniform(0.5, 1.5, shape)
    return x if shape else float(x)


#: the elementwise functions numpy defines for complex values, each with its rule in COMPLEX
COMPLEX_UNARY = [np.negative, np.positive, np.square, np.reciprocal, np.sqrt, np.exp, np.exp2,
                 np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin, np.cos, np.tan, np.arcsin,
                 np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh,
                 np.arctanh, np.sinc, np.absolute, np.angle, np.real, np.imag, np.conjugate]
COMPLEX_BINARY = [np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power]


def _complex_rows():
    rows = []
    for fn in COMPLEX_UNARY:
        rows += [pytest.param(fn, (cz(2, 3),), {}, id=f"{fn.__name__} complex[2,3]"),
                 pytest.param(fn, (cz(),), {}, id=f"{fn.__name__} complex")]
    for fn in COMPLEX_BINARY:
        for label, args in [("complex complex", (cz(2, 3), cz(2, 3))),
                            ("complex complex broadcast", (cz(2, 3), cz(3))),
                            ("real complex broadcast", (rx(2, 1), cz(3))),
                            ("complex real broadcast", (cz(3), rx(2, 3))),
                            ("complex scalar", (cz(3), cz())),
                            ("real scalar complex", (rx(), cz(2))),
                            ("python scalars", (cz(), rx()))]:
            rows.append(pytest.param(fn, args, {}, id=f"{fn.__name__} {label}"))
    rows += [
        pytest.param(np.power, (cz(3), 3), {}, id="power integer exponent"),
        pytest.param(np.power, (cz(3), 0.5), {}, id="power float exponent"),
        pytest.param(np.angle, (cz(3),), {"deg": True}, id="angle deg"),
        pytest.param(np.astype, (rx(3), np.complex128), {}, id="astype real to complex"),
        pytest.param(np.astype, (cz(3).astype(np.complex64), np.complex128), {}, id="astype complex64 to complex128"),
        pytest.param(np.astype, (cz(3), np.float64), {}, id="astype complex to float",
                     marks=pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")),
        pytest.param(np.true_divide, (rx(3), cz(3)), {}, id="true_divide alias"),
        pytest.param(np.abs, (cz(3),), {}, id="abs alias"),
        pytest.param(np.conj, (cz(3),), {}, id="conj alias"),
    ]
    # the picks, in numpy's lexicographic order (real parts first): the cotangent goes to the
    # operand picked, as for real values
    for fn in (np.maximum, np.minimum, np.fmax, np.fmin):
        rows += [pytest.param(fn, (cz(2, 3), cz(2, 3)), {}, id=f"{fn.__name__} complex complex"),
                 pytest.param(fn, (cz(3), rx(2, 3)), {}, id=f"{fn.__name__} complex real broadcast")]
    return rows


COMPLEX_TABLE = _complex_rows()


@pytest.mark.parametrize("fn, args, kwargs", COMPLEX_TABLE)
def test_complex_rule_passes_the_dot_product_test(fn, args, kwargs, rng):
    """Each rule's pullback is the transpose of its real-linear derivative (Re Σ g·dy = Re Σ c·v
    along random complex directions); a real argument gets a real cotangent of its shape."""
    assert fn in tapegrad.registry.COMPLEX
    check_complex_rule(fn, *args, rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn, args, kwargs", COMPLEX_TABLE)
def test_complex_rule_forward_mode(fn, args, kwargs, rng):
    """jvp along a random complex direction of each argument equals central differences."""
    check_complex_jvp(fn, *args, rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn", COMPLEX_UNARY, ids=lambda f: f.__name__)
def test_complex_unary_to_second_order_through_a_real_parametrization(fn):
    """f(x, y) = power(fn(x + iy)) is real of real: gradients and every second-order mode agree
    with central differences (this also checks the pullbacks when traced)."""
    check_grad(lambda x, y: power(fn(x + 1j * y)), rx(3), _C.uniform(0.2, 0.8, 3), order=2)


@pytest.mark.parametrize("fn", COMPLEX_BINARY, ids=lambda f: f.__name__)
def test_complex_binary_to_second_order_through_a_real_parametrization(fn):
    """(Broadcast operands are checked to first order in COMPLEX_TABLE; at second order the
    traced pullback sums a complex cotangent with np.sum, whose complex rule is the reduction
    family's.)"""
    check_grad(lambda a, b, c, d: power(fn(a + 1j * b, c + 1j * d)),
               rx(2, 3), _C.uniform(0.2, 0.8, (2, 3)), rx(2, 3), _C.uniform(0.2, 0.8, (2, 3)), order=2)
    # a real argument beside a complex one: its gradient is real
    check_grad(lambda a, c, d: power(fn(a, c + 1j * d)), rx(3), rx(3), _C.uniform(0.2, 0.8, 3), order=2)
    check_grad(lambda a, b, c: power(fn(a + 1j * b, c)), rx(3), _C.uniform(0.2, 0.8, 3), rx(3), order=2)


def test_complex_power_at_base_zero():
    """0**y for complex y: the base's slope y·0**(y-1) is 0 for y = 2 and 1 for y = 1 (as for
    real values); the exponent gets 0 (log 0 is taken as 0, as autograd and JAX do)."""
    for y, slope in [(2 + 0j, 0), (1 + 0j, 1)]:
        _, back = rrule(np.power, 0j, y)
        _, dx, dy = back(1 + 0j)
        assert getitem((dx,), 0) == slope and getitem((dy,), 0) == 0


def test_complex_sinc_at_zero_is_zero():
    """sinc'(0) = 0 for a complex 0 too (its limit, as for real x)."""
    _, (_, d) = grad(lambda z: np.sinc(z), 0j, seed=1.0)
    assert d == 0


def test_complex_abs_at_zero_is_zero():
    _, (_, d) = grad(lambda z: np.sum(np.abs(z)), np.array([0j, 3 + 4j]))
    np.testing.assert_allclose(d, [0, 0.6 - 0.8j])


def test_complex_angle_at_zero_is_nan():
    """The angle has no limit at 0: nan there, as arctan2 at the origin."""
    with np.errstate(all="ignore"):
        _, (_, d) = grad(lambda z: np.angle(z), 0j)
    assert np.isnan(d)


def test_cbrt_of_complex_is_refused_by_numpy():
    """numpy has no complex cube root: the call fails as in plain numpy, not with a wrong derivative."""
    with pytest.raises(TypeError, match="cbrt"):
        grad(lambda z: np.real(np.cbrt(z)), 1 + 1j)
    assert np.cbrt not in tapegrad.registry.COMPLEX


# --- fast paths, checked against their reference rules ---

#: the rows of the binary table whose rule has a fast path (tapegrad.registry.fast_path)
FAST = [row for row in BINARY if row[0] in tapegrad.registry.REFERENCES]
#: the kinds of argument the fast paths take shortcuts for, and the ones they leave alone
KINDS = {
    "floats": lambda rng, d: middle(d),
    "float64 scalars": lambda rng, d: np.float64(lower(d)),
    "int": lambda rng, d: 2,
    "one shape": lambda rng, d: sample(rng, d, (2, 3)),
    "row": lambda rng, d: sample(rng, d, (3,)),
    "column": lambda rng, d: sample(rng, d, (2, 1)),
    "0-d": lambda rng, d: np.array(middle(d)),
    "float32": lambda rng, d: sample(rng, d, (2, 3), np.float32),
    "complex": lambda rng, d: sample(rng, d, (2, 3)) + 0.5j * sample(rng, d, (2, 3)),
    "large": lambda rng, d: sample(rng, d, (64, 64)),
    "long row": lambda rng, d: sample(rng, d, (64,)),
}
#: (x kind, y kind)
KIND_PAIRS = [("floats", "floats"), ("floats", "int"), ("int", "floats"), ("float64 scalars", "floats"),
              ("one shape", "one shape"), ("floats", "one shape"), ("one shape", "floats"), ("one shape", "int"),
              ("column", "row"), ("0-d", "one shape"), ("float32", "float32"), ("float32", "floats"),
              ("complex", "one shape"), ("one shape", "complex"), ("complex", "complex"), ("large", "large"),
              ("floats", "large"), ("large", "floats"), ("large", "long row")]
NEEDS_CASES = [None, (True, True), (True, False), (False, True)]


def _value(t):
    """A tangent as a value: a Thunk evaluated."""
    return t.fn() if isinstance(t, tapegrad.extend.Thunk) else t


#: the suite's stand-in threshold (0: every array takes the large-array paths) and the library's
THRESHOLDS = [0, 1 << 14]


@pytest.mark.parametrize("threshold", THRESHOLDS, ids=lambda t: f"stand-ins from {t} bytes")
@pytest.mark.parametrize("needs", NEEDS_CASES, ids=str)
@pytest.mark.parametrize("kinds", KIND_PAIRS, ids=" ".join)
@pytest.mark.parametrize("fn, xdomain, ydomain", FAST, ids=name)
def test_fast_path_agrees_with_its_reference(fn, xdomain, ydomain, kinds, needs, threshold, rng, monkeypatch):
    """A fast path gives its reference rule's value, and the tangents `needs` asks for, of every
    kind of argument: the ones it takes a shortcut for and the ones it passes on."""
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", threshold)
    if fn in (np.power, np.float_power) and kinds[0] == "int":
        pytest.skip("an int base: numpy's integer power, not differentiable")
    fast, reference = tapegrad.registry.RULES[fn], tapegrad.registry.REFERENCES[fn]
    x, y = KINDS[kinds[0]](rng, xdomain), KINDS[kinds[1]](rng, ydomain)
    z, back = fast(x, y) if needs is None or fn not in tapegrad.registry.NEEDS else fast(x, y, needs=needs)
    want, want_back = reference(x, y)
    np.testing.assert_allclose(z, want, rtol=1e-15, atol=0)
    assert np.shape(z) == np.shape(want) and np.result_type(z) == np.result_type(want)
    dz = sample(rng, (-1, 1), np.shape(want)).astype(np.result_type(want))
    got, expected = back(dz), want_back(dz)
    for i, arg in ((1, x), (2, y)):
        if needs is not None and not needs[i - 1]:
            continue
        g, e = _value(got[i]), _value(expected[i])
        if e is NO_TANGENT or e is ZERO:
            assert g is NO_TANGENT or g is ZERO, (i, g)
            continue
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-300, err_msg=f"argument {i}")
        assert np.shape(g) == np.shape(arg), (i, np.shape(g), np.shape(arg))


#: (x shape, y shape): one shape, a broadcast row, a number beside an array, two numbers
TRACED_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2, 3)), ((2, 3), ()), ((), ())]


@pytest.mark.parametrize("shapes", TRACED_SHAPES, ids=str)
@pytest.mark.parametrize("fn, xdomain, ydomain", FAST, ids=name)
def test_fast_path_agrees_with_its_reference_when_traced(fn, xdomain, ydomain, shapes, rng):
    """Traced through (a second derivative, a compiled gradient's program), a fast path gives
    what its reference rule gives: it decides on types, shapes and dtypes, never on values."""
    x, y = (sample(rng, d, s) if s else middle(d) for d, s in zip((xdomain, ydomain), shapes))

    def loss(a, b):
        return np.sum(np.sin(fn(a, b)))

    def both(x, y):
        dx, dy = gradient(loss, x, y)
        return np.sum(dx * dx) + 3 * np.sum(dy)

    def run():
        program = compiled_grad(loss, tiers=False)
        program(x, y)  # traces
        return gradient(both, x, y), program(x, y)[1][1:]  # the program's own run

    fast = run()
    with reference_rule(fn):
        want = run()
    for g, e in zip(fast[0] + fast[1], want[0] + want[1]):
        np.testing.assert_allclose(g, e, rtol=1e-12)
        assert np.shape(g) == np.shape(e) and type(g) is type(e)


class reference_rule:
    """Within it, `fn`'s reference rule stands in the registry instead of its fast path."""

    def __init__(self, fn):
        self.fn = fn

    def __enter__(self):
        registry = tapegrad.registry
        self.saved = registry.RULES[self.fn], self.fn in registry.NEEDS
        registry.RULES[self.fn] = registry.REFERENCES[self.fn]
        registry.NEEDS.discard(self.fn)

    def __exit__(self, *exc):
        registry = tapegrad.registry
        registry.RULES[self.fn] = self.saved[0]
        if self.saved[1]:
            registry.NEEDS.add(self.fn)


#: the rows of the unary table whose rule has a fast path
FAST_UNARY = [row for row in UNARY if row[0] in tapegrad.registry.REFERENCES]
UNARY_KINDS = ["floats", "float64 scalars", "one shape", "0-d", "float32", "complex", "large"]


@pytest.mark.parametrize("threshold", THRESHOLDS, ids=lambda t: f"stand-ins from {t} bytes")
@pytest.mark.parametrize("kind", UNARY_KINDS)
@pytest.mark.parametrize("fn, domain", FAST_UNARY, ids=name)
def test_unary_fast_path_agrees_with_its_reference(fn, domain, kind, threshold, rng, monkeypatch):
    """A unary fast path gives its reference rule's value and tangent, the cotangent it is
    given left as it was."""
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", threshold)
    fast, reference = tapegrad.registry.RULES[fn], tapegrad.registry.REFERENCES[fn]
    x = KINDS[kind](rng, domain)
    (z, back), (want, want_back) = fast(x), reference(x)
    np.testing.assert_allclose(z, want, rtol=1e-15, atol=0)
    dz = sample(rng, (-1, 1), np.shape(want)).astype(np.result_type(want))
    before = np.copy(dz)
    np.testing.assert_allclose(_value(back(dz)[1]), _value(want_back(dz)[1]), rtol=1e-13)
    np.testing.assert_array_equal(dz, before)


def test_every_fast_path_is_checked_against_its_reference():
    """Each function with a fast path has rows in the tables above."""
    checked = {row[0] for row in FAST} | {row[0] for row in FAST_UNARY}
    assert set(tapegrad.registry.REFERENCES) <= checked

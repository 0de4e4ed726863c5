"""Rules of numpy's integration, interpolation and polynomial helpers: trapezoid (and trapz
where numpy has it), interp and polyval."""
import tapegrad.rules.interpolation  # noqa: F401  (registers the rules)

import numpy as np
import pytest

import tapegrad
from tapegrad import ZERO, check_grad, grad, gradient, jacobian
from tapegrad.errors import ComplexValueError
from tapegrad.registry import COMPLEX, RULES

from _complex import complex_of, complex_table_tests, power
from _rule_tables import DTYPES

#: interp's knots and values: the queries `inputs` draws for interp keep at least 0.075 from
#: every multiple of 0.25, so from these knots also when a row moves them by 0.02·v
XP = np.array([-0.75, -0.25, 0.0, 0.5, 0.75])
FP = np.array([0.3, -1.2, 0.8, 2.0, -0.5])
#: queries outside [XP[0], XP[-1]], on both sides
OUT = np.array([-2.0, -1.5, 1.2, 3.0])
#: queries inside and outside, none on a knot
Q = np.array([-1.1, -0.6, -0.1, 0.2, 0.6, 0.9])
X5 = np.array([0.0, 0.4, 1.5, 1.7, 3.0])


def row(label, fn, shapes, f):
    return pytest.param(fn, shapes, f, id=f"{fn.__name__} {label}".strip())


def trapezoid_rows(fn):
    """The same rows for np.trapezoid and for its old name np.trapz."""
    return [
        row("", fn, [(5,)], lambda y: fn(y)),
        row("dx keyword", fn, [(3, 5)], lambda y: fn(y, dx=0.5)),
        row("constant x", fn, [(3, 5)], lambda y: fn(y, X5)),
        row("1-d x beside 2-d y", fn, [(3, 5), (5,)], lambda y, x: fn(y, x)),
        row("x alone", fn, [(5,)], lambda x: fn(np.sin(X5) + 2, x)),
        row("x keyword axis=0", fn, [(4, 3), (4,)], lambda y, x: fn(y, x=x, axis=0)),
        row("x of y's shape", fn, [(3, 5), (3, 5)], lambda y, x: fn(y, x)),
        row("x of y's shape axis=0", fn, [(4, 3), (4, 3)], lambda y, x: fn(y, x, axis=0)),
        row("x broadcast (1, n)", fn, [(3, 5), (1, 5)], lambda y, x: fn(y, x)),
        row("x broadcast over a 1-d y", fn, [(5,), (3, 5)], lambda y, x: fn(y, x)),
        row("3-d axis=1", fn, [(2, 3, 4), (3,)], lambda y, x: fn(y, x, axis=1)),
        row("dx traced", fn, [(3, 5), ()], lambda y, d: fn(y, dx=d)),
        row("dx positional", fn, [(4,), ()], lambda y, d: fn(y, None, d, 0)),
        row("dx array", fn, [(3, 5), (3, 1)], lambda y, d: fn(y, dx=d)),
        row("dx beside x", fn, [(3, 5), (5,), ()], lambda y, x, d: fn(y, x, d)),
        row("x a list of scalars", fn, [(2, 3), (), ()], lambda y, a, b: fn(y, [0.0, a, b + 2.0])),
    ]


TABLE = [
    *trapezoid_rows(np.trapezoid),
    *(trapezoid_rows(np.trapz) if hasattr(np, "trapz") else []),
    row("x", np.interp, [(6,)], lambda u: np.interp(u, XP, FP)),
    row("x scalar", np.interp, [()], lambda u: np.interp(u, XP, FP)),
    row("x 2-d", np.interp, [(2, 3)], lambda u: np.interp(u, XP, FP)),
    row("x outside", np.interp, [(4,)], lambda u: np.interp(OUT + 0.1 * u, XP, FP)),
    row("xp", np.interp, [(5,)], lambda v: np.interp(Q, XP + 0.02 * v, FP)),
    row("fp", np.interp, [(5,)], lambda f: np.interp(Q, XP, f)),
    row("fp a list of scalars", np.interp, [(6,), (), ()], lambda u, a, b: np.interp(u, XP, [a, 0.5, b, -1.0, 2.0])),
    row("fp keyword", np.interp, [(6,), (5,)], lambda u, f: np.interp(u, XP, fp=f)),
    row("x xp fp", np.interp, [(6,), (5,), (5,)], lambda u, v, f: np.interp(u, XP + 0.02 * v, f)),
    row("left right", np.interp, [(4,), (), ()], lambda u, a, b: np.interp(OUT + 0.1 * u, XP, FP, a, b)),
    row("left right keywords", np.interp, [(6,), (), ()],
        lambda u, a, b: np.interp(np.concatenate([u, OUT]), XP, FP, left=a, right=b)),
    row("everything", np.interp, [(6,), (5,), (5,), (), ()],
        lambda u, v, f, a, b: np.interp(np.concatenate([u, OUT]), XP + 0.02 * v, f, a, b)),
    row("", np.polyval, [(4,), (5,)], lambda p, x: np.polyval(p, x)),
    row("x scalar", np.polyval, [(4,), ()], lambda p, x: np.polyval(p, x)),
    row("x 2-d", np.polyval, [(3,), (2, 3)], lambda p, x: np.polyval(p, x)),
    row("p alone", np.polyval, [(5,)], lambda p: np.polyval(p, X5)),
    row("x alone", np.polyval, [(2, 3)], lambda x: np.polyval(FP, x)),
    row("x keyword", np.polyval, [(4,), (5,)], lambda p, x: np.polyval(p, x=x)),
    row("p with a trailing axis", np.polyval, [(3, 4), (4,)], lambda p, x: np.polyval(p, x)),
    row("p a list of scalars", np.polyval, [(), (), (5,)], lambda a, b, x: np.polyval([a, b, 1.5], x)),
    row("x a list of scalars", np.polyval, [(3,), (), ()], lambda p, a, b: np.polyval(p, [a, b])),
    row("degree 0", np.polyval, [(1,), (3,)], lambda p, x: np.polyval(p, x) * x),
]

EXERCISED = {p.values[0] for p in TABLE}


def inputs(rng, shapes, dtype, fn):
    if fn is np.interp:
        # odd multiples of 1/8, moved by at most 0.05: well off the knots (multiples of 1/4),
        # so that a step of central differences stays in one interval
        xs = [(rng.integers(-4, 4, size=s) + 0.5) / 4 + rng.uniform(-0.05, 0.05, size=s) for s in shapes]
    else:
        xs = [rng.uniform(-1, 1, size=s) for s in shapes]
    return [np.asarray(x).astype(dtype) for x in xs]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """Each rule's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype, fn))


def _t(*values):
    return tuple(np.array(v, dtype=float) if isinstance(v, list) else v for v in values)


#: (rule, function to differentiate twice, args at a smooth point): every differentiable
#: argument of each rule, traced together
ORDER2 = [
    (np.trapezoid, lambda y, x: np.sum(np.trapezoid(y, x) ** 2),
     _t([[0.3, -1.0, 0.5, 2.0], [1.2, 0.1, -0.4, 0.8]], [0.0, 0.5, 1.2, 2.0])),
    (np.trapezoid, lambda y, x: np.sum(np.trapezoid(y, x, axis=0) ** 2),
     _t([[0.3, -1.0, 0.5], [1.2, 0.1, -0.4]], [[0.0, 0.5, 1.2], [1.0, 1.3, 2.0]])),
    (np.trapezoid, lambda y, d: np.sum(np.trapezoid(y ** 2, dx=d) ** 2), _t([[0.3, -1.0, 0.5], [1.2, 0.1, -0.4]], 0.7)),
    (np.interp, lambda x, xp, fp, a, b: np.sum(np.interp(np.concatenate([x, OUT]), xp, fp, a, b) ** 2),
     _t([-0.6, -0.1, 0.2, 0.6, 0.3], [-0.7, -0.2, 0.05, 0.45, 0.8], [0.3, -1.2, 0.8, 2.0, -0.5], 0.4, -0.9)),
    (np.interp, lambda x, fp: np.sum(np.interp(x, XP, fp) ** 3),
     _t([-1.1, -0.1, 0.2, 0.9], [0.3, -1.2, 0.8, 2.0, -0.5])),
    (np.polyval, lambda p, x: np.sum(np.polyval(p, x) ** 2), _t([0.5, -1.0, 2.0, 0.3], [-0.8, 0.1, 0.7, 1.3])),
    (np.polyval, lambda p, x: np.sum(np.polyval(p, x) ** 2),
     _t([[0.5, -1.0], [2.0, 0.3], [1.1, -0.2]], [[0.4], [-0.9]])),
    (np.polyval, lambda a, b, x: np.sum(np.polyval([a, b, 1.5], x) ** 2), _t(0.5, -1.2, [0.3, 1.1])),
    (np.interp, lambda x, a, b: np.sum(np.interp(x, XP, [a, 0.5, b, -1.0, 2.0]) ** 2), _t([-0.6, 0.2], 0.3, 1.4)),
    *([(np.trapz, lambda y, x: np.trapz(y, x) ** 2, _t([0.3, -1.0, 0.5, 2.0], [0.0, 0.5, 1.2, 2.0]))]
      if hasattr(np, "trapz") else []),
]


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(fn, f, args):
    """The pullbacks are numpy code a Tracer records: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


# --- closed forms ---


def test_values_are_numpys():
    """Traced, each function gives numpy's own result, bit for bit."""
    y, x = np.array([0.3, -1.0, 0.5, 2.0]), np.array([0.0, 0.5, 1.2, 2.0])
    cases = [
        (lambda y, x: np.trapezoid(y, x), (y, x)),
        (lambda y: np.trapezoid(y, dx=0.1), (y,)),
        (lambda q, fp: np.interp(q, XP, fp, -3.0, 4.0), (Q, FP)),
        (lambda p, x: np.polyval(p, x), (y, Q)),
    ]
    for f, args in cases:
        traced, _ = tapegrad.trace(f, *args)
        assert np.shape(traced) == np.shape(f(*args))
        np.testing.assert_array_equal(traced, f(*args))
        np.testing.assert_array_equal(grad(f, *args, seed=np.ones_like(f(*args)))[0], f(*args))


def test_trapezoid_closed_forms():
    """d/dy trapezoid(y, dx=h) = h·[½, 1, ..., 1, ½]; d/dx trapezoid(y, x) = (s_{i-1} - s_i) with
    s the interval means; d/d(dx) = trapezoid(y, dx=1)."""
    y = np.array([0.3, -1.0, 0.5, 2.0, 1.25])
    x = np.array([0.0, 0.5, 1.2, 2.0, 2.5])
    np.testing.assert_array_equal(gradient(lambda y: np.trapezoid(y, dx=0.5), y)[0], [0.25, 0.5, 0.5, 0.5, 0.25])
    s = (y[1:] + y[:-1]) / 2
    np.testing.assert_allclose(gradient(lambda x: np.trapezoid(y, x), x)[0],
                               np.append(0, s) - np.append(s, 0), rtol=0, atol=1e-15)
    dy, dd = gradient(lambda y, d: np.trapezoid(y, dx=d), y, 0.5)
    assert dd == np.trapezoid(y)
    # along axis 0 of a matrix, a 1-d x: each column is a 1-d trapezoid
    ys = np.stack([y, y ** 2], axis=1)
    np.testing.assert_allclose(gradient(lambda x: np.sum(np.trapezoid(ys, x, axis=0) * [1.0, 0.0]), x)[0],
                               np.append(0, s) - np.append(s, 0), rtol=0, atol=1e-15)


def test_trapezoid_dx_beside_x_is_not_used():
    """numpy ignores dx when x is given: its gradient is zero."""
    y, x = np.array([0.3, -1.0, 0.5]), np.array([0.0, 0.5, 1.2])
    assert grad(lambda y, x, d: np.trapezoid(y, x, d), y, x, 0.5)[1][3] is ZERO


def test_trapezoid_dx_alone():
    """A traced dx beside a constant y goes through numpy's own body (numpy does not dispatch on
    dx): the slope is still trapezoid(y, dx=1)."""
    y = np.array([0.3, -1.0, 0.5, 2.0])
    assert gradient(lambda d: np.trapezoid(y, dx=d), 0.5)[0] == np.trapezoid(y)


def test_trapezoid_of_an_empty_or_single_point_axis_has_zero_gradient():
    for y in (np.zeros((2, 0)), np.ones((2, 1))):
        np.testing.assert_array_equal(gradient(lambda y: np.sum(np.trapezoid(y)), y)[0], np.zeros_like(y))


def test_interp_fp_gradient_is_the_hat_functions():
    """∂interp(q, xp, fp)/∂fp_k is the hat function of knot k at q: numpy's interp of the unit vector."""
    jac = jacobian(lambda f: np.interp(Q, XP, f), FP)
    hats = np.stack([np.interp(Q, XP, e) for e in np.eye(len(XP))], axis=1)
    np.testing.assert_allclose(jac, hats, rtol=0, atol=1e-15)


def test_interp_x_and_xp_closed_forms():
    """∂y/∂x = m, ∂y/∂xp_j = m(t - 1), ∂y/∂xp_{j+1} = -m t in the interval of q."""
    q = 0.2  # in [XP[2], XP[3]) = [0, 0.5)
    h = XP[3] - XP[2]
    t, m = (q - XP[2]) / h, (FP[3] - FP[2]) / h
    dq, dxp = gradient(lambda q, xp: np.interp(q, xp, FP), q, XP)
    np.testing.assert_allclose(dq, m, rtol=1e-15)
    np.testing.assert_allclose(dxp, [0, 0, m * (t - 1), -m * t, 0], rtol=0, atol=1e-14)


def test_interp_at_knots_and_outside():
    """At a knot the slope is the one of the interval to the right (numpy's interval
    [xp_j, xp_{j+1})); at the last knot and outside the range it is 0, and the value numpy
    gives there (fp[0], fp[-1], left or right) gets slope 1."""
    knots = np.array([XP[0], XP[1], XP[3], XP[-1]])
    slopes = np.diff(FP) / np.diff(XP)
    np.testing.assert_array_equal(gradient(lambda q: np.sum(np.interp(q, XP, FP)), knots)[0],
                                  [slopes[0], slopes[1], slopes[3], 0.0])
    out = np.array([-3.0, 1.0, XP[-1]])
    dq, dfp = gradient(lambda q, f: np.sum(np.interp(q, XP, f) * [1.0, 10.0, 100.0]), out, FP)
    np.testing.assert_array_equal(dq, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(dfp, [1.0, 0, 0, 0, 110.0])
    dq, dfp, dl, dr = gradient(lambda q, f, a, b: np.sum(np.interp(q, XP, f, a, b) * [1.0, 10.0, 100.0]),
                               out, FP, 0.5, -0.5)
    np.testing.assert_array_equal(dfp, [0, 0, 0, 0, 100.0])  # x = xp[-1] gives fp[-1], not right
    assert (dl, dr) == (1.0, 10.0)


def test_interp_at_a_knot_matches_a_one_sided_difference():
    """The slope at a knot is numpy's own right-hand difference quotient."""
    q, h = XP[2], 1e-7
    right = (np.interp(q + h, XP, FP) - np.interp(q, XP, FP)) / h
    np.testing.assert_allclose(gradient(lambda q: np.interp(q, XP, FP), q)[0], right, rtol=1e-6)


def test_interp_left_right_traced_alone_are_not_seen():
    """numpy dispatches interp on x, xp and fp only: a traced left or right beside three
    constants reaches numpy's compiled code, which asks float() of it. The error names the
    line; the derivative is there as soon as one of x, xp, fp is traced (the rows above)."""
    with pytest.raises(tapegrad.ConcreteValueError, match="float"):
        gradient(lambda b: np.sum(np.interp(OUT, XP, FP, right=b)), 0.5)
    assert gradient(lambda f, b: np.sum(np.interp(OUT, XP, f, right=b)), FP, 0.5)[1] == 2.0


def test_interp_period_is_refused():
    with pytest.raises(NotImplementedError, match=r"numpy.interp with period="):
        gradient(lambda q: np.sum(np.interp(q, XP, FP, period=2.0)), Q)


def test_interp_of_complex_fp_is_refused():
    """interp's rule is written for real values: a complex fp raises instead of a wrong gradient."""
    assert np.interp not in COMPLEX
    with pytest.raises(ComplexValueError):
        gradient(lambda q: np.abs(np.sum(np.interp(q, XP, FP + 1j * FP))), Q)


def test_polyval_closed_forms():
    """∂polyval(p, x)/∂p = [x^(n-1), ..., x, 1], ∂/∂x = polyval(polyder(p), x), and the second
    derivative in x is polyval(polyder(p, 2), x)."""
    p, x = np.array([0.5, -1.0, 2.0, 0.3]), 1.7
    dp, dx = gradient(lambda p, x: np.polyval(p, x), p, x)
    np.testing.assert_allclose(dp, x ** np.arange(3.0, -1.0, -1.0), rtol=1e-15)
    np.testing.assert_allclose(dx, np.polyval(np.polyder(p), x), rtol=1e-14)
    d2 = gradient(lambda x: gradient(lambda x: np.polyval(p, x), x)[0], x)[0]
    np.testing.assert_allclose(d2, np.polyval(np.polyder(p, 2), x), rtol=1e-14)
    # at x = 0 too (x⁰ is 1 there, with no power to differentiate)
    np.testing.assert_array_equal(gradient(lambda p: np.polyval(p, 0.0), p)[0], [0, 0, 0, 1])


def test_polyval_list_of_coefficients_gets_a_list():
    """p passed as a list of traced numbers: the gradient of each entry, in a list."""
    _, (_, dp, dx) = grad(lambda p, x: np.polyval(p, x), [0.5, -1.0, 2.0], 3.0)
    assert isinstance(dp, list)
    np.testing.assert_allclose(dp, [9.0, 3.0, 1.0], rtol=1e-15)
    assert dx == 2 * 0.5 * 3.0 - 1.0


@pytest.mark.parametrize("f", [
    lambda x, d: np.trapezoid(x, dx=d), lambda x, a: np.interp(OUT, XP, x, left=a),
    lambda x, c: np.polyval(np.append(x, c), 0.5),
], ids=["trapezoid dx", "interp left", "polyval"])
def test_python_float_arguments_get_float_gradients(f):
    """A Python float beside an array (a spacing, a fill value, a coefficient) gets a float gradient."""
    x = np.array([0.3, 1.2, 2.0, 0.1, -0.4])
    check_grad(f, x, 1.5)
    assert type(grad(lambda x, y: np.sum(f(x, y) ** 2), x, 1.5)[1][2]) is float


# --- complex values (autograd's convention: tests/rules/_complex.py) ---


def cvalues(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def crow(label, fn, *args, wrt=None, **kwargs):
    return pytest.param(fn, args, kwargs, wrt, id=f"{fn.__name__} {label}".strip())


def _complex_table():
    rng = np.random.default_rng(22)
    z35, x5 = cvalues(rng, (3, 5)), np.array([0.0, 0.4, 1.5, 1.7, 3.0])
    trapz = [np.trapz] if hasattr(np, "trapz") else []
    return [
        *(crow(label, fn, *args, **kw) for fn in [np.trapezoid, *trapz] for label, args, kw in [
            ("", (z35,), {}),
            ("real x", (z35, x5), {}),
            ("complex x", (z35, cvalues(rng, (5,))), {}),
            ("x of y's shape axis=0", (cvalues(rng, (4, 3)), cvalues(rng, (4, 3)), 1.0, 0), {}),
            ("complex dx", (z35, None, 0.5 - 0.25j), {}),
            ("real y complex dx", (rng.standard_normal(4), None, 0.5 + 1j), {}),
        ]),
        crow("", np.polyval, cvalues(rng, (4,)), cvalues(rng, (5,))),
        crow("real x", np.polyval, cvalues(rng, (4,)), rng.standard_normal((2, 3))),
        crow("real p", np.polyval, rng.standard_normal(3), cvalues(rng, (5,))),
        crow("trailing axis", np.polyval, cvalues(rng, (3, 4)), cvalues(rng, (4,))),
    ]


COMPLEX_TABLE = _complex_table()


test_complex_rule_pullback, test_complex_rule_jvp = complex_table_tests(COMPLEX_TABLE)


def test_complex_rules_are_declared():
    """The rules of the complex table are those this family declares for complex values."""
    family = "tapegrad.rules.interpolation"
    assert {p.values[0] for p in COMPLEX_TABLE} == {
        fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) == family}


def _sq(x, y):
    z = complex_of(x, y)
    return z * z


#: (rule, function of real arrays through the rule on complex values, shapes of the arrays)
COMPLEX_ORDER2 = [
    (np.trapezoid, lambda x, y: power(np.trapezoid(_sq(x, y), complex_of(y, x), axis=0)), [(4, 3), (4, 3)]),
    (np.polyval, lambda x, y: power(np.polyval(_sq(x, y), complex_of(y, x))), [(3,), (3,)]),
]


@pytest.mark.parametrize("fn, f, shapes", COMPLEX_ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_complex_rule_second_order(fn, f, shapes, rng):
    """Second derivatives through a real parametrization match central differences (reverse over reverse)."""
    check_grad(f, *[rng.uniform(0.3, 1.5, s) * np.sign(rng.standard_normal(s)) for s in shapes],
               order=2, modes=("rev",))

"""Rules of numpy functions ported autograd code reaches for: diff, gradient, cross, linspace,
append, rollaxis, partition, select, unique, nan_to_num, real_if_close, angle, eig, eigvals and
einsum's interleaved form; isclose and allclose are non-differentiable."""
import numpy as np
import pytest

import tapegrad
from tapegrad import ZERO, check_grad, grad, gradient
from tapegrad.registry import COMPLEX, RULES

from _complex import check_complex_jvp, check_complex_rule, complex_of, power
from _rule_tables import DTYPES

SPACING = np.array([0.0, 1.0, 3.0, 4.0, 7.0])


def well_separated(x):
    """A matrix with real, distinct eigenvalues near 1, 3, 5, 7, moved smoothly by x."""
    return 0.3 * x + np.diag(np.arange(1.0, 2.0 * np.shape(x)[-1], 2.0))


def row(label, fn, shapes, f):
    return pytest.param(fn, shapes, f, id=f"{fn.__name__} {label}")


#: (rule, input shapes, function of the inputs going through the rule)
TABLE = [
    row("", np.diff, [(3, 5)], lambda x: np.diff(x)),
    row("n=2 axis=0", np.diff, [(4, 3)], lambda x: np.diff(x, 2, axis=0)),
    row("prepend append", np.diff, [(3, 5)], lambda x: np.diff(x, n=2, prepend=1.5, append=x[:, :2])),
    row("prepend traced", np.diff, [(4,), ()], lambda x, p: np.diff(x, prepend=p)),
    row("", np.gradient, [(5,)], lambda x: np.gradient(x)),
    row("2-d both axes", np.gradient, [(3, 5)], lambda x: np.gradient(x)[1] * 2 + np.gradient(x)[0]),
    row("coordinates edge_order=2", np.gradient, [(3, 5)],
        lambda x: np.gradient(x, 0.5, SPACING, edge_order=2)[1]),
    row("axis", np.gradient, [(3, 5)], lambda x: np.gradient(x, 0.25, axis=1)),
    row("", np.cross, [(3,), (3,)], lambda a, b: np.cross(a, b)),
    row("broadcast", np.cross, [(4, 3), (3,)], lambda a, b: np.cross(a, b)),
    row("axes", np.cross, [(3, 4), (2, 1, 3)], lambda a, b: np.cross(a, b, axisa=0, axisc=0)),
    row("", np.linspace, [(), ()], lambda a, b: np.linspace(a, b, 7)),
    row("arrays axis=1 no endpoint", np.linspace, [(2, 3), (3,)], lambda a, b: np.linspace(a, b, 4, endpoint=False, axis=1)),
    row("retstep", np.linspace, [(), (3,)],
        lambda a, b: np.linspace(a, b, 4, retstep=True)[1] * 3 + np.sum(np.linspace(a, b, 4, retstep=True)[0] ** 2)),
    row("", np.append, [(3, 5), (5,)], lambda x, v: np.append(x, v)),
    row("axis", np.append, [(3, 5), (1, 5)], lambda x, v: np.append(x, v, axis=0)),
    row("", np.rollaxis, [(3, 5, 2)], lambda x: np.rollaxis(x, 2)),
    row("start", np.rollaxis, [(3, 1, 5)], lambda x: np.rollaxis(x, 0, 3)),
    row("negative", np.rollaxis, [(3, 4, 2)], lambda x: np.rollaxis(x, -1, 1)),
    row("", np.partition, [(3, 5)], lambda x: np.partition(x, 2)),
    row("kth list axis=0", np.partition, [(4, 3)], lambda x: np.partition(x, (0, 2), axis=0)),
    row("axis=None", np.partition, [(3, 5)], lambda x: np.partition(x, 4, axis=None)),
    row("", np.select, [(3, 5)], lambda x: np.select([x > 0.5, x < -0.5], [x ** 2, np.sin(x[0])], x * 3)),
    row("scalar default", np.select, [(4,), ()], lambda x, d: np.select([x > 0], [x], d)),
    # without a default, or with one by keyword (the pullback returned a tangent for a default
    # the call did not give: a RuleError)
    row("no default", np.select, [(3, 5)], lambda x: np.select([x > 0.5, x < -0.5], [x ** 2, np.sin(x)])),
    row("keyword default", np.select, [(4,), (4,)], lambda x, d: np.select([x > 0], [x], default=d * 2)),
    # repeated values (the same inputs twice): the first occurrence takes the cotangent
    row("", np.unique, [(5,)], lambda x: np.unique(np.concatenate([x, x[1:3]]))),
    row("2-d", np.unique, [(2, 3)], lambda x: np.unique(x)),
    row("with index inverse counts", np.unique, [(4,)],
        lambda x: (lambda r: r[0] * r[3] + np.sum(r[1]) + r[0][r[2]][:4])(
            np.unique(np.concatenate([x, x[:2], x[:1]]), True, return_inverse=True, return_counts=True))),
    row("rows axis=0", np.unique, [(3, 2)], lambda x: np.unique(np.concatenate([x, x[:1]]), axis=0)),
    row("columns axis=-1 unsorted", np.unique, [(2, 3)],
        lambda x: np.unique(np.concatenate([x, x[:, 1:]], axis=1), axis=-1, sorted=False)),
    row("", np.nan_to_num, [(3, 5)], lambda x: np.nan_to_num(np.log(x), nan=1.0, neginf=3.0)),
    row("", np.real_if_close, [(4,)], lambda x: np.real_if_close(x) * 2),
    row("", np.angle, [(4,)], lambda x: np.angle(x) * x),
    row("eigenvalues", np.linalg.eig, [(4, 4)], lambda x: np.linalg.eig(well_separated(x))[0]),
    row("eigenvectors", np.linalg.eig, [(4, 4)], lambda x: np.linalg.eig(well_separated(x))[1]),
    row("both, batch", np.linalg.eig, [(2, 3, 3)],
        lambda x: np.sum(np.linalg.eig(well_separated(x)).eigenvectors ** 3)
        + np.sum(np.linalg.eig(well_separated(x)).eigenvalues ** 2)),
    row("", np.linalg.eigvals, [(4, 4)], lambda x: np.linalg.eigvals(well_separated(x))),
    row("interleaved", np.einsum, [(3, 4), (4, 2)], lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [2, 0])),
    row("interleaved ellipsis", np.einsum, [(3, 4), (4, 2)], lambda a, b: np.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2])),
    row("interleaved trace", np.einsum, [(3, 3)], lambda a: np.einsum(a, [0, 0])),
    row("interleaved three", np.einsum, [(3, 4), (4, 2), (3,)], lambda a, b, c: np.einsum(a, [0, 1], b, [1, 2], c, [0], [2])),
]



EXERCISED = {p.values[0] for p in TABLE}

#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = []
for _p in TABLE:
    _fn, _shapes, _f = _p.values
    if _fn in {r[0] for r in ORDER2}:
        continue
    # distinct values in (0.2, 1.5): no ties for partition, inside log's domain for nan_to_num
    _args = tuple((0.2 + 1.3 * ((np.arange(1.0, 1.0 + np.prod(s)) * 0.618) % 1)).reshape(s) for s in _shapes)
    ORDER2.append((_fn, (lambda *xs, f=_f: np.sum(f(*xs) ** 2) / 2), _args))
del _p, _fn, _shapes, _f, _args


def inputs(rng, shapes, dtype, fn):
    if fn is np.partition:  # well apart, so that a step of central differences keeps the order
        return [rng.permutation(np.linspace(-1, 1, np.prod(s))).reshape(s).astype(dtype) for s in shapes]
    xs = [rng.uniform(0.2, 2, size=s) if fn is np.nan_to_num else rng.uniform(-1, 1, size=s) for s in shapes]
    return [x.astype(dtype) for x in xs]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """Each rule's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype, fn))


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(fn, f, args):
    """The pullbacks are numpy code a Tracer records: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


# --- behaviours ---


def test_diff_gradient_closed_form():
    """d/dx Σ w·diff(x) is (-w₀, w₀ - w₁, ..., w_last): the transposed difference."""
    w = np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(gradient(lambda x: np.sum(w * np.diff(x)), np.zeros(4))[0], [-1, -1, -2, 4])


def test_linspace_endpoints_closed_form():
    """Σ linspace(a, b, n) = n(a + b)/2: each endpoint has slope n/2."""
    assert gradient(lambda a, b: np.sum(np.linspace(a, b, 6)), 0.5, 2.0) == (3.0, 3.0)


def test_gradient_spacing_is_not_differentiated_silently():
    """A traced spacing of np.gradient raises, naming the argument, instead of a zero gradient."""
    with pytest.raises(NotImplementedError, match=r"numpy.gradient with respect to its argument varargs"):
        gradient(lambda h: np.sum(np.gradient(np.arange(4.0) ** 2, h)), 0.5)


def test_cross_of_2_vectors_is_refused():
    """numpy's deprecated cross of 2-vectors is refused with the expression to write instead."""
    with pytest.raises(NotImplementedError, match=r"a\[..., 0\] \* b\[..., 1\]"):
        gradient(lambda a: np.cross(a, np.ones(2)), np.ones(2))


def test_unique_passes_each_cotangent_to_the_first_occurrence():
    """unique(x)ⱼ is x at its first occurrence (return_index): that element gets the cotangent, a
    later copy 0 (JAX's choice; perturbing only one copy would split the value in two)."""
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.unique(x) * [1.0, 10.0, 100.0]), x)[0],
                                  [100.0, 1.0, 0.0, 10.0, 0.0])
    rows = np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]])
    np.testing.assert_array_equal(gradient(lambda r: np.sum(np.unique(r, axis=0) * [[1.0, 2.0], [3.0, 4.0]]), rows)[0],
                                  [[3.0, 4.0], [1.0, 2.0], [0.0, 0.0]])


def test_unique_of_nans_passes_to_the_first_nan():
    """With numpy's equal_nan=True the nans are one unique value, taken from the first nan; with
    equal_nan=False each nan is its own."""
    x = np.array([np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(gradient(lambda x: np.nansum(np.unique(x) * 0.0) + np.unique(x)[1] * 2.0, x)[0],
                                  [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        gradient(lambda x: np.unique(x, equal_nan=False)[2] * 3.0, x)[0], [0.0, 0.0, 3.0])


def test_unique_integer_outputs_pass_nothing():
    """Only the counts and the indices used: piecewise constant, the gradient is zero."""
    _, (_, dx) = grad(lambda x: np.sum(np.unique(x, return_counts=True)[1] * 1.0), np.array([1.0, 1.0, 2.0]))
    assert dx is ZERO


def test_eig_trace_identity():
    """Σ eigenvalues = trace: the gradient of their sum is the identity."""
    a = well_separated(np.ones((3, 3)))
    np.testing.assert_allclose(gradient(lambda a: np.sum(np.linalg.eigvals(a)), a)[0], np.eye(3), atol=1e-12)


def test_angle_of_complex_is_differentiated():
    """angle(x + i) = arctan2(1, x): its derivative in x is -1/(1 + x²), a real gradient (the
    complex rule of angle; tests/rules/test_elementwise.py checks it on complex directions)."""
    x = np.array([0.5, -2.0])
    _, (_, d) = grad(lambda x: np.sum(np.angle(x + 1j)), x)
    assert d.dtype == np.float64
    np.testing.assert_allclose(d, -1 / (1 + x * x))


def test_isclose_and_allclose_are_nondifferentiable():
    """An input only isclose / allclose see gets ZeroTangent(); the rest of the gradient flows."""
    x = np.array([0.3, 1.0])
    assert grad(lambda x: np.sum(np.isclose(x, 0.3)), x)[1][1] is ZERO
    assert grad(lambda x: np.allclose(x, 0.3) * 1.0, x)[1][1] is ZERO
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.isclose(x, 0.3) * x), x)[0], [1.0, 0.0])


@pytest.mark.parametrize("f", [np.std, np.var], ids=lambda f: f.__name__)
def test_std_and_var_of_0d_array_have_slope_0(f):
    """The std and var of one number are 0 whatever it is: slope 0, as central differences give (not nan)."""
    for x in (np.array(1.5), np.array([1.5])):
        np.testing.assert_array_equal(gradient(f, x)[0], np.zeros_like(x))
    check_grad(lambda x: f(x[0]) + np.sum(x), np.array([1.5, 2.0]))


@pytest.mark.parametrize("f", [
    lambda x, y: np.append(x, y), lambda x, y: np.diff(x, prepend=y), lambda x, y: np.select([x > 1], [x], y),
    lambda x, y: np.linspace(y, x[0], 5), lambda x, y: np.nan_to_num(x * y),
], ids=["append", "diff prepend", "select default", "linspace start", "nan_to_num"])
def test_python_float_arguments_get_float_gradients(f):
    """A Python float beside an array (a prepend, a default, an endpoint) gets a float gradient."""
    x = np.array([0.3, 1.2, 2.0])
    check_grad(f, x, 1.5)
    assert type(grad(lambda x, y: np.sum(f(x, y) ** 2), x, 1.5)[1][2]) is float


# --- complex values (autograd's convention: tests/rules/_complex.py) ---

#: forward mode on complex values needs the core's complex tangents (a derived forward rule
#: takes complex arguments)


def cvalues(rng, shape):
    """Complex values with both parts random."""
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def crow(label, fn, *args, wrt=None, **kwargs):
    return pytest.param(fn, args, kwargs, wrt, id=f"{fn.__name__} {label}")


def _complex_table():
    rng = np.random.default_rng(21)
    z35, z43, z3, z5 = cvalues(rng, (3, 5)), cvalues(rng, (4, 3)), cvalues(rng, (3,)), cvalues(rng, (5,))
    dirty = cvalues(rng, (2, 3))
    dirty[0, 1] = complex(np.nan, 0.5)
    dirty[1, 0] = complex(-0.3, np.inf)
    dirty[1, 2] = complex(np.inf, np.nan)
    return [
        crow("", np.diff, z35),
        crow("n=2 axis=0", np.diff, z43, 2, 0),
        crow("prepend append", np.diff, z35, 2, -1, 1.5 - 1j, cvalues(rng, (3, 2))),
        crow("real prepend", np.diff, z35, 1, -1, rng.standard_normal((3, 1))),
        crow("", np.gradient, z5),
        crow("2-d both axes", np.gradient, z35),
        crow("coordinates edge_order=2", np.gradient, z35, 0.5, np.array([0.0, 1.0, 3.0, 4.0, 7.0]),
             edge_order=2, wrt=[0]),
        crow("axis", np.gradient, z35, 0.25, axis=1, wrt=[0]),
        crow("", np.cross, z3, cvalues(rng, (3,))),
        crow("real b broadcast", np.cross, cvalues(rng, (4, 3)), rng.standard_normal(3)),
        crow("axes", np.cross, cvalues(rng, (3, 4)), cvalues(rng, (2, 1, 3)), axisa=0, axisc=0),
        crow("", np.linspace, 1 + 2j, 3 - 1j, 7),
        crow("real start", np.linspace, 0.5, cvalues(rng, (3,)), 4),
        crow("arrays axis=1 no endpoint", np.linspace, cvalues(rng, (2, 3)), cvalues(rng, (3,)), 4,
             endpoint=False, axis=1),
        crow("retstep", np.linspace, 1 - 1j, cvalues(rng, (3,)), 4, retstep=True),
        crow("", np.append, z35, cvalues(rng, (5,))),
        crow("real values axis", np.append, z35, rng.standard_normal((1, 5)), axis=0),
        crow("", np.rollaxis, cvalues(rng, (3, 5, 2)), 2),
        crow("lexicographic", np.partition, cvalues(rng, (3, 5)), 2),
        crow("kth list axis 0", np.partition, cvalues(rng, (4, 3)), (0, 2), axis=0),
        crow("start", np.rollaxis, cvalues(rng, (3, 1, 5)), 0, 3),
        crow("", np.select, [np.array([True, False, True]), np.array([False, True, True])],
             [z3, cvalues(rng, (3,))], 0.5 + 1j, wrt=[2]),
        crow("real default", np.select, [np.array([True, False, False])], [z3], -0.7, wrt=[2]),
        crow("", np.nan_to_num, cvalues(rng, (2, 3))),
        crow("nan and inf in either part", np.nan_to_num, dirty, nan=1.0, posinf=2.0),
        crow("stays complex", np.real_if_close, z3),
        crow("", np.angle, z35),
        crow("deg", np.angle, z3, True),
    ]


COMPLEX_TABLE = _complex_table()


@pytest.mark.parametrize("fn, args, kwargs, wrt", COMPLEX_TABLE)
def test_complex_rule_pullback(fn, args, kwargs, wrt, rng):
    """The dot-product test of each rule on complex (and mixed real and complex) arguments."""
    with np.errstate(invalid="ignore"):
        check_complex_rule(fn, *args, rng=rng, kwargs=kwargs, wrt=wrt)


@pytest.mark.parametrize("fn, args, kwargs, wrt", COMPLEX_TABLE)
def test_complex_rule_jvp(fn, args, kwargs, wrt, rng):
    """Forward mode through each rule on complex arguments matches central differences."""
    if fn is np.select:
        wrt = [1]  # numpy dispatches select on condlist and choicelist, not on a default alone
    with np.errstate(invalid="ignore"):
        check_complex_jvp(fn, *args, rng=rng, kwargs=kwargs, wrt=wrt)


def test_complex_rules_are_declared():
    """The rules of the complex table are those the differences and selection families declare
    for complex values."""
    families = ("tapegrad.rules.differences", "tapegrad.rules.selection")
    assert {p.values[0] for p in COMPLEX_TABLE} == {fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) in families}


def test_select_of_complex_choices_passes_the_real_part_to_a_real_choice(rng):
    """select's choices passed as a list: the real choice gets the real part of its share."""
    z, x = cvalues(rng, (3,)), rng.standard_normal(3)
    conds = [np.array([True, False, False]), np.array([False, True, False])]
    y, back = tapegrad.rrule(np.select, conds, [z, x], 0.0)
    g = cvalues(rng, (3,))
    dz, dx = back(g)[2]
    np.testing.assert_array_equal(dz, [g[0], 0, 0])
    assert dx.dtype == np.float64
    np.testing.assert_array_equal(dx, [0, g[1].real, 0])


def test_angle_of_complex_has_the_closed_form_gradient():
    """angle(x + iy) = atan2(y, x): its gradient is (-y, x)/(x² + y²)."""
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.2])
    _, (_, dx, dy) = grad(lambda x, y: np.sum(np.angle(x + 1j * y)), x, y)
    np.testing.assert_allclose(dx, -y / (x * x + y * y), rtol=1e-14)
    np.testing.assert_allclose(dy, x / (x * x + y * y), rtol=1e-14)


def test_real_if_close_of_a_nearly_real_array_passes_the_real_part_back():
    """real_if_close of a complex array whose imaginary parts are negligible is its real part:
    the cotangent is the real cotangent, as a complex array (as np.real's)."""
    z = np.array([1.0 + 1e-20j, 2.0 - 0j])
    y, back = tapegrad.rrule(np.real_if_close, z)
    assert y.dtype == np.float64
    dz = back(np.array([3.0, -1.0]))[1]
    assert dz.dtype == np.complex128
    np.testing.assert_array_equal(dz, [3.0, -1.0])


def _sq(x, y):
    z = complex_of(x, y)
    return z * z


#: (rule, function of real arrays through the rule on complex values, shapes of the arrays)
COMPLEX_ORDER2 = [
    (np.diff, lambda x, y: power(np.diff(_sq(x, y), 2, 0)), [(4, 3), (4, 3)]),
    (np.gradient, lambda x, y: power(np.gradient(_sq(x, y), 0.5, axis=1)), [(3, 5), (3, 5)]),
    (np.cross, lambda x, y: power(np.cross(_sq(x, y), complex_of(y, x))), [(2, 3), (2, 3)]),
    (np.linspace, lambda x, y: power(np.linspace(_sq(x, y), complex_of(y, x), 5)), [(3,), (3,)]),
    (np.append, lambda x, y: power(np.append(_sq(x, y), x * y)), [(2, 3), (2, 3)]),
    (np.rollaxis, lambda x, y: power(np.rollaxis(_sq(x, y), 1)), [(2, 3), (2, 3)]),
    (np.select, lambda x, y: power(np.select([x > 0], [_sq(x, y)], complex_of(y, y))), [(5,), (5,)]),
    (np.nan_to_num, lambda x, y: power(np.nan_to_num(_sq(x, y))), [(2, 3), (2, 3)]),
    (np.real_if_close, lambda x, y: power(np.real_if_close(_sq(x, y))), [(4,), (4,)]),
    (np.angle, lambda x, y: np.sum(np.angle(_sq(x, y)) ** 2), [(4,), (4,)]),
]


@pytest.mark.parametrize("fn, f, shapes", COMPLEX_ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_complex_rule_second_order(fn, f, shapes, rng):
    """Second derivatives through a real parametrization match central differences (reverse over reverse)."""
    check_grad(f, *[rng.uniform(0.3, 1.5, s) * np.sign(rng.standard_normal(s)) for s in shapes],
               order=2, modes=("rev",))

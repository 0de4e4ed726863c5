"""Rules for products: matmul, dot, vdot, inner, outer, kron, tensordot, einsum, trace."""
import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad
from tapegrad.tangents import getitem

from _complex import check_complex_jvp, check_complex_rule, made_args, random_like

DTYPES = [np.float64, np.float32]

# (fn, shape of x, shape of y): every ndim case each function distinguishes
BINARY = [
    (np.matmul, (3,), (3,)),
    (np.matmul, (2, 3), (3,)),
    (np.matmul, (3,), (3, 2)),
    (np.matmul, (2, 3), (3, 4)),
    (np.matmul, (4, 2, 3), (3,)),
    (np.matmul, (3,), (4, 3, 2)),
    (np.matmul, (2, 1, 2, 3), (3, 3, 2)),  # batch axes broadcast: (2, 1) with (3,)
    (np.matmul, (1, 2, 3), (2, 1, 3, 2)),
    (np.dot, (), (3,)),
    (np.dot, (2, 3), ()),
    (np.dot, (3,), (3,)),
    (np.dot, (2, 3), (3,)),
    (np.dot, (3,), (3, 2)),
    (np.dot, (2, 3), (3, 4)),
    (np.dot, (2, 2, 3), (3,)),
    (np.dot, (3,), (2, 3, 4)),
    (np.dot, (2, 3), (2, 3, 4)),
    (np.dot, (2, 2, 3), (4, 3, 2)),
    (np.vdot, (3,), (3,)),
    (np.vdot, (2, 3), (3, 2)),
    (np.inner, (), (2, 3)),
    (np.inner, (3,), (3,)),
    (np.inner, (2, 3), (4, 3)),
    (np.inner, (2, 2, 3), (3,)),
    (np.outer, (3,), (2,)),
    (np.outer, (2, 3), (2, 2)),
    (np.outer, (), (3,)),
    (np.kron, (3,), (2,)),
    (np.kron, (2, 3), (2, 2)),
    (np.kron, (3,), (2, 2)),
    (np.kron, (2, 1, 3), (2, 2)),
]

TENSORDOT = [
    ((2, 3, 4), (3, 4, 2), 2),
    ((2, 3), (3, 2), 1),
    ((2, 3), (4,), 0),
    ((), (3,), 0),
    ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
    ((2, 3), (3, 2), (1, 0)),
    ((2, 3, 4), (4, 2), ([-1, 0], [0, 1])),
]

# (subscripts, shapes): explicit and implicit outputs, repeated labels, ellipses, broadcasting
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ba", [(2, 3)]),
    ("ij,kj", [(2, 3), (4, 3)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij,j->i", [(3, 3, 2), (2,)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 2), (2, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...i,...i", [(1, 3), (2, 3)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,ij->i", [(1, 3), (2, 3)]),  # a length-1 axis broadcast against a longer one
    (",i->i", [(), (3,)]),
]

TRACE = [((3, 3), ()), ((2, 3), (1,)), ((3, 3), (-1,)), ((2, 3, 4), (0, 1, 2)), ((3, 2, 3), (1, 0, 2))]

#: shapes of multi_dot's chains: 1-d ends (a row, a column), two to four arrays
MULTI_DOT = [[(2, 3), (3, 4)], [(3,), (3, 4), (4, 2)], [(2, 3), (3, 4), (4,)], [(3,), (3, 4), (4, 5), (5,)],
             [(2, 3), (3, 3), (3, 4), (4, 2)]]

EXERCISED = {fn for fn, _, _ in BINARY} | {np.tensordot, np.einsum, np.trace, np.linalg.multi_dot}


def _arrays(rng, shapes, dtype):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, xs, ys", BINARY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_binary_product_rule(fn, xs, ys, dtype, rng):
    """Each product's gradient matches central differences for every ndim case and both precisions."""
    check_grad(fn, *_arrays(rng, [xs, ys], dtype))


def test_matmul_operator_records_matmul(rng):
    """``x @ y`` on traced values differentiates through matmul, batch axes broadcast."""
    check_grad(lambda x, y: x @ y, *_arrays(rng, [(2, 1, 2, 3), (3, 3, 2)], np.float64))


def test_mixed_precision_gradient_keeps_each_dtype(rng):
    """A float32 matrix times a float64 vector gets a float32 gradient and the vector a float64 one."""
    check_grad(np.matmul, rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs, ys, axes", TENSORDOT)
def test_tensordot_rule(xs, ys, axes, dtype, rng):
    """tensordot differentiates for axes given as an int, a pair of ints or a pair of sequences, by position or keyword."""
    x, y = _arrays(rng, [xs, ys], dtype)
    check_grad(lambda x, y, axes=axes: np.tensordot(x, y, axes), x, y)
    check_grad(lambda x, y, axes=axes: np.tensordot(x, y, axes=axes), x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subscripts, shapes", EINSUM)
def test_einsum_rule(subscripts, shapes, dtype, rng):
    """einsum gives a gradient to every operand: implicit output, repeated labels, ellipses, broadcasting."""
    check_grad(lambda *ops, s=subscripts: np.einsum(s, *ops), *_arrays(rng, shapes, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shapes", MULTI_DOT, ids=str)
def test_multi_dot_rule(shapes, dtype, rng):
    """Each array of the chain gets (A₀⋯Aₖ₋₁)ᵀ Ȳ (Aₖ₊₁⋯Aₙ)ᵀ: checked against central differences."""
    check_grad(lambda *ms: np.linalg.multi_dot(list(ms)), *_arrays(rng, shapes, dtype))


def test_multi_dot_gradient_is_that_of_the_matmul_chain(rng):
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    fast = tapegrad.gradient(lambda a, b, c: np.sum(np.sin(np.linalg.multi_dot((a, b, c)))), a, b, c)
    slow = tapegrad.gradient(lambda a, b, c: np.sum(np.sin(a @ b @ c)), a, b, c)
    for f, s in zip(fast, slow):
        np.testing.assert_allclose(f, s, rtol=1e-12)


def test_einsum_subscripts_get_no_tangent():
    """The subscripts string is einsum's first positional argument, and its tangent is NoTangent."""
    _, back = tapegrad.rrule(np.einsum, "ij->", np.ones((2, 2)))
    tangents = back(1.0)
    assert len(tangents) == 3 and tangents[1] is tapegrad.NO_TANGENT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, args", TRACE)
def test_trace_rule(shape, args, dtype, rng):
    """trace differentiates with offset and axes given by position, on matrices and stacks."""
    check_grad(lambda x, args=args: np.trace(x, *args), rng.standard_normal(shape).astype(dtype))


def test_trace_keyword_arguments(rng):
    """trace's options given by keyword get no tangent of their own."""
    check_grad(lambda x: np.trace(x, offset=1, axis1=2, axis2=0), rng.standard_normal((3, 2, 4)))


SCALAR_CASES = [
    lambda a, x: np.dot(a, x),
    lambda a, x: np.dot(x, a),
    lambda a, x: np.inner(a, x),
    lambda a, x: np.outer(a, x),
    lambda a, x: np.kron(a, x),
    lambda a, x: np.tensordot(a, x, 0),
    lambda a, x: np.einsum(",i->i", a, x),
    lambda a, x: np.vdot(a, a) * np.vdot(x, x),
]


@pytest.mark.parametrize("make", [float, np.array], ids=["python", "0d"])
@pytest.mark.parametrize("f", SCALAR_CASES)
def test_product_with_scalar_operand(f, make, rng):
    """A Python float or a 0-d array as an operand gets a gradient of its own kind."""
    check_grad(f, make(1.3), rng.standard_normal(3))
    _, (_, da, _) = tapegrad.grad(lambda a, x: np.sum(f(a, x)), make(1.3), rng.standard_normal(3))
    assert np.shape(da) == () and isinstance(da, float) == (make is float)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Every ndim case of the products, every tensordot axes form, einsum subscripts and trace."""
    rng = np.random.default_rng(7)
    rows = [(fn, fn, tuple(_arrays(rng, [xs, ys], np.float64))) for fn, xs, ys in BINARY]
    rows += [(np.tensordot, lambda x, y, axes=axes: np.tensordot(x, y, axes),
              tuple(_arrays(rng, [xs, ys], np.float64))) for xs, ys, axes in TENSORDOT]
    rows += [(np.einsum, lambda *ops, s=subscripts: np.einsum(s, *ops), tuple(_arrays(rng, shapes, np.float64)))
             for subscripts, shapes in EINSUM]
    rows += [(np.trace, lambda x, args=args: np.trace(x, *args), (rng.standard_normal(shape),))
             for shape, args in TRACE]
    rows += [(np.linalg.multi_dot, lambda *ms: np.linalg.multi_dot(list(ms)), tuple(_arrays(rng, shapes, np.float64)))
             for shapes in MULTI_DOT[1:4]]
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()


# --- complex values, under autograd's convention (tests/rules/_complex.py) ---


def C(*shape):
    """A maker of a random complex array."""
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def R(*shape):
    """A maker of a random real array."""
    return lambda rng: rng.standard_normal(shape)


def _cases(rows):
    return [pytest.param(fn, makes, kwargs, id=f"{fn.__name__}-{i}") for i, (fn, makes, kwargs) in enumerate(rows)]


#: (rule's function, makers of its arguments, keyword arguments): complex, mixed real/complex,
#: batched and broadcast operands
COMPLEX_TABLE = _cases([
    (np.matmul, [C(3, 4), C(4, 2)], {}),
    (np.matmul, [R(3, 4), C(4, 2)], {}),
    (np.matmul, [C(2, 3, 4), R(4)], {}),
    (np.matmul, [C(4), C(2, 4, 3)], {}),
    (np.matmul, [C(4), R(4)], {}),
    (np.matmul, [C(2, 1, 3, 4), C(3, 4, 2)], {}),
    (np.dot, [C(3, 4), C(4)], {}),
    (np.dot, [C(2, 3, 4), R(4, 2)], {}),
    (np.dot, [C(), R(3)], {}),
    (np.vdot, [C(3, 2), C(6)], {}),
    (np.vdot, [R(3), C(3)], {}),
    (np.vdot, [C(2, 2), R(4)], {}),
    (np.inner, [C(2, 3), C(4, 3)], {}),
    (np.inner, [R(3), C(2, 3)], {}),
    (np.outer, [C(3), R(2, 2)], {}),
    (np.outer, [C(3), C(2)], {}),
    (np.kron, [C(2, 3), C(2, 2)], {}),
    (np.kron, [R(2), C(2, 3)], {}),
    (np.tensordot, [C(2, 3, 4), C(3, 4, 2)], {}),
    (np.tensordot, [C(2, 3, 4), R(4, 2)], {"axes": ([2], [0])}),
    (np.tensordot, [R(3, 2), C(2, 3)], {"axes": 0}),
    (np.einsum, ["ij,jk->ik", C(2, 3), R(3, 4)], {}),
    (np.einsum, ["ii->i", C(3, 3)], {}),
    (np.einsum, ["...ij,...j", C(2, 3, 4), C(4)], {}),
    (np.einsum, ["i,i,i", C(3), R(3), C(3)], {}),
    (np.einsum, [C(2, 3), [0, 1], C(3), [1], [0]], {}),
    (np.trace, [C(3, 3)], {}),
    (np.trace, [C(2, 3, 4)], {"offset": 1, "axis1": 1, "axis2": 2}),
])



@pytest.mark.parametrize("fn, makes, kwargs", COMPLEX_TABLE)
def test_complex_product_rule(fn, makes, kwargs, rng):
    """The dot-product test of each product's pullback along random complex directions."""
    check_complex_rule(fn, *made_args(makes, rng), rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn, makes, kwargs", COMPLEX_TABLE)
def test_complex_product_jvp(fn, makes, kwargs, rng):
    check_complex_jvp(fn, *made_args(makes, rng), rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("makes", [[C(3), R(3, 4), C(4, 2)], [C(2, 3), C(3, 3), R(3,)], [R(2, 2), C(2, 2)]])
def test_complex_multi_dot_rule(makes, rng):
    """The dot-product test of multi_dot's pullback for each array of its list argument."""
    arrays = [m(rng) for m in makes]
    y, back = tapegrad.rrule(np.linalg.multi_dot, arrays)
    g = random_like(rng, y)
    cotangents = getitem(back(g), 1)
    h = 1e-6
    for k, a in enumerate(arrays):
        c, v = getitem(cotangents, k), random_like(rng, a)
        assert np.shape(c) == np.shape(a) and (np.iscomplexobj(a) or not np.iscomplexobj(c))
        plus, minus = list(arrays), list(arrays)
        plus[k], minus[k] = a + h * v, a - h * v
        dy = (np.linalg.multi_dot(plus) - np.linalg.multi_dot(minus)) / (2 * h)
        assert np.real(np.sum(g * dy)) == pytest.approx(np.real(np.sum(c * v)), rel=1e-6, abs=1e-9)


def test_vdot_conjugates_its_first_argument():
    """vdot(x, y) = Σ conj(x)·y: its gradient in x is conj(g·y), not the holomorphic g·y."""
    x, y = np.array([1 + 2j, 3 - 1j]), np.array([2 - 1j, 1j])
    _, back = tapegrad.rrule(np.vdot, x, y)
    cotangents = back(2.0 - 1.0j)
    np.testing.assert_allclose(getitem(cotangents, 1), np.conj((2.0 - 1.0j) * y))
    np.testing.assert_allclose(getitem(cotangents, 2), (2.0 - 1.0j) * np.conj(x))


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


#: real functions through a complex value made of real arguments x + i y, end to end
END_TO_END = [
    pytest.param(lambda x, y: power((x + 1j * y) @ (x - 2j * y)), ((3, 3), (3, 3)), id="matmul"),
    pytest.param(lambda x, y: power(np.dot(x + 1j * y, y)), ((2, 3), (3,)), id="dot"),
    pytest.param(lambda x, y: power(np.vdot(x + 1j * y, y - 1j * x)), ((4,), (4,)), id="vdot"),
    pytest.param(lambda x, y: power(np.inner(x + 1j * y, x)), ((2, 3), (2, 3)), id="inner"),
    pytest.param(lambda x, y: power(np.outer(x + 1j * y, y)), ((3,), (3,)), id="outer"),
    pytest.param(lambda x, y: power(np.kron(x + 1j * y, x)), ((2, 2), (2, 2)), id="kron"),
    pytest.param(lambda x, y: power(np.tensordot(x + 1j * y, y, axes=([1], [1]))), ((2, 3), (2, 3)), id="tensordot"),
    pytest.param(lambda x, y: power(np.einsum("ij,jk,jk->i", x + 1j * y, x, y - 1j * x)), ((3, 3), (3, 3)), id="einsum"),
    pytest.param(lambda x, y: power(np.trace(x + 1j * y) * (x + 1j * y)), ((3, 3), (3, 3)), id="trace"),
    pytest.param(lambda x, y: power(np.linalg.multi_dot([x + 1j * y, x, y - 1j * x])), ((3, 3), (3, 3)), id="multi_dot"),
]



@pytest.mark.parametrize("f, shapes", END_TO_END)
def test_complex_products_end_to_end(f, shapes, rng):
    """Reverse mode through complex products, against central differences in x and y."""
    check_grad(f, *[rng.standard_normal(s) for s in shapes], modes=("rev",))


@pytest.mark.parametrize("f, shapes", END_TO_END)
def test_complex_products_second_order(f, shapes, rng):
    check_grad(f, *[rng.standard_normal(s) for s in shapes], order=2)

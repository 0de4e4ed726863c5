"""Rules of indexing and gathers: x[index], take, take_along_axis, sort, diagonals, triangles, scatter."""
import operator

import numpy as np
import pytest

import tapegrad
from tapegrad import NO_TANGENT, ZERO, check_grad, grad
from tapegrad.arraylike import added_at, updated
from tapegrad.registry import COMPLEX, RULES
from tapegrad.rules.indexing import scatter_add

from _complex import check_complex_jvp, check_complex_rule, complex_of, power

MASK = np.array([[True, False, True], [False, False, True]])
#: (shape, index): every kind of index numpy has, alone and mixed
INDEXES = [
    ((), ()),
    ((), None),
    ((3,), 0),
    ((3,), -1),
    ((4,), slice(None, None, 2)),
    ((4,), slice(3, 0, -2)),
    ((2, 3), 1),
    ((2, 3), (slice(None), -1)),
    ((2, 3), (Ellipsis, 1)),
    ((2, 3), (None, 0)),
    ((2, 3), (0, None, slice(1, None))),
    ((2, 3), [0, 0, 1]),
    ((2, 3), ([0, 0, 1], [2, 2, 0])),
    ((2, 3), (slice(None), [1, 1])),
    ((2, 3), np.array([[0, 1], [1, 1]])),
    ((2, 3, 2), (0, slice(None), [1, 0, 1])),
    ((2, 3, 2), ([0, 1], slice(None), [1, 1])),
    ((2, 3, 2), (Ellipsis, None, [0, 0])),
    ((2, 3), MASK),
    ((2, 3), (np.array([True, False]), slice(None, None, -1))),
    ((2, 3, 2), (MASK, 1)),
]


def row(fn, *shapes, args=(), kwargs=None):
    label = ",".join(str(s) for s in shapes) + (f" {args}" if args else "") + (f" {kwargs}" if kwargs else "")
    return pytest.param(fn, shapes, args, kwargs or {}, id=f"{fn.__name__} {label}")


GATHERS = [
    row(np.take, (2, 3), args=([0, 0, 5],)),
    row(np.take, (2, 3), args=([0, -1, 1, 0], 1)),
    row(np.take, (2, 3), args=([[0, 2], [2, 2]],)),
    row(np.take, (2, 3), args=(1, 1)),
    row(np.take, (2, 3), args=([3, -4], 0), kwargs={"mode": "wrap"}),
    row(np.take, (3,), args=(np.array([5, -1]),), kwargs={"mode": "clip"}),
    row(np.take, (2, 3), kwargs={"indices": [1], "axis": 0}),
    row(np.take_along_axis, (2, 3), args=(np.array([[0, 0], [2, 1]]), 1)),
    row(np.take_along_axis, (2, 3), args=(np.array([[0, 1, 1]]), 0)),
    row(np.take_along_axis, (2, 3), args=(np.array([5, 0, 0]), None)),
    row(np.take_along_axis, (2, 3), kwargs={"indices": np.array([[1], [0]]), "axis": -1}),
    row(np.sort, (3,)),
    row(np.sort, (2, 3)),
    row(np.sort, (2, 3), args=(0,)),
    row(np.sort, (2, 3), kwargs={"axis": None}),
    row(np.diag, (3,)),
    row(np.diag, (3,), args=(-1,)),
    row(np.diag, (2, 3)),
    row(np.diag, (2, 3), args=(1,)),
    row(np.diag, (3, 2), kwargs={"k": -1}),
    row(np.diagonal, (2, 3)),
    row(np.diagonal, (2, 3), args=(1,)),
    row(np.diagonal, (2, 3, 4)),
    row(np.diagonal, (2, 3, 4), args=(1, 2, 0)),
    row(np.diagonal, (2, 3, 4), kwargs={"offset": -1, "axis1": -1, "axis2": 1}),
    row(np.triu, (2, 3)),
    row(np.triu, (3, 3), args=(1,)),
    row(np.triu, (3,), args=(-1,)),
    row(np.triu, (2, 2, 3)),
    row(np.tril, (2, 3)),
    row(np.tril, (3, 3), kwargs={"k": -1}),
    row(np.tril, (3,)),
    row(scatter_add, (3,), args=((4,), (np.array([0, 0, 2]),), np.float64)),
    row(scatter_add, (2,), args=((2, 3), (slice(None), 1), np.float64)),
]
DTYPES = [np.float64, np.float32]

EXERCISED = {operator.getitem} | {p.values[0] for p in GATHERS}


def values(rng, shape, dtype=np.float64):
    """Distinct values, so that sort has no ties."""
    return np.array(rng.permutation(np.arange(1.0, 1 + np.prod(shape, dtype=int))).reshape(shape) / 7, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape, index", INDEXES, ids=str)
def test_getitem_rule(shape, index, dtype, rng):
    """x[index] passes each element's share back to where it was read, for every kind of index."""
    check_grad(lambda x: x[index], values(rng, shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, args, kwargs", GATHERS)
def test_gather_rule(fn, shapes, args, kwargs, dtype, rng):
    """take, take_along_axis, sort, diag, diagonal, triu, tril and scatter_add match central differences."""
    # the constants ride in a default argument: check_grad traces closures leaf by leaf
    check_grad(lambda x, c=(fn, args, kwargs): c[0](x, *c[1], **c[2]), values(rng, shapes[0], dtype))


# --- behaviours ---


def test_repeated_indices_add_up():
    """An element read several times by an integer index receives every share."""
    _, (_, dx) = grad(lambda x: np.sum(x[[0, 0, 2, 0]]), np.ones(3))
    np.testing.assert_array_equal(dx, [3, 0, 1])
    _, (_, dx) = grad(lambda x: np.sum(np.take(x, [1, 1])), np.ones(3))
    np.testing.assert_array_equal(dx, [0, 2, 0])


def test_boolean_mask_passes_back_to_selected_elements():
    """x[mask] passes shares to the selected elements only."""
    _, (_, dx) = grad(lambda x: np.sum(x[MASK] * 2.0), np.ones((2, 3)))
    np.testing.assert_array_equal(dx, MASK * 2.0)


def test_mask_computed_from_the_traced_value():
    """A mask built from x itself (x[x > 0]) is a constant index."""
    check_grad(lambda x: x[x > 0.5] ** 2, np.array([0.2, 0.9, 1.3, -0.4]))


def test_python_int_index_and_iteration_over_rows(rng):
    """x[i] with a Python int, and iterating over the rows of x, pass gradients to those rows."""
    x = values(rng, (3, 2))
    check_grad(lambda x: x[1] * x[-1], x)
    check_grad(lambda x: sum(row * (i + 1.0) for i, row in enumerate(x)), x)


def test_index_of_numpy_scalar():
    """x[()] of a numpy scalar reads the whole value."""
    _, (_, dx) = grad(lambda x: x[()] * 3.0, np.float64(1.5))
    assert dx == 3.0


def test_slice_of_a_tuple_result():
    """A slice of a list result (the pieces of a split) passes zeros for the pieces it left out."""
    _, (_, dx) = grad(lambda x: sum(np.sum(p) for p in np.split(x, 3)[1:]), np.ones(6))
    np.testing.assert_array_equal(dx, [0, 0, 1, 1, 1, 1])


def test_getitem_of_tuple_returns_one_cotangent_per_element():
    """Reading element i of a tuple result gives ZeroTangent() for the others."""
    _, back = tapegrad.rrule(operator.getitem, (np.ones(2), np.ones(3)), 1)
    _, dx, dindex = back(np.arange(3.0))
    assert dx[0] is ZERO and type(dx) is tuple and dindex is NO_TANGENT


def test_sort_ties_follow_stable_order():
    """Equal elements keep their order (a stable sort), so each passes back its own slot's share."""
    _, (_, dx) = grad(lambda x: np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0])), np.array([2.0, 1.0, 2.0]))
    np.testing.assert_array_equal(dx, [2, 1, 3])


def test_scatter_add_rule_is_the_gather():
    """scatter_add's own derivative reads the cotangent back at the index."""
    _, back = tapegrad.rrule(scatter_add, np.ones(3), (4,), ([0, 0, 2],), np.float64)
    np.testing.assert_array_equal(back(np.array([1.0, 2.0, 3.0, 4.0]))[1], [1, 1, 3])


# --- rules themselves: dtype and traceability ---


def _cases():
    for shape, index in INDEXES:
        yield pytest.param(operator.getitem, shape, (index,), {}, id=f"getitem {shape} {index}")
    for p in GATHERS:
        fn, shapes, args, kwargs = p.values
        yield pytest.param(fn, shapes[0], args, kwargs, id=p.id)


@pytest.mark.parametrize("fn, shape, args, kwargs", list(_cases()))
def test_rule_keeps_float32(fn, shape, args, kwargs, rng):
    """Each pullback, given a float32 cotangent, returns a float32 tangent shaped like the input."""
    x = values(rng, shape, np.float32)
    y, back = tapegrad.rrule(fn, x, *args, **kwargs)
    dx = back(np.ones_like(y))[1]
    assert dx.dtype == np.float32 and dx.shape == x.shape


class RecordEverything(tapegrad.context.BaseContext):
    """Records every call whole, as the trace of a gradient will, without needing rules."""

    def is_primitive(self, fn, *args):
        return True


@pytest.mark.parametrize("fn, shape, args, kwargs", list(_cases()))
def test_rule_is_traceable(fn, shape, args, kwargs, rng):
    """A rule and its pullback run on Tracers (no in-place writes, no float()) and agree with plain values."""
    x = values(rng, shape)
    dy = rng.standard_normal(np.shape(fn(x, *args, **kwargs)))

    def rule_then_pullback(x, dy, c=(fn, args, kwargs)):  # defaults: not traced
        return tapegrad.rrule(c[0], x, *c[1], **c[2])[1](dy)[1]

    got, tape = tapegrad.trace(rule_then_pullback, x, dy, ctx=RecordEverything())
    np.testing.assert_allclose(got, rule_then_pullback(x, dy))
    assert any(getattr(op, "fn", None) is scatter_add for op in tape.ops) or fn not in (operator.getitem, np.take)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Every gather and every kind of index, on distinct values (sort has no ties)."""
    rng = np.random.default_rng(4)
    rows = [(operator.getitem, lambda x, i=index: x[i], (values(rng, shape),)) for shape, index in INDEXES]
    for p in GATHERS:
        fn, shapes, args, kwargs = p.values
        rows.append((fn, lambda x, c=(fn, args, kwargs): c[0](x, *c[1], **c[2]), (values(rng, shapes[0]),)))
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows() + [
    # in-place writes: through updated (x[i] = v) and added_at (np.add.at)
    (updated, lambda x, v: np.sum(np.sin(updated(x * x, [0, 2, 0], v * v)) * x),
     (np.array([0.3, 0.7, 1.1]), np.array([0.5, 0.9, 1.3]))),
    (updated, lambda x, v: np.sum(np.cos(updated(x * v[0], (slice(1, None),), v[1:] ** 3))),
     (np.array([0.3, 0.7, 1.1]), np.array([0.5, 0.9, 1.3]))),
    (added_at, lambda x, v: np.sum(np.sin(added_at(x * x, [0, 2, 0], v * v)) * x),
     (np.array([0.3, 0.7, 1.1]), np.array([0.5, 0.9, 1.3]))),
]


def _second_order_modes(f, x):
    """The Hessian of f at x by all four order-2 combinations of reverse and forward mode."""
    e = np.eye(np.size(x))
    jvp_along = lambda v: (lambda x: tapegrad.jvp(f, (x,), (v,))[1])
    return {
        "rev-rev": tapegrad.hessian(f, x, mode="rev"),
        "fwd-rev": tapegrad.hessian(f, x, mode="fwd"),
        "rev-fwd": np.array([tapegrad.grad(jvp_along(v), x)[1][1] for v in e]),
        "fwd-fwd": np.array([[tapegrad.jvp(jvp_along(v), (x,), (w,))[1] for w in e] for v in e]),
    }


MASKED = [
    # (f, x, gradient, Hessian diagonal): the unread element sits where the op is singular
    (lambda x: np.sum(np.sqrt(x)[x > 0]), [0.0, 4.0, 1.0], [0.0, 0.25, 0.5], [0.0, -1 / 32, -0.25]),
    (lambda x: np.sum((1 / x)[x != 0]), [0.0, 2.0, -1.0], [0.0, -0.25, -1.0], [0.0, 0.25, -2.0]),
    (lambda x: np.sum(np.sqrt(x)[[1, 2, 1]]), [0.0, 4.0, 1.0], [0.0, 0.5, 0.5], [0.0, -1 / 16, -0.25]),
    (lambda x: np.sum(np.sqrt(x)[np.array([False, True, True])] * x[1:]), [0.0, 4.0, 1.0],
     [0.0, 3.0, 1.5], [0.0, 3 / 8, 0.75]),
]


@pytest.mark.parametrize("f, x, expected, diagonal", MASKED)
def test_mask_and_index_array_leave_unread_elements_exactly_zero(f, x, expected, diagonal):
    """Elements a mask or an index array does not read get exactly zero, even where the op before it is singular."""
    x = np.array(x)
    compiled = tapegrad.compiled_grad(f, tiers=False)  # its first call traces, its second runs the program
    with np.errstate(all="ignore"):
        for d in (tapegrad.grad(f, x)[1][1], tapegrad.pullback(f, x)[1](1.0)[1],
                  compiled(x)[1][1], compiled(x)[1][1]):
            np.testing.assert_array_equal(d, expected)
        for mode, h in _second_order_modes(f, x).items():
            assert not np.isnan(h).any(), mode
            np.testing.assert_allclose(np.diag(h), diagonal, rtol=1e-12, atol=0, err_msg=mode)
    tapegrad.check_grad(f, x + 0.5)


# --- complex values (autograd's convention: tests/rules/_complex.py) ---

#: forward mode on complex values needs the core's complex tangents (a derived forward rule
#: takes complex arguments)


def cvalues(rng, shape):
    """Complex values with both parts random."""
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _complex_rows():
    for shape, index in INDEXES:
        yield pytest.param(operator.getitem, (shape,), (index,), {}, id=f"getitem {shape} {index}")
    for p in GATHERS:
        fn, shapes, args, kwargs = p.values
        if fn is scatter_add:
            args = args[:-1] + (np.complex128,)
        yield pytest.param(fn, shapes, args, kwargs, id=p.id)
    # writes: x[index] = v and np.add.at(x, index, b), complex into complex and real into complex
    for fn in (updated, added_at):
        for label, real_v in (("", False), (" real values", True)):
            yield pytest.param(fn, ((3,), (3,)), ([0, 2, 0],), {"real": real_v}, id=f"{fn.__name__}{label}")
            yield pytest.param(fn, ((2, 3), (3,)), ((slice(None), [1, 1, 2]),), {"real": real_v},
                               id=f"{fn.__name__} broadcast{label}")


COMPLEX_TABLE = list(_complex_rows())


def _complex_args(rng, fn, shapes, args, kwargs):
    """(function of the arrays, arrays): the writes take x, index, v in that order."""
    if fn in (updated, added_at):
        x = cvalues(rng, shapes[0])
        v = rng.standard_normal(shapes[1]) if kwargs["real"] else cvalues(rng, shapes[1])
        return (lambda x, v, c=(fn, args[0]): c[0](x, c[1], v)), fn, (x, args[0], v), [0, 2]
    return None, fn, (cvalues(rng, shapes[0]), *args), [0]


@pytest.mark.parametrize("fn, shapes, args, kwargs", COMPLEX_TABLE)
def test_complex_gather_pullback(fn, shapes, args, kwargs, rng):
    """The dot-product test of each gather, scatter and write on complex (and mixed) arrays."""
    _, rule_fn, call_args, wrt = _complex_args(rng, fn, shapes, args, kwargs)
    kw = {} if fn in (updated, added_at) else kwargs
    check_complex_rule(rule_fn, *call_args, rng=rng, kwargs=kw, wrt=wrt)


def _jvp_rows():
    """The table, for forward mode (a 0-d x's tangent is drawn as a Python number)."""
    return COMPLEX_TABLE


@pytest.mark.parametrize("fn, shapes, args, kwargs", _jvp_rows())
def test_complex_gather_jvp(fn, shapes, args, kwargs, rng):
    """Forward mode through each gather, scatter and write on complex arrays matches central differences."""
    f, rule_fn, call_args, wrt = _complex_args(rng, fn, shapes, args, kwargs)
    if f is None:
        check_complex_jvp(lambda x, c=(fn, args, kwargs): c[0](x, *c[1], **c[2]), call_args[0], rng=rng)
    else:
        check_complex_jvp(f, call_args[0], call_args[2], rng=rng)


def test_complex_gathers_are_declared():
    """The rules of the complex table are those the indexing and write families declare for
    complex values."""
    families = ("tapegrad.rules.indexing", "tapegrad.rules.inplace")
    assert {p.values[0] for p in COMPLEX_TABLE} == {fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) in families}


def test_sort_of_complex_follows_numpys_lexicographic_order():
    """numpy sorts complex numbers by real part first: sort(x₀, i x₁, 2 x₂) at x = 1 starts with
    i x₁, so the gradient of Re((1 - i)·sort(z)[0]) = x₁ is (0, 1, 0)."""
    _, (_, dx) = grad(lambda x: np.real((1 - 1j) * np.sort(x * np.array([1, 1j, 2]))[0]), np.ones(3))
    np.testing.assert_array_equal(dx, [0.0, 1.0, 0.0])


C = np.array([1 + 2j, -1 + 0.5j, 3 - 1j])


def _buffer_writes(x, y, c=C, of=lambda x, y: x + 1j * y):
    buf = np.zeros(3, dtype=complex)
    buf[0] = of(x[0], y[0])
    buf[1:] = of(x[1:], 0 * x[1:]) * (2 - 1j)
    buf[2] += of(0 * y[1], y[1])
    return np.real(np.sum(c * buf))


def _check_buffer_gradient(f):
    x, y = np.array([0.3, -1.2, 0.7]), np.array([1.5, -0.4])
    _, (_, dx, dy) = grad(f, x, y)
    assert dx.dtype == dy.dtype == np.float64
    np.testing.assert_allclose(dx, [1.0, np.real(C[1] * (2 - 1j)), np.real(C[2] * (2 - 1j))], rtol=1e-14)
    np.testing.assert_allclose(dy, [np.real(C[0] * 1j), np.real(C[2] * 1j)], rtol=1e-14)
    check_grad(f, x, y, order=2, modes=("rev",))


def test_complex_buffer_writes_have_the_closed_form_gradient():
    """buf = zeros(complex); buf[i] = z; buf[j] += w: the real x and y of z = x + iy get the real
    parts of their shares of Re Σ c·buf (autograd's convention), at first and second order."""
    _check_buffer_gradient(lambda x, y: _buffer_writes(x, y, of=complex_of))


def test_complex_buffer_writes_of_x_plus_iy():
    """The same, with z written x + 1j*y."""
    _check_buffer_gradient(_buffer_writes)


def _complex_order2_rows():
    """Each gather and each kind of index, and the writes, through z = x + iy, at second order."""
    rng = np.random.default_rng(16)
    rows = []
    for p in COMPLEX_TABLE:
        fn, shapes, args, kwargs = p.values
        x, y = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[0])
        if fn in (updated, added_at):
            v = rng.standard_normal(shapes[1])
            vv = (lambda v: v) if kwargs["real"] else (lambda v: complex_of(v, v * v))

            def f(x, y, v, c=(fn, args[0], vv)):
                z = complex_of(x, y)
                return power(c[0](z * z, c[1], c[2](v)) * z)

            rows.append(pytest.param(fn, f, (x, y, v), id=p.id))
        elif fn is scatter_add:
            continue  # (its second order is the gather's: getitem's pullback is a scatter)
        else:
            def f(x, y, c=(fn, args, kwargs)):
                z = complex_of(x, y)
                return power(c[0](z * z, *c[1], **c[2]))

            rows.append(pytest.param(fn, f, (x, y), id=p.id))
    return rows


@pytest.mark.parametrize("fn, f, args", _complex_order2_rows())
def test_complex_gather_second_order(fn, f, args):
    """Second derivatives through a real parametrization match central differences (reverse over reverse)."""
    check_grad(f, *args, order=2, modes=("rev",))

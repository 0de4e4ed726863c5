"""Rules of indexing and gathers: x[index], take, take_along_axis, sort, diagonals, triangles, scatter."""
import operator

import numpy as np
import pytest

import tapegrad
from tapegrad import NO_TANGENT, ZERO, check_grad, grad
from tapegrad.arraylike import added_at, updated
from tapegrad.rules.indexing import scatter_add

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


class RecordEverything(tapegrad.BaseContext):
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
    with np.errstate(all="ignore"):
        for d in (tapegrad.grad(f, x)[1][1], tapegrad.pullback(f, x)[1](1.0)[1],
                  tapegrad.compiled_grad(f)(x)[1][1], tapegrad.compiled_grad(f)(x)[1][1]):
            np.testing.assert_array_equal(d, expected)
        for mode, h in _second_order_modes(f, x).items():
            assert not np.isnan(h).any(), mode
            np.testing.assert_allclose(np.diag(h), diagonal, rtol=1e-12, atol=0, err_msg=mode)
    tapegrad.check_grad(f, x + 0.5)

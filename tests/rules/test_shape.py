"""Rules of shape changes and assembly: reshapes, axis moves, flips, casts, joins, splits, tiles, pads."""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import ZERO, check_grad, grad
from tapegrad.pytree import build
from tapegrad.registry import COMPLEX, RULES

from _complex import check_complex_jvp, check_complex_rule, complex_of, power, random_like

#: functions that take their arrays as one sequence argument
SEQUENCE = {np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack}


def row(fn, *shapes, args=(), kwargs=None):
    label = ",".join(str(s) for s in shapes) + (f" {args}" if args else "") + (f" {kwargs}" if kwargs else "")
    return pytest.param(fn, shapes, args, kwargs or {}, id=f"{fn.__name__} {label}")


SHAPE = [
    row(np.reshape, (2, 3), args=((3, 2),)),
    row(np.reshape, (2, 3), args=((6,), "F")),
    row(np.reshape, (), args=((1, 1),)),
    row(np.reshape, (3,), kwargs={"shape": (3, 1)}),
    row(np.ravel, (2, 3)),
    row(np.ravel, (2, 3), args=("F",)),
    row(np.ravel, ()),
    row(np.expand_dims, (3,), args=(0,)),
    row(np.expand_dims, (2, 3), args=((0, -1),)),
    row(np.expand_dims, (), args=(0,)),
    row(np.squeeze, (1, 3, 1)),
    row(np.squeeze, (1, 3, 1), args=(0,)),
    row(np.squeeze, (1,)),
    row(np.broadcast_to, (3,), args=((2, 3),)),
    row(np.broadcast_to, (2, 1), args=((2, 3),)),
    row(np.broadcast_to, (1, 3), args=((4, 2, 3),)),
    row(np.broadcast_to, (), args=((2,),)),
    row(np.atleast_1d, ()),
    row(np.atleast_1d, (3,)),
    row(np.atleast_1d, (), (2, 3)),
    row(np.atleast_2d, ()),
    row(np.atleast_2d, (3,)),
    row(np.atleast_2d, (3,), (2, 3)),
    row(np.atleast_3d, (3,)),
    row(np.atleast_3d, (2, 3)),
    row(np.atleast_3d, (3,), ()),
    row(np.transpose, (2, 3)),
    row(np.transpose, ()),
    row(np.transpose, (2, 3, 2), args=((2, 0, 1),)),
    row(np.transpose, (2, 3, 2), kwargs={"axes": (-1, 0, 1)}),
    row(np.swapaxes, (2, 3), args=(0, 1)),
    row(np.swapaxes, (2, 3, 2), args=(0, -1)),
    row(np.moveaxis, (2, 3, 2), args=(0, -1)),
    row(np.moveaxis, (2, 3, 2), args=((0, 1), (2, 0))),
    row(np.flip, (3,)),
    row(np.flip, (2, 3), args=(1,)),
    row(np.flip, (2, 3), kwargs={"axis": (0, 1)}),
    row(np.fliplr, (2, 3)),
    row(np.flipud, (3,)),
    row(np.flipud, (2, 3)),
    row(np.roll, (3,), args=(1,)),
    row(np.roll, (2, 3), args=(-2,)),
    row(np.roll, (2, 3), args=((1, 2), (0, 1))),
    row(np.roll, (2, 3), kwargs={"shift": 1, "axis": 1}),
    row(np.rot90, (2, 3)),
    row(np.rot90, (2, 3), args=(2,)),
    row(np.rot90, (2, 3, 2), args=(3, (1, 2))),
    row(np.copy, ()),
    row(np.copy, (2, 3)),
    row(np.astype, (2, 3), args=(np.float64,)),
    row(np.astype, (), args=(np.float64,)),
]

ASSEMBLY = [
    row(np.concatenate, (2, 3), (1, 3)),
    row(np.concatenate, (2, 3), (2, 1), args=(1,)),
    row(np.concatenate, (3,), (3,), args=(-1,)),
    row(np.concatenate, (2, 3), (3,), kwargs={"axis": None}),
    row(np.stack, (3,), (3,)),
    row(np.stack, (), ()),
    row(np.stack, (2, 3), (2, 3), args=(-1,)),
    row(np.stack, (2, 3), (2, 3), kwargs={"axis": 1}),
    row(np.hstack, (3,), (2,)),
    row(np.hstack, (2, 3), (2, 1)),
    row(np.hstack, (), (3,)),
    row(np.vstack, (3,), (3,)),
    row(np.vstack, (2, 3), (3,)),
    row(np.vstack, (2, 3), (1, 3)),
    row(np.dstack, (2, 3), (2, 3)),
    row(np.dstack, (3,), (3,)),
    row(np.column_stack, (3,), (3,)),
    row(np.column_stack, (3,), (3, 2)),
    row(np.split, (6,), args=(3,)),
    row(np.split, (6,), args=([1, 4],)),
    row(np.split, (2, 4), args=(2, 1)),
    row(np.split, (2, 4), kwargs={"indices_or_sections": 2, "axis": -1}),
    row(np.array_split, (5,), args=(2,)),
    row(np.array_split, (2, 3), args=(2, -1)),
    row(np.hsplit, (4,), args=(2,)),
    row(np.hsplit, (2, 4), args=([1],)),
    row(np.vsplit, (4, 3), args=(2,)),
    row(np.dsplit, (2, 3, 4), args=(2,)),
    row(np.tile, (3,), args=(2,)),
    row(np.tile, (2, 3), args=((2, 1, 2),)),
    row(np.tile, (2, 3), args=((2,),)),
    row(np.tile, (), args=(3,)),
    row(np.repeat, (3,), args=(2,)),
    row(np.repeat, (), args=(3,)),
    row(np.repeat, (2, 3), args=(2, 1)),
    row(np.repeat, (2, 3), args=([1, 0, 3], -1)),
    row(np.repeat, (2, 3), args=([2, 1, 1, 0, 3, 1],)),
    row(np.repeat, (2, 3), kwargs={"repeats": 2, "axis": 0}),
    row(np.pad, (2, 3), args=(1,)),
    row(np.pad, (3,), args=((2, 1),)),
    row(np.pad, (2, 3), args=(((0, 1), (2, 0)),), kwargs={"constant_values": 3.0}),
    row(np.pad, (2, 3), args=(2, "edge")),
    row(np.pad, (2, 3), args=(2, "reflect")),
    row(np.pad, (3,), args=(4, "reflect")),
    row(np.pad, (2, 3), args=(2, "symmetric")),
    row(np.pad, (2, 3), kwargs={"pad_width": 2, "mode": "wrap"}),
]
TABLE = SHAPE + ASSEMBLY
DTYPES = [np.float64, np.float32]

EXERCISED = {p.values[0] for p in TABLE}


def inputs(rng, shapes, dtype=np.float64):
    return [rng.uniform(-2, 2, size=s).astype(dtype) for s in shapes]


def call(fn, xs, args, kwargs):
    return fn(list(xs), *args, **kwargs) if fn in SEQUENCE else fn(*xs, *args, **kwargs)


def scalar_for_pieces(fn, xs, args, kwargs, rng):
    """f(*xs): the call itself, or for a list or tuple result a weighted sum of its pieces."""
    out = call(fn, xs, args, kwargs)
    if not isinstance(out, (list, tuple)):
        # the constants ride in default arguments: check_grad traces closures leaf by leaf,
        # and ints reaching a rule by keyword would arrive traced
        return lambda *xs, c=(fn, args, kwargs): call(c[0], xs, c[1], c[2])
    weights = [rng.standard_normal(np.shape(p)) for p in out]
    return lambda *xs, c=(fn, args, kwargs, weights): sum(
        np.sum(p * w) for p, w in zip(call(c[0], xs, c[1], c[2]), c[3]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, args, kwargs", TABLE)
def test_shape_rule(fn, shapes, args, kwargs, dtype, rng):
    """A shape or assembly rule's gradient matches central differences, for float64 and float32."""
    xs = inputs(rng, shapes, dtype)
    check_grad(scalar_for_pieces(fn, xs, args, kwargs, rng), *xs)


@pytest.mark.parametrize("fn, shapes, args, kwargs", [
    # np.astype itself refuses Python floats
    p for p in TABLE if all(s == () for s in p.values[1]) and p.values[0] is not np.astype])
def test_shape_rule_of_python_scalars(fn, shapes, args, kwargs, rng):
    """Python floats go through like 0-d arrays, and get float gradients."""
    xs = [1.25 + i for i in range(len(shapes))]
    f = scalar_for_pieces(fn, xs, args, kwargs, rng)
    check_grad(f, *xs)


# --- behaviours ---


def test_split_fills_unused_pieces_with_zeros():
    """Pieces of a split that are not used pass back zeros."""
    _, (_, dx) = grad(lambda x: np.sum(np.split(x, 3)[1] * 2.0), np.arange(6.0))
    np.testing.assert_array_equal(dx, [0, 0, 2, 2, 0, 0])


def test_split_pieces_used_twice_accumulate():
    """A piece read twice, and two different pieces, all pass their shares back."""
    def f(x):
        pieces = np.array_split(x, 3)
        return np.sum(pieces[0] * 3.0) + np.sum(pieces[0]) + np.sum(pieces[2])
    _, (_, dx) = grad(f, np.arange(5.0))
    np.testing.assert_array_equal(dx, [4, 4, 0, 0, 1])


def test_sequence_argument_gets_one_tangent_per_element_of_its_type():
    """concatenate of a tuple returns a tuple of tangents; a list, a list."""
    a, b = np.ones(2), np.ones(3)
    for seq in ((a, b), [a, b]):
        _, back = tapegrad.rrule(np.concatenate, seq)
        tangents = back(np.arange(5.0))[1]
        assert type(tangents) is type(seq)
        np.testing.assert_array_equal(tangents[1], [2, 3, 4])


def test_constant_entries_of_a_sequence_get_nothing():
    """A constant in the sequence is joined but only the traced arrays receive gradients."""
    _, (_, dx) = grad(lambda x: np.sum(np.stack([x, np.ones(2), x]) * np.arange(3.0)[:, None]), np.ones(2))
    np.testing.assert_array_equal(dx, [2, 2])


def test_atleast_with_several_arrays_reads_only_used_results():
    """atleast_2d of several arrays: an unused result passes back nothing."""
    _, (_, da, db) = grad(lambda a, b: np.sum(np.atleast_2d(a, b)[1]), 2.0, np.ones(3))
    assert da is ZERO
    np.testing.assert_array_equal(db, [1, 1, 1])


def test_astype_to_integers_has_zero_derivative():
    """A cast to an integer type is piecewise constant: its derivative is zero."""
    _, back = tapegrad.rrule(np.astype, np.array([1.5, 2.5]), np.int64)
    assert back(np.ones(2))[1] is ZERO


def test_astype_casts_the_gradient_back(rng):
    """float32 cast up to float64 gets a float32 gradient."""
    x = inputs(rng, [(3,)], np.float32)[0]
    _, back = tapegrad.rrule(np.astype, x, np.float64)
    assert back(np.ones(3))[1].dtype == np.float32


def test_repeat_copies_add_up():
    """Each element receives the sum of the shares of its copies (none for 0 copies)."""
    _, (_, dx) = grad(lambda x: np.sum(np.repeat(x, [1, 0, 3])), np.ones(3))
    np.testing.assert_array_equal(dx, [1, 0, 3])


def test_pad_refuses_modes_that_compute_values():
    """pad in a mode that computes new values (linear_ramp, mean, odd reflection) is refused."""
    with pytest.raises(NotImplementedError, match="linear_ramp"):
        grad(lambda x: np.sum(np.pad(x, 1, "linear_ramp")), np.ones(3))


# --- rules themselves: dtype and traceability ---


def _rule_inputs(fn, xs):
    return (list(xs),) if fn in SEQUENCE else tuple(xs)


def _flat_tangents(tangents):
    out = []
    for t in tangents[1:]:
        t = t.fn() if type(t) is tapegrad.extend.Thunk else t
        if isinstance(t, (list, tuple)):
            out.extend(u for u in t if u is not ZERO)
        elif t is not ZERO and t is not tapegrad.NO_TANGENT:
            out.append(t)
    return out


@pytest.mark.parametrize("fn, shapes, args, kwargs", TABLE)
def test_rule_keeps_float32(fn, shapes, args, kwargs, rng):
    """Each pullback, given float32 cotangents, returns float32 tangents shaped like the inputs."""
    xs = inputs(rng, shapes, np.float32)
    y, back = tapegrad.rrule(fn, *_rule_inputs(fn, xs), *args, **kwargs)
    dy = [np.ones_like(p) for p in y] if isinstance(y, (list, tuple)) else np.ones_like(y)
    tangents = _flat_tangents(back(dy))
    assert [t.dtype for t in tangents] == [np.float32] * len(xs)
    assert [np.shape(t) for t in tangents] == list(shapes)


class RecordEverything(tapegrad.context.BaseContext):
    """Records every call whole, as the trace of a gradient will, without needing rules."""

    def is_primitive(self, fn, *args):
        return True


@pytest.mark.parametrize("fn, shapes, args, kwargs", TABLE)
def test_rule_is_traceable(fn, shapes, args, kwargs, rng):
    """A rule and its pullback run on Tracers (no in-place writes, no float()) and agree with plain values."""
    xs = inputs(rng, shapes)
    y = call(fn, xs, args, kwargs)
    dy = [rng.standard_normal(np.shape(p)) for p in y] if isinstance(y, (list, tuple)) else \
        rng.standard_normal(np.shape(y))

    def rule_then_pullback(xs, dy, c=(fn, args, kwargs)):  # defaults: not traced
        fn, args, kwargs = c
        return _flat_tangents(tapegrad.rrule(fn, *_rule_inputs(fn, xs), *args, **kwargs)[1](dy))

    got, tape = tapegrad.trace(rule_then_pullback, xs, dy, ctx=RecordEverything())
    for g, e in zip(got, rule_then_pullback(xs, dy), strict=True):
        np.testing.assert_allclose(g, e)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Every row of the shape and assembly tables; a list result is weighted into one array."""
    rng = np.random.default_rng(5)
    rows = []
    for p in TABLE:
        fn, shapes, args, kwargs = p.values
        xs = inputs(rng, shapes)
        rows.append((fn, scalar_for_pieces(fn, xs, args, kwargs, rng), tuple(xs)))
    return rows


#: a piece written as a list holding a traced number (``[x[0] * x[2], 1.0]``) beside an array:
#: forward mode joined ZeroTangent into an array of objects (hstack, vstack, dstack and
#: column_stack had no forward rule of their own: a derived one sent ZeroTangent into getitem's
#: pullback), and a gradient taken inside another asked numpy for the list's shape (refused)
LISTED_PIECE = [
    (fn, lambda x, fn=fn: np.sin(fn([x[:2], [x[0] * x[2], 1.0]])) * 1.5, (np.array([0.7, -0.4, 1.3]),))
    for fn in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack)]

#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows() + LISTED_PIECE


@pytest.mark.parametrize("fn, f, args", LISTED_PIECE, ids=[fn.__name__ for fn, _, _ in LISTED_PIECE])
def test_a_piece_written_as_a_list_joins_in_every_mode(fn, f, args):
    """The variation of a list piece is an array of numbers (not of objects), and every mode
    agrees with central differences to second order."""
    _, dy = tapegrad.jvp(f, args, (np.ones(3),))
    assert dy.dtype == np.float64
    check_grad(lambda x: np.sum(f(x) * np.arange(1.0, 1.0 + np.size(f(x))).reshape(np.shape(f(x)))), *args, order=2)


# --- complex values (autograd's convention: tests/rules/_complex.py) ---

#: forward mode on complex values needs the core's complex tangents (a derived forward rule
#: takes complex arguments)


def complex_inputs(rng, shapes, mixed):
    """Complex arrays of `shapes`; with `mixed`, only the first is complex and the others real."""
    return [rng.uniform(-2, 2, s) + 1j * rng.uniform(-2, 2, s) if i == 0 or not mixed else rng.uniform(-2, 2, s)
            for i, s in enumerate(shapes)]


def _complex_rows():
    for p in TABLE:
        fn, shapes, args, kwargs = p.values
        if fn is np.astype:
            continue  # its own rows below
        yield pytest.param(fn, shapes, args, kwargs, False, id=f"{p.id} complex")
        if len(shapes) > 1:
            yield pytest.param(fn, shapes, args, kwargs, True, id=f"{p.id} mixed")


COMPLEX_TABLE = list(_complex_rows())


def _re_pair(a, b):
    """Re Σ a·b (no conjugate: autograd's convention), over the pieces of a list or tuple too."""
    if isinstance(a, (list, tuple)):
        return sum(_re_pair(u, w) for u, w in zip(a, b))
    return 0.0 if a is ZERO else float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def check_complex_sequence_rule(fn, xs, args, kwargs, rng, h=1e-6):
    """The dot-product test of a rule whose arrays come as one list (concatenate, stack, ...):
    Re Σ g·dy along a random direction of each array equals Re Σ c·v of its cotangent c."""
    y, back = tapegrad.rrule(fn, list(xs), *args, **kwargs)
    g = random_like(rng, y)
    cs = back(g)[1]
    for i, x in enumerate(xs):
        c = cs[i]
        assert np.shape(c) == np.shape(x)
        assert np.iscomplexobj(x) or not np.iscomplexobj(c), f"the real array {i} gets a complex cotangent"
        v = random_like(rng, x)
        plus, minus = list(xs), list(xs)
        plus[i], minus[i] = x + h * v, x - h * v
        dy = (fn(plus, *args, **kwargs) - fn(minus, *args, **kwargs)) / (2 * h)
        assert _re_pair(g, dy) == pytest.approx(_re_pair(c, v), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("fn, shapes, args, kwargs, mixed", COMPLEX_TABLE)
def test_complex_shape_rule_pullback(fn, shapes, args, kwargs, mixed, rng):
    """The dot-product test of each shape and assembly rule on complex (and mixed) arrays."""
    xs = complex_inputs(rng, shapes, mixed)
    if fn in SEQUENCE:
        check_complex_sequence_rule(fn, xs, args, kwargs, rng)
    else:
        check_complex_rule(fn, *xs, *args, rng=rng, kwargs=kwargs, wrt=range(len(xs)))


@pytest.mark.parametrize("fn, shapes, args, kwargs, mixed", COMPLEX_TABLE)
def test_complex_shape_rule_jvp(fn, shapes, args, kwargs, mixed, rng):
    """Forward mode through each shape and assembly rule on complex arrays matches central differences."""
    xs = complex_inputs(rng, shapes, mixed)
    check_complex_jvp(lambda *xs, c=(fn, args, kwargs): call(c[0], xs, c[1], c[2]), *xs, rng=rng)


ASTYPE_ROWS = [
    pytest.param(np.complex128, True, id="complex to complex"),
    pytest.param(np.complex128, False, id="real to complex"),
    pytest.param(np.float64, True, id="complex to real (the real part)"),
]


@pytest.mark.parametrize("dtype, complex_in", ASTYPE_ROWS)
def test_complex_astype(dtype, complex_in, rng):
    """astype to and from complex: a real argument gets the real part of its cotangent, and a
    cast of a complex array to a real type (numpy keeps the real part, warning) passes the real
    cotangent back as the cotangent of the real part."""
    x = complex_inputs(rng, [(2, 3)], False)[0] if complex_in else rng.uniform(-2, 2, (2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check_complex_rule(np.astype, x, dtype, rng=rng, wrt=[0])


def test_astype_complex_gradient_is_the_real_part():
    """d/dx Re Σ w·x.astype(complex) = Re w, a real gradient."""
    w = np.array([1 + 2j, -3 + 0.5j])
    _, (_, dx) = grad(lambda x, w=w: np.real(np.sum(w * x.astype(complex))), np.array([0.5, 2.0]))
    assert dx.dtype == np.float64
    np.testing.assert_array_equal(dx, [1.0, -3.0])


def test_complex_shape_rules_are_declared():
    """The rules of the complex tables are those the shape and assembly families declare for
    complex values."""
    families = ("tapegrad.rules.shape", "tapegrad.rules.assembly")
    assert {p.values[0] for p in COMPLEX_TABLE} | {np.astype} == {
        fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) in families}


def _complex_order2_rows():
    """The first row of each shape and assembly rule, through z = x + iy (the first array, the
    others real, for mixed joins), at second order."""
    rng = np.random.default_rng(15)
    seen, rows = set(), []
    for p in COMPLEX_TABLE:
        fn, shapes, args, kwargs, mixed = p.values
        if (fn, mixed) in seen:
            continue
        seen.add((fn, mixed))
        xs = [rng.uniform(-2, 2, s) for s in shapes]
        y0 = rng.uniform(-2, 2, shapes[0])

        def f(y, *xs, c=(fn, args, kwargs)):
            zs = [complex_of(xs[0], y), *xs[1:]]
            out = call(c[0], zs, c[1], c[2])
            pieces = out if isinstance(out, (list, tuple)) else [out]
            return sum(power(piece) for piece in pieces)

        rows.append(pytest.param(fn, f, (y0, *xs), id=p.id))
    return rows


@pytest.mark.parametrize("fn, f, args", _complex_order2_rows())
def test_complex_shape_rule_second_order(fn, f, args):
    """Second derivatives through a real parametrization match central differences (reverse over reverse)."""
    check_grad(f, *args, order=2, modes=("rev",))


def test_structured_result_passes_complex_seeds_back():
    """A tuple result (packed by `build`) with a complex entry: each seed goes back to its entry,
    d/dx [Re Σ g·x(1+2j) + s Σx] = Re(g(1+2j)) + s."""
    y, back = tapegrad.pullback(lambda x: (x * (1 + 2j), np.sum(x)), np.ones(2))
    _, dx = back((np.array([1j, 1 + 0j]), 1.0))
    np.testing.assert_array_equal(dx, [-1.0, 2.0])
    assert build in COMPLEX

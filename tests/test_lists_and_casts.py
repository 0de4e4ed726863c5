"""Plain NumPy as scientists write it: reductions of Python lists holding traced values
(``np.mean([a, b])``), and numpy's scalar types of a traced number (``np.int64(t)`` is a
guarded constant, ``np.float64(t)`` a refusal that names the cast which keeps the gradient)."""
import inspect
import pickle

import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, check_grad, compiled_grad, grad, jvp, trace
from tapegrad.literals import REDUCTIONS

#: (id, f, x): reductions of lists and tuples of traced values, at any depth, beside floats
LISTS = [
    ("sum", lambda x: np.sum([x[0] * x[1], np.sin(x[2]), 2.0]), None),
    ("sum-nested-axis0", lambda x: np.sum([[x[0], 1.0], (x[1], x[2] ** 2)], axis=0), None),
    ("mean", lambda x: np.mean([x[0], x[1] * x[2]]), None),
    ("mean-of-arrays-axis0", lambda x: np.mean([x, 2.0 * x ** 2, np.ones(3)], axis=0), None),
    ("mean-keepdims", lambda x: np.mean([[x[0], x[1]], [x[2], 0.5]], axis=1, keepdims=True), None),
    ("std", lambda x: np.std([x[0], 2.0, x[1] * x[2]]), None),
    ("std-ddof", lambda x: np.std((x[0], x[1], x[2]), ddof=1), None),
    ("var-axis-1", lambda x: np.var([[x[0], x[1], 0.25], [x[2], 1.0, x[0] * x[1]]], axis=-1), None),
    ("norm", lambda x: np.linalg.norm([x[0], x[1], 3.0]), None),
    ("norm-ord1-axis", lambda x: np.linalg.norm([[x[0], -2.0], [x[1], x[2]]], ord=1, axis=1), None),
    ("max", lambda x: np.max([x[0], x[1] ** 2, 0.1]), None),
    ("min-axis0", lambda x: np.min([[x[0], x[1]], [x[2], 2.5]], axis=0), None),
    ("amax", lambda x: np.amax((x[0], x[2])), None),
    ("amin", lambda x: np.amin([x[1], x[2]]), None),
    ("prod", lambda x: np.prod([x[0], x[1], 1.5]), None),
    ("prod-tuple-keepdims", lambda x: np.prod(((x[0], x[1]), (x[2], 2.0)), axis=0, keepdims=True), None),
    ("average", lambda x: np.average([x[0], x[1], x[2]]), None),
    ("average-weights-list", lambda x: np.average([x[0], 2.0, x[1]], weights=[x[2], 1.0, 0.5]), None),
    ("average-weights-by-position", lambda x: np.average([[x[0], 2.0], [x[1], x[2]]], 0, [x[2], 1.0]), None),
    ("median-odd", lambda x: np.median([x[0], x[1] * 3.0, x[2]]), None),
    ("median-even", lambda x: np.median([x[0], x[1], x[2], 1.7]), None),
    ("median-axis", lambda x: np.median([[x[0], x[1], 0.3], [x[2], 2.0, x[0] * x[1]]], axis=1), None),
]
X = np.array([0.9, 1.3, 2.1])


def ids(rows):
    return [row[0] for row in rows]


@pytest.mark.parametrize("name, f, _", LISTS, ids=ids(LISTS))
def test_reduction_of_a_list_matches_numpy_and_central_differences(name, f, _):
    """Each reduction of a list of traced values has numpy's value (numpy's own function reduces
    the stacked list) and a gradient that matches central differences to second order, in
    reverse and forward mode."""
    value, _ = grad(lambda x: np.sum(f(x)), X)
    assert value == pytest.approx(np.sum(f(X)), rel=1e-14)
    check_grad(f, X, order=2)


@pytest.mark.parametrize("name, f, _", LISTS, ids=ids(LISTS))
def test_reduction_of_a_list_in_jvp_compiled_grad_and_replay(name, f, _):
    """Forward mode, compiled gradients and a replayed tape give what an eager gradient gives."""
    g = lambda x: np.sum(f(x) ** 2)  # noqa: E731
    v = np.array([0.3, -1.1, 0.7])
    value, dx = grad(g, X)[0], grad(g, X)[1][1]
    y, dy = jvp(g, (X,), (v,))
    assert y == pytest.approx(value, rel=1e-14) and dy == pytest.approx(dx @ v, rel=1e-12)
    compiled = compiled_grad(g)
    for x in (X, X + 0.01):  # the second call replays the compiled program
        want = grad(g, x)
        got = compiled(x)
        assert got[0] == pytest.approx(want[0], rel=1e-14)
        np.testing.assert_allclose(got[1][1], want[1][1], rtol=1e-12)
    _, tape = trace(g, X)
    assert tape.replay(g, X + 0.02) == pytest.approx(g(X + 0.02), rel=1e-14)


def test_reductions_of_two_numbers_have_their_closed_forms():
    """d mean = (1/2, 1/2); d norm = (a, b)/r; d std = ±1/2; d max to the larger; d median of
    two = (1/2, 1/2); d prod = (b, a)."""
    a, b = 3.0, 4.0
    cases = [
        (lambda a, b: np.mean([a, b]), 3.5, (0.5, 0.5)),
        (lambda a, b: np.linalg.norm([a, b]), 5.0, (0.6, 0.8)),
        (lambda a, b: np.std([a, b]), 0.5, (-0.5, 0.5)),
        (lambda a, b: np.var([a, b]), 0.25, (-0.5, 0.5)),
        (lambda a, b: np.max([a, b]), 4.0, (0.0, 1.0)),
        (lambda a, b: np.min((a, b)), 3.0, (1.0, 0.0)),
        (lambda a, b: np.median([a, b]), 3.5, (0.5, 0.5)),
        (lambda a, b: np.prod([a, b]), 12.0, (4.0, 3.0)),
        (lambda a, b: np.sum([[a], [b]]), 7.0, (1.0, 1.0)),
        (lambda a, b: np.average([a, b], weights=[1.0, 3.0]), 3.75, (0.25, 0.75)),
    ]
    for f, value, (da, db) in cases:
        got, (_, ga, gb) = grad(f, a, b)
        assert (got, ga, gb) == pytest.approx((value, da, db), rel=1e-15)


def test_median_shares_a_tie_and_takes_its_middle_values():
    """The median's derivative goes to its middle value (half to each of two), shared evenly
    among elements equal to it, as max and min share."""
    assert grad(lambda x: np.median(x), np.array([3.0, 1.0, 2.0]))[1][1].tolist() == [0.0, 0.0, 1.0]
    assert grad(lambda x: np.median(x), np.array([4.0, 1.0, 2.0, 3.0]))[1][1].tolist() == [0.0, 0.0, 0.5, 0.5]
    assert grad(lambda x: np.median(x), np.array([2.0, 1.0, 2.0]))[1][1].tolist() == [0.5, 0.0, 0.5]
    value, (_, dx) = grad(lambda x: np.median(x), np.array([1.0, np.nan, 2.0]))
    assert np.isnan(value) and np.isnan(dx).all()


def test_outside_a_trace_the_reductions_are_numpys_own():
    """While a trace of tapegrad's own runs a stand-in takes each reduction's name (numpy's
    own function is its __wrapped__); numpy's own are back as soon as the trace ends, so code
    between traces compares them by identity and pickles them (and tapes) by name."""
    seen = {}

    def f(x):
        seen.update(sum=np.sum, norm=np.linalg.norm)
        return np.sum([x, 1.0])

    trace(f, 1.0)
    assert seen["sum"] is not REDUCTIONS["sum"] and seen["sum"].__wrapped__ is REDUCTIONS["sum"]
    assert seen["norm"].__wrapped__.__module__ == "numpy.linalg"
    assert all(getattr(np, name) is fn for name, fn in REDUCTIONS.items())
    assert np.linalg.norm is seen["norm"].__wrapped__
    _, tape = trace(list_mean, 1.0, 2.0)  # it records numpy's np.mean
    assert pickle.loads(pickle.dumps(tape)).replay(list_mean, 2.0, 4.0) == 3.0


def list_mean(a, b):
    return np.mean([a, b])


class Counting(tapegrad.context.BaseContext):
    """A custom context that decides primitives by identity, as a user's context may."""

    def __init__(self):
        self.sums = 0

    def is_primitive(self, fn, *args):
        self.sums += fn is np.sum
        return super().is_primitive(fn, *args)


def test_a_custom_context_sees_numpys_own_reductions_and_keeps_the_refusal():
    """A trace under a context that decides primitives itself keeps numpy's own reductions in
    numpy's namespace, so its ``fn is np.sum`` keeps its meaning; a reduction of a list of
    traced values stays refused."""
    ctx = Counting()
    value, _ = trace(lambda x: np.sum(x * x), np.ones(2), ctx=ctx)
    assert value == 2.0 and ctx.sums == 1
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(ConcreteValueError) as err:
        trace(lambda a, b: np.mean([a, b]), 1.0, 2.0, ctx=Counting())
    assert str(err.value) == (
        f"numpy tried to turn the traced value %2::float64 into a plain array at "
        f"test_lists_and_casts.py:{line}, which would drop its gradient. np.mean was given a list "
        f"holding traced values, which numpy converts to an array itself: pass np.stack([...]) "
        f"(or np.array([...])) instead")
    # a trace under the default context, and a gradient, take the list
    assert trace(lambda a, b: np.mean([a, b]), 1.0, 2.0)[0] == 1.5
    assert grad(lambda a, b: np.mean([a, b]), 1.0, 2.0)[1][1:] == (0.5, 0.5)


# --- numpy's scalar types of a traced number ---

#: (id, f, its derivative at x away from the integers): integer casts are constants, and so is
#: a bool made a float
INT_CASTS = [
    ("np.int64", lambda t: t * np.int64(t), lambda t: np.trunc(t)),
    ("np.intp", lambda t: t ** 2 * np.intp(t), lambda t: 2 * t * np.trunc(t)),
    ("np.int32", lambda t: np.sin(t) * np.int32(t), lambda t: np.cos(t) * np.trunc(t)),
    ("np.uint8", lambda t: t * np.uint8(t), lambda t: np.trunc(t)),
    ("int", lambda t: t * int(t), lambda t: np.trunc(t)),
    ("round", lambda t: t * round(t), lambda t: np.round(t)),
    ("np.bool_", lambda t: t * np.bool_(t), lambda t: 1.0 * (t != 0)),
    # a comparison made a number (an indicator): a bool carries no derivative either (float()
    # of it was refused as if it dropped one)
    ("float(t > 2)", lambda t: t * float(t > 2.0), lambda t: 1.0 * (t > 2.0)),
    ("np.float64(t > 2)", lambda t: t * np.float64(t > 2.0), lambda t: 1.0 * (t > 2.0)),
]


@pytest.mark.parametrize("name, f, df", INT_CASTS, ids=ids(INT_CASTS))
def test_an_integer_cast_is_a_constant_with_zero_derivative(name, f, df):
    """np.int64(t), int(t), round(t), np.intp(t) of a traced number: numpy's value, derivative
    zero through the cast, in reverse and forward mode; compiled gradients guard the cast and
    trace again where it takes another value."""
    for t in (1.3, 2.6, 3.4):
        value, (_, dt) = grad(f, t)
        assert value == f(t) and dt == pytest.approx(df(t), rel=1e-14)
        y, dy = jvp(f, (t,), (1.0,))
        assert y == f(t) and dy == pytest.approx(df(t), rel=1e-14)
        check_grad(f, t)
    compiled = compiled_grad(f)
    for t in (1.3, 1.4, 2.6, 3.4):  # 1.4 replays the program of 1.3; the others fail its guard
        value, (_, dt) = compiled(t)
        assert value == f(t) and dt == pytest.approx(df(t), rel=1e-14)


#: numpy's float and complex scalar types: none can hold a traced number
FLOAT_TYPES = [np.float64, np.float32, np.float16, np.complex128]


@pytest.mark.parametrize("cast", FLOAT_TYPES, ids=lambda c: c.__name__)
def test_a_float_scalar_type_of_a_traced_number_is_refused_with_the_cast_that_keeps_it(cast):
    """np.float64(t) (float's constructor asks __float__, then __array__) and np.float32(t)
    (__array__(dtype=float32)) must return a plain number: refused, naming the call, the line
    and the fix, in reverse and forward mode."""
    name = np.dtype(cast).name
    line = inspect.currentframe().f_lineno + 1
    f = lambda t: cast(t) * 2.0  # noqa: E731
    fix = (f"would drop its derivative: numpy's scalar types always make a plain number, which "
           f"cannot carry one. Cast it with t.astype(np.{name}) or np.asarray(t, np.{name}), "
           f"which keep it")
    with pytest.raises(ConcreteValueError) as err:
        grad(f, 1.5)
    assert str(err.value) == (f"np.{name}(t) of the traced value %2::float64 at "
                              f"test_lists_and_casts.py:{line} (or another conversion of it to a "
                              f"plain {name}) " + fix)
    with pytest.raises(ConcreteValueError) as err:
        jvp(f, (1.5,), (1.0,))
    assert str(err.value) == (f"np.{name}(t) of the dual value float64 at "
                              f"test_lists_and_casts.py:{line} (or another conversion of it to a "
                              f"plain {name}) " + fix)


def test_a_caught_float_cast_never_gives_a_detached_result():
    """Code that catches the refusal and goes on would return a result without the value's
    gradient: the gradient raises when the function returns."""
    def f(t):
        try:
            c = np.float64(t)
        except TypeError:
            c = 1.0
        return t * c

    with pytest.raises(ConcreteValueError, match=r"^float\(\) of the traced value .* \(this error, raised inside f, was caught by it"):
        grad(f, 1.5)


@pytest.mark.parametrize("cast, rtol", [
    (lambda t: t.astype(np.float64), 1e-12), (lambda t: np.asarray(t, np.float64), 1e-12),
    (lambda t: np.array(t, np.float32), 1e-6), (lambda t: t.astype(np.float32), 1e-6)],
    ids=["astype", "asarray", "array-float32", "astype-float32"])
def test_the_casts_that_keep_the_gradient(cast, rtol):
    """t.astype(np.float64) and np.asarray(t, np.float64) of a traced number (a Python float
    too) are recorded casts: the gradient goes through, in every mode and to second order."""
    f = lambda t: cast(t) ** 3  # noqa: E731
    value, (_, dt) = grad(f, 1.5)
    assert value == pytest.approx(3.375, rel=rtol) and dt == pytest.approx(6.75, rel=rtol)
    assert jvp(f, (1.5,), (1.0,))[1] == pytest.approx(6.75, rel=rtol)
    assert compiled_grad(f)(1.5)[1][1] == pytest.approx(6.75, rel=rtol)
    assert grad(lambda t: grad(f, t)[1][1], 1.5)[1][1] == pytest.approx(9.0, rel=rtol)
    # (in float32 the differences need a wider step and tolerance)
    check_grad(lambda x: np.sum(cast(x) ** 3), np.array([0.5, 1.5]), order=2,
               **({} if rtol < 1e-9 else {"rtol": 1e-3, "eps": 1e-2}))

"""Reliability: every failure is clear, nothing is silently wrong, and it holds under threads and scale."""
import gc
import pathlib
import threading
import weakref

import numpy as np
import pytest
import scipy.signal

import tapegrad
from tapegrad import (
    ConcreteValueError,
    EscapedTracerError,
    RuleError,
    check_grad,
    grad,
    gradient,
    primitive,
    pullback,
    rrule,
)

HERE = "test_reliability.py:"


def test_scipy_function_without_replacement_names_itself():
    """A scipy function that cannot see traced values is named, with its argument and the line."""
    with pytest.raises(ConcreteValueError) as err:
        grad(lambda x: np.sum(scipy.signal.convolve(x, np.ones(2))), np.ones(3))
    msg = str(err.value)
    assert "scipy.signal.convolve cannot see traced values and tapegrad has no replacement" in msg
    assert "%2::float64[3]" in msg and HERE in msg and "use numpy functions" in msg


def test_wrt_on_a_value_that_holds_nothing_differentiable():
    """Asking for the gradient w.r.t. a string names the argument, its type, the line and what works."""
    with pytest.raises(TypeError, match=r"wrt names argument 1 \(mode\) at test_reliability.py:\d+, a str, "
                                        r"which holds nothing differentiable.*pass a number or a float array"):
        grad(lambda x, mode: x * 2, 1.0, "fast", wrt=(0, 1))


KEPT = []


class Holder:
    value = None


@pytest.mark.parametrize("where", ["global", "list", "attribute"])
def test_tracer_used_after_its_trace_ended(where):
    """A traced value kept in a global, a list or an attribute raises when used later."""
    global LEAK
    holder = Holder()

    def f(x):
        global LEAK
        LEAK = x
        KEPT.append(x)
        holder.value = x
        return x * 2

    grad(f, 1.5)
    kept = {"global": LEAK, "list": KEPT[-1], "attribute": holder.value}[where]
    with pytest.raises(EscapedTracerError, match=r"the traced value %2::float64 was used at "
                                                 r"test_reliability.py:\d+ after the trace .* return it"):
        np.sin(kept)


@primitive
def broken_square(x):
    return x * x


def test_pullback_with_the_wrong_number_of_tangents_is_caught_at_the_step():
    """A pullback returning too few tangents raises RuleError naming the rule, its arguments and the fix."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (2 * x * dy,)

    with pytest.raises(RuleError, match=r"pullback of .*broken_square\(%2::float64\) \(for %3, in the "
                                        r"gradient taken at test_reliability.py:\d+\) returned tuple of length 1; "
                                        r"fix the rule .* a tuple of 2"):
        grad(lambda x: broken_square(x), 3.0)


def test_pullback_with_a_tangent_of_the_wrong_shape_is_caught():
    """A tangent shaped unlike its argument raises RuleError naming the rule and the shapes."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (tapegrad.NO_TANGENT, np.sum(2 * x * dy))

    with pytest.raises(RuleError, match=r"pullback of test_reliability.broken_square \(for %3, in the gradient "
                                        r"taken at test_reliability.py:\d+\) returned a tangent of shape \(\) "
                                        r"for argument 1, %2::float64\[3\]; fix the rule.*unbroadcast"):
        grad(lambda x: np.sum(broken_square(x)), np.ones(3))


def test_array_tangent_of_the_wrong_shape_is_caught():
    """An array tangent that would broadcast silently ((3, 1) for a (3,) argument) is refused too."""
    @rrule(broken_square)
    def broken_square_rrule(x):
        return broken_square(x), lambda dy: (tapegrad.NO_TANGENT, (2 * x * dy)[:, None])

    with pytest.raises(RuleError, match=r"pullback of test_reliability.broken_square \(for %3, .*\) "
                                        r"returned a tangent of shape \(3, 1\) for argument 1, "
                                        r"%2::float64\[3\]"):
        grad(lambda x: np.sum(broken_square(x)), np.ones(3))


def test_grad_frees_its_tape_at_once_and_restores_the_collector():
    """grad's tape goes by reference counting while the collector is paused: nothing is left for
    the cyclic collector, and the collector is back on afterwards, also when f raises."""
    def chain(x, c):
        for _ in range(200):
            x = np.sin(x) * c + 0.1 * x
        return x

    gc.collect()
    assert gc.isenabled()
    grad(chain, 0.3, 1.0001)
    assert gc.isenabled()
    assert gc.collect() == 0  # no tape, op or Variable waited for the collector

    def fails(x):
        raise KeyError("inside f")

    with pytest.raises(KeyError):
        grad(fails, 1.0)
    assert gc.isenabled()


def test_pullback_keeps_every_value_that_grad_frees():
    """grad drops values from its private tape as the sweep passes them; pullback's tape, which
    the user can read, keeps all of them after any number of sweeps."""
    y, back = pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    back(1.0)
    assert all(op.val is not None for op in back.tape)


def _intermediate_is_freed_during_f(run):
    """Whether `run` (grad or pullback) lets go of an intermediate as soon as f drops it.
    Neither rule needs the intermediate's values: multiply keeps its inputs, sum its shape."""
    freed = []

    def f(x):
        a = x * 2.0
        ref = weakref.ref(a._val)
        s = np.sum(a)
        del a
        freed.append(ref() is None)
        return s

    value, grads = run(f, np.arange(4.0))
    assert value == 12.0 and np.array_equal(grads[1], np.full(4, 2.0))
    return freed[0]


def test_grad_keeps_only_the_shape_of_an_intermediate_no_pullback_needs():
    """grad's tape records a large array result as a stand-in and sum keeps a stand-in of its
    input, so the intermediate goes as soon as f drops it; pullback's tape, which the user can
    read, keeps it. (conftest.py makes every array "large".)"""
    assert _intermediate_is_freed_during_f(grad)

    def with_pullback(f, x):
        y, back = pullback(f, x)
        return y, back(1.0)

    assert not _intermediate_is_freed_during_f(with_pullback)


def test_multiply_by_a_constant_keeps_no_traced_partner():
    """c * a with a constant c needs c for a's tangent, and a only for c's, which is never read:
    with grad, a goes as soon as f drops it."""
    freed = []
    c = np.array([1.0, -2.0, 3.0])

    def f(x):
        a = x + 1.0  # add keeps only stand-ins
        ref = weakref.ref(a._val)
        b = c * a
        del a
        freed.append(ref() is None)
        return np.sum(b)

    # wrt=0: c, which f captures, stays a constant (without wrt it is differentiated too)
    value, (_, dx) = grad(f, np.zeros(3), wrt=0)
    assert freed == [True]
    assert value == 2.0 and np.array_equal(dx, c)


def test_a_rule_with_needs_learns_which_arguments_are_traced():
    """A rule that takes `needs` gets one bool per positional argument from a gradient when
    some array argument is a constant (True where it is traced), and None, meaning every
    tangent may be read, when all are traced, for numbers, and when called directly."""
    seen = []

    @primitive
    def scale(a, b):
        return a * b

    @rrule(scale)
    def scale_rrule(a, b, *, needs=None):
        seen.append(needs)

        def scale_pullback(dy):
            return tapegrad.NO_TANGENT, dy * b, dy * a

        return scale(a, b), scale_pullback

    one = np.ones(())  # a 0-d array: an array argument with a scalar result
    assert gradient(lambda x: scale(x, 3.0), one) == (3.0,)
    assert gradient(lambda c, x: scale(c, x), 2.0 * one, one, wrt=1) == (tapegrad.NO_TANGENT, 2.0)
    assert gradient(lambda x: scale(x, x), one) == (2.0,)
    assert gradient(lambda x: scale(x, 3.0), 1.0) == (3.0,)  # two numbers: nothing worth telling
    tapegrad.rrule(scale, one, one)
    assert seen == [(True, False), (False, True), None, None, None]


def test_grad_sweep_lets_summed_shares_go_before_the_next_pullback():
    """y gets two shares from y * y; once summed, neither share (nor the step's tangent tuple)
    may stay alive through exp's pullback: the peak is five arrays of x's size, not six."""
    import tracemalloc

    x = np.linspace(0.0, 1.0, 100_000)

    def f(x):
        y = np.exp(x)
        return np.sum(np.sin(y * y))

    grad(f, x)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        grad(f, x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 5.1 * x.nbytes


def test_stand_in_has_the_shape_and_dtype_and_no_memory(monkeypatch):
    x = np.ones((3, 4), dtype=np.float32)
    s = tapegrad.registry.stand_in(x)
    assert type(s) is np.ndarray and s.shape == (3, 4) and s.dtype == np.float32
    assert s.strides == (0, 0) and not s.flags.writeable
    assert np.isnan(s).all()  # a pullback that reads it gets NaN, not a plausible number
    assert tapegrad.registry.stand_in(2.5) == 2.5
    objects = np.array([1, "a"], dtype=object)
    assert tapegrad.registry.stand_in(objects) is objects
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", 1 << 14)
    assert tapegrad.registry.stand_in(x) is x  # 48 bytes: kept as it is
    big = np.ones(2048)
    assert tapegrad.registry.stand_in(big).strides == (0,)


def _identical(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _identical(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _identical(a[k], b[k])
    else:
        assert a == b or (a != a and b != b), (a, b)


_RNG = np.random.default_rng(3)
_M = _RNG.standard_normal((4, 3))

SWEEPS = [
    (lambda a, b: a / (a + b * b), (1.5, 0.7)),
    (lambda x: x * x + np.sin(x) * x, (0.4,)),  # shares of one derivative
    (lambda x: np.sum(np.stack([x, x * 2.0, np.sin(x)]) ** 2), (np.linspace(0.1, 1.0, 5),)),
    (lambda x, w: np.sum(np.tanh(x @ w) * w[0]), (_M, _RNG.standard_normal((3, 2)))),
    (lambda p: p["a"] * p["b"][0] + p["b"][1] ** 2, ({"a": 2.0, "b": (3.0, 4.0)},)),
    (lambda x: np.sum(np.linalg.eigh(x @ x.T + np.eye(4))[0] ** 2), (_M,)),
    (lambda x: np.sum(np.max(x, axis=0)) + np.sum(x[1:, ::2] * 3.0), (_M,)),
    (lambda x: np.sum(np.concatenate([x, x[:2]], axis=0) / np.sum(x * x)), (_M,)),
]


@pytest.mark.parametrize("f, args", SWEEPS)
def test_grad_gives_what_the_recorded_sweep_gives_bit_for_bit(f, args):
    """grad's unrecorded sweep (back_values) calls the pullbacks and sums the shares in the
    order of the recorded one (back), so the two agree exactly, value and type."""
    value, grads = grad(f, *args)
    y, back = pullback(f, *args)
    assert value == y
    _identical(grads, back())


def test_exception_in_f_carries_the_partial_tape():
    """An error raised by f keeps its type and message and carries the tape recorded so far."""
    def f(x):
        y = np.sin(x)
        raise ZeroDivisionError("custom")

    with pytest.raises(ZeroDivisionError, match="^custom$") as err:
        grad(f, 1.0)
    assert "rrule(sin, %2)" in str(err.value.tapegrad_tape)
    assert tapegrad.tracer.active_tapes() == []


def test_a_million_op_tape_without_recursion_errors():
    """A 100k-primitive chain is a tape of a million ops: traced, differentiated, summarized, pruned."""
    def chain(x, n):
        for _ in range(n):
            x = np.sin(x) * 0.999
        return x

    y, back = pullback(chain, 0.3, 100_000)
    (_, dx, dn) = back(1.0)
    tape = back.tape
    assert len(tape) > 1_000_000
    assert tape.summary().startswith(f"Tape of {len(tape)} ops: 600000 reads, 200000 primitives (rrule)")
    # d/dx of sin∘...: the product of 0.999 cos(x_k), checked against a plain loop
    expected, x = 1.0, 0.3
    for _ in range(100_000):
        expected *= 0.999 * np.cos(x)
        x = np.sin(x) * 0.999
    assert dx == pytest.approx(expected, rel=1e-9) and y == pytest.approx(x, rel=1e-12)
    assert len(tapegrad.prune(tape)) <= len(tape)


def test_threads_trace_independently():
    """Eight threads differentiating different functions at once get what one thread gets."""
    fns = [lambda x, k=k: np.sum(np.sin(x * (k + 1)) ** 2) + k * np.prod(x) for k in range(8)]
    xs = [np.linspace(0.1, 1.0, 5) + k for k in range(8)]
    expected = [gradient(f, x)[0] for f, x in zip(fns, xs)]
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        out = []
        for _ in range(20):
            out.append(gradient(fns[i], xs[i])[0])
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        for r in results[i]:
            np.testing.assert_array_equal(r, expected[i])


def test_repeated_grad_calls_are_identical(rng):
    """grad on the same objects twice gives identical results: nothing accumulates between calls."""
    params = {"w": rng.standard_normal(4), "b": 0.3}
    x = rng.standard_normal(4)
    f = lambda p, x: np.sum(np.tanh(p["w"] * x + p["b"]) ** 2)  # noqa: E731
    first = grad(f, params, x)
    for _ in range(3):
        again = grad(f, params, x)
        np.testing.assert_array_equal(again[1][1]["w"], first[1][1]["w"])
        assert again[1][1]["b"] == first[1][1]["b"]
    _, back = pullback(f, params, x)
    a, b = back(1.0), back(1.0)
    np.testing.assert_array_equal(a[1]["w"], b[1]["w"])


def test_nan_and_inf_propagate_as_ieee_says():
    """NaN inputs give NaN gradients; an infinite derivative stays infinite, not NaN."""
    with np.errstate(all="ignore"):
        _, (_, d) = grad(lambda x: np.sin(x) * 2, np.nan)
        assert np.isnan(d)
        _, (_, d) = grad(lambda x: np.sqrt(x), 0.0)
        assert d == np.inf
        _, (_, d) = grad(lambda x: np.exp(x) + x, 800.0)
        assert d == np.inf


def test_zero_share_never_turns_an_infinite_value_into_nan():
    """A branch no path reaches adds nothing (ZeroTangent), so an inf share stays inf."""
    def f(x, y):
        unused = y * 0.0  # recorded, but its derivative never flows back into x
        return np.exp(x) + unused * 0

    with np.errstate(over="ignore"):
        _, (_, dx, dy) = grad(f, 800.0, 1.0)
    assert dx == np.inf and dy == 0.0


def test_nothing_is_serialized_with_pickle():
    """No module of tapegrad uses pickle (tapes are never loaded from untrusted bytes)."""
    package = pathlib.Path(tapegrad.__file__).parent
    offenders = [p.name for p in package.rglob("*.py") if "import pickle" in p.read_text() or "pickle.load" in p.read_text()]
    assert offenders == []


def test_check_grad_catches_a_wrong_rule():
    """check_grad fails, with both numbers, when a rule is wrong: the checks can fail."""
    @primitive
    def cube(x):
        return x ** 3

    @rrule(cube)
    def cube_rrule(x):
        return cube(x), lambda dy: (tapegrad.NO_TANGENT, 2 * x ** 2 * dy)  # should be 3x²

    with pytest.raises(AssertionError, match="reverse mode gives .* central differences give"):
        check_grad(lambda x: cube(x), 1.3)


def test_traced_keyword_that_cannot_move_into_position_is_refused():
    """A traced value passed by a keyword-only parameter cannot get a gradient: the error says so."""
    @primitive
    def scaled(x, *, factor):
        return x * factor

    @rrule(scaled)
    def scaled_rrule(x, factor=1.0):
        return scaled(x, factor=factor), lambda dy: (tapegrad.NO_TANGENT, dy * factor)

    with pytest.raises(tapegrad.TapegradError, match=r"passes a traced value by keyword; pass it by position"):
        grad(lambda x, k: scaled(x, factor=k), 1.0, 2.0)

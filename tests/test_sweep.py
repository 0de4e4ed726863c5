"""tapegrad.sweep: the reverse sweep, recorded (`back`) or on values alone (`back_values`), alike bit for bit."""
import numpy as np
import pytest

from tapegrad import NO_TANGENT, grad, primitive, pullback, rrule, trace
from tapegrad.extend import Thunk
from tapegrad.gradcontext import GradContext
from tapegrad.tape import Constant, Input, Tape
from tapegrad.sweep import add_shares, back, set_or_add_deriv
from tapegrad.tracer import new_tracer
from tapegrad.numbering import numbering


def test_back_records_the_whole_backward_program():
    """For x·sin(x), back pushes the seed, each pullback call with its reads and one accum, and maps each value
    to its derivative's Variable."""
    _, tape = trace(lambda x: x * np.sin(x), 0.5, ctx=GradContext())
    derivs = back(tape, 1.0)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64                  # x\n"
        "  rr%3 = rrule(sin, %2)::tuple\n"
        "  %3 = getitem(rr%3, 0)::float64\n"
        "  pb%3 = getitem(rr%3, 1)::function sin_pullback\n"
        "  rr%4 = rrule(multiply, %2, %3)::tuple\n"
        "  %4 = getitem(rr%4, 0)::float64\n"
        "  pb%4 = getitem(rr%4, 1)::function multiply_pullback\n"
        "  const %5 = 1.0                   # seed\n"
        "  dx%4 = pb%4(%5)::tuple           # pullback for %4\n"
        "  %6 = getitem(dx%4, 1)::float64   # d%4/d%2\n"
        "  %7 = getitem(dx%4, 2)::float64   # d%4/d%3\n"
        "  dx%3 = pb%3(%7)::tuple           # pullback for %3\n"
        "  %8 = getitem(dx%3, 1)::float64   # d%3/d%2\n"
        "  %9 = accum(%6, %8)::float64      # accumulate d%2"
    )
    names = numbering(tape)  # the names the dump shows
    assert {names[v]: names[d] for v, d in derivs.items()} == {"%4": "%5", "%3": "%7", "%2": "%9"}
    assert tape[derivs[tape.inputs[1]]].val == np.sin(0.5) + 0.5 * np.cos(0.5)


def test_set_or_add_deriv_pushes_an_accum_only_for_a_second_share():
    """The first share of a derivative is stored without an op; the second is added by one pushed accum."""
    tape = Tape()
    x = tape.push(Input(2.0, note="x"))
    first, second = tape.push(Constant(3.0)), tape.push(Constant(4.0))
    derivs = {}
    set_or_add_deriv(tape, derivs, x, first)
    assert derivs == {x: first} and len(tape) == 3
    set_or_add_deriv(tape, derivs, x, second)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::float64               # x\n"
        "  const %2 = 3.0\n"
        "  const %3 = 4.0\n"
        "  %4 = accum(%2, %3)::float64   # accumulate d%1"
    )
    assert derivs == {x: tape[4].var} and tape[4].val == 7.0


def test_add_shares_adds_plain_values_and_leaves_the_rest_to_accum():
    """Two numbers or two arrays are added with +; a zero share or a tuple goes through accum."""
    assert add_shares(1.5, 2.0) == 3.5
    assert add_shares(np.ones(2), np.ones(2)).tolist() == [2.0, 2.0]
    x = np.ones(2)
    assert add_shares(x, NO_TANGENT) is x
    assert add_shares((1.0, [2.0]), (3.0, [4.0])) == (4.0, [6.0])


@primitive
def scaled(x, c):
    return x * c


def test_a_thunk_is_evaluated_only_for_an_argument_that_is_traced():
    """The sweep reads the tangent of traced arguments only: a Thunk for a constant never runs, in either sweep."""
    runs = []

    @rrule(scaled)
    def scaled_rrule(x, c):
        def scaled_pullback(dy):
            return NO_TANGENT, dy * c, Thunk(lambda: runs.append("dc") or dy * x)

        return x * c, scaled_pullback

    assert grad(scaled, 2.0, 3.0, wrt=0)[1][1:] == (3.0, NO_TANGENT) and runs == []
    _, back_ = pullback(scaled, 2.0, 3.0, wrt=0)
    assert back_(1.0)[1:] == (3.0, NO_TANGENT) and runs == []
    assert grad(scaled, 2.0, 3.0)[1][1:] == (3.0, 2.0) and runs == ["dc"]


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


def test_pullback_keeps_every_value_that_grad_frees():
    """grad drops values from its private tape as the sweep passes them; pullback's tape, which
    the user can read, keeps all of them after any number of sweeps."""
    y, back = pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    back(1.0)
    assert all(op.val is not None for op in back.tape)


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


def _slots(obj):
    """Each slot of `obj` (through its class's bases) that is set, with its value."""
    names = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


def test_grads_private_record_builds_what_the_one_constructors_build():
    """GradContext writes `Tape.push_call` and `new_tracer` out once for grad's hot path: the
    Call, its Variable and the Tracer it makes have every slot the constructors set, with the
    same values (but the pullback, which only the private record keeps on the op), so a slot
    added to one of them fails here rather than only on grad's path."""
    seen = {}

    class Watching(GradContext):
        def record(self, tape, fn, args, kwargs):
            out = super().record(tape, fn, args, kwargs)
            seen["tracer"], seen["tape"] = out, tape
            return out

    trace(lambda x: np.sin(x), 0.5, ctx=Watching(private=True))
    made, tape = seen["tracer"], seen["tape"]
    op = made._var._op
    var = tape.push_call(op.fn, op.args, op.kwargs, op.val, op.note)
    want_op, got_op = _slots(var._op), _slots(op)
    assert set(got_op) == set(want_op)
    assert {k: v for k, v in got_op.items() if k not in ("id", "var", "pullback")} == {
        k: v for k, v in want_op.items() if k not in ("id", "var", "pullback")}
    assert callable(got_op["pullback"]) and want_op["pullback"] is None
    assert set(_slots(op.var)) == set(_slots(var))
    want = new_tracer(tape, made._var, made._val)
    assert _slots(made) == _slots(want)


# --- what a recorded op holds (benchmarks/README.md, "Memory per recorded op") ---


def _private_tape(f, *args):
    """f's private tape as grad records it, before the sweep."""
    seen = {}

    class Keeping(GradContext):
        def record(self, tape, fn, args, kwargs):
            seen["tape"] = tape
            return super().record(tape, fn, args, kwargs)

    trace(f, *args, ctx=Keeping(private=True))
    return seen["tape"]


def test_grads_private_tape_keeps_each_pullback_on_its_op():
    """On grad's private tape each primitive is one op fn(*args) holding its own pullback;
    GradContext.pullbacks, a table keyed by Variable, stays empty, and an input holds none."""
    from types import MethodType

    tape = _private_tape(lambda x, c: np.sin(x) * c + 0.1 * x, 0.3, 2.0)
    calls = [op for op in tape if op.pullback is not None]
    assert [op.fn for op in calls] == [np.sin, np.multiply, np.multiply, np.add]
    assert all(op.pullback is None for op in tape.ops[:3])  # f, x, c
    assert tape.ctx.pullbacks == {}
    sin_op, by_c, by_const, _ = calls
    assert sin_op.args == (tape.ops[1].var,)
    # sin keeps x alone; a product of two traced numbers keeps the pair; a constant factor itself
    assert type(sin_op.pullback) is MethodType and sin_op.pullback.__self__ == 0.3
    assert by_c.pullback.__self__ == (np.sin(0.3), 2.0)
    assert by_const.pullback.__self__ == 0.1 and by_const.pullback.__name__ == "multiply_pullback"


def test_grads_sweep_drops_each_pullback_as_it_passes():
    """back_values empties each op's pullback slot (and value) before calling it, so what the
    pullback keeps goes as soon as it has run."""
    from tapegrad.sweep import back_values

    tape = _private_tape(lambda x: np.exp(np.sin(x)), 0.3)
    derivs = back_values(tape, 1.0)
    assert all(op.pullback is None for op in tape)
    assert derivs[tape.inputs[1]] == pytest.approx(np.cos(0.3) * np.exp(np.sin(0.3)))


@pytest.mark.parametrize("ops_per_step, step, bound", [
    (1, lambda x, c: np.sin(x), 330),
    (1, lambda x, c: x * c, 400),
    (1, lambda x, c: x * 0.999, 340),
    (1, lambda x, c: x / 3.0, 340),
    (4, lambda x, c: np.sin(x) * c + 0.1 * x, 330),
])
def test_a_long_scalar_chain_holds_few_bytes_per_recorded_op(ops_per_step, step, bound):
    """grad of a 20,000-op chain of floats peaks at a few hundred bytes per op (tracemalloc):
    the op, its Variable, its arguments' tuple, its value and a pullback bound to the values it
    needs: 304, 367, 311, 311 and 302 bytes here. (Before the pullbacks were kept on their ops
    and bound rather than closed over: 512 bytes for sin, 567 for a product, 479 for the mix.)"""
    import tracemalloc

    steps = 20_000 // ops_per_step

    def chain(x, c):
        for _ in range(steps):
            x = step(x, c)
        return x

    grad(chain, 0.3, 1.0001)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        grad(chain, 0.3, 1.0001)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak / 20_000 < bound

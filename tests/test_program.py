"""A tape is a program: guards on control flow, replay, Python source, and passes that keep values."""
import numpy as np
import pytest

import tapegrad
from tapegrad import GuardError, cse, grad, optimize, prune, pullback, simplify, to_source, trace


def power(x, n):
    r = 1
    for _ in range(n):
        r *= x
    return r


def test_loop_count_from_traced_int_records_one_body_per_trip():
    """pow(x, n) with both traced: 12 w.r.t. x at (2, 3), NoTangent for n, n bodies on the tape."""
    assert grad(power, 2.0, 3) == (8.0, (tapegrad.ZeroTangent(), 12.0, tapegrad.NoTangent()))
    _, tape = trace(power, 2.0, 5)
    assert sum(1 for op in tape if getattr(op, "fn", None) is np.multiply) == 5


def branchy(x):
    if x > 0:
        return x * 2.0
    return -x


def test_guards_print_with_the_users_line():
    """A branch on a traced value prints as a guard with the file and line of the condition."""
    _, tape = trace(branchy, 1.5)
    line = branchy.__code__.co_firstlineno + 1
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function branchy\n"
        "  inp %2::float64    # x\n"
        "  %3 = greater(%2, 0)::bool\n"
        f"  guard %3 == True   # test_program.py:{line}\n"
        "  %5 = multiply(%2, 2.0)::float64"
    )


def test_replay_checks_guards():
    """Replaying on inputs that take another branch raises GuardError naming the guard and its place."""
    _, tape = trace(branchy, 1.5)
    assert tape.replay(branchy, 4.0) == 8.0
    with pytest.raises(GuardError, match=r"guard %4 \(%3 == True\) recorded at test_program.py:\d+ "
                                         r"failed on replay: the condition is now False"):
        tape.replay(branchy, -1.0)


def test_min_and_int_take_concrete_values():
    """min() of traced values picks by value; int() of a float gives a guarded count."""
    def f(x, y):
        k = int(y)
        return min(x, y) * k

    assert grad(f, 2.0, 3.5) == (6.0, (tapegrad.ZeroTangent(), 3.0, tapegrad.NoTangent()))
    _, tape = trace(f, 2.0, 3.5)
    assert "guard int(%3) == 3" in str(tape)


def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2


WORKED = [
    (lambda a, b: a / (a + b * b), (2.0, 3.0), (1.5, 0.5)),
    (lambda x: np.sin(np.cos(x)), (0.9,), (0.1,)),
    (lambda x1, x2: x1 * x2 + np.sin(x1), (2.0, 3.0), (1.0, -1.0)),
    (haaland, (0.01, 1.0, 3000.0), (0.02, 2.0, 5000.0)),
    (lambda x: -np.log(x**2 + 2 * np.exp(x) + (x + 1) / x), (2.3,), (1.1,)),
    (lambda m, x, b: m * x + b, (2.0, 3.0, 1.0), (0.5, -2.0, 4.0)),
    (branchy, (1.5,), (2.5,)),
]


@pytest.mark.parametrize("f, args, new", WORKED)
def test_source_runs_and_matches_the_tape(f, args, new):
    """The generated source of forward and gradient tapes runs and gives the tape's values."""
    _, tape = trace(f, *args)
    fn = tapegrad.compile_tape(tape)
    assert fn(f, *new) == pytest.approx(tape.replay(f, *new), rel=1e-15)
    _, back = pullback(f, *args)
    back(1.0)
    outs = [back.derivatives[v] for v in back.tape.inputs[1:] if v in back.derivatives]
    gfn = tapegrad.compile_tape(back.tape, outputs=outs)
    np.testing.assert_allclose(gfn(f, *new), back.tape.replay(f, *new, outputs=outs), rtol=1e-15)


@pytest.mark.parametrize("f, args, new", WORKED)
@pytest.mark.parametrize("tape_pass", [simplify, prune, cse, optimize])
def test_passes_keep_values(f, args, new, tape_pass):
    """Every pass returns a tape with the same value and gradient, at the traced and at new inputs."""
    value, tape = trace(lambda *a: grad(f, *a), *args)
    after = tape_pass(tape)
    assert after is not tape
    for inputs in (args, new):
        expected = tape.replay(None, *inputs)
        got = after.replay(None, *inputs)
        assert got[0] == pytest.approx(expected[0], rel=1e-15)
        for e, g in zip(expected[1][1:], got[1][1:]):
            assert g == pytest.approx(e, rel=1e-15)


def test_simplify_and_prune_the_derivative_of_a_line():
    """d(m*x + b): simplify drops the multiplications by 1, prune what the result does not need."""
    _, tape = trace(lambda m, x, b: grad(lambda m, x, b: m * x + b, m, x, b), 2.0, 3.0, 1.0)
    assert to_source(tape, "before") == (
        "def before(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    v6 = v5 + b\n"
        "    v7 = 1.0 * x\n"
        "    v8 = 1.0 * m\n"
        "    v9 = build(result_structure, v6, ZERO, v7, v8, 1.0)\n"
        "    return v9"
    )
    assert to_source(prune(simplify(tape)), "after") == (
        "def after(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    v6 = v5 + b\n"
        "    v7 = build(result_structure, v6, ZERO, x, m, 1.0)\n"
        "    return v7"
    )


def test_zero_times_x_is_folded_only_when_finite_is_assumed():
    """0*x is nan for infinite x, so simplify keeps it unless assume_finite=True."""
    _, tape = trace(lambda x: 0.0 * x + 1.0, 2.0)
    assert len(simplify(tape)) == len(tape)
    folded = simplify(tape, assume_finite=True)
    assert "const %3 = 0.0" in str(folded)
    with np.errstate(invalid="ignore"):
        assert np.isnan(tape.replay(None, np.inf))  # why the fold is opt-in


def test_cse_shares_a_repeated_call():
    """sin(x) computed twice is computed once after cse."""
    _, tape = trace(lambda x: np.sin(x) * np.sin(x), 0.3)
    shared = cse(tape)
    assert [op.fn.__name__ for op in shared.ops[2:]] == ["sin", "multiply"]
    assert shared.replay(None, 0.7) == tape.replay(None, 0.7)


def test_prune_keeps_guards():
    """Dead-code elimination keeps guards (and what they check): replay still refuses other paths."""
    _, tape = trace(branchy, 1.0)
    pruned = prune(tape)
    with pytest.raises(GuardError):
        pruned.replay(None, -1.0)


def test_float_of_a_traced_count_is_guarded_and_of_a_traced_float_refused():
    """float(n) of an integer takes its value with a guard; float(x) of a float would drop the
    gradient, so it raises and says to use numpy."""
    def f(x, n):
        return x * float(n)

    assert grad(f, 2.0, 3) == (6.0, (tapegrad.ZeroTangent(), 3.0, tapegrad.NoTangent()))
    _, tape = trace(f, 2.0, 3)
    assert "guard int(%3) == 3" in str(tape)
    with pytest.raises(tapegrad.ConcreteValueError, match=r"float\(\) of the traced value %2::float64"):
        grad(lambda x: float(x) * 2, 1.0)


def test_source_deletes_a_large_array_after_its_last_use():
    """A name bound to an array of FREE_BYTES or more is deleted after its last use, so numpy
    frees it there; small values, inputs and the result keep their names."""
    x = np.linspace(0.0, 1.0, 10_000)  # 80 KB

    def f(x):
        a = np.exp(x)
        b = a * 2.0
        return np.sum(b) + np.sum(x * 0.5)

    _, tape = trace(f, x)
    src = to_source(tape, "f")
    assert src == (
        "def f(fn, x):\n"
        "    v3 = np.exp(x)\n"
        "    v4 = v3 * 2.0\n"
        "    del v3\n"
        "    v5 = np.sum(v4)\n"
        "    del v4\n"
        "    v6 = x * 0.5\n"
        "    v7 = np.sum(v6)\n"
        "    del v6\n"
        "    v8 = v5 + v7\n"
        "    return v8"
    )
    assert tapegrad.compile_tape(tape)(f, x) == pytest.approx(f(x), rel=1e-15)
    _, tape = trace(lambda x: np.exp(x) * 2.0, x)  # the result keeps its name
    assert "del v4" not in to_source(tape) and "del v3" in to_source(tape)


def test_a_broadcast_constant_stays_a_broadcast_in_the_source():
    """A constant that is one value broadcast (a seed spread by a pullback) is written as
    np.broadcast_to, not as a fresh array: numpy's ufuncs pass the memory order of their
    inputs on, and a matmul of a differently ordered array can round differently, so the
    compiled program would not equal the traced one bit for bit (found by the fuzzer)."""
    x = np.asfortranarray(np.arange(4.0).reshape(2, 2))
    c = np.broadcast_to(1.0, (2, 2))

    def f(x):
        return x + c

    _, tape = trace(f, x, wrt=0)  # c, which f captures, is a constant
    assert to_source(tape, "g") == "def g(fn, x):\n    v3 = x + np.broadcast_to(1.0, (2, 2))\n    return v3"
    assert tapegrad.compile_tape(tape)(f, x).strides == f(x).strides == (8, 16)

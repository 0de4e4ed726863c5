"""tapegrad.program.guards: control flow on traced values leaves guards that replay checks."""
import numpy as np
import pytest

import tapegrad
from tapegrad import GuardError, grad, trace


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
        f"  guard %3 == True   # test_guards.py:{line}\n"
        "  %5 = multiply(%2, 2.0)::float64"
    )


def test_replay_checks_guards():
    """Replaying on inputs that take another branch raises GuardError naming the guard and its place."""
    _, tape = trace(branchy, 1.5)
    assert tape.replay(branchy, 4.0) == 8.0
    with pytest.raises(GuardError, match=r"guard %4 \(%3 == True\) recorded at test_guards.py:\d+ "
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


def test_round_of_a_traced_float_is_an_integer_taken_with_a_guard():
    """round(t) is an int as for a float, with a guard that replay checks (derivative zero);
    round(t, n) stays traced as np.round."""
    def f(x):
        return x * round(x)

    value, tape = trace(f, 2.6)
    assert value == 2.6 * 3
    assert tapegrad.show.format_tape(tape).splitlines()[3].startswith("  guard round(%2) == 3   # test_guards.py:")
    assert tape.replay(f, 2.7) == 2.7 * 3
    with pytest.raises(tapegrad.GuardError, match=r"round\(\) is now 4, the tape recorded 3"):
        tape.replay(f, 3.7)
    assert tapegrad.grad(f, 2.6)[1][1] == 3.0
    assert tapegrad.compiled_grad(f)(3.7) == (3.7 * 4, (tapegrad.ZeroTangent(), 4.0))
    assert tapegrad.grad(lambda x: round(x * 3.0, 1) * x, 1.234)[1][1] == pytest.approx(3.7)


def inverse_or_zero(a):
    try:
        return np.sum(np.linalg.inv(a))
    except np.linalg.LinAlgError:
        return np.sum(a * 0.0)


def test_a_call_that_raised_while_traced_is_a_guard():
    """A primitive whose exception the function caught prints as a guard, and replay checks it still raises."""
    _, tape = trace(inverse_or_zero, np.zeros((2, 2)))
    line = inverse_or_zero.__code__.co_firstlineno + 2
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function inverse_or_zero\n"
        "  inp %2::float64[2,2]               # a\n"
        f"  guard inv(%2) raises LinAlgError   # test_guards.py:{line}\n"
        "  %4 = multiply(%2, 0.0)::float64[2,2]\n"
        "  %5 = sum(%4)::float64"
    )
    assert tape.replay(inverse_or_zero, np.ones((2, 2))) == 0.0  # singular too: the path holds
    with pytest.raises(GuardError, match=r"guard %3 \(inv\(%2\) raises LinAlgError\) recorded at "
                                         rf"test_guards.py:{line} failed on replay: inv\(\) no longer raises"):
        tape.replay(inverse_or_zero, np.eye(2))

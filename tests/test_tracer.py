"""tapegrad.tracer: a Tracer records every call on the innermost tape among its arguments, and
takes the value it holds where Python needs a concrete one (a branch, a count)."""
import numpy as np

from tapegrad import grad, trace
from tapegrad.tracer import active_tapes


def test_comparison_drives_control_flow():
    """if on a traced comparison takes the branch of the value at trace time."""
    def relu_ish(x):
        if x > 0:
            return x * 3.0
        return x * 0.5

    assert grad(relu_ish, 2.0)[1][1] == 3.0
    assert grad(relu_ish, -2.0)[1][1] == 0.5


def test_a_call_is_recorded_on_the_innermost_tape_among_its_arguments():
    """In a trace inside a trace, y * x (x of the outer one) goes on the inner tape, which the outer
    one records; the inner dump shows the types of the values the outer trace holds."""
    inner = []
    levels = []

    def outer(x):
        def f(y):
            levels.append([t.level for t in active_tapes()])
            return y * x + y

        value, tape = trace(f, 3.0)
        inner.append(tape)
        return value * 2.0

    value, tape = trace(outer, 2.0)
    assert value == 18.0 and levels == [[1, 2]] and active_tapes() == []
    assert str(inner[0]) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64   # f.x\n"
        "  inp %3::float64   # y\n"
        "  %4 = multiply(%3, %2)::float64\n"
        "  %5 = add(%4, %3)::float64"
    )
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function outer\n"
        "  inp %2::float64   # x\n"
        "  %3 = multiply(3.0, %2)::float64\n"
        "  %4 = add(%3, 3.0)::float64\n"
        "  %5 = multiply(%4, 2.0)::float64"
    )


def test_a_tuple_result_becomes_one_tracer_per_entry():
    """A call returning a named tuple gives the same named tuple of Tracers, each one a getitem op."""
    seen = []

    def f(x):
        result = np.linalg.slogdet(x)
        seen.append(type(result).__name__)
        return result.logabsdet * result.sign

    _, tape = trace(f, 2.0 * np.eye(2))
    assert seen == ["SlogdetResult"]
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64[2,2]   # x\n"
        "  %3 = slogdet(%2)::SlogdetResult\n"
        "  %4 = getitem(%3, 0)::float64\n"
        "  %5 = getitem(%3, 1)::float64\n"
        "  %6 = multiply(%5, %4)::float64"
    )


def test_tracer_prints_its_variable_type_and_value():
    """A Tracer shows which op it names, the type of its value and the value."""
    seen = []
    trace(lambda x: seen.append(repr(x)) or x, 1.5)
    assert seen == ["Tracer(%2::float64 = 1.5)"]

"""tapegrad.show.printing: tape dumps, plain, compact and as HTML, tested as whole exact strings."""
import numpy as np

import tapegrad
from tapegrad import pullback, trace
from tapegrad.show import format_tape


def f(a, b):
    return a / (a + b * b)


def test_plain_dump_of_forward_tape_with_arrays():
    """Shapes and dtypes print after each op; constants print as Python prints them."""
    def loss(w, x):
        return np.sum(np.tanh(x @ w) * 0.5)

    _, tape = trace(loss, np.ones(3), np.ones((2, 3), dtype=np.float32))
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function loss\n"
        "  inp %2::float64[3]     # w\n"
        "  inp %3::float32[2,3]   # x\n"
        "  %4 = matmul(%3, %2)::float64[2]\n"
        "  %5 = tanh(%4)::float64[2]\n"
        "  %6 = multiply(%5, 0.5)::float64[2]\n"
        "  %7 = sum(%6)::float64"
    )


def test_plain_dump_of_gradient_tape():
    """The plain format shows each rrule, its two reads, the seed, pullbacks and accumulations."""
    _, back = pullback(f, 2.0, 3.0)
    back(1.0)
    assert str(back.tape) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64                   # a\n"
        "  inp %3::float64                   # b\n"
        "  rr%4 = rrule(multiply, %3, %3)::tuple\n"
        "  %4 = getitem(rr%4, 0)::float64\n"
        "  pb%4 = getitem(rr%4, 1)::function multiply_pullback\n"
        "  rr%5 = rrule(add, %2, %4)::tuple\n"
        "  %5 = getitem(rr%5, 0)::float64\n"
        "  pb%5 = getitem(rr%5, 1)::function add_pullback\n"
        "  rr%6 = rrule(divide, %2, %5)::tuple\n"
        "  %6 = getitem(rr%6, 0)::float64\n"
        "  pb%6 = getitem(rr%6, 1)::function divide_pullback\n"
        "  const %7 = 1.0                    # seed\n"
        "  dx%6 = pb%6(%7)::tuple            # pullback for %6\n"
        "  %8 = getitem(dx%6, 1)::float64    # d%6/d%2\n"
        "  %9 = getitem(dx%6, 2)::float64    # d%6/d%5\n"
        "  dx%5 = pb%5(%9)::tuple            # pullback for %5\n"
        "  %10 = getitem(dx%5, 1)::float64   # d%5/d%2\n"
        "  %11 = getitem(dx%5, 2)::float64   # d%5/d%4\n"
        "  %12 = accum(%8, %10)::float64     # accumulate d%2\n"
        "  dx%4 = pb%4(%11)::tuple           # pullback for %4\n"
        "  %13 = getitem(dx%4, 1)::float64   # d%4/d%3\n"
        "  %14 = getitem(dx%4, 2)::float64   # d%4/d%3\n"
        "  %15 = accum(%13, %14)::float64    # accumulate d%3"
    )


def test_compact_dump_folds_rrules_and_pullback_reads():
    """The compact format folds each rrule with its reads, and each pullback call with its reads."""
    _, back = pullback(f, 2.0, 3.0)
    back(1.0)
    assert format_tape(back.tape, compact=True) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64                  # a\n"
        "  inp %3::float64                  # b\n"
        "  %4, pb%4 = rrule(multiply, %3, %3)::float64\n"
        "  %5, pb%5 = rrule(add, %2, %4)::float64\n"
        "  %6, pb%6 = rrule(divide, %2, %5)::float64\n"
        "  const %7 = 1.0                   # seed\n"
        "  _, %8, %9 = pb%6(%7)             # pullback for %6\n"
        "  _, %10, %11 = pb%5(%9)           # pullback for %5\n"
        "  %12 = accum(%8, %10)::float64    # accumulate d%2\n"
        "  _, %13, %14 = pb%4(%11)          # pullback for %4\n"
        "  %15 = accum(%13, %14)::float64   # accumulate d%3"
    )


def test_compact_dump_marks_unread_tangents_and_kwargs():
    """A tangent not read (a constant argument) prints as _, keyword arguments as name=value."""
    _, back = pullback(lambda x: np.sum(2.0 * x, axis=0), np.ones((2, 2)))
    back(np.ones(2))
    assert format_tape(back.tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64[2,2]   # x\n"
        "  %3, pb%3 = rrule(multiply, 2.0, %2)::float64[2,2]\n"
        "  %4, pb%4 = rrule(sum, %3, axis=0)::float64[2]\n"
        "  const %5 = [1., 1.]    # seed\n"
        "  _, %6 = pb%4(%5)       # pullback for %4\n"
        "  _, _, %7 = pb%3(%6)    # pullback for %3"
    )


def test_constant_result_is_shown():
    """A result that does not depend on the inputs is pushed as a constant with a note."""
    _, tape = trace(lambda x: 4.0, 1.0)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  const %3 = 4.0    # result does not depend on the inputs"
    )


def test_html_dump_has_the_text_lines():
    """A tape in a notebook is a table with the same lines as the text dump."""
    _, tape = tapegrad.trace(lambda a, b: a * b, 2.0, 3.0)
    html = tape._repr_html_()
    for line in str(tape).splitlines()[1:]:
        code = line.strip().split("   # ")[0].strip()
        assert f"<code>{code}</code>" in html

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
        "  inp %2::float64                  # a\n"
        "  inp %3::float64                  # b\n"
        "  %4 = rrule(multiply, %3, %3)::tuple\n"
        "  %5 = getitem(%4, 0)::float64\n"
        "  %6 = getitem(%4, 1)::function multiply_pullback\n"
        "  %7 = rrule(add, %2, %5)::tuple\n"
        "  %8 = getitem(%7, 0)::float64\n"
        "  %9 = getitem(%7, 1)::function add_pullback\n"
        "  %10 = rrule(divide, %2, %8)::tuple\n"
        "  %11 = getitem(%10, 0)::float64\n"
        "  %12 = getitem(%10, 1)::function divide_pullback\n"
        "  const %13 = 1.0                  # seed\n"
        "  %14 = %12(%13)::tuple            # pullback for %11\n"
        "  %15 = getitem(%14, 1)::float64   # d%11/d%2\n"
        "  %16 = getitem(%14, 2)::float64   # d%11/d%8\n"
        "  %17 = %9(%16)::tuple             # pullback for %8\n"
        "  %18 = getitem(%17, 1)::float64   # d%8/d%2\n"
        "  %19 = getitem(%17, 2)::float64   # d%8/d%5\n"
        "  %20 = accum(%15, %18)::float64   # accumulate d%2\n"
        "  %21 = %6(%19)::tuple             # pullback for %5\n"
        "  %22 = getitem(%21, 1)::float64   # d%5/d%3\n"
        "  %23 = getitem(%21, 2)::float64   # d%5/d%3\n"
        "  %24 = accum(%22, %23)::float64   # accumulate d%3"
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
        "  %5, %6 = [%4] = rrule(multiply, %3, %3)::float64\n"
        "  %8, %9 = [%7] = rrule(add, %2, %5)::float64\n"
        "  %11, %12 = [%10] = rrule(divide, %2, %8)::float64\n"
        "  const %13 = 1.0                  # seed\n"
        "  _, %15, %16 = [%14] = %12(%13)   # pullback for %11\n"
        "  _, %18, %19 = [%17] = %9(%16)    # pullback for %8\n"
        "  %20 = accum(%15, %18)::float64   # accumulate d%2\n"
        "  _, %22, %23 = [%21] = %6(%19)    # pullback for %5\n"
        "  %24 = accum(%22, %23)::float64   # accumulate d%3"
    )


def test_compact_dump_marks_unread_tangents_and_kwargs():
    """A tangent not read (a constant argument) prints as _, keyword arguments as name=value."""
    _, back = pullback(lambda x: np.sum(2.0 * x, axis=0), np.ones((2, 2)))
    back(np.ones(2))
    assert format_tape(back.tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64[2,2]          # x\n"
        "  %4, %5 = [%3] = rrule(multiply, 2.0, %2)::float64[2,2]\n"
        "  %7, %8 = [%6] = rrule(sum, %4, axis=0)::float64[2]\n"
        "  const %9 = [1., 1.]           # seed\n"
        "  _, %11 = [%10] = %8(%9)       # pullback for %7\n"
        "  _, _, %13 = [%12] = %5(%11)   # pullback for %4"
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

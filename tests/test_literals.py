"""tapegrad.literals: np.array and np.asarray of lists holding traced or dual values."""
import threading

import numpy as np
import pytest
import scipy.linalg

import tapegrad
from tapegrad import ConcreteValueError, check_grad, grad, trace
from tapegrad.literals import literals_allowed

LITERALS = [
    (lambda x: np.sum(np.array([x[0] * x[1], np.sin(x[2]), 2.0]) ** 2), np.array([1.0, 2.0, 3.0])),
    (lambda x: np.linalg.det(np.array([[x[0], x[1]], [x[2], 4.0]])), np.array([1.0, 2.0, 3.0])),
    (lambda x: np.sum(np.asarray([x, 2.0 * x, np.ones(2)], dtype=np.float64) @ np.arange(2.0)),
     np.array([0.5, -1.5])),
    (lambda x: np.prod(np.array((x[0], (x[1] + 1.0)))), np.array([2.0, 3.0])),
]


@pytest.mark.parametrize("f, x", LITERALS, ids=["flat", "nested", "asarray-dtype", "tuple"])
def test_array_literal_of_traced_values_differentiates_in_both_modes(f, x):
    """A list or tuple holding traced values, at any depth and beside constants, becomes one
    traced array: its gradient is right in reverse and forward mode, to second order."""
    check_grad(f, x, modes=("rev", "fwd"))
    assert grad(f, x)[0] == pytest.approx(f(x))
    tapegrad.hessian(f, x)  # forward over reverse runs through the literal too


def test_array_literal_is_recorded_as_a_stack():
    """np.array([a, 2b]) is recorded as the one primitive that builds it."""
    _, tape = trace(lambda a, b: np.array([a, 2.0 * b]), 1.0, 2.0)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # a\n"
        "  inp %3::float64   # b\n"
        "  %4 = multiply(2.0, %3)::float64\n"
        "  %5 = stack([%2, %4])::float64[2]"
    )


def test_numpys_functions_come_back_after_a_trace_also_when_it_raises():
    """np.array is numpy's own outside a trace, after a trace that raised too."""
    original = np.array
    grad(lambda x: np.sum(np.array([x, x])), 1.0)
    def broken(x):
        np.array([x, x])
        raise ZeroDivisionError("inside f")

    with pytest.raises(ZeroDivisionError, match="inside f"):
        grad(broken, 1.0)
    assert np.array is original and np.asarray is tapegrad.literals._ORIGINAL["asarray"]
    with literals_allowed(), literals_allowed():
        assert np.array is not original
    assert np.array is original


def test_plain_lists_and_other_threads_get_numpys_own_result():
    """Inside a trace, a list without traced values is numpy's own array; a thread that is not
    tracing meanwhile gets numpy's results too."""
    seen = []

    def other():
        seen.append(np.array([[1, 2], [3, 4]], dtype=np.int32))

    def f(x):
        plain = np.array([1.0, 2.0])
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        return np.sum(plain * x)

    value, (_, dx) = grad(f, 1.0)
    assert (value, dx) == (3.0, 3.0)
    assert seen[0].dtype == np.int32 and seen[0].tolist() == [[1, 2], [3, 4]]


def test_a_scipy_function_still_names_its_replacement():
    """scipy converting a list of traced values keeps numpy's refusal, so the error still names
    tapegrad's replacement instead of failing later inside scipy."""
    with pytest.raises(ConcreteValueError, match=r"scipy\.linalg\.expm cannot see traced values: use "
                                                 r"tapegrad\.scipy\.linalg\.expm instead"):
        grad(lambda a: np.sum(scipy.linalg.expm([[a, 0.0], [0.0, a]])), 1.0)

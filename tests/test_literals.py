"""tapegrad.literals: np.array and np.asarray of lists holding traced or dual values."""
import threading

import numpy as np
import pytest
import scipy.linalg

import tapegrad
from tapegrad import ConcreteValueError, check_grad, grad, trace
from tapegrad.literals import CONSTRUCTORS, NUMPY, REDUCTIONS, dual_literals

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


def test_outside_a_trace_numpys_namespace_holds_numpys_own():
    """import tapegrad leaves numpy's namespace as it was; a trace or a forward-mode call puts the
    stand-ins in place while it runs, and numpy's own are back when it ends, also after an
    error (a traced value kept after its trace stays refused by numpy's own np.array)."""
    names = ["array", "asarray", "asanyarray", "zeros", "ones_like", "full", "r_", "c_", "errstate",
             "fill_diagonal", "sum", "mean", "append", "dot"]
    own = {name: getattr(np, name) for name in names}
    assert own["array"] is NUMPY["array"] and own["zeros"] is CONSTRUCTORS["zeros"]
    assert own["mean"] is REDUCTIONS["mean"] and np.linalg.norm is np.linalg._linalg.norm
    inside = {}

    def f(x):
        inside.update((name, getattr(np, name)) for name in names)
        return x * 2.0

    grad(f, 1.0)
    assert all(inside[name] is not own[name] for name in names)
    assert all(getattr(np, name) is own[name] for name in names)
    tapegrad.jvp(f, (1.0,), (1.0,))
    with pytest.raises(ZeroDivisionError):
        grad(lambda x: 1 / 0, 1.0)
    assert all(getattr(np, name) is own[name] for name in names)
    kept = []
    grad(lambda x: kept.append(x) or x * 2.0, 1.0)
    with pytest.raises(ConcreteValueError):
        np.array([kept[0], 1.0])


def test_forward_mode_outside_jvp_takes_literals_inside_dual_literals():
    """Dual values make an array literal in jvp, and anywhere inside dual_literals()."""
    d = tapegrad.Dual(2.0, 1.0)
    with dual_literals():
        y = np.array([d, d * d])
    assert np.array(y.delta).tolist() == [1.0, 4.0]


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


def test_numpys_dict_is_never_rewritten_and_a_name_assigned_in_a_trace_holds():
    """While a trace runs, numpy's module reads the stand-ins through its class, its __dict__
    keeps numpy's own objects; both modules are plain modules again after it; ``np.x = v``
    assigned while tracing is numpy's name after the trace."""
    own = dict(np.__dict__)
    seen = {}

    def f(x):
        seen["zeros"] = np.zeros is CONSTRUCTORS["zeros"]
        seen["dict"] = all(np.__dict__[name] is fn for name, fn in {**CONSTRUCTORS, **REDUCTIONS}.items())
        seen["norm"] = np.linalg.norm is np.linalg.__dict__["norm"]
        np.tapegrad_test_name = 1.5
        return x * np.tapegrad_test_name

    try:
        assert tapegrad.gradient(f, 2.0) == (1.5,)
        assert seen == {"zeros": False, "dict": True, "norm": False}
        assert type(np) is type(threading) and type(np.linalg) is type(threading)
        assert np.tapegrad_test_name == 1.5
        assert all(np.__dict__[k] is v for k, v in own.items())
    finally:
        del np.tapegrad_test_name


def test_a_scipy_function_still_names_its_replacement():
    """scipy converting a list of traced values keeps numpy's refusal, so the error still names
    tapegrad's replacement instead of failing later inside scipy."""
    with pytest.raises(ConcreteValueError, match=r"scipy\.linalg\.expm cannot see traced values: use "
                                                 r"tapegrad\.scipy\.linalg\.expm instead"):
        grad(lambda a: np.sum(scipy.linalg.expm([[a, 0.0], [0.0, a]])), 1.0)

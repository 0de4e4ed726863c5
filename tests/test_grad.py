"""tapegrad.grad: the gradient context and the entry points grad, gradient and pullback."""
import gc
import weakref

import numpy as np
import pytest

import tapegrad
from tapegrad import GradContext, grad, pullback, trace


def test_grad_context_is_reusable_as_trace_context():
    """trace with a GradContext records rrules, the first half of grad."""
    _, tape = trace(lambda x: np.sin(x), 1.0, ctx=GradContext())
    assert tapegrad.format_tape(tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  %4, %5 = [%3] = rrule(sin, %2)::float64"
    )


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

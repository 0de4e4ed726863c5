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


def ratio(a, b):
    return a / (a + b * b)


def test_gradient_is_grad_without_the_value_and_df():
    """gradient(f, ...) gives the derivatives with respect to the arguments alone, as grad and pullback give them."""
    value, grads = tapegrad.grad(ratio, 2.0, 3.0)
    assert (value, grads) == (2 / 11, (tapegrad.ZERO, pytest.approx(9 / 121), pytest.approx(-12 / 121)))
    assert tapegrad.gradient(ratio, 2.0, 3.0) == grads[1:]
    assert repr(pullback(ratio, 2.0, 3.0)[1]) == "<pullback of 'ratio' at 0.18181818181818182>"


def test_a_seed_makes_the_gradient_a_vector_jacobian_product():
    """For an array result the seed weighs each entry: here d(x²)·seed = 2x·seed."""
    value, (_, dx) = grad(lambda x: x * x, np.array([1.0, 2.0]), seed=np.array([1.0, 10.0]))
    assert value.tolist() == [1.0, 4.0] and dx.tolist() == [2.0, 40.0]


def test_pullback_runs_again_with_another_seed_and_keeps_the_last_backward_program():
    """Each call of back replaces the backward part of the tape: the tape has the same length after each."""
    y, back = pullback(lambda x: np.sin(x) * 2.0, 0.5)
    assert back(1.0)[1] == 2.0 * np.cos(0.5)
    n = len(back.tape)
    assert back(3.0)[1] == 6.0 * np.cos(0.5) and len(back.tape) == n


def test_a_grad_context_subclass_that_records_its_own_way_is_asked_about_every_primitive():
    """A GradContext subclass overriding record_primitive sees every primitive (the rule path
    that skips the base context's decision is for GradContext itself)."""
    seen = []

    class Logging(tapegrad.GradContext):
        def record_primitive(self, tape, fn, *args, **kwargs):
            seen.append(fn.__name__)
            return super().record_primitive(tape, fn, *args, **kwargs)

    value, _ = tapegrad.trace(lambda x: np.sin(x) * x, 0.5, ctx=Logging())
    assert seen == ["sin", "multiply"] and value == np.sin(0.5) * 0.5

"""Contexts decide what is primitive; every failure names the op, the types, the place and the fix."""
import math

import numpy as np
import pytest
import scipy.special

import tapegrad
from tapegrad import (
    BaseContext,
    ConcreteValueError,
    EscapedTracerError,
    GradContext,
    NoRuleError,
    SeedError,
    grad,
    primitive,
    rrule,
    trace,
)


@primitive
def softplus(x):
    return np.log(1 + np.exp(x))


class KeepSoftplus(BaseContext):
    def is_primitive(self, fn, *args):
        return fn is softplus or super().is_primitive(fn, *args)


def test_marked_function_is_traced_through_by_default():
    """Without a context that keeps it, a primitive-marked function's body is recorded."""
    _, tape = trace(lambda x: softplus(x), 0.5)
    assert [tapegrad.errors.short_name(op.fn) for op in tape.ops[2:]] == ["exp", "add", "log"]


def test_custom_context_keeps_a_function_whole():
    """A context whose is_primitive says yes records the marked function as one op."""
    y, tape = trace(lambda x: softplus(x) * 2, 0.5, ctx=KeepSoftplus())
    assert y == pytest.approx(2 * np.log1p(np.exp(0.5)))
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  %3 = softplus(%2)::float64\n"
        "  %4 = multiply(%3, 2)::float64"
    )


def test_context_can_record_extra_information():
    """A context may record more than the default: here, a count of calls per function."""
    class Counting(BaseContext):
        def __init__(self):
            self.counts = {}

        def record_primitive(self, tape, fn, *args, **kwargs):
            self.counts[fn.__name__] = self.counts.get(fn.__name__, 0) + 1
            return super().record_primitive(tape, fn, *args, **kwargs)

    ctx = Counting()
    trace(lambda x: np.sin(x) * np.sin(x) + x, 1.0, ctx=ctx)
    assert ctx.counts == {"sin": 2, "multiply": 1, "add": 1}


def test_rule_for_a_marked_function_is_used_by_grad():
    """A marked function with an rrule is one primitive of the gradient tape, using that rule."""
    @primitive
    def square(x):
        return x * x

    calls = []

    @rrule(square)
    def square_rrule(x):
        calls.append(x)

        def square_pullback(dy):
            return tapegrad.NO_TANGENT, 2 * x * dy

        return square(x), square_pullback

    y, (_, dx) = grad(lambda x: square(x) + 1, 3.0)
    assert (y, dx, calls) == (10.0, 6.0, [3.0])


def test_no_rule_error_names_function_types_place_and_fix():
    """A primitive without a rule raises NoRuleError naming it, its argument types, the line and the fix."""
    def model(x):
        return np.sum(scipy.special.erfcx(x))

    with pytest.raises(NoRuleError) as err:
        grad(model, np.ones(4))
    msg = str(err.value)
    assert "no rrule for scipy.special.erfcx(%2::float64[4])" in msg
    assert "test_context_and_errors.py:" in msg
    assert "@tapegrad.rrule(scipy.special.erfcx)" in msg


def test_keyword_a_rule_does_not_take_is_named_with_the_fix():
    """numpy takes dtype= on a ufunc and the rule does not: the error says so instead of a bare
    TypeError from inside tapegrad; a TypeError the rule itself raises is passed on unchanged."""
    def model(x):
        return np.sum(np.multiply(x, 2.0, dtype=np.float32))

    with pytest.raises(NoRuleError) as err:
        grad(model, np.ones(3))
    msg = str(err.value)
    assert msg.startswith("numpy.multiply(%2::float64[3], 2.0, dtype=numpy.float32) at "
                          "test_context_and_errors.py:")
    assert msg.endswith("the rule of numpy.multiply does not take dtype=; leave it out (for "
                        "dtype=, convert the result with .astype), or register a rule that "
                        "takes it with @tapegrad.rrule(numpy.multiply)")
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        grad(lambda x: np.sum(np.sum(x, axis=1.5)), np.ones((2, 2)))


def test_non_scalar_result_needs_a_seed():
    """grad of an array result without a seed says to pass a seed of the result's shape."""
    with pytest.raises(SeedError, match=r"sin returned float64\[3\], not a scalar, so the gradient "
                                        r"taken at test_context_and_errors.py:\d+ needs a seed: pass seed="):
        grad(np.sin, np.ones(3))
    with pytest.raises(SeedError, match=r"seed given at test_context_and_errors.py:\d+ has shape \(2,\) "
                                        r"but sin returned float64\[3\]; pass a seed of the result's shape, \(3,\)"):
        grad(np.sin, np.ones(3), seed=np.ones(2))


def test_math_function_on_tracer_raises():
    """math.sin cannot see a traced value: the error says to use numpy instead."""
    with pytest.raises(ConcreteValueError, match=r"float\(\) of the traced value %2::float64 at "
                       r"test_context_and_errors.py:\d+ would drop its gradient.*np.sin"):
        grad(lambda x: math.sin(x), 1.0)


def test_array_of_tracers_raises_with_the_fix():
    """np.array([...]) of traced values would lose them; the error says to use np.stack."""
    with pytest.raises(ConcreteValueError, match="np.stack"):
        grad(lambda x: np.sum(np.array([x, 2 * x])), 1.0)


def test_escaped_tracer_is_caught():
    """A Tracer kept after its trace ended raises EscapedTracerError when used again."""
    kept = []

    def f(x):
        kept.append(x)
        return x * 2

    grad(f, 1.0)
    with pytest.raises(EscapedTracerError, match=r"%2::float64 was used at test_context_and_errors"):
        kept[0] + 1


def test_exception_inside_f_propagates_unchanged_and_leaves_no_state():
    """An error raised by f reaches the caller as it was, and no trace stays active."""
    def f(x):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        grad(f, 1.0)
    assert tapegrad.tracer.active_tapes() == []


def test_grad_context_is_reusable_as_trace_context():
    """trace with a GradContext records rrules, the first half of grad."""
    _, tape = trace(lambda x: np.sin(x), 1.0, ctx=GradContext())
    assert tapegrad.format_tape(tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  %4, %5 = [%3] = rrule(sin, %2)::float64"
    )

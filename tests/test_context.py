"""tapegrad.context: contexts decide what is primitive and how it is recorded; `trace` runs a function under one."""
import numpy as np
import pytest

import tapegrad
from tapegrad import BaseContext, NoTangent, ZeroTangent, grad, gradient, primitive, rrule, trace


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


def test_exception_inside_f_propagates_unchanged_and_leaves_no_state():
    """An error raised by f reaches the caller as it was, and no trace stays active."""
    def f(x):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        grad(f, 1.0)
    assert tapegrad.tracer.active_tapes() == []


def test_traced_keyword_that_cannot_move_into_position_is_refused():
    """A traced value passed by a keyword-only parameter cannot get a gradient: the error says so."""
    @primitive
    def scaled(x, *, factor):
        return x * factor

    @rrule(scaled)
    def scaled_rrule(x, factor=1.0):
        return scaled(x, factor=factor), lambda dy: (tapegrad.NO_TANGENT, dy * factor)

    with pytest.raises(tapegrad.TapegradError, match=r"passes a traced value by keyword; pass it by position"):
        grad(lambda x, k: scaled(x, factor=k), 1.0, 2.0)


def test_keyword_arguments_and_wrt():
    """Keyword arguments reach f undifferentiated unless wrt names them; wrt also picks positions."""
    def f(x, y, scale=1.0):
        return scale * x * y

    assert grad(f, 2.0, 3.0, scale=2.0) == (12.0, (ZeroTangent(), 6.0, 4.0))
    assert grad(f, 2.0, 3.0, scale=2.0, wrt=(1, "scale")) == (
        12.0, (ZeroTangent(), NoTangent(), 4.0, {"scale": 6.0}))
    assert gradient(f, 2.0, 3.0, wrt="x") == (3.0, NoTangent())

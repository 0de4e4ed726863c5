"""tapegrad.context: contexts decide what is primitive and how it is recorded; `trace` runs a function under one."""
import re

import numpy as np
import pytest

import tapegrad
from tapegrad import NoTangent, ZeroTangent, grad, gradient, primitive, rrule, trace
from tapegrad.context import BaseContext
from tapegrad.context import describe_call, lift, positional
from tapegrad.tracing import param_names


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


def _scaled(signature=None):
    """A primitive ``scaled(x, *, factor)`` with a rule (its signature replaced by `signature`)."""
    @primitive
    def scaled(x, *, factor):
        return x * factor

    if signature is not None:
        scaled.__signature__ = signature

    @rrule(scaled)
    def scaled_rrule(x, factor=1.0):
        return scaled(x, factor=factor), lambda dy: (tapegrad.NO_TANGENT, dy * factor)
    return scaled


def test_traced_keyword_that_cannot_move_into_position_is_refused():
    """A traced value passed by a keyword-only parameter cannot get a gradient: the error says so."""
    scaled = _scaled()
    # (the message said "pass it by position", which a keyword-only parameter does not allow)
    with pytest.raises(tapegrad.TapegradError, match=r"passes a traced value as factor=, which .*scaled takes "
                                                     r"only by keyword, so its gradient cannot be returned; "
                                                     r"compute the part it fills from a plain value"):
        grad(lambda x, k: scaled(x, factor=k), 1.0, 2.0)


def test_traced_keyword_of_a_signature_that_does_not_take_it_is_refused():
    """A signature the call cannot be bound to (here one declared without `factor`): the traced
    keyword is refused asking for it by position."""
    import inspect

    scaled = _scaled(inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)]))
    with pytest.raises(tapegrad.TapegradError, match=r"^.*scaled\(%\d+::float64, factor=%\d+::float64\) at "
                                                     r"test_context.py:\d+ passes a traced value by keyword; "
                                                     r"pass it by position"):
        grad(lambda x, k: scaled(x, factor=k), 1.0, 2.0)


def test_numpy_pad_with_a_traced_constant_says_how_to_write_it():
    """np.pad takes constant_values= only by keyword (its **kwargs): a traced fill value is
    refused with the rewrite that differentiates it, and the rewrite's gradient is right."""
    x = np.array([0.7, -0.4])
    with pytest.raises(tapegrad.TapegradError, match=re.escape(
            "passes a traced value as constant_values=, which numpy.pad takes only by keyword, so its "
            "gradient cannot be returned; compute the part it fills from a plain value and add the traced "
            "part yourself: np.pad(x, w) + c * np.pad(np.zeros_like(x), w, constant_values=1.0) pads x "
            "with a traced c")):
        grad(lambda x: np.sum(np.pad(x, (0, 2), constant_values=x[0]) ** 2), x)

    def padded(x):
        return np.sum((np.pad(x, (0, 2)) + x[0] * np.pad(np.zeros_like(x), (0, 2), constant_values=1.0)) ** 2)
    np.testing.assert_allclose(grad(padded, x)[1][1], [2 * x[0] + 4 * x[0], 2 * x[1]])
    tapegrad.check_grad(padded, x, order=2)


def test_keyword_arguments_and_wrt():
    """Keyword arguments reach f undifferentiated unless wrt names them; wrt also picks positions."""
    def f(x, y, scale=1.0):
        return scale * x * y

    assert grad(f, 2.0, 3.0, scale=2.0) == (12.0, (ZeroTangent(), 6.0, 4.0))
    assert grad(f, 2.0, 3.0, scale=2.0, wrt=(1, "scale")) == (
        12.0, (ZeroTangent(), NoTangent(), 4.0, {"scale": 6.0}))
    assert gradient(f, 2.0, 3.0, wrt="x") == (3.0, NoTangent())


class NoSin(BaseContext):
    """Does not take np.sin as a primitive, though it has no body to trace through."""

    def is_primitive(self, fn, *args):
        return fn is not np.sin and super().is_primitive(fn, *args)


def test_trace_records_under_the_given_context():
    """trace keeps its context on the tape and asks it about every call; a refused ufunc is named with the fix."""
    ctx = KeepSoftplus()
    _, tape = trace(lambda x: softplus(x), 0.5, ctx=ctx)
    assert tape.ctx is ctx and [op.fn for op in tape.ops[2:]] == [softplus]
    with pytest.raises(tapegrad.NoRuleError, match=r"^NoSin does not treat numpy\.sin\(%2::float64\) at "
                                                   r"test_context\.py:\d+ as a primitive and has no body to "
                                                   r"trace through; make is_primitive return True for it$"):
        trace(lambda x: np.sin(x) * 2, 1.0, ctx=NoSin())


class NoSum(BaseContext):
    """Does not take np.sum as a primitive: numpy's function has an implementation, not a body to trace."""

    def is_primitive(self, fn, *args):
        return fn is not np.sum and super().is_primitive(fn, *args)


def test_a_refused_numpy_function_is_named_with_the_fix_not_traced_into():
    """Only a primitive-marked function's body is traced through; numpy's np.sum (whose
    implementation calls x.sum, which comes back to np.sum) is refused with the fix."""
    with pytest.raises(tapegrad.NoRuleError, match=r"^NoSum does not treat numpy\.sum\(%2::float64\[2\]\) at "
                                                   r"test_context\.py:\d+ as a primitive and has no body to "
                                                   r"trace through; make is_primitive return True for it$"):
        trace(lambda x: np.sum(x), np.ones(2), ctx=NoSum())


def seen_in_trace(body, *args):
    """What `body` returns when run on the Tracers of a trace of its arguments, and the Tracers themselves."""
    seen = []

    def f(*tracers):
        seen.extend([body(*tracers), tracers])
        return tracers[0]

    trace(f, *args)
    return seen


def scale(x, shift=0.0, factor=1.0):
    return x * factor + shift


def test_positional_moves_a_traced_keyword_into_position():
    """A traced keyword is bound to its parameter's position, the defaults before it filled in."""
    (args, kwargs), (x, k) = seen_in_trace(lambda x, k: positional(scale, (x,), {"factor": k}), 2.0, 3.0)
    assert len(args) == 3 and args[0] is x and args[1] == 0.0 and args[2] is k and kwargs == {}


def test_positional_leaves_an_untraced_keyword_only_argument_alone():
    """A plain value for a keyword-only parameter stays a keyword."""
    def power(x, *, n):
        return x ** n

    (args, kwargs), (x,) = seen_in_trace(lambda x: positional(power, (x,), {"n": 2}), 2.0)
    assert len(args) == 1 and args[0] is x and kwargs == {"n": 2}


@primitive
def shifted(x, shift=0.0):
    return x + shift


@rrule(shifted)
def shifted_rrule(x, shift=0.0):
    return shifted(x, shift), lambda dy: (tapegrad.NO_TANGENT, dy, dy)


def test_a_traced_keyword_gets_its_gradient_once_in_position():
    """shifted(x, shift=k) with k traced records the call with k in position, so k gets its derivative."""
    assert grad(lambda x, k: shifted(x, shift=k) * k, 2.0, 3.0) == (15.0, (ZeroTangent(), 3.0, 8.0))


def test_lift_splits_values_from_variables_inside_lists():
    """A Tracer of the tape gives its value and its Variable, also inside a list; anything else is itself twice."""
    (vals, targs), (x, k) = seen_in_trace(lambda x, k: lift((x, [k, 2.0], "s"), x._tape), 2.0, np.ones(2))
    assert repr(targs) == "(%2, [%3, 2.0], 's')"
    assert vals[0] == 2.0 and vals[1][0] is k._val and vals[1][1:] == [2.0] and vals[2] == "s"


def test_describe_call_shows_a_call_as_errors_do():
    """Traced arguments print as Variable::type, lists as lists, types by their qualified name, the rest by repr."""
    (text, _) = seen_in_trace(lambda x, k: describe_call(np.sinc, (x, [k, 2]), {"dtype": np.float32}),
                              2.0, np.ones(3))
    assert text == "numpy.sinc(%2::float64, [%3::float64[3], 2], dtype=numpy.float32)"


def test_an_argument_nested_deeper_than_the_recursion_limit_is_refused_clearly():
    """A list nested thousands of levels deep gives an error naming the argument and the fix,
    not a RecursionError from inside tapegrad; moderate nesting is walked as usual."""
    deep = 1.0
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(TypeError, match=r"^the argument d given at test_context\.py:\d+ is nested too "
                                        r"deeply to walk .*; pass its numbers as an array, or nest "
                                        r"them less$"):
        grad(lambda d: 2.0, deep)
    shallow = 1.5
    for _ in range(50):
        shallow = [shallow]

    def innermost(d):
        while isinstance(d, list):
            d = d[0]
        return d * 2.0

    value, (_, g) = grad(innermost, shallow)
    while isinstance(g, list):
        g = g[0]
    assert (value, g) == (3.0, 2.0)


def test_plain_arguments_trace_as_the_general_walk_does():
    """Floats, float arrays and lists or tuples of them (traced without `flatten`'s walk) get the
    Inputs, paths, sharing and gradients of the general walk, also where they share an array
    with an argument the general walk takes (a dict), before or after them."""
    W, b, w = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -1.0]), np.array([2.0, 3.0])
    pair = (W, b)
    params = [pair, pair, [w, 1.5]]

    def f(p, q, r):
        return sum(np.sum(Wi @ bi) for Wi, bi in p[:2]) * p[2][1] + np.sum(p[2][0] * q * r["v"])

    for args in [(params, w, {"v": w}), ([(W, b), (W, b), [w, 1.5]], w, {"v": w})]:
        _, tape = trace(f, *args)
        assert [op.note for op in tape.ops if type(op) is tapegrad.tape.Input] == [
            "", "p[0][0]", "p[0][1]", "p[2][0]", "p[2][1]"]
    value, (_, dp, dq, dr) = grad(f, params, w, {"v": w})
    assert type(dp) is list and type(dp[0]) is tuple and dp[0] is dp[1] and dp[2][0] is dq is dr["v"]
    assert type(dp[2][1]) is float
    np.testing.assert_allclose(dq, 3 * w * w)
    _, (_, dr, dq) = grad(lambda r, q: np.sum(r["v"] * q[0]), {"v": w}, [w, w])
    assert dr["v"] is dq[0] is dq[1]
    np.testing.assert_allclose(dq[0], 2 * w)
    # nested deeper, holding an int, empty: the general walk, as before
    for odd, paths in [([[[[w]]]], ["p[0][0][0][0]"]), ([w, 1], ["p[0]", "p[1]"]), ([], []), ((), [])]:
        _, tape = trace(lambda p: 1.0, odd)
        assert [op.note for op in tape.ops if type(op) is tapegrad.tape.Input][1:] == paths


def test_param_names_follow_the_count_and_the_code_object():
    """`param_names` keeps a plain function's names by its code object: another count of
    arguments, or another code object, is read again, and the list given may be changed."""
    def f(a, *rest):
        pass

    assert param_names(f, 3) == ["a", "rest[0]", "rest[1]"]
    assert param_names(f, 1) == ["a"]
    param_names(f, 1).append("x")
    assert param_names(f, 1) == ["a"]
    f.__code__ = (lambda b, c: None).__code__
    assert param_names(f, 3) == ["b", "c", "args[2]"]

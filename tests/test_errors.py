"""tapegrad.errors: every failure names the op, the argument types, the place in the user's code and the fix."""
import math
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.special

import tapegrad
from tapegrad import ConcreteValueError, EscapedTracerError, NoRuleError, SeedError, grad
from tapegrad.errors import qualified_name, type_str


def test_no_rule_error_names_function_types_place_and_fix():
    """A primitive without a rule raises NoRuleError naming it, its argument types, the line and the fix."""
    def model(x):
        return np.sum(scipy.special.zetac(x))

    with pytest.raises(NoRuleError) as err:
        grad(model, np.ones(4))
    msg = str(err.value)
    assert "no rrule for scipy.special.zetac(%2::float64[4])" in msg
    assert "test_errors.py:" in msg
    assert "@tapegrad.rrule(scipy.special.zetac)" in msg


def test_keyword_a_rule_does_not_take_is_named_with_the_fix():
    """numpy takes dtype= on a ufunc and the rule does not: the error says so instead of a bare
    TypeError from inside tapegrad; a TypeError the rule itself raises is passed on unchanged."""
    def model(x):
        return np.sum(np.multiply(x, 2.0, dtype=np.float32))

    with pytest.raises(NoRuleError) as err:
        grad(model, np.ones(3))
    msg = str(err.value)
    assert msg.startswith("numpy.multiply(%2::float64[3], 2.0, dtype=numpy.float32) at "
                          "test_errors.py:")
    assert msg.endswith("the rule of numpy.multiply does not take dtype=; leave it out (for "
                        "dtype=, convert the result with .astype), or register a rule that "
                        "takes it with @tapegrad.rrule(numpy.multiply)")
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        grad(lambda x: np.sum(np.sum(x, axis=1.5)), np.ones((2, 2)))


def test_a_type_error_inside_the_rule_of_an_operator_is_passed_on_unchanged(monkeypatch):
    """An operator's call has no keyword arguments at all; a TypeError its rule raises still
    comes through as it was raised."""
    def broken_matmul_rrule(a, b):
        raise TypeError("raised inside the rule")

    monkeypatch.setitem(tapegrad.registry.RULES, np.matmul, broken_matmul_rrule)
    with pytest.raises(TypeError, match="^raised inside the rule$"):
        grad(lambda x: np.sum(x @ x), np.ones((2, 2)))


def test_non_scalar_result_needs_a_seed():
    """grad of an array result without a seed says to pass a seed of the result's shape."""
    with pytest.raises(SeedError, match=r"sin returned float64\[3\], not a scalar, so the gradient "
                                        r"taken at test_errors.py:\d+ needs a seed: pass seed="):
        grad(np.sin, np.ones(3))
    with pytest.raises(SeedError, match=r"seed given at test_errors.py:\d+ has shape \(2,\) "
                                        r"but sin returned float64\[3\]; pass a seed of the result's shape, \(3,\)"):
        grad(np.sin, np.ones(3), seed=np.ones(2))


def test_math_function_on_tracer_raises():
    """math.sin cannot see a traced value: the error says to use numpy instead."""
    with pytest.raises(ConcreteValueError, match=r"float\(\) of the traced value %2::float64 at "
                       r"test_errors.py:\d+ would drop its gradient.*np.sin"):
        grad(lambda x: math.sin(x), 1.0)


@pytest.mark.parametrize("what, f", [("item", lambda x: x[0].item() * x[1]),
                                     ("tolist", lambda x: x.tolist()[0] * x[1])])
def test_item_and_tolist_are_refused_alike_in_both_modes(what, f):
    """x.item() and x.tolist() would make plain numbers: refused, naming the call, the line and
    the way to branch, by a traced value and by a dual value alike (a dual value raised
    AttributeError: 'Dual' object has no attribute 'item')."""
    line = f.__code__.co_firstlineno
    x = np.array([0.5, 2.0])
    branch = re.escape("; to branch on its value, compare it as it is (if x[0] > 0:)")
    with pytest.raises(ConcreteValueError, match=rf"^{what}\(\) of the traced value %\d+::float64(\[2\])? at "
                                                 rf"test_errors.py:{line} would drop its gradient.*{branch}$"):
        grad(f, x)
    with pytest.raises(ConcreteValueError, match=rf"^{what}\(\) of a dual value at test_errors.py:{line} "
                                                 rf"would drop its variation.*{branch}$"):
        tapegrad.jvp(f, (x,), (np.ones(2),))


def test_plain_array_of_a_traced_value_raises_with_the_fix():
    """A numpy conversion that makes a plain array of a traced value (np.ascontiguousarray, which
    numpy does not dispatch) would lose it; the error says what to do instead. (np.array(x) and
    np.asarray(x) are the traced value's copy and itself.)"""
    with pytest.raises(ConcreteValueError, match=r"Use the traced value as it is \(x\.copy\(\) for a "
                                                 r"copy\), build arrays from traced values with "
                                                 r"np\.array\(\[\.\.\.\]\), np\.stack"):
        grad(lambda x: np.sum(np.ascontiguousarray(x)), np.ones(2))


def test_escaped_tracer_is_caught():
    """A Tracer kept after its trace ended raises EscapedTracerError when used again."""
    kept = []

    def f(x):
        kept.append(x)
        return x * 2

    grad(f, 1.0)
    with pytest.raises(EscapedTracerError, match=r"%2::float64 was used at test_errors"):
        kept[0] + 1


def test_escaped_tracer_is_caught_on_the_recording_shortcuts():
    """The calls that go to a tape's context without `record_call` (a plain array beside a
    Tracer, a reduction with plain options) still refuse a Tracer whose trace has ended."""
    kept = []

    def f(x):
        kept.append(x)
        return np.sum(x * 2)

    grad(f, np.ones((2, 3)))
    old = kept[0]
    for use in (lambda t: np.ones((2, 3)) * old, lambda t: np.ones(2) @ old,
                lambda t: np.sum(old), lambda t: np.max(old, axis=1, keepdims=True)):
        with pytest.raises(EscapedTracerError, match=r"%2::float64\[2,3\] was used at test_errors"):
            grad(lambda t: np.sum(t) + use(t), np.ones(2))


def test_every_error_is_a_tapegrad_error_and_the_builtin_a_caller_would_catch():
    """Each error class derives from TapegradError and from the builtin exception its kind of failure raises."""
    bases = {cls.__name__: [b.__name__ for b in cls.__bases__] for cls in (
        tapegrad.NoRuleError, tapegrad.RuleError, tapegrad.SeedError, tapegrad.EscapedTracerError,
        tapegrad.StaleViewError, tapegrad.ConcreteValueError, tapegrad.GuardError,
        tapegrad.ComplexValueError, tapegrad.StaleInputError)}
    assert bases == {
        "NoRuleError": ["TapegradError", "NotImplementedError"],
        "RuleError": ["TapegradError", "ValueError"],
        "SeedError": ["TapegradError", "ValueError"],
        "EscapedTracerError": ["TapegradError", "RuntimeError"],
        "StaleViewError": ["TapegradError", "RuntimeError"],
        "ConcreteValueError": ["TapegradError", "TypeError"],
        "GuardError": ["TapegradError", "RuntimeError"],
        "ComplexValueError": ["TapegradError", "NotImplementedError"],
        "StaleInputError": ["TapegradError", "RuntimeError"],
    }
    assert tapegrad.TapegradError.__bases__ == (Exception,)


def halve(x):
    return x / 2


def test_qualified_name_is_a_name_the_user_can_import():
    """numpy and scipy functions are named by their public module, other functions by module and qualified name."""
    assert [qualified_name(fn) for fn in (np.sin, np.linalg.solve, scipy.special.erfcx, halve, len)] == [
        "numpy.sin", "numpy.linalg.solve", "scipy.special.erfcx", f"{__name__}.halve", "len"]


def test_type_str_prints_a_value_type_as_dumps_do():
    """Numbers as numpy's dtypes, arrays as dtype[shape], functions by kind and name, anything else by its type."""
    values = (1.5, 3, True, 1j, np.ones((2, 3), np.float32), np.ones(()), np.float32(1), np.sin, halve, (1,), "a")
    assert [type_str(v) for v in values] == [
        "float64", "int64", "bool", "complex128", "float32[2,3]", "float64[]", "float32", "ufunc sin",
        "function halve", "tuple", "str"]


NO_DERIVATIVE = [
    (lambda x: None, "NoneType"),
    (lambda x: "a", "str"),
    (lambda x: {1.0}, "set"),  # (a traced value cannot be in one: it has no hash)
    (lambda x: (x, "label"), "a tuple holding str"),
    (lambda x: x > 0, "bool"),
]


@pytest.mark.parametrize("f, what", NO_DERIVATIVE, ids=[w for _, w in NO_DERIVATIVE])
def test_a_result_without_a_derivative_is_refused_naming_what_came_back(f, what):
    """grad and pullback of a function returning None, a string, a set (a traced value must
    not escape inside it) or a structure holding one raise, naming it, never a zero gradient."""
    for entry in (grad, tapegrad.pullback):
        with pytest.raises(TypeError, match=rf"^<lambda> returned {what} at test_errors\.py:\d+, which "
                                            r"has no derivative; return a number, an array of "
                                            r"numbers, or a tuple, list or dict of them$"):
            entry(f, 1.0)


def test_wrt_naming_no_argument_is_refused_with_the_arguments_there_are():
    """wrt= a position or a name the call does not have raises, listing the ones it has."""
    for wrt in (3, "y", (0, "z")):
        with pytest.raises(TypeError, match=r"^wrt=.* at test_errors\.py:\d+ names no argument of this "
                                            r"call, which has positions 0\.\.1 \(x, c\); name one of "
                                            r"them, or \"f\" for the values the function captures$"):
            grad(lambda x, c: x * c, 1.0, 2.0, wrt=wrt)
    assert grad(lambda x, c: x * c, 1.0, 2.0, wrt="c")[1] == (tapegrad.ZeroTangent(), tapegrad.NoTangent(), 1.0)


@pytest.mark.parametrize("seed, message", [
    ("1", r"is str; a seed is a number, or an array of numbers of the result's shape \(<lambda> "
          r"returned float64\[2\]\)$"),
    ([1.0, 1.0], r"is list; .*: pass np\.asarray\(seed\)$"),
    (np.ones(2) * 1j, r"is complex, but <lambda> returned a real float64\[2\]; pass a real seed$"),
])
def test_a_seed_of_the_wrong_type_is_refused(seed, message):
    """A seed that is a string, a list or complex for a real result raises SeedError saying what a seed is."""
    with pytest.raises(SeedError, match=r"^the seed given at test_errors\.py:\d+ " + message):
        grad(lambda x: x * 2.0, np.ones(2), seed=seed)


def test_a_function_argument_in_the_wrong_place_is_named():
    """grad(3.0, 1.0) says that the function comes first, instead of failing to call a Tracer."""
    with pytest.raises(TypeError, match=r"^the function to trace comes first, but a float was given at "
                                        r"test_errors\.py:\d+: call it as trace\(f, \*args\) / grad\(f, \*args\)$"):
        grad(3.0, 1.0)


# what `from numpy import zeros, ones as fill_ones` binds when a module is imported (before any
# trace): numpy's own functions, not the names tapegrad sees inside a trace
zeros = tapegrad.literals.CONSTRUCTORS["zeros"]
fill_ones = tapegrad.literals.CONSTRUCTORS["ones"]


def test_a_write_into_an_array_of_a_name_bound_from_numpy_says_call_np_zeros():
    """zeros(3) through `from numpy import zeros` makes a plain array: a traced value written into
    it is refused naming the name, how it was bound and np.zeros (the message advised np.zeros
    & co. alone, which the user thought they had called)."""
    def f(x):
        z = zeros(3)
        z[0] = x
        return np.sum(z)

    def g(x):
        z = fill_ones((2, 2))
        z[:] = x * 2.0
        return np.sum(z)

    with pytest.raises(ConcreteValueError, match=r"numpy could not store a traced value into a plain array at "
                       r"test_errors\.py:\d+: zeros in f is numpy's own, bound by name when the module was "
                       r"imported \(from numpy import zeros\): the array it makes is plain, and a traced value "
                       r"cannot be written into a plain ndarray\. Call np\.zeros through numpy's namespace \(import numpy as np\)"):
        grad(f, 1.5)
    with pytest.raises(ConcreteValueError, match=r"as a plain float64 at test_errors\.py:\d+ .*fill_ones in g is "
                       r"numpy's own, .*\(from numpy import ones as fill_ones\).*Call np\.ones through"):
        grad(g, np.ones((2, 2)))

    def k(x):
        z = np.array([0.0, 1.0])
        z[0] = x
        return np.sum(z)

    with pytest.raises(ConcreteValueError, match=r"by np\.array of plain numbers.*called as np\.zeros\(\.\.\.\).*"
                       r"from numpy import zeros, is numpy's own"):  # no such name: the general advice
        grad(k, 1.5)

    def h(x):
        z = np.zeros(3)
        z[0] = x
        return np.sum(z)

    assert grad(h, 1.5) == (1.5, (tapegrad.ZERO, 1.0))


RNG = np.random.default_rng(0)


class _Noisy:
    def __init__(self):
        self.rng = np.random.default_rng(1)

    def draw(self, x):
        return np.sum(self.rng.normal(loc=x, size=3))


@pytest.mark.parametrize("f, x, call, fix", [
    (lambda x: RNG.normal(loc=x), 1.5, "RNG.normal", r"x \+ RNG\.normal\(\) for normal\(loc=x\); in general "
                                                     r"loc \+ scale \* RNG\.standard_normal\(size\)"),
    (lambda x: np.sum(RNG.normal(0.0, x)), np.ones(2), "RNG.normal", r"loc \+ scale \* RNG\.standard_normal"),
    (lambda x: np.random.uniform(x, 2.0), 0.5, "np.random.uniform", r"low \+ \(high - low\) \* np\.random\.random\(size\)"),
    (_Noisy().draw, 1.5, "self.rng.normal", r"x \+ self\.rng\.normal\(\)"),
    (lambda x: RNG.gamma(x), 1.5, "RNG.gamma", r"gamma's draws are not a shift and scale of fixed noise.*plain numbers"),
], ids=["loc", "array scale", "legacy uniform", "attribute", "gamma"])
def test_a_traced_parameter_of_a_random_sampler_is_refused_with_the_reparameterization(f, x, call, fix):
    """rng.normal(loc=x) with x traced: numpy's samplers take plain numbers; the error names the
    call, the line and how to draw instead (x + rng.normal()), not a cast (it advised
    t.astype(np.float64), which numpy's sampler would refuse as well)."""
    with pytest.raises(ConcreteValueError, match=rf"{re.escape(call)}\(\) at test_errors\.py:\d+ was given the "
                       rf"traced value %\d+::float64(\[2\])? as a parameter: numpy's random samplers take plain "
                       rf"numbers only.*{fix}"):
        grad(f, x)


def test_the_reparameterized_draw_is_differentiated():
    """x + rng.normal(), the fix the error gives, has the derivative 1 in x."""
    y, (_, dx) = grad(lambda x: x + RNG.normal(), 1.5)
    assert dx == 1.0


def test_the_sampler_hint_needs_no_source():
    """Under python -c (no source to read) the call is found from the bytecode."""
    code = ("import numpy as np, tapegrad\nrng = np.random.default_rng(0)\n"
            "tapegrad.grad(lambda x: rng.normal(loc=x), 1.5)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "rng.normal() at <string>:3 was given the traced value %2::float64 as a parameter" in out.stderr

"""tapegrad.program.codegen: tapes written out as Python source that runs and gives the tape's values."""
import numpy as np
import pytest

import tapegrad
from tapegrad import pullback, trace
from tapegrad.program import to_source

from conftest import WORKED


@pytest.mark.parametrize("f, args, new", WORKED)
def test_source_runs_and_matches_the_tape(f, args, new):
    """The generated source of forward and gradient tapes runs and gives the tape's values."""
    _, tape = trace(f, *args)
    fn = tapegrad.program.compile_tape(tape)
    assert fn(f, *new) == pytest.approx(tape.replay(f, *new), rel=1e-15)
    _, back = pullback(f, *args)
    back(1.0)
    outs = [back.derivatives[v] for v in back.tape.inputs[1:] if v in back.derivatives]
    gfn = tapegrad.program.compile_tape(back.tape, outputs=outs)
    np.testing.assert_allclose(gfn(f, *new), back.tape.replay(f, *new, outputs=outs), rtol=1e-15)


def test_source_deletes_a_large_array_after_its_last_use():
    """A name bound to an array of FREE_BYTES or more is deleted after its last use, so numpy
    frees it there; small values, inputs and the result keep their names."""
    x = np.linspace(0.0, 1.0, 10_000)  # 80 KB

    def f(x):
        a = np.exp(x)
        b = a * 2.0
        return np.sum(b) + np.sum(x * 0.5)

    _, tape = trace(f, x)
    src = to_source(tape, "f")
    assert src == (
        "def f(fn, x):\n"
        "    v3 = np.exp(x)\n"
        "    v4 = v3 * 2.0\n"
        "    del v3\n"
        "    v5 = np.sum(v4)\n"
        "    del v4\n"
        "    v6 = x * 0.5\n"
        "    v7 = np.sum(v6)\n"
        "    del v6\n"
        "    v8 = v5 + v7\n"
        "    return v8"
    )
    assert tapegrad.program.compile_tape(tape)(f, x) == pytest.approx(f(x), rel=1e-15)
    _, tape = trace(lambda x: np.exp(x) * 2.0, x)  # the result keeps its name
    assert "del v4" not in to_source(tape) and "del v3" in to_source(tape)


def test_a_broadcast_constant_stays_a_broadcast_in_the_source():
    """A constant that is one value broadcast (a seed spread by a pullback) is written as
    np.broadcast_to, not as a fresh array: numpy's ufuncs pass the memory order of their
    inputs on, and a matmul of a differently ordered array can round differently, so the
    compiled program would not equal the traced one bit for bit (found by the fuzzer)."""
    x = np.asfortranarray(np.arange(4.0).reshape(2, 2))
    c = np.broadcast_to(1.0, (2, 2))

    def f(x):
        return x + c

    _, tape = trace(f, x, wrt=0)  # c, which f captures, is a constant
    assert to_source(tape, "g") == "def g(fn, x):\n    v3 = x + np.broadcast_to(1.0, (2, 2))\n    return v3"
    assert tapegrad.program.compile_tape(tape)(f, x).strides == f(x).strides == (8, 16)


def test_a_note_cannot_write_code_into_generated_source():
    """Notes are data (a guard's note holds a file name, which may hold a newline): control
    characters in a note are written escaped, so they stay inside the comment."""
    _, tape = trace(lambda x: x * 2.0, 3.0)
    tape.ops[-1].note = 'evil.py:1\nraise RuntimeError("injected")\r\u2028x'
    assert to_source(tape) == (
        "def replay(fn, x):\n"
        '    v3 = x * 2.0  # evil.py:1\\nraise RuntimeError("injected")\\r\\u2028x\n'
        "    return v3"
    )
    assert tapegrad.program.compile_tape(tape)(None, 3.0) == 6.0


def test_a_structured_result_is_returned_as_a_literal():
    """Tuples, lists and dicts of a result are written in the return statement, not packed by a helper."""
    _, tape = trace(lambda p, x: (np.sum(p["w"] * x), [p["b"], x]), {"w": np.ones(2), "b": 1.0}, 2.0)
    src = to_source(tape, "f")
    assert src.splitlines()[-1] == "    return v6, [p_b, x]"
    assert "build" not in src


def test_compiled_gradient_ends_in_value_and_gradients():
    """The gradient program returns ``value, (da, db)``: no df for a plain function, dicts as literals."""
    g = tapegrad.compiled_grad(lambda p, x: np.sum(p["w"] * x) + p["b"])
    p, x = {"w": np.array([1.0, 2.0]), "b": 0.5}, np.array([3.0, 4.0])
    assert g.source(p, x) == (
        "def gradient_program(fn, p_w, p_b, x):\n"
        "    v5 = p_w * x\n"
        "    v6 = np.sum(v5)\n"
        "    value = v6 + p_b\n"
        "    return value, ({'w': x, 'b': 1.0}, p_w)"
    )
    for _ in range(2):  # the traced call and a replay give grad's result, df included
        value, (df, dp, dx) = g(p, x)
        assert value == 11.5 and df is tapegrad.ZERO and dp["b"] == 1.0
        np.testing.assert_array_equal(dp["w"], x)
        np.testing.assert_array_equal(dx, p["w"])


def test_compiled_gradient_of_a_closure_keeps_its_tangent():
    """A closure's own gradient is computed, so it stays in the result, packed where a literal cannot say it."""
    def make(a):
        return lambda x: a * x
    g = tapegrad.compiled_grad(make(2.0))
    assert g.source(3.0).splitlines()[-2:] == ["    value = f_a * x", "    return value, (build(structure, x), f_a)"]
    for _ in range(2):
        value, (df, dx) = g(3.0)
        assert (value, df.fields, dx) == (6.0, {"a": 3.0}, 2.0)


def test_compiled_gradient_of_a_closure_over_flags_drops_its_constant_tangent():
    """A closure whose captured values cannot be differentiated has a constant df: the program leaves it out."""
    def make(n):
        return lambda x: x ** n
    g = tapegrad.compiled_grad(make(3))
    assert g.source(2.0).splitlines()[-1] == "    return value, (dx,)"
    assert "build" not in g.source(2.0)
    for _ in range(2):
        value, (df, dx) = g(2.0)
        assert (value, dx) == (8.0, 12.0) and tapegrad.grad(make(3), 2.0)[1][0] == df


def _renamed(fn, *names):
    """`fn` with its parameters renamed (Python's parser would merge names that NFKC makes one:
    only a code object made this way keeps ``a`` and ``ａ`` apart)."""
    fn.__code__ = fn.__code__.replace(co_varnames=names + fn.__code__.co_varnames[len(names):])
    return fn


def test_names_that_nfkc_makes_one_stay_apart_in_the_source():
    """Python reads identifiers in NFKC form ("ａ" is "a"): parameters named a and ａ get two
    names in the source, which compiles and runs (it was a SyntaxError: duplicate argument)."""
    def f(a, b):
        return a * b + b

    f = _renamed(f, "a", "ａ")
    _, tape = trace(f, 2.0, 3.0)
    src = to_source(tape, "g")
    assert src.startswith("def g(fn, a, a_2):\n")
    assert tapegrad.program.compile_tape(tape)(f, 5.0, 7.0) == 42.0


def test_compiled_grad_keeps_dict_keys_and_parameters_that_nfkc_makes_one_apart():
    """Dict keys "a" and "ａ" and parameters a and ａ: every tier of compiled_grad (eager, traced,
    optimized, written, compiled) gives grad's answer (from the fifth call it was a SyntaxError)."""
    def by_key(d):
        return d["a"] * 2.0 + d["ａ"] * 3.0

    def by_name(a, b):
        return a * b

    by_name = _renamed(by_name, "a", "ａ")
    for f, args in ((by_key, ({"a": 1.0, "ａ": 2.0},)), (by_name, (1.0, 2.0))):
        g = tapegrad.compiled_grad(f)
        for _ in range(7):
            assert g(*args) == tapegrad.grad(f, *args)
        assert g.cache_info()["hits"] == 3
    assert "def gradient_program(fn, d_a, d_a_2):" in tapegrad.compiled_grad(by_key).source({"a": 1.0, "ａ": 2.0})

"""tapegrad.program.codegen: tapes written out as Python source that runs and gives the tape's values."""
import numpy as np
import pytest

import tapegrad
from tapegrad import pullback, to_source, trace

from conftest import WORKED


@pytest.mark.parametrize("f, args, new", WORKED)
def test_source_runs_and_matches_the_tape(f, args, new):
    """The generated source of forward and gradient tapes runs and gives the tape's values."""
    _, tape = trace(f, *args)
    fn = tapegrad.compile_tape(tape)
    assert fn(f, *new) == pytest.approx(tape.replay(f, *new), rel=1e-15)
    _, back = pullback(f, *args)
    back(1.0)
    outs = [back.derivatives[v] for v in back.tape.inputs[1:] if v in back.derivatives]
    gfn = tapegrad.compile_tape(back.tape, outputs=outs)
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
    assert tapegrad.compile_tape(tape)(f, x) == pytest.approx(f(x), rel=1e-15)
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
    assert tapegrad.compile_tape(tape)(f, x).strides == f(x).strides == (8, 16)


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
    assert tapegrad.compile_tape(tape)(None, 3.0) == 6.0

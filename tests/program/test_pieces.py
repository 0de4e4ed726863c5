"""A long gradient program is made a step at a time by the calls an eager grad answers, and
compiled as functions of a few thousand lines: every call still equals grad exactly."""
import pickle

import numpy as np
import pytest

import tapegrad
from tapegrad import compiled_grad, grad
from tapegrad.program import pieces, stages
from tapegrad.program.codegen import Writer, body_steps
from tapegrad.program.passes import drain

try:
    import cloudpickle
except ImportError:  # pragma: no cover - the test extra installs it
    cloudpickle = None


def chain(x, c):
    for _ in range(60):
        x = np.sin(x) * c + 0.1 * x
    return x


def chain_then_branch(x, c):
    # the guard comes after some 500 lines of the program: in a later piece than the first
    y = chain(x, c)
    if y > 0.5:
        return y * y
    return np.cos(y) * c


def assert_same(a, b):
    assert a[0] == b[0]
    assert type(a[1]) is type(b[1]) and len(a[1]) == len(b[1])
    for ga, gb in zip(a[1], b[1]):
        assert type(ga) is type(gb) and ga == gb


@pytest.fixture
def small_pieces(monkeypatch):
    """Programs above 50 traced ops made in steps, cut every 40 lines, one step a call."""
    monkeypatch.setattr(stages, "PIECE_OPS", 50)
    monkeypatch.setattr(pieces, "PIECE_LINES", 40)
    monkeypatch.setattr(stages, "BUDGET", 0.0)


def test_a_long_program_is_made_one_step_a_call_and_every_call_equals_grad(small_pieces):
    """With no budget beyond one step, each call after the trace is an eager grad that takes the
    program one step on; the program then runs, in pieces, and every call equals grad exactly."""
    g = compiled_grad(chain)
    calls = 0
    while g.cache_info()["hits"] < 3:
        x = 0.3 + 0.01 * calls
        assert_same(g(x, 1.0001), grad(chain, x, 1.0001))
        calls += 1
        assert calls < 1000
    info = g.cache_info()
    assert (info["misses"], info["programs"], info["hits"]) == (1, 1, 3)
    # the first call, then one call per step of the program's making
    _, tape = tapegrad.trace(lambda x, c: grad(chain, x, c), 0.3, 1.0001)
    steps = 1 + sum(1 for _ in stages.program_steps(tape, ["f", "seed", "x", "c"], False))  # (a yield between two)
    assert info["eager"] == 1 + steps
    src = g.source(0.3, 1.0001)
    assert src.count("\ndef gradient_program_") == src.count("def gradient_program_") - 1 > 5
    assert "\ndef gradient_program(fn, x, c):\n" in src


def test_pieces_run_the_same_ops_as_the_one_long_function(small_pieces):
    """A program in pieces and the same program as one function (tiers=False) return the same
    values, bit for bit, and their lines hold the same statements."""
    x, c = 0.7, 0.999
    cut = compiled_grad(chain)
    whole = compiled_grad(chain, tiers=False)
    while cut.cache_info()["hits"] == 0:
        cut(x, c)
    whole(x, c)
    assert_same(cut(x, c), whole(x, c))
    assert_same(cut(x, c), grad(chain, x, c))

    def statements(src):
        return sorted(line.strip() for line in src.splitlines()
                      if " = " in line and "slots" not in line)

    assert statements(cut.source(x, c)) == statements(whole.source(x, c))


def test_a_guard_in_a_later_piece_keeps_both_paths(small_pieces):
    """A branch taken after several pieces: the other branch is traced again, both programs
    are kept, each found again by its guard's line in the whole text."""
    g = compiled_grad(chain_then_branch)
    a, b = (0.3, 1.0001), (-2.0, 0.5)  # y > 0.5 on a, not on b
    assert (chain(*a) > 0.5, chain(*b) > 0.5) == (True, False)
    for _ in range(200):
        assert_same(g(*a), grad(chain_then_branch, *a))
    for _ in range(200):
        assert_same(g(*b), grad(chain_then_branch, *b))
    info = g.cache_info()
    assert (info["programs"], info["retraces"]) == (2, 1)
    node = g._cache[next(iter(g._cache))]
    program = node.program
    assert len(program.__pieces__) > 5
    ((line, exc_type, got),) = node.children
    assert exc_type is tapegrad.program.GuardError and got is False
    assert "guard_bool(" in program.__source__.splitlines()[line - 1]
    hits = info["hits"]
    assert_same(g(*a), grad(chain_then_branch, *a))
    assert_same(g(*b), grad(chain_then_branch, *b))
    assert g.cache_info()["hits"] == hits + 2 and g.cache_info()["retraces"] == 1


def test_cut_hands_the_values_that_cross_pieces_over_in_a_list():
    """Cut every two lines: a value read by a later piece is stored in the list the pieces share
    at the end of the piece that makes it and loaded at the start of each piece that reads it;
    the outer function makes the list, calls the pieces in turn and returns."""
    _, tape = tapegrad.trace(lambda a, b: ((a * b + a) * b - a) * a, 2.0, 3.0)
    w = Writer(tape)
    body = drain(body_steps(tape, w, track=True))
    texts = pieces.cut(body, "f", w.fresh, size=2)
    src = "\n\n".join(text for _, text in texts)
    assert src == (
        "def f_1(fn, a, b, slots):\n"
        "    v4 = a * b\n"
        "    v5 = v4 + a\n"
        "    slots[0] = v5\n"
        "\n"
        "def f_2(fn, a, b, slots):\n"
        "    v5 = slots[0]\n"
        "    v6 = v5 * b\n"
        "    v7 = v6 - a\n"
        "    slots[1] = v7\n"
        "\n"
        "def f_3(fn, a, b, slots):\n"
        "    v7 = slots[1]\n"
        "    v8 = v7 * a\n"
        "    slots[2] = v8\n"
        "\n"
        "def f(fn, a, b):\n"
        "    slots = [None] * 3\n"
        "    f_1(fn, a, b, slots)\n"
        "    f_2(fn, a, b, slots)\n"
        "    f_3(fn, a, b, slots)\n"
        "    v8 = slots[2]\n"
        "    return v8"
    )
    program = drain(pieces.compile_steps(texts, dict(w.namespace), "<test>"))
    assert program(None, 2.0, 3.0) == ((2.0 * 3.0 + 2.0) * 3.0 - 2.0) * 2.0
    assert program.__source__ == src
    # each function's lines are numbered as in the whole text
    firsts = [fn.__code__.co_firstlineno for fn in (*program.__pieces__, program)]
    assert firsts == [1, 6, 12, 17]


@pytest.mark.skipif(cloudpickle is None, reason="cloudpickle is not installed")
def test_a_long_program_half_made_pickles_compiled(small_pieces):
    """Pickled while its program is half made, a compiled gradient is sent with the program
    finished: the copy runs it at once."""
    g = compiled_grad(chain)
    for _ in range(5):
        g(0.3, 1.0001)
    assert g._cache[next(iter(g._cache))].program is None
    g2 = pickle.loads(cloudpickle.dumps(g))
    assert_same(g2(0.4, 1.0001), grad(chain, 0.4, 1.0001))
    assert g2.cache_info()["hits"] == 1
    assert g2.source(0.4, 1.0001) == g.source(0.4, 1.0001)

"""tapegrad.tape: the Tape, its push, indexing, editing that keeps references valid, replay and hooks."""
import operator

import numpy as np
import pytest

from tapegrad import trace
from tapegrad.tape import Call, Constant, Input, Tape, Variable
from tapegrad.tape import note_text


def small_tape():
    tape = Tape()
    a = tape.push(Input(2.0))
    b = tape.push(Input(3.0))
    c = tape.push(Call(operator.mul, (a, b)))
    tape.result = tape.push(Call(operator.add, (c, a)))
    return tape, a, b, c


def test_push_runs_calls_and_returns_variables():
    """A Call pushed without a value is run at once on the recorded values."""
    tape, a, b, c = small_tape()
    assert repr(c) == "%3" and tape[c].val == 6.0 and tape[tape.result].val == 8.0
    assert len(tape) == 4 and [op.var for op in tape] == [a, b, c, tape.result]
    assert tape.inputs == [a, b]
    assert tape[3] is tape[c]


def test_indexing_errors_name_the_range():
    """Indexing outside the tape or with the wrong type says what is allowed."""
    tape, *_ = small_tape()
    with pytest.raises(IndexError, match=r"%9 is outside this tape \(%1..%4\)"):
        tape[9]
    with pytest.raises(TypeError, match="indexed by a Variable or an id"):
        tape["a"]


def test_insert_keeps_later_references_valid():
    """Inserting an op renumbers later ops; Variables held before still name the same ops."""
    tape, a, b, c = small_tape()
    (k,) = tape.insert(3, Constant(10.0))
    assert repr(k) == "%3" and repr(c) == "%4" and repr(tape.result) == "%5"
    assert tape[c].args == (a, b)
    new = tape.insert(5, Call(operator.add, (c, k)))[0]
    assert tape[new].val == 16.0 and repr(tape.result) == "%6"
    assert tape.replay(2.0, 3.0) == 8.0


def test_replace_redirects_every_reference():
    """Replacing an op makes every use of its Variable read the new op."""
    tape, a, b, c = small_tape()
    tape.replace(c, Call(operator.sub, (a, b)))
    assert tape[c].val == -1.0 and repr(c) == "%3"
    assert tape.replay(2.0, 3.0) == 1.0  # (2 - 3) + 2


def test_delete_refuses_ops_still_in_use():
    """An op can be deleted only when nothing uses it; later ops are renumbered."""
    tape, a, b, c = small_tape()
    with pytest.raises(ValueError, match="cannot delete %3: %4 still uses it"):
        tape.delete(c)
    extra = tape.push(Constant(1.0))
    tape.delete(extra)
    assert len(tape) == 4
    with pytest.raises(KeyError):
        tape[extra]


def test_replay_on_new_inputs():
    """A traced program replays on new inputs without tracing, and checks the count of inputs."""
    def f(a, b):
        return a / (a + b * b)

    _, tape = trace(f, 2.0, 3.0)
    assert tape.replay(f, 1.0, 2.0) == pytest.approx(0.2)
    x = np.linspace(1, 2, 3)
    np.testing.assert_allclose(tape.replay(f, x, x), x / (x + x * x))
    with pytest.raises(TypeError, match="replay takes 3 input values"):
        tape.replay(1.0, 2.0)


def test_replay_of_a_gradient_tape_gives_the_gradient_on_new_inputs():
    """The forward-and-backward tape is a program: replayed, it gives new gradients."""
    from tapegrad import pullback

    def f(a, b):
        return a / (a + b * b)

    _, back = pullback(f, 2.0, 3.0)
    back(1.0)
    tape = back.tape
    # the last op is the accumulated derivative of b, the one before the last the one of a
    da_var = [op for op in tape if note_text(op.note) == "accumulate d%2"][0].var
    db_var = tape.ops[-1].var
    da, db = tape.replay(f, 1.0, 2.0, outputs=[da_var, db_var])
    # d/da a/(a+b²) = b²/(a+b²)², d/db = -2ab/(a+b²)²
    assert da == pytest.approx(4 / 25) and db == pytest.approx(-4 / 25)


def test_variable_follows_its_op():
    """A Variable is bound to its op, so its printed id changes with the op's position."""
    tape = Tape()
    v = tape.push(Input(1.0))
    assert isinstance(v, Variable) and v.id == 1
    tape.insert(1, Input(0.0))
    assert v.id == 2 and repr(v) == "%2"


def checked_sqrt(x):
    if x < 0:
        raise ValueError("math domain error")
    return x ** 0.5


def explain_negative(op, exc):
    return ArithmeticError(f"{op.var} = checked_sqrt({op.args[0]}) got a negative input on replay ({exc})")


def sqrt_tape():
    tape = Tape()
    x = tape.push(Input(4.0))
    tape.result = tape.push(Call(checked_sqrt, (x,)))
    return tape


def test_replay_error_hook_replaces_the_exception(monkeypatch):
    """A Call whose fn has an on_replay_error attribute raises what the hook returns, without the original chained."""
    monkeypatch.setattr(checked_sqrt, "on_replay_error", explain_negative, raising=False)
    tape = sqrt_tape()
    assert tape.replay(9.0) == 3.0
    with pytest.raises(ArithmeticError) as err:
        tape.replay(-1.0)
    assert str(err.value) == "%2 = checked_sqrt(%1) got a negative input on replay (math domain error)"
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_replay_error_hook_returning_none_keeps_the_exception(monkeypatch):
    """A hook that returns None, like a function without a hook, lets the original exception through."""
    tape = sqrt_tape()
    with pytest.raises(ValueError, match="^math domain error$"):
        tape.replay(-1.0)
    monkeypatch.setattr(checked_sqrt, "on_replay_error", lambda op, exc: None, raising=False)
    with pytest.raises(ValueError, match="^math domain error$"):
        tape.replay(-1.0)


def test_repr_of_a_tape_is_the_dump_set_by_the_printing_hook(monkeypatch):
    """repr(tape) is Tape.format_text's dump; without the hook it is a short summary and there is no HTML."""
    tape, *_ = small_tape()
    assert repr(tape) == (
        "Tape\n"
        "  inp %1::float64\n"
        "  inp %2::float64\n"
        "  %3 = mul(%1, %2)::float64\n"
        "  %4 = add(%3, %1)::float64"
    )
    monkeypatch.setattr(Tape, "format_text", None)
    monkeypatch.setattr(Tape, "format_html", None)
    assert repr(tape) == "<Tape of 4 ops>" and tape._repr_html_() is None

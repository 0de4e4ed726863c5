"""tapegrad.program.passes: simplify, prune, cse and optimize return tapes that keep every value."""
import numpy as np
import pytest

from tapegrad import GuardError, grad, trace
from tapegrad.program import cse, optimize, prune, simplify, to_source

from conftest import WORKED, branchy


@pytest.mark.parametrize("f, args, new", WORKED)
@pytest.mark.parametrize("tape_pass", [simplify, prune, cse, optimize])
def test_passes_keep_values(f, args, new, tape_pass):
    """Every pass returns a tape with the same value and gradient, at the traced and at new inputs."""
    value, tape = trace(lambda *a: grad(f, *a), *args)
    after = tape_pass(tape)
    assert after is not tape
    for inputs in (args, new):
        expected = tape.replay(None, *inputs)
        got = after.replay(None, *inputs)
        assert got[0] == pytest.approx(expected[0], rel=1e-15)
        for e, g in zip(expected[1][1:], got[1][1:]):
            assert g == pytest.approx(e, rel=1e-15)


def test_simplify_and_prune_the_derivative_of_a_line():
    """d(m*x + b): simplify drops the multiplications by 1, prune what the result does not need."""
    _, tape = trace(lambda m, x, b: grad(lambda m, x, b: m * x + b, m, x, b), 2.0, 3.0, 1.0)
    assert to_source(tape, "before") == (
        "def before(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    v6 = v5 + b\n"
        "    v7 = 1.0 * x\n"
        "    v8 = 1.0 * m\n"
        "    return v6, (ZERO, v7, v8, 1.0)"
    )
    assert to_source(prune(simplify(tape)), "after") == (
        "def after(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    v6 = v5 + b\n"
        "    return v6, (ZERO, x, m, 1.0)"
    )


def test_zero_times_x_is_folded_only_when_finite_is_assumed():
    """0*x is nan for infinite x, so simplify keeps it unless assume_finite=True."""
    _, tape = trace(lambda x: 0.0 * x + 1.0, 2.0)
    assert len(simplify(tape)) == len(tape)
    folded = simplify(tape, assume_finite=True)
    assert "const %3 = 0.0" in str(folded)
    with np.errstate(invalid="ignore"):
        assert np.isnan(tape.replay(None, np.inf))  # why the fold is opt-in


def test_cse_shares_a_repeated_call():
    """sin(x) computed twice is computed once after cse."""
    _, tape = trace(lambda x: np.sin(x) * np.sin(x), 0.3)
    shared = cse(tape)
    assert [op.fn.__name__ for op in shared.ops[2:]] == ["sin", "multiply"]
    assert shared.replay(None, 0.7) == tape.replay(None, 0.7)


def test_prune_keeps_guards():
    """Dead-code elimination keeps guards (and what they check): replay still refuses other paths."""
    _, tape = trace(branchy, 1.0)
    pruned = prune(tape)
    with pytest.raises(GuardError):
        pruned.replay(None, -1.0)


def _checked_sum(x):
    try:
        np.linalg.cholesky(np.diag(x))  # only a check: its value is not used
        return np.sum(x)
    except np.linalg.LinAlgError:
        return -np.sum(x * x)


def test_prune_keeps_a_call_that_may_raise():
    """A np.linalg call whose value nothing uses is kept: the path recorded after it holds only
    if it does not raise, so replay must raise where the eager call would (pruned, the replay
    silently took the traced path)."""
    _, tape = trace(_checked_sum, np.array([0.5, 2.0]))
    for pruned in (prune(tape), optimize(tape)):
        assert "np.linalg.cholesky" in to_source(pruned)
        with pytest.raises(np.linalg.LinAlgError):
            pruned.replay(None, np.array([-0.5, 2.0]))
    _, tape = trace(lambda x: [np.cos(x), np.sin(x)][1], 0.5)  # numpy's other calls still go
    assert "cos" not in to_source(prune(tape))


def _sharing_and_folding(x, y):
    a = np.sin(x) * np.sin(x) + 0.0 * y      # a repeated call, and 0*y (folded when finite)
    b = (a * 1.0 + 0.0) ** 1.0                # identities simplify drops
    return -(-b) * np.cos(y) + np.cos(y) if x > 0 else b


@pytest.mark.parametrize("assume_finite", [False, True])
@pytest.mark.parametrize("f, args", [(f, args) for f, args, _ in WORKED] + [(_sharing_and_folding, (0.4, 1.3))])
def test_optimize_is_simplify_then_cse_then_prune(f, args, assume_finite):
    """optimize works the three passes out on the tape itself and copies once: the program it
    gives is the one the three passes give one after the other, line for line."""
    _, tape = trace(lambda *a: grad(f, *a), *args)
    expected = to_source(prune(cse(simplify(tape, assume_finite=assume_finite))), "g")
    assert to_source(optimize(tape, assume_finite=assume_finite), "g") == expected
    if f is _sharing_and_folding:  # where each pass has work to do
        assert len(optimize(tape, assume_finite=assume_finite)) < len(simplify(tape)) < len(tape)

"""Tapes and compiled gradients pickle, so they can go to other processes; traced values refuse."""
import pickle

import numpy as np
import pytest

import tapegrad

try:
    import cloudpickle
except ImportError:  # pragma: no cover - the test extra installs it
    cloudpickle = None

needs_cloudpickle = pytest.mark.skipif(
    cloudpickle is None, reason="cloudpickle is not installed: pip install -e '.[dask]' (the test extra installs it)")


def branchy_loss(w, X, y):
    """A module-level function (pickle finds it by name) with two paths."""
    if w[0] > 0:
        return np.mean((X @ w - y) ** 2)
    return np.sum(np.tanh(w) ** 2)


@pytest.fixture
def data(rng):
    return rng.normal(size=3) ** 2 + 0.1, rng.normal(size=(6, 3)), rng.normal(size=6)


def _assert_same_grad(got, want):
    assert got[0] == want[0]
    assert all(np.array_equal(a, b) for a, b in zip(got[1][1:], want[1][1:], strict=True))


@needs_cloudpickle
def test_compiled_grad_pickles_with_its_programs(data):
    """Through cloudpickle, a compiled gradient runs the programs compiled before, for both paths, without tracing."""
    w, X, y = data
    g = tapegrad.compiled_grad(branchy_loss)
    g(w, X, y)  # an eager grad
    g(-w, X, y)  # traced: the program of -w's path
    g(w, X, y)  # the program optimized, an eager grad
    g(w, X, y)  # its source written, an eager grad
    g(w, X, y)  # the program fails a guard: w's path traced
    g2 = pickle.loads(cloudpickle.dumps(g))  # both programs compiled and sent
    _assert_same_grad(g2(w, X, y), tapegrad.grad(branchy_loss, w, X, y))
    _assert_same_grad(g2(-w, X, y), tapegrad.grad(branchy_loss, -w, X, y))
    assert g2.cache_info() == {"hits": 2, "misses": 1, "retraces": 1, "traced": 0, "eager": 3, "background": 0,
                                 "signatures": 1, "programs": 2, "maxsize": 64}
    assert g2.source(w, X, y) == g.source(w, X, y)


@needs_cloudpickle
def test_compiled_grad_of_a_closure_pickles_by_value(data):
    """cloudpickle takes a lambda and what it captures along with the compiled program."""
    w, X, y = data
    scale = 3.0
    g = tapegrad.compiled_grad(lambda w: scale * np.sum(np.sin(X @ w)))
    g(w)  # an eager grad
    want = g(w)  # traced
    g2 = pickle.loads(cloudpickle.dumps(g))
    got = g2(w)
    assert got[0] == want[0] and np.array_equal(got[1][1], want[1][1])
    assert got[1][0].scale == want[1][0].scale and np.array_equal(got[1][0].X, want[1][0].X)
    assert g2.cache_info()["hits"] == 1


def test_plain_pickle_takes_a_compiled_grad_without_programs(data):
    """The standard pickle takes a compiled gradient of a module-level function before its first
    call or after cache_clear(); the copy's first call is an eager grad, the same gradient."""
    w, X, y = data
    g = tapegrad.compiled_grad(branchy_loss)
    g(w, X, y)
    g(w, X, y)  # traced: a program made by exec, which the standard pickle cannot take
    g.cache_clear()
    g2 = pickle.loads(pickle.dumps(g))
    _assert_same_grad(g2(w, X, y), tapegrad.grad(branchy_loss, w, X, y))
    assert g2.cache_info() == {"hits": 0, "misses": 1, "retraces": 0, "traced": 0, "eager": 2, "background": 0,
                                 "signatures": 0, "programs": 0, "maxsize": 64}


def test_tape_round_trips_and_replays(data):
    """An unpickled tape prints the same and replays to the same value on new inputs."""
    w, X, y = data
    _, tape = tapegrad.trace(branchy_loss, w, X, y)
    tape2 = pickle.loads(pickle.dumps(tape))
    assert str(tape2) == str(tape)
    assert tape2.replay(branchy_loss, 2 * w, X, y) == tape.replay(branchy_loss, 2 * w, X, y)


@needs_cloudpickle
def test_gradient_tape_and_pullback_round_trip_with_cloudpickle(data):
    """A pullback (closures in it) and its forward-and-backward tape come back whole through cloudpickle."""
    w, X, y = data
    _, back = tapegrad.pullback(branchy_loss, w, X, y)
    want = back(1.0)
    back2 = pickle.loads(cloudpickle.dumps(back))
    assert str(back2.tape) == str(back.tape)
    got = back2(2.0)
    assert all(np.array_equal(a, 2 * b) for a, b in zip(got[1:], want[1:], strict=True))


@pytest.mark.parametrize("how", [pickle.dumps, pytest.param("cloudpickle", marks=needs_cloudpickle)],
                         ids=["pickle", "cloudpickle"])
def test_a_traced_value_refuses_to_pickle(how):
    """Pickling a Tracer inside the traced function raises an error naming it, the line and the fix."""
    dump = cloudpickle.dumps if how == "cloudpickle" else how

    def f(x):
        dump(x)  # the line the error names
        return x

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(tapegrad.ConcreteValueError) as info:
        tapegrad.grad(f, 1.0)
    assert str(info.value) == (
        f"cannot pickle the traced value %2::float64 at test_pickle.py:{line}: "
        "it exists only inside its trace, and a pickled copy would carry its value without its gradient. "
        "Inside the function, use x.copy() or copy.copy(x) for a copy; to send work elsewhere, pickle "
        "plain values, the tape (tapegrad.trace(f, *args)[1]) or the gradient function "
        "(tapegrad.compiled_grad(f))")


@needs_cloudpickle
def test_a_compiled_program_keeps_the_structural_zeros_of_an_index_after_pickling():
    """sqrt(x)[[1, 2, 1]] reads no square root at 0: the program holds the marked cotangent as a
    constant (written out as values, it lost its mark and gave 0 · inf = nan), also once sent."""
    f = lambda x: np.sum(np.sqrt(x)[[1, 2, 1]])  # noqa: E731
    x = np.array([0.0, 4.0, 1.0])
    g = tapegrad.compiled_grad(f, tiers=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        g(x)  # traced
        assert "c_branchcotangent / " in g.source(x)
        g2 = pickle.loads(cloudpickle.dumps(g))
        before = g2.cache_info()
        for h in (g, g2):
            np.testing.assert_array_equal(h(x)[1][1], [0.0, 0.5, 0.5])
        after = g2.cache_info()
        assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]


def test_plain_pickle_of_a_compiled_grad_holding_programs_says_what_to_do(data):
    """The standard pickle refuses a compiled gradient that holds traced programs with a TypeError
    (as pickle refuses what it cannot take) naming the line, cloudpickle and cache_clear() (it
    was a PicklingError about the type 'function', or a lambda)."""
    w, X, y = data
    g = tapegrad.compiled_grad(branchy_loss)
    g(w, X, y)
    g(w, X, y)  # traced: a program
    with pytest.raises(TypeError, match=r"pickle at test_pickle\.py:\d+ cannot store the compiled "
                       r"gradient of branchy_loss: it holds 1 traced program.*cloudpickle.*g\.cache_clear\(\) first"):
        pickle.dumps(g)
    g.cache_clear()
    g2 = pickle.loads(pickle.dumps(g))
    _assert_same_grad(g2(w, X, y), tapegrad.grad(branchy_loss, w, X, y))


def test_plain_pickle_takes_a_compiled_grad_after_its_eager_calls(data):
    """Before its first trace (after eager calls only) a compiled gradient pickles with the
    standard pickle; the copy goes through the tiers again (it was a PicklingError: the
    signatures seen hold the type of a function, which pickle cannot find by name)."""
    w, X, y = data
    g = tapegrad.compiled_grad(branchy_loss)
    g(w, X, y)
    g2 = pickle.loads(pickle.dumps(g))
    _assert_same_grad(g2(w, X, y), tapegrad.grad(branchy_loss, w, X, y))
    assert g2.cache_info()["eager"] == 2 and g2.cache_info()["programs"] == 0


def test_plain_pickle_of_a_compiled_lambda_says_what_to_do():
    """The standard pickle refuses the compiled gradient of a lambda, naming the function, and
    advising a module-level function or cloudpickle."""
    g = tapegrad.compiled_grad(lambda x: x * 2.0)
    with pytest.raises(TypeError, match=r"compiled gradient of lambda: .*<lambda> \(a lambda or a "
                       r"function defined inside another\).*module level.*cloudpickle"):
        pickle.dumps(g)


def test_copy_of_a_compiled_grad_keeps_its_programs(data):
    """copy.deepcopy and copy.copy take a compiled gradient with its programs, as before."""
    import copy

    w, X, y = data
    g = tapegrad.compiled_grad(branchy_loss, tiers=False)
    g(w, X, y)
    for g2 in (copy.deepcopy(g), copy.copy(g)):
        _assert_same_grad(g2(w, X, y), tapegrad.grad(branchy_loss, w, X, y))
        assert g2.cache_info()["hits"] >= 1

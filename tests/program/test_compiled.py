"""tapegrad.program.compiled: compiled, cached gradients equal a fresh grad, across branches and signatures."""
import random

import numpy as np
import pytest
import scipy.stats

import tapegrad
from tapegrad import compiled_grad, grad


def piecewise(x, w):
    # three branches, a data-dependent loop count, and an array argument
    s = np.sum(w * x)
    if s > 1.0:
        out = np.sin(s) * s
    elif s < -1.0:
        out = np.exp(s / 4)
    else:
        out = s * s * 0.5
    k = 0
    while out < 0.25 and k < 3:
        out = out * 1.5 + 0.1
        k += 1
    return out


def assert_same(a, b):
    assert a[0] == b[0]
    _same_tangents(a[1], b[1])


def _same_tangents(a, b):
    """The same gradients, leaf by leaf: the types, dtypes, shapes and values, inside lists and
    tuples too."""
    assert type(a) is type(b)
    if isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for ga, gb in zip(a, b):
            _same_tangents(ga, gb)
    elif isinstance(b, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_compiled_equals_fresh_grad_across_branch_changes(rng):
    """200 random inputs crossing every branch: each compiled result equals a fresh grad exactly."""
    g = compiled_grad(piecewise)
    for _ in range(200):
        x = float(rng.uniform(-2, 2))
        w = rng.uniform(-1, 1, 3)
        assert_same(g(x, w), grad(piecewise, x, w))
    info = g.cache_info()
    assert info["signatures"] == 1 and info["retraces"] >= 3 and info["hits"] > 100


def test_new_signature_traces_again():
    """A new shape, dtype or container structure is a new signature with its own program."""
    g = compiled_grad(lambda p: np.sum(p["w"] ** 2) * p["s"])
    for _ in range(5):  # an eager grad, the trace, two eager grads (optimized, source), the program
        r1 = g({"w": np.ones(2), "s": 2.0})
        r2 = g({"w": np.ones(3, dtype=np.float32), "s": 2.0})
        assert r1[1][1]["w"].tolist() == [4.0, 4.0]
        assert r2[1][1]["w"].dtype == np.float32 and r2[1][1]["w"].shape == (3,)
    info = g.cache_info()
    assert (info["signatures"], info["eager"], info["misses"], info["hits"]) == (2, 6, 2, 2)


def test_cache_is_bounded_and_can_be_cleared():
    """Least recently used signatures are dropped past maxsize; cache_clear empties the cache."""
    g = compiled_grad(lambda x: np.sum(np.tanh(x)), maxsize=2)
    for n in (1, 1, 2, 2, 3, 3):  # each signature's second call traces its program
        g(np.ones(n))
    assert g.cache_info()["signatures"] == 2 and g.cache_info()["programs"] == 2
    g.cache_clear()
    assert g.cache_info()["signatures"] == 0


SCALE = 2.0


def scaled(x):
    return SCALE * x


def test_globals_are_baked_in_until_the_cache_is_cleared():
    """A global read by f is a constant of the compiled program, as in jax.jit."""
    global SCALE
    g = compiled_grad(scaled)
    assert g(1.0)[1][1] == 2.0  # an eager grad
    assert g(1.0)[1][1] == 2.0  # the trace of the program
    assert g(1.0)[1][1] == 2.0  # the program optimized, an eager grad
    assert g(1.0)[1][1] == 2.0  # its source written, an eager grad
    SCALE = 5.0
    try:
        assert g(1.0)[1][1] == 2.0  # still the traced program
        g.cache_clear()
        assert g(1.0)[1][1] == 5.0
    finally:
        SCALE = 2.0


def test_closure_values_are_inputs_read_on_every_call():
    """Values a closure captures stay differentiable and are read afresh each call."""
    def make(a):
        return lambda x: x * a

    f = make(3.0)
    g = compiled_grad(f)
    assert g(2.0) == (6.0, (tapegrad.Tangent(a=2.0), 3.0))


def test_compiled_scalar_chain_source_is_plain_numpy():
    """The compiled program of a scalar function is straight-line numpy, forward and backward."""
    g = compiled_grad(lambda a, b: a / (a + b * b))
    assert g.source(2.0, 3.0) == (
        "def gradient_program(fn, a, b):\n"
        "    v4 = b * b\n"
        "    v5 = a + v4\n"
        "    value = a / v5\n"
        "    v7 = 1.0 / v5\n"
        "    v8 = -value\n"
        "    v9 = v8 / v5\n"
        "    da = v7 + v9\n"
        "    v11 = v9 * b\n"
        "    db = v11 + v11\n"
        "    return value, (da, db)"
    )


def cholesky_or_square(a):
    try:
        return np.sum(np.linalg.cholesky(a))
    except np.linalg.LinAlgError:
        return np.sum(a * a)


def test_a_path_chosen_by_an_exception_is_guarded_both_ways():
    """A call that raised while traced is a guard: either path first, the other is traced and each stays right."""
    for first, second in [(np.eye(2), -np.eye(2)), (-np.eye(2), np.eye(2))]:
        g = compiled_grad(cholesky_or_square)
        # eager, traced (the second's path), eager twice (optimized, source), its program fails
        # on the first: retraced, ..., then the two programs
        for a in (first, second) * 6:
            assert_same(g(a), grad(cholesky_or_square, a))
        info = g.cache_info()
        assert (info["programs"], info["misses"], info["retraces"], info["eager"], info["hits"]) == (2, 1, 1, 5, 5)
    assert "guard_raises(np.linalg.cholesky, np.linalg.LinAlgError, a)" in g.source(-np.eye(2))


def test_an_integer_argument_used_as_an_index_is_never_baked_in():
    """x[i] with an integer argument i: each call's gradient puts the share at that call's i."""
    g = compiled_grad(lambda x, i: x[i] * 3.0)
    x = np.arange(1.0, 4.0)
    for i in (0, 2, 1, 2):
        assert_same(g(x, i), grad(lambda x, i: x[i] * 3.0, x, i))


#: (read by name, as a module's global: no part of a signature) whether `draws_once` draws
_FIRST_TRACE = [True]


def draws_once(x):
    if _FIRST_TRACE[0]:  # (stands for another thread's draw in the middle of the trace)
        _FIRST_TRACE[0] = False
        random.random()
        np.random.random_sample()
    return np.sin(x) * 2.0


def draws_always(x):
    return np.sin(x) * (2.0 + 0.0 * random.random())


def test_a_draw_seen_once_is_traced_again_before_the_signature_is_given_up():
    """numpy's and Python's global generators are shared by every thread: a draw another thread
    makes while f is traced moves them as a draw of f's would. A signature whose trace saw one
    draw is traced again at its next call, and compiled when that trace draws nothing (an
    xdist worker's own thread gave up a solver's signature for good, now and then); one that
    draws at every trace is traced on every call, as before."""
    _FIRST_TRACE[0] = True
    g = compiled_grad(draws_once, tiers=False)
    for _ in range(4):
        assert g(0.7) == grad(draws_once, 0.7)
    info = g.cache_info()
    assert (info["misses"], info["traced"], info["programs"], info["hits"]) == (2, 0, 1, 2), info

    g = compiled_grad(draws_always, tiers=False)
    for _ in range(4):
        g(0.7)
    info = g.cache_info()
    assert (info["misses"], info["traced"], info["programs"], info["hits"]) == (2, 2, 0, 0), info


def test_a_compiled_gradient_pickled_before_it_kept_draws_seen_once_still_runs():
    """A copy whose state has no `_drew_once` (pickled by an earlier tapegrad) gets an empty one."""
    g = compiled_grad(draws_always, tiers=False)
    state = g.__getstate__()
    del state["_drew_once"]
    copy = type(g).__new__(type(g))
    copy.__setstate__(state)
    for _ in range(3):
        assert copy(0.7)[1][1] == grad(draws_always, 0.7)[1][1]
    assert copy.cache_info()["programs"] == 0


def test_mutable_state_a_closure_captures_is_read_on_every_call():
    """A flag in a deque and a random generator captured by f are never frozen into a program."""
    import collections

    flag = collections.deque([True])
    g = compiled_grad(lambda x: x * 2.0 if flag[0] else x * 3.0)
    assert g(1.0)[1][1] == 2.0
    flag[0] = False
    assert g(1.0)[1][1] == 3.0
    rng, again = np.random.default_rng(0), np.random.default_rng(0)
    g = compiled_grad(lambda x: x * rng.standard_normal())
    draws = [g(1.0)[1][1] for _ in range(3)]
    assert draws == [again.standard_normal() for _ in range(3)]
    assert g.cache_info()["traced"] == 3 and g.cache_info()["programs"] == 0


def test_a_default_argument_works_on_every_call():
    """compiled_grad(lambda x, p=2.0: x ** p) gives the same answer on its first and later calls."""
    g = compiled_grad(lambda x, p=2.0: x ** p)
    assert [g(3.0) for _ in range(3)] == [(9.0, (tapegrad.ZERO, 6.0))] * 3


def scaled_layer(x, W=None, s=1.0, act="tanh"):
    y = np.tanh(W @ x) if act == "tanh" else np.sin(W @ x)
    return np.sum(y ** 2) * s


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("wrt", [None, "W", (0, "s")])
def test_keyword_arguments_reach_the_program_read_afresh(wrt, background):
    """Keyword arguments are the program's arguments, as positional ones are, whatever their
    order: new values give grad's answer from the same program, with or without `wrt` naming
    them. (The trace baked them in while the signature passed their values: the program raised
    on every call and every call was traced again, never faster than `grad`; had the numbers
    matched, a changed value would have been ignored. The traced call and the program then
    dropped the gradients of the keywords `wrt` names, grad's last entry: checked by length.)"""
    x, W = np.array([0.7, -0.4]), np.array([[1.0, 2.0], [0.5, -1.0]])
    g = compiled_grad(scaled_layer, wrt=wrt, background=background)
    kw = {} if wrt is None else {"wrt": wrt}
    calls = [dict(W=W, s=2.0)] * 3 + [dict(s=2.0, W=W)] * 3 + [dict(W=2 * W, s=3.0), dict(s=0.5, W=W - 1)]
    for i, call in enumerate(calls):
        if i == 2 and background:
            g.wait()  # (the child's program, at a known call)
        value, grads = g(x, **call)
        want_value, want = grad(scaled_layer, x, **call, **kw)
        assert value == pytest.approx(want_value, rel=1e-14)
        assert len(grads) == len(want), (i, grads)  # (zip below would drop a missing last entry)
        for got, expected in zip(grads[1:], want[1:]):
            if isinstance(expected, dict):  # the keyword arguments `wrt` names
                assert got.keys() == expected.keys()
                for k in expected:
                    np.testing.assert_allclose(got[k], expected[k], rtol=1e-13)
            elif isinstance(expected, np.ndarray):
                np.testing.assert_allclose(got, expected, rtol=1e-13)
            else:
                assert got is expected
    info = g.cache_info()
    assert info["programs"] == 1 and info["retraces"] == 0 and info["hits"] >= 4, info
    for _ in range(2):  # a new value of a keyword that holds no number: a signature of its own
        g(x, W=W, s=2.0, act="sin")
    assert g.cache_info()["signatures"] == 2


def six_signs(x):
    out = 0.0
    for i in range(6):
        out = out + (np.sin(x[i]) if x[i] > 0 else x[i] * x[i])
    return out


def depth(node):
    return 1 + max((depth(c) for c in node.children.values()), default=0)


def test_maxsize_bounds_the_programs_and_a_lookup_follows_only_its_path(rng):
    """64 paths under one signature: maxsize bounds the programs kept, and the programs are a tree
    keyed on guard outcomes, so a lookup runs at most one program per guard, not all of them."""
    signs = [np.array([1.0 if (k >> i) & 1 else -1.0 for i in range(6)]) for k in range(64)]
    small = compiled_grad(six_signs, maxsize=8)
    big = compiled_grad(six_signs, maxsize=100)
    for s in signs * 6:  # a path answered by an eager grad in one round goes on in the next
        x = s * rng.uniform(0.5, 1.5, 6)
        assert_same(small(x), grad(six_signs, x))
        assert_same(big(x), grad(six_signs, x))
        assert small.cache_info()["programs"] <= 8
    hits = big.cache_info()["hits"]
    for s in signs:
        assert_same(big(s), grad(six_signs, s))
    assert big.cache_info()["programs"] == 64 and big.cache_info()["hits"] == hits + 64
    assert depth(next(iter(big._cache.values()))) <= 7


def writes_into_a_copy(x):
    y = x.copy()
    y[0] = np.sin(y[0]) * 2.0
    return np.sum(y * x)


def test_a_write_into_a_traced_array_compiles():
    """y = x.copy(); y[0] = ... inside a compiled gradient (a trace within a trace) equals grad."""
    g = compiled_grad(writes_into_a_copy)
    for x in (np.array([0.5, 1.0, 2.0]), np.array([-1.0, 3.0, 0.25])):
        assert_same(g(x), grad(writes_into_a_copy, x))


def chain(x, c):
    for _ in range(50):
        x = np.sin(x) * c + 0.1 * x
    return x


def test_a_signature_goes_eager_then_traced_then_written_then_compiled():
    """First call an eager grad (no program), second a trace (its tape kept), third and fourth
    eager grads (the tape optimized, then written as source and dropped), fifth the compiled
    program; each returns grad's value and gradient exactly."""
    g = compiled_grad(chain, background=False)
    states = []
    for x in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        assert_same(g(x, 1.0001), grad(chain, x, 1.0001))
        info = g.cache_info()
        node = next(iter(g._cache.values()), None)
        states.append((info["eager"], info["misses"], info["hits"], info["programs"],
                       None if node is None else node.program is not None or node.pending[0]))
    assert states == [(1, 0, 0, 0, None), (1, 1, 0, 1, "tape"), (2, 1, 0, 1, "optimized"),
                      (3, 1, 0, 1, "source"), (3, 1, 1, 1, True), (3, 1, 2, 1, True)]


def test_a_signature_called_once_is_never_traced():
    """An array whose length changes on every call (a new signature each time): each call is one
    eager grad, nothing traced."""
    def f(x):
        return np.sum(np.sin(x) * x)

    g = compiled_grad(f)
    for n in range(1, 6):
        assert_same(g(np.linspace(0.0, 1.0, n)), grad(f, np.linspace(0.0, 1.0, n)))
    info = g.cache_info()
    assert (info["eager"], info["misses"], info["programs"]) == (5, 0, 0)


def test_source_of_a_signature_not_yet_called_compiles_it():
    """g.source(*args) skips the eager tier: the program is traced and compiled for it."""
    g = compiled_grad(lambda a, b: a * b)
    assert g.source(2.0, 3.0).startswith("def gradient_program(fn, a, b):\n")
    assert g(2.0, 3.0) == (6.0, (tapegrad.ZERO, 3.0, 2.0)) and g.cache_info()["hits"] == 1


def _leaves(v):
    return [w for u in v for w in _leaves(u)] if isinstance(v, (list, tuple)) else [v]


def test_the_plain_signature_is_the_walks_own_key(rng, monkeypatch):
    # the common call (a function that captures nothing, floats and float or complex arrays)
    # is keyed without the walk; its key and leaves must be the walk's, or a program traced
    # under one would be missed (or, worse, found) under the other
    from tapegrad.program import compiled as compiled_module
    from tapegrad.program.compiled import _plain_signature
    from tapegrad.pytree import flatten

    def f(*args):  # (captures nothing: `_leaves` is a global)
        return sum(np.sum(a) * (i + 1) for i, a in enumerate(_leaves(args))).real

    x, z = rng.standard_normal((3, 2)), rng.standard_normal(4) + 1j * rng.standard_normal(4)
    cg = compiled_grad(f)
    params = [(x, np.ones(2)), (rng.standard_normal((2, 2)), 0.5)]
    plain_calls = [(1.5,), (x,), (x, 2.0, z), (np.float32(1.0) * np.ones(3, np.float32),),
                   (np.array(2.0),), (x, x.copy()), ([x],), (params, z), ((x, [2.0, z]),)]
    for args in plain_calls:
        assert _plain_signature(f, args) is not None
        key, leaves, keyed = cg._signature(args, None, {})
        wkey, wleaves, wkeyed = cg._walked_signature(args, None, {})
        assert key == wkey and keyed == wkeyed
        assert len(leaves) == len(wleaves) and all(a is b for a, b in zip(leaves, wleaves))
    # anything else takes the walk: an array or a list met twice, an int, a numpy scalar, an
    # empty list, a list three levels deep or holding itself, a closure, a seed
    loop = [x]
    loop.append(loop)
    for args in [(x, x), (1,), (np.float64(1.0),), (np.arange(3),), ([x, x],), ([x], x),
                 (params, params), ([],), ([[[x]]],), (loop,), ([x, 1],)]:
        assert _plain_signature(f, args) is None
    assert _plain_signature(lambda a: a * x, (1.0,)) is None  # captures an array: the walk's

    # ... which goes on from f's walk made on the way: f walked once a call, the key the walk's own
    def h(a, shared):
        return a * x + shared[0]

    cg_h, call = compiled_grad(h), (x + 1.0, [x + 2.0])
    walks = []
    monkeypatch.setattr(compiled_module, "flatten", lambda v, **kw: walks.append(v) or flatten(v, **kw))
    key, leaves, keyed = cg_h._signature(call, None, {})
    assert [type(v) for v in walks] == [type(h), type(None), np.ndarray, list]  # f, the seed, the arguments
    wkey, wleaves, wkeyed = cg_h._walked_signature(call, None, {})
    assert (key, keyed) == (wkey, wkeyed) and len(leaves) == len(wleaves) == 3
    assert all(a is b for a, b in zip(leaves, wleaves))

    def g(a, b):  # captures a module and a number that is not differentiated
        return np.sum(a) * b * len(names)

    names = ["a"]
    cg_g = compiled_grad(g)
    assert _plain_signature(g, (x, 2.0)) is not None
    assert cg_g._signature((x, 2.0), None, {}) == cg_g._walked_signature((x, 2.0), None, {})

    def opaque(np_, kind, ufunc, builtin):  # captures a module, a class, a ufunc, a builtin
        return lambda a: np_.sum(ufunc(a[0], a[0])) * builtin(kind(2), 1)

    h = opaque(np, float, np.multiply, max)
    cg_h = compiled_grad(h)
    assert _plain_signature(h, ([x],)) is not None
    assert cg_h._signature(([x],), None, {}) == cg_h._walked_signature(([x],), None, {})
    for _ in range(6):
        got = cg_h([x])
    assert_same(got, grad(h, [x]))
    assert cg._signature((x,), 1.0, {})[0] == cg._walked_signature((x,), 1.0, {})[0]
    # and the cached program answers the plain calls as a fresh grad does
    for args in plain_calls[:3] + plain_calls[-3:]:
        for _ in range(6):
            got = cg(*args)
        assert_same(got, grad(f, *args))


def many_guards(x, n):
    """Paths chosen by int(), a while loop, a caught LinAlgError and an if."""
    s = 0.0
    for i in range(int(abs(x[0]) * 3) % 4):
        s = s + np.sin(x[i % x.shape[0]])
    j = 0
    while np.sum(x * x) * (j + 1) < 4.0 and j < 5:
        j += 1
        s = s + x[0] * j
    try:
        np.linalg.cholesky(np.diag(x))  # only a check: its value is not used
        s = s + np.sum(x)
    except np.linalg.LinAlgError:
        s = s - np.sum(x * x)
    if x[-1] > 0:
        s = s * 2
    return s * n


def _nodes(g):
    """The programs a compiled gradient holds, counted by walking its trees."""
    stack, n = list(g._cache.values()), 0
    while stack:
        node = stack.pop()
        n += 1
        stack.extend(node.children.values())
    return n


def test_threads_calling_one_compiled_gradient_get_grads_answers():
    """Four threads call one compiled gradient (a thread pool's workers) with two signatures and
    both branches of a guard, past maxsize: every call gives grad's answer, and the caches' own
    counts stay those of the programs held (a call raised KeyError when another thread had
    dropped its signature, and counts drifted)."""
    import threading

    def f(w, x):
        h = np.tanh(w @ x)
        return np.sum(h ** 2) + (np.sum(w) if x[0] > 0 else -np.sum(w))

    rng = np.random.default_rng(0)
    ws = {3: rng.standard_normal((4, 3)), 5: rng.standard_normal((4, 5))}
    xs = [rng.standard_normal(3) for _ in range(6)] + [rng.standard_normal(5) for _ in range(3)]
    want = [grad(f, ws[len(x)], x) for x in xs]
    errors = []
    for trial in range(8):
        g = compiled_grad(f, maxsize=3)

        def worker(k, g=g):
            r = np.random.default_rng(k)
            for _ in range(40):
                i = int(r.integers(len(xs)))
                try:
                    got = g(ws[len(xs[i])], xs[i])
                    for a, b in zip((got[0], *got[1][1:]), (want[i][0], *want[i][1][1:])):
                        np.testing.assert_allclose(a, b, rtol=1e-12)
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(f"{type(exc).__name__}: {exc}")
                    return

        threads = [threading.Thread(target=worker, args=(10 * trial + k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        info = g.cache_info()
        assert info["programs"] == _nodes(g) <= 3 and info["signatures"] == len(g._sizes)
        assert sum(info[k] for k in ("hits", "misses", "retraces", "traced", "eager")) == 160


def test_many_guard_paths_past_maxsize_give_grads_answer():
    """250 calls over about 90 paths (guards of four kinds) and two signatures, with maxsize
    below the number of paths and above it, in tiers and without: every call equals grad, and
    the programs kept never pass maxsize. (A path that held only because a check did not raise
    was silently replayed where the check raised: dead-code elimination dropped the check.)"""
    rng = np.random.default_rng(1)
    calls = [(rng.uniform(-1.5, 1.5, size=rng.choice([2, 3])), float(rng.choice([1.0, 2.0])))
             for _ in range(250)]
    expected = [grad(many_guards, x, n) for x, n in calls]  # (once: the eight runs ask the same)
    for tiers in (True, False):
        for maxsize in (1, 3, 9, 1000):
            g = compiled_grad(many_guards, maxsize=maxsize, tiers=tiers)
            for (x, n), want in zip(calls, expected):
                assert_same(g(x, n), want)
                assert g.cache_info()["programs"] <= maxsize
            info = g.cache_info()
            assert info["retraces"] > 20
        assert info["programs"] > 70 and info["hits"] > 70


RNG = np.random.default_rng(0)  # a module-level generator, as a script keeps one


def noise():
    return RNG.normal()


class NoisyModel:
    def __init__(self):
        self.rng = np.random.default_rng(1)

    def __call__(self, a):
        return np.sum(a * self.rng.normal())


def _captured_generator():
    rng = np.random.default_rng(2)
    return lambda a: np.sum(a * rng.normal())


RANDOM_DRAWS = {
    "numpy's global RandomState": lambda a: np.sum(a * np.random.normal()),
    "Python's random module": lambda a: np.sum(a * random.random()),
    "scipy.stats rvs": lambda a: np.sum(a * scipy.stats.norm.rvs()),
    "default_rng() inside f": lambda a: np.sum(a * np.random.default_rng().normal()),
    "a module-level Generator": lambda a: np.sum(a * RNG.normal()),
    "a Generator read by a helper": lambda a: np.sum(a * noise()),
    "a Generator in a closure": _captured_generator(),
    "a Generator on the object": NoisyModel(),
}


@pytest.mark.parametrize("source", RANDOM_DRAWS, ids=str)
@pytest.mark.parametrize("tiers", [True, False])
def test_random_draws_are_drawn_afresh_on_every_call(source, tiers):
    """A function that draws random numbers is traced on every call, never compiled: over 12
    calls every draw is new (from the fifth call on, the compiled program replayed the draw
    its trace made)."""
    f = RANDOM_DRAWS[source]
    g = compiled_grad(f, tiers=tiers)
    x = np.ones(2)
    draws = [g(x)[1][1][0] for _ in range(12)]
    assert len(set(draws)) == 12
    assert g.cache_info()["hits"] == 0 and g.cache_info()["programs"] == 0


@pytest.mark.parametrize("seed", [np.random.seed, random.seed], ids=["numpy", "random"])
def test_a_seeded_global_generator_gives_grads_draws(seed):
    """Seeded, numpy's and Python's global generators give a compiled gradient the draws grad
    gets: one draw per call, in the same order."""
    f = RANDOM_DRAWS["numpy's global RandomState" if seed is np.random.seed else "Python's random module"]
    g, x = compiled_grad(f), np.ones(2)
    seed(7)
    got = [g(x) for _ in range(10)]
    seed(7)
    want = [grad(f, x) for _ in range(10)]
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)


def test_a_generator_seeded_inside_f_is_compiled():
    """np.random.default_rng(5) made inside f draws the same numbers on every call: it is
    compiled, and the program gives grad's answer."""
    def f(a):
        return np.sum(a * np.random.default_rng(5).normal())

    g, x = compiled_grad(f), np.ones(2)
    for _ in range(8):
        assert_same(g(x), grad(f, x))
    assert g.cache_info()["hits"] == 4


def test_numpy_is_left_as_it_was_after_a_trace_that_draws():
    """The watch on numpy's fresh entropy (numpy.random.bit_generator.randbits) lasts only while
    a program is traced, also when the traced function raises."""
    import numpy.random.bit_generator as bit_generator
    own = bit_generator.randbits

    def fails(a):
        np.random.default_rng()
        raise ValueError("no")

    g = compiled_grad(fails, tiers=False)
    with pytest.raises(ValueError, match="no"):
        g(1.0)
    compiled_grad(RANDOM_DRAWS["default_rng() inside f"], tiers=False)(np.ones(2))
    assert bit_generator.randbits is own


def test_draws_are_seen_after_numpys_global_generator_is_replaced():
    """np.random.set_bit_generator(PCG64(...)) gives numpy's global RandomState another bit
    generator: its draws are still seen, and a function that draws nothing is still compiled."""
    own = np.random.mtrand._rand._bit_generator
    np.random.set_bit_generator(np.random.PCG64(3))
    try:
        g, x = compiled_grad(RANDOM_DRAWS["numpy's global RandomState"]), np.ones(2)
        assert len({g(x)[1][1][0] for _ in range(10)}) == 10
        h = compiled_grad(lambda a: np.sum(a * 2.0))
        for _ in range(6):
            h(x)
        assert h.cache_info()["hits"] == 2
    finally:
        np.random.set_bit_generator(own)


def test_numpys_global_generator_is_watched_through_its_words():
    """The watch on numpy's global RandomState reads its MT19937 words where numpy's own ctypes
    interface says they are (found through the bit generator's capsule, which is cheaper on a
    process's first trace), and a draw moves them; a legacy normal that takes the cached one
    moves none, and is seen through the cache flag."""
    from tapegrad.program.draws import _LegacyWatch, _state_address

    bg = np.random.mtrand._rand._bit_generator
    assert _state_address(bg) == bg.ctypes.state_address
    kept = np.random.get_state()
    try:
        np.random.seed(0)  # (no normal cached)
        before = _LegacyWatch.before()
        assert _LegacyWatch.fast and before[0] is not None and not before[1]
        assert not _LegacyWatch.drew(before)
        np.random.normal()  # draws two normals, keeps one
        assert _LegacyWatch.drew(before)
        before = _LegacyWatch.before()
        assert before[1]  # the cached normal
        np.random.normal()  # takes it: the words stay
        assert _LegacyWatch._words() == before[0] and _LegacyWatch.drew(before)
    finally:
        np.random.set_state(kept)


def test_a_generator_passed_in_is_drawn_afresh_on_every_call():
    """A Generator given as an argument (as scipy.stats' random_state=rng takes one) is part of
    the call: each of 12 calls draws anew."""
    def f(a, rng):
        return np.sum(a * scipy.stats.norm.rvs(random_state=rng))

    g, x, rng = compiled_grad(f), np.ones(2), np.random.default_rng(4)
    assert len({g(x, rng)[1][1][0] for _ in range(12)}) == 12


def _tracers_reachable(roots, limit=200_000):
    """The traced values reachable from `roots` (not through modules, classes or functions'
    globals: a program's namespace, and what its objects hold)."""
    import gc
    import types

    from tapegrad.tracer import Tracer

    found, seen, stack = [], set(), list(roots)
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type)):
            continue
        seen.add(id(obj))
        if isinstance(obj, Tracer):
            found.append(obj)
        elif isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in obj.__closure__ or () if c.cell_contents is not None)
        else:
            stack.extend(gc.get_referents(obj))
    return found


def test_a_program_through_a_solver_holds_no_traced_value():
    """A solver's problem (the ODE's, the root's) is a constant of the program: it keeps the
    structure of what the solver's function captured, not the traced values (which held the
    whole trace alive for as long as the program lived)."""
    from tapegrad.scipy import optimize as opt
    from tapegrad.scipy.integrate import solve_ivp

    def root(a):
        return opt.brentq(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14) * a

    def decay(k):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([1.0]), rtol=1e-10, atol=1e-12).y[0, -1]

    for f, x in ((root, 2.0), (decay, 0.7)):
        g = compiled_grad(f, tiers=False)
        g(x)
        g(x)
        program = next(iter(g._cache.values())).program
        names = [v for k, v in program.__globals__.items() if k != "__builtins__"]
        assert _tracers_reachable(names) == []
        np.testing.assert_allclose(g(x)[1][1], grad(f, x)[1][1], rtol=1e-8)

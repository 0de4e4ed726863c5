"""tapegrad.pytree: how values nest; the walkers over call arguments, flatten and unflatten, and
gradients shaped like structured arguments and results."""
import collections
import copy
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import tapegrad
from tapegrad import NoTangent, SeedError, Tangent, ZeroTangent, check_grad, grad, gradient, pullback, trace
from tapegrad.pytree import (any_nested, build, find_nested, flatten, flatten_cotangent, map_nested, nested,
                             tangent_of, unflatten)

# rules these tests drive through check_grad (see tests/rules/test_coverage.py)
EXERCISED = {build}


def test_closure_captures_are_differentiable():
    """The value a closure captures gets its gradient through df, as in Zygote's example."""
    f = (lambda a: (lambda x: x * a))(3.0)
    y, grads = grad(f, 2.0)
    assert (y, grads) == (6.0, (Tangent(a=2.0), 3.0))
    assert repr(grads[0]) == "Tangent[function](a=2.0)"


def test_closure_over_dict_of_arrays(rng):
    """A closure over a dict of arrays: df holds a dict of array gradients."""
    params = {"w": rng.standard_normal(3), "b": 0.5}
    loss = lambda x: np.sum(np.tanh(params["w"] * x + params["b"]))  # noqa: E731
    x = rng.standard_normal(3)
    _, (df, dx) = grad(loss, x)
    t = 1 - np.tanh(params["w"] * x + params["b"]) ** 2
    np.testing.assert_allclose(df.params["w"], t * x, atol=1e-12)
    assert df.params["b"] == pytest.approx(np.sum(t), abs=1e-12)
    np.testing.assert_allclose(dx, t * params["w"], atol=1e-12)
    check_grad(loss, x)


def test_lambda_capturing_a_function():
    """A captured function is passed through untouched and gets NoTangent."""
    inner = np.sin
    f = lambda x: inner(x) * 2  # noqa: E731
    _, (df, dx) = grad(f, 0.3)
    assert df == Tangent(inner=NoTangent()) and dx == pytest.approx(2 * np.cos(0.3))


class Polynomial:
    def __init__(self, weights):
        self.weights = weights

    def __call__(self, x):
        # Horner's rule: w0 + x (w1 + x (w2 + x w3))
        out = self.weights[-1] * np.ones_like(x)
        for w in self.weights[-2::-1]:
            out = out * x + w
        return out


def test_polynomial_model_gradient_matches_closed_form():
    """d/dw_i Σ_j p(x_j)² = Σ_j 2 p(x_j) x_j^i; the gradient w.r.t. x matches central differences."""
    model = Polynomial(np.array([3.0, 2.0, -3.0, 1.0]))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    before = model.weights.copy()
    loss, (_, dmodel, dx) = grad(lambda m, x: np.sum(m(x) ** 2), model, x)
    p = np.polyval(model.weights[::-1], x)
    assert loss == pytest.approx(np.sum(p**2))
    assert isinstance(dmodel, Tangent) and dmodel.primal_type is Polynomial
    closed = np.array([np.sum(2 * p * x**i) for i in range(4)])
    np.testing.assert_allclose(dmodel.weights, closed, rtol=1e-12)
    np.testing.assert_allclose(dx, 2 * p * np.polyval(np.polyder(model.weights[::-1]), x), rtol=1e-12)
    check_grad(lambda m, x: np.sum(m(x) ** 2), model, x)
    np.testing.assert_array_equal(model.weights, before)  # never mutated
    assert repr(dmodel).startswith("Tangent[Polynomial](weights=array([")


def test_callable_object_passed_as_f():
    """A callable object as f: its fields are differentiable and df is its Tangent."""
    model = Polynomial(np.array([1.0, 2.0]))
    y, (df, dx) = grad(lambda *a: np.sum(model(*a)), np.array([3.0]))
    # model(x) = 1 + 2x through the closure
    assert df.model.weights.tolist() == [1.0, 3.0] and dx.tolist() == [2.0]
    _, (dm, dxm) = grad(Polynomial(np.array([1.0, 2.0])), 3.0)
    assert isinstance(dm, Tangent) and dm.weights.tolist() == [1.0, 3.0] and dxm == 2.0


@dataclasses.dataclass
class MLP:
    layers: list
    activation: str = "tanh"

    def __call__(self, x):
        for i, (W, b) in enumerate(self.layers):
            x = x @ W + b
            if i < len(self.layers) - 1:
                x = np.tanh(x)
        return x


def mse(model, X, y):
    return np.mean((model(X)[:, 0] - y) ** 2)


def make_mlp(rng):
    return MLP([(0.5 * rng.standard_normal((2, 8)), np.zeros(8)),
                (0.5 * rng.standard_normal((8, 1)), np.zeros(1))])


def test_mlp_dataclass_gradient_has_the_same_nesting(rng):
    """A dataclass holding a list of (W, b) tuples gets Tangent[MLP](layers=[(dW, db), ...])."""
    model = make_mlp(rng)
    X, y = rng.standard_normal((16, 2)), rng.standard_normal(16)
    _, (_, d, dX, dy) = grad(mse, model, X, y)
    assert isinstance(d, Tangent) and d.primal_type is MLP
    assert isinstance(d.layers, list) and all(isinstance(l, tuple) for l in d.layers)
    assert [g.shape for l in d.layers for g in l] == [(2, 8), (8,), (8, 1), (1,)]
    assert d.activation is NoTangent()
    check_grad(mse, model, X, y)


def test_training_loop_lowers_the_loss(rng):
    """200 steps of gradient descent on a small regression problem lower the loss at least 10x."""
    model = make_mlp(rng)
    X = rng.uniform(-1, 1, (64, 2))
    y = np.tanh(X[:, 0] - 0.5 * X[:, 1])
    first = mse(model, X, y)
    for _ in range(200):
        loss, (_, g, *_) = grad(mse, model, X, y)
        model = tapegrad.update(model, g, lr=0.5)
    assert mse(model, X, y) < first / 10


def test_update_keeps_a_zero_d_array_an_array():
    """A 0-d array parameter stays a 0-d array of its dtype after `update` (numpy's p - lr * g of
    0-d arrays is a numpy scalar: the parameter's type drifted, and a compiled gradient saw a
    new signature after the first step); a float stays a float."""
    params = {"t": np.array(1.5), "s": np.array(2.0, dtype=np.float32), "k": 0.5}
    _, (_, g) = tapegrad.grad(lambda p: p["t"] ** 2 * p["s"] + p["k"], params)
    new = tapegrad.update(params, g, lr=0.25)
    assert type(new["t"]) is np.ndarray and new["t"].shape == () and new["t"] == 1.5 - 0.25 * 6.0
    assert type(new["s"]) is np.ndarray and new["s"].dtype == np.float32 and new["s"] == np.float32(2.0 - 0.25 * 2.25)
    assert type(new["k"]) is float and new["k"] == 0.25


def test_dict_with_unused_entry_gets_zero_tangent():
    """An entry of a dict of parameters that the loss never reads gets ZeroTangent()."""
    params = {"a": 2.0, "unused": np.ones(2), "name": "p"}
    _, (_, d) = grad(lambda p: p["a"] ** 2, params)
    assert d == {"a": 4.0, "unused": ZeroTangent(), "name": NoTangent()}
    filled = tapegrad.fill_zeros(d, params)
    np.testing.assert_array_equal(filled["unused"], np.zeros(2))


class Pair(NamedTuple):
    x: float
    y: np.ndarray


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    offset: np.ndarray


class Slotted:
    __slots__ = ("k", "tag")

    def __init__(self, k, tag):
        self.k = k
        self.tag = tag


def test_containers_keep_their_types(rng):
    """Tuples, lists, NamedTuples, nested dicts, frozen dataclasses and slotted objects."""
    arg = {
        "t": (1.0, [2.0, np.ones(2)]),
        "nt": Pair(3.0, np.arange(2.0)),
        "fz": Frozen(2.0, np.ones(2)),
        "sl": Slotted(1.5, "tag"),
        "count": 3,
    }

    def f(a):
        s = a["t"][0] * a["t"][1][0] + np.sum(a["t"][1][1] ** 2)
        s = s + a["nt"].x * np.sum(a["nt"].y) + a["fz"].scale * np.sum(a["fz"].offset)
        for _ in range(a["count"]):
            s = s * a["sl"].k
        return s

    _, (_, d) = grad(f, arg)
    assert type(d["t"]) is tuple and type(d["t"][1]) is list
    assert type(d["nt"]) is Pair and d["nt"].x == pytest.approx(np.sum(np.arange(2.0)) * 1.5**3)
    assert isinstance(d["fz"], Tangent) and d["fz"].primal_type is Frozen
    assert isinstance(d["sl"], Tangent) and d["sl"].tag is NoTangent()
    assert d["count"] is NoTangent()
    check_grad(f, arg)


def test_user_objects_are_not_mutated(rng):
    """Tracing works on copies: after grad, the model is exactly as it was."""
    model = make_mlp(rng)
    snapshot = copy.deepcopy(model)
    layers_id = id(model.layers)
    grad(mse, model, rng.standard_normal((4, 2)), rng.standard_normal(4))
    assert id(model.layers) == layers_id
    for (W, b), (W0, b0) in zip(model.layers, snapshot.layers):
        assert type(W) is np.ndarray
        np.testing.assert_array_equal(W, W0)
        np.testing.assert_array_equal(b, b0)


def test_shared_array_accumulates_both_shares():
    """The same array reachable through two fields gets the sum of both shares at both places."""
    w = np.array([1.0, 2.0])
    params = {"first": w, "second": w}
    _, (_, d) = grad(lambda p: np.sum(p["first"] * 3.0) + np.sum(p["second"] ** 2), params)
    np.testing.assert_allclose(d["first"], 3.0 + 2 * w)
    assert d["second"] is d["first"]
    check_grad(lambda p: np.sum(p["first"] * 3.0) + np.sum(p["second"] ** 2), params)


def test_shared_array_accumulates_both_shares_inside_a_trace_too():
    """A gradient taken inside a trace (a compiled gradient's, a Hessian's inner gradient) of a
    function given one array twice: one leaf, both shares summed, as `grad` of the plain array
    gives (each place got only its own use's share); a traced number given twice stays two
    leaves, as a plain number does. The compiled gradient's program agrees with `grad`."""
    w = np.array([0.7, -0.4])

    def f(t, x):
        return np.sum(t[0] * np.sin(x))

    _, (_, (dt,), dx) = grad(f, (w,), w)
    np.testing.assert_allclose(dx, np.sin(w) + w * np.cos(w))
    assert dt is dx
    traced_grads, _ = tapegrad.trace(lambda t, x: grad(f, t, x)[1], (w,), w)
    np.testing.assert_array_equal(traced_grads[2], dx)
    np.testing.assert_array_equal(traced_grads[1][0], dx)
    g = tapegrad.compiled_grad(f, background=False)
    for _ in range(6):  # its tiers, then the program
        np.testing.assert_array_equal(g((w,), w)[1][2], dx)
    np.testing.assert_allclose(tapegrad.hessian(lambda v: grad(f, (v,), v)[1][2][0], w, mode="rev-rev"),
                               [[-3 * np.sin(w[0]) - w[0] * np.cos(w[0]), 0.0], [0.0, 0.0]], atol=1e-14)
    (_, da, db), _ = tapegrad.trace(lambda a: grad(lambda p, q: p * q, a, a)[1], 3.0)
    assert (da, db) == (3.0, 3.0)


def test_integer_array_leaf_is_not_differentiated():
    """An integer array passes through untouched and gets NoTangent()."""
    _, (_, dx, di) = grad(lambda x, idx: np.sum(x[idx]), np.ones(3), np.array([0, 2]))
    assert di is NoTangent() and dx.tolist() == [1.0, 0.0, 1.0]


def test_input_paths_print_in_dumps():
    """Inputs print with their path in the arguments."""
    model = Polynomial(np.array([1.0, 2.0]))
    _, tape = trace(lambda m, p: m(p["x"]) * p["s"], model, {"x": 2.0, "s": 3.0})
    assert str(tape).split("\n")[:5] == [
        "Tape",
        "  inp %1::function lambda",
        "  inp %2::float64[2]   # m.weights",
        '  inp %3::float64      # p["x"]',
        '  inp %4::float64      # p["s"]',
    ]


def test_structured_result_needs_a_structured_seed():
    """A tuple or dict result takes a seed of the same structure; without one the error says so."""
    f = lambda x: {"sq": x * x, "cube": x ** 3}  # noqa: E731
    with pytest.raises(SeedError, match=r"returned a dict, so the gradient taken at test_pytree.py:\d+ needs a seed"):
        grad(f, 2.0)
    y, (_, dx) = grad(f, 2.0, seed={"sq": 1.0, "cube": 0.5})
    assert y == {"sq": 4.0, "cube": 8.0} and dx == 4.0 + 0.5 * 12.0
    y, back = pullback(lambda x: (x, np.sin(x)), 1.0)
    assert back((1.0, 0.0))[1] == 1.0 and back((0.0, 2.0))[1] == pytest.approx(2 * np.cos(1.0))
    with pytest.raises(SeedError, match="tuple or list of 2"):
        back((1.0,))


# --- the walkers over call arguments ---


def test_nested_yields_items_depth_first_inside_lists_and_tuples_only():
    """`nested` goes into lists and tuples at any depth, in order, and treats every other value as an item."""
    d = {"k": [9]}
    items = [1, (2, [3, (4,)]), [], (), d, "ab", [[5]]]
    assert list(nested(items)) == [1, 2, 3, 4, d, "ab", 5]
    assert list(nested([])) == [] and list(nested([(), [[]]])) == []


def test_find_nested_returns_the_first_match_or_none():
    """`find_nested` finds the first instance of a type at any depth, and None when there is none."""
    assert find_nested([1, ("a", [2.5, "b"]), "c"], str) == "a"
    assert find_nested([1, [(2, [3.5])]], float) == 3.5
    assert find_nested([{"x": 1.5}, [()]], float) is None
    assert find_nested([], object) is None


def test_any_nested_tests_every_item_at_any_depth():
    """`any_nested` is True when the test holds for an item inside the nesting, False otherwise and for empty input."""
    assert any_nested([1, (2, [3, (40,)])], lambda v: v > 10) is True
    assert any_nested([1, (2, [3, (4,)])], lambda v: v > 10) is False
    assert any_nested([[], ()], lambda v: True) is False


def test_map_nested_keeps_list_and_tuple_types_and_empty_containers():
    """`map_nested` applies fn to every item and rebuilds lists as lists, tuples as tuples, empty ones included."""
    out = map_nested(lambda v: v * 10, [1, (2, [3, ()]), [], [(4,)]])
    assert out == [10, (20, [30, ()]), [], [(40,)]]
    assert [type(x) for x in out] == [int, tuple, list, list]
    assert type(out[1][1]) is list and type(out[1][1][1]) is tuple and type(out[3][0]) is tuple
    assert map_nested(len, [{"a": 1, "b": 2}, "abc"]) == [2, 3]  # a dict is an item, not walked
    assert map_nested(str, []) == []


# --- flatten and unflatten ---


def test_result_round_trip_keeps_every_container_type():
    """A result flattens to its non-container values in order, and unflattening them gives the value back."""
    x = {"t": (1.0, [2.0, None]), "nt": Pair(3.0, 4.0), "g": Tangent(Frozen, scale=5.0), "s": "name"}
    spec, leaves = flatten(x)
    assert leaves == [1.0, 2.0, None, 3.0, 4.0, 5.0, "name"]
    back = unflatten(spec, leaves)
    assert back == x and back is not x
    assert type(back["t"]) is tuple and type(back["t"][1]) is list and type(back["nt"]) is Pair
    assert back["g"].primal_type is Frozen
    assert unflatten(spec, [10.0, 20.0, None, 30.0, 40.0, 50.0, "other"]) == {
        "t": (10.0, [20.0, None]), "nt": Pair(30.0, 40.0), "g": Tangent(Frozen, scale=50.0), "s": "other"}


def test_result_spec_prints_its_top_level():
    """A result's spec prints as the tape shows it: the container and its keys or length."""
    assert [repr(flatten(x)[0]) for x in ({"sq": 1.0, "cube": 2.0}, (1.0, [2.0]), Pair(1.0, 2.0),
                                           Tangent(Frozen, scale=1.0, offset=2.0), 1.0)] == [
        "dict('sq', 'cube')", "tuple(2)", "Pair(2)", "Tangent(scale, offset)", "leaf"]


def test_build_packs_leaves_as_unflatten_does():
    """`build(spec, *leaves)`, the op a structured result becomes, is unflatten of its leaves."""
    spec, _ = flatten((1.0, {"a": [2.0, 3.0]}))
    assert build(spec, 7.0, 8.0, 9.0) == (7.0, {"a": [8.0, 9.0]})


def test_argument_round_trip_keeps_the_argument_itself():
    """An argument flattens to its differentiable leaves only; unflattening the same leaves gives the argument itself."""
    x = {"fz": Frozen(2.0, np.ones(2)), "sl": Slotted(1.5, "tag"), "count": True, "t": (3.0, "s")}
    spec, leaves = flatten(x, argument=True)
    assert len(leaves) == 4
    assert leaves[0] == 2.0 and leaves[1] is x["fz"].offset and leaves[2:] == [1.5, 3.0]
    assert unflatten(spec, leaves) is x


def test_argument_unflatten_with_new_leaves_copies_without_touching_the_original():
    """New leaves give a copy of the same types, the parts that are not leaves kept; the original is unchanged."""
    x = {"fz": Frozen(2.0, np.ones(2)), "sl": Slotted(1.5, "tag"), "keep": ("s", None), "xs": [1.0]}
    spec, leaves = flatten(x, argument=True)
    dup = unflatten(spec, [20.0, "w", 15.0, 10.0])
    slotted = dup.pop("sl")
    assert dup == {"fz": Frozen(20.0, "w"), "keep": ("s", None), "xs": [10.0]}
    assert (type(slotted), slotted.k, slotted.tag) == (Slotted, 15.0, "tag")
    assert dup["keep"] is x["keep"]  # nothing inside changed: the same tuple
    assert x["fz"].scale == 2.0 and x["sl"].k == 1.5 and x["xs"] == [1.0]


def test_closure_round_trip_replaces_its_captured_values():
    """A closure flattens to what it captures; unflattening new values gives a function that computes with them."""
    scale = 3.0
    f = lambda v: v * scale  # noqa: E731
    spec, leaves = flatten(f, argument=True)
    assert leaves == [3.0] and repr(spec) == "function(scale)"
    g = unflatten(spec, [5.0])
    assert (g(2.0), f(2.0)) == (10.0, 6.0)


def test_shared_value_is_one_leaf_at_both_places():
    """An array reached along two paths is one leaf; its replacement appears at both places."""
    w = np.ones(2)
    spec, leaves = flatten({"a": w, "b": [w, 2.0]}, argument=True)
    assert len(leaves) == 2 and leaves[0] is w
    assert unflatten(spec, ["W", 4.0]) == {"a": "W", "b": ["W", 4.0]}


def test_memo_keeps_a_value_shared_across_arguments_one_spec_and_one_copy():
    """With one memo for several arguments, a value they share has one spec, one leaf and one copy."""
    model = Frozen(2.0, np.ones(2))
    specs, copies = {}, {}
    s1, l1 = flatten(model, argument=True, memo=specs)
    s2, l2 = flatten([model, 3.0], argument=True, memo=specs)
    assert s2.children[0] is s1 and len(l1) == 2 and l2 == [3.0]
    c1 = unflatten(s1, [20.0, "w"], copies)
    c2 = unflatten(s2, l2, copies)
    assert c1 == Frozen(20.0, "w") and c2[0] is c1 and c2[1] == 3.0


def test_cycle_flattens_and_unflattens():
    """A container that holds itself flattens to one spec per container, and the copy's cycle leads back to the original."""
    node = Slotted(1.0, None)
    node.tag = node
    spec, leaves = flatten(node, argument=True)
    assert leaves == [1.0] and spec.children[1] is spec
    dup = unflatten(spec, [5.0])
    assert (type(dup), dup.k, dup.tag) == (Slotted, 5.0, node)


def test_leaf_callback_gives_each_leaf_a_var_and_a_stand_in():
    """`leaf(value, path)` is called at each leaf in order with its path; the leaves list holds its stand-ins."""
    seen = []

    def leaf(value, path):
        seen.append((path, value))
        return len(seen), f"t{len(seen)}"

    x = {"w": 1.0, "m": Frozen(2.0, "s"), "xs": [3.0]}
    spec, stand_ins = flatten(x, argument=True, leaf=leaf, path="p")
    assert seen == [('p["w"]', 1.0), ('p["m"].scale', 2.0), ('p["xs"][0]', 3.0)]
    assert stand_ins == ["t1", "t2", "t3"]
    assert unflatten(spec, stand_ins) == {"w": "t1", "m": Frozen("t2", "s"), "xs": ["t3"]}


def test_tangent_of_puts_derivatives_in_the_shape_of_the_argument():
    """Containers keep their types, objects become Tangents, unreached leaves ZeroTangent and the rest NoTangent."""
    x = {"m": Frozen(2.0, "s"), "t": (3.0, 4.0), "name": "n", "nt": Pair(5.0, 6.0)}
    spec, _ = flatten(x, argument=True, leaf=lambda value, path: (path, None), path="x")
    derivative = {'x["m"].scale': 20.0, 'x["t"][0]': 30.0, 'x["nt"][1]': 60.0}
    assert tangent_of(spec, derivative.get, ()) == {
        "m": Tangent(Frozen, scale=20.0, offset=NoTangent()), "t": (30.0, ZeroTangent()),
        "name": NoTangent(), "nt": Pair(ZeroTangent(), 60.0)}


def test_flatten_cotangent_splits_a_seed_along_a_result_spec():
    """A structured seed splits into one entry per result leaf, ZeroTangent where it leaves one out."""
    spec, _ = flatten({"a": (1.0, 2.0), "g": Tangent(Frozen, scale=1.0, offset=2.0)})
    seed = {"a": (10.0, ZeroTangent()), "g": Tangent(Frozen, offset=3.0)}
    assert flatten_cotangent(spec, seed, "f") == [10.0, ZeroTangent(), ZeroTangent(), 3.0]
    assert flatten_cotangent(spec, {"g": ZeroTangent()}, "f") == [ZeroTangent()] * 4
    with pytest.raises(SeedError, match=r"f returned a tuple of 2; the seed must be a tuple or list of 2"):
        flatten_cotangent(spec, {"a": (1.0,)}, "f")


def test_ordered_dict_defaultdict_and_deque_are_differentiated_and_keep_their_types():
    """OrderedDict, defaultdict and deque arguments are walked like dict and list, and their gradients keep the type."""
    od = collections.OrderedDict([("b", 2.0), ("a", 3.0)])
    dd = collections.defaultdict(float, {"a": 3.0})
    dq = collections.deque([2.0, np.array([1.0, 2.0])], maxlen=5)
    _, (_, g_od, g_dd, g_dq) = grad(lambda o, d, q: o["a"] * o["b"] + d["a"] ** 2 + q[0] * np.sum(q[1]),
                                    od, dd, dq)
    assert type(g_od) is collections.OrderedDict and list(g_od.items()) == [("b", 3.0), ("a", 2.0)]
    assert type(g_dd) is collections.defaultdict and g_dd.default_factory is float and g_dd == {"a": 6.0}
    assert type(g_dq) is collections.deque and g_dq.maxlen == 5 and g_dq[0] == 3.0
    np.testing.assert_array_equal(g_dq[1], [2.0, 2.0])
    check_grad(lambda o: o["a"] * np.sin(o["b"]), od)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("value, message", [
    ({1.0, 2.0}, "a set of numbers, which has no order to give a gradient in and merges equal values; pass a list"),
    (frozenset({1.0}), "a frozenset of numbers"),
    (np.array([1.0, 2.0], dtype=object), "an object array of numbers, which tapegrad cannot trace; pass x.astype"),
    (lambda: np.matrix([[1.0, 2.0]]), "an np.matrix, whose \\* is a matrix product where a traced array's is elementwise"),
    (np.ma.array([1.0, 2.0], mask=[0, 1]), "a masked array: its mask would be ignored by the gradient"),
    ([np.ma.array([1.0])], "a masked array"),
])
def test_arguments_that_would_lose_their_gradient_are_refused(value, message):
    """A set of floats, an object array, an np.matrix or a masked array raises naming the argument, never a NoTangent."""
    with pytest.raises(TypeError, match=r"the argument v(\[0\])? given at test_pytree.py:\d+ is " + message):
        grad(lambda v: 1.0, value() if callable(value) else value)


def test_a_cyclic_argument_is_traced_along_its_cycle_and_its_gradient_has_the_cycle():
    """A list holding itself: l[1][0] is l[0], traced (not the original float), and the tangent's l[1] is the tangent."""
    cyc = [1.0]
    cyc.append(cyc)
    value, (_, g) = grad(lambda l: l[0] * 2.0 + l[1][0] * 3.0, cyc)
    assert value == 5.0 and g[0] == 5.0 and g[1] is g
    d = {"w": 2.0}
    d["self"] = d
    value, (_, g) = grad(lambda d: d["w"] ** 2 * d["self"]["self"]["w"], d)
    assert value == 8.0 and g["w"] == 12.0 and g["self"] is g  # d/dw w³ = 3w²
    assert cyc[1] is cyc and d["self"] is d  # the arguments are untouched


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _structured_vjp(x):
    """A vector-Jacobian product of a function with a structured result: its seed goes through `build`."""
    pieces = lambda t: (np.sin(t), {"b": t ** 3})
    return gradient(pieces, x, seed=(np.array([0.5, -1.0, 2.0]), {"b": np.array([1.5, 0.3, -0.7])}))[0]


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = [(build, _structured_vjp, (np.array([0.3, -0.8, 1.1]),))]

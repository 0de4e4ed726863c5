"""Structured arguments: containers, objects and closures get gradients shaped like themselves."""
import copy
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import tapegrad
from tapegrad import NoTangent, SeedError, Tangent, ZeroTangent, check_grad, grad, gradient, pullback, trace
from tapegrad.pytree import build

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


def test_integer_array_leaf_is_not_differentiated():
    """An integer array passes through untouched and gets NoTangent()."""
    _, (_, dx, di) = grad(lambda x, idx: np.sum(x[idx]), np.ones(3), np.array([0, 2]))
    assert di is NoTangent() and dx.tolist() == [1.0, 0.0, 1.0]


def test_keyword_arguments_and_wrt():
    """Keyword arguments reach f undifferentiated unless wrt names them; wrt also picks positions."""
    def f(x, y, scale=1.0):
        return scale * x * y

    assert grad(f, 2.0, 3.0, scale=2.0) == (12.0, (ZeroTangent(), 6.0, 4.0))
    assert grad(f, 2.0, 3.0, scale=2.0, wrt=(1, "scale")) == (
        12.0, (ZeroTangent(), NoTangent(), 4.0, {"scale": 6.0}))
    assert gradient(f, 2.0, 3.0, wrt="x") == (3.0, NoTangent())


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


def test_tangent_arithmetic():
    """Tangents add, subtract, negate and scale; ZeroTangent is the identity."""
    a = Tangent(MLP, w=np.ones(2), b=1.0)
    b = Tangent(MLP, w=np.ones(2), c=2.0)
    s = a + b
    assert s == Tangent(MLP, w=2 * np.ones(2), b=1.0, c=2.0)
    assert 2 * a == Tangent(w=2 * np.ones(2), b=2.0)
    assert a + ZeroTangent() is a and (a - a) == Tangent(w=np.zeros(2), b=0.0)
    assert -a == Tangent(w=-np.ones(2), b=-1.0)

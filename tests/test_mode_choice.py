"""`jacobian`, `hessian` and `hvp` choose their mode from the shapes when none is given, and the
chosen mode gives the numbers every mode gives."""
import numpy as np
import pytest

import tapegrad
from tapegrad.dual import Dual
from tapegrad.second_order import choose_mode


def counting(f):
    """`f`, with the kinds of argument it was called with ("dual" or "traced") in `.calls`."""
    def g(x):
        g.calls.append("dual" if isinstance(x, Dual) else "traced")
        return f(x)
    g.calls = []
    return g


def test_jacobian_of_a_wide_function_is_reverse():
    """Five inputs, two outputs: one recording, two pullbacks; f runs once."""
    f = counting(lambda x: np.array([np.sum(x ** 2), np.prod(x)]))
    x = np.arange(1.0, 6.0)
    J = tapegrad.jacobian(f, x)
    assert f.calls == ["traced"]
    np.testing.assert_allclose(J, tapegrad.jacobian(f, x, mode="fwd"))


def test_jacobian_of_a_tall_function_goes_forward_after_one_recording():
    """Two inputs, five outputs: the recording shows the output's size, then one dual pass per input."""
    f = counting(lambda x: np.arange(5.0) * x[0] * x[1])
    x = np.array([2.0, 3.0])
    J = tapegrad.jacobian(f, x)
    assert f.calls == ["traced", "dual", "dual"]
    np.testing.assert_allclose(J, tapegrad.jacobian(f, x, mode="rev"))


def test_jacobian_of_one_input_entry_is_one_dual_pass():
    f = counting(lambda x: np.stack([np.sin(x), np.cos(x)]))
    J = tapegrad.jacobian(f, np.array([0.5]))
    assert f.calls == ["dual"]
    np.testing.assert_allclose(J, [[[np.cos(0.5)]], [[-np.sin(0.5)]]])


def test_jacobian_of_a_structure_chooses_too():
    """A dict argument and a tuple result: the choice is made on the flattened sizes."""
    J = tapegrad.jacobian(lambda p: (p["a"] * p["b"], p["a"] + np.zeros(4)), {"a": 2.0, "b": np.ones(2)})
    np.testing.assert_allclose(J[0]["b"], 2 * np.eye(2))
    np.testing.assert_allclose(J[1]["a"], np.ones(4))


def chain(v):
    x, c = v[0], v[1]
    for _ in range(50):
        x = np.sin(x) * c + 0.1 * x
    return x


def test_scalar_program_of_two_inputs_goes_forward_over_reverse():
    """Every value a scalar, two directions: forward over reverse, for hessian and hvp."""
    x = np.array([0.3, 1.2])
    assert choose_mode(chain, x, 2) == "fwd-rev"
    assert choose_mode(chain, x, 3) == "rev-rev"
    np.testing.assert_allclose(tapegrad.hessian(chain, x), tapegrad.hessian(chain, x, mode="rev"), rtol=1e-12)
    np.testing.assert_allclose(tapegrad.hvp(chain, x, np.array([1.0, -1.0])),
                               tapegrad.hvp(chain, x, np.array([1.0, -1.0]), mode="rev"), rtol=1e-12)


def test_array_program_goes_reverse_over_reverse():
    """A program that computes arrays: reverse over reverse, whatever the number of inputs."""
    def f(t):
        return np.sum(np.tanh(np.outer(np.arange(4.0), t)) ** 2)

    x = np.array([0.2, -0.4])
    assert choose_mode(f, x, 2) == "rev-rev"
    np.testing.assert_allclose(tapegrad.hessian(f, x), tapegrad.hessian(f, x, mode="fwd"), rtol=1e-10)


@pytest.mark.parametrize("x", [0.7, (0.7, 1.1), {"a": 0.7}])
def test_hessian_auto_takes_every_kind_of_point(x):
    """Floats, tuples and dicts go through the choice as through the modes."""
    f = (lambda p: np.sin(p) ** 2) if isinstance(x, float) else (
        lambda p: np.sin(p[0]) * p[1] if isinstance(p, tuple) else np.sin(p["a"]) ** 2)
    auto, rev = tapegrad.hessian(f, x), tapegrad.hessian(f, x, mode="rev")
    assert repr(auto) == repr(rev)


A = np.array([[1.0, 2.0, 0.5, 0.0, -1.0], [0.0, 3.0, 1.0, 2.0, 0.0], [4.0, 0.0, -2.0, 1.0, 0.5],
              [1.0, 1.0, 0.0, 0.5, 2.0], [0.0, -3.0, 1.5, 0.0, 1.0]])


def test_forward_over_forward_hessian_takes_half_the_pairs_of_directions():
    """``mode="fwd-fwd"``: one nested dual pass per pair of directions j >= i (15 of 25 for five
    entries), the rest by symmetry; the closed form (A + Aᵀ)/2 - diag(sin x) of
    ``x·Ax/2 + Σ sin x``, on an array and on a structure of a number and an array."""
    f = counting(lambda x: 0.5 * x @ A @ x + np.sum(np.sin(x)))
    x = np.array([0.3, -0.2, 0.9, 1.4, -0.6])
    H = tapegrad.hessian(f, x, mode="fwd-fwd")
    assert f.calls == ["dual"] * 15
    np.testing.assert_allclose(H, (A + A.T) / 2 - np.diag(np.sin(x)), rtol=1e-13, atol=1e-14)

    g = counting(lambda p: f(np.concatenate([[p["a"]], p["b"]])))
    p = {"a": 0.3, "b": x[1:]}
    Hp = tapegrad.hessian(g, p, mode="fwd-fwd")
    assert len(g.calls) == 15  # (a dict of dual values)
    assert Hp.keys() == {"a", "b"} and Hp["a"].keys() == Hp["b"].keys() == {"a", "b"}
    np.testing.assert_allclose(Hp["b"]["b"], H[1:, 1:], rtol=1e-13)
    np.testing.assert_allclose(Hp["a"]["b"], H[0, 1:], rtol=1e-13)
    np.testing.assert_allclose(Hp["b"]["a"], H[1:, 0], rtol=1e-13)
    assert np.shape(Hp["a"]["a"]) == () and np.isclose(Hp["a"]["a"], H[0, 0], rtol=1e-13)

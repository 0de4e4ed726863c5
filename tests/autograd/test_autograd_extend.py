"""tapegrad.autograd.extend, misc, scipy and builtins: autograd's ways of declaring derivatives,
flattening, optimizing and convolving, and tapegrad.optim, the native home of the last two."""
import numpy as onp
import pytest

import tapegrad
import tapegrad.autograd.numpy as np
from tapegrad.autograd import grad, jacobian, make_jvp
from tapegrad.autograd.builtins import isinstance as ag_isinstance
from tapegrad.autograd.builtins import type as ag_type
from tapegrad.autograd.extend import (
    VSpace,
    def_linear,
    defjvp,
    defjvp_argnum,
    defvjp,
    defvjp_argnum,
    defvjp_argnums,
    notrace_primitive,
    primitive,
)
from tapegrad.autograd.misc import flatten
from tapegrad.autograd.misc.optimizers import adam, rmsprop, sgd, unflatten_optimizer
from tapegrad.autograd.scipy.signal import convolve
from tapegrad.optim import flatten as native_flatten
from _autograd_fixtures import restore_rule_tables  # noqa: F401  (autouse: the rule tables restored after each test)

X = onp.array([0.4, -1.2, 2.0])


def make_scale():
    """A fresh primitive ``scale(x, a) = a * x`` (a registry entry per test)."""
    @primitive
    def scale(x, a):
        return a * x
    return scale


def test_defvjp_takes_one_maker_per_argument():
    """defvjp(f, maker_x, maker_a): each maker gives its argument's tangent."""
    scale = make_scale()
    defvjp(scale, lambda ans, x, a: lambda g: g * a, lambda ans, x, a: lambda g: np.sum(g * x))
    assert grad(lambda a: np.sum(scale(X, a)))(2.0) == pytest.approx(onp.sum(X))
    onp.testing.assert_allclose(grad(lambda x: np.sum(scale(x, 2.0)))(X), 2.0 * onp.ones(3))


def test_defvjp_argnums_keyword_and_a_missing_argument_raises():
    """defvjp(..., argnums=[1]) covers `a` only; differentiating in `x` raises NoRuleError naming it."""
    scale = make_scale()
    defvjp(scale, lambda ans, x, a: lambda g: np.sum(g * x), argnums=[1])
    assert grad(lambda a: np.sum(scale(X, a)))(2.0) == pytest.approx(onp.sum(X))
    with pytest.raises(tapegrad.NoRuleError, match="wrt argnum 0"):
        grad(lambda x: np.sum(scale(x, 2.0)))(X)


def test_defvjp_argnum_and_argnums():
    """defvjp_argnum's maker is told the argument; defvjp_argnums' gives every tangent at once."""
    scale = make_scale()
    defvjp_argnum(scale, lambda i, ans, args, kw: (lambda g: g * args[1]) if i == 0 else (lambda g: np.sum(g * args[0])))
    assert grad(lambda a: np.sum(scale(X, a)))(3.0) == pytest.approx(onp.sum(X))
    scale2 = make_scale()
    defvjp_argnums(scale2, lambda nums, ans, args, kw: lambda g: (g * args[1], np.sum(g * args[0])))
    onp.testing.assert_allclose(grad(lambda x: np.sum(scale2(x, 3.0)))(X), 3.0 * onp.ones(3))


def test_defjvp_and_def_linear_give_forward_mode():
    """defjvp's functions, "same" for a linear argument, and def_linear drive make_jvp."""
    scale = make_scale()
    defjvp(scale, "same", lambda g, ans, x, a: g * x)
    assert make_jvp(lambda a: scale(X, a))(2.0)(1.0)[1] == pytest.approx(X)
    scale2 = make_scale()
    defjvp_argnum(scale2, lambda i, g, ans, args, kw: g * args[1] if i == 0 else g * args[0])
    onp.testing.assert_allclose(make_jvp(lambda x: scale2(x, 2.0))(X)(onp.ones(3))[1], 2.0 * onp.ones(3))

    @primitive
    def bilinear(x, y):  # linear in each argument, as def_linear asks
        return 2.0 * x * y

    def_linear(bilinear)
    onp.testing.assert_allclose(make_jvp(lambda x: bilinear(x, X))(X)(onp.ones(3))[1], 2.0 * X)
    onp.testing.assert_allclose(grad(lambda y: np.sum(bilinear(X, y)))(X), 2.0 * X)


def test_a_primitive_without_a_vjp_raises():
    """A primitive never given a vjp raises NoRuleError naming defvjp."""
    scale = make_scale()
    with pytest.raises(tapegrad.NoRuleError, match="defvjp"):
        grad(lambda a: np.sum(scale(X, a)))(2.0)


def test_notrace_primitive_has_zero_derivative():
    """A notrace_primitive runs on plain values and its result carries no derivative."""
    count = notrace_primitive(lambda x: float(onp.sum(x > 0)))
    assert grad(lambda x: np.sum(x ** 2) + count(x))(1.5) == pytest.approx(3.0)


class Vec:
    """A vector-like type of the user's own, as autograd's RKHS example has."""

    def __init__(self, coefs):
        self.coefs = coefs


def test_vspace_register_makes_a_user_type_differentiable():
    """VSpace.register(Vec): gradients with respect to a Vec are Vecs."""
    VSpace.register(Vec)
    g = grad(lambda v: np.sum(v.coefs ** 2))(Vec(X))
    assert type(g) is Vec
    onp.testing.assert_allclose(g.coefs, 2 * X)


def test_builtins_see_through_traced_values():
    """isinstance and type answer for the traced array's value, as autograd's do for boxes."""
    seen = []

    def f(x):
        seen.append((ag_isinstance(x, onp.ndarray), ag_type(x)))
        return np.sum(x)

    grad(f)(X)
    assert seen == [(True, onp.ndarray)]


def test_flatten_orders_dict_keys_and_round_trips():
    """misc.flatten takes dict entries in sorted-key order, and unflatten restores the structure."""
    value = {"b": [onp.ones(2), 3.0], "a": onp.zeros((1, 2))}
    v, unflatten = flatten(value)
    onp.testing.assert_allclose(v, [0.0, 0.0, 1.0, 1.0, 3.0])
    back = unflatten(v)
    assert back["a"].shape == (1, 2) and back["b"][1] == 3.0


def test_flatten_inside_the_objective_is_differentiated():
    """A loss that flattens its parameters has the gradient of the structure."""
    def loss(params):
        v, _ = flatten(params)
        return np.sum(v ** 2)

    g = grad(loss)({"w": X, "b": 1.0})
    onp.testing.assert_allclose(g["w"], 2 * X)
    assert g["b"] == pytest.approx(2.0)


@pytest.mark.parametrize("optimizer, kwargs", [(sgd, {"num_iters": 300}), (rmsprop, {"num_iters": 300, "step_size": 0.02}),
                                               (adam, {"num_iters": 400, "step_size": 0.05})])
def test_optimizers_minimize_a_structure_with_autograds_callback(optimizer, kwargs):
    """Each optimizer reaches the minimum of a dict-shaped quadratic, calling back with (x, i, g)."""
    target = {"w": onp.array([1.0, -2.0]), "b": 0.5}
    loss = lambda p, i: np.sum((p["w"] - target["w"]) ** 2) + (p["b"] - target["b"]) ** 2  # noqa: E731
    calls = []
    out = optimizer(grad(loss), {"w": onp.zeros(2), "b": 0.0},
                    callback=lambda x, i, g: calls.append((i, sorted(g))), **kwargs)
    onp.testing.assert_allclose(out["w"], target["w"], atol=1e-3)
    assert out["b"] == pytest.approx(0.5, abs=1e-3)
    assert calls[0] == (0, ["b", "w"]) and len(calls) == kwargs["num_iters"]


def test_optimizers_take_the_same_steps_as_autograds():
    """adam on a structure gives autograd's adam result to the last bits."""
    autograd = pytest.importorskip("autograd")
    from autograd.misc.optimizers import adam as autograd_adam
    loss = lambda p, i: np.sum(np.sin(p[0]) * p[1]) + np.sum(p[1] ** 2)  # noqa: E731
    x0 = (onp.array([0.3, 0.5]), onp.array([1.0, -1.0]))
    ours = adam(grad(loss), x0, num_iters=50, step_size=0.1)
    theirs = autograd_adam(autograd.grad(loss), x0, num_iters=50, step_size=0.1)
    for a, b in zip(ours, theirs):
        onp.testing.assert_allclose(a, b, rtol=1e-12)


def test_unflatten_optimizer_wraps_a_flat_optimizer():
    """unflatten_optimizer hands a flat optimizer flat vectors and returns the structure."""
    @unflatten_optimizer
    def plain_gd(grad, x, callback=None, num_iters=100, step_size=0.1):
        for i in range(num_iters):
            x = x - step_size * grad(x, i)
        return x

    out = plain_gd(grad(lambda p, i: np.sum((p["w"] - 1.0) ** 2)), {"w": onp.zeros(2)})
    onp.testing.assert_allclose(out["w"], 1.0, atol=1e-6)


def test_native_optim_takes_tapegrads_gradients_with_zero_markers():
    """tapegrad.optim's optimizers take tapegrad.gradient's result, ZeroTangent() parts as zeros."""
    params = {"used": onp.zeros(2), "unused": onp.ones(1), "name": "model"}
    loss = lambda p: np.sum((p["used"] - 3.0) ** 2)  # noqa: E731
    out = tapegrad.optim.adam(lambda p, i: tapegrad.gradient(loss, p)[0], params, num_iters=400, step_size=0.05)
    onp.testing.assert_allclose(out["used"], 3.0, atol=1e-3)
    onp.testing.assert_allclose(out["unused"], 1.0)
    assert out["name"] == "model"


def test_native_flatten_walks_dataclasses_and_keeps_strings():
    """tapegrad.optim.flatten takes any structure tapegrad walks and keeps non-numeric leaves."""
    import dataclasses

    @dataclasses.dataclass
    class Layer:
        w: onp.ndarray
        name: str

    v, unflatten = native_flatten([Layer(onp.ones(2), "a"), 2.0])
    onp.testing.assert_allclose(v, [1.0, 1.0, 2.0])
    back = unflatten(v * 3)
    assert back[0].name == "a" and list(back[0].w) == [3.0, 3.0] and back[1] == 6.0


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve_with_axes_and_dot_axes_matches_autograd(mode):
    """convolve over two axes summing a channel axis gives autograd's values and Jacobian."""
    autograd = pytest.importorskip("autograd")
    from autograd.scipy.signal import convolve as autograd_convolve
    rs = onp.random.RandomState(1)
    A, B = rs.randn(2, 4, 3), rs.randn(2, 3, 2)
    args = dict(axes=([1, 2], [1, 2]), dot_axes=([0], [0]), mode=mode)
    onp.testing.assert_allclose(convolve(A, B, **args), autograd_convolve(A, B, **args), atol=1e-12)
    J = jacobian(lambda b: convolve(A, b, **args))(B)
    J_ref = autograd.jacobian(lambda b: autograd_convolve(A, b, **args))(B)
    onp.testing.assert_allclose(J, J_ref, atol=1e-12)


def test_convolve_1d_is_numpys():
    """With no axes given, convolve is numpy's full convolution."""
    onp.testing.assert_allclose(convolve(onp.array([1.0, 2.0, 0.5]), onp.array([0.3, -1.0])),
                                onp.convolve([1.0, 2.0, 0.5], [0.3, -1.0]))


def test_const_graph_traces_once_replays_with_the_same_numbers_and_traces_again_on_another_branch():
    from tapegrad.autograd.misc import const_graph

    calls = []

    def f(x, scale):
        calls.append(1)
        return np.sum(np.tanh(x) * scale) if np.sum(x) > 0 else np.sum(x ** 2)

    g = const_graph(f, scale=3.0)
    first, second = onp.array([0.5, 1.0]), onp.array([1.5, -0.25])
    assert g(first) == f(first, 3.0) and len(calls) == 2  # traced once (and f itself once)
    assert g(second) == f(second, 3.0) and len(calls) == 3  # replayed: f not run again
    negative = onp.array([-1.0, -2.0])
    assert g(negative) == f(negative, 3.0) == 5.0  # the guard failed: traced again
    # differentiated through the replay, against the closed form
    assert onp.allclose(grad(g)(second), 3.0 / onp.cosh(second) ** 2)
    autograd = pytest.importorskip("autograd")
    import autograd.misc.tracers as ag_tracers
    import autograd.numpy as anp

    h = ag_tracers.const_graph(lambda x: anp.sum(anp.tanh(x) * 3.0))
    assert onp.isclose(h(second), g(second))


def test_quick_grad_check_warns_that_it_is_deprecated_and_still_checks():
    from tapegrad.autograd.util import quick_grad_check

    with pytest.warns(DeprecationWarning, match="check_grads"):
        quick_grad_check(lambda x, c: np.sum(np.sin(x) * c), X, extra_args=(2.0,))

    @primitive
    def wrong(x):
        return np.sin(x)

    defvjp(wrong, lambda ans, x: lambda g: g * np.sin(x))  # the derivative is cos, not sin
    with pytest.warns(DeprecationWarning), pytest.raises(AssertionError):
        quick_grad_check(lambda x: np.sum(wrong(x)), X)

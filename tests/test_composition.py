"""Where two capabilities meet: traced seeds, plain results, numpy as users bind it, and the
ways users run code (python -c, a piped script, the prompt).

The conformance layer (tests/conformance) runs every case through every entry point; the
tests here pin the behaviours it relies on, with closed forms and exact messages.
"""
import functools
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, SeedError, Tangent

X = np.array([0.3, -0.7, 1.2])


# --- a pullback differentiated with respect to its cotangent ---


def test_gradient_of_a_pullback_with_respect_to_its_seed_is_the_jvp():
    """back(s) with s traced by an enclosing grad: the gradient of <back(s), v> in s is J v."""
    v = np.array([1.0, 2.0, -1.0])

    def along_v(s):
        _, back = tapegrad.pullback(lambda x: np.sin(x) * x, X)
        return np.sum(back(s)[1] * v)

    jv = tapegrad.gradient(along_v, np.ones(3))[0]
    np.testing.assert_allclose(jv, (np.cos(X) * X + np.sin(X)) * v, rtol=1e-14)


def test_nested_elementwise_gradients_compose():
    """elementwise_grad(elementwise_grad(tanh)), autograd's way: a pullback seeded with ones
    inside another gradient gives the second derivative of tanh, elementwise."""
    def egrad(f):
        return lambda x: tapegrad.pullback(f, x)[1](np.ones_like(x))[1]

    t = np.tanh(X)
    np.testing.assert_allclose(egrad(egrad(np.tanh))(X), -2 * t * (1 - t ** 2), rtol=1e-12)
    d3 = tapegrad.gradient(lambda x: np.sum(egrad(egrad(np.tanh))(x)), X)[0]
    np.testing.assert_allclose(d3, -2 * (1 - t ** 2) * (1 - 3 * t ** 2), rtol=1e-12)


def test_a_traced_number_seed_through_a_cast_is_cast_as_a_plain_one():
    """A number's cotangent cast back to a float32 value: a plain seed and a seed traced by an
    enclosing grad both become numpy's float32 (np.astype takes no Python number, and failed
    on the traced one), and the traced one's gradient is the derivative."""
    def f(x):  # a float32 sum cast back to float64
        return np.sum(x.astype(np.float32) * np.float32(2.0)).astype(np.float64) * 3.0

    x = np.array([0.5, -1.0, 2.0])
    _, back = tapegrad.pullback(f, x)
    g = back(1.5)[1]
    assert g.dtype == np.float64 and np.array_equal(g, np.full(3, 9.0))

    def along_v(s):
        return np.sum(tapegrad.pullback(f, x)[1](s)[1] * np.array([1.0, 2.0, 4.0]))

    assert tapegrad.gradient(along_v, 1.5)[0] == 6.0 * 7.0
    _, back32 = tapegrad.pullback(lambda a: a.astype(np.float64) * 3.0, np.float32(0.5))
    assert type(back32(1.0)[1]) is np.float32  # a float32 argument's cotangent, from a Python number
    assert tapegrad.gradient(lambda s: back32(s)[1], 1.0)[0] == 3.0


def test_keyword_arguments_named_by_wrt_through_every_entry_point_that_takes_them():
    """f(x, *, scale, mode): grad, gradient, pullback and compiled_grad (through its tiers and
    made by a child) give the gradient of the keyword `wrt` names as their last entry, a dict,
    equal to the closed form; the keyword `wrt` does not name gets nothing. (compiled_grad's
    traced call and program dropped it.)"""
    def f(x, *, scale, mode="tanh"):
        return np.sum(np.tanh(x) if mode == "tanh" else np.sin(x)) * scale

    x, scale = np.array([0.3, -0.5]), 1.5
    dx, dscale = (1 - np.tanh(x) ** 2) * scale, np.sum(np.tanh(x))

    def check(grads, where):
        assert len(grads) == 3 and grads[0] is tapegrad.ZERO, where
        np.testing.assert_allclose(grads[1], dx, rtol=1e-14, err_msg=where)
        assert grads[2].keys() == {"scale"} and grads[2]["scale"] == pytest.approx(dscale, rel=1e-14), where

    check(tapegrad.grad(f, x, scale=scale, mode="tanh", wrt=(0, "scale"))[1], "grad")
    check((tapegrad.ZERO, *tapegrad.gradient(f, x, scale=scale, wrt=(0, "scale"))), "gradient")
    check(tapegrad.pullback(f, x, scale=scale, wrt=(0, "scale"))[1](), "pullback")
    for background in (False, True):
        g = tapegrad.compiled_grad(f, wrt=(0, "scale"), background=background)
        for call in range(7):
            check(g(x, scale=scale)[1], f"compiled_grad(background={background}), call {call + 1}")
            if call == 1:
                g.wait()
        assert g.cache_info()["hits"] >= 2


def test_keyword_arguments_reach_f_through_jvp_jacobian_hessian_and_hvp():
    """jvp, jacobian, hessian and hvp pass keyword arguments on to f, held fixed, as grad does
    (they raised "unexpected keyword argument"): the same numbers as f closed over them, in every
    mode; a keyword named like the entry point's own option (mode) is the entry point's."""
    def f(x, *, scale, kind="cube"):
        return np.sum(x ** 3 if kind == "cube" else np.sin(x)) * scale

    x, v = np.array([0.5, 1.0]), np.array([1.0, -2.0])
    closed = lambda x: f(x, scale=2.0, kind="sin")  # noqa: E731
    kw = {"scale": 2.0, "kind": "sin"}
    assert tapegrad.jvp(f, (x,), (v,), **kw) == tapegrad.jvp(closed, (x,), (v,))
    for mode in ("fwd", "rev"):
        np.testing.assert_array_equal(tapegrad.jacobian(lambda x, **k: np.sin(x) * f(x, **k), x, mode, **kw),
                                      tapegrad.jacobian(lambda x: np.sin(x) * closed(x), x, mode))
    np.testing.assert_allclose(tapegrad.hessian(f, x, **kw), np.diag(-2.0 * np.sin(x)), rtol=1e-14)
    for mode in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"):
        np.testing.assert_array_equal(tapegrad.hessian(f, x, mode, **kw), tapegrad.hessian(closed, x, mode))
        np.testing.assert_array_equal(tapegrad.hvp(f, x, v, mode, **kw), tapegrad.hvp(closed, x, v, mode))
    with pytest.raises(ValueError, match=r"hessian mode is 'auto' or one of"):
        tapegrad.hessian(lambda x, mode: np.sum(x), x, mode="sum")


def test_a_traced_seed_keeps_its_checks():
    """A traced seed of the wrong shape is refused as a plain one is, naming both shapes."""
    def bad(s):
        _, back = tapegrad.pullback(lambda x: x * 2.0, X)
        return np.sum(back(s)[1])

    with pytest.raises(SeedError, match=r"has shape \(2,\) but <lambda> returned float64\[3\]"):
        tapegrad.gradient(bad, np.ones(2))


def test_compiled_grad_with_an_array_seed_through_its_tiers():
    """compiled_grad(f)(x, seed=array) gives grad's vector-Jacobian product at every call (its
    second call traces the gradient with the seed as a traced value)."""
    cg = tapegrad.compiled_grad(lambda x: np.sin(x) * 2.0)
    seed = np.array([1.0, -1.0, 0.5])
    for _ in range(7):
        np.testing.assert_allclose(cg(X, seed=seed)[1][1], 2 * np.cos(X) * seed, rtol=1e-14)


def test_a_result_of_size_one_needs_no_seed():
    """A result of shape (1,), as scipy.optimize objectives return, is seeded with ones(1)."""
    value, (_, g) = tapegrad.grad(lambda x: np.sum(x ** 2, keepdims=True), X)
    assert value.shape == (1,)
    np.testing.assert_array_equal(g, 2 * X)
    with pytest.raises(SeedError, match=r"needs a seed"):
        tapegrad.grad(lambda x: x[:2] * 2.0, X)


# --- plain values out ---


def test_forward_mode_tangents_are_plain_ndarrays():
    """jvp of the piecewise functions hands back ndarrays, not the subclasses rules compute with."""
    for fn in (np.floor, np.sign, np.real, lambda x: np.where(x > 0, np.sqrt(np.abs(x)), 0.0),
               lambda x: np.maximum(x, 0.0)):
        y, dy = tapegrad.jvp(fn, (X,), (np.ones(3),))
        assert type(y) is np.ndarray and type(dy) is np.ndarray


def test_hvp_gives_zeros_where_no_second_order_path_reaches():
    """hvp of a linear function is zeros of x's shape in every mode, not ZeroTangent()."""
    for mode in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"):
        hv = tapegrad.hvp(lambda x: np.sum(x * 3.0), X, np.ones(3), mode=mode)
        assert type(hv) is np.ndarray
        np.testing.assert_array_equal(hv, np.zeros(3))
    assert tapegrad.hvp(lambda a: a * 3.0, 2.0, 1.0) == 0.0


def test_gradient_of_the_real_part_of_a_complex_number_is_complex():
    """d Re(z) is a complex gradient of a complex argument (1+0j), as autograd gives."""
    assert tapegrad.gradient(lambda z: np.real(z), 1.0 + 2.0j) == (1 + 0j,)
    assert type(tapegrad.gradient(lambda z: np.real(z) * 2.0, 1.0 + 2.0j)[0]) is complex


# --- arguments: partial application, structured arrays ---


def test_partial_application_gives_the_gradient_of_its_bound_values():
    """grad(partial(f, w), x): df is a Tangent holding the gradient of the bound w and keywords."""
    w = np.array([1.0, 2.0, 3.0])

    def loss(w, x, scale=1.0):
        return np.sum(w * x) * scale

    value, (df, dx) = tapegrad.grad(functools.partial(loss, w, scale=2.0), X)
    assert isinstance(df, Tangent)
    np.testing.assert_array_equal(df.args[0], 2.0 * X)
    assert df.keywords == {"scale": pytest.approx(np.sum(w * X))}
    np.testing.assert_array_equal(dx, 2.0 * w)
    tapegrad.check_grad(functools.partial(loss, w, scale=2.0), X)


@pytest.mark.parametrize("view", [np.ndarray, np.recarray])
def test_a_structured_array_argument_is_refused_with_the_fix(view):
    """A float structured or record array would silently get NoTangent: it is refused, naming its fields."""
    rec = np.zeros(3, dtype=[("a", float), ("b", float)]).view(view)
    kind = "record" if view is np.recarray else "structured"
    with pytest.raises(TypeError, match=rf"is a {kind} array \(fields a, b\).*pass its fields as a dict"):
        tapegrad.gradient(lambda r: np.sum(r["a"] * r["b"]), rec)


# --- numpy as users call it ---


def test_np_array_and_asarray_of_a_traced_value():
    """np.array(t) is a recorded copy and np.asarray(t) is t itself, in both modes."""
    def f(x):
        y = np.array(x)
        y[0] = 5.0  # a write into the copy leaves x alone
        return np.sum(np.asarray(x) * y) + np.sum(np.asanyarray(x)) + np.sum(np.array(x, ndmin=2))

    g = tapegrad.gradient(f, X)[0]
    np.testing.assert_allclose(g, np.array([5.0, 2 * X[1], 2 * X[2]]) + 2.0, rtol=1e-14)
    tapegrad.check_grad(f, X)


T = np.arange(16.0).reshape(4, 4)  # a global: plain inside f (a value f captured would be traced)


def test_an_index_computed_from_traced_values_indexes_a_plain_array():
    """T[i, i], T[i, 1] and T[i] with i = floor(x).astype(int): integers carry no derivative, so
    numpy takes their values, guarded; a compiled gradient at another index traces again."""
    def f(a):
        i = np.floor(a).astype(int)
        return np.sum(T[i, i] * a) + np.sum(T[i, 1] * a ** 2) + np.sum(T[i] @ np.ones(4)) * a[0]

    a = np.array([1.5, 2.5])
    i = np.array([1, 2])
    want = T[i, i] + 2 * a * T[i, 1] + np.array([np.sum(T[i]), 0.0])
    np.testing.assert_allclose(tapegrad.gradient(f, a)[0], want, rtol=1e-14)
    cg = tapegrad.compiled_grad(f)
    b = np.array([0.5, 3.2])
    for _ in range(6):
        np.testing.assert_allclose(cg(a)[1][1], want, rtol=1e-14)
    np.testing.assert_allclose(cg(b)[1][1], tapegrad.gradient(f, b)[0], rtol=1e-14)
    assert cg.cache_info()["retraces"] == 1
    _, tape = tapegrad.trace(f, a)
    # numpy reads the index twice for T[i, i]; one guard says what both reads assumed
    assert len(re.findall(r"guard %\d+ == array\(\[1, 2\]\)", str(tape))) == 1


def test_lists_of_traced_values_reach_numpy_functions():
    """np.append, np.dot, np.polyval, np.cumsum, np.average(weights=) take lists holding traced
    values, in both modes."""
    def f(a, b):
        return (np.sum(np.append([a, b], X) ** 2) + np.dot([a, b], [b, 1.0]) + np.polyval([a, b, 1.0], 2.0)
                + np.sum(np.cumsum([a, b]) ** 2) + np.average([a, b], weights=[b, 1.0]))

    tapegrad.check_grad(f, 0.8, -0.3)
    _, d = tapegrad.jvp(lambda a: np.sum(np.append([a, a], X)), (1.0,), (1.0,))
    assert d == 2.0


def test_a_list_given_to_a_numpy_function_that_cannot_take_it_names_the_fix():
    """A ufunc or a numpy function of a list of traced values that numpy converts itself: the
    error names the function and np.stack (np.sinc converts through np.asanyarray, which
    tapegrad sees: it works)."""
    with pytest.raises(ConcreteValueError, match=r"which would drop its gradient\. np\.sin was given a list holding traced values.*np\.stack"):
        tapegrad.gradient(lambda a, b: np.sum(np.sin([a, b])), 1.0, 2.0)
    with pytest.raises(ConcreteValueError, match=r"which would drop its gradient\. np\.sort was given a list holding traced values.*np\.stack"):
        tapegrad.gradient(lambda a, b: np.sum(np.sort((a, b))), 1.0, 2.0)
    tapegrad.check_grad(lambda a, b: np.sum(np.sinc([a, b]) ** 2), 1.2, 0.3)


BOUND = """
from numpy import mean, r_, array
import numpy as np, tapegrad
x = np.array([0.3, -0.7, 1.2])
for name, f, args in [("mean", lambda a, b: mean([a, b]), (1.0, 2.0)),
                      ("r_", lambda a, b: np.sum(r_[a, b]), (x, x)),
                      ("array", lambda a, b: np.sum(array([a, b])), (1.0, 2.0))]:
    try:
        tapegrad.gradient(f, *args)
    except tapegrad.ConcreteValueError as e:
        print(e)
"""


def test_names_bound_from_numpy_at_import_are_named_in_the_refusal(tmp_path):
    """from numpy import mean, r_, array binds numpy's own objects, which cannot see traced
    values inside a list: the refusal names the binding and the np.-prefixed call."""
    script = tmp_path / "model.py"
    script.write_text(BOUND)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines == [
        "numpy tried to turn the traced value %2::float64 into a plain array at model.py:5, which "
        "would drop its gradient. mean in <lambda> is numpy's own, bound by name when the module "
        "was imported (from numpy import mean): it cannot see traced values inside a list or an "
        "index, which numpy converts itself. Call np.mean through numpy's namespace (import numpy "
        "as np): tapegrad takes lists of traced values there while it traces",
        "numpy tried to turn the traced value %2::float64[3] into a plain array at model.py:6, "
        "which would drop its gradient. r_ in <lambda> is numpy's own, bound by name when the "
        "module was imported (from numpy import r_): it cannot see traced values inside a list or "
        "an index, which numpy converts itself. Call np.r_ through numpy's namespace (import numpy "
        "as np): tapegrad takes lists of traced values there while it traces",
        "numpy tried to turn the traced value %2::float64 into a plain array at model.py:7, which "
        "would drop its gradient. array in <lambda> is numpy's own, bound by name when the module "
        "was imported (from numpy import array): it turns traced values into a plain array, which "
        "drops their derivative. Call np.array through numpy's namespace (import numpy as np): "
        "tapegrad records np.array([...]) of traced values as np.stack of them",
    ]


# --- second order: modes and arguments ---


def test_hessian_in_every_combination_of_modes():
    """hessian(f, x, mode="outer-inner") gives the same matrix in all four combinations."""
    f = lambda x: x[0] ** 2 * x[1] + np.sin(x[1]) * x[0]  # noqa: E731
    x = np.array([1.0, 2.0])
    want = np.array([[2 * x[1], 2 * x[0] + np.cos(x[1])], [2 * x[0] + np.cos(x[1]), -np.sin(x[1]) * x[0]]])
    for mode in ("rev", "fwd", "rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"):
        np.testing.assert_allclose(tapegrad.hessian(f, x, mode=mode), want, rtol=1e-13)


def test_hessian_of_several_arguments_says_how_to_pass_them():
    """hessian(f, 1.0, 2.0) and jacobian(f, 1.0, 2.0): the second number lands in the place of
    the mode; the error says to pass the arguments as one tuple, and a wrong mode lists the modes."""
    with pytest.raises(TypeError, match=r"hessian at .* takes one point x .* it was given float64 "
                                        r"after x\. .* hessian\(lambda xs: f\(\*xs\), \(x1, x2, \.\.\.\)\)"):
        tapegrad.hessian(lambda a, b: a * b, 1.0, 2.0)
    with pytest.raises(ValueError, match=r"hvp mode is 'auto' or one of 'rev', 'fwd', 'rev-rev'"):
        tapegrad.hvp(lambda a: a * a, 1.0, 1.0, mode="backward")
    # jacobian the same (it said "jacobian mode is 'fwd', 'rev' or None ..., not 2.0")
    with pytest.raises(TypeError, match=r"^jacobian at test_composition\.py:\d+ takes one point x .* it was given "
                                        r"float64 after x\. .* jacobian\(lambda xs: f\(\*xs\), \(x1, x2, \.\.\.\)\)$"):
        tapegrad.jacobian(lambda a, b: a * b, 1.0, 2.0)
    with pytest.raises(ValueError, match=r"^jacobian mode is 'fwd', 'rev' or None \(chosen from the shapes\), not 'up'$"):
        tapegrad.jacobian(np.sin, 1.0, "up")


def test_a_floating_point_error_in_a_pullback_names_the_derivative():
    """Under np.errstate(all="raise") the sweep's FloatingPointError names the derivative that
    met it and how to get inf instead."""
    with np.errstate(all="raise"), pytest.raises(
            FloatingPointError, match=r"divide by zero encountered in divide in the derivative of "
                                      r"numpy\.sqrt .*np\.errstate\(all=\"warn\"\)"):
        tapegrad.gradient(lambda a: np.sum(np.sqrt(a)), np.array([0.0, 1.0]))


# --- the ways users run code ---

WARNS = textwrap.dedent("""
    import numpy as np, tapegrad
    print(tapegrad.gradient(lambda a: np.sum(np.log(a)), np.array([0.0, 1.0])))
""")


@pytest.mark.parametrize("how", ["-c", "stdin", "prompt"])
def test_a_warning_inside_a_rule_reaches_the_user_however_python_runs(how):
    """numpy's warning inside a rule points at the user's line under python -c, a piped
    script and the interactive prompt (no ImportError from the warning machinery)."""
    if how == "-c":
        run = subprocess.run([sys.executable, "-c", WARNS], capture_output=True, text=True)
    else:
        run = subprocess.run([sys.executable, "-", *(["-i"] if how == "prompt" else [])] if how == "stdin"
                             else [sys.executable, "-i"], input=WARNS, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "(array([inf,  1.]),)" in run.stdout
    assert "RuntimeWarning: divide by zero encountered in the derivative of log" in run.stderr
    assert "ImportError" not in run.stderr

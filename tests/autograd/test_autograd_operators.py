"""autograd's differential operators under tapegrad.autograd: each call of the table gives what
central differences, tapegrad's native entry point and (where installed) autograd itself give."""
import numpy as onp
import pytest

import tapegrad
import tapegrad.autograd as ag
import tapegrad.autograd.numpy as np
from tapegrad.autograd.test_util import check_grads, combo_check
from _autograd_fixtures import restore_rule_tables  # noqa: F401  (autouse: the rule tables restored after each test)

X = onp.array([0.3, -0.7, 1.1])
V = onp.array([1.0, -2.0, 0.5])
M = onp.array([[1.0, 0.5, -0.2], [0.3, 2.0, 0.1]])


def f_scalar(x):
    return np.sum(np.sin(x) * x ** 2) + np.prod(np.cos(x))


def f_vector(x):
    return np.tanh(M @ x) * x[0]


def f_two(a, b):
    return np.sum(a * np.exp(b)) + a[0] * b[1] ** 2


def num_grad(f, x, eps=1e-6):
    """Central differences of a scalar function of an array."""
    out = onp.zeros_like(x)
    for i in range(x.size):
        e = onp.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def num_jac(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = onp.zeros_like(x)
        e.flat[i] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return onp.stack(cols, axis=-1)


# (name, layer call, native call, numeric reference, autograd call given the autograd module)
TABLE = [
    ("grad", lambda: ag.grad(f_scalar)(X), lambda: tapegrad.gradient(f_scalar, X)[0],
     lambda: num_grad(f_scalar, X), lambda A: A.grad(f_scalar)(X)),
    ("grad_argnum", lambda: ag.grad(f_two, 1)(X, V), lambda: tapegrad.gradient(f_two, X, V)[1],
     lambda: num_grad(lambda b: f_two(X, b), V), lambda A: A.grad(f_two, 1)(X, V)),
    ("grad_argnums", lambda: onp.concatenate(ag.grad(f_two, (0, 1))(X, V)),
     lambda: onp.concatenate(tapegrad.gradient(f_two, X, V)),
     lambda: onp.concatenate([num_grad(lambda a: f_two(a, V), X), num_grad(lambda b: f_two(X, b), V)]),
     lambda A: onp.concatenate(A.grad(f_two, (0, 1))(X, V))),
    ("value_and_grad", lambda: ag.value_and_grad(f_scalar)(X)[1], lambda: tapegrad.grad(f_scalar, X)[1][1],
     lambda: num_grad(f_scalar, X), lambda A: A.value_and_grad(f_scalar)(X)[1]),
    ("elementwise_grad", lambda: ag.elementwise_grad(np.tanh)(X),
     lambda: tapegrad.gradient(np.tanh, X, seed=onp.ones(3))[0], lambda: 1 - onp.tanh(X) ** 2,
     lambda A: A.elementwise_grad(A.numpy.tanh)(X)),
    ("jacobian", lambda: ag.jacobian(f_vector)(X), lambda: tapegrad.jacobian(f_vector, X),
     lambda: num_jac(f_vector, X), lambda A: A.jacobian(f_vector)(X)),
    ("hessian", lambda: ag.hessian(f_scalar)(X), lambda: tapegrad.hessian(f_scalar, X),
     lambda: num_jac(lambda x: tapegrad.gradient(f_scalar, x)[0], X), lambda A: A.hessian(f_scalar)(X)),
    ("hessian_of_a_vector_result", lambda: ag.hessian(f_vector)(X),
     lambda: tapegrad.jacobian(lambda x: tapegrad.jacobian(f_vector, x), X),
     lambda: num_jac(lambda x: tapegrad.jacobian(f_vector, x), X), lambda A: A.hessian(f_vector)(X)),
    ("hessian_vector_product", lambda: ag.hessian_vector_product(f_scalar)(X, V),
     lambda: tapegrad.hvp(f_scalar, X, V), lambda: num_jac(lambda x: tapegrad.gradient(f_scalar, x)[0], X) @ V,
     lambda A: A.hessian_vector_product(f_scalar)(X, V)),
    ("make_hvp", lambda: ag.make_hvp(f_scalar)(X)[0](V), lambda: tapegrad.hvp(f_scalar, X, V),
     lambda: num_jac(lambda x: tapegrad.gradient(f_scalar, x)[0], X) @ V,
     lambda A: A.make_hvp(f_scalar)(X)[0](V)),
    ("make_vjp", lambda: ag.make_vjp(f_vector)(X)[0](M[:, 0]),
     lambda: tapegrad.gradient(f_vector, X, seed=M[:, 0])[0], lambda: M[:, 0] @ num_jac(f_vector, X),
     lambda A: A.make_vjp(f_vector)(X)[0](M[:, 0])),
    ("vector_jacobian_product", lambda: ag.vector_jacobian_product(f_vector)(X, M[:, 0]),
     lambda: tapegrad.gradient(f_vector, X, seed=M[:, 0])[0], lambda: M[:, 0] @ num_jac(f_vector, X),
     lambda A: A.vector_jacobian_product(f_vector)(X, M[:, 0])),
    ("make_jvp", lambda: ag.make_jvp(f_vector)(X)(V)[1], lambda: tapegrad.jvp(f_vector, (X,), (V,))[1],
     lambda: num_jac(f_vector, X) @ V, lambda A: A.make_jvp(f_vector)(X)(V)[1]),
    ("deriv", lambda: ag.deriv(np.sin)(X), lambda: tapegrad.jvp(np.sin, (X,), (onp.ones(3),))[1],
     lambda: onp.cos(X), lambda A: A.deriv(A.numpy.sin)(X)),
    ("make_ggnvp", lambda: ag.make_ggnvp(f_vector)(X)(V),
     lambda: tapegrad.jacobian(f_vector, X).T @ tapegrad.jacobian(f_vector, X) @ V,
     lambda: num_jac(f_vector, X).T @ num_jac(f_vector, X) @ V, lambda A: A.make_ggnvp(f_vector)(X)(V)),
    ("grad_and_aux", lambda: ag.grad_and_aux(lambda x: (f_scalar(x), x * 2))(X)[0],
     lambda: tapegrad.gradient(f_scalar, X)[0], lambda: num_grad(f_scalar, X),
     lambda A: A.grad_and_aux(lambda x: (f_scalar(x), x * 2))(X)[0]),
    ("checkpoint", lambda: ag.grad(lambda x: np.sum(ag.checkpoint(f_vector)(x) ** 2))(X),
     lambda: tapegrad.gradient(lambda x: np.sum(f_vector(x) ** 2), X)[0],
     lambda: num_grad(lambda x: onp.sum(f_vector(x) ** 2), X),
     lambda A: A.grad(lambda x: A.numpy.sum(A.checkpoint(f_vector)(x) ** 2))(X)),
    ("grad_of_grad", lambda: ag.grad(lambda x: ag.grad(lambda y: np.sin(y) * y)(x))(0.7),
     lambda: tapegrad.hessian(lambda y: np.sin(y) * y, 0.7),
     lambda: (onp.cos(0.7 + 1e-6) * (0.7 + 1e-6) + onp.sin(0.7 + 1e-6) - onp.cos(0.7 - 1e-6) * (0.7 - 1e-6)
              - onp.sin(0.7 - 1e-6)) / 2e-6,
     lambda A: A.grad(lambda x: A.grad(lambda y: A.numpy.sin(y) * y)(x))(0.7)),
]


@pytest.mark.parametrize("name, layer, native, numeric, reference", TABLE, ids=[row[0] for row in TABLE])
def test_operator_matches_differences_and_native_entry(name, layer, native, numeric, reference):
    """Each autograd-style call gives tapegrad's native answer, which central differences confirm."""
    got = layer()
    onp.testing.assert_allclose(got, native(), rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(got, numeric(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, layer, native, numeric, reference", TABLE, ids=[row[0] for row in TABLE])
def test_operator_matches_autograd(name, layer, native, numeric, reference):
    """Each call gives what autograd itself gives, to rounding."""
    autograd = pytest.importorskip("autograd")
    pytest.importorskip("autograd.numpy")
    onp.testing.assert_allclose(layer(), reference(autograd), rtol=1e-10, atol=1e-12)


def test_holomorphic_grad_is_the_complex_derivative():
    """holomorphic_grad of z³ is 3z², as autograd's."""
    assert ag.holomorphic_grad(lambda z: z ** 3)(1 + 2j) == pytest.approx(3 * (1 + 2j) ** 2)


def test_multigrad_dict_names_every_argument():
    """multigrad_dict gives one gradient per parameter, defaults included, by name and in order."""
    out = ag.multigrad_dict(lambda a, b=2.0: a * b ** 2)(3.0)
    assert list(out) == ["a", "b"] and out["a"] == pytest.approx(4.0) and out["b"] == pytest.approx(12.0)


def test_gradient_of_an_unused_argument_is_zeros_not_a_marker():
    """Where nothing flows autograd gives zeros of the argument's shape, and so does the layer."""
    g = ag.grad(lambda x, y: np.sum(x), 1)(X, V)
    assert isinstance(g, onp.ndarray) and g.shape == V.shape and not g.any()


def test_grad_of_a_vector_result_says_to_use_jacobian():
    """grad of a non-scalar result raises autograd's TypeError naming the alternatives."""
    with pytest.raises(TypeError, match="elementwise_grad"):
        ag.grad(np.sin)(X)


def test_float_of_a_traced_value_raises_tapegrads_error():
    """float() inside a differentiated function is refused with tapegrad's error, not a silent zero."""
    with pytest.raises(tapegrad.ConcreteValueError):
        ag.grad(lambda x: float(x) * x)(2.0)


def test_a_bool_result_is_refused():
    """A bool result has no derivative: the layer raises tapegrad's TypeError naming it."""
    with pytest.raises(TypeError, match="no derivative"):
        ag.grad(lambda x: x > 0)(2.0)


def test_check_grads_and_combo_check_pass_on_right_gradients():
    """check_grads and combo_check run tapegrad.check_grad in both modes, to second order."""
    check_grads(f_scalar, modes=["fwd", "rev"], order=2)(X)
    combo_check(lambda x, p: np.sum(x ** p), [0])([X + 2.0], p=[2.0, 3.0])


def test_check_grads_catches_a_wrong_rule():
    """A primitive with a wrong vjp fails check_grads."""
    @ag.extend.primitive
    def double(x):
        return 2 * x

    ag.extend.defvjp(double, lambda ans, x: lambda g: 3 * g)
    with pytest.raises(AssertionError):
        check_grads(double, modes=["rev"], order=1)(X)


def test_numpy_module_is_numpy_plus_autograds_names():
    """tapegrad.autograd.numpy answers with numpy's own objects, and has autograd's extra names."""
    import numpy
    assert np.dot is numpy.dot and np.linalg.solve is numpy.linalg.solve and np.float64 is numpy.float64
    for name in ("numpy_boxes", "numpy_wrapper", "linalg", "fft", "random", "concatenate_args",
                 "primitive", "notrace_primitive", "make_diagonal"):
        assert hasattr(np, name), name


def test_a_closure_holding_the_argument_itself_is_a_constant():
    """A closure's values are constants, as in autograd, even the very array being differentiated;
    so they are to tapegrad.gradient. tapegrad.grad differentiates the captured values too, and
    sees the one array along both paths: each share is the sum of both."""
    f = (lambda c: lambda y: np.sum(c * y))(X)
    onp.testing.assert_allclose(ag.grad(f)(X), X)
    onp.testing.assert_allclose(tapegrad.gradient(f, X)[0], X)
    df, dy = tapegrad.grad(f, X)[1]
    onp.testing.assert_allclose(dy, 2 * X)
    onp.testing.assert_allclose(df.fields["c"], 2 * X)


#: autograd's user-facing names, module by module (its internal rule helpers are left out)
PUBLIC = {
    "": ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
         "hessian_tensor_product", "hessian_vector_product", "make_vjp", "make_jvp", "make_hvp",
         "make_ggnvp", "vector_jacobian_product", "tensor_jacobian_product", "holomorphic_grad",
         "deriv", "grad_named", "multigrad_dict", "checkpoint", "primitive",
         "tuple", "list", "dict", "isinstance", "type"],
    ".differential_operators": ["make_jvp_reversemode"],
    ".core": ["make_vjp", "make_jvp", "primitive", "defvjp", "defjvp", "vspace", "VSpace", "Box"],
    ".tracer": ["getval", "isbox", "primitive", "notrace_primitive", "Box"],
    ".extend": ["primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp", "defjvp_argnum",
                "defjvp_argnums", "def_linear", "notrace_primitive", "register_notrace", "VSpace", "Box",
                "vspace", "SparseObject"],
    ".builtins": ["tuple", "list", "dict", "isinstance", "type", "SequenceBox", "DictBox"],
    ".misc": ["flatten"],
    ".misc.flatten": ["flatten", "flatten_func"],
    ".misc.optimizers": ["unflatten_optimizer", "sgd", "rmsprop", "adam"],
    ".misc.fixed_points": ["fixed_point"],
    ".test_util": ["check_grads", "check_vjp", "check_jvp", "combo_check", "scalar_close",
                   "check_equivalent", "TOL", "RTOL", "EPS"],
    ".wrap_util": ["unary_to_nary", "wraps", "get_name", "get_doc"],
    ".util": ["subvals", "subval"],
    ".numpy": ["sum", "linalg", "fft", "random", "numpy_boxes", "numpy_vspaces", "numpy_wrapper",
               "numpy_vjps", "numpy_jvps", "primitive", "notrace_primitive", "Box", "concatenate_args",
               "array_from_args", "make_diagonal", "metadata", "parse_einsum_input",
               "wrap_if_boxes_inside", "wrap_intdtype", "wrap_namespace", "c_class", "r_class", "numpy_version"],
    ".numpy.numpy_boxes": ["ArrayBox"],
    ".numpy.numpy_vspaces": ["ArrayVSpace", "ComplexArrayVSpace"],
    ".numpy.linalg": ["inv", "solve", "det", "slogdet", "cholesky", "eigh", "svd", "norm"],
    ".numpy.fft": ["fft", "ifft", "rfft", "irfft", "fft2", "fftn"],
    ".numpy.random": ["randn", "RandomState", "normal", "seed"],
    ".scipy": ["special", "stats", "linalg", "signal", "integrate"],
    ".scipy.special": ["logsumexp", "gammaln", "digamma", "polygamma", "erf", "expit", "logit",
                       "softmax", "log_softmax", "multigammaln", "gamma", "beta", "j0", "i0"],
    ".scipy.linalg": ["solve_triangular", "sqrtm", "cho_solve", "cho_factor", "solve_sylvester",
                      "solve_banded", "inv", "det"],
    ".scipy.signal": ["convolve"],
    ".scipy.integrate": ["odeint"],
    ".scipy.stats": ["norm", "t", "gamma", "beta", "chi2", "poisson", "dirichlet", "multivariate_normal"],
    ".scipy.stats.norm": ["pdf", "cdf", "sf", "logpdf", "logcdf", "logsf"],
    ".scipy.stats.t": ["pdf", "cdf", "logpdf", "logcdf"],
    ".scipy.stats.gamma": ["pdf", "cdf", "logpdf"],
    ".scipy.stats.beta": ["pdf", "cdf", "logpdf"],
    ".scipy.stats.chi2": ["pdf", "cdf", "logpdf"],
    ".scipy.stats.poisson": ["pmf", "cdf", "logpmf"],
    ".scipy.stats.dirichlet": ["pdf", "logpdf", "rvs"],
    ".scipy.stats.multivariate_normal": ["pdf", "logpdf", "entropy"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC), ids=lambda m: m or "autograd")
def test_every_public_name_of_autograd_is_there(module):
    """Each user-facing module of autograd has a counterpart under tapegrad.autograd with its names
    (and, where autograd is installed, autograd has each of them too: the list is autograd's)."""
    import importlib
    ours = importlib.import_module(f"tapegrad.autograd{module}")
    assert [n for n in PUBLIC[module] if not hasattr(ours, n)] == []
    try:
        theirs = importlib.import_module(f"autograd{module}")
    except ImportError:
        return
    not_autograds = {".test_util": {"check_vjp", "check_jvp"}, ".scipy.special": {"softmax", "log_softmax", "multigammaln"}}
    assert [n for n in PUBLIC[module] if not has(theirs, n) and n not in not_autograds.get(module, ())] == []


def has(module, name):
    """The module has `name`, or a submodule of that name can be imported."""
    import importlib
    if hasattr(module, name):
        return True
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return False
    return True

"""Rules for numpy.linalg: inv, solve, det, slogdet, matrix_power, pinv, lstsq, the factorizations and norm."""
import numpy as np
import pytest

import tapegrad
from tapegrad import NO_TANGENT, ZERO, check_grad
from tapegrad.rules.decompositions import cholesky_lower_grad

from _complex import check_complex_jvp, check_complex_rule, made_args

DTYPES = [np.float64, np.float32]
SQUARE = [(3, 3), (2, 3, 3)]
RECT = [(4, 3), (3, 4), (3, 3), (2, 4, 3)]


def _t(a):
    """The transpose of each matrix in a stack (einsum, whose rule is in this family)."""
    return np.einsum("...ij->...ji", a)


def _sym(a):
    """Symmetrize inside the function under test, so check_grad's perturbations stay symmetric."""
    return 0.5 * (a + _t(a))


def general(rng, shape, dtype):
    """A well-conditioned matrix (or stack): noise around twice the identity; a plain random one if not square."""
    if shape[-2] != shape[-1]:
        return rng.standard_normal(shape).astype(dtype)
    return (0.5 * rng.standard_normal(shape) + 2 * np.eye(shape[-1])).astype(dtype)


def spd(rng, shape, dtype):
    """A symmetric positive-definite matrix (or stack)."""
    b = rng.standard_normal(shape)
    return (b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def lopsided_spd(rng, shape, dtype):
    """Not symmetric, but either triangle with its mirror image is positive definite: what
    cholesky reads of it is a valid input, and check_grad perturbs both triangles."""
    noise = 0.3 * rng.standard_normal(shape)
    return (spd(rng, shape, np.float64) + noise).astype(dtype)


def lopsided_symmetric(rng, shape, dtype):
    """Not symmetric: a symmetric matrix with well-separated eigenvalues plus noise in both triangles."""
    return (symmetric(rng, shape, np.float64) + 0.1 * rng.standard_normal(shape)).astype(dtype)


def symmetric(rng, shape, dtype):
    """A symmetric matrix (or stack) with well-separated eigenvalues."""
    b = 0.3 * rng.standard_normal(shape)
    return (b + np.swapaxes(b, -1, -2) + np.diag(3.0 * np.arange(shape[-1]))).astype(dtype)


def _svd_parts(a, **kw):
    u, s, vh = np.linalg.svd(a, **kw)
    # squares: independent of the singular vectors' signs
    return np.matmul(np.einsum("...ij,...j->...ij", u * u, s), vh * vh)


def _svd_complement(a):
    """The projector onto the singular vectors full_matrices adds: a function of their span only."""
    u, _, vh = np.linalg.svd(a)
    k = min(a.shape[-2:])
    u2, v2 = u[..., :, k:], _t(vh[..., k:, :])
    pu, pv = np.matmul(u2, _t(u2)), np.matmul(v2, _t(v2))
    wu, wv = np.cos(np.arange(pu.size)).reshape(pu.shape), np.sin(np.arange(pv.size)).reshape(pv.shape)
    return np.sum(pu * wu) + np.sum(pv * wv)


def _eigh_parts(a, **kw):
    w, v = np.linalg.eigh(_sym(a), **kw)
    return np.einsum("...ij,...j->...ij", v * v, w)


# (function whose rule is exercised, function under test, input maker, shapes)
MATRIX = [
    (np.linalg.inv, np.linalg.inv, general, SQUARE),
    (np.linalg.det, np.linalg.det, general, SQUARE),
    (np.linalg.slogdet, lambda a: np.linalg.slogdet(a)[1], general, SQUARE),
    (np.linalg.slogdet, lambda a: np.linalg.slogdet(-a)[0] * np.linalg.slogdet(a)[1], general, SQUARE),
    (np.linalg.cholesky, lambda a: np.linalg.cholesky(_sym(a)), spd, SQUARE),
    (np.linalg.cholesky, lambda a: np.linalg.cholesky(_sym(a), upper=True), spd, SQUARE),
    (np.linalg.eigh, lambda a: np.linalg.eigh(_sym(a))[0], symmetric, SQUARE),
    (np.linalg.eigh, _eigh_parts, symmetric, SQUARE),
    (np.linalg.eigh, lambda a: _eigh_parts(a, UPLO="U"), symmetric, SQUARE),
    (np.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(_sym(a)), symmetric, SQUARE),
    # on a matrix that is not symmetric: the derivative of what numpy computes, which reads one triangle
    (np.linalg.cholesky, np.linalg.cholesky, lopsided_spd, SQUARE),
    (np.linalg.cholesky, lambda a: np.linalg.cholesky(a, upper=True), lopsided_spd, SQUARE),
    (np.linalg.eigh, lambda a: np.linalg.eigh(a)[0], lopsided_symmetric, SQUARE),
    (np.linalg.eigh, lambda a: np.einsum("...ij,...j->...ij", *np.linalg.eigh(a)[::-1]) ** 2,
     lopsided_symmetric, SQUARE),
    (np.linalg.eigh, lambda a: np.linalg.eigh(a, UPLO="U")[1] ** 2, lopsided_symmetric, SQUARE),
    (np.linalg.eigvalsh, np.linalg.eigvalsh, lopsided_symmetric, SQUARE),
    (np.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(a, "U"), lopsided_symmetric, SQUARE),
    (np.linalg.svd, lambda a: np.linalg.svd(a, compute_uv=False), general, RECT),
    (np.linalg.svd, lambda a: np.linalg.svd(a)[1], general, RECT),
    (np.linalg.svd, lambda a: _svd_parts(a, full_matrices=False), general, RECT),
    (np.linalg.svd, _svd_parts, general, SQUARE),
    (np.linalg.svd, _svd_complement, general, RECT),
    (np.linalg.svd, lambda a: _svd_parts(_sym(a), hermitian=True), spd, SQUARE),
    (np.linalg.qr, lambda a: np.linalg.qr(a)[0], general, RECT),
    (np.linalg.qr, lambda a: np.linalg.qr(a)[1], general, RECT),
    (np.linalg.qr, lambda a: np.linalg.qr(a, mode="r"), general, RECT),
    (np.linalg.qr, lambda a: np.matmul(*np.linalg.qr(a)) * np.linalg.qr(a)[0][..., :1], general, [(4, 3), (2, 3, 3)]),
    (np.linalg.pinv, np.linalg.pinv, general, RECT),
    (np.linalg.pinv, lambda a: np.linalg.pinv(_sym(a), hermitian=True), spd, SQUARE),
    (np.linalg.matrix_power, lambda a: np.linalg.matrix_power(a, 0), general, SQUARE),
    (np.linalg.matrix_power, lambda a: np.linalg.matrix_power(a, 1), general, SQUARE),
    (np.linalg.matrix_power, lambda a: np.linalg.matrix_power(a, 3), general, SQUARE),
    (np.linalg.matrix_power, lambda a: np.linalg.matrix_power(a, n=-2), general, SQUARE),
]
MATRIX_CASES = [(fn, f, make, shape) for fn, f, make, shapes in MATRIX for shape in shapes]

SOLVE = [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)),
         ((2, 3, 3), (3,)), ((2, 3, 3), (3, 2)),
         ((1, 3, 3), (2, 3, 2))]

LSTSQ = [
    lambda a, b: np.linalg.lstsq(a, b)[0],
    lambda a, b: np.linalg.lstsq(a, b)[1],
    lambda a, b: np.linalg.lstsq(a, b, rcond=None)[3],
    lambda a, b: np.linalg.lstsq(a, b)[0] * np.sum(np.linalg.lstsq(a, b)[1]),
]

VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 3, 0.5, -1.5, 0]
MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]
# (shape, axis) of vector norms and of matrix norms
VECTOR_AXES = [((3,), None), ((3,), 0), ((2, 3), 0), ((2, 3), -1), ((2, 3), (1,)), ((2, 3, 2), 1)]
MATRIX_AXES = [((2, 3), None), ((2, 3, 2), (0, 1)), ((2, 3, 2), (-1, 0)), ((3, 2, 2), (2, 1))]

EXERCISED = {row[0] for row in MATRIX} | {np.linalg.solve, np.linalg.lstsq, np.linalg.norm, cholesky_lower_grad}


def _case_id(v):
    return getattr(v, "__name__", None) or str(v)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, f, make, shape", MATRIX_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(MATRIX_CASES)])
def test_matrix_rule(fn, f, make, shape, dtype, rng):
    """Each numpy.linalg function's gradient matches central differences, on matrices and stacks of them."""
    check_grad(f, make(rng, shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ashape, bshape", SOLVE)
def test_solve_rule(ashape, bshape, dtype, rng):
    """solve differentiates in A and b: b a vector or a matrix, A batched, batch axes broadcast."""
    a, b = general(rng, ashape, dtype), rng.standard_normal(bshape).astype(dtype)
    check_grad(np.linalg.solve, a, b, modes=("rev",))
    check_grad(np.linalg.solve, general(rng, ashape, dtype), rng.standard_normal(bshape).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bshape", [(5,), (5, 2)])
@pytest.mark.parametrize("f", LSTSQ)
def test_lstsq_rule(f, bshape, dtype, rng):
    """lstsq differentiates through its solution, its residuals and its singular values."""
    check_grad(f, rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal(bshape).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", VECTOR_AXES)
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=_case_id)
def test_vector_norm_rule(ord, shape, axis, keepdims, dtype, rng):
    """Vector norms of every order differentiate along any axis, with or without keepdims."""
    if ord is not None and axis is None and len(shape) > 1:
        pytest.skip("numpy: an ord without an axis is a matrix norm")
    x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)  # away from 0 and from ties
    # options are bound as defaults, not closed over: check_grad would perturb closed-over numbers
    check_grad(lambda x, o=(ord, axis, keepdims): np.linalg.norm(x, *o), x.astype(dtype))
    check_grad(lambda x, o=(ord, axis, keepdims): np.linalg.norm(x, ord=o[0], axis=o[1], keepdims=o[2]), x.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", MATRIX_AXES)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=_case_id)
def test_matrix_norm_rule(ord, shape, axis, keepdims, dtype, rng):
    """Matrix norms (Frobenius, nuclear, spectral, 1 and inf) differentiate over any pair of axes."""
    x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
    check_grad(lambda x, o=(ord, axis, keepdims): np.linalg.norm(x, ord=o[0], axis=o[1], keepdims=o[2]), x.astype(dtype))


@pytest.mark.parametrize("make", [float, np.array], ids=["python", "0d"])
def test_norm_of_scalar(make):
    """The norm of a Python float or a 0-d array is its absolute value, with gradient its sign."""
    check_grad(np.linalg.norm, make(-1.5))
    assert tapegrad.gradient(np.linalg.norm, make(-1.5)) == (-1.0,)


def test_two_norm_at_zero_is_nan():
    """At 0 the 2-norm's gradient is nan (0/0), as in autograd and JAX."""
    with np.errstate(invalid="ignore", divide="ignore"):
        (g,) = tapegrad.gradient(np.linalg.norm, np.zeros(3))
    assert np.isnan(g).all()


@pytest.mark.parametrize("ord", [1, np.inf])
def test_abs_based_norm_at_zero_is_zero(ord):
    """At 0 the 1-norm's and the inf-norm's gradients are 0: |x| contributes sign(0) = 0."""
    (g,) = tapegrad.gradient(lambda x: np.linalg.norm(x, ord), np.zeros(3))
    np.testing.assert_array_equal(g, np.zeros(3))


def test_inf_norm_splits_ties_evenly():
    """Entries tied for the largest |x| share the inf-norm's gradient equally."""
    (g,) = tapegrad.gradient(lambda x: np.linalg.norm(x, np.inf), np.array([3.0, -3.0, 1.0]))
    np.testing.assert_allclose(g, [0.5, -0.5, 0.0])


def test_slogdet_pullback_takes_zero_cotangents(rng):
    """slogdet's pullback accepts a tuple cotangent with ZERO in either place; the sign adds nothing."""
    a = general(rng, (3, 3), np.float64)
    _, back = tapegrad.rrule(np.linalg.slogdet, a)
    assert back((1.0, ZERO)) == (NO_TANGENT, ZERO)
    np.testing.assert_allclose(back((ZERO, 1.0))[1], np.linalg.inv(a).T)
    np.testing.assert_allclose(back((5.0, 1.0))[1], np.linalg.inv(a).T)


def test_tuple_results_unpack_into_traced_elements(rng):
    """slogdet, eigh, svd and qr results unpack like numpy's and each element is differentiable."""

    def f(a):
        sign, logdet = np.linalg.slogdet(a)
        w, v = np.linalg.eigh(_sym(a))
        u, s, vh = np.linalg.svd(a)
        q, r = np.linalg.qr(a)
        return sign * logdet + np.sum(w) + np.sum(s) + np.trace(r * r)

    check_grad(f, general(rng, (3, 3), np.float64))


def test_eigenvalue_gradient_is_finite_at_repeated_eigenvalues():
    """At the identity (all eigenvalues equal) the eigenvalues still have a finite gradient."""
    (g,) = tapegrad.gradient(lambda a: np.sum(np.linalg.eigh(_sym(a))[0] ** 2), np.eye(3))
    np.testing.assert_allclose(g, 2 * np.eye(3), atol=1e-12)
    (g,) = tapegrad.gradient(lambda a: np.sum(np.linalg.eigvalsh(a)), np.eye(3))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("f, lower", [
    (np.linalg.cholesky, True),
    (lambda a: np.linalg.cholesky(a, upper=True), False),
    (lambda a: np.linalg.eigh(a)[1] ** 2, True),
    (lambda a: np.linalg.eigh(a, UPLO="U")[1] ** 2, False),
    (np.linalg.eigvalsh, True),
    (lambda a: np.linalg.eigvalsh(a, UPLO="U"), False),
])
def test_one_triangle_gets_the_gradient_and_symmetrizing_opts_into_the_symmetric_one(f, lower, rng):
    """numpy reads one triangle: the other gets exactly zero, and the entries read the whole
    derivative. Symmetrizing the input inside the function gives the symmetric gradient, whose
    two triangles sum to the one-triangle gradient."""
    a = lopsided_symmetric(rng, (4, 4), np.float64) + 4 * np.eye(4)
    seed = rng.standard_normal(np.shape(f(a)))
    _, (_, g) = tapegrad.grad(f, a, seed=seed)
    unread = np.triu(g, 1) if lower else np.tril(g, -1)
    assert np.count_nonzero(unread) == 0 and np.count_nonzero(g) > 0
    read = np.tril(a) + np.tril(a, -1).T if lower else np.triu(a) + np.triu(a, 1).T
    _, (_, gs) = tapegrad.grad(lambda a: f(_sym(a)), read, seed=seed)
    np.testing.assert_array_equal(gs, gs.T)
    np.testing.assert_allclose(g, np.tril(gs + gs.T) - np.diag(np.diag(gs)) if lower
                               else np.triu(gs + gs.T) - np.diag(np.diag(gs)), rtol=1e-10, atol=1e-12)


def test_named_tuple_results_keep_their_fields_when_traced(rng):
    """res.logabsdet, res.eigenvalues, res.S and res.R work on traced values, as in numpy."""

    def f(a):
        s = _sym(a)
        return (np.linalg.slogdet(s @ s + np.eye(3)).logabsdet + np.sum(np.linalg.eigh(s).eigenvalues ** 2)
                + np.linalg.svd(a).S[0] + np.sum(np.linalg.qr(a).R ** 2))

    check_grad(f, general(rng, (3, 3), np.float64))


@pytest.mark.parametrize("triangle", [None, "lower", "upper"])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("n", [40, 150])
def test_cholesky_pullback_on_blas_agrees_with_the_traceable_form(rng, dtype, tol, triangle, n):
    """Concrete matrices take BLAS's triangular routines, traced ones and stacks the numpy form:
    both give the same cotangent, symmetric (triangle=None) or on the triangle read. From
    n = 65 the BLAS form goes a block of 64 columns at a time (150: two blocks and a narrower one)."""
    from tapegrad.rules.decompositions import _blas_ready, _cholesky_grad_blas, cholesky_grad

    a = spd(rng, (n, n), dtype)
    l, dl = np.linalg.cholesky(a), rng.standard_normal((n, n)).astype(dtype)
    assert _blas_ready(l, dl) and not _blas_ready(l[None], dl[None])
    kept = dl.copy()
    fast = _cholesky_grad_blas(l, dl, triangle)
    np.testing.assert_array_equal(dl, kept)  # the cotangent is read, not written
    # the cotangent of L's zeros is dropped, even an infinite one (no 0 * inf inside BLAS)
    np.testing.assert_array_equal(_cholesky_grad_blas(l, np.where(np.tri(n, dtype=bool), dl, np.inf), triangle), fast)
    stacked = cholesky_grad(l[None], dl[None], None, triangle)[0]  # a stack of one: the traceable form
    assert fast.dtype == dtype
    np.testing.assert_allclose(fast, stacked, rtol=tol, atol=tol * np.abs(stacked).max())
    if triangle is None:
        np.testing.assert_array_equal(fast, fast.T)
    else:
        unread = np.triu(fast, 1) if triangle == "lower" else np.tril(fast, -1)
        assert np.count_nonzero(unread) == 0
        symmetric = _cholesky_grad_blas(l, dl)
        np.testing.assert_allclose(fast, np.tril(2 * symmetric) - np.diag(np.diag(symmetric)) if triangle == "lower"
                                   else np.triu(2 * symmetric) - np.diag(np.diag(symmetric)), rtol=tol, atol=tol)


def test_compiled_cholesky_gradient_calls_the_blas_pullback(rng):
    """A compiled gradient program records the Cholesky pullback as one call (which runs on
    BLAS), not the traceable form's product and solves, and agrees with the eager gradient."""
    a = spd(rng, (80, 80), np.float64)
    w = rng.standard_normal((80, 80))

    def f(a):
        return np.sum(np.linalg.cholesky(a) * w)

    g = tapegrad.compiled_grad(f)
    for _ in range(3):  # eager, traced, then the compiled program
        got = g(a)[1][1]
    np.testing.assert_allclose(got, tapegrad.grad(f, a)[1][1], rtol=1e-12, atol=1e-12)
    assert "cholesky_lower_grad(" in g.source(a)


# --- complex values, under autograd's convention (tests/rules/_complex.py) ---

L = np.linalg


def C(*shape):
    """A maker of a random complex array."""
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def R(*shape):
    """A maker of a random real array."""
    return lambda rng: rng.standard_normal(shape)


def HPD(n, batch=()):
    """A maker of a random Hermitian positive definite matrix (cholesky's input)."""
    def make(rng):
        m = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
        return m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    return make


def _cases(rows):
    return [pytest.param(fn, makes, kwargs, id=f"{fn.__name__}-{i}") for i, (fn, makes, kwargs) in enumerate(rows)]


_ROTATION = np.array([[0.0, 2.0, 1.0], [-2.0, 0.0, 1.0], [0.5, 0.0, 3.0]])  # real, two complex eigenvalues

#: (rule's function, makers of its arguments, keyword arguments). The decompositions whose
#: outputs have a free phase (eigh, svd and eig vectors) are checked end to end below, through
#: functions that do not depend on it; their eigenvalues and singular values are checked here.
COMPLEX_TABLE = _cases([
    (L.inv, [C(3, 3)], {}),
    (L.inv, [C(2, 3, 3)], {}),
    (L.solve, [C(3, 3), C(3)], {}),
    (L.solve, [R(3, 3), C(3, 2)], {}),
    (L.solve, [C(3, 3), R(3, 2)], {}),
    (L.solve, [C(2, 3, 3), C(2, 3, 1)], {}),
    (L.det, [C(3, 3)], {}),
    (L.det, [C(2, 3, 3)], {}),
    (L.slogdet, [C(3, 3)], {}),
    (L.slogdet, [C(2, 3, 3)], {}),
    (L.slogdet, [R(3, 3)], {}),
    (L.matrix_power, [C(3, 3), 3], {}),
    (L.matrix_power, [C(2, 3, 3), -2], {}),
    (L.pinv, [C(4, 3)], {}),
    (L.pinv, [C(3, 4)], {}),
    (L.pinv, [C(2, 3, 4)], {}),
    (L.lstsq, [C(5, 3), C(5)], {}),
    (L.lstsq, [C(5, 3), R(5, 2)], {}),
    (L.lstsq, [R(5, 3), C(5)], {}),
    (L.lstsq, [C(3, 5), C(3)], {}),
    (L.cholesky, [HPD(3)], {}),
    (L.cholesky, [HPD(3)], {"upper": True}),
    (L.cholesky, [HPD(3, (2,))], {}),
    (L.eigvalsh, [C(3, 3)], {}),
    (L.eigvalsh, [C(2, 3, 3)], {"UPLO": "U"}),
    (L.svd, [C(4, 3)], {"compute_uv": False}),
    (L.svd, [C(2, 3, 4)], {"compute_uv": False}),
    (L.qr, [C(4, 3)], {}),
    (L.qr, [C(3, 3)], {}),
    (L.qr, [C(3, 4)], {}),
    (L.qr, [C(2, 4, 3)], {}),
    (L.qr, [C(4, 3)], {"mode": "r"}),
    (L.qr, [C(3, 3)], {"mode": "complete"}),
    (L.eigvals, [C(3, 3)], {}),
    (L.eigvals, [lambda rng: _ROTATION], {}),
] + [(L.norm, [C(*shape)], {"ord": o, "axis": axis}) for o in VECTOR_ORDS for shape, axis in VECTOR_AXES[::2]]
  + [(L.norm, [C(*shape)], {"ord": o, "axis": axis}) for o in MATRIX_ORDS for shape, axis in MATRIX_AXES[::2]])



@pytest.mark.parametrize("fn, makes, kwargs", COMPLEX_TABLE)
def test_complex_linalg_rule(fn, makes, kwargs, rng):
    """The dot-product test of each pullback along random complex directions."""
    check_complex_rule(fn, *made_args(makes, rng), rng=rng, kwargs=kwargs)


@pytest.mark.parametrize("fn, makes, kwargs", COMPLEX_TABLE)
def test_complex_linalg_jvp(fn, makes, kwargs, rng):
    check_complex_jvp(fn, *made_args(makes, rng), rng=rng, kwargs=kwargs)


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


def _abs2(v):
    """|v|² elementwise: real, and blind to the phase of each column."""
    return np.real(v * np.conj(v))


_W3 = np.arange(1.0, 10.0).reshape(3, 3)


def _svd_invariants(a, full):
    """Functions of the singular vectors that do not depend on their phases: U diag(c) Vh, |U|²
    and |Vh|² (one svd call: the phases of u_j and v_j are tied)."""
    u, s, vh = L.svd(a, full_matrices=full)
    k = s.shape[-1]
    return (power(np.matmul(u[..., :, :k] * np.arange(1.0, k + 1), vh[..., :k, :]))
            + np.sum(_abs2(u) * np.arange(u.shape[-1])) + np.sum(_abs2(vh) * np.arange(vh.shape[-1])))


#: real functions of a complex matrix x + i y, end to end (the eigenvectors and singular vectors
#: through functions blind to their phases)
END_TO_END = [
    pytest.param(lambda x, y: power(L.inv(x + 1j * y)), ((3, 3), (3, 3)), id="inv"),
    pytest.param(lambda x, y, b: power(L.solve(x + 1j * y, b - 1j)), ((3, 3), (3, 3), (3,)), id="solve"),
    pytest.param(lambda x, y: power(L.det(x + 1j * y)), ((3, 3), (3, 3)), id="det"),
    pytest.param(lambda x, y: power(L.slogdet(x + 1j * y).sign) + L.slogdet(x + 1j * y).logabsdet, ((3, 3), (3, 3)),
                 id="slogdet"),
    pytest.param(lambda x, y: power(L.matrix_power(x + 1j * y, 3)), ((3, 3), (3, 3)), id="matrix_power"),
    pytest.param(lambda x, y: power(L.pinv(x + 1j * y)), ((4, 3), (4, 3)), id="pinv"),
    pytest.param(lambda x, y, b: power(L.lstsq(x + 1j * y, b + 2j * b ** 2)[0]), ((5, 3), (5, 3), (5,)), id="lstsq"),
    pytest.param(lambda x, y: L.norm(x + 1j * y) + L.norm(x + 1j * y, "nuc") + L.norm(x + 1j * y, 1), ((3, 3), (3, 3)),
                 id="norm"),
    pytest.param(lambda x, y: L.norm(x + 1j * y, 3, axis=0), ((3, 2), (3, 2)), id="norm p"),
    pytest.param(lambda x, y: power(L.cholesky(x + 1j * y + 4 * np.eye(3))), ((3, 3), (3, 3)), id="cholesky"),
    pytest.param(lambda x, y: power(L.cholesky(x + 1j * y + 4 * np.eye(3), upper=True)), ((3, 3), (3, 3)),
                 id="cholesky upper"),
    pytest.param(lambda x, y: np.sum(L.eigvalsh(x + 1j * y) * np.arange(3.0)), ((3, 3), (3, 3)), id="eigvalsh"),
    pytest.param(lambda x, y: np.sum(_abs2(L.eigh(x + 1j * y).eigenvectors) * _W3), ((3, 3), (3, 3)), id="eigh |V|²"),
    pytest.param(lambda x, y: power(np.einsum("...ik,k,...jk->...ij", *(lambda w, v: (v, np.arange(3.0), np.conj(v)))(
        *L.eigh(x + 1j * y, "U")))), ((2, 3, 3), (2, 3, 3)), id="eigh V diag Vᴴ"),
    pytest.param(lambda x, y: _svd_invariants(x + 1j * y, False), ((4, 3), (4, 3)), id="svd tall"),
    pytest.param(lambda x, y: _svd_invariants(x + 1j * y, False), ((3, 4), (3, 4)), id="svd wide"),
    pytest.param(lambda x, y: _svd_invariants(x + 1j * y, True), ((4, 3), (4, 3)), id="svd tall full"),
    pytest.param(lambda x, y: _svd_invariants(x + 1j * y, True), ((2, 3, 4), (2, 3, 4)), id="svd wide full batch"),
    pytest.param(lambda x, y: power(L.qr(x + 1j * y).Q * _W3[:, :2]) + power(L.qr(x + 1j * y).R), ((3, 2), (3, 2)),
                 id="qr"),
    pytest.param(lambda x, y: power(L.eigvals(x + 1j * y)), ((3, 3), (3, 3)), id="eigvals"),
    pytest.param(lambda x: power(L.eigvals(x)), ((3, 3),), id="eigvals of a real matrix"),
    pytest.param(lambda x, y: np.sum(_abs2(L.eig(x + 1j * y).eigenvectors) * _W3) + power(L.eig(x + 1j * y)[0]),
                 ((3, 3), (3, 3)), id="eig |V|²"),
    pytest.param(lambda x: np.sum(_abs2(L.eig(x).eigenvectors) * _W3), ((3, 3),), id="eig |V|² of a real matrix"),
]



def _e2e_args(shapes, rng):
    if shapes == ((3, 3),):  # a real matrix with complex eigenvalues
        return (_ROTATION,)
    return tuple(rng.standard_normal(s) for s in shapes)


@pytest.mark.parametrize("f, shapes", END_TO_END)
def test_complex_linalg_end_to_end(f, shapes, rng):
    """Reverse mode through complex linear algebra, against central differences in x and y."""
    check_grad(f, *_e2e_args(shapes, rng), modes=("rev",))


@pytest.mark.parametrize("f, shapes", END_TO_END)
def test_complex_linalg_second_order(f, shapes, rng):
    check_grad(f, *_e2e_args(shapes, rng), order=2)


def test_slogdet_of_complex_has_the_closed_form_gradient():
    """log|det A| = Re log det A has the gradient A⁻ᵀ in autograd's convention (Re log det is
    Re(tr(A⁻¹ dA))); the phase θ = Im log det A of sign = e^{iθ}, read as Re(s̄·sign) with
    s̄ = -i conj(sign), has the gradient -i A⁻ᵀ (Im t = Re(-i t))."""
    a = np.array([[2 + 1j, 1], [0.5j, 1 - 1j]])
    _, back = tapegrad.rrule(L.slogdet, a)
    inv_t = L.inv(a).T
    np.testing.assert_allclose(tapegrad.tangents.getitem(back((0.0, 1.0)), 1), inv_t)
    sign = L.slogdet(a).sign
    # d sign = sign·i·Im t, so Re(-i conj(sign) · d sign) = Im t
    np.testing.assert_allclose(tapegrad.tangents.getitem(back((-1j * np.conj(sign), 0.0)), 1), -1j * inv_t)


def test_phase_dependent_functions_of_complex_vectors_are_refused(rng):
    """The phases of complex eigenvectors and singular vectors are LAPACK's choice: a function
    of them has no gradient, and says so."""
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    for f in [lambda a: power(L.eigh(a)[1]), lambda a: power(L.svd(a)[0]), lambda a: power(L.eig(a)[1])]:
        with pytest.raises(tapegrad.TapegradError, match=r"depends on their phases.*np.real\(v \* np.conj\(v\)\)"):
            check_grad(lambda x, y: f(x + 1j * y), a.real, a.imag, modes=("rev",))


def _hermitian(x, y):
    """A Hermitian matrix made of two real ones: (x + iy) + (x + iy)ᴴ."""
    z = x + 1j * y
    return z + np.conj(np.einsum("...ij->...ji", z))


@pytest.mark.parametrize("f", [
    lambda x, y: power(L.pinv(_hermitian(x, y), hermitian=True)),
    lambda x, y: power(np.einsum("ik,k,kj->ij", *(lambda u, s, vh: (u, np.arange(1.0, 4.0), vh))(
        *L.svd(_hermitian(x, y), hermitian=True)))),
    lambda x, y: np.sum(L.svd(_hermitian(x, y), compute_uv=False, hermitian=True) * np.arange(3.0)),
], ids=["pinv", "svd U diag(c) Vh", "svd values"])
def test_hermitian_flag_gives_the_hermitian_gradient(f, rng):
    """pinv and svd with hermitian=True of a complex Hermitian matrix: the Hermitian gradient
    (g + gᴴ)/2, right along Hermitian directions (through the Hermitian x + iy ↦ H)."""
    check_grad(f, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), modes=("rev",))


def test_sum_of_complex_eigenvalues_of_a_real_matrix_is_its_trace():
    """A rotation has complex eigenvalues: Σ Re λ = tr A, so the gradient is the identity."""
    a = np.array([[0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(tapegrad.gradient(lambda a: np.sum(np.real(L.eigvals(a))), a)[0], np.eye(2), atol=1e-12)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Each row of the matrix table at its first shape; solve, lstsq and norms of every order."""
    rng = np.random.default_rng(8)
    rows = [(fn, f, (make(rng, shapes[0], np.float64),)) for fn, f, make, shapes in MATRIX]
    rows.append((np.linalg.solve, np.linalg.solve, (general(rng, (3, 3), np.float64), rng.standard_normal((3, 2)))))
    rows += [(np.linalg.lstsq, f, (rng.standard_normal((5, 3)), rng.standard_normal((5, 2)))) for f in LSTSQ]
    x = rng.uniform(0.5, 1.5, size=(2, 3)) * np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]])
    rows += [(np.linalg.norm, lambda x, o=o: np.linalg.norm(x, o, axis=1), (x,)) for o in VECTOR_ORDS]
    rows += [(np.linalg.norm, lambda x, o=o: np.linalg.norm(x, o), (general(rng, (3, 3), np.float64),))
             for o in MATRIX_ORDS]
    # the Cholesky pullback as the primitive a traced pullback records (a function of the lower
    # triangles of L and L̄); its rule is what second derivatives through cholesky use
    l = np.linalg.cholesky(spd(rng, (3, 3), np.float64))
    rows.append((cholesky_lower_grad, lambda l, g: cholesky_lower_grad(l, g) ** 2, (l, rng.standard_normal((3, 3)))))
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()

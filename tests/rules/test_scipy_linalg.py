"""Rules for the scipy.linalg replacements in tapegrad.scipy.linalg (the replacements on their own:
tests/test_scipy.py)."""
import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad
from tapegrad.scipy import linalg as tsl

DTYPES = [np.float64, np.float32]


def _sym(a):
    """Symmetrize inside the function under test, so check_grad's perturbations stay symmetric."""
    return 0.5 * (a + np.einsum("...ij->...ji", a))


def _diag(a):
    return np.einsum("ii->i", a)


def general(rng, n=3, dtype=np.float64):
    """A well-conditioned square matrix: noise around twice the identity."""
    return (0.5 * rng.standard_normal((n, n)) + 2 * np.eye(n)).astype(dtype)


def spd(rng, n=3, dtype=np.float64):
    b = rng.standard_normal((n, n))
    return (b @ b.T + n * np.eye(n)).astype(dtype)


def lopsided_spd(rng, n=3, dtype=np.float64):
    """Not symmetric, but either triangle with its mirror image is positive definite."""
    return (spd(rng, n) + 0.3 * rng.standard_normal((n, n))).astype(dtype)


# (function whose rule is exercised, function under test, input maker); b is (3,) or (3, 2)
WITH_B = [
    (tsl.solve_triangular, lambda a, b: tsl.solve_triangular(a, b, lower=True), general),
    (tsl.solve_triangular, lambda a, b: tsl.solve_triangular(a, b), general),
    (tsl.solve_triangular, lambda a, b: tsl.solve_triangular(a, b, 1, True), general),
    (tsl.solve_triangular, lambda a, b: tsl.solve_triangular(a, b, trans="T", unit_diagonal=True), general),
    (tsl.solve_triangular, lambda a, b: tsl.solve_triangular(a, b, trans="C", lower=True, unit_diagonal=True), general),
    (tsl.cho_solve, lambda a, b: tsl.cho_solve(tsl.cho_factor(_sym(a)), b), spd),
    (tsl.cho_solve, lambda a, b: tsl.cho_solve(tsl.cho_factor(_sym(a), lower=True), b), spd),
    (tsl.cho_solve, lambda a, b: tsl.cho_solve((tsl.cholesky(_sym(a), lower=True), True), b), spd),
    (tsl.cho_solve, lambda a, b: tsl.cho_solve(tsl.cho_factor(a), b), lopsided_spd),
    (tsl.cho_solve, lambda a, b: tsl.cho_solve((tsl.cholesky(a, lower=True), True), b), lopsided_spd),
    (tsl.lu_solve, lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b), general),
    (tsl.lu_solve, lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b, trans=1), general),
    (tsl.lu_solve, lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b, 2), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b, transposed=True), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b, assume_a="gen"), general),
    (tsl.solve, lambda a, b: tsl.solve(_sym(a), b, assume_a="sym"), spd),
    (tsl.solve, lambda a, b: tsl.solve(_sym(a), b, assume_a="pos", lower=True), spd),
    (tsl.solve, lambda a, b: tsl.solve(a, b, assume_a="diagonal"), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b, assume_a="tridiagonal"), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b, assume_a="lower triangular"), general),
    (tsl.solve, lambda a, b: tsl.solve(a, b, assume_a="upper triangular", transposed=True), general),
]

MATRIX = [
    (tsl.cholesky, lambda a: tsl.cholesky(_sym(a)), spd),
    (tsl.cholesky, lambda a: tsl.cholesky(_sym(a), lower=True), spd),
    (tsl.cholesky, lambda a: tsl.cholesky(_sym(a), True), spd),
    (tsl.cho_factor, lambda a: tsl.cho_factor(_sym(a))[0], spd),
    (tsl.cho_factor, lambda a: tsl.cho_factor(_sym(a), lower=True)[0], spd),
    (tsl.cho_factor, lambda a: tsl.cho_factor(_sym(a), True)[0], spd),
    # on a matrix that is not symmetric: only the triangle LAPACK reads has a derivative
    (tsl.cholesky, tsl.cholesky, lopsided_spd),
    (tsl.cholesky, lambda a: tsl.cholesky(a, lower=True), lopsided_spd),
    (tsl.cho_factor, lambda a: tsl.cho_factor(a)[0], lopsided_spd),
    (tsl.cho_factor, lambda a: tsl.cho_factor(a, lower=True)[0], lopsided_spd),
    (tsl.lu_factor, lambda a: tsl.lu_factor(a)[0], general),
    (tsl.lu_factor, lambda a: tsl.lu_factor(a[::-1])[0], general),  # pivoting rows
    (tsl.expm, lambda a: tsl.expm(a), general),
    (tsl.expm, lambda a: tsl.expm(0.3 * a), lambda rng, dtype=np.float64: rng.standard_normal((2, 3, 3)).astype(dtype)),
]

EXERCISED = {row[0] for row in WITH_B + MATRIX}


def _ids(rows):
    return [f"{row[0].__name__}-{i}" for i, row in enumerate(rows)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bshape", [(3,), (3, 2)])
@pytest.mark.parametrize("fn, f, make", WITH_B, ids=_ids(WITH_B))
def test_solve_like_rule(fn, f, make, bshape, dtype, rng):
    """Each scipy solve differentiates in the matrix (through its factorization) and in b."""
    check_grad(f, make(rng, dtype=dtype), rng.standard_normal(bshape).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, f, make", MATRIX, ids=_ids(MATRIX))
def test_factor_rule(fn, f, make, dtype, rng):
    """Each factorization (and expm) differentiates as an array, the flag and the pivots aside."""
    check_grad(f, make(rng, dtype=dtype))


def test_triangular_solve_ignores_other_triangle(rng):
    """Only the triangle solve_triangular reads gets a gradient; the other one gets zeros."""
    a = general(rng)
    (g,) = tapegrad.gradient(lambda a: np.sum(tsl.solve_triangular(a, np.ones(3), lower=True)), a)
    np.testing.assert_array_equal(np.triu(g, 1), 0)
    np.testing.assert_allclose(np.tril(g), g)


# --- a Gaussian process's negative log likelihood ---


def _rbf(x, lengthscale, variance):
    d = np.reshape(x, (-1, 1)) - np.reshape(x, (1, -1))
    return variance * np.exp(-0.5 * d * d / (lengthscale * lengthscale))


def _gp_data(rng):
    x = np.linspace(0.0, 3.0, 6)
    return x, np.sin(2 * x) + 0.1 * rng.standard_normal(6)


def test_gp_likelihood_gradient_by_triangular_solve(rng):
    """The GP negative log likelihood through cholesky and solve_triangular has the central-difference gradient in its hyperparameters."""
    x, y = _gp_data(rng)

    def nll(lengthscale, variance, noise):
        k = _rbf(x, lengthscale, variance) + noise * np.eye(len(x))
        l = tsl.cholesky(k, lower=True)
        v = tsl.solve_triangular(l, y, lower=True)
        return 0.5 * np.dot(v, v) + np.sum(np.log(np.diag(l)))

    params = (0.7, 1.3, 0.2)
    grads = tapegrad.gradient(nll, *params)
    np.testing.assert_allclose(grads, tapegrad.ngradient(nll, *params), rtol=1e-6)
    check_grad(nll, *params)


def test_gp_likelihood_gradient_by_cho_solve(rng):
    """The same likelihood through cho_factor / cho_solve has the same gradient, also in the data."""
    x, y = _gp_data(rng)

    def nll(lengthscale, variance, noise, y):
        c, lower = tsl.cho_factor(_rbf(x, lengthscale, variance) + noise * np.eye(len(x)), lower=True)
        return 0.5 * np.dot(y, tsl.cho_solve((c, lower), y)) + np.sum(np.log(_diag(c)))

    params = (0.7, 1.3, 0.2)
    grads = tapegrad.gradient(nll, *params, y)
    np.testing.assert_allclose(grads[:3], tapegrad.ngradient(nll, *params, y)[:3], rtol=1e-6)
    check_grad(nll, *params, y)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Every row of the scipy.linalg tables; b is a (3, 2) matrix."""
    rng = np.random.default_rng(9)
    rows = [(fn, f, (make(rng), rng.standard_normal((3, 2)))) for fn, f, make in WITH_B]
    rows += [(fn, f, (make(rng),)) for fn, f, make in MATRIX]
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()

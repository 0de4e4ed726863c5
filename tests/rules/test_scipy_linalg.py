"""Rules for the scipy.linalg replacements in tapegrad.scipy.linalg (the replacements on their own:
tests/test_scipy.py)."""
import numpy as np
import pytest

import tapegrad
from tapegrad import check_grad, gradient
from tapegrad.scipy import linalg as tsl
from tapegrad.tangents import getitem

from _complex import check_complex_jvp, check_complex_rule, made_args, random_like

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


# --- complex values, under autograd's convention (tests/rules/_complex.py) ---


def C(*shape):
    """A maker of a random complex array."""
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def R(*shape):
    """A maker of a random real array."""
    return lambda rng: rng.standard_normal(shape)


def CTRI(n, lower=True):
    """A maker of a well-conditioned complex triangular matrix (the other triangle random too:
    it is never read)."""
    def make(rng):
        a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
        return a + 3 * np.eye(n)
    return make


def CHPD(n):
    """A maker of a random Hermitian positive definite matrix."""
    def make(rng):
        m = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
        return m @ m.conj().T + n * np.eye(n)
    return make


def CBAND(lower, upper, n):
    def make(rng):
        ab = rng.standard_normal((lower + upper + 1, n)) + 1j * rng.standard_normal((lower + upper + 1, n))
        ab[upper] += 4.0
        return ab
    return make


def _cases(rows):
    return [pytest.param(fn, makes, kwargs, id=f"{fn.__name__}-{i}") for i, (fn, makes, kwargs) in enumerate(rows)]


#: (rule's function, makers of its arguments, keyword arguments); lu_solve and cho_solve take a
#: factorization (a tuple): their factor's cotangent is checked by `test_complex_factor_argument`
COMPLEX_TABLE = _cases([
    (tsl.solve_triangular, [CTRI(3), C(3)], {}),
    (tsl.solve_triangular, [CTRI(3), C(3, 2)], {"lower": True}),
    (tsl.solve_triangular, [CTRI(3), R(3, 2)], {"trans": "T"}),
    (tsl.solve_triangular, [CTRI(3), C(3)], {"trans": 1, "lower": True, "unit_diagonal": True}),
    (tsl.solve_triangular, [CTRI(3), C(3, 2)], {"trans": "C", "lower": True}),
    (tsl.solve_triangular, [CTRI(3), C(3)], {"trans": 2}),
    (tsl.solve_triangular, [R(3, 3), C(3)], {"trans": "C"}),
    (tsl.cholesky, [CHPD(3)], {}),
    (tsl.cholesky, [CHPD(3)], {"lower": True}),
    (tsl.cho_factor, [CHPD(3)], {}),
    (tsl.cho_factor, [CHPD(3)], {"lower": True}),
    (tsl.cho_solve, [lambda rng: tsl.cho_factor(CHPD(3)(rng)), C(3)], {}),
    (tsl.cho_solve, [lambda rng: tsl.cho_factor(CHPD(3)(rng), lower=True), R(3, 2)], {}),
    (tsl.expm, [C(3, 3)], {}),
    (tsl.lu_factor, [C(3, 3)], {}),
    (tsl.lu_solve, [lambda rng: tsl.lu_factor(C(3, 3)(rng)), C(3)], {}),
    (tsl.lu_solve, [lambda rng: tsl.lu_factor(C(3, 3)(rng)), R(3, 2)], {"trans": 1}),
    (tsl.lu_solve, [lambda rng: tsl.lu_factor(C(3, 3)(rng)), C(3)], {"trans": 2}),
    (tsl.solve, [C(3, 3), C(3)], {}),
    (tsl.solve, [R(3, 3), C(3, 2)], {}),
    (tsl.solve, [CTRI(3), C(3)], {"assume_a": "lower triangular"}),
    (tsl.solve, [C(3, 3), C(3)], {"assume_a": "tridiagonal"}),
    (tsl.solve, [C(3, 3), C(3)], {"assume_a": "diagonal"}),
    (tsl.solve, [R(3, 3), C(3)], {"assume_a": "sym"}),
])



def _wrt(args):
    """The array arguments (a factorization's tuple is checked by `test_complex_factor_argument`)."""
    return [i for i, a in enumerate(args) if not isinstance(a, tuple)]


@pytest.mark.parametrize("fn, makes, kwargs", COMPLEX_TABLE)
def test_complex_scipy_linalg_rule(fn, makes, kwargs, rng):
    """The dot-product test of each pullback along random complex directions."""
    args = made_args(makes, rng)
    # assume_a='sym' gives a real matrix the symmetric gradient (checked in test_solve_like_rule):
    # here the complex right-hand side
    wrt = [1] if kwargs.get("assume_a") == "sym" else _wrt(args)
    check_complex_rule(fn, *args, rng=rng, kwargs=kwargs, wrt=wrt)


@pytest.mark.parametrize("fn, makes, kwargs", [p for p in COMPLEX_TABLE if p.values[0] not in (tsl.lu_solve, tsl.cho_solve)])
def test_complex_scipy_linalg_jvp(fn, makes, kwargs, rng):
    args = made_args(makes, rng)
    check_complex_jvp(fn, *args, rng=rng, kwargs=kwargs, wrt=_wrt(args))


@pytest.mark.parametrize("fn, makes, kwargs", [p for p in COMPLEX_TABLE if p.values[0] in (tsl.lu_solve, tsl.cho_solve)])
def test_complex_factor_argument(fn, makes, kwargs, rng):
    """The dot-product test for the factor inside lu_solve's (lu, piv) and cho_solve's (c, lower)."""
    (factor, flag), b = made_args(makes, rng)
    y, back = tapegrad.rrule(fn, (factor, flag), b, **kwargs)
    g = random_like(rng, y)
    c = getitem(getitem(back(g), 1), 0)
    v = random_like(rng, factor)
    h = 1e-6
    dy = (fn((factor + h * v, flag), b, **kwargs) - fn((factor - h * v, flag), b, **kwargs)) / (2 * h)
    assert np.real(np.sum(g * dy)) == pytest.approx(np.real(np.sum(c * v)), rel=1e-6, abs=1e-9)


def _transposed(z):
    return np.einsum("ij->ji", z)


@pytest.mark.parametrize("assume_a, make", [
    ("sym", lambda z: z + _transposed(z) + 6 * np.eye(3)),
    ("her", lambda z: z + np.conj(_transposed(z)) + 6 * np.eye(3)),
    ("pos", lambda z: z @ np.conj(_transposed(z)) + np.eye(3)),
])
def test_complex_symmetric_and_hermitian_solve(assume_a, make, rng):
    """A complex matrix read as symmetric (holomorphic: the symmetric gradient) or Hermitian (the
    Hermitian gradient (g + gᴴ)/2), checked along such directions, through x + iy."""
    check_grad(lambda x, y, b: power(tsl.solve(make(x + 1j * y), b - 1j * b, assume_a=assume_a)),
               rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3), modes=("rev",))


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


_EYE3 = 3 * np.eye(3)

#: real functions through complex values made of real arguments, end to end
END_TO_END = [
    pytest.param(lambda x, y, b: power(tsl.solve_triangular(x + 1j * y + _EYE3, b - 1j * b, lower=True, trans="C")),
                 id="solve_triangular"),
    pytest.param(lambda x, y, b: power(tsl.cholesky(x + 1j * y + 2 * _EYE3)), id="cholesky"),
    pytest.param(lambda x, y, b: power(tsl.cho_solve(tsl.cho_factor(x + 1j * y + 2 * _EYE3), b + 1j)), id="cho_solve"),
    pytest.param(lambda x, y, b: power(tsl.lu_solve(tsl.lu_factor(x + 1j * y + _EYE3), b + 1j, trans=2)), id="lu_solve"),
    pytest.param(lambda x, y, b: power(tsl.expm(x + 1j * y)), id="expm"),
    pytest.param(lambda x, y, b: power(tsl.solve(x + 1j * y + _EYE3, b - 2j)), id="solve"),
]



def _e2e_args(rng):
    return rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3)


@pytest.mark.parametrize("f", END_TO_END)
def test_complex_scipy_linalg_end_to_end(f, rng):
    """Reverse mode through the complex factorizations and solves, against central differences."""
    check_grad(f, *_e2e_args(rng), modes=("rev",))


@pytest.mark.parametrize("f", END_TO_END)
def test_complex_scipy_linalg_second_order(f, rng):
    check_grad(f, *_e2e_args(rng), order=2)


# --- second order: the rows of tests/rules/test_higher_order.py ---


def _order2_rows():
    """Every row of the scipy.linalg tables; b is a (3, 2) matrix."""
    rng = np.random.default_rng(9)
    rows = [(fn, f, (make(rng), rng.standard_normal((3, 2)))) for fn, f, make in WITH_B]
    rows += [(fn, f, (make(rng),)) for fn, f, make in MATRIX]
    return rows


#: (rule's function, function differentiated, float64 arguments)
ORDER2 = _order2_rows()


@pytest.mark.parametrize("assume_a, lower, dtype", [
    ("sym", False, float), ("sym", True, float), ("pos", False, float), ("her", True, complex),
    ("sym", False, complex)])
def test_solve_of_a_symmetric_kind_differentiates_the_triangle_it_reads(assume_a, lower, dtype, rng):
    """solve(a, b, assume_a='sym' / 'pos' / 'her') reads one triangle of a: on a general,
    non-symmetric a the gradient is that of the function scipy computes (central differences),
    and zero on the triangle it does not read."""
    n = 3
    m = rng.standard_normal((n, n))
    a = m @ m.T + n * np.eye(n) + 0.3 * rng.standard_normal((n, n))  # not symmetric
    b = rng.standard_normal(n)
    if dtype is complex:
        a = a + 0.2j * rng.standard_normal((n, n))
        b = b + 1j * rng.standard_normal(n)
    w = rng.standard_normal(n)
    f = lambda a: np.sum(w * np.real(tsl.solve(a, b, assume_a=assume_a, lower=lower)))  # noqa: E731
    check_grad(f, a)
    (da,) = gradient(f, a)
    unread = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    assert np.all(da[unread] == 0)

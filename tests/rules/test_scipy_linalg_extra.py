"""Rules of scipy.linalg's sqrtm, solve_sylvester and solve_banded (through the replacements in
tapegrad.scipy.linalg)."""
import numpy as np
import pytest
import scipy.linalg

import tapegrad
from tapegrad import check_grad, gradient
from tapegrad.scipy.linalg import solve_banded, solve_sylvester, sqrtm

from _complex import check_complex_jvp, check_complex_rule
from _rule_tables import DTYPES


def well_conditioned(rng, n, shift=3.0):
    return rng.standard_normal((n, n)) + shift * np.eye(n)


def spd_like(rng, n):
    """Positive definite plus a small non-symmetric part: real principal square root."""
    a = rng.standard_normal((n, n))
    return a @ a.T + np.eye(n) + 0.3 * rng.standard_normal((n, n))


def band(rng, lower, upper, n):
    ab = rng.standard_normal((lower + upper + 1, n))
    ab[upper] += 4.0  # a dominant diagonal
    return ab


#: (rule, function, input maker)
TABLE = [
    pytest.param(sqrtm, sqrtm, lambda rng: (spd_like(rng, 3),), id="sqrtm"),
    pytest.param(sqrtm, sqrtm, lambda rng: (spd_like(rng, 1),), id="sqrtm 1x1"),
    pytest.param(solve_sylvester, solve_sylvester,
                 lambda rng: (well_conditioned(rng, 3), well_conditioned(rng, 2), rng.standard_normal((3, 2))),
                 id="solve_sylvester"),
    pytest.param(solve_banded, lambda ab, b: solve_banded((1, 2), ab, b),
                 lambda rng: (band(rng, 1, 2, 5), rng.standard_normal(5)), id="solve_banded vector"),
    pytest.param(solve_banded, lambda ab, b: solve_banded((2, 0), ab, b, check_finite=False),
                 lambda rng: (band(rng, 2, 0, 4), rng.standard_normal((4, 3))), id="solve_banded matrix lower"),
    pytest.param(solve_banded, lambda ab, b: solve_banded((0, 0), ab, b),
                 lambda rng: (band(rng, 0, 0, 3), rng.standard_normal(3)), id="solve_banded diagonal"),
]

EXERCISED = {p.values[0] for p in TABLE}

_rng = np.random.default_rng(7)
#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = [(p.values[0], (lambda *xs, f=p.values[1]: np.sum(f(*xs) ** 2) / 2), p.values[2](_rng))
          for p in TABLE[::2] + TABLE[3:4]]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("rule, f, make", TABLE)
def test_rule(rule, f, make, dtype, rng):
    """Each rule matches central differences in both modes, for float64 and float32 inputs."""
    check_grad(f, *(x.astype(dtype) for x in make(rng)))


@pytest.mark.parametrize("rule, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(rule, f, args):
    """The pullbacks call the replacements again: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


def test_sqrtm_of_diagonal_closed_form():
    """For a diagonal matrix, d tr √A / dA = diag(1 / (2 √a))."""
    a = np.diag([4.0, 9.0, 16.0])
    np.testing.assert_allclose(gradient(lambda a: np.trace(sqrtm(a)), a)[0], np.diag([1 / 4, 1 / 6, 1 / 8]))


def test_sqrtm_with_complex_root_has_the_closed_form_gradient():
    """A negative eigenvalue gives a complex root: for a diagonal A, d Re tr √A / dA is
    Re diag(1 / (2 √a)), 0 for the negative one (its root i√|a| has a constant real part)."""
    a = np.diag([-4.0, 9.0])
    g = gradient(lambda a: np.real(np.trace(sqrtm(a))), a)[0]
    np.testing.assert_allclose(g, np.diag([0.0, 1 / 6]), atol=1e-12)


# --- complex values, under autograd's convention (tests/rules/_complex.py) ---


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _cband(rng, lower, upper, n):
    ab = _c(rng, lower + upper + 1, n)
    ab[upper] += 4.0
    return ab


#: (rule, function, input maker, keyword arguments): complex and mixed real/complex
COMPLEX_TABLE = [
    pytest.param(sqrtm, lambda rng: (_c(rng, 3, 3) + 3 * np.eye(3),), {}, id="sqrtm"),
    pytest.param(sqrtm, lambda rng: (np.array([[-2.0, 1.0], [0.5, 3.0]]),), {}, id="sqrtm real, complex root"),
    pytest.param(solve_sylvester, lambda rng: (_c(rng, 3, 3) + 3 * np.eye(3), _c(rng, 2, 2), _c(rng, 3, 2)), {},
                 id="solve_sylvester"),
    pytest.param(solve_sylvester, lambda rng: (well_conditioned(rng, 3), _c(rng, 2, 2) + 3 * np.eye(2),
                                               rng.standard_normal((3, 2))), {}, id="solve_sylvester mixed"),
    pytest.param(solve_banded, lambda rng: ((1, 2), _cband(rng, 1, 2, 5), _c(rng, 5)), {}, id="solve_banded"),
    pytest.param(solve_banded, lambda rng: ((2, 0), band(rng, 2, 0, 4), _c(rng, 4, 3)), {},
                 id="solve_banded real band"),
    pytest.param(solve_banded, lambda rng: ((0, 1), _cband(rng, 0, 1, 4), rng.standard_normal(4)), {},
                 id="solve_banded real b"),
]



def _wrt(args):
    return [i for i, a in enumerate(args) if not isinstance(a, tuple)]


@pytest.mark.parametrize("rule, make, kwargs", COMPLEX_TABLE)
def test_complex_rule(rule, make, kwargs, rng):
    """The dot-product test of each pullback along random complex directions."""
    args = make(rng)
    check_complex_rule(rule, *args, rng=rng, kwargs=kwargs, wrt=_wrt(args))


@pytest.mark.parametrize("rule, make, kwargs", COMPLEX_TABLE)
def test_complex_jvp(rule, make, kwargs, rng):
    args = make(rng)
    check_complex_jvp(rule, *args, rng=rng, kwargs=kwargs, wrt=_wrt(args))


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


#: real functions through complex values made of real arguments, end to end
END_TO_END = [
    pytest.param(lambda x, y: power(sqrtm(x + 1j * y + 3 * np.eye(3))), id="sqrtm"),
    pytest.param(lambda x, y: power(solve_sylvester(x + 1j * y + 3 * np.eye(3), x - 1j * y, y + 1j)), id="solve_sylvester"),
    pytest.param(lambda x, y: power(solve_banded((1, 1), x + 1j * y + np.array([[0.0], [4.0], [0.0]]),
                                    np.sum(y, axis=0) - 1j)),
                 id="solve_banded"),
]



@pytest.mark.parametrize("f", END_TO_END)
def test_complex_end_to_end(f, rng):
    """Reverse mode through complex values, against central differences in x and y."""
    check_grad(f, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), modes=("rev",))


@pytest.mark.parametrize("f", END_TO_END)
def test_complex_second_order(f, rng):
    check_grad(f, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), order=2)


def test_solve_banded_agrees_with_dense_solve(rng):
    """The gradient in b is the dense solve's, and the unread corners of ab get 0."""
    ab, b = band(rng, 1, 1, 4), rng.standard_normal(4)
    dense = np.diag(ab[1]) + np.diag(ab[0, 1:], 1) + np.diag(ab[2, :-1], -1)
    dab, db = gradient(lambda ab, b: np.sum(solve_banded((1, 1), ab, b) ** 2), ab, b)
    (ddb,) = gradient(lambda b: np.sum(np.linalg.solve(dense, b) ** 2), b)
    np.testing.assert_allclose(db, ddb, rtol=1e-12)
    assert dab[0, 0] == 0 and dab[2, -1] == 0
    np.testing.assert_allclose(scipy.linalg.solve_banded((1, 1), ab, b), np.linalg.solve(dense, b))

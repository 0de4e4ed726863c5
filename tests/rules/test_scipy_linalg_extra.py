"""Rules of scipy.linalg's sqrtm, solve_sylvester and solve_banded (through the replacements in
tapegrad.scipy.linalg)."""
import numpy as np
import pytest
import scipy.linalg

from tapegrad import check_grad, gradient
from tapegrad.scipy.linalg import solve_banded, solve_sylvester, sqrtm

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


def test_sqrtm_with_complex_root_is_refused():
    """A negative eigenvalue gives a complex root: differentiating it raises, naming the cause."""
    with pytest.raises(NotImplementedError, match="negative real axis"):
        gradient(lambda a: np.sum(sqrtm(a)), np.diag([-1.0, 2.0]))


def test_solve_banded_agrees_with_dense_solve(rng):
    """The gradient in b is the dense solve's, and the unread corners of ab get 0."""
    ab, b = band(rng, 1, 1, 4), rng.standard_normal(4)
    dense = np.diag(ab[1]) + np.diag(ab[0, 1:], 1) + np.diag(ab[2, :-1], -1)
    dab, db = gradient(lambda ab, b: np.sum(solve_banded((1, 1), ab, b) ** 2), ab, b)
    (ddb,) = gradient(lambda b: np.sum(np.linalg.solve(dense, b) ** 2), b)
    np.testing.assert_allclose(db, ddb, rtol=1e-12)
    assert dab[0, 0] == 0 and dab[2, -1] == 0
    np.testing.assert_allclose(scipy.linalg.solve_banded((1, 1), ab, b), np.linalg.solve(dense, b))

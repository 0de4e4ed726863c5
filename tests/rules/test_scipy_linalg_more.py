"""tapegrad.scipy.linalg's det, inv, pinv, eigh, eig, svd, qr, lu, lstsq, norm, logm, the structured
matrices and the Lyapunov solvers: scipy's results on plain values, the same values traced, and
gradients that match closed forms and central differences (forward and reverse, second order)."""
import warnings

import numpy as np
import pytest
import scipy.linalg

import tapegrad
from tapegrad import TapegradError, check_grad, gradient
from tapegrad.scipy import linalg as tsl

from _complex import check_complex_rule


def general(rng, n=3):
    """A well-conditioned square matrix with real, distinct eigenvalues (noise around diag(1, 2, 3))."""
    return 0.2 * rng.standard_normal((n, n)) + np.diag(np.arange(1.0, n + 1))


def spd(rng, n=3):
    b = rng.standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def tall(rng):
    return rng.standard_normal((4, 2)) + np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])


def vec(rng, n=3):
    return rng.standard_normal(n)


#: (name, function of plain arrays, input maker): the value on traced inputs equals scipy's, and
#: the gradient of Σ f² matches central differences in both modes
TABLE = [
    pytest.param(lambda a: tsl.det(a), lambda r: (general(r),), id="det"),
    pytest.param(lambda a: tsl.inv(a), lambda r: (general(r),), id="inv"),
    pytest.param(lambda a: tsl.pinv(a), lambda r: (tall(r),), id="pinv"),
    pytest.param(lambda a: tsl.pinv(a, rtol=1e-10), lambda r: (tall(r).T,), id="pinv rtol"),
    pytest.param(lambda a: tsl.eigh(a)[0], lambda r: (spd(r),), id="eigh w"),
    pytest.param(lambda a: np.abs(tsl.eigh(a, lower=False)[1]), lambda r: (spd(r),), id="eigh |V| upper"),
    pytest.param(lambda a: tsl.eigh(a, eigvals_only=True), lambda r: (general(r),), id="eigh eigvals_only"),
    pytest.param(lambda a: tsl.eigvalsh(a, lower=False), lambda r: (spd(r),), id="eigvalsh upper"),
    pytest.param(lambda a, b: tsl.eigh(a, b, eigvals_only=True), lambda r: (spd(r), spd(r)), id="eigh generalized w"),
    pytest.param(lambda a, b: np.abs(tsl.eigh(a, b)[1]), lambda r: (spd(r), spd(r)), id="eigh generalized |V|"),
    pytest.param(lambda a: np.real(tsl.eig(a)[0]), lambda r: (general(r),), id="eig w"),
    pytest.param(lambda a: np.abs(tsl.eig(a)[1]), lambda r: (general(r),), id="eig |V|"),
    pytest.param(lambda a: np.abs(tsl.eigvals(a)), lambda r: (np.array([[1.0, -2.0], [1.5, 0.5]]) + 0.1 * r.standard_normal((2, 2)),),
                 id="eigvals complex pair"),
    pytest.param(lambda a: tsl.svd(a, compute_uv=False), lambda r: (tall(r),), id="svd s"),
    pytest.param(lambda a: np.abs(tsl.svd(a, full_matrices=False)[0]), lambda r: (tall(r),), id="svd |U| economic"),
    pytest.param(lambda a: np.abs(tsl.svd(a)[2]), lambda r: (general(r),), id="svd |Vh|"),
    pytest.param(lambda a: tsl.svdvals(a), lambda r: (tall(r).T,), id="svdvals"),
    pytest.param(lambda a: tsl.qr(a)[1], lambda r: (general(r),), id="qr full R"),
    pytest.param(lambda a: tsl.qr(a, mode="economic")[0], lambda r: (tall(r),), id="qr economic Q"),
    pytest.param(lambda a: tsl.qr(a, mode="r")[0], lambda r: (tall(r),), id="qr r"),
    pytest.param(lambda a: tsl.lu(a)[1], lambda r: (general(r),), id="lu L"),
    pytest.param(lambda a: tsl.lu(a)[2], lambda r: (general(r)[::-1],), id="lu U pivoted"),
    pytest.param(lambda a: tsl.lu(a, permute_l=True)[0], lambda r: (general(r)[::-1],), id="lu permute_l"),
    pytest.param(lambda a, b: tsl.lstsq(a, b)[0], lambda r: (tall(r), vec(r, 4)), id="lstsq x"),
    pytest.param(lambda a, b: tsl.lstsq(a, b)[1], lambda r: (tall(r), vec(r, 4)), id="lstsq residues"),
    pytest.param(lambda a, b: tsl.lstsq(a, b)[0], lambda r: (general(r), r.standard_normal((3, 2))), id="lstsq square"),
    pytest.param(lambda a: tsl.norm(a), lambda r: (general(r),), id="norm"),
    pytest.param(lambda a: tsl.norm(a, 2), lambda r: (general(r),), id="norm 2"),
    pytest.param(lambda a: tsl.norm(a, 1, axis=0, keepdims=True), lambda r: (general(r),), id="norm axis"),
    pytest.param(lambda a: tsl.logm(a), lambda r: (spd(r) / 3,), id="logm"),
    pytest.param(lambda a: tsl.logm(a), lambda r: (general(r),), id="logm nonsymmetric"),
    pytest.param(lambda a: tsl.logm(a, disp=False)[0], lambda r: (general(r),), id="logm disp=False"),
    pytest.param(lambda a, b: tsl.block_diag(a, b, 2.0), lambda r: (general(r, 2), vec(r)), id="block_diag"),
    pytest.param(lambda c, r_: tsl.toeplitz(c, r_), lambda r: (vec(r), vec(r, 4)), id="toeplitz"),
    pytest.param(lambda c: tsl.toeplitz(c), lambda r: (r.standard_normal((2, 3)),), id="toeplitz batched"),
    pytest.param(lambda c: tsl.circulant(c), lambda r: (vec(r, 4),), id="circulant"),
    pytest.param(lambda c, r_: tsl.hankel(c, r_), lambda r: (vec(r), vec(r, 2)), id="hankel"),
    pytest.param(lambda c: tsl.hankel(c), lambda r: (vec(r),), id="hankel r=None"),
    pytest.param(lambda a, q: tsl.solve_continuous_lyapunov(a, q), lambda r: (-general(r), vec(r, 9).reshape(3, 3)),
                 id="solve_continuous_lyapunov"),
    pytest.param(lambda a, q: tsl.solve_discrete_lyapunov(a, q), lambda r: (general(r) / 5, vec(r, 9).reshape(3, 3)),
                 id="solve_discrete_lyapunov"),
]

#: the primitive the new functions add (the others are numpy.linalg's ops, exercised in test_linalg)
EXERCISED = {tsl.logm}

_rng = np.random.default_rng(11)
#: (rule recorded, function to differentiate twice, args at a smooth point): kept few, the conformance
#: layer runs each through every entry point
ORDER2 = [
    (tsl.logm, lambda a: np.sum(tsl.logm(a) ** 2) / 2, (general(_rng),)),
    (np.linalg.det, lambda a: tsl.det(a), (general(_rng),)),
    (np.linalg.eigvalsh, lambda a, b: np.sum(tsl.eigh(a, b, eigvals_only=True) ** 2), (spd(_rng), spd(_rng))),
    (tsl.lu_factor, lambda a: np.sum(tsl.lu(a)[2] ** 2), (general(_rng)[::-1],)),
]


def _square_sum(y):
    """Σ |y|², the real part and the imaginary part of complex values each squared."""
    return np.sum(np.real(y) ** 2 + np.imag(y) ** 2)


@pytest.mark.parametrize("f, make", TABLE)
def test_value_and_gradient(f, make, rng):
    """Traced, each function gives scipy's value; the gradient of Σ f² matches central differences
    in forward and reverse mode."""
    args = make(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (hankel ravels; scipy deprecates logm(disp=))
        warnings.simplefilter("ignore", DeprecationWarning)
        plain = f(*args)
        traced = tapegrad.trace(f, *args)[0]
        np.testing.assert_allclose(traced, plain, rtol=1e-10, atol=1e-12)
        check_grad(lambda *xs: _square_sum(f(*xs)), *args)


@pytest.mark.parametrize("rule, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(rule, f, args):
    """Second derivatives match central differences (logm's pullback calls logm again)."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


CALLS = [
    ("det", lambda m: (m,), {}), ("inv", lambda m: (m,), {}), ("pinv", lambda m: (m[:, :2],), {}),
    ("eigh", lambda m: (m + m.T,), {}), ("eigh", lambda m: (m + m.T, m @ m.T + np.eye(3)), {}),
    ("eigvalsh", lambda m: (m + m.T,), {"lower": False}), ("eig", lambda m: (m,), {}), ("eigvals", lambda m: (m,), {}),
    ("svd", lambda m: (m[:, :2],), {}), ("svdvals", lambda m: (m,), {}), ("qr", lambda m: (m[:, :2],), {"mode": "economic"}),
    ("lu", lambda m: (m,), {}), ("lu", lambda m: (m,), {"p_indices": True}), ("lstsq", lambda m: (m[:, :2], m[0]), {}),
    ("norm", lambda m: (m,), {"ord": 2}), ("logm", lambda m: (m @ m.T + np.eye(3),), {}),
    ("block_diag", lambda m: (m, m[0]), {}), ("toeplitz", lambda m: (m[0], m[1]), {}),
    ("circulant", lambda m: (m[0],), {}), ("hankel", lambda m: (m[0], m[1]), {}),
    ("solve_continuous_lyapunov", lambda m: (m - 4 * np.eye(3), m), {}),
    ("solve_discrete_lyapunov", lambda m: (m / 5, m), {}),
]


@pytest.mark.parametrize("name, make, kwargs", CALLS, ids=[c[0] for c in CALLS])
def test_plain_values_are_scipys_own(name, make, kwargs, rng):
    """On plain values each replacement returns what scipy.linalg returns, bit for bit."""
    args = make(rng.standard_normal((3, 3)) + np.diag([1.0, 2.0, 3.0]))
    ours, theirs = getattr(tsl, name)(*args, **kwargs), getattr(scipy.linalg, name)(*args, **kwargs)
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def test_det_gradient_is_the_cofactor_matrix():
    """d det A / dA = det(A) A⁻ᵀ."""
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(gradient(tsl.det, a)[0], [[3.0, -1.0], [-1.0, 2.0]])


def test_logm_of_diagonal_closed_form():
    """For a diagonal matrix, d tr log A / dA = diag(1/a)."""
    g = gradient(lambda a: np.trace(tsl.logm(a)), np.diag([2.0, 4.0, 5.0]))[0]
    np.testing.assert_allclose(g, np.diag([0.5, 0.25, 0.2]), atol=1e-13)


def test_logm_with_negative_eigenvalue_gets_the_real_part():
    """log of a negative number is log|a| + iπ: d Re tr log A / dA = diag(1/a) for a diagonal A."""
    g = gradient(lambda a: np.real(np.trace(tsl.logm(a))), np.diag([-2.0, 4.0]))[0]
    np.testing.assert_allclose(g, np.diag([-0.5, 0.25]), atol=1e-12)


def test_logm_undoes_expm():
    """logm(expm(A)) = A for A with small eigenvalues, so its gradient is the identity map."""
    a = np.array([[0.1, 0.3], [-0.2, 0.05]])
    seed = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = gradient(lambda a: np.sum(seed * tsl.logm(tsl.expm(a))), a)[0]
    np.testing.assert_allclose(g, seed, rtol=1e-10)


def test_logm_complex_rule(rng):
    """The dot-product test of logm's pullback along random complex directions."""
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 4 * np.eye(3)
    check_complex_rule(tsl.logm, a, rng=rng)


def test_eigh_eigenvalues_closed_form():
    """d wᵢ / dA = vᵢ vᵢᵀ on the lower triangle read (doubled off the diagonal)."""
    a = np.array([[2.0, 1.0], [1.0, 2.0]])
    g = gradient(lambda a: tsl.eigh(a, eigvals_only=True)[1], a)[0]
    np.testing.assert_allclose(g, [[0.5, 0.0], [1.0, 0.5]])


def test_generalized_eigh_matches_scipy_and_closed_form():
    """eigh(a, b): scipy's eigenvalues; for B = bI, w = eig(A)/b, so dw/db = -w/b."""
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    w_ref = scipy.linalg.eigh(a, 2.0 * np.eye(2), eigvals_only=True)
    w, g = tapegrad.grad(lambda s: np.sum(tsl.eigh(a, s * np.eye(2), eigvals_only=True)), 2.0)
    np.testing.assert_allclose(w, np.sum(w_ref), rtol=1e-14)
    np.testing.assert_allclose(g[1], -np.sum(w_ref) / 2.0, rtol=1e-12)


def test_eig_values_are_complex_as_scipys():
    """scipy's eig returns complex eigenvalues even when every one is real: traced too."""
    w = tapegrad.trace(lambda a: tsl.eig(a)[0], np.diag([1.0, 2.0]))[0]
    assert w.dtype == np.complex128


def test_lstsq_returns_scipys_four_tuple():
    """(x, residues, rank, s), the residues a number for a vector b, rank an int."""
    a, b = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([1.0, 2.0, 4.0])
    x, res, rank, s = tapegrad.trace(lambda a, b: tsl.lstsq(a, b), a, b)[0]
    rx, rres, rrank, rs = scipy.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, rx)
    assert np.ndim(res) == 0 and np.isclose(res, rres) and rank == rrank and type(rank) is int


def test_qr_r_mode_is_a_one_tuple():
    """scipy's qr(mode='r') returns (R,), R of the matrix's shape."""
    out = tapegrad.trace(lambda a: tsl.qr(a, mode="r"), np.ones((3, 2)))[0]
    assert isinstance(out, tuple) and len(out) == 1 and out[0].shape == (3, 2)


def test_lu_reconstructs_the_matrix():
    """Traced, p @ l @ u is the matrix and the pivots are scipy's."""
    a = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.5, 0.0, 2.0]])
    p, l, u = tapegrad.trace(lambda a: tsl.lu(a), a)[0]
    np.testing.assert_allclose(p @ l @ u, a, atol=1e-15)
    np.testing.assert_array_equal(p, scipy.linalg.lu(a)[0])
    idx = tapegrad.trace(lambda a: tsl.lu(a, p_indices=True)[0], a)[0]
    np.testing.assert_array_equal(idx, scipy.linalg.lu(a, p_indices=True)[0])


def test_det_is_one_op_of_numpys_det():
    """The tape of det shows numpy.linalg.det, the op whose rule differentiates it."""
    tape = tapegrad.trace(tsl.det, np.eye(2))[1]
    assert str(tape) == ("Tape\n"
                         "  inp %1::function det\n"
                         "  inp %2::float64[2,2]   # a\n"
                         "  %3 = det(%2)::float64")


REFUSED = [
    (lambda a: tsl.eigh(a, subset_by_index=[0, 1]), "eigh with subset_by_index / subset_by_value"),
    (lambda a: tsl.eigh(a, a @ a.T, type=2), "eigh with type=2"),
    (lambda a: tsl.eig(a, left=True), "eig with b, left or homogeneous_eigvals"),
    (lambda a: tsl.qr(a, pivoting=True), "qr with mode='full', pivoting=True"),
    (lambda a: tsl.qr(a, mode="raw"), "qr with mode='raw', pivoting=False"),
    (lambda a: tsl.pinv(a, atol=0.1), "pinv with atol=0.1"),
]


@pytest.mark.parametrize("f, what", REFUSED, ids=[w for _, w in REFUSED])
def test_options_without_derivative_are_refused(f, what):
    """An option with no derivative raises on traced values, naming the function and option."""
    with pytest.raises(TapegradError, match=f"tapegrad.scipy.linalg.{what} on traced values at .*test_scipy_linalg_more"):
        gradient(lambda a: np.sum(np.abs(f(a)[0])), np.eye(2) + 0.1)


@pytest.mark.parametrize("name", ["det", "eigh", "svd", "logm", "toeplitz", "lu"])
def test_scipys_own_function_names_the_replacement(name):
    """scipy.linalg's own function, given a traced value, says which replacement to use."""
    f = getattr(scipy.linalg, name)
    with pytest.raises(Exception, match=f"scipy.linalg.{name} cannot see traced values: use "
                                        f"tapegrad.scipy.linalg.{name} instead"):
        gradient(lambda a: np.sum(np.abs(f(a)[0])), np.eye(2) + 0.1)


def test_compiled_gradient_of_logm_is_grads():
    """scipy's logm estimates norms with random draws, so a compiled gradient traces it on every
    call (a replay would repeat the first draws) once two traces drew; its gradient is grad's."""
    a = np.array([[2.0, 0.3], [0.1, 1.5]])
    f = lambda a: np.sum(tsl.logm(a) ** 2)
    compiled = tapegrad.compiled_grad(f)
    for call in range(4):
        if call == 2:
            compiled.wait()  # (a long program is made by a child: it finds the draws)
        value, grads = compiled(a)
    expected_value, expected_grads = tapegrad.grad(f, a)
    assert value == expected_value
    np.testing.assert_array_equal(grads[1], expected_grads[1])
    assert compiled.cache_info()["traced"] >= 1

"""scipy.linalg functions that traced values can go through, with their gradients.

scipy converts its inputs with ``np.asarray``, which a traced value refuses, so inside a
function being differentiated call these instead of scipy's: same names, same signatures,
same results. On plain values each calls scipy directly; on traced values it is recorded as
one primitive and differentiated by its rule (in ``tapegrad.rules.scipy_linalg``).

The factorizations return tuples as scipy does: in ``(c, lower)`` and ``(lu, piv)`` the factor
is differentiable and the flag or pivots are not, so ``cho_solve(cho_factor(A), b)`` and
``lu_solve(lu_factor(A), b)`` have gradients with respect to both ``A`` and ``b``.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy import linalg as tsl
>>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> def f(A, b):
...     x = tsl.cho_solve(tsl.cho_factor(A), b)
...     return np.dot(b, x)
>>> db = tapegrad.gradient(f, A, np.array([1.0, 2.0]))[1]
>>> np.allclose(db, 2 * np.linalg.solve(A, [1.0, 2.0]))
True
"""
from __future__ import annotations

import numpy as np

from ..context import primitive
from ..hints import register_replacement
from ..onimport import OnFirstUse
from . import linalg_more
from .linalg_more import (block_diag, circulant, conj_transpose, det, eig, eigh, eigvals, eigvalsh, hankel, inv,
                          lstsq, norm, pinv, plain_value, qr, solve_discrete_lyapunov, svd, svdvals, toeplitz,
                          traced_among)

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "cholesky", "expm", "lu_factor", "lu_solve", "solve",
           "sqrtm", "solve_sylvester", "solve_banded", "logm", "lu", "solve_continuous_lyapunov",
           *linalg_more.__all__]

# scipy.linalg, imported at the first call: the rules of np.linalg call these, and importing
# tapegrad does not import scipy (see tapegrad.onimport)
_sl = OnFirstUse("scipy.linalg")


@primitive(traceable=False)
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """`scipy.linalg.solve_triangular` that traced values can go through.

    Only the triangle of `a` that is read (and not its diagonal if `unit_diagonal`) receives
    a gradient.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import solve_triangular
    >>> L = np.array([[2.0, 0.0], [1.0, 4.0]])
    >>> tapegrad.gradient(lambda b: np.sum(solve_triangular(L, b, lower=True)), np.ones(2))[0]
    array([0.375, 0.25 ])
    """
    return _sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                                overwrite_b=overwrite_b, check_finite=check_finite)


@primitive(traceable=False)
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """`scipy.linalg.cho_factor` that traced values can go through: ``(c, lower)``.

    `c` is differentiable (its unused triangle is a copy of `a`'s); `lower` is not. The
    gradient with respect to `a` is the symmetric one, as for `cholesky`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import cho_factor
    >>> A = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> c, lower = cho_factor(A, lower=True)
    >>> c[1, 1], lower
    (np.float64(2.0), True)
    """
    return _sl.cho_factor(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)


@primitive(traceable=False)
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """`scipy.linalg.cho_solve` that traced values can go through: solves ``A x = b`` from
    ``cho_factor(A)``, with gradients for the factor and for `b`.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import cho_factor, cho_solve
    >>> A = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> cho_solve(cho_factor(A), np.array([6.0, 7.0]))
    array([1., 1.])
    """
    return _sl.cho_solve(c_and_lower, b, overwrite_b=overwrite_b, check_finite=check_finite)


@primitive(traceable=False)
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """`scipy.linalg.cholesky` that traced values can go through (upper factor by default).

    The gradient is the symmetric one (as in autograd and JAX): exact along perturbations
    that keep `a` symmetric.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import cholesky
    >>> tapegrad.gradient(lambda a: np.sum(cholesky(a)), np.array([[4.0]]))[0]
    array([[0.25]])
    """
    return _sl.cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)


@primitive(traceable=False)
def expm(A):
    """`scipy.linalg.expm` that traced values can go through.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import expm
    >>> g = tapegrad.gradient(lambda a: np.trace(expm(a)), np.zeros((2, 2)))[0]
    >>> np.allclose(g, np.eye(2))
    True
    """
    return _sl.expm(A)


@primitive(traceable=False)
def lu_factor(a, overwrite_a=False, check_finite=True):
    """`scipy.linalg.lu_factor` that traced values can go through: ``(lu, piv)``.

    `lu` is differentiable (square `a` only); the pivots are not, they are constant nearby.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import lu_factor
    >>> lu, piv = lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv
    array([1, 1], dtype=int32)
    """
    return _sl.lu_factor(a, overwrite_a=overwrite_a, check_finite=check_finite)


@primitive(traceable=False)
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """`scipy.linalg.lu_solve` that traced values can go through, with gradients for `lu` and `b`.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import lu_factor, lu_solve
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(A), np.array([3.0, 7.0]))
    array([1., 1.])
    """
    return _sl.lu_solve(lu_and_piv, b, trans=trans, overwrite_b=overwrite_b, check_finite=check_finite)


@primitive(traceable=False)
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """`scipy.linalg.solve` that traced values can go through.

    With ``assume_a`` 'sym', 'her' or 'pos' only one triangle of `a` is read and the gradient
    is the symmetric one (the Hermitian one, for a complex `a` read as 'her' or 'pos'); with a
    triangular or diagonal ``assume_a`` only the entries read get a gradient. 'banded' has no
    gradient.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import solve
    >>> A = np.array([[2.0, 0.0], [0.0, 4.0]])
    >>> tapegrad.gradient(lambda b: np.sum(solve(A, b)), np.ones(2))[0]
    array([0.5 , 0.25])
    """
    return _sl.solve(a, b, lower=lower, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                     check_finite=check_finite, assume_a=assume_a, transposed=transposed)


@primitive(traceable=False)
def sqrtm(A, **kwargs):
    """`scipy.linalg.sqrtm` that traced values can go through: the principal square root X, X @ X = A.

    Differentiable wherever the principal root is (no eigenvalue of `A` at 0), for complex
    matrices too; a real matrix with an eigenvalue on the negative real axis has a complex
    root, and gets the real part of its cotangent (autograd's convention). The rule is in
    ``tapegrad.rules.scipy_linalg_extra``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import sqrtm
    >>> tapegrad.gradient(lambda a: np.trace(sqrtm(a)), np.diag([4.0, 9.0]))[0]  # d√a = 1/(2√a)
    array([[0.25      , 0.        ],
           [0.        , 0.16666667]])
    """
    return _sl.sqrtm(A, **kwargs)


@primitive(traceable=False)
def solve_sylvester(a, b, q):
    """`scipy.linalg.solve_sylvester` that traced values can go through: X with A X + X B = Q.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import solve_sylvester
    >>> solve_sylvester(np.eye(2), np.eye(2), np.ones((2, 2)))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    return _sl.solve_sylvester(a, b, q)


@primitive(traceable=False)
def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """`scipy.linalg.solve_banded` that traced values can go through, with gradients for the band
    `ab` (the entries scipy reads) and the right-hand side `b`.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import solve_banded
    >>> ab = np.array([[0.0, 1.0], [2.0, 4.0]])  # A = [[2, 1], [0, 4]]
    >>> tapegrad.gradient(lambda b: np.sum(solve_banded((0, 1), ab, b)), np.ones(2))[0]
    array([0.5  , 0.125])
    """
    return _sl.solve_banded(l_and_u, ab, b, overwrite_ab=overwrite_ab, overwrite_b=overwrite_b,
                            check_finite=check_finite)


@primitive(traceable=False)
def logm(A, disp=True):
    """`scipy.linalg.logm` that traced values can go through: the principal logarithm.

    Differentiable wherever the principal logarithm is (no eigenvalue of `A` on the closed
    negative real axis), for complex matrices too; a real matrix with a negative eigenvalue has
    a complex logarithm, and gets the real part of its cotangent. The gradient is the Fréchet
    derivative of logm at Aᵀ, the upper-right block of ``logm([[Aᵀ, Ȳ], [0, Aᵀ]])`` (the rule is
    in ``tapegrad.rules.scipy_linalg_extra``). With ``disp=False`` the result is ``(logm, errest)``,
    the error estimate not differentiated.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import logm
    >>> tapegrad.gradient(lambda a: np.trace(logm(a)), np.diag([2.0, 4.0]))[0]  # d log a = 1/a
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return _sl.logm(A) if disp is True else _sl.logm(A, disp=disp)  # (scipy 1.17 deprecates disp)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """`scipy.linalg.lu` that traced values can go through: ``(p, l, u)`` with ``a = p @ l @ u``,
    ``(p @ l, u)`` with ``permute_l``, or row indices ``p`` with ``p_indices``.

    On traced values it is one `lu_factor` op (its rule, square matrices only) and the
    triangles taken from it; the permutation is constant nearby and gets no gradient.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import lu
    >>> tapegrad.gradient(lambda a: np.prod(np.diag(lu(a)[2])), np.array([[1.0, 2.0], [3.0, 4.0]]))[0]
    array([[-4.,  3.],
           [ 2., -1.]])
    """
    if not traced_among(a):
        return _sl.lu(a, permute_l=permute_l, overwrite_a=overwrite_a, check_finite=check_finite,
                      p_indices=p_indices)
    factors, piv = lu_factor(a, check_finite=check_finite)
    m, n = np.shape(factors)
    k = min(m, n)
    l = np.tril(factors[:, :k], -1) + np.eye(m, k, dtype=plain_value(factors).dtype)
    u = np.triu(factors[:k, :])
    perm = np.arange(m)
    for i, p in enumerate(plain_value(piv)):  # LAPACK's pivots are row swaps applied in order: A[perm] = L U
        perm[[i, int(p)]] = perm[[int(p), i]]
    inverse = np.argsort(perm)  # A = (L U)[inverse]
    if permute_l:
        return l[inverse], u
    if p_indices:
        return inverse.astype(np.int32), l, u
    pm = np.zeros((m, m), dtype=plain_value(factors).dtype)
    pm[perm, np.arange(m)] = 1
    return pm, l, u


def solve_continuous_lyapunov(a, q):
    """`scipy.linalg.solve_continuous_lyapunov` that traced values can go through: X with
    A X + X Aᴴ = Q, on traced values the Sylvester equation ``solve_sylvester(a, aᴴ, q)`` (one op,
    its rule).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import solve_continuous_lyapunov
    >>> solve_continuous_lyapunov(-np.eye(2), -np.eye(2))
    array([[0.5, 0. ],
           [0. , 0.5]])
    """
    if not traced_among(a, q):
        return _sl.solve_continuous_lyapunov(a, q)
    return solve_sylvester(a, conj_transpose(a), q)


for _name in __all__:
    register_replacement(f"scipy.linalg.{_name}", f"tapegrad.scipy.linalg.{_name}")
del _name

"""The scipy.linalg functions that numpy.linalg already has, and the structured matrices, for
traced values: ``tapegrad.scipy.linalg.det``, ``eigh``, ``svd``, ``qr``, ``lu``, ``lstsq``,
``norm``, ``toeplitz``, ... (re-exported by `tapegrad.scipy.linalg`).

On plain values each calls scipy itself (scipy's results, bit for bit). On traced or dual values
each is the numpy.linalg function that computes the same thing, recorded as one op of the tape
under numpy's name (``det``, ``eigh``, ``svd``) and differentiated by numpy.linalg's rule
(tapegrad.rules.linalg, decompositions, eig, norms): the tape reads as the math does, and one
pullback serves both libraries. The arguments are translated (scipy's ``lower`` is numpy's
``UPLO``, ``mode='economic'`` is ``'reduced'``) and the results put in scipy's form (``eig``'s
complex eigenvalues, ``lstsq``'s 4-tuple, ``qr(mode='r')``'s 1-tuple). Options numpy has no
counterpart for raise a `TapegradError` on traced values that says what to use.

``lu`` is made of ``lu_factor`` (one op, with its rule), ``eigh(a, b)`` of a Cholesky
factorization, triangular solves and ``eigh``, and the structured matrices (``toeplitz``,
``circulant``, ``hankel``, ``block_diag``) of indexing and concatenation: their tapes show
those ops.
"""
from __future__ import annotations

import numpy as np

from ..errors import TapegradError, user_location
from ..onimport import OnFirstUse
from ..pytree import Boxed, find_nested

_sl = OnFirstUse("scipy.linalg")  # (imported at the first call: see tapegrad.onimport)

__all__ = ["det", "inv", "pinv", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "lstsq",
           "norm", "block_diag", "toeplitz", "circulant", "hankel", "solve_discrete_lyapunov"]


def traced_among(*values) -> bool:
    """True when a traced or dual value is among `values` (inside tuples and lists too)."""
    return find_nested(list(values), Boxed) is not None


def _refuse(call, option, advice):
    """The error for an option of scipy's that has no derivative here (on traced values only)."""
    raise TapegradError(f"tapegrad.scipy.linalg.{call} with {option} on traced values at {user_location()} "
                        f"has no derivative: {advice}")


def conj_transpose(a):
    return np.conj(np.swapaxes(a, -1, -2))


# --- determinant, inverse, pseudo-inverse ---


def det(a, overwrite_a=False, check_finite=True):
    """`scipy.linalg.det` that traced values can go through (numpy.linalg.det's op and rule).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import det
    >>> tapegrad.gradient(det, np.array([[2.0, 1.0], [1.0, 3.0]]))[0]  # det(A) A⁻ᵀ
    array([[ 3., -1.],
           [-1.,  2.]])
    """
    if traced_among(a):
        return np.linalg.det(a)
    return _sl.det(a, overwrite_a=overwrite_a, check_finite=check_finite)


def inv(a, overwrite_a=False, check_finite=True):
    """`scipy.linalg.inv` that traced values can go through (numpy.linalg.inv's op and rule).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import inv
    >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    if traced_among(a):
        return np.linalg.inv(a)
    return _sl.inv(a, overwrite_a=overwrite_a, check_finite=check_finite)


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """`scipy.linalg.pinv` that traced values can go through (numpy.linalg.pinv's op and rule,
    singular values below ``rtol·σ_max`` cut off, as scipy does; ``atol`` raises on traced values).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import pinv
    >>> pinv(np.array([[1.0], [1.0]]))
    array([[0.5, 0.5]])
    """
    if not traced_among(a):
        return _sl.pinv(a, atol=atol, rtol=rtol, return_rank=return_rank, check_finite=check_finite)
    if atol not in (None, 0, 0.0):
        _refuse("pinv", f"atol={atol!r}", "numpy's pinv cuts off relative to the largest singular value only: "
                "pass rtol instead")
    plain = plain_value(a)
    if rtol is None:  # scipy's default: max(m, n) · eps of the matrix's precision
        rtol = max(np.shape(plain)[-2:]) * np.finfo(np.result_type(plain.dtype, np.float32)).eps
    x = np.linalg.pinv(a, rcond=rtol)
    if return_rank:
        s = np.linalg.svd(plain, compute_uv=False)
        return x, int(np.sum(s > rtol * s[0])) if s.size else 0
    return x


def plain_value(v):
    """The plain value a traced or dual value stands for."""
    while isinstance(v, Boxed):
        v = v._val
    return v


# --- symmetric and general eigenproblems ---


def _from_triangle(a, lower):
    """The Hermitian matrix scipy reads from one triangle of `a`: only that triangle gets a gradient."""
    t = np.tril(a) if lower else np.triu(a)
    return t + conj_transpose(np.tril(a, -1) if lower else np.triu(a, 1))


def _eigh_general(a, b, lower, eigvals_only):
    """A x = λ B x for Hermitian A and positive definite B: with B = L Lᴴ, the standard problem of
    C = L⁻¹ A L⁻ᴴ has the same eigenvalues, and x = L⁻ᴴ y (so xᴴ B x = 1, as scipy normalizes)."""
    l = np.linalg.cholesky(_from_triangle(b, lower))
    linv_a = np.linalg.solve(l, _from_triangle(a, lower))  # L⁻¹ A
    c = conj_transpose(np.linalg.solve(l, conj_transpose(linv_a)))              # L⁻¹ A L⁻ᴴ
    if eigvals_only:
        return np.linalg.eigvalsh(c)
    w, y = np.linalg.eigh(c)
    return w, np.linalg.solve(conj_transpose(l), y)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """`scipy.linalg.eigh` that traced values can go through (numpy.linalg.eigh's op and rule).

    Only the triangle read (``lower``) gets a gradient, as numpy's rule says. The generalized
    problem ``eigh(a, b)`` (type 1) is differentiated through ``cholesky(b)``, two solves and
    ``eigh``; the eigenvectors are B-normalized as scipy's, their signs may differ. Subsets and
    types 2 and 3 raise on traced values.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import eigh
    >>> tapegrad.gradient(lambda a: eigh(a, eigvals_only=True)[-1], np.diag([1.0, 2.0]))[0]
    array([[0., 0.],
           [0., 1.]])
    """
    if not traced_among(a, b):
        return _sl.eigh(a, b, lower=lower, eigvals_only=eigvals_only, overwrite_a=overwrite_a,
                        overwrite_b=overwrite_b, type=type, check_finite=check_finite,
                        subset_by_index=subset_by_index, subset_by_value=subset_by_value, driver=driver)
    if subset_by_index is not None or subset_by_value is not None:
        _refuse("eigh", "subset_by_index / subset_by_value", "compute every eigenvalue and index the result")
    if b is not None:
        if type != 1:
            _refuse("eigh", f"type={type}", "only the problem A x = λ B x (type=1) is differentiated")
        return _eigh_general(a, b, lower, eigvals_only)
    uplo = "L" if lower else "U"
    return np.linalg.eigvalsh(a, UPLO=uplo) if eigvals_only else np.linalg.eigh(a, UPLO=uplo)


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1, check_finite=True,
             subset_by_index=None, subset_by_value=None, driver=None):
    """`scipy.linalg.eigvalsh` that traced values can go through (numpy.linalg.eigvalsh's op and rule).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import eigvalsh
    >>> eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    array([1., 3.])
    """
    return eigh(a, b, lower=lower, eigvals_only=True, overwrite_a=overwrite_a, overwrite_b=overwrite_b, type=type,
                check_finite=check_finite, subset_by_index=subset_by_index, subset_by_value=subset_by_value,
                driver=driver)


def _complex(w):
    """scipy's eigenvalues are complex even when numpy's are real."""
    return w if np.iscomplexobj(plain_value(w)) else w + 0j


def eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False, check_finite=True,
        homogeneous_eigvals=False):
    """`scipy.linalg.eig` that traced values can go through (numpy.linalg.eig's op and rule).

    The eigenvalues are complex, as scipy's; the eigenvectors are real when every eigenvalue is,
    complex otherwise, with unit 2-norm. As for numpy's eig, a function of complex eigenvectors
    is differentiated only if it does not depend on their phases. ``b``, ``left`` and
    ``homogeneous_eigvals`` raise on traced values.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import eig
    >>> eig(np.diag([1.0, 2.0]))[0]
    array([1.+0.j, 2.+0.j])
    """
    if not traced_among(a, b):
        return _sl.eig(a, b, left=left, right=right, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                       check_finite=check_finite, homogeneous_eigvals=homogeneous_eigvals)
    if b is not None or left or homogeneous_eigvals:
        _refuse("eig", "b, left or homogeneous_eigvals", "only the right eigenvectors of the standard problem are "
                "differentiated (for a generalized problem with B positive definite and A symmetric, use eigh(a, b))")
    if not right:
        return _complex(np.linalg.eigvals(a))
    w, v = np.linalg.eig(a)
    return _complex(w), v


def eigvals(a, b=None, overwrite_a=False, check_finite=True, homogeneous_eigvals=False):
    """`scipy.linalg.eigvals` that traced values can go through (numpy.linalg.eigvals' op and rule);
    complex, as scipy's.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import eigvals
    >>> eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]))
    array([0.+1.j, 0.-1.j])
    """
    if not traced_among(a, b):
        return _sl.eigvals(a, b, overwrite_a=overwrite_a, check_finite=check_finite,
                           homogeneous_eigvals=homogeneous_eigvals)
    return eig(a, b, right=False, homogeneous_eigvals=homogeneous_eigvals)


# --- singular values, QR, LU ---


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """`scipy.linalg.svd` that traced values can go through (numpy.linalg.svd's op and rule).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import svd
    >>> tapegrad.gradient(lambda a: svd(a, compute_uv=False)[0], np.diag([3.0, 1.0]))[0]
    array([[1., 0.],
           [0., 0.]])
    """
    if traced_among(a):
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return _sl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, overwrite_a=overwrite_a,
                   check_finite=check_finite, lapack_driver=lapack_driver)


def svdvals(a, overwrite_a=False, check_finite=True):
    """`scipy.linalg.svdvals` that traced values can go through (numpy.linalg.svd's op and rule).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import svdvals
    >>> svdvals(np.array([[0.0, 2.0], [1.0, 0.0]]))
    array([2., 1.])
    """
    if traced_among(a):
        return np.linalg.svd(a, compute_uv=False)
    return _sl.svdvals(a, overwrite_a=overwrite_a, check_finite=check_finite)


_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r"}


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """`scipy.linalg.qr` that traced values can go through (numpy.linalg.qr's op and rule):
    ``mode`` 'full', 'economic' or 'r' (a 1-tuple ``(r,)``, as scipy's); 'raw' and ``pivoting``
    raise on traced values. 'full' of a tall matrix has no gradient (its extra columns of Q are
    not unique): use 'economic'.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import qr
    >>> qr(np.array([[3.0], [4.0]]), mode="r")
    (array([[-5.],
           [ 0.]]),)
    """
    if not traced_among(a):
        return _sl.qr(a, overwrite_a=overwrite_a, lwork=lwork, mode=mode, pivoting=pivoting,
                      check_finite=check_finite)
    if pivoting or mode not in _QR_MODES:
        _refuse("qr", f"mode={mode!r}, pivoting={pivoting!r}", "use mode 'full', 'economic' or 'r', without pivoting")
    if mode == "r":
        r = np.linalg.qr(a, mode="r")  # k×n: scipy's is m×n, zeros below
        m, n = np.shape(a)[-2:]
        if m > n:
            r = np.concatenate([r, np.zeros((m - n, n), dtype=plain_value(r).dtype)], axis=0)
        return (r,)
    return tuple(np.linalg.qr(a, mode=_QR_MODES[mode]))


def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True, lapack_driver=None):
    """`scipy.linalg.lstsq` that traced values can go through: ``(x, residues, rank, s)`` as scipy's,
    numpy.linalg.lstsq's op and rule (residues are a number for a vector `b`, an empty array
    when the system is not overdetermined with full rank).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import lstsq
    >>> a = np.array([[1.0], [1.0]])
    >>> tapegrad.gradient(lambda b: lstsq(a, b)[0][0], np.array([1.0, 3.0]))[0]  # the mean
    array([0.5, 0.5])
    """
    if not traced_among(a, b):
        return _sl.lstsq(a, b, cond=cond, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                         check_finite=check_finite, lapack_driver=lapack_driver)
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=cond)
    if np.ndim(b) == 1 and np.shape(res) == (1,):
        res = res[0]
    return x, res, int(plain_value(rank)), s


def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """`scipy.linalg.norm` that traced values can go through (numpy.linalg.norm's op and rule).

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.linalg import norm
    >>> tapegrad.gradient(norm, np.array([3.0, 4.0]))[0]
    array([0.6, 0.8])
    """
    if traced_among(a):
        return np.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)
    return _sl.norm(a, ord=ord, axis=axis, keepdims=keepdims, check_finite=check_finite)


# --- structured matrices: indexing and concatenation, differentiable as they are ---


def block_diag(*arrs):
    """`scipy.linalg.block_diag` that traced values can go through (concatenation of the blocks
    and zeros).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import block_diag
    >>> block_diag(np.ones((1, 1)), 2 * np.ones((1, 2)))
    array([[1., 0., 0.],
           [0., 2., 2.]])
    """
    if not traced_among(*arrs):
        return _sl.block_diag(*arrs)
    blocks = [np.atleast_2d(x) for x in arrs]
    dtype = np.result_type(*[plain_value(x) for x in blocks])
    widths = [np.shape(x)[1] for x in blocks]
    total = sum(widths)
    rows, left = [], 0
    for x, w in zip(blocks, widths):
        h = np.shape(x)[0]
        rows.append(np.concatenate([np.zeros((h, left), dtype), x + np.zeros((), dtype),
                                    np.zeros((h, total - left - w), dtype)], axis=1))
        left += w
    return np.concatenate(rows, axis=0)


def _batched(*vectors):
    """Vectors along the last axis, their leading axes broadcast together (scipy ≥ 1.17 batches
    toeplitz, circulant and hankel over them)."""
    lead = np.broadcast_shapes(*[np.shape(v)[:-1] for v in vectors])
    return [np.broadcast_to(v, lead + np.shape(v)[-1:]) if np.shape(v)[:-1] != lead else v for v in vectors]


def toeplitz(c, r=None):
    """`scipy.linalg.toeplitz` that traced values can go through: ``T[i, j] = c[i - j]`` below the
    diagonal, ``r[j - i]`` above (``r = conj(c)`` by default; r[0] is ignored, as in scipy),
    batched over leading axes as scipy's.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import toeplitz
    >>> toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0]))
    array([[1., 4.],
           [2., 1.],
           [3., 2.]])
    """
    if not traced_among(c, r):
        return _sl.toeplitz(c, r)
    c = np.atleast_1d(c)
    r = np.conj(c) if r is None else np.atleast_1d(r)
    c, r = _batched(c, r)
    m, n = np.shape(c)[-1], np.shape(r)[-1]
    vals = np.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)
    return vals[..., (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """`scipy.linalg.circulant` that traced values can go through: ``C[i, j] = c[(i - j) mod n]``,
    batched over leading axes as scipy's.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import circulant
    >>> circulant(np.array([1.0, 2.0, 3.0]))
    array([[1., 3., 2.],
           [2., 1., 3.],
           [3., 2., 1.]])
    """
    if not traced_among(c):
        return _sl.circulant(c)
    c = np.atleast_1d(c)
    n = np.shape(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """`scipy.linalg.hankel` that traced values can go through: ``H[i, j] = c[i + j]`` and then
    ``r[i + j - m + 1]`` (``r`` zero by default; r[0] is ignored, as in scipy).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import hankel
    >>> hankel(np.array([1.0, 2.0, 3.0]), np.array([3.0, 4.0]))
    array([[1., 2.],
           [2., 3.],
           [3., 4.]])
    """
    if not traced_among(c, r):
        return _sl.hankel(c, r)
    c = np.ravel(c)  # (scipy 1.17 ravels arrays of more dimensions, with a FutureWarning)
    r = np.zeros_like(plain_value(c)) if r is None else np.ravel(r)
    m, n = np.shape(c)[0], np.shape(r)[0]
    vals = np.concatenate([c, r[1:]])
    return vals[np.arange(m)[:, None] + np.arange(n)[None, :]]


# --- Lyapunov equations ---


def solve_discrete_lyapunov(a, q, method=None):
    """`scipy.linalg.solve_discrete_lyapunov` that traced values can go through: X with
    A X Aᴴ - X + Q = 0, solved as scipy's 'direct' method does, (I - A ⊗ conj(A)) vec X = vec Q
    (an n²×n² system: for small matrices).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.linalg import solve_discrete_lyapunov
    >>> solve_discrete_lyapunov(0.5 * np.eye(2), np.eye(2))
    array([[1.33333333, 0.        ],
           [0.        , 1.33333333]])
    """
    if not traced_among(a, q):
        return _sl.solve_discrete_lyapunov(a, q, method=method)
    n = np.shape(a)[-1]
    lhs = np.eye(n * n) - np.kron(a, np.conj(a))
    return np.reshape(np.linalg.solve(lhs, np.ravel(q)), (n, n))

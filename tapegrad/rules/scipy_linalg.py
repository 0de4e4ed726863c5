"""Rules for the scipy.linalg replacements in `tapegrad.scipy.linalg`.

The rules and their pullbacks call the replacements, not scipy, so that a Tracer can record
them again. The ``overwrite_*`` flags are dropped: the pullbacks need the inputs intact.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as _sl

from ..errors import TapegradError
from ..registry import rrule, stand_in
from ..scipy.linalg import cho_factor, cho_solve, cholesky, expm, lu_factor, lu_solve, solve, solve_triangular
from ..tangents import NO_TANGENT, Thunk, ZERO
from .decompositions import cholesky_grad
from ._shapes import cached_signature, col, like, mT, row, sym, tangent_float


def _options(fn, args, kwargs):
    """The arguments of scipy's `fn` by name, defaults filled in, without the overwrite flags."""
    bound = cached_signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if not k.startswith("overwrite_")}


def _rank1(u, v, vector):
    """u vᵀ for vectors (b 1-d) or u @ vᵀ for matrices of right-hand sides."""
    return col(u) * row(v) if vector else np.matmul(u, mT(v))


def _transposed(trans):
    return trans in (1, 2, "T", "C")


def _solve_lt(l, b):
    """L⁻ᵀ B for a lower-triangular L."""
    return solve_triangular(l, b, trans="T", lower=True)


# --- triangular solve ---


@rrule(solve_triangular)
def solve_triangular_rrule(a, b, *rest, **kwargs):
    o = _options(_sl.solve_triangular, (a, b, *rest), kwargs)
    t, lower, unit = _transposed(o["trans"]), o["lower"], o["unit_diagonal"]
    x = solve_triangular(a, b, trans=o["trans"], lower=lower, unit_diagonal=unit, check_finite=o["check_finite"])
    b = stand_in(b)  # only its shape and dtype are needed

    def solve_triangular_pullback(dx):
        # x = op(A)⁻¹ b:  b̄ = op(A)⁻ᵀ x̄,  op(A)̄ = -b̄ xᵀ; only the triangle read varies
        db = solve_triangular(a, dx, trans=0 if t else 1, lower=lower, unit_diagonal=unit)

        def da():
            # the minus on the vector, not on the matrix the product makes
            g = _rank1(-x, db, np.ndim(b) == 1) if t else _rank1(-db, x, np.ndim(b) == 1)
            k = -1 if unit else 0
            return like(np.tril(g, k) if lower else np.triu(g, -k), a)

        return NO_TANGENT, Thunk(da), like(db, b), *(NO_TANGENT for _ in rest)

    return x, solve_triangular_pullback


# --- cholesky ---


def _chol_factor_grad(c, dc, lower):
    """Ā for the triangular factor in `c` given its cotangent (the other triangle of `c`
    ignored): LAPACK read only the triangle of `a` named by `lower`, and only it gets a
    derivative (`read_triangle`); the symmetric gradient is an opt-in, by factoring
    ``(a + a.T) / 2``."""
    if lower:
        return cholesky_grad(np.tril(c), np.tril(dc), _solve_lt, "lower")
    return cholesky_grad(mT(np.triu(c)), mT(np.triu(dc)), _solve_lt, "upper")  # A = UᵀU: L = Uᵀ


@rrule(cholesky)
def cholesky_rrule(a, *rest, **kwargs):
    o = _options(_sl.cholesky, (a, *rest), kwargs)
    c = cholesky(a, lower=o["lower"], check_finite=o["check_finite"])
    a = stand_in(a)  # only its shape and dtype are needed

    def cholesky_pullback(dc):
        return NO_TANGENT, like(_chol_factor_grad(c, dc, o["lower"]), a), *(NO_TANGENT for _ in rest)

    return c, cholesky_pullback


@rrule(cho_factor)
def cho_factor_rrule(a, *rest, **kwargs):
    o = _options(_sl.cho_factor, (a, *rest), kwargs)
    lower = o["lower"]
    c, low = cho_factor(a, lower=lower, check_finite=o["check_finite"])
    a = stand_in(a)  # only its shape and dtype are needed

    def cho_factor_pullback(dy):
        dc = ZERO if dy is ZERO else dy[0]
        if dc is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        # the triangle LAPACK does not touch is a copy of a's: its cotangent passes through
        copied = np.triu(dc, 1) if lower else np.tril(dc, -1)
        return NO_TANGENT, like(_chol_factor_grad(c, dc, lower) + copied, a), *(NO_TANGENT for _ in rest)

    return (c, low), cho_factor_pullback


def _factor_of(c, lower):
    """The lower-triangular L with A = L Lᵀ stored in `c`."""
    return np.tril(c) if lower else mT(np.triu(c))


@rrule(cho_solve)
def cho_solve_rrule(c_and_lower, b, *rest, **kwargs):
    c, lower = c_and_lower
    x = cho_solve((c, lower), b, check_finite=_options(_sl.cho_solve, (c_and_lower, b, *rest), kwargs)["check_finite"])

    def cho_solve_pullback(dx):
        # x = A⁻¹ b with A = L Lᵀ symmetric:  b̄ = A⁻¹ x̄,  Ā = -b̄ xᵀ,  L̄ = (Ā + Āᵀ) L
        db = cho_solve((c, lower), dx)

        da = -_rank1(db, x, np.ndim(b) == 1)
        dl = np.tril(np.matmul(da + mT(da), _factor_of(c, lower)))
        # computed eagerly: a Thunk inside the (c, lower) tuple would not be evaluated
        dc = like(dl if lower else mT(dl), c)
        return NO_TANGENT, (dc, NO_TANGENT), like(db, b), *(NO_TANGENT for _ in rest)

    return x, cho_solve_pullback


# --- matrix exponential ---


@rrule(expm)
def expm_rrule(a):
    y = expm(a)

    def expm_pullback(dy):
        # Ā = L(Aᵀ, Ȳ), the Fréchet derivative: the upper-right block of exp([[Aᵀ, Ȳ], [0, Aᵀ]])
        n = np.shape(a)[-1]
        at = mT(a)
        zero = np.zeros(np.shape(a), dtype=tangent_float(a))
        big = np.concatenate([np.concatenate([at, dy], axis=-1), np.concatenate([zero, at], axis=-1)], axis=-2)
        return NO_TANGENT, like(expm(big)[..., :n, n:], a)

    return y, expm_pullback


# --- LU ---


def _lu_parts(lu, piv):
    """(L, U, perm) of a square LU factorization: A[perm] = L U."""
    n = np.shape(lu)[-1]
    perm = list(range(n))
    for i, p in enumerate(piv):  # LAPACK's pivots are row swaps applied in order
        p = int(p)
        perm[i], perm[p] = perm[p], perm[i]
    return np.tril(lu, -1) + np.eye(n, dtype=tangent_float(lu)), np.triu(lu), perm


def _check_square(lu):
    m, n = np.shape(lu)[-2:]
    if m != n:
        raise TapegradError(f"the gradient of lu_factor / lu_solve is defined for square matrices, not {m}×{n}")


@rrule(lu_factor)
def lu_factor_rrule(a, *rest, **kwargs):
    o = _options(_sl.lu_factor, (a, *rest), kwargs)
    lu, piv = lu_factor(a, check_finite=o["check_finite"])

    def lu_factor_pullback(dy):
        dlu = ZERO if dy is ZERO else dy[0]
        if dlu is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        _check_square(lu)
        l, u, perm = _lu_parts(lu, piv)
        # Ã = A[perm] = L U, X = L⁻¹ dÃ U⁻¹:  dL = L tril(X, -1), dU = triu(X) U, so
        # Ã̄ = L⁻ᵀ (tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)) U⁻ᵀ; L's unit diagonal gets nothing
        m = np.tril(np.matmul(mT(l), np.tril(dlu, -1)), -1) + np.triu(np.matmul(np.triu(dlu), mT(u)))
        g = solve_triangular(l, m, trans="T", lower=True, unit_diagonal=True)
        g = mT(solve_triangular(u, mT(g), lower=False))  # G U⁻ᵀ = (U⁻¹ Gᵀ)ᵀ
        return NO_TANGENT, like(g[np.argsort(perm)], a), *(NO_TANGENT for _ in rest)

    return (lu, piv), lu_factor_pullback


@rrule(lu_solve)
def lu_solve_rrule(lu_and_piv, b, *rest, **kwargs):
    o = _options(_sl.lu_solve, (lu_and_piv, b, *rest), kwargs)
    lu, piv = lu_and_piv
    t = _transposed(o["trans"])
    x = lu_solve((lu, piv), b, trans=o["trans"], check_finite=o["check_finite"])

    def lu_solve_pullback(dx):
        # x = op(A)⁻¹ b:  b̄ = op(A)⁻ᵀ x̄, and Ā = -b̄ xᵀ (op(A) = A) or -x b̄ᵀ (op(A) = Aᵀ)
        db = lu_solve((lu, piv), dx, trans=0 if t else 1)

        _check_square(lu)
        l, u, perm = _lu_parts(lu, piv)
        vector = np.ndim(b) == 1
        da = -_rank1(x, db, vector) if t else -_rank1(db, x, vector)
        # through A[perm] = L U:  L̄ = Ã̄ Uᵀ,  Ū = Lᵀ Ã̄ (eager: no Thunk inside the (lu, piv) tuple)
        dp = da[perm]
        dlu = like(np.tril(np.matmul(dp, mT(u)), -1) + np.triu(np.matmul(mT(l), dp)), lu)
        return NO_TANGENT, (dlu, NO_TANGENT), like(db, b), *(NO_TANGENT for _ in rest)

    return x, lu_solve_pullback


# --- general solve ---

_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")


def _read_mask(assume_a, n, dtype):
    """Which entries of `a` scipy's solve reads for this `assume_a` (None: all of them)."""
    eye = np.eye(n, dtype=dtype)
    ones = np.ones((n, n), dtype=dtype)
    masks = {
        "diagonal": eye,
        "tridiagonal": np.triu(np.tril(ones, 1), -1),
        "lower triangular": np.tril(ones),
        "upper triangular": np.triu(ones),
    }
    return masks.get(assume_a)


@rrule(solve)
def solve_rrule(a, b, *rest, **kwargs):
    o = _options(_sl.solve, (a, b, *rest), kwargs)
    assume_a, t = o["assume_a"], o["transposed"]
    x = solve(a, b, lower=o["lower"], check_finite=o["check_finite"], assume_a=assume_a, transposed=t)

    def solve_pullback(dx):
        if assume_a == "banded":
            raise TapegradError("the gradient of solve(..., assume_a='banded') is not implemented")
        # x = op(A)⁻¹ b:  b̄ = op(A)⁻ᵀ x̄ (A itself when it is symmetric)
        if assume_a in _SYMMETRIC:
            db = solve(a, dx, lower=o["lower"], assume_a=assume_a)
        else:
            db = solve(a, dx, assume_a=assume_a, transposed=not t)

        def da():
            vector = np.ndim(b) == 1
            g = -_rank1(x, db, vector) if t else -_rank1(db, x, vector)
            if assume_a in _SYMMETRIC:
                return like(sym(g), a)
            mask = _read_mask(assume_a, np.shape(a)[-1], tangent_float(a))
            return like(g if mask is None else g * mask, a)

        return NO_TANGENT, Thunk(da), like(db, b), *(NO_TANGENT for _ in rest)

    return x, solve_pullback

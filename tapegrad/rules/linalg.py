"""Rules for numpy.linalg: inverses, solves, determinants, powers, pseudo-inverses, least squares.

Matrices may come in stacks (``(..., n, n)``): the pullbacks are matmuls and solves over the
last two axes, so they broadcast over the leading ones. The factorizations (cholesky, eigh,
svd, qr) are in `decompositions`, the norms in `norms`.

Complex matrices, under autograd's convention (df = Re Σ c·dz): inv, solve, det and
matrix_power are holomorphic, so their pullbacks are the real formulas, transposes and no
conjugates. slogdet, pinv and lstsq are not (a real log|det|, Aᴴ, |residual|², singular
values): their derivations are at the rules. ``pinv(a, hermitian=True)`` of a complex matrix
gets the Hermitian gradient (as a real one gets the symmetric one).
"""
from __future__ import annotations

import numpy as np

from ..onimport import OnFirstUse
from ..registry import frule, rrule, stand_in, whole
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._forward import add_variations
from ._shapes import col, conj, dtype_of, like, mH, mT, row, sum_of

_sl = OnFirstUse("scipy.linalg")  # (imported when a rule first needs it: see tapegrad.onimport)


def _add2(a):
    """Append two length-1 axes: a number per matrix, ready to broadcast against its matrix."""
    return np.reshape(a, np.shape(a) + (1, 1))


def _uncol(v):
    """A stack of columns (..., n, 1) back to a stack of vectors (..., n)."""
    return np.reshape(v, np.shape(v)[:-1])


# --- inverse and solve ---


@rrule(np.linalg.inv, complex=True, formula=whole("-{y}ᵀ · {dy} · {y}ᵀ"))
def inv_rrule(a):
    y = np.linalg.inv(a)

    def inv_pullback(dy):
        # d(A⁻¹) = -A⁻¹ dA A⁻¹, so Ā = -A⁻ᵀ Ȳ A⁻ᵀ
        yt = mT(y)
        return NO_TANGENT, -np.matmul(np.matmul(yt, dy), yt)

    return y, inv_pullback


@rrule(np.linalg.solve, complex=True, formula=whole("-({a[0]}⁻ᵀ · {dy}) · {y}ᵀ", "{a[0]}⁻ᵀ · {dy}"))
def solve_rrule(a, b):
    x = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1  # numpy 2: b is a vector only when it is 1-d
    b = stand_in(b)  # only its shape and dtype are needed

    def solve_pullback(dx):
        # x = A⁻¹ b:  b̄ = A⁻ᵀ x̄,  Ā = -b̄ xᵀ
        if vector:
            db = _uncol(np.linalg.solve(mT(a), col(dx)))
            da = lambda: -(col(db) * row(x))
        else:
            db = np.linalg.solve(mT(a), dx)
            da = lambda: -np.matmul(db, mT(x))
        return NO_TANGENT, Thunk(lambda: like(da(), a)), like(db, b)

    return x, solve_pullback


@frule(np.linalg.solve)
def solve_frule(d, a, b):
    """X = A⁻¹B and dX = A⁻¹(dB - dA X), both through one LU factorization of A."""
    da, db = d
    if isinstance(a, np.ndarray) and a.ndim == 2 and isinstance(b, np.ndarray):
        lu = _sl.lu_factor(a)
        x = _sl.lu_solve(lu, b)
        rhs = add_variations(db, ZERO if da is ZERO else -(da @ x))
        return x, ZERO if rhs is ZERO else _sl.lu_solve(lu, rhs)
    # batched, or traced values: numpy's solve (traceable) for both. numpy 2 reads b as a
    # vector only when it is 1-d; then the products and solves need a trailing axis
    x = np.linalg.solve(a, b)
    vec = np.ndim(b) == 1
    ax = x[..., None] if vec else x
    rhs = add_variations(db, ZERO if da is ZERO else -((da @ ax)[..., 0] if vec else da @ ax))
    if rhs is ZERO:
        return x, ZERO
    if vec:
        rhs = np.broadcast_to(rhs, np.shape(x))
        return x, np.linalg.solve(a, rhs[..., None])[..., 0]
    return x, np.linalg.solve(a, rhs)


# --- determinants ---


@rrule(np.linalg.det, complex=True, formula=whole("{dy} · {y} · {a[0]}⁻ᵀ"))
def det_rrule(a):
    d = np.linalg.det(a)

    def det_pullback(dd):
        # d det A = det A tr(A⁻¹ dA). At a singular A this needs A⁻¹ and raises LinAlgError,
        # as autograd does (the true derivative there is the cofactor matrix).
        return NO_TANGENT, _add2(dd * d) * mT(np.linalg.inv(a))

    return d, det_pullback


@rrule(np.linalg.slogdet, complex=True, formula=whole(
    "({dy}[1] + i·Im({dy}[0]·sign)) · {a[0]}⁻ᵀ (sign = {y}[0])",
))
def slogdet_rrule(a):
    res = np.linalg.slogdet(a)
    sign, logdet = res
    complex_sign = dtype_of(a).kind == "c"

    def slogdet_pullback(dy):
        # With t = d log det A = tr(A⁻¹ dA): d logabsdet = Re t and, for a complex A, the sign
        # det/|det| = exp(i Im log det) moves too, d sign = sign·i·Im t (for a real A it is
        # piecewise constant). Re(s̄·d sign) + l̄·Re t = Re(α t) with α = l̄ + i·Im(s̄·sign), and
        # t is holomorphic in A with cotangent A⁻ᵀ: Ā = α A⁻ᵀ (α = l̄ for a real A).
        dsign, dlogdet = (ZERO, ZERO) if dy is ZERO else dy
        alpha = dlogdet
        if complex_sign and dsign is not ZERO:
            alpha = sum_of(alpha, 1j * np.imag(dsign * sign))
        if alpha is ZERO:
            return NO_TANGENT, ZERO
        return NO_TANGENT, like(_add2(alpha) * mT(np.linalg.inv(a)), a)

    return res, slogdet_pullback  # numpy's SlogdetResult: .sign and .logabsdet work when traced


# --- powers ---


@rrule(np.linalg.matrix_power, complex=True, formula=whole("Σₖ ({a[0]}ᵀ)ᵏ · {dy} · ({a[0]}ᵀ)ⁿ⁻¹⁻ᵏ"))
def matrix_power_rrule(a, *rest, **kwargs):
    n = rest[0] if rest else kwargs["n"]
    y = np.linalg.matrix_power(a, n)
    base = a if n >= 0 else np.linalg.inv(a)  # A⁻ⁿ = (A⁻¹)ⁿ
    powers = [np.linalg.matrix_power(base, 0)]  # B⁰ ... B^(|n|-1), kept for the pullback
    for _ in range(abs(n) - 1):
        powers.append(np.matmul(powers[-1], base))

    def matrix_power_pullback(dy):
        if n == 0:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        # d(Bᵐ) = Σₖ Bᵏ dB Bᵐ⁻¹⁻ᵏ,  so B̄ = Σₖ (Bᵏ)ᵀ Ȳ (Bᵐ⁻¹⁻ᵏ)ᵀ
        m = abs(n)
        db = sum_of(*(np.matmul(np.matmul(mT(powers[k]), dy), mT(powers[m - 1 - k])) for k in range(m)))
        if n < 0:  # B = A⁻¹: Ā = -Bᵀ B̄ Bᵀ
            db = -np.matmul(np.matmul(mT(base), db), mT(base))
        return NO_TANGENT, like(db, a), *(NO_TANGENT for _ in rest)

    return y, matrix_power_pullback


# --- pseudo-inverse and least squares ---


def _pinv_grad(a, x, g):
    """Ā for X = A⁺ and X̄ = g, where A's rank is constant nearby (Golub and Pereyra):
    dX = -X dA X + (I - X A) dAᴴ Xᴴ X + X Xᴴ dAᴴ (I - A X).

    The first term is holomorphic: -Xᵀ g Xᵀ. A term M dAᴴ N pairs as Re⟨g, M dAᴴ N⟩ =
    Re⟨N gᵀ M, conj(dA)⟩ = Re⟨conj(N gᵀ M), dA⟩ (⟨P, Q⟩ = Σ P∘Q, no conjugate), so
    Ā = -Xᵀ g Xᵀ + (I - conj(A X)) gᴴ conj(X) Xᵀ + Xᵀ conj(X) gᴴ (I - conj(X A)); for a real A
    the conjugates drop out: -Xᵀ g Xᵀ + (I - A X) gᵀ X Xᵀ + Xᵀ X gᵀ (I - X A)."""
    xt, gh, ac, xc = mT(x), mH(g), conj(a), conj(x)
    t1 = -np.matmul(np.matmul(xt, g), xt)
    t2 = np.matmul(np.matmul(gh, xc), xt)
    t2 = t2 - np.matmul(ac, np.matmul(xc, t2))  # (I - Ā X̄) M = M - Ā (X̄ M)
    t3 = np.matmul(np.matmul(xt, xc), gh)
    t3 = t3 - np.matmul(np.matmul(t3, xc), ac)  # M (I - X̄ Ā) = M - (M X̄) Ā
    return t1 + t2 + t3


@rrule(np.linalg.pinv, complex=True, formula=whole("-{y}ᵀ·{dy}·{y}ᵀ plus the terms of the two null spaces"))
def pinv_rrule(a, *rest, **kwargs):
    x = np.linalg.pinv(a, *rest, **kwargs)
    hermitian = (rest[1] if len(rest) > 1 else kwargs.get("hermitian", False))

    def pinv_pullback(dx):
        g = _pinv_grad(a, x, dx)
        if hermitian:
            # only one triangle is read: the symmetric gradient, (g + gᵀ)/2; for a complex
            # matrix the Hermitian one, (g + gᴴ)/2, since Re⟨gᴴ, dA⟩ = Re⟨g, dA⟩ along a
            # Hermitian dA (its entries below the diagonal conjugates of those above)
            g = 0.5 * (g + mH(g))
        return NO_TANGENT, like(g, a), *(NO_TANGENT for _ in rest)

    return x, pinv_pullback


@rrule(np.linalg.lstsq, complex=True, formula=whole(
    "the least-squares pullback through pinv({a[0]})",
    "pinv({a[0]})ᵀ · {dy}[0]",
))
def lstsq_rrule(a, b, *rest, **kwargs):
    x, res, rank, s = np.linalg.lstsq(a, b, *rest, **kwargs)
    p = np.linalg.pinv(a)  # x = A⁺ b where A's rank is constant nearby
    vector = np.ndim(b) == 1

    def lstsq_pullback(dy):
        dx, dres, _, ds = (ZERO,) * 4 if dy is ZERO else dy
        da = db = ZERO
        if dx is not ZERO:
            db = np.matmul(mT(p), dx)
            da = _pinv_grad(a, p, col(dx) * row(b) if vector else np.matmul(dx, mT(b)))
        if dres is not ZERO and np.size(res):
            # res = min over x of |b - A x|², so at the minimum (envelope theorem)
            # d res = 2 Re eᴴ (db - dA x) with e = b - A x (eᵀ for a real e)
            e = b - np.matmul(a, x)
            we = 2 * conj(e) * dres
            db = sum_of(db, we)
            da = sum_of(da, -(col(we) * row(x) if vector else np.matmul(we, mT(x))))
        if ds is not ZERO:
            # singular values: d sᵢ = Re uᵢᴴ dA vᵢ, so Ā = conj(U diag(s̄) Vh)
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            da = sum_of(da, conj(np.matmul(u * row(ds), vh)))
        return (
            NO_TANGENT,
            ZERO if da is ZERO else like(da, a),
            ZERO if db is ZERO else like(db, b),
            *(NO_TANGENT for _ in rest),
        )

    return (x, res, rank, s), lstsq_pullback

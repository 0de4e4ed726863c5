"""Rules for scipy.linalg's sqrtm, logm, solve_sylvester and solve_banded (their replacements in
``tapegrad.scipy.linalg``).

- solve_sylvester, A X + X B = Q: with Q̄ the solution of Aᵀ Q̄ + Q̄ Bᵀ = X̄, the gradients are
  Q̄, Ā = -Q̄ Xᵀ and B̄ = -Xᵀ Q̄.
- sqrtm, X X = A: X dX + dX X = dA, so Ā solves Xᵀ Ā + Ā Xᵀ = X̄ (a Sylvester equation).
- logm: Ā = L_log(Aᵀ, X̄), the Fréchet derivative, read off the upper-right block of the
  logarithm of the block-triangular [[Aᵀ, X̄], [0, Aᵀ]] (the same trick as expm's rule).
- solve_banded: the banded matrix A has A[i, j] = ab[u + i - j, j]; b̄ = A⁻ᵀ x̄ (a banded solve
  with the band of Aᵀ) and the band entries get Ā[i, j] = -b̄ᵢ xⱼ; the corners of `ab` that
  scipy does not read get 0.

Each pullback calls the replacements again, so second derivatives trace through them.

All three are holomorphic in their matrix arguments, so under autograd's complex convention
(df = Re Σ c·dz) the same formulas hold for complex matrices, transposes and no conjugates;
a real argument of a complex result (a real matrix with a complex square root) gets the real
part of its cotangent.
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..scipy.linalg import logm, solve_banded, solve_sylvester, sqrtm
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._shapes import dtype_of, like, mT, tangent_float

# --- Sylvester equations ---


@rrule(solve_sylvester, complex=True, formula=whole(
    "-Q̄ · {y}ᵀ, Q̄ the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}",
    "-{y}ᵀ · Q̄, Q̄ the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}",
    "Q̄, the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}",
))
def solve_sylvester_rrule(a, b, q):
    x = solve_sylvester(a, b, q)

    def solve_sylvester_pullback(dx):
        dq = solve_sylvester(mT(a), mT(b), dx)
        return (NO_TANGENT, Thunk(lambda: like(-np.matmul(dq, mT(x)), a)),
                Thunk(lambda: like(-np.matmul(mT(x), dq), b)), like(dq, q))

    return x, solve_sylvester_pullback


# --- square root ---


@rrule(sqrtm, complex=True, formula=whole("the solution Ā of {y}ᵀ·Ā + Ā·{y}ᵀ = {dy} (a Sylvester equation)"))
def sqrtm_rrule(a, **kwargs):
    x = sqrtm(a, **kwargs)  # complex for a real matrix with an eigenvalue on the negative axis

    def sqrtm_pullback(dx):
        xt = mT(x)
        return NO_TANGENT, like(solve_sylvester(xt, xt, dx), a)

    return x, sqrtm_pullback


# --- banded systems ---


def _band_index(lower, upper, n):
    """Rows, columns and mask gathering, from ab, the band of Aᵀ (l and u swapped)."""
    k = np.arange(lower + upper + 1)[:, None]
    j = np.arange(n)[None, :]
    rows = np.broadcast_to(lower + upper - k, (lower + upper + 1, n))
    cols = j + k - lower
    valid = (cols >= 0) & (cols < n)
    return rows, np.clip(cols, 0, n - 1), valid


def _band_rows(upper, n, bands):
    """Row indices i = j + k - u of A for each band entry (k, j), clipped, and where they exist."""
    k = np.arange(bands)[:, None]
    i = np.arange(n)[None, :] + k - upper
    return np.clip(i, 0, n - 1), (i >= 0) & (i < n)


@rrule(solve_banded, complex=True, formula=whole(
    None,
    "-b̄ᵢ · {y}ⱼ on the band entry of A[i, j], 0 in the corners scipy does not read "
    "(b̄ = A⁻ᵀ · {dy}, A the banded matrix of {a[1]})",
    "A⁻ᵀ · {dy}: a banded solve with the band of Aᵀ (A the banded matrix of {a[1]})",
    None,
))
def solve_banded_rrule(l_and_u, ab, b, *args, **kwargs):
    lower, upper = (int(v) for v in l_and_u)
    x = solve_banded(l_and_u, ab, b, *args, **kwargs)
    n = np.shape(ab)[-1]
    rows, cols, valid = _band_index(lower, upper, n)
    src_i, src_ok = _band_rows(upper, n, lower + upper + 1)

    def solve_banded_pullback(dx):
        # b̄ = A⁻ᵀ x̄, with Aᵀ in banded form: (u, l) swapped, entries gathered from ab
        abt = np.where(valid, ab[rows, cols], 0)
        db = solve_banded((upper, lower), abt, dx)

        def dab():
            # Ā[i, j] = -b̄ᵢ xⱼ on the band entry (k, j) with i = j + k - u
            prod = db[src_i] * (x[None, :] if np.ndim(x) == 1 else x[None, :, :])
            if np.ndim(x) == 2:
                prod = np.sum(prod, axis=-1)
            return like(np.where(src_ok, -prod, 0), ab)

        return NO_TANGENT, NO_TANGENT, Thunk(dab), like(db, b), *(NO_TANGENT for _ in args)

    return x, solve_banded_pullback


# --- logarithm ---


@rrule(logm, complex=True, formula=whole("the Fréchet derivative of logm at {a[0]}ᵀ applied to {dy}"))
def logm_rrule(a, *rest, **kwargs):
    disp = rest[0] if rest else kwargs.get("disp", True)
    y = logm(a, disp=disp)
    x = y if disp else y[0]  # complex for a real matrix with a negative eigenvalue

    def logm_pullback(dy):
        dx = dy if disp else (ZERO if dy is ZERO else dy[0])
        if dx is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        # Ā = L(Aᵀ, X̄), the Fréchet derivative of the primary function log (a power series
        # with real coefficients, so its adjoint is itself at Aᵀ): the upper-right block of
        # logm([[Aᵀ, X̄], [0, Aᵀ]]), as expm's rule does with expm
        n = np.shape(a)[-1]
        at = mT(a)
        zero = np.zeros(np.shape(a), dtype=np.result_type(tangent_float(a), dtype_of(dx)))
        big = np.concatenate([np.concatenate([at + zero, dx + zero], axis=-1),
                              np.concatenate([zero, at + zero], axis=-1)], axis=-2)
        return NO_TANGENT, like(logm(big)[..., :n, n:], a), *(NO_TANGENT for _ in rest)

    return (x if disp else (x, y[1])), logm_pullback

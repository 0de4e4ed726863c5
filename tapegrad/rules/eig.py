"""Rules for the eigendecomposition of a general real matrix: numpy.linalg.eig and eigvals.

With A V = V diag(w) and P = V⁻¹ dA V, first-order perturbation gives dw = diag(P) and
dV = V (F ∘ P), F_ij = 1/(w_j - w_i) off the diagonal and 0 on it; numpy then normalizes each
eigenvector to unit 2-norm, which removes the component of dvⱼ along vⱼ. Transposed:
V̄' = V̄ - V diag(diag(VᵀV̄)), P̄ = diag(w̄) + F ∘ (VᵀV̄'), Ā = V⁻ᵀ P̄ Vᵀ.

The gradient is defined where the eigenvalues are real and distinct (the gaps are inf at a
repeated eigenvalue). Complex eigenvalues make complex results, which need complex support:
the rule refuses them with an error rather than return the gradient of a real part.
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..registry import rrule
from ..tangents import NO_TANGENT, ZERO
from ._shapes import col, like, mT, row, tangent_float


def _check_real(w, fn):
    if np.iscomplexobj(w):
        raise NotImplementedError(
            f"tapegrad differentiates numpy.linalg.{fn} where the eigenvalues are real (at "
            f"{user_location()}); this matrix has complex eigenvalues, whose gradient needs complex "
            "support. For a symmetric matrix use numpy.linalg.eigh")


def _eig_grad(a, w, v, dw, dv):
    n = np.shape(a)[-1]
    eye = np.eye(n, dtype=tangent_float(a))
    pbar = 0.0
    if dw is not ZERO:
        pbar = eye * col(dw) if np.ndim(dw) == 1 else eye * dw[..., :, None]
    if dv is not ZERO:
        gaps = row(w) - col(w)
        f = (1 - eye) / (gaps + eye)  # F_ij = 1 / (w_j - w_i), 0 on the diagonal
        vt = mT(v)
        # the normalization takes out of dv_j its part along v_j
        dv = dv - v * np.sum(v * dv, axis=-2, keepdims=True)
        pbar = pbar + f * np.matmul(vt, dv)
    return like(np.linalg.solve(mT(v), np.matmul(pbar, mT(v))), a)


@rrule(np.linalg.eig)
def eig_rrule(a):
    res = np.linalg.eig(a)
    w, v = res
    _check_real(w, "eig")

    def eig_pullback(dy):
        dw, dv = (ZERO, ZERO) if dy is ZERO else dy
        if dw is ZERO and dv is ZERO:
            return NO_TANGENT, ZERO
        return NO_TANGENT, _eig_grad(a, w, v, dw, dv)

    return res, eig_pullback


@rrule(np.linalg.eigvals)
def eigvals_rrule(a):
    w, v = np.linalg.eig(a)  # the eigenvectors are the gradient's basis
    _check_real(w, "eigvals")

    def eigvals_pullback(dw):
        return NO_TANGENT, _eig_grad(a, w, v, dw, ZERO)

    return w, eigvals_pullback

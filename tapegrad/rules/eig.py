"""Rules for the eigendecomposition of a general real matrix: numpy.linalg.eig and eigvals.

With A V = V diag(w) and P = V⁻¹ dA V, first-order perturbation gives dw = diag(P) and
dV = V (F ∘ P), F_ij = 1/(w_j - w_i) off the diagonal and 0 on it; numpy then normalizes each
eigenvector to unit 2-norm, which removes the component of dvⱼ along vⱼ. Transposed:
V̄' = V̄ - V diag(diag(VᵀV̄)), P̄ = diag(w̄) + F ∘ (VᵀV̄'), Ā = V⁻ᵀ P̄ Vᵀ.

The gradient is defined where the eigenvalues are distinct (the gaps are inf at a repeated
eigenvalue).

Complex values (a complex matrix, or a real one with complex eigenvalues), under autograd's
convention (df = Re Σ c·dz): w and the unnormalized eigenvectors are holomorphic in A, so
their part of the pullback is the formula above, transposes and no conjugates. The
normalization is not: numpy's eigenvectors have unit 2-norm and a phase LAPACK fixes (the
largest component real), and d(u/‖u‖) = du - v Re(vᴴ du) at ‖u‖ = 1, whose transpose is
V̄' = V̄ - conj(V) diag(Re diag(Vᵀ V̄)) (V̄ - V diag(diag(VᵀV̄)) for real vectors). The phase
is not differentiated: the gradient through complex eigenvectors is that of functions that do
not depend on their phases (|V|², V diag(w) V⁻¹, ...); a cotangent that depends on them is
refused (`check_phase_free`).
"""
from __future__ import annotations

import numpy as np

from ..registry import rrule, whole
from ..tangents import NO_TANGENT, ZERO
from ._shapes import col, conj, dtype_of, like, mT, row, tangent_float
from .decompositions import check_phase_free


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
        along = np.sum(v * dv, axis=-2, keepdims=True)
        if dtype_of(along).kind == "c":
            check_phase_free(np.matmul(vt, dv), "eig", "eigenvectors")
            dv = dv - conj(v) * np.real(along)
        else:
            dv = dv - v * along
        pbar = pbar + f * np.matmul(vt, dv)
    return like(np.linalg.solve(mT(v), np.matmul(pbar, mT(v))), a)


@rrule(np.linalg.eig, complex=True, formula=whole(
    "V⁻ᵀ · (diag(ȳw) + F ∘ Vᵀ·ȳV′) · Vᵀ, Fᵢⱼ = 1/(wⱼ - wᵢ), ȳV′ = ȳV less its part "
    "along each vⱼ ((w, V) = {y})",
))
def eig_rrule(a):
    res = np.linalg.eig(a)
    w, v = res

    def eig_pullback(dy):
        dw, dv = (ZERO, ZERO) if dy is ZERO else dy
        if dw is ZERO and dv is ZERO:
            return NO_TANGENT, ZERO
        return NO_TANGENT, _eig_grad(a, w, v, dw, dv)

    return res, eig_pullback


@rrule(np.linalg.eigvals, complex=True, formula=whole("V⁻ᵀ · diag({dy}) · Vᵀ (V the eigenvectors of {a[0]})"))
def eigvals_rrule(a):
    w, v = np.linalg.eig(a)  # the eigenvectors are the gradient's basis

    def eigvals_pullback(dw):
        return NO_TANGENT, _eig_grad(a, w, v, dw, ZERO)

    return w, eigvals_pullback

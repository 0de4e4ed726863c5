"""Rules for numpy.linalg.norm: vector norms of every order and matrix norms, along any axes.

At points where a norm is not differentiable the conventions are those of autograd and JAX:
the 2-norm, the Frobenius norm and the p-norms have a nan gradient at 0 (0/0); |x| contributes
sign(x), so 0 where x is 0 (1-norm, inf-norm); max and min (inf-norms, matrix 1- and
inf-norms) split the gradient evenly among tied entries; the matrix 2-norm and the nuclear
norm use the singular vectors LAPACK returns where singular values repeat or vanish.

Complex x (the norm is real): each norm is a function of |xᵢ| = sqrt(xᵢ conj(xᵢ)), with
d|xᵢ| = Re(conj(sign(xᵢ)) dxᵢ), sign(x) = x/|x| as numpy 2 computes it, and, for the
matrix 2- and nuclear norms, d sᵢ = Re(uᵢᴴ dX vᵢ) = Re⟨conj(uᵢ vhᵢ), dX⟩. Under autograd's
convention (df = Re Σ c·dx) every cotangent is therefore the conjugate of the real formula
(which is written with sign(x), x/‖x‖ and U Vh): conj(x)/‖x‖, conj(sign(x)) |x|^(p-1)/‖x‖^(p-1),
conj(U Vh), ...
"""
from __future__ import annotations

import numpy as np

from ..dual import derived_frule
from ..registry import frule, rrule, whole
from ..tangents import NO_TANGENT, ZERO
from ._shapes import conj, dtype_of, like, perm_back


def _norm_args(x, rest, kwargs):
    opts = {"ord": None, "axis": None, "keepdims": False}
    opts.update(zip(opts, rest), **kwargs)
    nd = np.ndim(x)
    axis = opts["axis"]
    if axis is None:
        # no axis: the 2-norm of all entries when ord is None, else a vector or matrix norm
        axes = tuple(range(nd)) if opts["ord"] is None or nd == 1 else (0, 1)
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = tuple(int(a) % nd for a in axes)
    matrix = len(axes) == 2 and not (axis is None and opts["ord"] is None)
    return opts["ord"], axes, matrix


def _ties(mask, axes):
    """`mask` (True at the extremes) divided by the number of extremes along `axes`."""
    return mask / np.sum(mask, axis=axes, keepdims=True)


def _sign(x, ax):
    """sign(x) with |x| = `ax`: for complex x, x/|x| (0 at 0) written with ops that have complex
    rules, so that a second derivative goes through it (np.sign has a zero derivative, which is
    right for real x only)."""
    if dtype_of(x).kind != "c":
        return np.sign(x)
    zero = ax == 0
    return np.where(zero, 0, x / np.where(zero, 1, ax))


def _vector_norm_grad(x, n, ord, axes):
    """d‖x‖/dx for a vector norm along `axes`; `n` is the norm with those axes kept (length 1)."""
    if ord is None or ord == 2:
        return x / n
    if ord == 0:  # counts the nonzero entries: piecewise constant
        return ZERO
    ax = np.abs(x)
    if ord == np.inf or ord == -np.inf:
        return _sign(x, ax) * _ties(ax == n, axes)
    if ord == 1:
        return _sign(x, ax)
    # ‖x‖ₚ = (Σ|x|ᵖ)^(1/p):  d/dx = sign(x) |x|^(p-1) / ‖x‖ₚ^(p-1)
    return _sign(x, ax) * (ax / n) ** (ord - 1)


def _matrix_norm_grad(x, n, ord, axes, svd):
    """d‖x‖/dx for a matrix norm over the axes (row, column) = `axes`."""
    r, c = axes
    if ord is None or ord == "fro":
        return x / n
    if ord in ("nuc", 2, -2):
        u, _, vh, perm = svd
        if ord == "nuc":  # d Σ sᵢ = tr(Uᵀ dX V)
            g = np.matmul(u, vh)
        else:  # d s₁ = u₁ᵀ dX v₁ for the largest (2) or the smallest (-2) singular value
            i = 0 if ord == 2 else np.shape(u)[-1] - 1
            g = np.matmul(u[..., :, i:i + 1], vh[..., i:i + 1, :])
        return perm_back(g, perm)
    # ord 1 / -1: max / min over columns of the column sums of |x|; inf / -inf: rows, row sums
    summed, chosen = (r, c) if ord in (1, -1) else (c, r)
    ax = np.abs(x)
    sums = np.sum(ax, axis=summed, keepdims=True)
    return _sign(x, ax) * _ties(sums == n, chosen)


@rrule(np.linalg.norm, complex=True, formula=whole(
    "{dy} · {a[0]}/{y} for the 2-norm (each order has its own), over {over}",
))
def norm_rrule(x, *rest, **kwargs):
    y = np.linalg.norm(x, *rest, **kwargs)
    ord, axes, matrix = _norm_args(x, rest, kwargs)
    kept = tuple(1 if i in axes else s for i, s in enumerate(np.shape(x)))
    n = np.reshape(y, kept)  # the norm with its reduced axes kept, to broadcast against x
    svd = None
    if matrix and ord in ("nuc", 2, -2):
        perm = [i for i in range(np.ndim(x)) if i not in axes] + list(axes)
        u, _, vh = np.linalg.svd(np.transpose(x, perm), full_matrices=False)
        svd = (u, _, vh, perm)

    def norm_pullback(dy):
        g = _matrix_norm_grad(x, n, ord, axes, svd) if matrix else _vector_norm_grad(x, n, ord, axes)
        if g is ZERO:
            return NO_TANGENT, ZERO, *(NO_TANGENT for _ in rest)
        g = conj(g)  # complex x: see the module's docstring
        return NO_TANGENT, like(np.reshape(dy, kept) * g, x), *(NO_TANGENT for _ in rest)

    return y, norm_pullback


_NORM = np.linalg.norm  # (the registered function: a trace may swap numpy's names while it runs)


@frule(_NORM)
def norm_frule(dargs, x, *rest, **kwargs):
    """The 2-norm of a vector, or the Frobenius norm (the default `ord`): d‖x‖ = Re Σ conj(x)·dx
    / ‖x‖ over the axes reduced, the pairing of the reverse rule's x/‖x‖ with dx. Every other
    order takes the rule derived from the reverse one."""
    ord, axes, matrix = _norm_args(x, rest, kwargs)
    if dargs[0] is ZERO or ord not in ((None, "fro") if matrix else (None, 2)):
        return derived_frule(_NORM, (x, *rest), dargs, kwargs)
    y = np.linalg.norm(x, *rest, **kwargs)
    kept = tuple(1 if i in axes else s for i, s in enumerate(np.shape(x)))
    paired = np.sum(np.real(conj(x) * dargs[0]), axis=axes, keepdims=True)
    return y, np.reshape(paired / np.reshape(y, kept), np.shape(y))

"""Rules for least-squares fits: np.polyfit.

polyfit. With V the Vandermonde matrix of x (column j holds x^(m-1-j), m = deg + 1) and w the
weights (1 without), numpy's coefficients p minimize ``Σᵢ wᵢ²(Vᵢ·p - yᵢ)²``: with ``A = WV``
and ``b = Wy``, ``p = (AᵀA)⁻¹Aᵀb`` (one column of p per column of a 2-d y). For a cotangent p̄,
``z = (AᵀA)⁻¹p̄`` and the residual ``r = b - Ap`` give ``b̄ = Az`` and ``Ā = r zᵀ - (Az) pᵀ``;
then ``ȳ = W b̄``, ``w̄ᵢ = Σⱼ Āᵢⱼ Vᵢⱼ + Σ b̄ᵢ yᵢ`` (over y's columns) and
``x̄ᵢ = Σⱼ wᵢ Āᵢⱼ ∂Vᵢⱼ/∂xᵢ``, with ``∂x^q/∂x = q x^(q-1)``. The solve with AᵀA is made on the
columns of A scaled to unit norm, as numpy scales them for its lstsq. The powers are products
(no x⁰ whose derivative would be 0·x⁻¹ at x = 0), so that the pullback, numpy calls of x, y, w
and p, is differentiated again at every order.

p is unique only when A has full column rank (under numpy's rcond=, which zeroes the singular
values below rcond times the largest): there the formulas hold. Where it has not (fewer
distinct x than deg + 1, numpy's "Polyfit may be poorly conditioned"), numpy returns one
solution of many, which jumps as x moves: a gradient asked of it raises, naming the line.
``full=True`` and ``cov=True`` (their outputs: the residuals, the rank, the singular values,
the covariance) are refused.
"""
from __future__ import annotations

import numpy as np

from ..errors import NoRuleError, user_location
from ..registry import rrule, whole
from ..tangents import NO_TANGENT, Thunk
from ..views import concrete
from ._shapes import bind, like, positional_names

# --- polyfit ---


def _as_array(v):
    """An argument given as a list (of numbers, or of traced numbers) as an array; an array as it is."""
    if isinstance(v, (list, tuple)):
        return np.stack([_as_array(e) for e in v])
    return v


def _tangent(t, v):
    """`t` as the tangent of argument `v` (`like`); of a list, a list of the entries' tangents."""
    if isinstance(v, (list, tuple)):
        return type(v)(_tangent(t[i], e) for i, e in enumerate(v))
    return like(t, v)


def _powers(x, m):
    """[1, x, x², ..., x^(m-1)], each a product of the one before and x."""
    out = [np.ones(np.shape(x), np.result_type(x, 1.0))]
    for _ in range(m - 1):
        out.append(out[-1] * x)
    return out


def _full_rank(x, w, m, rcond) -> bool:
    """Whether numpy's lstsq finds rank m for the weighted Vandermonde matrix (its scaled
    columns, its rcond): then the least-squares solution is unique and smooth."""
    x = np.asarray(concrete(x)) + 0.0
    a = np.vander(x, m)
    if w is not None:
        a = a * (np.asarray(concrete(w)) + 0.0)[:, None]
    a = a / np.sqrt(np.sum(a * a, axis=0))
    s = np.linalg.svd(a, compute_uv=False)
    rcond = len(x) * np.finfo(x.dtype).eps if rcond is None else rcond
    return bool(np.all(np.isfinite(s))) and int(np.sum(s > rcond * s[0])) == m


@rrule(np.polyfit, formula=whole(
    "Σⱼ wᵢ·Āᵢⱼ·∂Vᵢⱼ/∂{a[0]}ᵢ, Ā = r·zᵀ - (A·z)·{y}ᵀ (V the Vandermonde matrix of {a[0]}, A = W·V, "
    "z = (AᵀA)⁻¹·{dy}, r = W·{a[1]} - A·{y} the weighted residuals)",
    "W·A·z, z = (AᵀA)⁻¹·{dy} (A = W·V: the least-squares fit is linear in {a[1]})",
    None,
    None,
    None,
    "Σⱼ Āᵢⱼ·Vᵢⱼ + (A·z)ᵢ·{a[1]}ᵢ (Ā, A, z as for {a[0]})",
    None,
))
def polyfit_rrule(x, y, *args, **kwargs):
    """In y (linear), x and w, where the fit is unique; full=True and cov=True are refused."""
    b = bind(np.polyfit, (x, y, *args), kwargs)
    deg = b["deg"]
    for option, also in (("full", "the residuals from np.polyval(p, x) - y"),
                         ("cov", "the covariance from the coefficients: for example "
                                 "np.linalg.inv(V.T @ V) * np.sum(r**2) / (len(x) - deg - 1), with r = np.polyval(p, x) - y "
                                 "and V = x[:, None] ** np.arange(deg, -1, -1)")):
        if b.get(option):
            raise NotImplementedError(
                f"tapegrad has no derivative of numpy.polyfit with {option}=True (at {user_location()}); "
                f"fit with np.polyfit(x, y, deg) and compute {also}, which are differentiated")
    w, rcond = b.get("w"), b.get("rcond")
    xa, ya = _as_array(x), _as_array(y)
    wa = None if w is None else _as_array(w)
    m = int(deg) + 1
    p = np.polyfit(xa, ya, deg, rcond, False, wa)
    unique = _full_rank(xa, wa, m, rcond)
    where = user_location()
    positional = positional_names(np.polyfit, 2 + len(args))

    def polyfit_pullback(dp):
        if not unique:
            raise NoRuleError(
                f"numpy.polyfit at {where} is rank-deficient (fewer distinct x than deg + 1 = {m}, or "
                f"weights of 0): its coefficients are one of many least-squares solutions, which jumps "
                f"as x moves, so tapegrad gives it no derivative; lower deg, or fit distinct x")
        pw = _powers(xa, m)
        vander = np.stack(pw[::-1], axis=1)  # column j: x^(m-1-j), as np.vander
        ws = 1.0 if wa is None else np.reshape(wa, (-1, 1))
        a = vander * ws
        cols = 1 if np.ndim(ya) == 1 else np.shape(ya)[1]
        y2, p2, dp2 = (np.reshape(t, (np.shape(t)[0], cols)) for t in (ya, p, dp))
        bb = y2 * ws
        # z = (AᵀA)⁻¹ p̄, solved on A's columns scaled to unit norm: AᵀA = S (AsᵀAs) S
        scale = np.sqrt(np.sum(a * a, axis=0))
        a_s = a / scale
        z = np.linalg.solve(np.matmul(a_s.T, a_s), dp2 / scale[:, None]) / scale[:, None]
        db = np.matmul(a, z)
        resid = bb - np.matmul(a, p2)
        da = np.matmul(resid, z.T) - np.matmul(db, p2.T)

        def dx():
            # ∂x^q/∂x = q x^(q-1): column j holds q = m-1-j
            slopes = [(m - 1 - j) * pw[m - 2 - j] for j in range(m - 1)]
            dvander = np.stack(slopes + [np.zeros(np.shape(xa), np.result_type(xa, 1.0))], axis=1)
            return _tangent(np.sum(da * ws * dvander, axis=1), x)

        def dy():
            return _tangent(np.reshape(db * ws, np.shape(ya)), y)

        def dw():
            return _tangent(np.sum(da * vander, axis=1) + np.sum(db * y2, axis=1), w)

        tangents = {"x": Thunk(dx), "y": Thunk(dy), "w": Thunk(dw)}
        return NO_TANGENT, *(tangents.get(name, NO_TANGENT) for name in positional)

    return p, polyfit_pullback

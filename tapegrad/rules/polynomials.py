"""numpy's polynomial helpers (np.poly, polyadd, polysub, polymul, polyder, polyint, polydiv,
roots) and np.polynomial's evaluators (polyval, chebval, legval, hermval, hermeval, lagval),
traced through on traced coefficients.

Each is numpy's own steps with numpy calls on traced values (numpy's bodies start with
``np.atleast_1d`` / ``np.array(c, copy=False)``, which a traced value refuses; ``declare(fn,
traced_by=...)`` sends the call here, as in `tapegrad.rules.functional`): sums of coefficient
vectors padded with zeros in front, products by np.convolve, derivatives and integrals by the
powers' factors, long division by numpy's loop, roots as the eigenvalues of the companion
matrix (np.linalg.eigvals' rule: distinct roots), evaluation by Horner's or Clenshaw's
recurrence. poly1d arguments run numpy's own bodies (they are not traced values).
"""
from __future__ import annotations

import numpy as np

from ..registry import declare

__all__ = ["poly", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv", "roots"]


def _vector(a):
    return np.reshape(a, (1,)) if np.ndim(a) == 0 else a


def _padded(a1, a2):
    a1, a2 = _vector(a1), _vector(a2)
    diff = np.shape(a2)[0] - np.shape(a1)[0]
    if diff > 0:
        a1 = np.concatenate([np.zeros(diff, np.result_type(a1)), a1])
    elif diff < 0:
        a2 = np.concatenate([np.zeros(-diff, np.result_type(a2)), a2])
    return a1, a2


def polyadd(a1, a2):
    """``np.polyadd`` on traced values: the shorter padded with zeros in front, then added."""
    a1, a2 = _padded(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """``np.polysub`` on traced values: the shorter padded with zeros in front, then subtracted."""
    a1, a2 = _padded(a1, a2)
    return a1 - a2


def polymul(a1, a2):
    """``np.polymul`` on traced values: np.convolve of the coefficients."""
    return np.convolve(_vector(a1), _vector(a2))


def polyder(p, m=1):
    """``np.polyder`` on traced values: each coefficient times its power, m times."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _vector(p)
    for _ in range(m):
        n = np.shape(p)[0] - 1
        p = p[:-1] * np.arange(n, 0, -1) if n > 0 else p[:0]
        if np.shape(p)[0] == 0:
            p = np.zeros(1, np.result_type(p, float))
    return p


def polyint(p, m=1, k=None):
    """``np.polyint`` on traced values: each coefficient over its new power, the constant k appended."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = np.zeros(m, float)
    k = _vector(k)
    if np.shape(k)[0] == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if np.shape(k)[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _vector(p)
    for i in range(m):
        p = np.concatenate([p / np.arange(np.shape(p)[0], 0, -1), np.reshape(k[i], (1,))])
    return p


def polydiv(u, v):
    """``np.polydiv`` on traced values: numpy's long division, then its trimming of leading zeros."""
    u, v = _vector(u), _vector(v)
    w = u[0] + v[0]
    m, n = np.shape(u)[0] - 1, np.shape(v)[0] - 1
    dtype = np.result_type(w)
    scale = 1.0 / v[0]
    r = [np.astype(u[i], dtype) for i in range(m + 1)]
    q = []
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q.append(d)
        for j in range(n + 1):
            r[k + j] = r[k + j] - d * v[j]
    q = np.stack(q) if q else np.zeros(1, dtype)
    r = np.stack(r)
    while np.shape(r)[0] > 1 and np.allclose(r[0], 0, rtol=1e-14):
        r = r[1:]
    return q, r


def roots(p):
    """``np.roots`` on traced values: the eigenvalues of the companion matrix, zeros appended for
    trailing zero coefficients (which, as the leading ones, are found from the values)."""
    p = _vector(p)
    if np.ndim(p) != 1:
        raise ValueError("Input must be a rank-1 array.")
    nonzero = np.flatnonzero(p)
    if np.shape(nonzero)[0] == 0:
        return np.array([])
    first, last = int(nonzero[0]), int(nonzero[-1])
    trailing = np.shape(p)[0] - last - 1
    p = p[first:last + 1]
    if not np.issubdtype(np.result_type(p), np.inexact):
        p = np.astype(p, float)
    n = np.shape(p)[0]
    if n > 1:
        top = np.reshape(-p[1:] / p[0], (1, n - 1))
        companion = np.concatenate([top, np.eye(n - 2, n - 1, dtype=np.result_type(p))])
        found = np.linalg.eigvals(companion)
    else:
        found = np.array([])
    if trailing:
        found = np.concatenate([found, np.zeros(trailing, np.result_type(found))])
    return found


def poly(seq_of_zeros):
    """``np.poly`` on traced values: the product of (x - zᵢ) by np.convolve; the eigenvalues of a
    square matrix first; real coefficients when the zeros are complex conjugate pairs."""
    z = _vector(seq_of_zeros)
    shape = np.shape(z)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        z = np.linalg.eigvals(z)
    elif len(shape) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if np.shape(z)[0] == 0:
        return 1.0
    a = np.ones(1, np.result_type(z))
    for zero in z:
        a = np.convolve(a, np.stack([np.ones_like(zero), -zero]))
    if np.iscomplexobj(a):
        c = np.astype(z, complex)
        if np.all(np.equal(np.sort(c), np.sort(np.conj(c)))):
            a = np.real(a)
    return a


for _fn in __all__:
    declare(getattr(np, _fn), traced_by=globals()[_fn])
del _fn

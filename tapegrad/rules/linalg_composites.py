"""np.linalg's functions built of others, traced through on traced values: cond, tensorsolve,
tensorinv.

numpy's own definitions, written with numpy calls on traced values (numpy's bodies start with
``np.asarray``, which a traced value refuses; ``declare(fn, traced_by=...)`` sends the call
here, as in `tapegrad.rules.functional`):

- cond(x, p): for p None, 2 or -2 the ratio of the largest to the smallest singular value
  (``svd(x, compute_uv=False)``), inverted for -2; for 'fro', 'nuc', ±1 and ±inf
  ``norm(x, p) · norm(inv(x), p)``. (numpy turns the nan of a singular matrix into inf; a
  traced singular matrix has no derivative there, and gets numpy's nan-to-inf value too.)
- tensorsolve(a, b, axes): a's axes moved to the end, a reshaped into a square matrix, one
  ``solve``, the result reshaped to a's trailing shape.
- tensorinv(a, ind): a reshaped into a square matrix, one ``inv``, reshaped to
  ``a.shape[ind:] + a.shape[:ind]``.
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import declare

__all__ = ["cond", "tensorsolve", "tensorinv"]


def cond(x, p=None):
    """``np.linalg.cond`` on traced values: numpy's definition by svd, or by norm · norm(inv)."""
    if np.size(x) == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = np.linalg.svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        r = np.linalg.norm(x, p, axis=(-2, -1)) * np.linalg.norm(np.linalg.inv(x), p, axis=(-2, -1))
    if np.any(np.isnan(r)):
        r = np.where(np.logical_and(np.isnan(r), np.logical_not(np.any(np.isnan(x), axis=(-2, -1)))), np.inf, r)
    return r


def tensorsolve(a, b, axes=None):
    """``np.linalg.tensorsolve`` on traced values: one solve of a reshaped into a square matrix."""
    an = np.ndim(a)
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = np.transpose(a, order)
    old = np.shape(a)[-(an - np.ndim(b)):]
    n = math.prod(old)
    if np.size(a) != n ** 2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return np.reshape(np.linalg.solve(np.reshape(a, (n, n)), np.ravel(b)), old)


def tensorinv(a, ind=2):
    """``np.linalg.tensorinv`` on traced values: one inv of a reshaped into a square matrix."""
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = np.shape(a)
    n = math.prod(old[:ind])
    return np.reshape(np.linalg.inv(np.reshape(a, (n, -1))), old[ind:] + old[:ind])


for _fn in __all__:
    declare(getattr(np.linalg, _fn), traced_by=globals()[_fn])
del _fn

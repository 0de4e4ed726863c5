"""The nan-ignoring reductions without rules of their own, traced through on traced values:
nanvar, nanstd, nanprod, nancumsum, nancumprod, nanmedian.

Each is numpy's definition on the array with its nan entries replaced by the operation's
identity (``np.where(np.isnan(x), 0 or 1, x)``), through reductions that have rules (sum,
prod, cumsum, cumprod, sqrt; nanmedian through np.nanquantile's rule at q = 1/2, numpy's
median being its 'linear' quantile). The nan entries get a zero derivative, as in the rules of
np.nansum and np.nanmean; a slice of nan alone gives numpy's nan (and its warning).
"""
from __future__ import annotations

import numpy as np

from ..registry import declare

__all__ = ["nanvar", "nanstd", "nanprod", "nancumsum", "nancumprod", "nanmedian"]


def _no_out(fn, out):
    if out is not None:
        raise NotImplementedError(f"tapegrad has no derivative of numpy.{fn} with out=; use its result")


def _filled(a, value):
    return np.where(np.isnan(a), value, a)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """``np.nanvar`` on traced values: Σ (x - mean)² / (n - ddof) over the entries that are not nan."""
    _no_out("nanvar", out)
    if where is not None or mean is not None:
        raise NotImplementedError("tapegrad has no derivative of numpy.nanvar with where= or mean=; "
                                  "mask the entries with np.where(mask, x, np.nan) instead")
    if correction is not None:
        ddof = correction
    kept = np.logical_not(np.isnan(a))
    n = np.sum(kept, axis=axis, keepdims=True)
    mu = np.sum(_filled(a, 0), axis=axis, dtype=dtype, keepdims=True) / n
    d = np.where(kept, a - mu, 0)
    var = np.sum(d * d, axis=axis, dtype=dtype, keepdims=True) / np.maximum(n - ddof, 0)
    return var if keepdims else np.squeeze(var, axis=axis) if axis is not None else np.reshape(var, ())


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """``np.nanstd`` on traced values: the square root of nanvar."""
    return np.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.nanprod`` on traced values: np.prod with the nan entries as 1."""
    _no_out("nanprod", out)
    kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
    return np.prod(_filled(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, **kw)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``np.nancumsum`` on traced values: np.cumsum with the nan entries as 0."""
    _no_out("nancumsum", out)
    return np.cumsum(_filled(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``np.nancumprod`` on traced values: np.cumprod with the nan entries as 1."""
    _no_out("nancumprod", out)
    return np.cumprod(_filled(a, 1), axis=axis, dtype=dtype)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.nanmedian`` on traced values: np.nanquantile at 1/2 (numpy's median is its linear quantile)."""
    _no_out("nanmedian", out)
    return np.nanquantile(a, 0.5, axis=axis, keepdims=keepdims)


for _fn in __all__:
    declare(getattr(np, _fn), traced_by=globals()[_fn])
del _fn

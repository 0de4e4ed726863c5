"""numpy's set functions on traced values: unique_values, unique_counts, unique_inverse and
unique_all run numpy's own bodies (each is one call of np.unique, whose rule passes a value's
cotangent to its first occurrence); union1d and setdiff1d are traced through as gathers of
that kind; intersect1d is refused.

- union1d(a, b) is ``unique(concatenate(a, b))`` (numpy's definition): a value in both takes
  its cotangent at its first occurrence, a's copy (np.unique's convention, JAX's too).
- setdiff1d(a, b) is ``unique(a)[~isin(unique(a), b)]``: the values kept are a's, and stay
  kept under a small move of a (away from ties with b), so the gather is exact; b gets 0.
- intersect1d(a, b): a value of the intersection is in both, and moving it in one of them
  alone drops it from the result; no derivative exists, and picking one side would be silently
  partial. Refused, naming the gather to write (``a[np.isin(a, b)]``) when one side is meant.
"""
from __future__ import annotations

import numpy as np

from ..errors import NoRuleError, type_str, user_location
from ..registry import declare

__all__ = ["union1d", "setdiff1d", "intersect1d"]


def union1d(ar1, ar2):
    """``np.union1d`` on traced values: np.unique of both, joined (numpy's definition)."""
    return np.unique(np.concatenate([np.ravel(ar1), np.ravel(ar2)]))


def setdiff1d(ar1, ar2, assume_unique=False):
    """``np.setdiff1d`` on traced values: ar1's unique values that are not in ar2, gathered."""
    a = np.ravel(ar1) if assume_unique else np.unique(ar1)
    b = ar2 if assume_unique else np.unique(ar2)
    return a[np.isin(a, b, assume_unique=True, invert=True)]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """``np.intersect1d`` of traced values: refused (see the module docstring)."""
    raise NoRuleError(
        f"numpy.intersect1d({type_str(ar1)}, {type_str(ar2)}) at {user_location()} has no derivative: "
        f"each value of the intersection is in both arguments, and moving it in one alone drops it from "
        f"the result. To take the common values from one side, gather them: a[np.isin(a, b)] "
        f"(np.unique(a[np.isin(a, b)]) for numpy's sorted unique values), which differentiates in a")


for _fn in __all__:
    declare(getattr(np, _fn), traced_by=globals()[_fn])
del _fn
for _fn in (np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all):
    declare(_fn, traced_by=_fn._implementation)  # one call of np.unique, on the traced value
del _fn

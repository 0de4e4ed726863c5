"""The table of non-differentiable functions: recorded on tapes, derivatives stop at them.

Each of these is piecewise constant in its float inputs (rounding, signs, tests, indices,
counts) or takes only integers, so its derivative is zero wherever it exists; a gradient that
reaches one of them stops there, and an input that only such functions see gets
``ZeroTangent()``. Rules use some of them inside pullbacks (``sign``, ``rint``, comparisons,
``isnan``, ``signbit``), which keeps those pullbacks traceable.

Audited: every entry is piecewise constant in *every* argument. ``heaviside`` (smooth in its
second argument) and ``full_like`` (in its fill value) have rules in `partial` instead.
"""
from __future__ import annotations

import numpy as np

from ..registry import declare, nondifferentiable

# --- comparisons and logic ---

nondifferentiable(
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    # ``if np.all(x > 0):``; array_equal and array_equiv compare whole arrays (a bool)
    np.all, np.any, np.array_equal, np.array_equiv,
)

# --- rounding and signs ---

nondifferentiable(np.floor, np.ceil, np.trunc, np.fix, np.floor_divide, np.sign, np.signbit)
# a complex number rounded is still piecewise constant (each part rounded apart); np.sign of a
# complex z is z/|z|, which is not, so it stays out
nondifferentiable(np.round, np.around, np.rint, complex=True)

# --- tests of values and types ---

nondifferentiable(
    np.isnan, np.isfinite, np.isinf, np.isposinf, np.isneginf, np.iscomplex, np.isreal,
)

# --- indices and counts ---

nondifferentiable(
    np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero, np.argwhere, np.searchsorted,
    np.count_nonzero,
)

# --- new arrays shaped like an argument (their values do not depend on it) ---

# (no dependence at all, on complex values too; full_like: rules/partial.py)
nondifferentiable(np.zeros_like, np.ones_like, np.empty_like, complex=True)

# --- bitwise operations on integers ---

nondifferentiable(
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
)

# --- bins, set membership, sort keys, index conversions, ranks ---

# (np.bincount has a rule, rules/composites.py: it is a scatter-add of its weights)
nondifferentiable(
    np.digitize, np.isin, np.lexsort, np.nanargmax, np.nanargmin, np.diag_indices_from,
    np.tril_indices_from, np.triu_indices_from, np.ravel_multi_index, np.unravel_index,
    np.linalg.matrix_rank,
)

# --- integers, bits, dates ---

nondifferentiable(
    np.gcd, np.lcm, np.bitwise_count, np.packbits, np.unpackbits, np.isnat,
    np.busday_offset, np.busday_count, np.is_busday,
)


def common_type(*arrays):
    """``np.common_type`` of traced values: a type, read from their dtypes alone (which are
    fixed while tracing), as np.result_type is."""
    return np.common_type(*[np.empty(0, np.result_type(a)) for a in arrays])


declare(np.common_type, traced_by=common_type)

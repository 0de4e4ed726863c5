"""numpy's functions that call the user's functions: np.piecewise and np.apply_along_axis,
traced through rather than recorded.

These have no rules. Their derivative is that of the functions they call, which only a trace
of those functions can give (a branch of np.piecewise may close over traced parameters, which
a rule, called with plain values, would not see). numpy's own bodies start with
``np.asanyarray`` of their argument, which a traced value refuses; so a traced (or dual)
argument sends the call here instead (declared with ``declare(fn, traced_by=...)``, the hook
for numpy functions that traced values handle themselves), to numpy's steps written with
numpy calls on traced values. The tape then holds what numpy does, in numpy's names:

- np.piecewise: ``y = zeros_like(x)``, then for each condition in order ``y[cond] =
  func(x[cond])`` (recorded as ``getitem`` and ``updated``), or ``y[cond] = value`` for a
  constant (a traced number too, which gets the sum of its elements' cotangents). Each branch
  sees only its own elements, as in numpy, so a branch that is nan or raises outside its
  condition (``np.sqrt`` of the negative elements) costs nothing: no ``0 · nan`` in the
  gradient, as an ``np.where`` of every branch would give. The conditions are piecewise
  constant and get no derivative; where they overlap the last one wins, as in numpy.
- np.apply_along_axis: ``func1d`` is called on each 1-d slice along axis (a traced slice, so
  its own ops are recorded, once per slice as numpy's loop calls it), and the results are
  joined with ``np.stack`` and put in numpy's layout (the result's axes where axis was).

numpy dispatches np.piecewise on x and the conditions, and np.apply_along_axis on arr only: a
plain array there, with traced values only inside the functions (closures, ``*args``), runs
numpy's own body, which refuses to write a traced value into its plain result
(`ConcreteValueError`). Make the array traced (``x + 0 * a`` of a traced a), or write the
branches with np.where.
"""
from __future__ import annotations

import operator

import numpy as np

from ..arraylike import ArrayLike, updated
from ..registry import declare

__all__ = ["piecewise", "apply_along_axis"]


def _read(x, index):
    """``x[index]``, also of a plain `x` at a traced `index` (recorded: numpy's own indexing of
    a plain array would ask the traced index for a plain one, which it refuses)."""
    if not isinstance(x, ArrayLike) and isinstance(index, ArrayLike):
        return index._dispatch(operator.getitem, (x, index), None)
    return x[index]


def _as_condition(c):
    """A condition as a boolean array: a traced one as it is (comparisons give booleans)."""
    return c if isinstance(c, ArrayLike) else np.asarray(c, dtype=bool)


# --- piecewise ---


def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise(x, condlist, funclist, *args, **kw)`` on traced or dual values: numpy's
    steps, ``y[cond] = func(x[cond], *args, **kw)`` for each condition in order."""
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        x = np.reshape(x, ())  # a number, as numpy's asanyarray makes it: y[cond] needs an array
    n2 = len(funclist)
    # numpy's undocumented forms: one condition alone (a bool, or an array holding one per element)
    if isinstance(condlist, (list, tuple)):
        one = not isinstance(condlist[0], (list, np.ndarray, ArrayLike)) and np.ndim(x) != 0
    else:
        one = np.ndim(condlist) == 0 or np.ndim(condlist) == 1 and np.ndim(x) != 0
    conds = [_as_condition(c) for c in ([condlist] if one else condlist)]
    n = len(conds)
    if n == n2 - 1:  # the "otherwise" condition: none of the others
        taken = conds[0]
        for c in conds[1:]:
            taken = np.logical_or(taken, c)
        conds.append(np.logical_not(taken))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = np.zeros_like(x)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = updated(y, cond, func)
        else:
            vals = _read(x, cond)
            if np.size(vals) > 0:
                y = updated(y, cond, func(vals, *args, **kw))
    return y


# --- apply_along_axis ---


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``np.apply_along_axis(func1d, axis, arr, *args, **kwargs)`` on traced or dual values:
    func1d on each traced 1-d slice, the results stacked in numpy's layout."""
    if np.ndim(arr) == 0 and not isinstance(arr, np.ndarray):
        arr = np.reshape(arr, ())
    nd = np.ndim(arr)
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), nd)
    view = arr if axis == nd - 1 else np.moveaxis(arr, axis, -1)
    outer = np.shape(view)[:-1]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [func1d(view[ind + (Ellipsis,)], *args, **kwargs) for ind in np.ndindex(outer)]
    first = results[0]
    stacked = np.stack(results)
    if np.result_type(stacked) != np.result_type(first):
        stacked = np.astype(stacked, np.result_type(first))  # numpy writes each into the first's dtype
    shape = np.shape(first)
    out = stacked if len(outer) == 1 else np.reshape(stacked, outer + shape)
    if not shape:
        return out
    # numpy puts the result's own axes where axis was
    k = len(outer)
    return np.moveaxis(out, tuple(range(k, k + len(shape))), tuple(range(axis, axis + len(shape))))


declare(np.piecewise, traced_by=piecewise)
declare(np.apply_along_axis, traced_by=apply_along_axis)

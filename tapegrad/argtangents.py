"""Tangents in the structure of arguments: a gradient shaped like the value it is of.

`tangent_of` gives the derivatives of an argument's leaves the structure its spec describes
(`tapegrad.pytree.Spec`); `finalize` gives every leaf of a tangent its primal's type, and
`fill_zeros` puts zeros where no path reached; `update` moves an argument along its tangent.
Every container is the registry's (`tapegrad.structures`): a tangent keeps its argument's
container type, and an object's is a `Tangent` of its fields.
"""
from __future__ import annotations

import numpy as np

from .errors import too_deep_error
from .structures import Boxed, is_differentiable_leaf, parts_at, split
from .tangents import NO_TANGENT, ZERO, NoTangent, ZeroTangent, map_tangent, tangent_structure

__all__ = ["tangent_of", "leaf_gradient", "finalize", "fill_zeros", "update"]

_float64 = np.float64
_ndarray = np.ndarray


def tangent_of(spec, derivative_of, concrete, memo=None):
    """The tangent of the argument `spec` describes; `derivative_of(var)` is a leaf's derivative or None.

    Containers keep their types, an object's tangent is ``Tangent[Type](field=...)``, a leaf's
    a float for a number and an array like it for an array, `ZeroTangent()` where no path
    reaches it, `NoTangent()` where it cannot have one (str, None, bool, functions, modules,
    integer arrays, and leaves in `concrete`, the Variables used as counts). `memo`, passed to
    several calls, keeps a value shared between arguments one tangent.
    """
    kind = spec.kind
    if kind == "leaf":
        x = spec.primal
        d = derivative_of(spec.var)
        tx = type(x)
        if tx is float:
            # a number's derivative, a float (the common case, which no other argument can share)
            if type(d) is float:
                return d
            if type(d) is _float64:  # what numpy's functions of a number give: a float as well
                return float(d)
        elif tx is _ndarray and type(d) is _ndarray and d.dtype is x.dtype and d.shape == x.shape:
            return d  # an array's derivative as it is (the same object at each place it is shared)
    elif kind == "static":
        return NO_TANGENT
    memo = {} if memo is None else memo
    if id(spec) in memo:
        return memo[id(spec)]
    if kind == "leaf":
        out = leaf_gradient(d, x, spec.var in concrete)
    else:
        s, cls, aux = tangent_structure(spec.structure, spec.cls, spec.aux)
        if s.fill is not None:
            # made empty first and filled after, so that a cycle back here (a list holding
            # itself) meets this very tangent: the tangent has the argument's cycle
            out = memo[id(spec)] = s.join(cls, aux, (), [])
            s.fill(out, spec.keys, _tangents_of(spec.children, derivative_of, concrete, memo))
        else:
            memo[id(spec)] = ZERO  # a cycle through a tuple contributes nothing more
            out = s.join(cls, aux, spec.keys, _tangents_of(spec.children, derivative_of, concrete, memo))
    memo[id(spec)] = out
    return out


def _tangents_of(specs, derivative_of, concrete, memo):
    """``[tangent_of(s, ...) for s in specs]``; an array leaf whose derivative is an array of
    its dtype and shape is taken at once, without a call (the weights and biases of a list of
    layers): the test of `tangent_of`'s own first case, written out here, so the two must
    change together."""
    items = []
    for s in specs:
        if s.kind == "leaf":
            x = s.primal
            if type(x) is _ndarray:
                d = derivative_of(s.var)
                if type(d) is _ndarray and d.dtype is x.dtype and d.shape == x.shape:
                    items.append(d)
                    continue
        items.append(tangent_of(s, derivative_of, concrete, memo))
    return items


def leaf_gradient(dval, x, concrete):
    """Give a leaf's derivative its argument's type: float for a number, same-dtype array for an array."""
    if type(x) is float:  # a number's derivative, a float: the common case
        if type(dval) is float:
            return dval
        if type(dval) is _float64:
            return float(dval)
    if dval is None:
        if concrete or not is_differentiable_leaf(x):
            return NO_TANGENT
        return ZERO
    if isinstance(x, Boxed) or isinstance(dval, Boxed):
        return dval  # inside an enclosing trace or forward mode: keep the value, convert nothing
    if type(x) is float or type(x) is int:
        if type(dval) is float:
            return dval
        return float(np.real(dval)) if np.ndim(dval) == 0 else dval
    if type(x) is complex:  # a complex number's gradient is complex, a real part's too
        return complex(dval) if np.ndim(dval) == 0 else dval
    if isinstance(x, np.ndarray):
        out = np.asarray(dval)
        if out.dtype != x.dtype:
            out = out.real.astype(x.dtype) if x.dtype.kind == "f" else out.astype(x.dtype)
        if out.shape != x.shape:
            out = np.broadcast_to(out, x.shape).copy()
        return out
    if isinstance(x, np.generic):
        return np.asarray(dval).astype(x.dtype if x.dtype.kind in "fc" else float)[()]
    return dval


def finalize(t, x):
    """Give every leaf of tangent `t` the type of its primal in `x` (floats, dtypes, shapes), and
    every container the type of the primal's (a packed result's mapping is a plain dict)."""
    tt = type(t)
    if tt is _ndarray:
        if type(x) is _ndarray and t.dtype is x.dtype and t.shape == x.shape:
            return t  # an array's gradient, already its type (the common leaf)
    elif (tt is list or tt is tuple) and type(x) is tt:  # (a list of (dW, db) pairs)
        return tt([finalize(v, p) for v, p in zip(t, x, strict=True)])  # (a part lost is an error, not a shorter result)
    if t is ZERO or t is NO_TANGENT or isinstance(t, (ZeroTangent, NoTangent)):
        return t
    if is_differentiable_leaf(x):
        return leaf_gradient(t, x, False)
    whole = split(x, objects=True)
    if whole is None:
        return t
    s, keys, items, aux = whole
    parts = parts_at(t, keys, ZERO)
    if parts is None:
        return t
    s, cls, aux = tangent_structure(s, type(x), aux)
    return s.join(cls, aux, keys, [finalize(v, p) for v, p in zip(parts, items)])


def fill_zeros(tangent, primal):
    """The same tangent with every `ZeroTangent()` replaced by zeros shaped like the primal leaf.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.fill_zeros({"w": tapegrad.ZeroTangent(), "b": 1.0}, {"w": np.ones(2), "b": 0.5})
    {'w': array([0., 0.]), 'b': 1.0}
    """
    try:
        if tangent is ZERO:
            return _zeros_of(primal)
        return map_tangent(_fill, tangent, primal)
    except RecursionError:
        raise too_deep_error("the value passed to fill_zeros", cycles=True) from None


def _fill(t, p):
    if t is ZERO:
        z = _zeros_of(p)
        return t if z is NO_TANGENT else z  # (a part without numbers keeps its ZeroTangent)
    return t


def _zeros_of(p):
    """The zero tangent of primal `p`, in its structure: zeros of an array's shape (and float
    dtype), 0.0 for a number, NoTangent() where no tangent can be."""
    if isinstance(p, np.ndarray):
        return np.zeros_like(p, dtype=p.dtype if p.dtype.kind in "fc" else np.float64)
    if isinstance(p, (int, float, np.number)) and not isinstance(p, bool):
        return 0.0
    whole = split(p, objects=True)
    if whole is None:
        return NO_TANGENT
    s, keys, items, aux = whole
    s, cls, aux = tangent_structure(s, type(p), aux)
    return s.join(cls, aux, keys, [_zeros_of(v) for v in items])


def update(primal, tangent, lr=None, fn=None):
    """A new copy of `primal` with each differentiable leaf moved along `tangent`.

    By default each leaf becomes ``p - lr * g`` (a gradient-descent step); pass
    ``fn(p, g)`` for any other update. Leaves with `ZeroTangent()` or `NoTangent()` are
    kept; the original object is not changed. Every container of the registry
    (`tapegrad.structures`) is copied as its own type, an object by its fields.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> params = {"w": np.array([1.0, 2.0]), "name": "layer"}
    >>> _, (_, g) = tapegrad.grad(lambda p: np.sum(p["w"] ** 2), params)
    >>> tapegrad.update(params, g, lr=0.25)
    {'w': array([0.5, 1. ]), 'name': 'layer'}
    """
    if fn is None:
        if lr is None:
            raise TypeError("update needs lr= (for p - lr * g) or fn=(p, g) -> new p")
        fn = lambda p, g: p - lr * g  # noqa: E731
    try:
        return _update(primal, tangent, fn, {})
    except RecursionError:
        raise too_deep_error("the value passed to update", cycles=True) from None


def _update(p, t, fn, memo):
    if t is ZERO or t is NO_TANGENT or isinstance(t, (ZeroTangent, NoTangent)):
        return p
    if id(p) in memo:
        return memo[id(p)]
    whole = split(p, objects=True)
    parts = None
    if whole is not None:
        s, keys, items, aux = whole
        parts = parts_at(t, keys, ZERO)
    if parts is None:
        out = fn(p, t)  # a leaf (or an object whose tangent is not by its fields)
        if type(p) is np.ndarray and isinstance(out, np.generic):
            out = np.asarray(out)  # (a 0-d array stays one: numpy's arithmetic on it gives a scalar)
    else:
        out = s.join(type(p), aux, keys, [_update(v, g, fn, memo) for v, g in zip(items, parts)])
    memo[id(p)] = out
    return out

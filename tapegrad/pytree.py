"""Structures: the one place that knows how values nest.

Call arguments nest in lists and tuples (``np.stack([a, b])``, ``cho_solve((c, lower), b)``):
`nested`, `find_nested` and `map_nested` walk them, loops all the way down but for one
level of recursion per level of nesting. Every part of tapegrad that looks inside call
arguments (the tracer choosing a tape, a context splitting values from Variables, forward
mode splitting values from variations, the sweep reading tangents) uses these.

Tracing an argument makes a *traced copy* of it: every differentiable leaf (a number, a float
array) is replaced by a Tracer bound to an Input op, and every container or object on the way
is rebuilt around the copies, so the user's own objects are never touched. The walk leaves a
*spec* behind, a tree that remembers each leaf's Input and each node's type, so that the
derivatives can be put back together in the shape of the argument:

- tuple, list, dict, NamedTuple: the same container type;
- dataclass, plain object (``__dict__`` or ``__slots__``), closure, bound method:
  ``Tangent[Type](field=...)``;
- a leaf: float for a number, an array of the same shape and dtype for an array,
  `ZeroTangent()` when no path reaches it, `NoTangent()` when it cannot have a derivative
  (str, None, bool, functions, modules, integer arrays, integers used as counts).

A value reachable along two paths (the same array in two fields) is one Input, so its
derivative is the sum of both shares and appears at both places.

A structured result, a tuple, list, dict, NamedTuple or Tangent of traced values, is packed
into one op, `build(spec, *leaves)`, so that a tape has one result and a structured seed can
be unpacked again by the op's pullback.
"""
from __future__ import annotations

import dataclasses
import types

import numpy as np

from .arraylike import ArrayLike
from .errors import SeedError
from .tangents import NO_TANGENT, ZERO, NoTangent, Tangent, ZeroTangent, _map

__all__ = ["nested", "find_nested", "any_nested", "map_nested",
           "fill_zeros", "update", "StructureTracer", "leaf_gradient",
           "is_differentiable_leaf", "object_fields", "rebuild_object", "spec_key", "finalize", "tangent_of",
           "OutputSpec", "flatten_output", "unflatten_output", "flatten_cotangent", "build"]


def nested(items):
    """Every item of `items`, looking inside lists and tuples (not other containers)."""
    for a in items:
        t = type(a)
        if t is list or t is tuple:
            yield from nested(a)
        else:
            yield a


def find_nested(items, kind):
    """The first item of `items` (inside lists and tuples too) that is an instance of `kind`, or None."""
    for a in nested(items):
        if isinstance(a, kind):
            return a
    return None


def any_nested(items, test) -> bool:
    """True when `test` holds for an item of `items`, looking inside lists and tuples."""
    for a in nested(items):
        if test(a):
            return True
    return False


def map_nested(fn, items):
    """`items` with `fn` applied to every item, lists and tuples rebuilt with their own types."""
    out = []
    for a in items:
        t = type(a)
        out.append(t(map_nested(fn, a)) if t is list or t is tuple else fn(a))
    return out


# --- structured arguments ---


def fill_zeros(tangent, primal):
    """The same tangent with every `ZeroTangent()` replaced by zeros shaped like the primal leaf.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.fill_zeros({"w": tapegrad.ZeroTangent(), "b": 1.0}, {"w": np.ones(2), "b": 0.5})
    {'w': array([0., 0.]), 'b': 1.0}
    """
    def fill(t, p):
        if t is ZERO:
            if isinstance(p, np.ndarray):
                return np.zeros_like(p, dtype=_float_dtype(p))
            if isinstance(p, (int, float, np.number)) and not isinstance(p, bool):
                return 0.0
            return ZERO
        return t

    if isinstance(tangent, ZeroTangent):
        return _fill_structure(primal)
    return _map(fill, tangent, primal)


def _float_dtype(p):
    """The dtype of a tangent of array p: its own if floating (float32 stays float32), else float64."""
    return p.dtype if p.dtype.kind in "fc" else np.dtype(np.float64)


def _fill_structure(primal):
    if isinstance(primal, np.ndarray):
        return np.zeros_like(primal, dtype=_float_dtype(primal))
    if isinstance(primal, (int, float)) and not isinstance(primal, bool):
        return 0.0
    if isinstance(primal, dict):
        return {k: _fill_structure(v) for k, v in primal.items()}
    if isinstance(primal, tuple) and hasattr(primal, "_fields"):
        return type(primal)(*[_fill_structure(v) for v in primal])
    if isinstance(primal, (tuple, list)):
        return type(primal)(_fill_structure(v) for v in primal)
    fields = object_fields(primal)
    if fields is not None:
        return Tangent(type(primal), **{k: _fill_structure(v) for k, v in fields.items()})
    return NO_TANGENT


def update(primal, tangent, lr=None, fn=None):
    """A new copy of `primal` with each differentiable leaf moved along `tangent`.

    By default each leaf becomes ``p - lr * g`` (a gradient-descent step); pass
    ``fn(p, g)`` for any other update. Leaves with `ZeroTangent()` or `NoTangent()` are
    kept; the original object is not changed.

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
    return _update(primal, tangent, fn, {})


def _update(p, t, fn, memo):
    if t is ZERO or t is NO_TANGENT or isinstance(t, (ZeroTangent, NoTangent)):
        return p
    if id(p) in memo:
        return memo[id(p)]
    if isinstance(p, dict):
        out = {k: _update(v, t.get(k, ZERO), fn, memo) for k, v in p.items()}
    elif isinstance(p, tuple) and hasattr(p, "_fields"):
        out = type(p)(*[_update(v, g, fn, memo) for v, g in zip(p, t)])
    elif isinstance(p, (tuple, list)):
        out = type(p)(_update(v, g, fn, memo) for v, g in zip(p, t))
    elif isinstance(t, Tangent):
        out = rebuild_object(p, {k: _update(v, t.fields.get(k, ZERO), fn, memo)
                                  for k, v in (object_fields(p) or {}).items()})
    else:
        out = fn(p, t)
    memo[id(p)] = out
    return out


# --- the walk over an argument ---


def is_differentiable_leaf(x) -> bool:
    """Numbers (not bools) and arrays of a floating or complex dtype; a Tracer of such a value."""
    t = type(x)
    if t is float or t is int or t is complex:
        return True
    if isinstance(x, ArrayLike):  # a value traced by an enclosing trace, or a dual number
        return is_differentiable_leaf(x._val)
    if t is bool:
        return False
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc"
    if isinstance(x, np.generic):
        return x.dtype.kind in "fciu"
    return False


# objects of these packages are never walked into: they are library state, not model parameters
_OPAQUE_MODULES = ("numpy", "scipy", "tapegrad", "ast", "typing", "collections",
                   "functools", "threading", "logging", "io", "re", "enum", "abc", "inspect",
                   "pandas", "matplotlib", "torch", "jax", "jaxlib", "autograd")


def object_fields(x):
    """The fields a plain object, dataclass, closure or bound method is differentiated through, or None."""
    if isinstance(x, types.FunctionType):
        if not x.__closure__ or getattr(x, "__tapegrad_primitive__", False):
            return None  # a primitive is a function of its arguments only
        return {name: cell.cell_contents for name, cell in zip(x.__code__.co_freevars, x.__closure__)
                if _cell_filled(cell)}
    if isinstance(x, types.MethodType):
        return {"__self__": x.__self__}
    if isinstance(x, (type, types.ModuleType, types.BuiltinFunctionType, np.ufunc)):
        return None
    cls = type(x)
    if (cls.__module__ or "").split(".")[0] in _OPAQUE_MODULES:
        return None
    if cls.__new__ is not object.__new__ and not dataclasses.is_dataclass(x):
        return None  # built by its own __new__ (often in C): tapegrad could not make a copy
    if dataclasses.is_dataclass(x):
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    fields = {}
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        fields.update(d)
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()) if isinstance(getattr(klass, "__slots__", ()), (tuple, list)) else (klass.__slots__,):
            if name not in ("__dict__", "__weakref__") and hasattr(x, name):
                fields[name] = getattr(x, name)
    if not fields and d is None:
        return None
    return fields


def _cell_filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def rebuild_object(x, fields):
    """A copy of object `x` with `fields` set; never calls __init__ or mutates `x`."""
    if isinstance(x, types.FunctionType):
        cells = []
        for name, cell in zip(x.__code__.co_freevars, x.__closure__):
            cells.append(types.CellType(fields[name]) if name in fields else cell)
        g = types.FunctionType(x.__code__, x.__globals__, x.__name__, x.__defaults__, tuple(cells))
        g.__kwdefaults__ = x.__kwdefaults__
        g.__dict__.update(x.__dict__)
        g.__qualname__ = x.__qualname__
        return g
    if isinstance(x, types.MethodType):
        return types.MethodType(x.__func__, fields["__self__"])
    new = object.__new__(type(x))
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        new.__dict__.update(d)
    for name, v in fields.items():
        object.__setattr__(new, name, v)
    return new


class LeafSpec:
    __slots__ = ("primal", "var")

    def __init__(self, primal, var):
        self.primal = primal
        self.var = var


class NodeSpec:
    __slots__ = ("primal", "kind", "children")

    def __init__(self, primal, kind, children):
        self.primal = primal
        self.kind = kind
        self.children = children  # {key: spec}


def _path(path, kind, key):
    if kind == "attr":
        return f"{path}.{key}"
    if isinstance(key, str):
        return f'{path}["{key}"]'
    return f"{path}[{key!r}]"


class StructureTracer:
    """Builds traced copies of arguments, leaf by leaf, and puts derivatives back in their shape.

    `make_leaf(value, path)` pushes an Input and returns ``(variable, stand-in)``: the Tracer
    that stands for the value while tracing (or anything else, for a walk that only reads).
    """

    def __init__(self, make_leaf):
        self.make_leaf = make_leaf
        self.memo = {}  # id(value) -> (spec, copy); keeps shared values shared

    def copy(self, x, path):
        """``(spec, traced copy)`` of `x`."""
        hit = self.memo.get(id(x))
        if hit is not None and hit[0].primal is x:
            return hit
        if is_differentiable_leaf(x):
            var, stand_in = self.make_leaf(x, path)
            out = (LeafSpec(x, var), stand_in)
            if isinstance(x, np.ndarray):
                self.memo[id(x)] = out
            return out
        t = type(x)
        if t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
            spec = NodeSpec(x, "seq", {})
            self.memo[id(x)] = (spec, x)  # a cycle back here sees the original
            items = []
            for i, v in enumerate(x):
                s, c = self.copy(v, _path(path, "item", i))
                spec.children[i] = s
                items.append(c)
            if all(c is v for c, v in zip(items, x)):
                copy = x  # nothing traced inside: keep the user's own object (and its identity)
            else:
                copy = t(*items) if isinstance(x, tuple) and hasattr(x, "_fields") else t(items)
        elif t is dict:
            spec = NodeSpec(x, "dict", {})
            self.memo[id(x)] = (spec, x)
            copy = {}
            for k, v in x.items():
                s, c = self.copy(v, _path(path, "item", k))
                spec.children[k] = s
                copy[k] = c
            if all(c is x[k] for k, c in copy.items()):
                copy = x
        else:
            fields = object_fields(x)
            if fields is None:
                return LeafSpec(x, None), x
            spec = NodeSpec(x, "object", {})
            self.memo[id(x)] = (spec, x)
            copies = {}
            for k, v in fields.items():
                s, c = self.copy(v, _path(path, "attr", k))
                spec.children[k] = s
                copies[k] = c
            copy = rebuild_object(x, copies) if any(
                c is not fields[k] for k, c in copies.items()) else x
        self.memo[id(x)] = (spec, copy)
        return spec, copy


def _static_key(x):
    """What a compiled gradient must see again to reuse its program: the value of a leaf that is not traced."""
    if isinstance(x, np.ndarray):
        return ("array", x.shape, x.dtype.str, x.tobytes())
    try:
        hash(x)
        return (type(x), x)
    except TypeError:
        return ("id", id(x))


def spec_key(spec, seen=None):
    """A hashable description of an argument's structure: types, shapes, dtypes, static values, sharing."""
    seen = {} if seen is None else seen
    if id(spec) in seen:
        return ("shared", seen[id(spec)])
    seen[id(spec)] = len(seen)
    if type(spec) is LeafSpec:
        if spec.var is None:
            return ("static", _static_key(spec.primal))
        x = spec.primal
        return ("leaf", type(x), np.shape(x), np.result_type(x).str)
    return (spec.kind, type(spec.primal),
            tuple((k, spec_key(s, seen)) for k, s in spec.children.items()))


def finalize(t, x):
    """Give every leaf of tangent `t` the type of its primal in `x` (floats, dtypes, shapes)."""
    if t is ZERO or t is NO_TANGENT or isinstance(t, (ZeroTangent, NoTangent)):
        return t
    if is_differentiable_leaf(x):
        return leaf_gradient(t, x, False)
    if isinstance(t, Tangent):
        fields = object_fields(x) or {}
        return Tangent(t.primal_type, **{k: finalize(v, fields.get(k)) for k, v in t.fields.items()})
    if isinstance(t, dict) and isinstance(x, dict):
        return {k: finalize(v, x.get(k)) for k, v in t.items()}
    if isinstance(t, tuple) and hasattr(t, "_fields"):
        return type(t)(*[finalize(v, p) for v, p in zip(t, x)])
    if isinstance(t, (tuple, list)) and isinstance(x, (tuple, list)):
        return type(t)(finalize(v, p) for v, p in zip(t, x))
    return t


def leaf_gradient(dval, x, concrete):
    """Give a leaf's derivative its argument's type: float for a number, same-dtype array for an array."""
    if dval is None:
        if concrete or not is_differentiable_leaf(x):
            return NO_TANGENT
        return ZERO
    if isinstance(x, ArrayLike) or isinstance(dval, ArrayLike):
        return dval  # inside an enclosing trace or forward mode: keep the value, convert nothing
    if type(x) is float or type(x) is int:
        if type(dval) is float:
            return dval
        return float(np.real(dval)) if np.ndim(dval) == 0 else dval
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


def tangent_of(spec, derivative_of, concrete, memo=None):
    """The tangent of the value `spec` describes; `derivative_of(var)` is a leaf's derivative or None."""
    memo = {} if memo is None else memo
    hit = memo.get(id(spec))
    if hit is not None:
        return hit
    if type(spec) is LeafSpec:
        if spec.var is None:
            out = NO_TANGENT
        else:
            out = leaf_gradient(derivative_of(spec.var), spec.primal, spec.var in concrete)
    else:
        memo[id(spec)] = ZERO  # a cycle contributes nothing more
        kids = {k: tangent_of(s, derivative_of, concrete, memo) for k, s in spec.children.items()}
        x = spec.primal
        if spec.kind == "seq":
            vals = list(kids.values())
            out = type(x)(*vals) if isinstance(x, tuple) and hasattr(x, "_fields") else type(x)(vals)
        elif spec.kind == "dict":
            out = kids
        else:
            out = Tangent(type(x), **{k: v for k, v in kids.items()})
    memo[id(spec)] = out
    return out


# --- structured results ---


class OutputSpec:
    """How to rebuild a tuple / list / dict / NamedTuple result from its leaves."""

    __slots__ = ("kind", "cls", "keys", "children")

    def __init__(self, kind, cls, keys, children):
        self.kind, self.cls, self.keys, self.children = kind, cls, keys, children

    def __repr__(self):
        if self.kind == "dict":
            return "dict(" + ", ".join(map(repr, self.keys)) + ")"
        if self.kind == "tangent":
            return "Tangent(" + ", ".join(self.keys) + ")"
        return f"{self.cls.__name__}({len(self.keys)})"


def flatten_output(x, is_leaf):
    """``(spec, leaves)`` of a result made of tuples, lists, dicts, NamedTuples and Tangents."""
    if is_leaf(x) or not isinstance(x, (tuple, list, dict, Tangent)):
        return None, [x]
    leaves = []
    children = []
    if isinstance(x, Tangent):
        keys = list(x.fields)
        items = [x.fields[k] for k in keys]
        kind, cls = "tangent", x.primal_type
    elif isinstance(x, dict):
        keys = list(x)
        items = [x[k] for k in keys]
        kind, cls = "dict", dict
    else:
        keys = list(range(len(x)))
        items = list(x)
        kind, cls = ("namedtuple" if hasattr(x, "_fields") else "seq"), type(x)
    for v in items:
        s, ls = flatten_output(v, is_leaf)
        children.append((s, len(ls)))
        leaves.extend(ls)
    return OutputSpec(kind, cls, keys, children), leaves


def unflatten_output(spec, leaves):
    if spec is None:
        return leaves[0]
    items = []
    i = 0
    for s, n in spec.children:
        items.append(unflatten_output(s, leaves[i:i + n]))
        i += n
    if spec.kind == "dict":
        return dict(zip(spec.keys, items))
    if spec.kind == "tangent":
        return Tangent(spec.cls, **dict(zip(spec.keys, items)))
    if spec.kind == "namedtuple":
        return spec.cls(*items)
    return spec.cls(items)


def flatten_cotangent(spec, dy, where):
    """The leaves of a seed or cotangent given for a structured result; ZeroTangent where absent."""
    if spec is None:
        return [dy]
    if dy is ZERO:
        return [ZERO] * _count(spec)
    if spec.kind == "tangent":
        items = [dy.fields.get(k, ZERO) if isinstance(dy, Tangent) else ZERO for k in spec.keys]
    elif spec.kind == "dict":
        if not isinstance(dy, dict) or set(dy) - set(spec.keys):
            raise SeedError(f"{where} returned a dict with keys {spec.keys}; the seed must be a "
                            f"dict with those keys, got {type(dy).__name__}")
        items = [dy.get(k, ZERO) for k in spec.keys]
    else:
        if not isinstance(dy, (tuple, list)) or len(dy) != len(spec.keys):
            raise SeedError(f"{where} returned a {spec.cls.__name__} of {len(spec.keys)}; the seed "
                            f"must be a tuple or list of {len(spec.keys)}, got {type(dy).__name__}")
        items = list(dy)
    out = []
    for (s, _), d in zip(spec.children, items):
        out.extend(flatten_cotangent(s, d, where))
    return out


def _count(spec):
    return sum(n for _, n in spec.children)


def build(spec, *leaves):
    """Pack the leaves of a structured result back into its tuple / list / dict: one op on the tape."""
    return unflatten_output(spec, leaves)

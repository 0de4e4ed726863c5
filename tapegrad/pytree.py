"""Structures: the one place that knows how values nest.

Call arguments nest in lists and tuples (``np.stack([a, b])``, ``cho_solve((c, lower), b)``):
`nested`, `find_nested` and `any_nested` walk them with loops all the way down; `map_nested`
takes one level of recursion per level of nesting. Every part of tapegrad that looks inside call
arguments (the tracer choosing a tape, a context splitting values from Variables, forward
mode splitting values from variations, the sweep reading tangents) uses these.

Arguments and results of a traced function nest deeper, and one *spec* describes both: a
tree of `Spec` nodes, one per container (its type and keys) and one per leaf, that `flatten`
leaves behind and `unflatten` fills again. An argument (tuple, list, dict, NamedTuple,
dataclass, plain object, closure, bound method) is flattened to its differentiable leaves;
each becomes an Input, and unflattening with Tracers in their places gives the traced copy the
function runs on, so the user's objects are never touched; afterwards the same spec gives the
derivatives the shape of the argument (`tangent_of`). A result (tuple, list, dict, NamedTuple,
Tangent) is flattened so that one op, ``build(spec, *leaves)``, packs it and a tape has one
result; the pullback of `build` splits a structured seed along the same spec.

A value reachable along two paths (the same array in two fields) is one spec, so one Input:
its derivative is the sum of both shares, and it appears at both places.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import random
import types

import numpy as np

from .errors import SeedError, too_deep_error, user_location
from .tangents import NO_TANGENT, ZERO, NoTangent, Tangent, ZeroTangent, map_tangent

__all__ = ["Boxed", "nested", "find_nested", "any_nested", "map_nested",
           "Spec", "flatten", "unflatten", "build", "flatten_cotangent", "spec_key", "spec_leaves",
           "is_differentiable_leaf", "object_fields", "rebuild_object",
           "tangent_of", "leaf_gradient", "finalize", "fill_zeros", "update"]

_float64 = np.float64
_ndarray = np.ndarray


class Boxed:
    """Base of the values that stand for another value, kept in ``_val``: traced values and dual
    numbers (`tapegrad.arraylike.ArrayLike`). Structures treat one as the leaf it holds."""

    __slots__ = ()


def nested(items):
    """Every item of `items`, looking inside lists and tuples (not other containers); a loop
    over a stack of iterators, so that no depth of nesting meets the recursion limit."""
    stack = [iter(items)]
    while stack:
        for a in stack[-1]:
            t = type(a)
            if t is list or t is tuple:
                stack.append(iter(a))
                break
            yield a
        else:
            stack.pop()


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


# --- leaves and objects ---


def is_differentiable_leaf(x) -> bool:
    """Numbers (not bools) and arrays of a floating or complex dtype; a Tracer of such a value."""
    t = type(x)
    if t is float or t is int or t is complex:
        return True
    if isinstance(x, Boxed):  # a value traced by an enclosing trace, or a dual number
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


#: the objects whose fields are never walked into: classes, modules, builtins and ufuncs (a
#: closure capturing only these, a loss over ``np``, has no differentiable value)
OPAQUE_TYPES = (type, types.ModuleType, types.BuiltinFunctionType, np.ufunc)


def object_fields(x):
    """The fields a plain object, dataclass, closure or bound method is differentiated through, or None."""
    if isinstance(x, types.FunctionType):
        if not x.__closure__ or getattr(x, "__tapegrad_primitive__", False):
            return None  # a primitive is a function of its arguments only
        return {name: cell.cell_contents for name, cell in zip(x.__code__.co_freevars, x.__closure__)
                if cell_filled(cell)}
    if isinstance(x, types.MethodType):
        return {"__self__": x.__self__}
    if type(x) is functools.partial:
        # the values bound into it are the function's captured values (a model's weights
        # given by partial(loss, w)), as a closure's are
        return {"func": x.func, "args": x.args, "keywords": x.keywords}
    if isinstance(x, OPAQUE_TYPES):
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


def cell_filled(cell) -> bool:
    """False for a closure's cell that holds nothing yet (a name the enclosing function has not
    bound when the closure is made)."""
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
    if type(x) is functools.partial:
        return functools.partial(fields["func"], *fields["args"], **fields["keywords"])
    new = object.__new__(type(x))
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        new.__dict__.update(d)
    for name, v in fields.items():
        object.__setattr__(new, name, v)
    return new


# --- specs: flatten and unflatten ---


class Spec:
    """One node of the tree `flatten` leaves behind: how a value is put together from its leaves.

    `kind` is "leaf" (a value of the leaves list), "static" (a value the spec keeps: a part of
    an argument that cannot be differentiated), "seq" (a tuple or list), "namedtuple", "dict",
    "object" (an argument's dataclass, plain object, closure or bound method, by its fields) or
    "tangent" (a result's Tangent). A container's spec has its type `cls`, its `keys` and one
    child spec per key. An argument's spec also holds the value it describes (`primal`), and a
    traced leaf's spec the Variable of its Input (`var`); a result's holds no values.
    """

    __slots__ = ("kind", "cls", "keys", "children", "primal", "var")

    def __init__(self, kind, primal=None, cls=None, keys=(), children=(), var=None):
        self.kind = kind
        self.primal = primal
        self.cls = cls
        self.keys = keys
        self.children = children
        self.var = var

    def __repr__(self):
        if self.kind == "dict":
            return "dict(" + ", ".join(map(repr, self.keys)) + ")"
        if self.kind == "tangent" or self.kind == "object":
            name = "Tangent" if self.kind == "tangent" else self.cls.__name__
            return f"{name}({', '.join(self.keys)})"
        if self.cls is None:
            return self.kind
        return f"{self.cls.__name__}({len(self.keys)})"

    def pack(self, items, tangent=False):
        """The container this spec describes, holding `items`; as a `tangent`, an object's is a Tangent."""
        cls = self.cls
        if self.kind == "seq":
            if cls is collections.deque and self.primal is not None:
                return collections.deque(items, maxlen=self.primal.maxlen)
            return cls(items)
        if self.kind == "namedtuple":
            return cls(*items)
        fields = dict(zip(self.keys, items))
        if self.kind == "dict":
            if cls is collections.defaultdict and self.primal is not None:
                out = collections.defaultdict(self.primal.default_factory)
                out.update(fields)
                return out
            return fields if cls is dict or cls is None else cls(fields)
        if self.kind == "object" and not tangent:
            return rebuild_object(self.primal, fields)
        return Tangent(self.cls, **fields)


def _parts(x, argument):
    """``(kind, cls, keys, items)`` of a container `flatten` walks into, or None.

    An argument's copy must behave as the original, so only tuples, lists and dicts of exactly
    those types count (and NamedTuples), and objects count by their fields; a result is packed
    into a new container, so their subclasses count too, and Tangents.
    """
    t = type(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return "namedtuple", t, range(len(x)), list(x)
    if t is tuple or t is list or (not argument and isinstance(x, (tuple, list))):
        return "seq", t, range(len(x)), list(x)
    if t is dict or (not argument and isinstance(x, dict)):
        return "dict", dict, list(x), list(x.values())
    if t is collections.OrderedDict or t is collections.defaultdict:
        return "dict", t, list(x), list(x.values())  # an argument's copy keeps its type
    if t is collections.deque:  # (a result's too: a gradient of a deque is one)
        return "seq", t, range(len(x)), list(x)
    if argument:
        fields = object_fields(x)
        return None if fields is None else ("object", t, list(fields), list(fields.values()))
    if isinstance(x, Tangent):
        return "tangent", x.primal_type, list(x.fields), list(x.fields.values())
    return None


def _path(path, kind, key):
    if kind == "object":
        return f"{path}.{key}"
    if isinstance(key, str):
        return f'{path}["{key}"]'
    return f"{path}[{key!r}]"


def flatten(x, *, argument=False, leaf=None, path="", memo=None):
    """``(spec, leaves)`` of `x`: the `Spec` of its structure and the values at its leaves, depth first.

    A result (the default): tuples, lists, dicts, NamedTuples and Tangents are walked into, and
    every other value is a leaf. An argument (``argument=True``): tuples, lists and dicts of
    exactly those types, NamedTuples, dataclasses, plain objects, closures and bound methods
    are walked into; the differentiable values are the leaves, and every other value stays in
    the spec. ``leaf(value, path) -> (var, stand_in)``, if given, is called at each leaf, in
    order: the leaf's spec keeps `var`, and the list holds `stand_in` in place of the value.
    `path` names `x` in those paths (``params["w"]``, ``model.weights``). `memo` (id of a value
    -> its spec), passed to several calls, keeps a value reached twice (an array, a container,
    also across the calls) one spec; a cycle back to a container meets its own spec.
    """
    leaves = []
    spec = _flatten(x, argument, leaf, path, {} if memo is None else memo, leaves)
    return spec, leaves


def _refusal(x):
    """Why an argument that holds numbers cannot be differentiated as given, with the fix, or None."""
    if isinstance(x, np.ma.MaskedArray):
        return ("a masked array: its mask would be ignored by the gradient; pass the data and "
                "the mask as two arrays (np.where(mask, 0.0, x) inside the function)")
    if isinstance(x, np.matrix):
        return ("an np.matrix, whose * is a matrix product where a traced array's is "
                "elementwise; pass np.asarray(m) and use @ for the product")
    if isinstance(x, np.ndarray) and x.dtype.names is not None and any(
            x.dtype[name].kind in "fc" for name in x.dtype.names):
        names = ", ".join(x.dtype.names)
        return (f"a {'record' if isinstance(x, np.recarray) else 'structured'} array (fields "
                f"{names}), whose float fields tapegrad cannot trace as one array; pass its "
                f"fields as a dict, {{name: x[name] for name in x.dtype.names}}, and read "
                f"x[\"{x.dtype.names[0]}\"] from it as before")
    if isinstance(x, np.ndarray) and x.dtype.kind == "O" and any(map(is_differentiable_leaf, x.flat)):
        return ("an object array of numbers, which tapegrad cannot trace; pass "
                "x.astype(float), or a list of the values")
    if isinstance(x, (set, frozenset)) and any(map(is_differentiable_leaf, x)):
        return (f"a {type(x).__name__} of numbers, which has no order to give a gradient in "
                f"and merges equal values; pass a list or a tuple")
    return None


def _flatten(x, argument, leaf, path, memo, leaves):
    hit = memo.get(id(x))
    if hit is not None and hit.primal is x:
        return hit
    if argument and is_differentiable_leaf(x):
        parts = None
        if type(x) is not np.ndarray and isinstance(x, np.ndarray) and _refusal(x):
            raise TypeError(f"the argument {path or ''} given at {user_location()} is {_refusal(x)}")
    else:
        parts = _parts(x, argument)
        if parts is None and argument:
            if isinstance(x, (set, frozenset, np.ndarray)) and _refusal(x):
                raise TypeError(f"the argument {path or ''} given at {user_location()} is {_refusal(x)}")
            return Spec("static", x)
    if parts is None:
        spec = Spec("leaf", x if argument else None)
        if leaf is None:
            leaves.append(x)
        else:
            spec.var, stand_in = leaf(x, path)
            leaves.append(stand_in)
        if argument and isinstance(x, np.ndarray):
            memo[id(x)] = spec
        return spec
    kind, cls, keys, items = parts
    spec = Spec(kind, x if argument else None, cls, keys)
    if argument:
        memo[id(x)] = spec  # before its parts: a cycle back here meets this spec
    spec.children = [_flatten(v, argument, leaf, _path(path, kind, k) if leaf else "", memo, leaves)
                     for k, v in zip(keys, items)]  # paths name Inputs only
    return spec


def unflatten(spec, leaves, memo=None):
    """The value `spec` describes with `leaves` in its leaves' places: the inverse of `flatten`.

    A spec met twice gives the same value both times; `memo` (id of a spec -> value), passed to
    several calls, extends this across them. An argument's container whose parts all come back
    as they were is the argument itself (so a value with nothing traced inside keeps its
    identity); a cycle back to a container meets the original.
    """
    return _unflatten(spec, iter(leaves).__next__, {} if memo is None else memo)


def _unflatten(spec, take, memo):
    if spec.kind == "static":  # (never shared: flatten makes one per place)
        return spec.primal
    if id(spec) in memo:
        return memo[id(spec)]
    if spec.kind == "leaf":
        out = take()
    elif spec.primal is not None and (spec.cls is list or spec.cls is dict) and spec.kind != "namedtuple":
        # an argument's list or dict: the copy is made empty first, so that a cycle back here
        # (a list holding itself) meets the copy, whose entries are traced, not the original
        out = [] if spec.cls is list else {}
        memo[id(spec)] = out
        items = [_unflatten(s, take, memo) for s in spec.children]
        if all(v is s.primal for v, s in zip(items, spec.children)):
            out = spec.primal  # nothing traced inside: the argument itself
        elif spec.cls is list:
            out.extend(items)
        else:
            out.update(zip(spec.keys, items))
    else:
        memo[id(spec)] = spec.primal  # what a cycle back here meets
        items = [_unflatten(s, take, memo) for s in spec.children]
        same = spec.primal is not None and all(v is s.primal for v, s in zip(items, spec.children))
        out = spec.primal if same else spec.pack(items)
    memo[id(spec)] = out
    return out


def build(spec, *leaves):
    """Pack the leaves of a structured result back into its tuple / list / dict: one op on the tape."""
    return unflatten(spec, leaves)


def flatten_cotangent(spec, dy, where):
    """The leaves of a seed or cotangent given for a structured result; ZeroTangent where absent."""
    if spec.kind == "leaf":
        return [dy]
    keys = spec.keys
    if dy is ZERO:
        items = [ZERO] * len(keys)
    elif spec.kind == "tangent":
        items = [dy.fields.get(k, ZERO) if isinstance(dy, Tangent) else ZERO for k in keys]
    elif spec.kind == "dict":
        if not isinstance(dy, dict) or set(dy) - set(keys):
            raise SeedError(f"{where} returned a dict with keys {keys}; the seed must be a "
                            f"dict with those keys, got {type(dy).__name__}")
        items = [dy.get(k, ZERO) for k in keys]
    else:
        if not isinstance(dy, (tuple, list)) or len(dy) != len(keys):
            raise SeedError(f"{where} returned a {spec.cls.__name__} of {len(keys)}; the seed "
                            f"must be a tuple or list of {len(keys)}, got {type(dy).__name__}")
        items = list(dy)
    return [d for s, item in zip(spec.children, items) for d in flatten_cotangent(s, item, where)]


#: random number generators: a program would replay the draws of its first call
_STATEFUL = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)
#: values of these types are the same value as long as they are the same object
_FIXED_TYPES = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.ModuleType, np.ufunc, np.dtype)


def _static_key(x, unkeyed):
    """What a compiled gradient must see again to reuse its program: the value of a leaf that is
    not traced. An object whose state can change behind the key (a deque or another unhashable
    value, a random generator) is put in `unkeyed`: no key can say when it changed."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "O":
            unkeyed.append(x)
        return ("array", type(x), x.shape, x.dtype.str, x.tobytes())
    if isinstance(x, _FIXED_TYPES) or x is None:
        return (type(x), x)
    try:
        hash(x)
    except TypeError:
        unkeyed.append(x)
        return ("id", id(x))
    if isinstance(x, _STATEFUL):
        unkeyed.append(x)  # each draw changes it
    return (type(x), x)


def spec_leaves(spec) -> list:
    """The leaf specs of `spec` in the order `build` takes their values (each shared part once)."""
    out, seen, stack = [], set(), [spec]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        if s.kind == "leaf":
            out.append(s)
        elif s.kind != "static":
            stack.extend(reversed(s.children))
    return out


def spec_key(spec, seen=None, unkeyed=None):
    """A hashable description of an argument's structure: types, shapes, dtypes, static values,
    sharing. A static value no key can describe (see `_static_key`) is appended to `unkeyed`."""
    seen = {} if seen is None else seen
    unkeyed = [] if unkeyed is None else unkeyed
    if id(spec) in seen:
        return ("shared", seen[id(spec)])
    seen[id(spec)] = len(seen)
    x = spec.primal
    if spec.kind == "static":
        return ("static", _static_key(x, unkeyed))
    if spec.kind == "leaf":
        return ("leaf", type(x), np.shape(x), np.result_type(x).str)
    return (spec.kind, type(x), tuple((k, spec_key(s, seen, unkeyed)) for k, s in zip(spec.keys, spec.children)))


# --- tangents in the shape of arguments ---


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
    elif spec.kind == "seq" and spec.cls is list or spec.kind == "dict" and spec.cls is dict \
            or spec.kind == "object":
        # made empty first and filled after, so that a cycle back here (a list holding itself)
        # meets this very tangent: the tangent has the argument's cycle
        out = [] if spec.kind == "seq" else {} if spec.kind == "dict" else Tangent(spec.cls)
        memo[id(spec)] = out
        items = _tangents_of(spec.children, derivative_of, concrete, memo)
        if spec.kind == "seq":
            out.extend(items)
        else:
            (out if spec.kind == "dict" else out.fields).update(zip(spec.keys, items))
    else:
        memo[id(spec)] = ZERO  # a cycle through a tuple contributes nothing more
        out = spec.pack(_tangents_of(spec.children, derivative_of, concrete, memo), True)
    memo[id(spec)] = out
    return out


def _tangents_of(specs, derivative_of, concrete, memo):
    """``[tangent_of(s, ...) for s in specs]``; an array leaf whose derivative is an array of
    its dtype and shape is taken at once, without a call (W3's weights and biases): the test of
    `tangent_of`'s own first case, written out here, so the two must change together."""
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
    """Give every leaf of tangent `t` the type of its primal in `x` (floats, dtypes, shapes)."""
    tt = type(t)
    if tt is _ndarray:
        if type(x) is _ndarray and t.dtype is x.dtype and t.shape == x.shape:
            return t  # an array's gradient, already its type (the common leaf)
    elif (tt is list or tt is tuple) and type(x) is tt:  # (W3's [(dW, db), ...])
        return tt([finalize(v, p) for v, p in zip(t, x)])
    if t is ZERO or t is NO_TANGENT or isinstance(t, (ZeroTangent, NoTangent)):
        return t
    if is_differentiable_leaf(x):
        return leaf_gradient(t, x, False)
    if isinstance(t, Tangent):
        fields = object_fields(x) or {}
        return Tangent(t.primal_type, **{k: finalize(v, fields.get(k)) for k, v in t.fields.items()})
    if isinstance(t, dict) and isinstance(x, dict):
        items = {k: finalize(v, x.get(k)) for k, v in t.items()}
        if type(x) is collections.OrderedDict:  # (a packed result is a plain dict)
            return collections.OrderedDict(items)
        if type(x) is collections.defaultdict:
            out = collections.defaultdict(x.default_factory)
            out.update(items)
            return out
        return items
    if isinstance(t, tuple) and hasattr(t, "_fields"):
        return type(t)(*[finalize(v, p) for v, p in zip(t, x)])
    if isinstance(t, (tuple, list)) and isinstance(x, (tuple, list)):
        return type(t)(finalize(v, p) for v, p in zip(t, x))
    if isinstance(t, collections.deque) and isinstance(x, collections.deque):
        return collections.deque((finalize(v, p) for v, p in zip(t, x)), maxlen=x.maxlen)
    return t


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

    try:
        if isinstance(tangent, ZeroTangent):
            return _fill_structure(primal)
        return map_tangent(fill, tangent, primal)
    except RecursionError:
        raise too_deep_error("the value passed to fill_zeros", cycles=True) from None


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
    try:
        return _update(primal, tangent, fn, {})
    except RecursionError:
        raise too_deep_error("the value passed to update", cycles=True) from None


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

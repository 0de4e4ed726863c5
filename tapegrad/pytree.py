"""Specs: how an argument or a result is put together from its leaves.

Arguments and results of a traced function nest, and one *spec* describes both: a tree of
`Spec` nodes, one per container (its structure's kind, its type and keys: see
`tapegrad.structures`) and one per leaf, that `flatten` leaves behind and `unflatten` fills
again. An argument (any container of the registry, and objects by their fields: dataclasses,
plain objects, closures, bound methods) is flattened to its differentiable leaves; each
becomes an Input, and unflattening with Tracers in their places gives the traced copy the
function runs on, so the user's objects are never touched; afterwards the same spec gives the
derivatives the shape of the argument (`tapegrad.argtangents.tangent_of`). A result (any
container of the registry, and subclasses of tuple, list and dict, packed as those) is
flattened so that one op, ``build(spec, *leaves)``, packs it and a tape has one result; the
pullback of `build` splits a structured seed along the same spec.

A value reachable along two paths (the same array in two fields) is one spec, so one Input:
its derivative is the sum of both shares, and it appears at both places.

The walkers of nested call arguments and the registry (`tapegrad.structures`) and the tangents
in the shape of arguments (`tapegrad.argtangents`) are imported here too, where the rest of
tapegrad has always found them.
"""
from __future__ import annotations

import random
import types

import numpy as np

from .argtangents import fill_zeros, finalize, leaf_gradient, tangent_of, update
from .errors import SeedError, user_location
from .structures import (OPAQUE_TYPES, Boxed, any_nested, concrete, cell_filled, find_nested, is_differentiable_leaf,
                         map_nested, nested, object_fields, rebuild_object, split, structure_named)
from .tangents import NO_TANGENT, ZERO, tangent_structure

__all__ = ["Spec", "leaf_spec", "flatten", "unflatten", "build", "flatten_cotangent", "spec_key", "spec_leaves",
           # the registry's and the tangents', where the rest of tapegrad imports them from
           "Boxed", "nested", "find_nested", "any_nested", "map_nested", "is_differentiable_leaf",
           "object_fields", "rebuild_object", "cell_filled", "OPAQUE_TYPES",
           "tangent_of", "leaf_gradient", "finalize", "fill_zeros", "update"]

_new = object.__new__


class Spec:
    """One node of the tree `flatten` leaves behind: how a value is put together from its leaves.

    `kind` is "leaf" (a value of the leaves list), "static" (a value the spec keeps: a part of
    an argument that cannot be differentiated), or the kind of a container's `Structure`
    ("seq" for a tuple or list, "namedtuple", "dict", "object" for an argument's dataclass,
    plain object, closure or bound method by its fields, "tangent", ...). A container's spec
    has its type `cls`, its `keys`, one child spec per key, and the `aux` its structure
    rebuilds it with. An argument's spec also holds the value it describes (`primal`), and a
    traced leaf's spec the Variable of its Input (`var`); a result's holds no values.
    """

    __slots__ = ("kind", "cls", "keys", "children", "primal", "var", "aux")

    def __init__(self, kind, primal=None, cls=None, keys=(), children=(), var=None, aux=None):
        self.kind = kind
        self.primal = primal
        self.cls = cls
        self.keys = keys
        self.children = children
        self.var = var
        self.aux = aux

    @property
    def structure(self):
        """The `tapegrad.structures.Structure` of a container's spec."""
        return structure_named(self.kind, self.cls)

    def __repr__(self):
        if self.kind == "leaf" or self.kind == "static":
            return self.kind
        keys = self.keys
        if type(keys) is range or self.kind == "seq":
            return f"{self.cls.__name__}({len(keys)})"
        shown = keys if self.structure.dotted else map(repr, keys)
        return f"{self.cls.__name__}({', '.join(shown)})"

    def pack(self, items, tangent=False):
        """The container this spec describes, holding `items`; as a `tangent`, an object's is a Tangent."""
        s, cls, aux = self.structure, self.cls, self.aux
        if tangent:
            s, cls, aux = tangent_structure(s, cls, aux)
        return s.join(cls, aux, self.keys, items)


def leaf_spec(primal, var):
    """``Spec("leaf", primal, var=var)``, made without the call of its __init__: every array
    argument of every gradient gets one."""
    spec = _new(Spec)
    spec.kind = "leaf"
    spec.primal = primal
    spec.cls = spec.aux = None
    spec.keys = spec.children = ()
    spec.var = var
    return spec


def _path(path, structure, key):
    if structure.dotted and isinstance(key, str):
        return f"{path}.{key}"
    if isinstance(key, str):
        return f'{path}["{key}"]'
    return f"{path}[{key!r}]"


def flatten(x, *, argument=False, leaf=None, path="", memo=None):
    """``(spec, leaves)`` of `x`: the `Spec` of its structure and the values at its leaves, depth first.

    A result (the default): the registry's containers (`tapegrad.structures.structure_of` with
    `subclasses`: tuples, lists, dicts and their subclasses, NamedTuples, deques, Tangents,
    registered types) are walked into, and every other value is a leaf. An argument
    (``argument=True``): the registry's containers by exact type, NamedTuples, and
    dataclasses, plain objects, closures and bound methods by their fields are walked into;
    the differentiable values are the leaves, and every other value stays in the spec.
    ``leaf(value, path) -> (var, stand_in)``, if given, is called at each leaf, in order: the
    leaf's spec keeps `var`, and the list holds `stand_in` in place of the value. `path` names
    `x` in those paths (``params["w"]``, ``model.weights``). `memo` (id of a value -> its
    spec), passed to several calls, keeps a value reached twice (an array, a container, also
    across the calls) one spec; a cycle back to a container meets its own spec.
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
        whole = None
        if type(x) is not np.ndarray and isinstance(x, np.ndarray) and _refusal(x):
            raise TypeError(f"the argument {path or ''} given at {user_location()} is {_refusal(x)}")
    else:
        whole = split(x, subclasses=not argument, objects=argument)
        if whole is None and argument:
            if isinstance(x, (set, frozenset, np.ndarray)) and _refusal(x):
                raise TypeError(f"the argument {path or ''} given at {user_location()} is {_refusal(x)}")
            return Spec("static", x)
    if whole is None:
        if leaf is None:
            spec = leaf_spec(x if argument else None, None)
            leaves.append(x)
        else:
            var, stand_in = leaf(x, path)
            spec = leaf_spec(x, var)
            leaves.append(stand_in)
        if argument and _is_array(x):
            memo[id(x)] = spec
        return spec
    s, keys, items, aux = whole
    spec = Spec(s.kind, x if argument else None, type(x), keys, aux=aux)
    if argument:
        memo[id(x)] = spec  # before its parts: a cycle back here meets this spec
    spec.children = [_flatten(v, argument, leaf, _path(path, s, k) if leaf else "", memo, leaves)
                     for k, v in zip(keys, items)]  # paths name Inputs only
    return spec


def _is_array(x) -> bool:
    """An array, or a traced or dual value of one: an argument reached twice is one leaf (one
    gradient, the sum of both uses'), as a plain array is, where a number reached twice is two.
    (A gradient traced by an enclosing trace, as a compiled gradient's is, got each use's part
    alone where `grad` of the plain array gave the sum.)"""
    return isinstance(concrete(x), np.ndarray)


def unflatten(spec, leaves, memo=None):
    """The value `spec` describes with `leaves` in its leaves' places: the inverse of `flatten`.

    A spec met twice gives the same value both times; `memo` (id of a spec -> value), passed to
    several calls, extends this across them. An argument's container whose parts all come back
    as they were is the argument itself (so a value with nothing traced inside keeps its
    identity); a cycle back to a mutable container (a list, a dict) meets the copy, and one
    back to another container meets the original.
    """
    return _unflatten(spec, iter(leaves).__next__, {} if memo is None else memo)


def _unflatten(spec, take, memo):
    if spec.kind == "static":  # (never shared: flatten makes one per place)
        return spec.primal
    if id(spec) in memo:
        return memo[id(spec)]
    if spec.kind == "leaf":
        out = take()
    else:
        s = spec.structure
        if spec.primal is not None and s.fill is not None:
            # an argument's mutable container: the copy is made empty first, so that a cycle
            # back here (a list holding itself) meets the copy, whose entries are traced
            out = s.join(spec.cls, spec.aux, (), [])
            memo[id(spec)] = out
            items = [_unflatten(c, take, memo) for c in spec.children]
            if all(v is c.primal for v, c in zip(items, spec.children)):
                out = spec.primal  # nothing traced inside: the argument itself
            else:
                s.fill(out, spec.keys, items)
        else:
            memo[id(spec)] = spec.primal  # what a cycle back here meets
            items = [_unflatten(c, take, memo) for c in spec.children]
            same = spec.primal is not None and all(v is c.primal for v, c in zip(items, spec.children))
            out = spec.primal if same else s.join(spec.cls, spec.aux, spec.keys, items)
    memo[id(spec)] = out
    return out


def build(spec, *leaves):
    """Pack the leaves of a structured result back into its tuple / list / dict: one op on the tape."""
    return unflatten(spec, leaves)


def flatten_cotangent(spec, dy, where):
    """The leaves of a seed or cotangent given for a structured result; ZeroTangent where absent.

    A sequence's seed is a sequence of its length; a mapping's, a Tangent's or a registered
    type's with named parts is a container of the same names (or some of them)."""
    if spec.kind == "leaf":
        return [dy]
    keys = spec.keys
    whole = None if dy is ZERO or dy is NO_TANGENT else split(dy, subclasses=True)
    _, dkeys, ditems, _ = (None, None, None, None) if whole is None else whole
    if dy is ZERO or dy is NO_TANGENT:
        items = [ZERO] * len(keys)
    elif type(keys) is range or spec.kind == "seq":
        if type(dkeys) is not range or len(dkeys) != len(keys):
            raise SeedError(f"{where} returned a {spec.cls.__name__} of {len(keys)}; the seed "
                            f"must be a tuple or list of {len(keys)}, got {type(dy).__name__}")
        items = ditems
    else:
        if dkeys is None or type(dkeys) is range or set(dkeys) - set(keys):
            what = spec.cls.__name__ if spec.structure.dotted else "dict"  # (a Tangent's fields, a mapping's keys)
            raise SeedError(f"{where} returned a {spec.cls.__name__} with keys {keys}; the seed must be "
                            f"a {what} with those keys, got {type(dy).__name__}")
        named = dict(zip(dkeys, ditems))
        items = [named.get(k, ZERO) for k in keys]
    return [d for c, item in zip(spec.children, items) for d in flatten_cotangent(c, item, where)]


#: random number generators: a program would replay the draws of its first call
_STATEFUL = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)
#: values of these types are the same value as long as they are the same object
_FIXED_TYPES = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.ModuleType, np.ufunc, np.dtype)


def _static_key(x, unkeyed):
    """What a compiled gradient must see again to reuse its program: the value of a leaf that is
    not traced. An object whose state can change behind the key (an unhashable value, a random
    generator) is put in `unkeyed`: no key can say when it changed."""
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

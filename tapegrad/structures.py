"""The structure registry: the one place that knows which values are containers, and how each
kind is taken apart and put together again (the pytree idea of JAX).

A `Structure` says of one kind of container how to *split* a value into ``(keys, items, aux)``
and how to *join* ``(cls, aux, keys, items)`` back into a value: `keys` are positions (a
``range``) or names, `items` the parts, `aux` what else a copy needs (a deque's ``maxlen``, a
defaultdict's factory, an object itself, whose other state its copy keeps). Every walk in
tapegrad asks `structure_of` and nothing else: flattening arguments and results
(`tapegrad.pytree`), tangents in the structure of arguments, zeros and updates
(`tapegrad.argtangents`), `accum` and `map_tangent` (`tapegrad.tangents`), forward-mode results,
`check_grad`'s leaves and substitutions, and the rules that take containers apart.

Registered here: tuple, list, dict, OrderedDict, defaultdict and deque (by exact type), named
tuples, and, for arguments, objects by their fields (dataclasses, plain and slotted objects,
closures by the values they capture, bound methods, ``functools.partial``); `Tangent` registers
itself in `tapegrad.tangents`. A gradient has the structure of its argument: the same container
type, except that an object's tangent is a `Tangent` of its fields. Users add their own types
with `register_structure`.

Call arguments nest in lists and tuples (``np.stack([a, b])``, ``cho_solve((c, lower), b)``):
`nested`, `find_nested` and `any_nested` walk them with loops all the way down; `map_nested`
takes one level of recursion per level of nesting. The tracer choosing a tape, a context
splitting values from Variables, forward mode and the sweep use these.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import types

import numpy as np

__all__ = ["Boxed", "concrete", "nested", "find_nested", "any_nested", "map_nested", "is_differentiable_leaf",
           "Structure", "register_structure", "add_structure", "structure_of", "split", "structure_named",
           "replace_items", "parts_at",
           "object_fields", "rebuild_object", "cell_filled", "OPAQUE_TYPES"]


class Boxed:
    """Base of the values that stand for another value, kept in ``_val``: traced values and dual
    numbers (`tapegrad.arraylike.ArrayLike`). Structures treat one as the leaf it holds."""

    __slots__ = ()


def concrete(v):
    """The plain value under nested traced or dual values (a Tracer of an outer trace holds one)."""
    while isinstance(v, Boxed):
        v = v._val
    return v


# --- the walkers over nested call arguments ---


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


# --- the registry ---


class Structure:
    """How one kind of container is taken apart and put together.

    ``split(x) -> (keys, items, aux)`` and ``join(cls, aux, keys, items) -> value``, the
    inverse. `kind` names it in a `tapegrad.pytree.Spec` ("seq", "dict", "object", ...).
    `fill(empty, keys, items)`, for a mutable container, puts items into the empty one that
    ``join(cls, aux, (), [])`` makes: walks that make the container before its parts use it,
    so that a container holding itself is copied into one holding its copy. `fields_tangent`:
    the tangent of such a value is a `Tangent` of its fields (an object's), not a value of its
    own type. `dotted`: its keys are attribute names (``model.weights`` in paths).
    """

    __slots__ = ("kind", "split", "join", "fill", "fields_tangent", "dotted")

    def __init__(self, kind, split, join, fill=None, fields_tangent=False, dotted=False):
        self.kind = kind
        self.split = split
        self.join = join
        self.fill = fill
        self.fields_tangent = fields_tangent
        self.dotted = dotted

    def __repr__(self):
        return f"Structure({self.kind})"


def _split_seq(x):
    return range(len(x)), list(x), None


def _split_mapping(x):
    return list(x), list(x.values()), None


def _extend(out, keys, items):
    out.extend(items)


def _update(out, keys, items):
    out.update(zip(keys, items))


#: tuples and lists (and, for results and tangents, their subclasses: built by ``cls(items)``)
SEQ = Structure("seq", _split_seq, lambda cls, aux, keys, items: cls(items), _extend)
TUPLE = Structure("seq", _split_seq, lambda cls, aux, keys, items: cls(items))  # (no fill: immutable)
NAMEDTUPLE = Structure("namedtuple", _split_seq, lambda cls, aux, keys, items: cls(*items))
DEQUE = Structure("deque", lambda x: (range(len(x)), list(x), x.maxlen),
                  lambda cls, aux, keys, items: collections.deque(items, maxlen=aux), _extend)
#: dicts (and, for results and tangents, their subclasses: a plain dict of the same entries)
DICT = Structure("dict", _split_mapping, lambda cls, aux, keys, items: dict(zip(keys, items)), _update)
ORDERED_DICT = Structure("ordereddict", _split_mapping,
                         lambda cls, aux, keys, items: collections.OrderedDict(zip(keys, items)), _update)
DEFAULT_DICT = Structure("defaultdict", lambda x: (list(x), list(x.values()), x.default_factory),
                         lambda cls, aux, keys, items: collections.defaultdict(aux, zip(keys, items)), _update)

_MISSING = object()

#: Structure of each registered type, by exact type; None for the types that are never containers
_TYPES = {tuple: TUPLE, list: SEQ, dict: DICT, collections.OrderedDict: ORDERED_DICT,
          collections.defaultdict: DEFAULT_DICT, collections.deque: DEQUE,
          float: None, int: None, complex: None, bool: None, str: None, bytes: None, type(None): None,
          np.ndarray: None, np.float64: None, np.float32: None, np.float16: None, np.complex128: None,
          np.complex64: None, np.int64: None, np.int32: None, np.bool_: None}
#: Structure of each kind, by its name (a Spec names its structure so, and pickles so); "seq"
#: is a tuple's (and a subclass's): a list's is found by its type
_KINDS = {"seq": TUPLE, "namedtuple": NAMEDTUPLE, "deque": DEQUE, "dict": DICT,
          "ordereddict": ORDERED_DICT, "defaultdict": DEFAULT_DICT}


def register_structure(cls, children, rebuild):
    """Walk values of type `cls` as containers: differentiate through their parts.

    ``children(x)`` gives the parts of a value `x`: a dict of named parts or a tuple (or list)
    of parts by position. ``rebuild(parts)`` makes a new value from parts of the same form. A
    part may be anything: numbers and float arrays are differentiated, containers are walked
    in turn, and other values (names, flags, integers) are kept as they are. Once registered,
    `cls` is a container for every walk of tapegrad: `grad` and `gradient` give the gradient of
    an argument of type `cls` as a `cls` built by `rebuild` from the parts' tangents
    (``ZeroTangent()`` or ``NoTangent()`` where nothing flows), and so do `jvp`, `check_grad`,
    `compiled_grad`, `update` and `fill_zeros`; a result of type `cls` is packed and seeded by
    the same parts. `rebuild` must therefore accept any value in each part's place (a traced
    value while tracing, a tangent in a gradient), as JAX's pytree nodes must. Only the exact
    type is registered, not its subclasses; registering a type again replaces its entry.

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.extend import register_structure
    >>> class Line:
    ...     def __init__(self, slope, offset):
    ...         self.slope, self.offset = slope, offset
    >>> register_structure(Line, lambda l: {"slope": l.slope, "offset": l.offset},
    ...                    lambda parts: Line(**parts))
    >>> _, (_, g) = tapegrad.grad(lambda l: l.slope * 3.0 + l.offset, Line(2.0, 1.0))
    >>> type(g).__name__, g.slope, g.offset  # (unregistered: Tangent[Line](slope=3.0, offset=1.0))
    ('Line', 3.0, 1.0)
    """
    _takes_one_argument(rebuild, cls)

    def split(x):
        parts = children(x)
        if isinstance(parts, dict):
            return list(parts), list(parts.values()), None
        if isinstance(parts, (tuple, list)):
            return range(len(parts)), list(parts), None
        raise TypeError(f"the children function registered for {cls.__name__} returned "
                        f"{type(parts).__name__}; it must return a dict or a tuple of parts")

    def join(_cls, aux, keys, items):
        return rebuild(list(items) if type(keys) is range else dict(zip(keys, items)))

    add_structure(cls, Structure("registered", split, join, dotted=True))


def _takes_one_argument(rebuild, cls):
    """Refuse a `rebuild` that cannot be called with the parts alone, as JAX's
    ``unflatten(aux, children)`` is written, when it is registered rather than at the first
    gradient (where it raised "missing 1 required positional argument")."""
    try:
        inspect.signature(rebuild).bind(None)
    except ValueError:  # no signature to read (a builtin): called as it is
        return
    except TypeError:
        raise TypeError(
            f"register_structure({cls.__name__}, children, rebuild): rebuild is called with one "
            f"argument, the parts children returned, but this one needs more (JAX's "
            f"unflatten(aux_data, children) takes two). Return every part from children, names and "
            f"flags too (they are kept as they are), and rebuild from the parts alone: "
            f"register_structure({cls.__name__}, lambda v: (v.a, v.b, v.name), "
            f"lambda parts: {cls.__name__}(*parts))"
        ) from None


def add_structure(cls, structure):
    """Register `structure` (a `Structure`) for the exact type `cls`: `register_structure` for
    a structure given as its two functions, and tapegrad's own kinds (`Tangent`'s), which are
    registered once and named by their kind."""
    if not isinstance(cls, type):
        raise TypeError(f"a structure is registered for a class, not {type(cls).__name__}")
    old = _TYPES.get(cls, _MISSING)
    if old is not _MISSING and (old is None or old.kind != "registered"):
        raise ValueError(f"{cls.__name__} is {'a leaf' if old is None else 'a container'} "
                         f"of tapegrad's own; its structure cannot be registered again")
    _TYPES[cls] = structure
    if structure.kind != "registered":
        _KINDS[structure.kind] = structure


def structure_of(x, *, subclasses=False, objects=False):
    """The `Structure` of `x`, or None for a value that is not walked into (a leaf).

    Registered types count by exact type, and named tuples. With `subclasses` (a result or a
    tangent: packed into a new container) other subclasses of tuple and list count too, built
    as ``type(x)(items)``, and subclasses of dict, built as a plain dict. With `objects` (an
    argument, or a value in an argument's structure) objects count by their fields (see
    `object_fields`): a copy must behave as the original, so an argument's subclass of a
    container is never rebuilt from parts.
    """
    s = _TYPES.get(type(x), _MISSING)
    if s is _MISSING:
        s = _unregistered(x, subclasses)
        if s is None and objects and not isinstance(x, Boxed) and object_fields(x) is not None:
            return OBJECT
    return s


def split(x, *, subclasses=False, objects=False):
    """``(structure, keys, items, aux)`` of `x` (its `structure_of`, taken apart), or None for a
    leaf: what a walk asks of each value it meets."""
    s = _TYPES.get(type(x), _MISSING)
    if s is _MISSING:
        s = _unregistered(x, subclasses)
        if s is None and objects and not isinstance(x, Boxed):
            fields = object_fields(x)  # (once: the split of OBJECT would make them again)
            if fields is not None:
                return OBJECT, list(fields), list(fields.values()), x
    if s is None:
        return None
    keys, items, aux = s.split(x)
    return s, keys, items, aux


def _unregistered(x, subclasses):
    """The structure of a named tuple, and with `subclasses` of another subclass of tuple, list or dict."""
    if isinstance(x, tuple):
        if hasattr(x, "_fields"):
            return NAMEDTUPLE
        if subclasses:
            return TUPLE
    elif subclasses:
        if isinstance(x, list):
            return SEQ
        if isinstance(x, dict):
            return DICT
    return None


def structure_named(kind, cls):
    """The `Structure` a `tapegrad.pytree.Spec` of `kind` and type `cls` names."""
    if kind == "seq" or kind not in _KINDS:  # a list's or a registered type's by its type
        s = _TYPES.get(cls)
        if s is not None:
            return s
    return _KINDS[kind]


def replace_items(x, items):
    """A container like the tuple, list, named tuple or deque `x`, holding `items` instead."""
    t = type(x)
    if t is tuple or t is list:
        return t(items)
    s = structure_of(x, subclasses=True)
    keys, _, aux = s.split(x)
    return s.join(t, aux, keys, items)


def parts_at(t, keys, missing):
    """The parts of the container `t` at `keys`, the keys of a value of the same structure:
    by position for a sequence, by name for a mapping, a `Tangent` or an object (`missing`
    for a name `t` does not have); None if `t` is not a container."""
    parts = split(t, subclasses=True, objects=True)
    if parts is None:
        return None
    _, tkeys, items, _ = parts
    if type(tkeys) is range:
        return items if type(keys) is range else [items[k] for k in keys]
    named = dict(zip(tkeys, items))
    return [named.get(k, missing) for k in keys]


# --- objects by their fields ---


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
    dataclass = dataclasses.is_dataclass(x)
    if cls.__new__ is not object.__new__ and not dataclass:
        return None  # built by its own __new__ (often in C): tapegrad could not make a copy
    if dataclass:
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    fields = {}
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        fields.update(d)
    for klass in cls.__mro__:
        slots = getattr(klass, "__slots__", ())
        for name in slots if isinstance(slots, (tuple, list)) else (slots,):
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


def _split_object(x):
    fields = object_fields(x)
    return list(fields), list(fields.values()), x


#: an argument's object, dataclass, closure, bound method or partial, by its fields: its copy
#: is the object rebuilt (`aux` is the object itself), its tangent a `Tangent` of the fields
OBJECT = Structure("object", _split_object,
                   lambda cls, aux, keys, items: rebuild_object(aux, dict(zip(keys, items))),
                   fields_tangent=True, dotted=True)
_KINDS["object"] = OBJECT

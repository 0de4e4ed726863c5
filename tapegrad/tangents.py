"""Tangent values: the two kinds of "no derivative", `Thunk`, `Tangent` for objects, accumulation.

`ZeroTangent()` is the additive identity: the derivative is zero because no path reaches the
value. `NoTangent()` says the value cannot have a derivative (an index, a string, a count).
Both are singletons, so ``t is ZERO`` is a cheap test.

A tangent has the structure of its value (`tapegrad.structures`): `accum` and `map_tangent` walk
every registered container, and `Tangent`, the tangent of an object by its fields, is one of them.
"""
from __future__ import annotations

import numpy as np

from .structures import Structure, add_structure, parts_at, split, structure_of

__all__ = ["ZeroTangent", "NoTangent", "Tangent", "ZERO", "NO_TANGENT", "Thunk", "getitem", "accum", "map_tangent",
           "is_zero", "scale_tangent", "TANGENT", "tangent_structure"]


class _Singleton:
    """One instance per class (so ``t is ZERO`` is the test), that prints and pickles as its call."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __reduce__(self):
        return (type(self), ())

    def __bool__(self):
        return False


class ZeroTangent(_Singleton):
    """The additive identity of tangents: what flows where no path reaches a value."""

    __slots__ = ()
    _instance = None
    # numpy hands ``array + ZeroTangent()`` to __radd__ (not an object array of sums)
    __array_ufunc__ = None

    def __add__(self, other):
        return other

    __radd__ = __add__

    def __sub__(self, other):
        return -other

    def __rsub__(self, other):
        return other

    def __neg__(self):
        return self

    def __mul__(self, other):
        return self

    __rmul__ = __mul__

    def __eq__(self, other):
        return other is self or (isinstance(other, (int, float)) and other == 0)

    def __hash__(self):
        return hash(0)


class NoTangent(_Singleton):
    """The tangent of a value that cannot be differentiated (an index, a string, a count)."""

    __slots__ = ()
    _instance = None


ZERO = ZeroTangent()
NO_TANGENT = NoTangent()


class Thunk:
    """A tangent computed only if the sweep reads it (see `getitem`)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __repr__(self):
        return "Thunk(computed when read)"


def getitem(tangents, i):
    """``tangents[i]``, evaluating it first if a rule left it as a `Thunk`."""
    t = tangents[i]
    return t.fn() if type(t) is Thunk else t


def is_zero(t) -> bool:
    """True for ZeroTangent and NoTangent: tangents that carry nothing."""
    return t is ZERO or t is NO_TANGENT


def accum(a, b):
    """Add two shares of one derivative: the "add" half of set-or-add.

    Zero and no-tangents are identities; containers (`tapegrad.structures`: tuples, lists,
    NamedTuples, dicts, deques, registered types) add entry by entry into the type of `a` (a
    function returning several values gets one cotangent per value), a key of only one side
    kept as it is; anything else, numbers, arrays and `Tangent`s, uses ``+``.
    """
    if a is ZERO or a is NO_TANGENT:
        return b
    if b is ZERO or b is NO_TANGENT:
        return a
    ta = type(a)
    if ta is tuple or ta is list:
        return ta(accum(x, y) for x, y in zip(a, b))
    s = structure_of(a, subclasses=True)
    if s is None or s is TANGENT:
        return a + b  # numbers, arrays, Tangents
    keys, items, aux = s.split(a)
    if type(keys) is range:
        return s.join(ta, aux, keys, [accum(x, y) for x, y in zip(items, parts_at(b, keys, ZERO))])
    _, bkeys, bitems, _ = split(b, subclasses=True)
    keys, more = list(keys), dict(zip(bkeys, bitems))
    items = [accum(x, more.pop(k)) if k in more else x for k, x in zip(keys, items)]
    return s.join(ta, aux, keys + list(more), items + list(more.values()))


class Tangent:
    """The tangent of an object, a dataclass or a closure: one tangent per field.

    ``Tangent(Polynomial, weights=...)`` prints as ``Tangent[Polynomial](weights=...)``;
    ``Tangent(a=2.0)`` leaves the primal type out and equals any Tangent with the same fields.
    Tangents add, subtract, negate and scale by numbers; missing fields count as zero.
    """

    __slots__ = ("primal_type", "fields")

    def __init__(self, primal_type=None, /, **fields):
        self.primal_type = primal_type
        self.fields = fields

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "fields")[name]
        except KeyError:
            raise AttributeError(f"{self!r} has no field {name!r}") from None

    def __getitem__(self, name):
        return self.fields[name]

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        if self.primal_type is None:
            return f"Tangent({inner})"
        return f"Tangent[{getattr(self.primal_type, '__name__', self.primal_type)}]({inner})"

    def __eq__(self, other):
        if not isinstance(other, Tangent):
            return NotImplemented
        if None not in (self.primal_type, other.primal_type) and self.primal_type is not other.primal_type:
            return False
        if self.fields.keys() != other.fields.keys():
            return False
        return all(_equal(v, other.fields[k]) for k, v in self.fields.items())

    __hash__ = None

    def _combine(self, other, op):
        if other is ZERO or other is NO_TANGENT:
            return self
        if not isinstance(other, Tangent):
            return NotImplemented
        keys = list(self.fields) + [k for k in other.fields if k not in self.fields]
        out = {}
        for k in keys:
            a = self.fields.get(k, ZERO)
            b = other.fields.get(k, ZERO)
            out[k] = op(a, b)
        return Tangent(self.primal_type or other.primal_type, **out)

    def __add__(self, other):
        return self._combine(other, accum)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, lambda a, b: accum(a, scale_tangent(b, -1)))

    def __neg__(self):
        return scale_tangent(self, -1)

    def __mul__(self, k):
        if not isinstance(k, (int, float, np.number)):
            return NotImplemented
        return scale_tangent(self, k)

    __rmul__ = __mul__


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))
    return a == b


def map_tangent(fn, t, *others):
    """Apply fn leaf by leaf over a tangent and tangents (or primals) of the same structure: a
    container of `t` is rebuilt as its type, with the parts of `others` at the same keys (an
    object's fields for a `Tangent`'s, ZeroTangent() for a field a Tangent leaves out)."""
    whole = split(t, subclasses=True)
    if whole is None:
        return fn(t, *others)
    s, keys, items, aux = whole
    rest = [parts_at(o, keys, ZERO) or [o] * len(items) for o in others]
    return s.join(type(t), aux, keys, [map_tangent(fn, v, *[r[i] for r in rest]) for i, v in enumerate(items)])


def scale_tangent(t, k):
    """k * t for a tangent of any structure."""
    return map_tangent(lambda v: v if v is ZERO or v is NO_TANGENT else v * k, t)


def _split_tangent(t):
    return list(t.fields), list(t.fields.values()), t.primal_type


#: Tangent as a container: its fields, by name (`aux` is its primal type)
TANGENT = Structure("tangent", _split_tangent,
                    lambda cls, aux, keys, items: Tangent(aux, **dict(zip(keys, items))),
                    lambda out, keys, items: out.fields.update(zip(keys, items)), dotted=True)
add_structure(Tangent, TANGENT)


def tangent_structure(s, cls, aux):
    """``(structure, cls, aux)`` that build the tangent of a value of structure `s`, type `cls`
    and `aux`: its own, or a `Tangent` of the fields of an object."""
    return (TANGENT, Tangent, cls) if s.fields_tangent else (s, cls, aux)

"""Tangent values: the two kinds of "no derivative", and set-or-add accumulation.

`ZeroTangent()` is the additive identity: the derivative is zero because no path reaches the
value. `NoTangent()` says the value cannot have a derivative (an index, a string, a count).
Both are singletons, so ``t is ZERO`` is a cheap test.
"""
from __future__ import annotations

__all__ = ["ZeroTangent", "NoTangent", "ZERO", "NO_TANGENT", "accum", "is_zero"]


class ZeroTangent:
    """The additive identity of tangents: what flows where no path reaches a value."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "ZeroTangent()"

    def __reduce__(self):
        return (ZeroTangent, ())

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

    def __bool__(self):
        return False

    def __eq__(self, other):
        return other is self or (isinstance(other, (int, float)) and other == 0)

    def __hash__(self):
        return hash(0)


class NoTangent:
    """The tangent of a value that cannot be differentiated (an index, a string, a count)."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "NoTangent()"

    def __reduce__(self):
        return (NoTangent, ())

    def __bool__(self):
        return False


ZERO = ZeroTangent()
NO_TANGENT = NoTangent()


def is_zero(t) -> bool:
    """True for ZeroTangent and NoTangent: tangents that carry nothing."""
    return t is ZERO or t is NO_TANGENT


def accum(a, b):
    """Add two shares of one derivative: the "add" half of set-or-add.

    Zero and no-tangents are identities; tuples, lists, NamedTuples and dicts add entry by
    entry (a function returning several values gets one cotangent per value); anything else,
    numbers, arrays and `Tangent`s, uses ``+``.
    """
    if a is ZERO or a is NO_TANGENT:
        return b
    if b is ZERO or b is NO_TANGENT:
        return a
    ta = type(a)
    if ta is tuple or ta is list:
        return ta(accum(x, y) for x, y in zip(a, b))
    if ta is dict:
        out = dict(a)
        for k, v in b.items():
            out[k] = accum(out[k], v) if k in out else v
        return out
    if isinstance(a, tuple) and hasattr(a, "_fields"):  # a NamedTuple keeps its type
        return ta(*[accum(x, y) for x, y in zip(a, b)])
    return a + b  # numbers, arrays, Tangents

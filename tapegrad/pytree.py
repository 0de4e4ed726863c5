"""Structures: the one place that knows how values nest.

Call arguments nest in lists and tuples (``np.stack([a, b])``, ``cho_solve((c, lower), b)``):
`nested`, `find_nested` and `map_nested` walk them, loops all the way down but for one
level of recursion per level of nesting. Every part of tapegrad that looks inside call
arguments (the tracer choosing a tape, a context splitting values from Variables, forward
mode splitting values from variations, the sweep reading tangents) uses these.
"""
from __future__ import annotations

__all__ = ["nested", "find_nested", "any_nested", "map_nested"]


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

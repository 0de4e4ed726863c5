"""Structured results: a tuple, list, dict, NamedTuple or Tangent of traced values is packed
into one op, `build(spec, *leaves)`, so that a tape has one result and a structured seed can
be unpacked again by the op's pullback.
"""
from __future__ import annotations

import numpy as np

from .tangents import NO_TANGENT, Tangent, ZERO

__all__ = ["OutputSpec", "flatten_output", "unflatten_output", "flatten_cotangent", "build"]


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
    from .errors import SeedError

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


def _register_build_rule():
    from .errors import SeedError
    from .registry import rrule
    from .tracer import KEEP_WHOLE

    KEEP_WHOLE.add(build)

    @rrule(build)
    def build_rrule(spec, *leaves):
        def build_pullback(dy):
            parts = flatten_cotangent(spec, dy, "the function")
            for leaf, d in zip(leaves, parts):
                if d is not ZERO and np.shape(d) != np.shape(leaf):
                    raise SeedError(
                        f"a seed entry has shape {np.shape(d)} where the result has shape "
                        f"{np.shape(leaf)}; each entry of the seed must match its result"
                    )
            return (NO_TANGENT, NO_TANGENT, *parts)

        return build(spec, *leaves), build_pullback


_register_build_rule()

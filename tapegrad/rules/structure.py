"""The rule of `build`, the op that packs a structured result: its pullback splits the seed.

Complex values (the rules declared with ``complex=True``): the seed of each leaf is passed back
as it is, a complex one too.
"""
from __future__ import annotations

import numpy as np

from ..errors import SeedError
from ..pytree import build, flatten_cotangent
from ..forward import integer_valued
from ..registry import frule, rrule, whole
from ..tangents import NO_TANGENT, ZERO


@rrule(build, complex=True, keep_whole=True, formula=whole(
    None,
    "the part of {dy} at this value's place in the result",
))
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


# --- an integer leaf of `jacobian`'s flat vector ---


@rrule(integer_valued, formula=whole("{dy} (the integer varies as this entry)", None))
def integer_valued_rrule(x, n):
    def integer_valued_pullback(dy):
        return NO_TANGENT, np.reshape(dy, np.shape(x)), NO_TANGENT

    # (x may be traced or dual at an enclosing level: the integer then varies with it there)
    return integer_valued(x, n), integer_valued_pullback


@frule(integer_valued)
def integer_valued_frule(d, x, n):
    return integer_valued(x, n), d[0]

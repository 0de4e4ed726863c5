"""The rule of `build`, the op that packs a structured result: its pullback splits the seed.

Complex values (the rules declared with ``complex=True``): the seed of each leaf is passed back
as it is, a complex one too.
"""
from __future__ import annotations

import numpy as np

from ..errors import SeedError
from ..pytree import build, flatten_cotangent
from ..registry import rrule, whole
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

"""tapegrad.tangents: the two kinds of "no derivative", Thunk, Tangent for objects, and accum."""
import dataclasses

import numpy as np

from tapegrad import Tangent, ZeroTangent


@dataclasses.dataclass
class MLP:
    """A model type: the primal type of the Tangents below."""

    layers: list


def test_tangent_arithmetic():
    """Tangents add, subtract, negate and scale; ZeroTangent is the identity."""
    a = Tangent(MLP, w=np.ones(2), b=1.0)
    b = Tangent(MLP, w=np.ones(2), c=2.0)
    s = a + b
    assert s == Tangent(MLP, w=2 * np.ones(2), b=1.0, c=2.0)
    assert 2 * a == Tangent(w=2 * np.ones(2), b=2.0)
    assert a + ZeroTangent() is a and (a - a) == Tangent(w=np.zeros(2), b=0.0)
    assert -a == Tangent(w=-np.ones(2), b=-1.0)

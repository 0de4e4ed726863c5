"""tapegrad.tangents: the two kinds of "no derivative", Thunk, Tangent for objects, and accum."""
import copy
import dataclasses
import pickle
from typing import NamedTuple

import numpy as np

from tapegrad import NO_TANGENT, ZERO, NoTangent, Tangent, ZeroTangent
from tapegrad.extend import Thunk, accum
from tapegrad.tangents import getitem


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


class Pair(NamedTuple):
    x: float
    y: float


def test_zero_and_no_tangent_are_singletons():
    """Each call of ZeroTangent() or NoTangent() gives the one instance, and the two are different."""
    assert ZeroTangent() is ZeroTangent() is ZERO
    assert NoTangent() is NoTangent() is NO_TANGENT
    assert ZERO is not NO_TANGENT and ZERO != NO_TANGENT


def test_singletons_print_pickle_and_copy_as_themselves_and_are_false():
    """repr is the call that makes them, pickling and copying give the same instance back, and both are false."""
    assert [repr(ZERO), repr(NO_TANGENT)] == ["ZeroTangent()", "NoTangent()"]
    for t in (ZERO, NO_TANGENT):
        assert pickle.loads(pickle.dumps(t)) is t
        assert copy.copy(t) is t and copy.deepcopy(t) is t
        assert bool(t) is False


def test_zero_tangent_is_the_additive_identity():
    """ZeroTangent adds and subtracts as 0, absorbs products and negation, and equals the number 0."""
    x = np.array([1.0, 2.0])
    assert ZERO + x is x and 2.5 + ZERO == 2.5 and 2.5 - ZERO == 2.5
    assert (ZERO - x).tolist() == [-1.0, -2.0]
    assert -ZERO is ZERO and ZERO * 3.0 is ZERO and 3.0 * ZERO is ZERO
    assert ZERO == 0 and ZERO == 0.0 and ZERO != 1 and hash(ZERO) == hash(0)


def test_zero_tangent_on_the_right_of_an_array_is_the_identity_too():
    """numpy leaves ``array + ZeroTangent()`` to ZeroTangent, so the sum is the array, not an object array."""
    x = np.array([1.0, 2.0])
    assert x + ZERO is x and x - ZERO is x and x * ZERO is ZERO
    assert (x + ZERO).dtype == np.float64


def test_accum_adds_entry_by_entry_and_keeps_container_types():
    """Tuples, lists and NamedTuples add entry by entry into their own type; zero entries are identities."""
    out = accum((1.0, ZERO, [2.0, NO_TANGENT]), (3.0, 4.0, [5.0, 6.0]))
    assert out == (4.0, 4.0, [7.0, 6.0]) and type(out) is tuple and type(out[2]) is list
    pair = accum(Pair(1.0, 2.0), Pair(3.0, ZERO))
    assert pair == Pair(4.0, 2.0) and type(pair) is Pair


def test_accum_of_dicts_adds_shared_keys_and_keeps_the_others():
    """Two dicts give a new dict: shared keys added, keys of either kept; neither argument changes."""
    a, b = {"w": 1.0, "b": 2.0}, {"b": 3.0, "c": 4.0}
    assert accum(a, b) == {"w": 1.0, "b": 5.0, "c": 4.0}
    assert a == {"w": 1.0, "b": 2.0} and b == {"b": 3.0, "c": 4.0}


def test_accum_of_tangents_adds_fields_missing_ones_counting_as_zero():
    """Tangents add field by field, a field missing on one side counting as zero, and keep the primal type."""
    out = accum(Tangent(MLP, layers=[1.0], scale=2.0), Tangent(MLP, layers=[3.0], shift=4.0))
    assert out == Tangent(MLP, layers=[4.0], scale=2.0, shift=4.0) and out.primal_type is MLP
    assert repr(out) == "Tangent[MLP](layers=[4.0], scale=2.0, shift=4.0)"


def test_accum_with_a_zero_or_no_tangent_returns_the_other_share():
    """ZeroTangent and NoTangent carry nothing: accum returns the other share itself."""
    x = np.ones(2)
    assert accum(ZERO, x) is x and accum(x, ZERO) is x
    assert accum(NO_TANGENT, x) is x and accum(x, NO_TANGENT) is x
    assert accum(ZERO, NO_TANGENT) is NO_TANGENT


def test_getitem_evaluates_a_thunk_only_when_it_is_read():
    """A Thunk in a pullback's tuple runs when getitem reads its entry, each time it is read, and never otherwise."""
    calls = []

    def costly():
        calls.append("run")
        return 42.0

    tangents = (NO_TANGENT, 1.5, Thunk(costly))
    assert getitem(tangents, 1) == 1.5 and getitem(tangents, 0) is NO_TANGENT
    assert calls == []
    assert getitem(tangents, 2) == 42.0 and calls == ["run"]
    assert getitem(tangents, 2) == 42.0 and calls == ["run", "run"]
    assert repr(tangents[2]) == "Thunk(computed when read)"

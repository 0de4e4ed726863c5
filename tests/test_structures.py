"""tapegrad.structures: one registry of container types drives every walk (arguments, results,
tangents, zeros, updates, forward mode, check_grad), and users register their own types."""
import collections
import dataclasses
import pathlib
import re
from typing import NamedTuple

import numpy as np
import pytest

import tapegrad
from tapegrad import NO_TANGENT, ZERO, Tangent, check_grad, compiled_grad, grad, jvp
from tapegrad.extend import accum
from tapegrad.structures import register_structure, replace_items, structure_of
from tapegrad.tangents import map_tangent


class Line:
    """A user type registered below: its gradient is a Line, not a Tangent[Line]."""

    def __init__(self, slope, offset, name="line"):
        self.slope, self.offset, self.name = slope, offset, name

    def __call__(self, x):
        return self.slope * x + self.offset


register_structure(Line, lambda l: {"slope": l.slope, "offset": l.offset, "name": l.name},
                   lambda parts: Line(**parts))


class Span(tuple):
    """A tuple subclass (not a named tuple), registered with parts by position."""


register_structure(Span, lambda s: tuple(s), lambda parts: Span(parts))


class Point:
    """A registered user type of numbers only, as a function's result."""

    def __init__(self, x, y):
        self.x, self.y = x, y


register_structure(Point, lambda p: (p.x, p.y), lambda parts: Point(*parts))


class Pair(NamedTuple):
    a: float
    b: np.ndarray


@dataclasses.dataclass
class Model:
    w: np.ndarray
    scale: float


def loss(line, x):
    return np.sum((line(x) - 1.0) ** 2)


X = np.array([0.5, 1.0, 2.0])


def test_grad_of_a_registered_type_is_that_type():
    """The gradient of a registered argument is rebuilt by its `rebuild`, NoTangent() at a part without numbers."""
    line = Line(2.0, np.array([0.5, -0.5, 1.0]))
    _, (_, g, _) = grad(loss, line, X)
    r = line(X) - 1.0
    assert type(g) is Line and g.name is NO_TANGENT
    assert g.slope == pytest.approx(np.sum(2 * r * X))
    np.testing.assert_allclose(g.offset, 2 * r)
    check_grad(loss, line, X)


def test_jvp_of_a_registered_type_in_and_out():
    """jvp takes a tangent of the registered type, and a registered result gives a tangent of its type."""
    line = Line(2.0, 1.0)
    y, dy = jvp(lambda l, x: Line(l.slope * x, l.offset ** 2), (line, 3.0), (Line(1.0, 0.5, NO_TANGENT), 0.0))
    assert type(y) is Line and (y.slope, y.offset, y.name) == (6.0, 1.0, "line")
    assert type(dy) is Line and (dy.slope, dy.offset) == (3.0, 1.0)


def test_update_compiled_grad_and_fill_zeros_on_a_registered_type():
    """update and fill_zeros rebuild a registered type; compiled_grad gives what grad gives on every call."""
    line = Line(2.0, np.array([0.5, -0.5, 1.0]))
    _, (_, g, _) = grad(loss, line, X)
    moved = tapegrad.update(line, g, lr=0.1)
    assert type(moved) is Line and moved.name == "line" and moved.slope == pytest.approx(2.0 - 0.1 * g.slope)
    np.testing.assert_allclose(moved.offset, line.offset - 0.1 * g.offset)
    compiled = compiled_grad(loss)
    for _ in range(6):  # an eager grad, then traced, optimized, written, compiled programs
        value, (_, cg, _) = compiled(line, X)
        assert type(cg) is Line and cg.slope == pytest.approx(g.slope)
        np.testing.assert_allclose(cg.offset, g.offset)
    assert value == pytest.approx(loss(line, X)) and compiled.cache_info()["hits"] >= 1
    zeros = tapegrad.fill_zeros(ZERO, line)
    assert type(zeros) is Line and zeros.slope == 0.0 and zeros.name is NO_TANGENT
    np.testing.assert_array_equal(zeros.offset, np.zeros(3))


def test_a_registered_result_is_packed_and_seeded_by_its_parts():
    """A function returning a registered type takes a seed of that type (or a tuple of its parts)."""
    f = lambda x: Point(x * 2.0, np.sin(x))  # noqa: E731
    y, (_, dx) = grad(f, 0.3, seed=Point(1.0, 2.0))
    assert type(y) is Point and y.x == 0.6
    assert dx == pytest.approx(2.0 + 2.0 * np.cos(0.3))
    assert grad(f, 0.3, seed=(0.0, 1.0))[1][1] == pytest.approx(np.cos(0.3))
    g = compiled_grad(f)
    for _ in range(6):
        y, (_, dx) = g(0.3, seed=Point(1.0, 2.0))
        assert type(y) is Point and dx == pytest.approx(2.0 + 2.0 * np.cos(0.3))
    assert g.cache_info()["hits"] >= 1


def test_positional_parts_of_a_registered_tuple_subclass():
    """A registered tuple subclass is walked by position: its gradient is one, and paths are [i]."""
    _, (_, g) = grad(lambda s: s[0] * s[1], Span((2.0, 3.0)))
    assert type(g) is Span and g == (3.0, 2.0)
    _, tape = tapegrad.trace(lambda s: s[0] * s[1], Span((2.0, 3.0)))
    assert "# s[1]" in str(tape)
    check_grad(lambda s: s[0] * np.sin(s[1]), Span((2.0, 3.0)))


def test_update_of_a_deque_moves_each_leaf():
    """update on a deque argument and its gradient (a deque) gives a deque of moved leaves, maxlen kept."""
    dq = collections.deque([2.0, np.array([1.0, 2.0])], maxlen=4)
    _, (_, g) = grad(lambda q: q[0] * np.sum(q[1] ** 2), dq)
    moved = tapegrad.update(dq, g, lr=0.1)
    assert type(moved) is collections.deque and moved.maxlen == 4
    assert moved[0] == pytest.approx(2.0 - 0.1 * 5.0)
    np.testing.assert_allclose(moved[1], [1.0 - 0.1 * 4.0, 2.0 - 0.1 * 8.0])
    assert dq[0] == 2.0  # the original is untouched


def test_check_grad_moves_the_leaves_of_a_deque():
    """check_grad finds the numbers inside a deque, as grad does, so a wrong gradient there is caught."""
    wrong = tapegrad.primitive(lambda x: x * 3.0)
    tapegrad.rrule(wrong)(lambda x: (x * 3.0, lambda dy: (NO_TANGENT, dy * 2.0)))
    with pytest.raises(AssertionError, match="reverse mode gives"):
        check_grad(lambda q: wrong(q[0]), collections.deque([1.5]))


def test_tangents_add_and_map_inside_every_registered_container():
    """accum adds deques, OrderedDicts and registered types entry by entry; map_tangent keeps their types."""
    dq = accum(collections.deque([1.0, 2.0], maxlen=3), collections.deque([3.0, ZERO]))
    assert type(dq) is collections.deque and list(dq) == [4.0, 2.0] and dq.maxlen == 3
    od = accum(collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0, b=3.0))
    assert type(od) is collections.OrderedDict and od == {"a": 3.0, "b": 3.0}
    line = accum(Line(1.0, 2.0, NO_TANGENT), Line(3.0, ZERO, NO_TANGENT))
    assert type(line) is Line and (line.slope, line.offset) == (4.0, 2.0)
    doubled = map_tangent(lambda v: v * 2, collections.deque([1.0, (2.0, 3.0)]))
    assert type(doubled) is collections.deque and list(doubled) == [2.0, (4.0, 6.0)]


def test_results_keep_the_types_of_the_registry():
    """An OrderedDict, defaultdict or deque result keeps its type in grad, jvp and a compiled gradient."""
    f = lambda x: collections.OrderedDict(b=x * 2.0, a=np.sin(x))  # noqa: E731
    y, (_, dx) = grad(f, 0.5, seed={"b": 1.0, "a": 0.0})
    assert type(y) is collections.OrderedDict and list(y) == ["b", "a"] and dx == 2.0
    y, dy = jvp(f, (0.5,), (1.0,))
    assert type(y) is collections.OrderedDict and type(dy) is collections.OrderedDict
    assert dy["a"] == pytest.approx(np.cos(0.5))
    g = lambda x: collections.deque([x, x * x], maxlen=5)  # noqa: E731
    y, (_, dx) = grad(g, 3.0, seed=[1.0, 1.0])
    assert type(y) is collections.deque and y.maxlen == 5 and dx == 7.0


def test_structure_of_counts_subclasses_only_for_results_and_objects_only_for_arguments():
    """An argument's copy must behave as the original: a dict subclass stays a leaf there, and is a dict in a result."""
    class Params(dict):
        pass

    assert structure_of(Params(a=1.0)) is None
    assert structure_of(Params(a=1.0), subclasses=True).kind == "dict"
    assert structure_of(Pair(1.0, np.ones(2))).kind == "namedtuple"
    assert structure_of(Model(np.ones(2), 1.0)) is None
    assert structure_of(Model(np.ones(2), 1.0), objects=True).kind == "object"
    assert structure_of(np.ones(2), subclasses=True, objects=True) is None
    assert structure_of(Tangent(Model, w=1.0)).kind == "tangent"


def test_replace_items_keeps_named_tuples_and_deques():
    """A sequence like another holds new items: a named tuple keeps its type, a deque its maxlen."""
    assert replace_items(Pair(1.0, 2.0), [3.0, 4.0]) == Pair(3.0, 4.0)
    dq = replace_items(collections.deque([1], maxlen=2), [5, 6])
    assert type(dq) is collections.deque and dq.maxlen == 2 and list(dq) == [5, 6]
    assert type(replace_items((1, 2), [3, 4])) is tuple


def test_tapegrads_own_containers_cannot_be_registered_again():
    """Registering a built-in container or leaf type is refused; a non-class is refused."""
    with pytest.raises(ValueError, match="tuple is a container of tapegrad's own"):
        register_structure(tuple, list, tuple)
    with pytest.raises(ValueError, match="float is a leaf"):
        register_structure(float, lambda x: (), lambda parts: 0.0)
    with pytest.raises(TypeError, match="a structure is registered for a class"):
        register_structure(Line(1.0, 2.0), list, tuple)


def test_children_must_be_a_dict_or_a_tuple():
    """A children function returning something else raises, naming the type and what to return."""
    class Bad:
        pass

    register_structure(Bad, lambda b: 3, lambda parts: Bad())
    with pytest.raises(TypeError, match="registered for Bad returned int; it must return a dict or a tuple"):
        grad(lambda b: 1.0, Bad())


def test_a_rebuild_written_as_jaxs_unflatten_is_refused_when_registered():
    """rebuild(aux, children), JAX's unflatten, is refused at registration with the rewrite (it
    raised "missing 1 required positional argument" at the first gradient); a rebuild that
    takes the parts alone, or has defaults after them, is registered."""
    class Pair:
        def __init__(self, a, b, name="p"):
            self.a, self.b, self.name = a, b, name

    with pytest.raises(TypeError, match=re.escape(
            "register_structure(Pair, children, rebuild): rebuild is called with one argument, "
            "the parts children returned, but this one needs more (JAX's unflatten(aux_data, "
            "children) takes two). Return every part from children, names and flags too (they are "
            "kept as they are), and rebuild from the parts alone: register_structure(Pair, "
            "lambda v: (v.a, v.b, v.name), lambda parts: Pair(*parts))")):
        register_structure(Pair, lambda v: ((v.a, v.b), v.name), lambda name, parts: Pair(*parts, name))
    register_structure(Pair, lambda v: (v.a, v.b, v.name), lambda parts, extra=None: Pair(*parts))
    g = grad(lambda v: v.a * v.b, Pair(2.0, 3.0, "q"))[1][1]
    assert (type(g), g.a, g.b, g.name) == (Pair, 3.0, 2.0, NO_TANGENT)  # (a name has no tangent)


def test_only_the_registry_tests_for_container_types():
    """No module of tapegrad other than tapegrad/structures.py tests for named tuples, deques,
    OrderedDicts, defaultdicts or dataclasses: every walk asks the registry."""
    package = pathlib.Path(tapegrad.__file__).parent
    pattern = re.compile(r'"_fields"|is_dataclass|(isinstance\(|\bis\b)[^\n]*\b(deque|OrderedDict|defaultdict)\b')
    found = [f"{path.relative_to(package)}:{n}: {line.strip()}"
             for path in sorted(package.rglob("*.py")) if path.name != "structures.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []

"""The suite's own order (tests/_schedule.py): the recorded slowest tests first, longest first."""
from types import SimpleNamespace

import _schedule


def fake_item(nodeid, module_fixture=False):
    """What `longest_first` reads of a pytest item: its id and its fixtures' scopes and homes."""
    module = nodeid.partition("::")[0]
    defs = {"tmp_path": [SimpleNamespace(scope="function", baseid="")],
            "rng": [SimpleNamespace(scope="function", baseid="tests")],
            "tmp_path_factory": [SimpleNamespace(scope="session", baseid="")]}
    if module_fixture:
        defs["built"] = [SimpleNamespace(scope="module", baseid=module)]
    return SimpleNamespace(nodeid=nodeid, _fixtureinfo=SimpleNamespace(name2fixturedefs=defs))


def test_modules_with_recorded_tests_go_first_each_with_its_longest_first():
    """Modules move whole: those with recorded tests first, by their longest; inside one, its
    recorded tests first, longest first, then the rest in order; unrecorded modules follow in
    pytest's order, and a name recorded but not collected is ignored."""
    items = [fake_item(f"tests/test_a.py::a{i}") for i in range(3)] + [fake_item("tests/test_b.py::b0")] + [
        fake_item(f"tests/test_c.py::c{i}") for i in range(4)]
    seconds = {"tests/test_c.py::c3": 2.0, "tests/test_c.py::c1": 9.0, "tests/test_a.py::a2": 4.0,
               "tests/test_gone.py::t": 50.0}
    _schedule.longest_first(items, seconds)
    assert [i.nodeid.rpartition("::")[2] for i in items] == ["c1", "c3", "c0", "c2", "a2", "a0", "a1", "b0"]


def test_a_module_with_a_shared_setup_keeps_its_order():
    """The tests of a module-scoped fixture keep their order (placed by their slowest); a session
    fixture from elsewhere (tmp_path_factory) binds nothing."""
    items = [fake_item("tests/test_a.py::a0"), fake_item("tests/test_a.py::a1"),
             fake_item("tests/test_docs.py::d0", module_fixture=True), fake_item("tests/test_docs.py::d1", module_fixture=True)]
    _schedule.longest_first(items, {"tests/test_a.py::a1": 3.0, "tests/test_docs.py::d1": 5.0})
    assert [i.nodeid.rpartition("::")[2] for i in items] == ["d0", "d1", "a1", "a0"]


def test_a_module_that_says_it_shares_its_setup_keeps_its_order():
    """A module with SHARED_SETUP = True (a cache of its own) keeps its order too."""
    shared = SimpleNamespace(SHARED_SETUP=True)
    items = [fake_item("tests/test_a.py::a0"), fake_item("tests/test_nb.py::n0"), fake_item("tests/test_nb.py::n1")]
    items[1].module = items[2].module = shared
    _schedule.longest_first(items, {"tests/test_nb.py::n1": 3.0, "tests/test_a.py::a0": 2.0})
    assert [i.nodeid.rpartition("::")[2] for i in items] == ["n0", "n1", "a0"]


def test_no_record_keeps_pytests_order():
    """Without a recorded file (a fresh checkout), the order is pytest's."""
    items = [fake_item(f"tests/test_a.py::t{i}") for i in range(3)]
    _schedule.longest_first(items, {})
    assert [i.nodeid for i in items] == [f"tests/test_a.py::t{i}" for i in range(3)]


def test_the_record_keeps_the_tests_over_a_second_longest_first(tmp_path):
    """write_slowest keeps the tests over RECORDED_SECONDS, longest first; read_slowest reads them
    back, and reads a missing file as no record."""
    path = tmp_path / "slowest.txt"
    _schedule.write_slowest({"tests/test_a.py::quick": 0.2, "tests/test_a.py::slow": 1.5,
                             "tests/test_b.py::slower[x-1]": 12.25}, path)
    assert path.read_text().splitlines()[2:] == ["  12.25 tests/test_b.py::slower[x-1]",
                                                 "   1.50 tests/test_a.py::slow"]
    assert _schedule.read_slowest(path) == {"tests/test_b.py::slower[x-1]": 12.25, "tests/test_a.py::slow": 1.5}
    assert _schedule.read_slowest(tmp_path / "none.txt") == {}


def test_a_partial_run_updates_the_tests_it_ran_and_keeps_the_others(tmp_path):
    """A second record replaces the times of the tests it ran (dropping one now under a second)
    and keeps those of tests it did not run."""
    path = tmp_path / "slowest.txt"
    _schedule.write_slowest({"tests/test_a.py::t": 4.0, "tests/test_b.py::u": 2.0, "tests/test_b.py::v": 3.0}, path)
    _schedule.write_slowest({"tests/test_b.py::u": 6.0, "tests/test_b.py::v": 0.5}, path)
    assert _schedule.read_slowest(path) == {"tests/test_b.py::u": 6.0, "tests/test_a.py::t": 4.0}

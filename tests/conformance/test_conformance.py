"""The conformance layer: every case through every entry point, against central differences.

A case is a function and a point: each rule's ORDER2 rows (tests/rules), and programs written
the way scientists write them (`_programs.PROGRAMS`). Each runs through every entry point of
`_entries.ENTRY_POINTS` (grad, gradient, pullback with a plain and a traced seed and that
differentiated again, both sweeps, jvp, jacobian in both modes, hessian and hvp in all four
combinations of modes, compiled_grad after its warm-up, a replayed and a written-out tape,
the autograd layer's make_vjp and value_and_grad, check_grad),
whose results must match central differences and be plain values in the arguments' or the
result's structure. A case may name the entry points that refuse it by design, with the
error they raise.

One test per case runs it through every entry point and reports each that fails (each was a
test of its own, ~18,000 in all: pytest's and xdist's own work per test, about 3 ms of CPU,
was a third of the layer's time). ``--entry PATTERN`` (repeatable, shell-style:
``--entry 'hessian_*'``) runs only the entry points it names, with ``-k`` picking the cases:
``python -m pytest tests/conformance -n 0 -k ivp_solution --entry 'hessian_*' --entry 'hvp_*'``.
"""
import fnmatch

import numpy as np
import pytest

from tapegrad.errors import qualified_name

from _entries import ENTRY_POINTS
from _layer import Reference
from _programs import PROGRAMS, Case
from _tables import modules, order2_rows

def _table_cases():
    """A case per ORDER2 row, numbered in the whole table (its id) and seeded by its module and its
    place there (adding rows to one module changes no other case's directions)."""
    places = {}
    for i, (stem, (fn, f, args)) in enumerate(order2_rows()):
        places[stem] = places.get(stem, -1) + 1
        yield Case(f"{qualified_name(fn)}-{i}", f, tuple(args), seed=f"{stem}-{places[stem]}")


CASES = list(_table_cases())
CASES += PROGRAMS


def _through_nondifferentiable(use):
    """A function through a piecewise-constant one (floor, sign, argmax, ...): zero derivatives,
    which every entry point must give as plain zeros of the argument's type."""
    def through(x, _use=use):
        u = _use(x)
        return np.sum(u * V) if np.shape(u) == X.shape else np.sum(u * 1.0)
    return through


# every non-differentiable function of the table (tests/rules/test_nondiff.py), at a point away
# from its jumps
X = np.array([[-1.62, -0.41, 0.21], [0.88, 1.33, 1.94]])
V = np.cos(np.arange(6.0)).reshape(2, 3)
CASES += [Case(f"nondifferentiable-{qualified_name(fn)}-{i}", _through_nondifferentiable(use), (X,))
          for i, (fn, use) in enumerate(modules()["test_nondiff"].NONDIFF)]

_REFERENCES = {}


def reference(case):
    """The case's directions and central differences, computed once per case."""
    ref = _REFERENCES.get(case.id)
    if ref is None:
        ref = _REFERENCES[case.id] = Reference(case)
    return ref


def test_case_ids_are_unique():
    """Each case has its own id (the references are kept by it)."""
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def through_entry_point(case, entry):
    """The entry point's derivatives of the case match central differences and are plain values
    in the case's structures; an entry point the case names as refusing it raises its error."""
    check = ENTRY_POINTS[entry]
    refused = case.refuses.get(entry)
    if refused is not None:
        error, match = refused
        with pytest.raises(error, match=match):
            check(reference(case))
        return
    check(reference(case))


@pytest.fixture
def entries(request):
    """The entry points to run: every one, or those ``--entry`` names (tests/conftest.py)."""
    patterns = request.config.getoption("entry")
    if not patterns:
        return list(ENTRY_POINTS)
    chosen = [e for e in ENTRY_POINTS if any(fnmatch.fnmatchcase(e, p) for p in patterns)]
    assert chosen, f"--entry {patterns} names none of the entry points {list(ENTRY_POINTS)}"
    return chosen


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_through_every_entry_point(case, entries):
    """Each entry point passes `through_entry_point` on the case; every one runs, and the failure
    names each that failed (the first one's traceback follows)."""
    failed = []
    for entry in entries:
        try:
            through_entry_point(case, entry)
        except (Exception, pytest.fail.Exception) as exc:  # (Failed: a refusal that did not come)
            failed.append((entry, exc))
    if failed:
        lines = "\n".join(f"  {entry}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                          for entry, exc in failed)
        raise AssertionError(f"{case.id}: {len(failed)} of {len(entries)} entry points failed:\n{lines}") \
            from failed[0][1]


def test_every_failing_entry_point_is_named(monkeypatch):
    """A case that fails at two entry points fails its test once, after running every entry
    point, naming both and chaining the first one's error."""
    ran = []

    def passes(ref):
        ran.append("passes")

    def fails(ref):
        ran.append("fails")
        raise AssertionError(f"planted failure {len(ran)}")

    monkeypatch.setitem(ENTRY_POINTS, "passes", passes)
    monkeypatch.setitem(ENTRY_POINTS, "fails", fails)
    monkeypatch.setitem(ENTRY_POINTS, "fails_too", fails)
    case = CASES[0]
    with pytest.raises(AssertionError) as info:
        test_case_through_every_entry_point(case, ["fails", "passes", "fails_too", "passes"])
    assert ran == ["fails", "passes", "fails", "passes"]
    assert str(info.value) == (f"{case.id}: 2 of 4 entry points failed:\n"
                               f"  fails: AssertionError: planted failure 1\n"
                               f"  fails_too: AssertionError: planted failure 3")
    assert str(info.value.__cause__) == "planted failure 1"

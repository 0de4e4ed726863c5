"""The conformance layer: every case through every entry point, against central differences.

A case is a function and a point: each rule's ORDER2 rows (tests/rules), and programs written
the way scientists write them (`_programs.PROGRAMS`). Each runs through every entry point of
`_entries.ENTRY_POINTS` (grad, gradient, pullback with a plain and a traced seed and that
differentiated again, both sweeps, jvp, jacobian in both modes, hessian and hvp in all four
combinations of modes, compiled_grad after its warm-up, a replayed and a written-out tape),
whose results must match central differences and be plain values in the arguments' or the
result's structure. A case may name the entry points that refuse it by design, with the
error they raise.
"""
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


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_through_entry_point(case, entry):
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

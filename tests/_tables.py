"""The tables the test modules declare, collected once for the tests that run them all.

A test module may define ``EXERCISED`` (the functions whose rules its tables drive, read by
tests/rules/test_coverage.py) and ``ORDER2`` (rows ``(rule_fn, f, args)`` that the conformance
layer, tests/conformance, runs through every entry point). The modules that read every other
module's tables are left out, so that loading one of them never loads the others again.
"""
import importlib
import pathlib
import re
import sys

TESTS = pathlib.Path(__file__).resolve().parent

#: the modules that collect the tables of the others (never collected themselves)
COLLECTORS = {"test_coverage.py", "test_higher_order.py", "test_conformance.py"}
#: a module whose source never names a table cannot define one, and is not loaded for it
TABLE_NAMES = re.compile(r"\b(ORDER2|EXERCISED|NONDIFF)\b")

_MODULES = {}


def modules():
    """Every test module but the collectors that names a table, loaded once: {stem: module}.

    Each is imported under the name pytest gives it (its file's stem, its folder first on
    sys.path, as pytest's default import mode does), so pytest's collection finds it already
    imported, assertions rewritten, rather than running every module a second time in each worker.
    """
    if not _MODULES:
        for path in sorted(TESTS.rglob("test_*.py")):
            if path.name in COLLECTORS or not TABLE_NAMES.search(path.read_text()):
                continue
            if str(path.parent) not in sys.path:  # (its own helpers, as pytest would find them)
                sys.path.insert(0, str(path.parent))
            module = importlib.import_module(path.stem)
            assert pathlib.Path(module.__file__).resolve() == path, f"{path.stem} is {module.__file__}, not {path}"
            _MODULES[path.stem] = module
    return _MODULES


def order2_rows():
    """``[(module stem, (rule_fn, f, args)), ...]``: every ORDER2 row of every test module."""
    return [(stem, row) for stem, module in modules().items() for row in getattr(module, "ORDER2", ())]


def exercised():
    """The union of the EXERCISED sets of every test module."""
    out = set()
    for module in modules().values():
        out |= set(getattr(module, "EXERCISED", ()))
    return out

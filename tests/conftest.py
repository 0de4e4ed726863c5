"""Fixtures and tables that several test modules share, and the quick subset (``--quick``)."""
import gc
import os
import pathlib

# One BLAS thread per process, set before numpy is first imported (the xdist workers and the
# interpreters the tests start inherit it): the suite runs a worker per core, and OpenBLAS's own
# threads, two per worker on two cores, spin against each other and the other worker on every
# small solve. scipy.linalg.solve_triangular of a 3×3 matrix and a 3×2 right-hand side took
# 450 µs of wall time with them and 55 µs without; the conformance layer's scipy.linalg rows ran
# 43 s and 14 s. (setdefault: a run that sets its own count keeps it.)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import _schedule  # noqa: E402

#: what ``python -m pytest --quick`` leaves out: the files that take most of the suite's time
#: (seconds of one full run on 2 loaded cores, of 1,810 in all): the conformance layer (885 s,
#: then 14,341 tests, now a test per case through every entry point), the random programs (271 s), the
#: higher-order rule tables (122 s), the documentation build and its examples (58 s), the
#: benchmarks' own checks (49 s), compiled_grad's tiers and pickling (47 s), the source
#: distribution's build (40 s), the scipy.integrate solvers (37 s), the notebooks (23 s),
#: Dask (10 s) and the fresh interpreters of test_onimport.py (10 s). What is left runs every
#: rule's own table, the entry points, printing and errors in under a minute on two cores.
SLOW = {"conformance", "test_fuzz.py", "test_higher_order.py", "test_docs.py", "test_benchmarks.py",
        "test_compiled.py", "test_package.py", "test_integrate.py", "test_notebooks.py", "test_dask.py",
        "test_onimport.py", "test_solve_ivp.py", "test_viewer_browser.py"}
#: single tests of the other files that --quick leaves out too, every parametrization of each: a
#: million-op tape (15 s), long chains' memory (8 s) and a 3,000-step viewer page (4 s), and the
#: tests that start fresh interpreters, as test_onimport.py does (each imports numpy, scipy and
#: tapegrad anew: 2-5 s of CPU apiece); every module they test keeps its other tests in --quick
SLOW_TESTS = {"test_reliability.py::test_a_million_op_tape_without_recursion_errors",
              "test_sweep.py::test_a_long_scalar_chain_holds_few_bytes_per_recorded_op",
              "test_viewer.py::test_a_long_sweep_builds_one_page_of_modest_size",
              "test_scipy.py::test_replacements_are_reachable_right_after_import_tapegrad",
              "test_cli.py::test_cli_help_and_demo_run_as_commands",
              "test_composition.py::test_names_bound_from_numpy_at_import_are_named_in_the_refusal",
              "test_composition.py::test_a_warning_inside_a_rule_reaches_the_user_however_python_runs",
              "test_errors.py::test_the_sampler_hint_needs_no_source"}
TESTS = pathlib.Path(__file__).parent


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="the quick subset: leave out the slowest test files (tests/conftest.py: SLOW)")
    parser.addoption("--entry", action="append", default=[], metavar="PATTERN",
                     help="the conformance layer runs only the entry points matching PATTERN "
                          "(shell-style, repeatable; tests/conformance/test_conformance.py)")
    parser.addoption("--record-slowest", action="store_true",
                     help="write tests/slowest.txt, the tests that run first (tests/_schedule.py), from this run")


def pytest_collection_modifyitems(config, items):
    if config.getoption("quick"):
        slow = [item for item in items if item.nodeid.rpartition("/")[2].partition("[")[0] in SLOW_TESTS]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item not in slow]
    # the longest tests first (each worker collects and orders alike), the short ones left for the end
    _schedule.longest_first(items, _schedule.read_slowest())
    for item in items:
        if type(item).__name__ == "DoctestItem":
            _undo_declarations_after(item)


def _undo_declarations_after(item):
    """A docstring's example that registers a rule to show how (tapegrad.extend, registry,
    show.formulas) has it undone when it ends, as a test's are (`registry.declarations_undone`):
    a test that counts the registered rules (rules/test_coverage.py) may run after it in the same
    worker, wherever xdist moves either of them."""
    run = item.runtest

    def runtest():
        with tapegrad.registry.declarations_undone():
            run()

    item.runtest = runtest


_DURATIONS = {}


def pytest_runtest_logreport(report):
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    """--record-slowest: the controller (or a run without workers) writes what it saw."""
    if session.config.getoption("record_slowest") and not hasattr(session.config, "workerinput"):
        _schedule.write_slowest(_DURATIONS)


def pytest_ignore_collect(collection_path, config):
    """With --quick, the files of SLOW (under tests/) are not even collected."""
    if config.getoption("quick") and collection_path.name in SLOW and TESTS in collection_path.parents:
        return True
    return None


def pytest_collection_finish(session):
    """The modules, tables and ~28,900 test items collected stay until the end: the collector
    stops walking them (each full collection, and pytest's own at the session's end, would
    scan them all again in every worker)."""
    gc.freeze()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Every array a pullback keeps only for its shape is a stand-in here, however small: a
# pullback that reads a stand-in's elements (NaN) fails the gradient checks of its rule.
import tapegrad  # noqa: E402
import tapegrad.registry  # noqa: E402
from tapegrad.rules.piecewise import branch_cotangent  # noqa: E402

tapegrad.registry.STAND_IN_BYTES = 0


def pytest_configure(config):
    """Every rule family registered before any test is collected: the ones keyed on scipy's
    modules wait for a program to import them (tapegrad.onimport), and a test that undoes its
    declarations (registry.declarations_undone) must not undo a family registered inside it.
    Not in xdist's controller, which runs no test: its 3 s of CPU (scipy.stats, scipy.signal)
    would be taken from the workers as they start."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") == "no":
        tapegrad.rules.load_all()


# --- worked examples, as programs: tests/program/test_codegen.py and test_passes.py run each ---


def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2


def branchy(x):
    if x > 0:
        return x * 2.0
    return -x


#: (function, arguments it is traced at, new arguments it is replayed at)
WORKED = [
    (lambda a, b: a / (a + b * b), (2.0, 3.0), (1.5, 0.5)),
    (lambda x: np.sin(np.cos(x)), (0.9,), (0.1,)),
    (lambda x1, x2: x1 * x2 + np.sin(x1), (2.0, 3.0), (1.0, -1.0)),
    (haaland, (0.01, 1.0, 3000.0), (0.02, 2.0, 5000.0)),
    (lambda x: -np.log(x**2 + 2 * np.exp(x) + (x + 1) / x), (2.3,), (1.1,)),
    (lambda m, x, b: m * x + b, (2.0, 3.0, 1.0), (0.5, -2.0, 4.0)),
    (branchy, (1.5,), (2.5,)),
]


# --- value as numpy, gradient as central differences, compiled and replayed alike ---


def assert_as_numpy(f, *args, modes=("rev",)):
    """f traced gives numpy's own value (same type); its gradient matches central differences;
    compiled_grad gives grad's results; the tape replayed at new arguments gives numpy's value."""
    expected = f(*[np.array(a) for a in args])
    value, tape = tapegrad.trace(f, *args)
    # (a traced result that numpy gives as a float64 scalar comes back as the float it is)
    assert type(value) is type(expected) or (type(expected), type(value)) == (np.float64, float)
    np.testing.assert_array_equal(value, expected)
    tapegrad.check_grad(f, *args, modes=modes)

    def total(*a):
        return np.sum(f(*a) * np.arange(1.0, np.size(expected) + 1).reshape(np.shape(expected)))

    fv, fg = tapegrad.grad(total, *args)
    compiled = tapegrad.compiled_grad(total, tiers=False)
    for _ in range(2):  # the traced call, then the compiled program
        cv, cg = compiled(*args)
        assert cv == fv
        for a, b in zip(cg[1:], fg[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-14)
    assert compiled.cache_info()["hits"] == 1
    new = [a * 0.5 + 0.25 for a in args]
    np.testing.assert_allclose(tape.replay(f, *new), f(*[np.array(a) for a in new]), rtol=1e-14)

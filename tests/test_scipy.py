"""The replacements in tapegrad.scipy on their own: reachable after ``import tapegrad``, equal to
scipy on plain values, recorded as one op under the name the user wrote, named by the error
that scipy's own function raises on a traced value, in the rule listing and in generated
source. Their gradients are tested with the rules (tests/rules/test_special.py and
tests/rules/test_scipy_linalg.py)."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import scipy.special

from tapegrad import Call, ConcreteValueError, compiled_grad, grad, trace
from tapegrad.errors import qualified_name
from tapegrad.scipy import linalg as tsl, signal as tsg, special as tss
from tapegrad.show.listing import rule_rows, rules_markdown

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = {"special": (tss, scipy.special), "linalg": (tsl, scipy.linalg), "signal": (tsg, scipy.signal)}


def positive(rng):
    return (rng.uniform(0.5, 2.0, (2, 3)),)


def spd_and_vector(rng):
    m = rng.standard_normal((3, 3))
    return m @ m.T + 3 * np.eye(3), rng.standard_normal(3)


#: (module, name, the call made with `fn`, the replacement or scipy's function, inputs); a
#: factorization returns its tuple, of which the factor comes first
CALLS = [
    ("special", "logsumexp", lambda fn, x: fn(x), positive),
    ("special", "logsumexp", lambda fn, x: fn(x, 1, np.full(3, 0.5), keepdims=True), positive),
    ("special", "logsumexp", lambda fn, x: fn(x, axis=0, return_sign=True)[0], positive),
    ("special", "softmax", lambda fn, x: fn(x), positive),
    ("special", "softmax", lambda fn, x: fn(x, axis=0), positive),
    ("special", "log_softmax", lambda fn, x: fn(x, -1), positive),
    ("special", "polygamma", lambda fn, x: fn(1, x), positive),
    ("special", "multigammaln", lambda fn, x: fn(x, 1), positive),
    ("linalg", "solve_triangular", lambda fn, a, b: fn(a, b, lower=True), spd_and_vector),
    ("linalg", "cho_factor", lambda fn, a, b: fn(a, lower=True), spd_and_vector),
    ("linalg", "cho_solve", lambda fn, a, b: fn((a, False), b), spd_and_vector),
    ("linalg", "cholesky", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "expm", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "lu_factor", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "lu_solve", lambda fn, a, b: fn((a, np.arange(3)), b), spd_and_vector),
    ("linalg", "solve", lambda fn, a, b: fn(a, b), spd_and_vector),
    ("linalg", "sqrtm", lambda fn, a, b: fn(a), spd_and_vector),
    ("linalg", "solve_sylvester", lambda fn, a, b: fn(a, a, a), spd_and_vector),
    ("signal", "convolve", lambda fn, a, b: fn(a, a, "same"), spd_and_vector),
    ("linalg", "solve_banded", lambda fn, a, b: fn((1, 1), a, b), spd_and_vector),
]
IDS = [f"{module}.{name}-{i}" for i, (module, name, _, _) in enumerate(CALLS)]
NAMES = sorted({(module, name) for module, name, _, _ in CALLS})


def parts(out):
    return out if isinstance(out, tuple) else (out,)


def assert_same(ours, theirs):
    for x, y in zip(parts(ours), parts(theirs), strict=True):
        np.testing.assert_array_equal(x, y)


def test_every_replacement_has_a_row():
    """The table covers each module's __all__, so the tests below see every replacement."""
    assert NAMES == sorted((m, n) for m, (ours, _) in MODULES.items() for n in ours.__all__)


def test_replacements_are_reachable_right_after_import_tapegrad():
    """In a fresh interpreter, ``import tapegrad`` alone makes tapegrad.scipy.special.logsumexp etc. attributes."""
    names = ", ".join(f"tapegrad.scipy.{m}.{n}" for m, n in NAMES)
    code = f"import tapegrad; print(tapegrad.__file__); {names}"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert pathlib.Path(done.stdout.strip()).parent == ROOT / "tapegrad"


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_replacement_agrees_with_scipy_on_plain_values(module, name, call, make, rng):
    """On plain values a replacement returns exactly what scipy returns."""
    ours, theirs = (getattr(m, name) for m in MODULES[module])
    args = make(rng)
    assert_same(call(ours, *args), call(theirs, *args))


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_replacement_is_one_op_named_as_written(module, name, call, make, rng):
    """On traced values a replacement is one op: the tape prints the name the user wrote, and
    errors and the listing give the path they import it from; its value is scipy's."""
    ours, theirs = (getattr(m, name) for m in MODULES[module])
    args = make(rng)
    value, tape = trace(lambda *xs: call(ours, *xs), *args)
    op = next(op for op in tape.ops if type(op) is Call)
    assert f"= {name}(" in str(tape)
    assert qualified_name(op.fn) == f"tapegrad.scipy.{module}.{name}"
    assert_same(value, call(theirs, *args))


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_scipy_original_on_traced_value_names_replacement(module, name, call, make, rng):
    """scipy's own function converts a traced value with np.asarray; the error names tapegrad's replacement."""
    theirs = getattr(MODULES[module][1], name)
    with pytest.raises(ConcreteValueError) as info:
        grad(lambda *xs: np.sum(parts(call(theirs, *xs))[0]), *make(rng))
    expected = f"scipy.{module}.{name} cannot see traced values: use tapegrad.scipy.{module}.{name} instead"
    assert expected in str(info.value)


@pytest.mark.parametrize("module, name", NAMES, ids=[f"{m}.{n}" for m, n in NAMES])
def test_rule_listing_names_the_replacement(module, name):
    """docs/rules.md lists the rule under the replacement, never under scipy's function, which refuses traced values."""
    listed = {row[0] for row in rule_rows()}
    assert f"tapegrad.scipy.{module}.{name}" in listed
    assert f"scipy.{module}.{name}" not in listed
    (note,) = [row[3] for row in rule_rows() if row[0] == f"tapegrad.scipy.{module}.{name}"]
    assert note.startswith(f"use for `scipy.{module}.{name}`, which cannot see traced values")


def test_rule_listing_names_the_stats_replacements():
    """docs/rules.md has a row for each tapegrad.scipy.stats distribution with its methods, and says
    which take plain values only (scipy's own, and multivariate_normal's Monte Carlo cdf)."""
    listed = rules_markdown()
    assert ("| `tapegrad.scipy.stats.dirichlet` | cov, entropy, logpdf, mean, pdf, rvs (plain values only), "
            "var |\n") in listed
    assert ("| `tapegrad.scipy.stats.multivariate_normal` | cdf (plain values only), entropy, fit (plain values "
            "only), logcdf (plain values only), logpdf, marginal (plain values only), pdf, rvs (plain values "
            "only) |\n") in listed


@pytest.mark.parametrize("module, name, call, make", CALLS, ids=IDS)
def test_compiled_gradient_through_replacement(module, name, call, make, rng):
    """Generated source calls the replacement by its name, and the compiled gradient is grad's."""
    ours = getattr(MODULES[module][0], name)

    def f(*xs):
        return np.sum(parts(call(ours, *xs))[0])

    args = make(rng)
    compiled = compiled_grad(f)
    assert f" = {name}(" in compiled.source(*args)
    value, grads = compiled(*args)
    expected_value, expected_grads = grad(f, *args)
    assert value == expected_value
    for g, e in zip(grads, expected_grads):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(g, e)
        else:
            assert g is e or g == e

"""``import tapegrad`` imports no part of scipy; the rules keyed on scipy's functions are
registered when the program imports scipy's module, whatever the order of the imports, and
every entry point finds them. Each test runs a fresh interpreter, as the test process has
imported everything long before."""
import subprocess
import sys
import textwrap

import pytest

from tapegrad import onimport


def run(code):
    """Run `code` in a fresh interpreter and return what it printed (failing on an error)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def test_import_tapegrad_imports_no_scipy():
    """After ``import tapegrad`` (and its subpackages' names), no scipy module is imported and
    every scipy family waits."""
    assert run("""
        import sys, tapegrad
        tapegrad.scipy, tapegrad.show, tapegrad.program, tapegrad.extend
        print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
        print(sorted(tapegrad.onimport.waiting()))
    """) == ("[]\n['scipy.integrate', 'scipy.optimize', 'scipy.signal', 'scipy.special', 'scipy.stats']\n")


@pytest.mark.parametrize("first", ["tapegrad", "scipy"])
def test_special_rules_found_whichever_is_imported_first(first):
    """scipy.special's functions on traced values: reverse, forward, second order, a ufunc's
    outer method, whether scipy.special or tapegrad is imported first."""
    imports = ("import tapegrad\nimport scipy.special as sp" if first == "tapegrad"
               else "import scipy.special as sp\nimport tapegrad")
    out = run(imports + """
import numpy as np
f = lambda x: sp.gammaln(x) * sp.erf(x)
print(round(tapegrad.gradient(f, 1.3)[0], 10))
print(round(tapegrad.jvp(f, (1.3,), (1.0,))[1], 10))
print(round(float(tapegrad.hessian(f, 1.3)), 8))
print(tapegrad.gradient(lambda x: np.sum(sp.xlogy.outer(x, x)), np.array([1.5, 2.0]))[0].round(6))
print("scipy.special" in tapegrad.onimport.waiting())
""")
    d = (0.0 + __import__("scipy.special").special.digamma(1.3) * __import__("scipy.special").special.erf(1.3)
         + __import__("scipy.special").special.gammaln(1.3) * 2 / 3.141592653589793 ** 0.5 * 2.718281828459045 ** -1.69)
    lines = out.splitlines()
    assert float(lines[0]) == pytest.approx(d, rel=1e-9)
    assert float(lines[1]) == pytest.approx(d, rel=1e-9)
    assert lines[3:] == ["[3.431946 2.848612]", "False"]  # (central differences: 3.43194562, 2.84861229)


def test_stats_import_registers_special_and_stats_families():
    """``import scipy.stats`` imports scipy.special on its way: both families are registered
    once scipy.stats is complete, and tapegrad.scipy.stats' distributions differentiate."""
    assert run("""
        import scipy.stats, tapegrad
        from tapegrad.scipy.stats import norm, poisson
        print(tapegrad.gradient(lambda m: norm.logpdf(1.0, m, 2.0), 0.5)[0])
        print(round(tapegrad.gradient(lambda mu: poisson.entropy(mu), 3.0)[0], 8))
        print(sorted(tapegrad.onimport.waiting()))
    """) == "0.125\n0.18243085\n['scipy.signal']\n"  # (scipy.stats imports scipy.integrate and scipy.optimize)


def test_a_family_registered_inside_declarations_undone_outlives_the_block():
    """scipy.special imported inside a ``declarations_undone`` block (a test of a user's own
    rule): its family registers once, so the undo keeps it, while the user's rule goes."""
    assert run("""
        import numpy as np, tapegrad
        from tapegrad.registry import RULES, declarations_undone
        def mine(x):
            return 2.0 * x
        with declarations_undone():
            tapegrad.rrule(mine)(lambda x: (mine(x), lambda dy: (tapegrad.ZERO, 2.0 * dy)))
            import scipy.special
        print(round(tapegrad.gradient(lambda x: scipy.special.erf(x), 0.0)[0] * np.pi ** 0.5, 12))
        print(mine in RULES, scipy.special.erf in RULES)
    """) == "2.0\nFalse True\n"


def test_linalg_rules_import_scipy_linalg_at_first_use():
    """np.linalg's rules and tapegrad.scipy.linalg's replacements call scipy.linalg, imported at
    their first call, not with tapegrad."""
    assert run("""
        import sys, numpy as np, tapegrad
        from tapegrad.scipy.linalg import solve
        A = np.array([[3.0, 1.0], [1.0, 2.0]])
        print("scipy.linalg" in sys.modules)
        print(tapegrad.gradient(lambda a: np.sum(np.linalg.cholesky(a)), A)[0].round(6))
        print(tapegrad.gradient(lambda b: np.sum(solve(A, b)), np.ones(2))[0].round(6))
        print("scipy.linalg" in sys.modules)
    """) == "False\n[[0.235483 0.      ]\n [0.319151 0.387298]]\n[0.2 0.4]\nTrue\n"


def test_signal_and_optimize_after_their_import():
    """scipy.signal's replacement is differentiated, and scipy.optimize's solvers name the way
    to differentiate a root, once the program imports them; the watcher then leaves sys.meta_path."""
    out = run("""
        import sys, numpy as np, scipy.optimize, tapegrad
        from tapegrad.scipy.signal import convolve
        print(tapegrad.gradient(lambda x: np.sum(convolve(x, np.array([1.0, 2.0]))), np.ones(3))[0])
        try:
            tapegrad.gradient(lambda t: scipy.optimize.brentq(lambda x: x - t, -5.0, 5.0), 1.0)
        except Exception as e:
            print("implicit function theorem" in str(e))
        tapegrad.rules.load_all()
        print(tapegrad.onimport.waiting(), any(type(f).__module__ == "tapegrad.onimport" for f in sys.meta_path))
    """)
    assert out == "[3. 3. 3.]\nTrue\n{} False\n"


def test_failing_action_warns_and_leaves_the_import_alone():
    """An action that fails is a warning naming it; the program's import of scipy goes on."""
    out = run("""
        import warnings, tapegrad
        from tapegrad.onimport import when_imported
        def broken():
            raise ValueError("no")
        when_imported("scipy.fft", broken)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            import scipy.fft
        print(scipy.fft.fft([1.0, 0.0]).real)
        for x in w:
            print(f"{x.category.__name__}: {x.message}")
    """)
    assert out == ("[1. 1.]\nRuntimeWarning: tapegrad could not register its rules for scipy after scipy's import "
                   "(broken: ValueError: no); gradients through those scipy functions will raise NoRuleError\n")


def test_on_first_use_imports_at_first_attribute():
    """OnFirstUse imports its module when a name is read, and gives that module's attribute."""
    assert repr(onimport.OnFirstUse("json")) == "<module 'json', imported on first use>"
    assert onimport.OnFirstUse("json").dumps([1]) == "[1]"

"""Reverse rules, one file per family. Importing this package registers them all.

Each rule is one function registered with ``@rrule(fn, ...)``, returning ``(y, pullback)``;
the pullback is named after the function and returns ``(NO_TANGENT, *dargs)``. Pullbacks
are written with numpy calls, so that a Tracer can record them again (second derivatives).
The decorator is the primitive's whole declaration: its formula for explain, its forward
rule, complex support, view facts (see `tapegrad.registry`).

The families keyed on scipy's functions (scipy.special's ufuncs, the replacements in
`tapegrad.scipy` for scipy.signal, scipy.stats, scipy.integrate, scipy.optimize) are registered when the
program imports scipy's module (`family`, `tapegrad.onimport`); `load_all` registers them all.
"""
import importlib

from ..onimport import waiting, when_imported
from ..registry import KEPT, NONDIFF, RULES, TABLES
from . import (  # noqa: F401
    arithmetic,
    unary,
    fast,  # after the rules it stands in front of (arithmetic, unary)
    piecewise,
    partial,
    reductions,
    shape,
    assembly,
    indexing,
    products,
    array_api,
    linalg,
    decompositions, norms,
    fft,
    differences,
    selection,
    eig,
    scipy_linalg_extra,
    convolution,
    interpolation,
    statistics,
    histograms,
    fitting,
    functional,
    composites,
    linalg_composites,
    nanreductions,
    polynomials,
    sets,
    histograms_nd,
    fft_hermitian,
    scipy_linalg,
    nondiff,
    inplace,
    structure,
    float_parts,
    ufunc_methods,  # last: it gives outer to every two-input ufunc registered above
)


def family(*names):
    """The action that registers the rule modules `names` (of this package) when scipy's module
    they are keyed on is imported (`tapegrad.onimport`), then gives the two-input ufuncs among
    their functions the methods `ufunc_methods` gives the ones registered above."""
    def register_family():
        before = [table.copy() for table in TABLES]
        for name in names:
            importlib.import_module(f"{__name__}.{name}")
        rules_before, nondiff_before = before[TABLES.index(RULES)], before[TABLES.index(NONDIFF)]
        added = (RULES.keys() - rules_before) | (NONDIFF - nondiff_before)
        ufunc_methods.give_outer(added)
        ufunc_methods.give_nondifferentiable_methods(added)
        # what the family declared (the methods above included), kept by any declarations_undone
        KEPT.extend((table, {k: v for k, v in table.items() if k not in was or was[k] is not v})
                    if isinstance(table, dict) else (table, table - was) for table, was in zip(TABLES, before))
    register_family.__qualname__ = f"family{names}"
    return register_family


# The rules keyed on scipy's own functions, registered when the program imports scipy's module
# (which it does before it can call them): importing scipy.special, .stats, .signal and .integrate
# costs more than all of tapegrad, which a program that never calls them need not pay.
when_imported("scipy.special", family("special", "logsumexp", "bessel", "incomplete", "special_elementary",
                                          "special_gamma", "special_losses", "special_erf", "special_expint", "special_bessel",
                                          "special_elliptic", "special_distributions"))
when_imported("scipy.signal", family("signal", "signal_filters"))
when_imported("scipy.integrate", family("integrate", "ivp", "quad"))
when_imported("scipy.optimize", family("implicit"))
when_imported("scipy.stats", family("stats"))


def load_all():
    """Import every scipy module a rule family waits for, so that every rule is registered (what
    the rule listing and the test suite need; a program's own imports do it one module at a time)."""
    for name in list(waiting()):
        importlib.import_module(name)

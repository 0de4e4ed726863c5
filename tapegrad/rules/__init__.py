"""Reverse rules, one file per family. Importing this package registers them all.

Each rule is one function registered with ``@rrule(fn, ...)``, returning ``(y, pullback)``;
the pullback is named after the function and returns ``(NO_TANGENT, *dargs)``. Pullbacks
are written with numpy calls, so that a Tracer can record them again (second derivatives).
The decorator is the primitive's whole declaration: its formula for explain, its forward
rule, complex support, view facts (see `tapegrad.registry`).
"""
from . import (  # noqa: F401
    arithmetic,
    unary,
    fast,  # after the rules it stands in front of (arithmetic, unary)
    piecewise,
    partial,
    special,
    logsumexp,
    reductions,
    shape,
    assembly,
    indexing,
    products,
    linalg,
    decompositions, norms,
    fft,
    bessel,
    incomplete,
    differences,
    selection,
    eig,
    scipy_linalg_extra,
    signal,
    convolution,
    integrate,
    implicit,
    ivp,
    interpolation,
    stats,
    statistics,
    histograms,
    fitting,
    functional,
    scipy_linalg,
    nondiff,
    inplace,
    structure,
    ufunc_methods,  # last: it gives outer to every two-input ufunc registered above
)

"""autograd's ``misc.tracers``: `const_graph`, a function traced once and replayed after.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.misc import const_graph
>>> calls = []
>>> def f(x):
...     calls.append(1)
...     return np.sin(x) * 2.0
>>> g = const_graph(f)
>>> float(g(0.5)), float(g(1.0)), len(calls)   # traced once, replayed once
(0.958851077208406, 1.682941969615793, 1)
"""
from __future__ import annotations

import functools

import numpy as np

from ...arraylike import ArrayLike
from ...program.codegen import compile_tape
from ...program.guards import GuardError
from ...tracing import trace

__all__ = ["const_graph"]

#: the arguments a replay takes (with float and complex arrays): each is one input of the
#: traced program
_LEAVES = (float, complex, np.floating, np.complexfloating, ArrayLike)


def const_graph(fun, *args, **kwargs):
    """`fun` with `args` and `kwargs` bound, traced on its first call and replayed on later ones
    as Python source of its recorded program (`tapegrad.program.compile_tape`), as autograd's
    ``const_graph`` replays its recorded graph. A replay whose guards fail (a branch taken
    otherwise, a count that changed) traces again. It can be differentiated: the replay is
    numpy code, traced like any other. Arguments other than floats and float or complex
    arrays (an int, a list, a dict) are not replayed: `fun` runs on them as it is."""
    bound = functools.partial(fun, *args, **kwargs)
    programs = []  # (program, the values bound into `fun` as the trace found them)

    @functools.wraps(fun)
    def replayed(*xs):
        if not all(isinstance(x, _LEAVES) or type(x) is np.ndarray and x.dtype.kind in "fc" for x in xs):
            return bound(*xs)
        if programs:
            program, bound_values = programs[0]
            try:
                return program(bound, *bound_values, *xs)
            except GuardError:
                programs.clear()
        value, tape = trace(bound, *xs)
        inputs = [v._op.val for v in tape.inputs]
        programs.append((compile_tape(tape), inputs[1:len(inputs) - len(xs)]))
        return value

    return replayed

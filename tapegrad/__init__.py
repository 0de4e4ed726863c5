"""tapegrad: reverse-mode automatic differentiation of plain NumPy code, on a tape you can read.

>>> import tapegrad
>>> tapegrad.grad(lambda a, b: a / (a + b * b), 2.0, 3.0)
(0.18181818181818182, (ZeroTangent(), 0.0743801652892562, -0.09917355371900827))

The names here are what most programs use: gradients, forward mode, checks, tangents,
errors, and `explain`/`draw` to see a gradient worked. The pieces live in their modules, to
read and to build with: the tape (`tapegrad.tape`: Tape, Variable, Input, Constant, Call),
contexts (`tapegrad.context.BaseContext`, `tapegrad.gradcontext.GradContext`), the sweep
(`tapegrad.sweep`: back, step_back, set_or_add_deriv), showing tapes (`tapegrad.show`),
tapes as programs (`tapegrad.program`), writing rules (`tapegrad.extend`), and traceable
replacements for scipy's functions (`tapegrad.scipy`).
"""
import importlib
import warnings

from .errors import (
    ComplexValueError,
    ConcreteValueError,
    EscapedTracerError,
    NoRuleError,
    RuleError,
    SeedError,
    StaleInputError,
    StaleViewError,
    TapegradError,
)
from .tangents import NO_TANGENT, ZERO, NoTangent, Tangent, ZeroTangent
from .registry import frule, nondifferentiable, rrule
from .context import primitive
from .tracing import trace
from .pytree import fill_zeros, update
from .grad import grad, gradient, pullback
from .dual import Dual
from .forward import jacobian, jvp
from .second_order import hessian, hvp
from .checks import check_grad, ngradient
from .program.guards import GuardError
from .program.compiled import compiled_grad
from .show import draw, explain, explain_formula
from . import rules  # noqa: F401  (registers the rules)
from . import literals, writes  # noqa: F401  (numpy's stand-ins for a trace, the traced writers)
from . import extend, optim, program, scipy, show  # noqa: F401  (tapegrad.extend.*, tapegrad.show.*, ... after `import tapegrad`)

__version__ = "0.1.0"

__all__ = [
    # gradients and forward mode
    "trace", "grad", "gradient", "pullback", "compiled_grad",
    "Dual", "jvp", "jacobian", "hessian", "hvp",
    "check_grad", "ngradient",
    # tangents and structures
    "ZeroTangent", "NoTangent", "ZERO", "NO_TANGENT", "Tangent", "fill_zeros", "update",
    # making functions differentiable (more in tapegrad.extend)
    "primitive", "rrule", "frule", "nondifferentiable",
    # errors
    "TapegradError", "NoRuleError", "RuleError", "SeedError", "EscapedTracerError",
    "ConcreteValueError", "StaleViewError", "GuardError", "ComplexValueError", "StaleInputError",
    # showing (more in tapegrad.show)
    "explain", "explain_formula", "draw",
    # subpackages: rule writing, scipy's functions, showing tapes, tapes as programs, optimizers
    "extend", "scipy", "show", "program", "optim",
]

#: names that lived here before 0.2, and the module that holds each now
MOVED = {
    **dict.fromkeys(["Tape", "Variable", "Input", "Constant", "Call"], "tapegrad.tape"),
    "BaseContext": "tapegrad.context",
    "GradContext": "tapegrad.gradcontext",
    **dict.fromkeys(["back", "step_back", "set_or_add_deriv"], "tapegrad.sweep"),
    **dict.fromkeys(["Thunk", "accum", "find_rrule"], "tapegrad.extend"),
    **dict.fromkeys(["format_tape", "explain_text", "to_dot", "to_svg", "render"], "tapegrad.show"),
    **dict.fromkeys(["to_source", "compile_tape", "simplify", "prune", "cse", "optimize"], "tapegrad.program"),
}


def __getattr__(name):
    home = MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")
    warnings.warn(f"tapegrad.{name} is now {home}.{name} (tapegrad keeps the names most programs use at "
                  f"its top level, and the tape-building and showing names in their modules): "
                  f"write `from {home} import {name}`", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)

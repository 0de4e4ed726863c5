"""tapegrad: reverse-mode automatic differentiation of plain NumPy code, on a tape you can read.

>>> import tapegrad
>>> tapegrad.grad(lambda a, b: a / (a + b * b), 2.0, 3.0)
(0.18181818181818182, (ZeroTangent(), 0.0743801652892562, -0.09917355371900827))

The names here are the user's API (gradients, forward mode, checks, structures, errors) and
the teaching API (tapes, contexts, the sweep's pieces, printing, programs). Writing rules
takes `tapegrad.extend`; `tapegrad.scipy` holds traceable replacements for scipy functions.
"""
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
from .tape import Call, Constant, Input, Tape, Variable
from .tangents import NO_TANGENT, ZERO, NoTangent, Tangent, Thunk, ZeroTangent, accum
from .registry import find_rrule, frule, nondifferentiable, rrule
from .context import BaseContext, primitive
from .context import trace
from .pytree import fill_zeros, update
from .sweep import back, set_or_add_deriv, step_back
from .grad import GradContext, grad, gradient, pullback
from .forward import Dual, hessian, hvp, jacobian, jvp
from .checks import check_grad, ngradient
from .program.guards import GuardError
from .program.codegen import compile_tape, to_source
from .program.passes import cse, optimize, prune, simplify
from .program.compiled import compiled_grad
from .show.printing import format_tape
from .show.explain import explain, explain_text
from .show.formulas import explain_formula
from .show.drawing import draw, render, to_dot
from .show.svg import to_svg
from . import rules  # noqa: F401  (registers the rules)
from . import extend, literals, scipy, writes  # noqa: F401  (tapegrad.extend.*, tapegrad.scipy.* after `import tapegrad`)

__version__ = "0.1.0"

__all__ = [
    # gradients and forward mode
    "trace", "grad", "gradient", "pullback", "compiled_grad",
    "Dual", "jvp", "jacobian", "hessian", "hvp",
    "check_grad", "ngradient",
    # tangents and structures
    "ZeroTangent", "NoTangent", "ZERO", "NO_TANGENT", "Tangent", "Thunk", "accum",
    "fill_zeros", "update",
    # making functions differentiable (more in tapegrad.extend)
    "primitive", "rrule", "frule", "nondifferentiable", "find_rrule",
    # errors
    "TapegradError", "NoRuleError", "RuleError", "SeedError", "EscapedTracerError",
    "ConcreteValueError", "StaleViewError", "GuardError", "ComplexValueError", "StaleInputError",
    # the tape, the contexts and the sweep, to read and to build with
    "Tape", "Variable", "Input", "Constant", "Call",
    "BaseContext", "GradContext", "back", "step_back", "set_or_add_deriv",
    # showing and rewriting tapes
    "format_tape", "explain", "explain_text", "explain_formula", "to_dot", "to_svg", "render", "draw",
    "to_source", "compile_tape", "simplify", "prune", "cse", "optimize",
    # subpackages
    "extend", "scipy",
]

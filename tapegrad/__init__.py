"""tapegrad: reverse-mode automatic differentiation of plain NumPy code, on a tape you can read.

>>> import tapegrad
>>> tapegrad.grad(lambda a, b: a / (a + b * b), 2.0, 3.0)
(0.18181818181818182, (ZeroTangent(), 0.0743801652892562, -0.09917355371900827))
"""
from .tape import Call, Constant, Input, Op, Tape, Variable
from .tangents import NO_TANGENT, ZERO, NoTangent, ZeroTangent, accum
from .errors import (
    ConcreteValueError,
    EscapedTracerError,
    NoRuleError,
    RuleError,
    SeedError,
    StaleViewError,
    TapegradError,
)
from .registry import (
    Thunk,
    find_rrule,
    is_nondifferentiable,
    nondifferentiable,
    register_rrule,
    registered_rules,
    frule,
    rrule,
    unbroadcast,
)
from .context import BaseContext, primitive
from .tracer import Tracer, trace
from .grad import (GradContext, Pullback, back, back_values, grad, gradient, pullback, set_or_add_deriv,
                   step_back)
from .show.printing import format_tape
from .tangents import Tangent
from .pytree import fill_zeros, update
from .program.codegen import compile_tape, to_source
from .program.guards import GuardError
from .program.passes import cse, optimize, prune, simplify
from .program.compiled import CompiledGrad, compiled_grad
from .forward import Dual, hessian, hvp, jacobian, jvp
from .show.explain import explain, explain_text
from .show.drawing import draw, render, to_dot
from .checks import check_grad, ngradient
from . import rules  # noqa: F401  (registers the rules)

__version__ = "0.1.0"

__all__ = [
    "Tape", "Variable", "Op", "Input", "Constant", "Call",
    "ZeroTangent", "NoTangent", "ZERO", "NO_TANGENT", "accum",
    "TapegradError", "NoRuleError", "SeedError", "EscapedTracerError", "ConcreteValueError",
    "StaleViewError", "RuleError",
    "rrule", "register_rrule", "find_rrule", "nondifferentiable", "is_nondifferentiable",
    "registered_rules", "unbroadcast", "Thunk",
    "BaseContext", "GradContext", "primitive", "Tracer", "trace",
    "grad", "gradient", "pullback", "Pullback", "back", "back_values", "step_back", "set_or_add_deriv",
    "format_tape", "check_grad", "ngradient", "Tangent", "fill_zeros", "update",
    "to_source", "compile_tape", "GuardError", "simplify", "prune", "cse", "optimize",
    "compiled_grad", "CompiledGrad", "Dual", "frule", "jvp", "jacobian", "hessian", "hvp",
    "explain", "to_dot", "render", "draw",
]

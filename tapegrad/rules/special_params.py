"""The tangent of a parameter whose derivative is not computed (np.gradient's spacing, np.cov's
fweights).

It is a `Thunk` that raises when read: the sweep reads it only when the parameter is being
differentiated, so a constant parameter costs nothing, and a traced one stops the gradient
with an error instead of a silent zero.
"""
from __future__ import annotations

from ..errors import NoRuleError, qualified_name, type_str, user_location
from ..tangents import Thunk


def no_derivative(fn, name, value, why="it has no closed form"):
    """A tangent for the parameter `name` of `fn` that raises `NoRuleError` if it is read.

    A list or tuple gets one such Thunk per entry: the sweep reads the tangent of a list
    argument to look for traced entries in it, and only those entries' Thunks are evaluated."""
    if type(value) is list or type(value) is tuple:
        return type(value)(no_derivative(fn, name, v, why) for v in value)

    def refuse():
        raise NoRuleError(
            f"tapegrad has no derivative of {qualified_name(fn)} with respect to its argument "
            f"{name} ({type_str(value)}) at {user_location()}: {why}. Keep {name} a constant of "
            f"the differentiated function (compute it outside, or pass it as a plain number; a "
            f"value a closure captures is differentiated too: pass wrt= to grad, or give it as a "
            f"default argument), or register a rule of your own with "
            f"@tapegrad.rrule({qualified_name(fn)})"
        )

    return Thunk(refuse)

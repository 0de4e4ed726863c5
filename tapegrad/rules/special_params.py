"""The tangent of a parameter whose derivative is not computed (np.gradient's spacing).

It is a `Thunk` that raises when read: the sweep reads it only when the parameter is being
differentiated, so a constant parameter costs nothing, and a traced one stops the gradient
with an error instead of a silent zero.
"""
from __future__ import annotations

from ..errors import NoRuleError, qualified_name, type_str, user_location
from ..tangents import Thunk


def no_derivative(fn, name, value):
    """A tangent for the parameter `name` of `fn` that raises `NoRuleError` if it is read."""

    def refuse():
        raise NoRuleError(
            f"tapegrad has no derivative of {qualified_name(fn)} with respect to its argument "
            f"{name} ({type_str(value)}) at {user_location()}: it has no closed form. Keep {name} "
            f"a constant of the differentiated function (compute it outside, or pass it as a plain "
            f"number), or register a rule of your own with @tapegrad.rrule({qualified_name(fn)})"
        )

    return Thunk(refuse)

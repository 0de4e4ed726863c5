"""autograd's ``tracer``: `getval` (the plain value a traced value stands for, which carries
no derivative), `isbox`, and the primitive decorators.

Examples
--------
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.tracer import getval, isbox
>>> grad(lambda x: x * getval(x) if isbox(x) else x)(3.0)  # getval(x) is a constant: d(3x)/dx
3.0
"""
from ..arraylike import ArrayLike
from ..second_order import inner_value
from .extend import Box, notrace_primitive, primitive  # noqa: F401

__all__ = ["getval", "isbox", "primitive", "notrace_primitive", "Box"]


def getval(x):
    """The plain value inside a traced or dual value (it carries no derivative)."""
    return inner_value(x)


def isbox(x):
    """True for a traced or dual value."""
    return isinstance(x, ArrayLike)

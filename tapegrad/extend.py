"""What a rule author needs, in one place.

A reverse rule is a function ``rule(*args, **kwargs) -> (y, pullback)`` registered with
``@rrule(fn)``; ``pullback(dy)`` returns the function's own tangent (`NO_TANGENT`) first,
then one tangent per positional argument. `unbroadcast` sums a tangent back to its
argument's shape, `Thunk` defers a tangent that may not be read, `stand_in` keeps only the
shape of an argument the pullback needs no more of. A forward rule (``@frule(fn)``) is
optional: forward mode derives one from the reverse rule. `primitive` makes a function of
your own, or of another library, one op of the tape. `complex_rules` declares rules that are
right for complex values too (autograd's convention); a gradient refuses a complex value
reaching any other rule. `register_structure` makes a container type of your own walked as
tapegrad walks tuples and dicts: in arguments, gradients, zeros, `update` and checks.

All of it can be said in the rule's decorator, as tapegrad's own rules say it:
``@rrule(fn, formula=partials(...), forward=fn_frule, complex=True)`` (`partials` or `whole`
for what `tapegrad.explain` prints); `declaration(fn)` reads back what the registry knows of
`fn`.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.extend import NO_TANGENT, primitive, rrule, unbroadcast
>>> @primitive
... def scaled_sum(x, s):
...     return np.sum(x) * s
>>> @rrule(scaled_sum)
... def scaled_sum_rrule(x, s):
...     total = np.sum(x)
...     def scaled_sum_pullback(dy):
...         return NO_TANGENT, unbroadcast(dy * s * np.ones_like(x), x), dy * total
...     return total * s, scaled_sum_pullback
>>> tapegrad.gradient(scaled_sum, np.array([1.0, 2.0]), 3.0)
(array([3., 3.]), 3.0)
"""
from .context import BaseContext, primitive
from .registry import (
    complex_rules,
    declaration,
    find_rrule,
    frule,
    is_nondifferentiable,
    nondifferentiable,
    partials,
    register_rrule,
    registered_rules,
    rrule,
    stand_in,
    whole,
)
from .broadcasting import unbroadcast
from .structures import register_structure
from .tangents import NO_TANGENT, ZERO, Tangent, Thunk, accum

__all__ = [
    "rrule", "frule", "register_rrule", "find_rrule", "registered_rules",
    "nondifferentiable", "is_nondifferentiable", "primitive", "BaseContext",
    "unbroadcast", "stand_in", "Thunk", "ZERO", "NO_TANGENT", "Tangent", "accum",
    "complex_rules", "partials", "whole", "declaration", "register_structure",
]

"""The rrule registry: the only module-level state of tapegrad.

A rule is a function ``rule(*args, **kwargs) -> (y, pullback)`` registered for one primitive;
``pullback(dy) -> (dfn, *dargs)`` returns the primitive's own tangent first, then one tangent
per positional argument. A tangent that costs real work and may not be needed (the tangent of
an argument that is a constant) can be wrapped in `Thunk`: the sweep evaluates only the ones it
reads.

Non-differentiable functions (floor, sign, comparisons, ...) live in one table: they are
recorded on the tape, and a derivative reaching them stops there, because it is zero almost
everywhere.
"""
from __future__ import annotations

import inspect

import numpy as np

from .tangents import NO_TANGENT, ZERO

__all__ = [
    "rrule",
    "frule",
    "register_rrule",
    "find_rrule",
    "nondifferentiable",
    "is_nondifferentiable",
    "registered_rules",
    "complex_rules",
    "unbroadcast",
    "stand_in",
]

# The tables. Other modules read them (the contexts look a function up on every call) and
# change them only through the functions below.
#: fn -> its reverse rule
RULES: dict = {}
#: fn -> its forward rule, where one is written (forward mode derives the others)
FRULES: dict = {}
#: the non-differentiable functions: recorded, and derivatives stop at them
NONDIFF: set = set()
#: functions whose rule takes the keyword ``needs`` (see `rrule`)
NEEDS: set = set()
#: functions whose rules are written and tested for complex values (autograd's convention, see
#: the README): in a gradient, a complex value reaching any other rule raises ComplexValueError
COMPLEX: set = set()


def frule(fn):
    """Register a forward rule for `fn`: ``@frule(fn) def fn_frule(dargs, *args, **kwargs) -> (y, dy)``.

    `dargs` holds one variation per positional argument (`ZERO` for a constant); the rule
    returns the value and its variation. Without one, forward mode derives the rule from
    `fn`'s reverse rule.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> @tapegrad.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> @tapegrad.frule(cube)
    ... def cube_frule(dargs, x):
    ...     (dx,) = dargs
    ...     return cube(x), 3 * x ** 2 * dx
    >>> tapegrad.jvp(cube, (2.0,), (1.0,))
    (8.0, 12.0)
    """

    def register(rule):
        FRULES[fn] = rule
        NONDIFF.discard(fn)
        return rule

    return register


def complex_rules(*fns):
    """Declare that the rules of `fns` are right for complex values too, under autograd's
    convention (a cotangent is the conjugate of the Wirtinger derivative ∂f/∂z̄ times 2, so the
    gradient of ``|z|²`` at ``1+2j`` is ``2-4j``). Until then a gradient refuses a complex value
    reaching them, rather than risk a silently wrong derivative.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.registry import COMPLEX
    >>> np.fft.fft in COMPLEX and np.clip not in COMPLEX
    True
    """
    COMPLEX.update(fns)
    return fns


def register_rrule(fn, rule):
    """Register `rule` as the reverse rule of `fn` (replacing any earlier one) and return it."""
    RULES[fn] = rule
    NONDIFF.discard(fn)
    if _takes_needs(rule):
        NEEDS.add(fn)
    else:
        NEEDS.discard(fn)
    return rule


def _takes_needs(rule) -> bool:
    try:
        p = inspect.signature(rule).parameters.get("needs")
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is None


def find_rrule(fn):
    """The rule registered for `fn`, or None."""
    return RULES.get(fn)


def rrule(fn, *args, **kwargs):
    """Register a reverse rule for `fn`, or apply the one registered.

    ``@rrule(fn)`` (no further arguments) is a decorator that registers the decorated function
    as the rule of `fn`. ``rrule(fn, *args, **kwargs)`` calls that rule and returns
    ``(y, pullback)``, or None when `fn` has no rule. A gradient tape records each primitive as
    such a call.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> def cube(x):
    ...     return x ** 3
    >>> @tapegrad.rrule(cube)
    ... def cube_rrule(x):
    ...     def cube_pullback(dy):
    ...         return tapegrad.NO_TANGENT, dy * 3 * x ** 2
    ...     return cube(x), cube_pullback
    >>> y, back = tapegrad.rrule(cube, 2.0)
    >>> y, back(1.0)
    (8.0, (NoTangent(), 12.0))

    A rule may take a parameter ``needs=None`` after its positional arguments (keyword-only,
    or an ordinary parameter: CPython calls a function with keyword-only parameters a little
    more slowly). When some of the arguments are constants of the tape (and not all of them
    are numbers, which cost nothing to keep), a gradient passes ``needs=``, one boolean per
    positional argument: False where the argument is a constant,
    so its tangent will not be read. The rule may return `NO_TANGENT` for it and, above all,
    keep less: ``x * c`` with a constant ``c`` needs ``c`` to differentiate with respect to
    ``x`` but not ``x`` itself, so a large ``x`` can go as soon as the user's code drops it.
    ``needs=None`` (a direct call) means every tangent may be read.
    """
    if not args and not kwargs:

        def register(rule):
            return register_rrule(fn, rule)

        return register
    rule = RULES.get(fn)
    if rule is None:
        return None
    return rule(*args, **kwargs)


def nondifferentiable(*fns):
    """Mark functions as non-differentiable: recorded on tapes, derivatives stop at them."""
    for fn in fns:
        RULES.pop(fn, None)
        FRULES.pop(fn, None)
        NEEDS.discard(fn)
        NONDIFF.add(fn)
    return fns[0] if len(fns) == 1 else fns


def is_nondifferentiable(fn) -> bool:
    return fn in NONDIFF


def registered_rules() -> dict:
    """A copy of the registry: ``{fn: rule}``, plus the non-differentiable functions as ``{fn: None}``."""
    out = dict(RULES)
    out.update(dict.fromkeys(NONDIFF))
    return out


#: arrays of at least this many bytes are worth replacing by a stand-in (see `stand_in`);
#: the test suite sets it to 0, so that every pullback there runs on stand-ins
STAND_IN_BYTES = 1 << 14

#: the dtype of float64 arrays: numpy's built-in dtypes are single objects, so on the hot paths
#: an identity test (``y.dtype is FLOAT64``) tells the common, real, non-integral case at once
FLOAT64 = np.dtype(np.float64)

# what a stand-in's elements read as: all bits set, a NaN for floats (-1 for integers), so
# that a pullback reading the elements it should not gives a loud NaN gradient, not zeros
_NAN_BYTES = b"\xff" * 64


def stand_in(x):
    """`x`, or, for a large numeric array, a stand-in of its shape and dtype that holds no memory.

    A rule's pullback often needs an argument only for its shape and dtype (to undo a
    broadcast, to spread a sum back). Keeping ``stand_in(x)`` instead of `x` lets the array
    be freed as soon as the user's code drops it, instead of when the sweep reaches the rule:
    that is what keeps the memory of an eager gradient near the hand-written one's. The
    stand-in is a read-only ndarray whose strides are all 0; its elements are NaN (not
    meant to be read); making one costs more than keeping a small array, so small arrays are
    kept as they are.
    """
    if type(x) is np.ndarray and x.nbytes >= STAND_IN_BYTES and x.dtype.kind in "biufc":
        return np.ndarray(x.shape, x.dtype, _NAN_BYTES, 0, (0,) * x.ndim)
    return x


_NUMBERS = (float, int, complex, bool)


def _shape(x):
    if type(x) in _NUMBERS:  # the common scalar case, without an attribute lookup that fails
        return ()
    s = getattr(x, "shape", None)
    return () if s is None else s


def _sum(dx, axes, keepdims):
    """``np.sum(dx, axis=axes, keepdims=keepdims)``; of an ndarray, the ufunc reduction np.sum
    itself calls, without its Python layers (the bias's tangent in every dense layer)."""
    if type(dx) is np.ndarray:
        return np.add.reduce(dx, axis=axes, keepdims=keepdims)
    # a traced cotangent (a higher derivative): the call a compiled gradient prints
    return np.sum(dx, axis=axes, keepdims=True) if keepdims else np.sum(dx, axis=axes)


def unbroadcast(dx, x):
    """Sum `dx` down to the shape of `x`, undoing numpy broadcasting.

    The sum runs over the leading axes that broadcasting added and over the axes where `x`
    has length 1. When the shapes already agree nothing is done.
    """
    tx, td = type(x), type(dx)
    if td is tx and (tx is float or tx is np.float64 or tx is np.ndarray and dx.shape == x.shape):
        return dx  # the common cases: two numbers, or two arrays of one shape
    if dx is ZERO or dx is NO_TANGENT:
        return dx
    if tx is float and td is np.float64:
        return dx  # both scalars: nothing was broadcast
    xs = x.shape if tx is np.ndarray else _shape(x)
    ds = dx.shape if td is np.ndarray else _shape(dx)
    if ds == xs:
        return dx
    lead = len(ds) - len(xs)
    if lead > 0:
        dx = _sum(dx, tuple(range(lead)), False)
        ds = ds[lead:]
    # (no axis of length 1, as a bias has none: nothing more to sum, without the generator)
    axes = tuple(i for i, n in enumerate(xs) if n == 1 and ds[i] != 1) if 1 in xs else ()
    if axes:
        dx = _sum(dx, axes, True)
    if not xs:
        # a Python or numpy scalar gets a scalar, not a 0-d array
        dx = dx[()] if isinstance(dx, np.ndarray) else dx
    return dx

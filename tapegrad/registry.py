"""The registry: what tapegrad knows of each primitive, declared in one place.

A rule is a function ``rule(*args, **kwargs) -> (y, pullback)`` registered for one primitive;
``pullback(dy) -> (dfn, *dargs)`` returns the primitive's own tangent first, then one tangent
per positional argument. A tangent that costs real work and may not be needed (the tangent of
an argument that is a constant) can be wrapped in `Thunk`: the sweep evaluates only the ones it
reads.

One declaration per primitive
-----------------------------
Everything tapegrad knows of a primitive is said where its rule is written, in the family's
rules file, in the rule's decorator::

    @rrule(np.divide, formula=partials("1/{a[1]}", "(-{a[0]}/{a[1]}²)"), complex=True)
    def divide_rrule(x, y): ...

    @frule(np.divide)                       # its forward rule, where one is written
    def divide_frule(dargs, x, y): ...

- ``formula=``: what `tapegrad.explain` prints for each argument's tangent (`partials` for an
  elementwise function, `whole` for the rest; the placeholders are in
  `tapegrad.show.formulas`);
- ``forward=`` (or ``@frule(fn)`` below the rule): the forward rule; without one forward
  mode derives it from the reverse rule ("derived" in docs/rules.md);
- ``complex=True``: the rule is written and tested for complex values (autograd's
  convention); a gradient refuses a complex value reaching any other rule;
- ``view=True``: numpy's result may share memory with the first argument (a write into one
  reaches the other, `tapegrad.views`); ``view="read-only"``: numpy's view is read-only;
- ``keep_whole=True``: a tuple result stays one traced value (not one per element).

The rule so declared is the reference: the derivative as the math says it, short. Where a
faster form is measured worth it (benchmarks/instructions.py), ``@fast_path(fn)`` registers it
beside the reference, by name: it takes the reference's place in `RULES` (the hot path still
reads one dict), the reference stays in `REFERENCES`, and the table tests check the one against
the other on the rule tables (tests/rules/test_elementwise.py).

A function with no rule is declared with `declare` (``writes=True``: it writes into its first
argument; ``traced_by=handler``: a call that meets a traced value goes to `handler`, as in
`tapegrad.writes`) or with `nondifferentiable` (recorded, and a derivative stops there;
``complex=True`` where that holds for complex values too).

Why the declarations write tables, and not a table of records: the contexts ask one question
per recorded call (``RULES.get(fn)``, ``fn in NEEDS``, ``fn in COMPLEX``), so each question
keeps its own plain dict or set, the fastest lookup Python has; the declaration is the one
place that writes them, and `declaration(fn)` reads one primitive's facts back as a
`Primitive`. A record table with derived views would be a second copy to keep in step with
the first (the tests, and users, add and remove entries in the tables directly).

Why the formulas live with the rules, and not in one table in `tapegrad.show` (where they
were, so that one table kept the notation the same across families and the rule modules
imported nothing of `show`): a formula is the rule's math in words, and it changes when the
rule does, in the same diff. The notation stays one because every formula is a template of
the same few placeholders, written out for every rule by tests/show/test_formulas.py (and a
user's, by `explain_formula`, as it is declared); the rule modules still import nothing of
`show`: the registry holds the templates, the printing is `show`'s.

Which primitive is running, for numpy's warnings at the user's line ("divide by zero
encountered in the derivative of log"), is known from the rules themselves: each rule's code,
and the code of the pullbacks written inside it, finds its primitive (`tapegrad.attribution`),
with no name parsed and nothing added to the per-call path (a context variable set around
each rule and pullback would cost every primitive).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
from dataclasses import dataclass

import numpy as np

from . import attribution, errors
from .errors import qualified_name

__all__ = [
    "rrule",
    "frule",
    "fast_path",
    "declare",
    "register_rrule",
    "find_rrule",
    "nondifferentiable",
    "is_nondifferentiable",
    "registered_rules",
    "complex_rules",
    "declaration",
    "Primitive",
    "Formula",
    "partials",
    "whole",
    "stand_in",
    "TABLES",
    "declarations_undone",
]

# The tables, one per question a context asks. Other modules read them (the contexts look a
# function up on every call) and change them only through the declarations below.
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
#: fn -> its `Formula`: what explain prints for each argument's tangent
FORMULAS: dict = {}
#: functions whose numpy result may share memory with their first argument (the split family
#: returns a list of such views)
VIEWS: set = set()
#: views numpy makes read-only, -> the name a refused write gives (a write raises numpy's error)
READ_ONLY: dict = {}
#: functions that write into their first argument (np.copyto, np.put, ...)
WRITES: set = set()
#: fn -> the function a call of `fn` that meets a traced value goes to (numpy's writers, and
#: the functions that call the user's functions, which are traced through)
TRACED_BY: dict = {}
#: functions whose tuple result stays one traced value (the packed result of a traced function)
KEEP_WHOLE: set = set()
#: fn -> its reference rule, where a fast path stands in its place in RULES (see `fast_path`)
REFERENCES: dict = {}
#: every table a declaration writes
TABLES = (RULES, FRULES, NONDIFF, NEEDS, COMPLEX, FORMULAS, VIEWS, READ_ONLY, WRITES, TRACED_BY,
          KEEP_WHOLE, REFERENCES)
#: ``(table, entries)`` each rule family declared on scipy's import (rules.family): kept by any undo
KEPT: list = []


@contextlib.contextmanager
def declarations_undone():
    """Within the block, declare freely: every table is put back as it was when the block ends
    (what a test of a declaration needs, so that it leaves nothing for the next), except for
    the rule families that scipy's imports inside the block registered."""
    saved, kept = [(table, table.copy()) for table in TABLES], len(KEPT)
    try:
        yield
    finally:
        for table, before in saved:
            table.clear()
            table.update(before)
        for table, after in KEPT[kept:]:
            table.update(after)


class Formula:
    """The templates of one function: ``kind`` is "partial" (times ȳ) or "whole"."""

    __slots__ = ("kind", "templates")

    def __init__(self, kind, templates):
        self.kind = kind
        self.templates = templates

    def template(self, i, names, values, kwargs):
        """The template of argument `i`, or None when it gets no tangent."""
        ts = self.templates(names, values, kwargs) if callable(self.templates) else self.templates
        if not ts:
            return None
        return ts[i] if i < len(ts) else ts[-1]

    def __repr__(self):
        return f"{'partials' if self.kind == 'partial' else 'whole'}{tuple(self.templates) if not callable(self.templates) else (self.templates,)}"


def _templates(templates):
    return templates[0] if len(templates) == 1 and callable(templates[0]) else templates


def partials(*templates):
    """The formula of an elementwise function: the partial derivative ∂y/∂(argument i), one
    template per argument, which explain multiplies by ȳ (``"1"`` prints as ȳ alone). A single
    function ``(names, values, kwargs) -> [template, ...]`` may stand for them."""
    return Formula("partial", _templates(templates))


def whole(*templates):
    """The formula of any other function: the whole tangent of each argument, written with
    ``{dy}`` (or a single function ``(names, values, kwargs) -> [template, ...]``)."""
    return Formula("whole", _templates(templates))


@dataclass(frozen=True)
class Primitive:
    """What tapegrad knows of one function, as its declaration says (`declaration`)."""

    fn: object
    rule: object = None
    fast_path: object = None
    forward: object = "derived"
    formula: Formula = None
    complex: bool = False
    view: object = False
    writes: bool = False
    traced_by: object = None
    keep_whole: bool = False
    nondifferentiable: bool = False


def declaration(fn):
    """What the registry knows of `fn`, in one record.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.registry import declaration
    >>> d = declaration(np.diagonal)
    >>> d.view, d.complex, d.formula.kind, d.forward.__name__
    ('read-only', True, 'whole', 'diagonal_frule')
    """
    fast = RULES.get(fn) if fn in REFERENCES else None
    return Primitive(fn, REFERENCES.get(fn, RULES.get(fn)), fast, FRULES.get(fn, "derived"), FORMULAS.get(fn),
                     fn in COMPLEX, "read-only" if fn in READ_ONLY else fn in VIEWS, fn in WRITES,
                     TRACED_BY.get(fn), fn in KEEP_WHOLE, fn in NONDIFF)


#: the facts `rrule` and `declare` take, as keywords
_FACTS = frozenset(("formula", "forward", "complex", "view", "keep_whole", "writes", "traced_by"))


def declare(fn, *, formula=None, forward=None, complex=None, view=None, keep_whole=None, writes=None,
            traced_by=None):
    """Declare what tapegrad knows of `fn` besides its rule (see the module docstring); a fact
    not given is left as it was. Returns `fn`."""
    if formula is not None:
        if not isinstance(formula, Formula):
            raise TypeError(f"formula= of {qualified_name(fn)} is partials(...) or whole(...), not "
                            f"{type(formula).__name__}")
        FORMULAS[fn] = formula
    if forward is not None:
        FRULES[fn] = forward
        NONDIFF.discard(fn)
    if complex is not None:
        (COMPLEX.add if complex else COMPLEX.discard)(fn)
    if view is not None:
        if view not in (True, False, "read-only"):
            raise ValueError(f"view= of {qualified_name(fn)} is True, False or 'read-only', not {view!r}")
        (VIEWS.add if view else VIEWS.discard)(fn)
        if view == "read-only":
            READ_ONLY[fn] = qualified_name(fn).replace("numpy.", "np.", 1)
        else:
            READ_ONLY.pop(fn, None)
    if keep_whole is not None:
        (KEEP_WHOLE.add if keep_whole else KEEP_WHOLE.discard)(fn)
    if writes is not None:
        (WRITES.add if writes else WRITES.discard)(fn)
    if traced_by is not None:
        TRACED_BY[fn] = traced_by
    return fn


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
        declare(fn, forward=rule)
        return rule

    return register


def complex_rules(*fns):
    """Declare that the rules of `fns` are right for complex values too, under autograd's
    convention (a cotangent is the conjugate of the Wirtinger derivative ∂f/∂z̄ times 2, so the
    gradient of ``|z|²`` at ``1+2j`` is ``2-4j``). Until then a gradient refuses a complex value
    reaching them, rather than risk a silently wrong derivative. (Inside tapegrad, a rule says
    so in its declaration: ``@rrule(fn, complex=True)``.)

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.registry import COMPLEX
    >>> np.fft.fft in COMPLEX and np.clip not in COMPLEX
    True
    """
    for fn in fns:
        declare(fn, complex=True)
    return fns


def fast_path(fn):
    """Register a fast path for the rule of `fn`: ``@fast_path(fn) def fn_fast(*args) -> (y, pullback)``.

    The rule declared with ``@rrule(fn, ...)`` is the reference: the derivative as the math
    says it. A fast path gives the same results for the calls met most, in fewer steps (it
    may take ``needs=``, see `rrule`); it takes the reference's place in `RULES`, and the
    reference stays in `REFERENCES`, for the table tests to check the fast path against and
    for a reader to read. Registering another rule for `fn` drops both.
    """

    def register(rule):
        reference = REFERENCES.get(fn) or RULES[fn]
        register_rrule(fn, rule)
        REFERENCES[fn] = reference
        return rule

    return register


def register_rrule(fn, rule):
    """Register `rule` as the reverse rule of `fn` (replacing any earlier one, and a fast path
    with its reference) and return it."""
    RULES[fn] = rule
    REFERENCES.pop(fn, None)
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

    ``@rrule(fn)`` (no positional arguments) is a decorator that registers the decorated
    function as the rule of `fn`; it takes the declaration's keywords too (``formula=``,
    ``forward=``, ``complex=``, ``view=``, ``keep_whole=``: see the module docstring).
    ``rrule(fn, *args, **kwargs)`` calls that rule and returns ``(y, pullback)``, or None when
    `fn` has no rule. A gradient tape records each primitive as such a call.

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
    if not args and (not kwargs or kwargs.keys() <= _FACTS):
        # (a rule applied to no positional argument would have nothing to differentiate)
        if kwargs:
            declare(fn, **kwargs)

        def register(rule):
            return register_rrule(fn, rule)

        return register
    rule = RULES.get(fn)
    if rule is None:
        return None
    return rule(*args, **kwargs)


def nondifferentiable(*fns, complex=False):
    """Mark functions as non-differentiable: recorded on tapes, derivatives stop at them.

    ``complex=True``: complex values may pass through them too (their zero derivative holds
    for complex values as for real ones)."""
    for fn in fns:
        RULES.pop(fn, None)
        FRULES.pop(fn, None)
        NEEDS.discard(fn)
        NONDIFF.add(fn)
        if complex:
            COMPLEX.add(fn)
    return fns[0] if len(fns) == 1 else fns


def is_nondifferentiable(fn) -> bool:
    return fn in NONDIFF


def registered_rules() -> dict:
    """A copy of the registry: ``{fn: rule}``, plus the non-differentiable functions as ``{fn: None}``."""
    out = dict(RULES)
    out.update(dict.fromkeys(NONDIFF))
    return out


# numpy's warnings inside a rule name its primitive (`tapegrad.attribution`), from these rules
errors.running_primitive = functools.partial(attribution.running_primitive, RULES, FRULES)


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

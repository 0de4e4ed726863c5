"""The formulas `explain` prints: how the tangent of each argument is made from ȳ.

Each rule of tapegrad declares its formula where it is written, in its family's rules file
(``@rrule(np.sin, formula=partials("cos({a[0]})"))``, see `tapegrad.registry`), so that a
change to a rule changes its teaching text in the same place; this module keeps what makes the
notation one across families: the placeholders a template may use, the check that refuses any
other as a formula is declared (`explain_formula`, for a rule of the user's own), and the line
to add for a rule that has none (``tests/show/test_formulas.py`` fails, naming it).

Two kinds of formula:

- `partials` (elementwise functions): the partial derivative of the result by each argument,
  ``ȳ · ∂y/∂x``; a partial ``"1"`` prints as ``ȳ`` alone. Where an argument was broadcast in
  the forward pass, explain adds the sum that undoes it ("summed over axis 0").
- `whole`: the whole tangent, for everything else (``d%5 · %3ᵀ`` for a matrix product).

A template may use ``{dy}`` (the result's adjoint, ``d%5``), ``{y}`` (the result, ``%5``),
``{a[i]}`` (the i-th argument's name or value), ``{ix[i]}`` (the i-th argument written as an
index, ``1:3, 0``) and ``{over}`` (the axes a reduction ran over: ``axis 1`` or ``every
axis``). ``None`` stands for an argument that gets no tangent; an argument past the last
template (``*args``) uses the last one. A formula may also be a function
``(names, values, kwargs) -> [template, ...]`` when the text depends on the values.
"""
from __future__ import annotations

import inspect
import re
import string

from ..errors import qualified_name, short_name, user_location
from ..registry import FORMULAS, RULES, Formula, declare, partials, whole

__all__ = ["FORMULAS", "Formula", "explain_formula", "partials", "whole", "missing_formula_lines"]


def explain_formula(fn, *templates, elementwise=False):
    """Teach `explain` the formula of your own rule for `fn`, one template per argument.

    With ``elementwise=True`` each template is the partial derivative ∂y/∂x (explain prints
    ``ȳ · partial``); otherwise it is the whole tangent, written with ``{dy}``. See the
    module docstring of `tapegrad.show.formulas` for the placeholders. (tapegrad's own rules
    declare theirs with the rule: ``@rrule(fn, formula=partials(...))``.)

    Examples
    --------
    >>> import tapegrad
    >>> @tapegrad.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> @tapegrad.rrule(cube)
    ... def cube_rrule(x):
    ...     return cube(x), lambda dy: (tapegrad.NO_TANGENT, dy * 3 * x ** 2)
    >>> tapegrad.explain_formula(cube, "3·{a[0]}²", elementwise=True)
    >>> tapegrad.explain(cube, 2.0)
    Forward
      %2 = x = 2
      %3 = cube(%2) = 8
    Backward: d%k = ∂result/∂%k, from the seed back to the inputs
      d%3 = 1   (seed)
      d%2 = d%3 · 3·%2² = 12
    Gradient: ∂f/∂x = d%2 = 12
    """
    if not (len(templates) == 1 and callable(templates[0])):
        for template in templates:
            _check_template(fn, template, elementwise)
    declare(fn, formula=(partials if elementwise else whole)(*templates))


#: the placeholders a template may use, as explain fills them
_PLACEHOLDERS = {"dy": "the result's adjoint", "y": "the result", "a": "the i-th argument",
                 "ix": "the i-th argument as an index", "over": "the axes a reduction ran over"}
_ALLOWED = "{dy}, {y}, {a[i]}, {ix[i]} and {over}"


def _check_template(fn, template, elementwise, whole=None):
    """Refuse, as `explain_formula` registers it, a template that `explain` could not fill: one
    that is not a string, is not a format string, or names a placeholder explain does not give
    (``{b[0]}``, ``{0}``) or an argument past the last `fn` takes."""
    call = f"tapegrad.explain_formula({qualified_name(fn)}, ...) at {user_location()}"
    whole = template if whole is None else whole  # (a nested field's template is part of it)
    if template is None:
        return  # an argument that gets no tangent
    if not isinstance(template, str):
        raise TypeError(f"{call}: a template is a string, or None for an argument with no tangent "
                        f"(or a single function (names, values, kwargs) -> templates); got "
                        f"{type(template).__name__} {template!r}")
    try:
        fields = [(field, spec) for _, field, spec, _ in string.Formatter().parse(template) if field is not None]
    except ValueError as exc:
        raise ValueError(f"{call}: the template {whole!r} is not a format string ({exc}); write a "
                         f"brace meant as text as {{{{ or }}}}") from None
    count = _positional_count(fn)
    for field, spec in fields:
        name = re.match(r"[^.\[]*", field).group()
        rest = field[len(name):]
        index = re.fullmatch(r"\[(\d+)\]", rest)
        if name not in _PLACEHOLDERS or (name in ("a", "ix")) != (index is not None) or (rest and not index):
            hint = (f"; {{{name}}} needs an argument's position, {{{name}[0]}}" if name in ("a", "ix") and not rest
                    else "")
            raise ValueError(
                f"{call}: the placeholder {{{field}}} in the template {whole!r} names nothing explain "
                f"fills in{hint}. A template may use {_ALLOWED} ({', '.join(f'{k}: {v}' for k, v in _PLACEHOLDERS.items())})"
                + ("; an elementwise template is the partial derivative ∂y/∂x, which explain multiplies by ȳ"
                   if elementwise else "")
            )
        if index is not None and count is not None and int(index.group(1)) >= count:
            raise ValueError(
                f"{call}: the placeholder {{{field}}} in the template {whole!r} names argument "
                f"{index.group(1)}, but {short_name(fn)} takes {count} positional argument"
                f"{'s' if count != 1 else ''} ({{{name}[0]}} is the first)"
            )
        if "{" in (spec or ""):
            _check_template(fn, spec, elementwise, whole)  # a nested field, {dy:{over}}


def _positional_count(fn):
    """How many positional arguments `fn` (or its rule) takes, or None when it takes any number."""
    for f in (RULES.get(fn), fn):
        try:
            params = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            return None
        return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    return None


def missing_formula_lines(fns):
    """What to declare for functions that have no formula: the rule's decorator with a
    ``formula=`` of one template per differentiable argument, and the file it is in."""
    lines = []
    for fn in fns:
        q = qualified_name(fn)
        if q.startswith("numpy."):
            q = "np." + q[len("numpy."):]
        rule = RULES.get(fn)
        args = _argument_names(rule)
        templates = ", ".join(f'"<tangent of {a}, written with {{dy}}>"' for a in args)
        module = getattr(rule, "__module__", None) or ""
        where = (module.replace(".", "/") + ".py: ") if module.startswith("tapegrad.") else ""
        lines.append(f"{where}@rrule({q}, formula=whole({templates}))  # or formula=partials(<∂y/∂arg>, ...) "
                     f"if elementwise")
    return lines


def _argument_names(rule):
    """The positional parameters of a rule without a default (its differentiable arguments)."""
    try:
        params = inspect.signature(rule).parameters.values()
    except (TypeError, ValueError):
        return ["x"]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
             and p.default is p.empty]
    return names + [f"*{p.name}" for p in params if p.kind is p.VAR_POSITIONAL] or ["x"]

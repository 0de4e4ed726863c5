"""The formula `explain` prints for each rule: how the tangent of each argument is made from ȳ.

Why a table here, keyed by function, and not a ``formula=`` on ``@rrule``: a formula is
teaching text, and text is this package's business; the registry stays a table of rules
(``rrule(fn, *args, **kwargs)`` already gives keyword arguments a meaning), the rule modules
import nothing from `show`, and one table keeps the notation the same across families. A
rule author adds one line to the family's block below (or calls `explain_formula` for a rule
of their own); ``tests/show/test_formulas.py`` fails, naming the line to add, for a rule of
tapegrad's that has none.

Two kinds of entry:

- `partials` (elementwise functions): the partial derivative of the result by each argument,
  ``ȳ · ∂y/∂x``; a partial ``"1"`` prints as ``ȳ`` alone. Where an argument was broadcast in
  the forward pass, explain adds the sum that undoes it ("summed over axis 0").
- `formulas`: the whole tangent, for everything else (``ȳ4 · y2ᵀ`` for a matrix product).

A template may use ``{dy}`` (the result's adjoint, ``ȳ5``), ``{y}`` (the result, ``y5``),
``{a[i]}`` (the i-th argument's name or value), ``{ix[i]}`` (the i-th argument written as an
index, ``1:3, 0``) and ``{over}`` (the axes a reduction ran over: ``axis 1`` or ``every
axis``). ``None`` stands for an argument that gets no tangent; an argument past the last
template (``*args``) uses the last one. An entry may also be a function
``(names, values, kwargs) -> [template, ...]`` when the text depends on the values.
"""
from __future__ import annotations

import inspect
import operator
import re
import string

import numpy as np
import scipy.special

from ..arraylike import added_at, updated
from ..errors import qualified_name, short_name, ufunc_method, user_location
from ..pytree import build
from ..registry import RULES
from ..rules.decompositions import cholesky_lower_grad
from ..rules.indexing import scatter_add
from ..rules.piecewise import branch_cotangent
from ..scipy import linalg as tg_linalg
from ..scipy import special as tg_special
from ..scipy import stats as tg_stats
from ..scipy.integrate import odeint_op
from ..scipy.signal import convolve as tg_convolve

__all__ = ["FORMULAS", "Formula", "explain_formula", "partials", "formulas", "missing_formula_lines"]


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


#: fn -> Formula
FORMULAS: dict = {}


def partials(fn, *templates):
    """Register the partial derivatives ∂y/∂(argument i) of an elementwise `fn` (ȳ times each)."""
    FORMULAS[fn] = Formula("partial", templates[0] if len(templates) == 1 and callable(templates[0]) else templates)


def formulas(fn, *templates):
    """Register the whole tangent of each argument of `fn`, written with ``{dy}``."""
    FORMULAS[fn] = Formula("whole", templates[0] if len(templates) == 1 and callable(templates[0]) else templates)


def explain_formula(fn, *templates, elementwise=False):
    """Teach `explain` the formula of your own rule for `fn`, one template per argument.

    With ``elementwise=True`` each template is the partial derivative ∂y/∂x (explain prints
    ``ȳ · partial``); otherwise it is the whole tangent, written with ``{dy}``. See the
    module docstring of `tapegrad.show.formulas` for the placeholders.

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
      y1 = x = 2
      y2 = cube(y1) = 8
    Backward: ȳk = ∂result/∂yk, from the seed back to the inputs
      ȳ2 = 1   (seed)
      ȳ1 = ȳ2 · 3·y1² = 12
    Gradient: ∂f/∂x = ȳ1 = 12
    """
    if not (len(templates) == 1 and callable(templates[0])):
        for template in templates:
            _check_template(fn, template, elementwise)
    (partials if elementwise else formulas)(fn, *templates)


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
    """The lines to paste into tapegrad/show/formulas.py for functions that have no formula:
    one template per differentiable argument of the rule, named as this module imports it."""
    lines = []
    for fn in fns:
        q = qualified_name(fn)
        for prefix, short in (("numpy.", "np."), ("tapegrad.scipy.linalg.", "tg_linalg."),
                              ("tapegrad.scipy.special.", "tg_special.")):
            if q.startswith(prefix):
                q = short + q[len(prefix):]
                break
        args = _argument_names(RULES.get(fn))
        templates = ", ".join(f'"<tangent of {a}, written with {{dy}}>"' for a in args)
        module = q.rsplit(".", 1)[0]
        known = module.split(".")[0] in ("np", "tg_linalg", "tg_special") or module == "scipy.special"
        lines.append(f"formulas({q}, {templates})  # or partials({q}, <∂y/∂arg>, ...) if elementwise"
                     + ("" if known else f"; add import {module} at the top"))
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


def _power(names, values, kwargs):
    x, k = names[0], values[1]
    if isinstance(k, (int, float, np.number)) and not isinstance(k, bool):
        dx = f"{k:g}·{x}{_superscript(k - 1)}"
    else:
        dx = f"{names[1]}·{x}^({names[1]}-1)"
    return [f"({dx})", f"log({x})·{{y}}"]


_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def _superscript(k):
    return "" if k == 1 else f"{k:g}".translate(_SUPERSCRIPT)


def _option(values, kwargs, name, position):
    """The value of the option `name` of a call, given by keyword or as positional `position`."""
    if name in kwargs:
        return kwargs[name]
    return values[position] if len(values) > position else None


def _norm_note(values, kwargs):
    """", norm='ortho'" when a transform was called with a norm: the pullback uses the same one."""
    norm = _option(values, kwargs, "norm", 3)
    return f", norm={norm!r}" if isinstance(norm, str) and norm != "backward" else ""


def _fit_note(values, kwargs):
    """Where n= or s= cut or padded the input, the pullback undoes it."""
    n = kwargs.get("n", kwargs.get("s", values[1] if len(values) > 1 else None))
    return "" if n is None else ", cut or zero-padded back to the shape of {a[0]}"


def _complex_fft(name):
    """fft and its kin: the DFT matrix is symmetric, so the transpose is the same transform."""
    def templates(names, values, kwargs):
        return [f"{name}({{dy}}{_norm_note(values, kwargs)}) (the DFT matrix is symmetric: Fᵀ = F)"
                + _fit_note(values, kwargs), None]
    return templates


def _real_fft(name):
    """rfft: the half spectrum is the first n//2 + 1 rows of the full one."""
    def templates(names, values, kwargs):
        return [f"Re {name}({{dy}} zero-padded to the full spectrum{_norm_note(values, kwargs)})"
                + _fit_note(values, kwargs), None]
    return templates


def _inverse_real_fft(name):
    """irfft reads each entry of the half spectrum twice (with its conjugate), except k = 0 and n/2."""
    def templates(names, values, kwargs):
        return [f"c·{name}({{dy}}{_norm_note(values, kwargs)}) on the half spectrum, "
                "c = 1 at k = 0 and at k = n/2 (even n), else 2" + _fit_note(values, kwargs), None]
    return templates


def _einsum(names, values, kwargs):
    """The subscripts string gets no tangent; in the interleaved form the operands come first."""
    text = "einsum of {dy} with the other operands, this operand's subscripts as output"
    # interleaved (op0, sublist0, op1, ...): the sublists of integers are never differentiated
    return [None, text] if isinstance(values[0], str) else [text]


def _multigammaln(names, values, kwargs):
    """log Γ_d(a) is a sum of d log-gammas, so its slope is a sum of d digammas."""
    d = _option(values, kwargs, "d", 1)
    last = f"{int(d) - 1}" if isinstance(d, (int, np.integer)) else "{a[1]} - 1"
    return ["Σⱼ ψ({a[0]} - j/2) over j = 0 … " + last, None]


def _diff(names, values, kwargs):
    """diff is a first difference applied n times; its transpose is applied as often."""
    n = _option(values, kwargs, "n", 1)
    n = 1 if n is None else n
    times = "once" if n == 1 else f"{n} times" if isinstance(n, (int, np.integer)) else "n times"
    step = "the transposed difference ({dy}[i-1] - {dy}[i], zero past the ends)"
    return ["{dy} through " + step + " " + times, None, None,
            "the first entries of the transposed differences of {dy} (where prepend went)",
            "the last entries of the transposed differences of {dy} (where append went)"]


def _along(text):
    """The template of a ufunc's reduce or accumulate: `text` with ``{over}`` the axes it ran
    along, numpy's axis 0 when none was given (explain's ``{over}`` reads None as every axis)."""
    def templates(names, values, kwargs):
        axis = kwargs.get("axis", 0)
        if type(axis) is tuple and len(axis) == 1:
            axis = axis[0]
        over = ("every axis" if axis is None else
                "axes " + ", ".join(map(str, axis)) if type(axis) is tuple else f"axis {axis}")
        return [text.replace("{over}", over)]
    return templates


def _outer(entry):
    """The templates of ``ufunc.outer`` from the ufunc's own: each tangent is the elementwise
    one (a[0] spread along the axes of a[1]), summed over the axes of the other argument."""
    def templates(names, values, kwargs):
        out = []
        for i, other in enumerate(("{a[1]}", "{a[0]}")):
            t = entry.template(i, names, values, kwargs)
            if t is not None and entry.kind == "partial":
                t = "{dy}" if t == "1" else "-{dy}" if t == "-1" else "{dy} · " + t
            out.append(None if t is None else f"{t}, summed over the axes of {other} (outer product)")
        return out
    return templates


def _convolve(names, values, kwargs):
    """Each input's tangent is the correlation of ȳ with the other input."""
    mode = _option(values, kwargs, "mode", 2)
    undo = "" if mode in (None, "full") else f", {{dy}} first zero-padded to the 'full' size ({mode!r} cropped it)"
    return [f"{{dy}} correlated with {{a[1]}}: convolve({{dy}}, flip({{a[1]}}), 'valid'){undo}",
            f"{{dy}} correlated with {{a[0]}}: convolve({{dy}}, flip({{a[0]}}), 'valid'){undo}",
            None]


# --- arithmetic ---
partials(np.add, "1", "1")
partials(np.subtract, "1", "-1")
partials(np.multiply, "{a[1]}", "{a[0]}")
partials(np.divide, "1/{a[1]}", "(-{a[0]}/{a[1]}²)")
partials(np.power, _power)
partials(np.float_power, _power)
partials(np.negative, "-1")
partials(np.positive, "1")
partials(np.reciprocal, "(-{y}²)")
partials(np.square, "2·{a[0]}")
partials(np.sqrt, "1/(2·{y})")
partials(np.cbrt, "1/(3·{y}²)")
partials(np.fmod, "1", "(-trunc({a[0]}/{a[1]}))")
partials(np.remainder, "1", "(-floor({a[0]}/{a[1]}))")
formulas(np.divmod, "{dy}[1]", "-{dy}[1] · floor({a[0]}/{a[1]})")
partials(np.hypot, "{a[0]}/{y}", "{a[1]}/{y}")
partials(np.absolute, "sign({a[0]}) (conj({a[0]})/|{a[0]}| for a complex {a[0]}, 0 at 0)")
partials(np.fabs, "sign({a[0]})")
partials(np.copysign, "sign({a[0]})·sign({a[1]})", "0")
formulas(np.conjugate, "conj({dy})")
formulas(np.real, "{dy} as the real part")
formulas(np.imag, "{dy} as the imaginary part")
formulas(np.astype, "{dy} cast back to the dtype of {a[0]}", None)
formulas(np.copy, "{dy}")

# --- exponentials, logarithms, trigonometry ---
partials(np.exp, "{y}")
partials(np.exp2, "ln 2·{y}")
partials(np.expm1, "({y} + 1)")
partials(np.log, "1/{a[0]}")
partials(np.log2, "1/({a[0]}·ln 2)")
partials(np.log10, "1/({a[0]}·ln 10)")
partials(np.log1p, "1/(1 + {a[0]})")
partials(np.logaddexp, "exp({a[0]} - {y})", "exp({a[1]} - {y})")
partials(np.logaddexp2, "2^({a[0]} - {y})", "2^({a[1]} - {y})")
partials(np.sin, "cos({a[0]})")
partials(np.cos, "(-sin({a[0]}))")
partials(np.tan, "(1 + {y}²)")
partials(np.arcsin, "1/√(1 - {a[0]}²)")
partials(np.arccos, "(-1/√(1 - {a[0]}²))")
partials(np.arctan, "1/(1 + {a[0]}²)")
partials(np.arctan2, "{a[1]}/({a[0]}² + {a[1]}²)", "(-{a[0]}/({a[0]}² + {a[1]}²))")
partials(np.sinh, "cosh({a[0]})")
partials(np.cosh, "sinh({a[0]})")
partials(np.tanh, "(1 - {y}²)")
partials(np.arcsinh, "1/√({a[0]}² + 1)")
partials(np.arccosh, "1/√({a[0]}² - 1)")
partials(np.arctanh, "1/(1 - {a[0]}²)")
partials(np.sinc, "(cos(π{a[0]}) - {y})/{a[0]}")
for _fn in (np.deg2rad, np.radians):
    partials(_fn, "π/180")
for _fn in (np.rad2deg, np.degrees):
    partials(_fn, "180/π")

# --- piecewise ---
partials(np.maximum, "[{a[0]} > {a[1]}] (½ at a tie)", "[{a[1]} > {a[0]}] (½ at a tie)")
partials(np.fmax, "[{a[0]} > {a[1]}] (½ at a tie)", "[{a[1]} > {a[0]}] (½ at a tie)")
partials(np.minimum, "[{a[0]} < {a[1]}] (½ at a tie)", "[{a[1]} < {a[0]}] (½ at a tie)")
partials(np.fmin, "[{a[0]} < {a[1]}] (½ at a tie)", "[{a[1]} < {a[0]}] (½ at a tie)")
formulas(np.clip, "{dy} where {a[0]} lies inside the bounds, else 0",
         "{dy} where the bound is the value, else 0")
formulas(np.where, None, "{dy} where {a[0]}, else 0", "{dy} where not {a[0]}, else 0")
formulas(branch_cotangent, "{dy} where not {a[1]}, else exactly 0", None)
partials(np.heaviside, "0", "[{a[0]} = 0]")
formulas(np.full_like, None, "the sum of {dy} (every entry is the fill value)")

# --- special functions ---
partials(scipy.special.erf, "2/√π·exp(-{a[0]}²)")
partials(scipy.special.erfc, "(-2/√π·exp(-{a[0]}²))")
partials(scipy.special.erfinv, "√π/2·exp({y}²)")
partials(scipy.special.erfcinv, "(-√π/2·exp({y}²))")
partials(scipy.special.erfcx, "(2·{a[0]}·{y} - 2/√π)")
partials(scipy.special.expit, "{y}·(1 - {y})")
partials(scipy.special.logit, "1/({a[0]}·(1 - {a[0]}))")
partials(scipy.special.log_expit, "expit(-{a[0]})")
partials(scipy.special.ndtr, "exp(-{a[0]}²/2)/√(2π)")
partials(scipy.special.log_ndtr, "exp(-{a[0]}²/2 - {y})/√(2π)")
partials(scipy.special.ndtri, "√(2π)·exp({y}²/2)")
partials(scipy.special.gamma, "{y}·ψ({a[0]})")
partials(scipy.special.gammaln, "ψ({a[0]})")
partials(scipy.special.psi, "ψ′({a[0]})")
partials(tg_special.polygamma, None, "polygamma({a[0]} + 1, {a[1]})")
partials(scipy.special.beta, "{y}·(ψ({a[0]}) - ψ({a[0]} + {a[1]}))", "{y}·(ψ({a[1]}) - ψ({a[0]} + {a[1]}))")
partials(scipy.special.betaln, "(ψ({a[0]}) - ψ({a[0]} + {a[1]}))", "(ψ({a[1]}) - ψ({a[0]} + {a[1]}))")
partials(scipy.special.i0, "i1({a[0]})")
partials(scipy.special.i0e, "(i1e({a[0]}) - sign({a[0]})·{y})")
partials(scipy.special.i1, "(i0({a[0]}) - {y}/{a[0]})")
partials(scipy.special.i1e, "(i0e({a[0]}) - {y}·(sign({a[0]}) + 1/{a[0]}))")
partials(scipy.special.entr, "(-log({a[0]}) - 1)")
partials(scipy.special.rel_entr, "(log({a[0]}/{a[1]}) + 1)", "(-{a[0]}/{a[1]})")
partials(scipy.special.xlogy, "log({a[1]})", "{a[0]}/{a[1]}")
partials(scipy.special.xlog1py, "log1p({a[1]})", "{a[0]}/(1 + {a[1]})")
formulas(tg_special.logsumexp_op, "{dy} · exp({a[0]} - {y}), broadcast back over {over}")
formulas(tg_special.softmax_op, "{y} · ({dy} - Σ({dy} · {y}) over {over})")
formulas(tg_special.log_softmax_op, "{dy} - exp({y}) · Σ{dy} over {over}")
partials(scipy.special.jv, "∂jv/∂{a[0]} (no closed form: by quadrature)",
         "(jv({a[0]} - 1, {a[1]}) - jv({a[0]} + 1, {a[1]}))/2")
partials(scipy.special.yv, "∂yv/∂{a[0]} (no closed form: by quadrature)",
         "(yv({a[0]} - 1, {a[1]}) - yv({a[0]} + 1, {a[1]}))/2")
partials(scipy.special.yn, None, "(yn({a[0]} - 1, {a[1]}) - yn({a[0]} + 1, {a[1]}))/2")
partials(scipy.special.j0, "(-j1({a[0]}))")
partials(scipy.special.j1, "(j0({a[0]}) - jv(2, {a[0]}))/2")
partials(scipy.special.y0, "(-y1({a[0]}))")
partials(scipy.special.y1, "(y0({a[0]}) - yv(2, {a[0]}))/2")
partials(scipy.special.iv, "∂iv/∂{a[0]} (no closed form: by quadrature)",
         "(iv({a[0]} - 1, {a[1]}) + iv({a[0]} + 1, {a[1]}))/2")
partials(scipy.special.ive, "∂ive/∂{a[0]} (no closed form: by quadrature)",
         "((ive({a[0]} - 1, {a[1]}) + ive({a[0]} + 1, {a[1]}))/2 - sign({a[1]})·{y})")
partials(scipy.special.kv, "∂kv/∂{a[0]} (no closed form: by quadrature)",
         "(-(kv({a[0]} - 1, {a[1]}) + kv({a[0]} + 1, {a[1]}))/2)")
partials(scipy.special.gammainc, "∂gammainc/∂{a[0]} (no closed form: by quadrature)",
         "{a[1]}^({a[0]}-1)·exp(-{a[1]})/Γ({a[0]})")
partials(scipy.special.gammaincc, "(-∂gammainc/∂{a[0]}) (no closed form: by quadrature)",
         "(-{a[1]}^({a[0]}-1)·exp(-{a[1]})/Γ({a[0]}))")
partials(scipy.special.betainc, "∂betainc/∂{a[0]} (no closed form: by quadrature)",
         "∂betainc/∂{a[1]} (no closed form: by quadrature)", "{a[2]}^({a[0]}-1)·(1 - {a[2]})^({a[1]}-1)/B({a[0]}, {a[1]})")
partials(scipy.special.rgamma, "(-{y}·ψ({a[0]}))")
partials(tg_special.multigammaln, _multigammaln)
partials(tg_stats.poisson_mean_gammaln, "(poisson_mean_gammaln({a[0]}, {a[1]} + 1) - {y})", None)

# --- reductions ---
formulas(np.sum, "{dy} broadcast back over {over}")
formulas(np.nansum, "{dy} broadcast back over {over}, 0 where {a[0]} is nan")
formulas(np.mean, "{dy}/n broadcast back over {over} (n values averaged)")
formulas(np.nanmean, "{dy}/n broadcast back over {over} (n values that are not nan), 0 at nan")
formulas(np.average, "{dy} · w/Σw broadcast back over {over} (w the weights, 1 without)")
formulas(np.prod, "{dy} · {y}/{a[0]} broadcast back over {over} (the product of the others)")
for _fn in (np.max, np.amax):
    formulas(_fn, "{dy} sent to where {a[0]} is largest over {over} (shared at a tie)")
for _fn in (np.min, np.amin):
    formulas(_fn, "{dy} sent to where {a[0]} is smallest over {over} (shared at a tie)")
formulas(np.nanmax, "{dy} sent to where {a[0]} is largest over {over}, nan skipped (shared at a tie; 0 to a nan)")
formulas(np.nanmin, "{dy} sent to where {a[0]} is smallest over {over}, nan skipped (shared at a tie; 0 to a nan)")
formulas(np.ptp, "{dy} to the largest, -{dy} to the smallest of {a[0]} over {over}")
formulas(np.median, "{dy} sent to the middle value(s) of {a[0]} over {over} (half each for two, shared at a tie)")
formulas(np.var, "{dy} · 2({a[0]} - mean)/(n - ddof) over {over} (conjugated for a complex {a[0]})")
formulas(np.std, "{dy} · ({a[0]} - mean)/((n - ddof)·{y}) over {over} (conjugated for a complex {a[0]})")
formulas(np.cumsum, "the cumulative sum of {dy} taken backwards along {over}")
formulas(np.cumprod, "the backward cumulative sum of {dy} · {y}, divided by {a[0]}, along {over}")
formulas(np.linalg.norm, "{dy} · {a[0]}/{y} for the 2-norm (each order has its own), over {over}")

# --- the methods of ufuncs (reduce and accumulate run along numpy's axis 0 unless given) ---
formulas(np.add.reduce, _along("{dy} broadcast back over {over}"))
formulas(np.multiply.reduce, _along("{dy} · {y}/{a[0]} broadcast back over {over} (the product of the others)"))
for _fn in (np.maximum.reduce, np.fmax.reduce):
    formulas(_fn, _along("{dy} sent to where {a[0]} is largest over {over} (shared at a tie)"))
for _fn in (np.minimum.reduce, np.fmin.reduce):
    formulas(_fn, _along("{dy} sent to where {a[0]} is smallest over {over} (shared at a tie)"))
formulas(np.logaddexp.reduce, _along("{dy} · exp({a[0]} - {y}) broadcast back over {over}"))
formulas(np.logaddexp2.reduce, _along("{dy} · 2^({a[0]} - {y}) broadcast back over {over}"))
formulas(np.add.accumulate, _along("the cumulative sum of {dy} taken backwards along {over}"))
formulas(np.multiply.accumulate, _along("the backward cumulative sum of {dy} · {y}, divided by {a[0]}, along {over}"))
for _fn in (np.maximum.accumulate, np.fmax.accumulate):
    formulas(_fn, _along("each {dy}ⱼ sent to the element holding the running maximum {y}ⱼ along {over} "
                         "(half to each of two at a tie, as np.maximum's rule)"))
for _fn in (np.minimum.accumulate, np.fmin.accumulate):
    formulas(_fn, _along("each {dy}ⱼ sent to the element holding the running minimum {y}ⱼ along {over} "
                         "(half to each of two at a tie, as np.minimum's rule)"))
formulas(np.logaddexp.accumulate, _along("Σⱼ₍≥ᵢ₎ {dy}ⱼ · exp({a[0]}ᵢ - {y}ⱼ) along {over}"))
formulas(np.logaddexp2.accumulate, _along("Σⱼ₍≥ᵢ₎ {dy}ⱼ · 2^({a[0]}ᵢ - {y}ⱼ) along {over}"))
formulas(np.add.reduceat, "{dy} of each segment copied to the elements summed into it (added where segments overlap)",
         None)
formulas(np.trace, "{dy} · I: {dy} on the diagonal, zeros elsewhere")
formulas(np.sort, "{dy} put back where sort took each value from")
formulas(np.partition, "{dy} put back where partition took each value from", None)
formulas(np.percentile, "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that percentile {a[1]} "
         "lies between (t its fraction, numpy's method; a tie in the stable sort's order)",
         "{dy}·(s[hi] - s[lo])·g'/100 summed over the groups (s: {a[0]} sorted; g' the slope of numpy's virtual index: "
         "n - 1 for linear, n + 1 - α - β for Hyndman-Fan); 0 for the piecewise-constant methods")
formulas(np.quantile, "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that quantile {a[1]} "
         "lies between (t its fraction, numpy's method; a tie in the stable sort's order)",
         "{dy}·(s[hi] - s[lo])·g' summed over the groups (s: {a[0]} sorted; g' the slope of numpy's virtual index: "
         "n - 1 for linear, n + 1 - α - β for Hyndman-Fan); 0 for the piecewise-constant methods")
formulas(np.nanpercentile, "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that percentile "
         "{a[1]} lies between among the values that are not nan (t its fraction), 0 at nan",
         "{dy}·(s[hi] - s[lo])·g'/100 summed over the groups (s: the n values of {a[0]} that are not nan, sorted; g' as "
         "for percentile); 0 for the piecewise-constant methods")
formulas(np.nanquantile, "{dy}·(1 - t) and {dy}·t to the elements of {a[0]} sorted into the two places that quantile "
         "{a[1]} lies between among the values that are not nan (t its fraction), 0 at nan",
         "{dy}·(s[hi] - s[lo])·g' summed over the groups (s: the n values of {a[0]} that are not nan, sorted; g' as "
         "for quantile); 0 for the piecewise-constant methods")
formulas(np.histogram,
         "Σₖ {dy}[1]ₖ·(1 - k/n) to the smallest and Σₖ {dy}[1]ₖ·k/n to the largest element of {a[0]} (shared at a tie), "
         "when numpy takes the edges from them (with density, {dy}[1] includes -{dy}[0]·{y}[0]/width at each bin's "
         "ends); 0 from the counts, which are piecewise constant",
         "{dy}[1] (the edges given), with density -{dy}[0]·{y}[0]/width added at each bin's ends",
         "(Σₖ {dy}[1]ₖ·(1 - k/n), Σₖ {dy}[1]ₖ·k/n): the edges are linspace(lo, hi, n + 1)",
         None,
         "{dy}[0] of the bin each element of {a[0]} falls in (0 outside the range; with density, "
         "({dy}[0]/width - Σ {dy}[0]·{y}[0])/Σ weights)")
formulas(np.cov, "({dy} + {dy}ᵀ)·Xc·w/f, rows of {a[0]} (Xc: the variables as rows, less their mean; w the weights, "
         "1 without; f = N - ddof, or numpy's weighted form)", "({dy} + {dy}ᵀ)·Xc·w/f, rows of {a[1]}",
         None, None, None, None,
         "φₖ·xcₖᵀ·{dy}·xcₖ/f - ⟨{dy}, {y}⟩·(∂f/∂aₖ)/f for each observation k (φ the fweights, 1 without)")
formulas(np.corrcoef, "(C̄ + C̄ᵀ)·Xc - diag(r/d)·Xc, rows of {a[0]} (Xc: the variables as rows, less their mean; "
         "d = diag(Xc·Xcᵀ), C̄ = {dy}/√(d dᵀ), r = row sums + column sums of {dy}·{y})",
         "(C̄ + C̄ᵀ)·Xc - diag(r/d)·Xc, rows of {a[1]}", None)

# --- shapes ---
for _fn in (np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d,
            np.atleast_3d):
    formulas(_fn, "{dy} reshaped to the shape of {a[0]}")
for _fn in (np.transpose, np.swapaxes, np.moveaxis):
    formulas(_fn, "{dy} with its axes put back in the order of {a[0]}")
formulas(np.broadcast_to, "{dy} summed over the axes the broadcast added")
for _fn in (np.flip, np.fliplr, np.flipud):
    formulas(_fn, "{dy} flipped back")
formulas(np.rot90, "{dy} rotated back")
formulas(np.rollaxis, "{dy} with its axes put back in the order of {a[0]}", None)
formulas(np.roll, "{dy} rolled back")
formulas(np.tile, "{dy} with its tiles summed")
formulas(np.repeat, "{dy} with each run of repeats summed")
formulas(np.pad, "{dy} with the padding cut off")
formulas(np.diag, "{dy} read back through diag (a diagonal and its matrix)")
formulas(np.diagonal, "{dy} placed on the diagonal of zeros shaped like {a[0]}")
formulas(np.tril, "tril({dy})")
formulas(np.triu, "triu({dy})")
for _fn in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    formulas(_fn, "the piece of {dy} where each argument went")
for _fn in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit):
    formulas(_fn, "the pieces of {dy} joined back (zeros for a piece not used)")
formulas(np.append, "the first part of {dy}, shaped like {a[0]}", "the rest of {dy}, shaped like {a[1]}", None)

# --- differences and ranges ---
formulas(np.diff, _diff)
formulas(np.gradient, "Σ over the axes of Jᵀ·{dy} along each (J: np.gradient's matrix for that axis's spacing "
         "and edge order)", None)
formulas(np.cross, "{a[1]} × {dy}", "{dy} × {a[0]}", None)
formulas(np.linspace, "Σₖ {dy}ₖ·(1 - tₖ), tₖ = k/(num - 1) (k/num without the endpoint)",
         "Σₖ {dy}ₖ·tₖ, tₖ = k/(num - 1) (k/num without the endpoint)", None)

# --- integration, interpolation and polynomials ---
formulas(np.trapezoid, "{dy}·d/2 added at both ends of each interval along the axis (d: diff(x), or dx)",
         "x̄ᵢ = s̄ᵢ₋₁ - s̄ᵢ, s̄ = {dy}·(y[1:] + y[:-1])/2 along the axis (the transposed difference)",
         "Σ {dy}·(y[1:] + y[:-1])/2 along the axis (0 beside an x, which numpy uses instead)", None)
if hasattr(np, "trapz"):  # (numpy before 2.4)
    FORMULAS[np.trapz] = FORMULAS[np.trapezoid]
formulas(np.interp, "{dy}·(fp[j+1] - fp[j])/(xp[j+1] - xp[j]) for xp[j] ≤ {a[0]} < xp[j+1]; 0 outside [xp[0], xp[-1])",
         "{dy}·m·(t - 1) to xp[j], -{dy}·m·t to xp[j+1] (m the slope, t = ({a[0]} - xp[j])/(xp[j+1] - xp[j]))",
         "{dy}·(1 - t) to fp[j], {dy}·t to fp[j+1] (the hat functions at {a[0]}); outside the range, {dy} to "
         "fp[0] or fp[-1] unless left/right is given", "Σ {dy} where {a[0]} < xp[0]", "Σ {dy} where {a[0]} > xp[-1]",
         None)
formulas(np.polyval, "{dy}·{a[1]}^(n-1-k) for coefficient k, summed back to its shape",
         "{dy}·polyval(polyder({a[0]}), {a[1]})")

formulas(np.polyfit, "Σⱼ wᵢ·Āᵢⱼ·∂Vᵢⱼ/∂{a[0]}ᵢ, Ā = r·zᵀ - (A·z)·{y}ᵀ (V the Vandermonde matrix of {a[0]}, A = W·V, "
         "z = (AᵀA)⁻¹·{dy}, r = W·{a[1]} - A·{y} the weighted residuals)",
         "W·A·z, z = (AᵀA)⁻¹·{dy} (A = W·V: the least-squares fit is linear in {a[1]})",
         None, None, None,
         "Σⱼ Āᵢⱼ·Vᵢⱼ + (A·z)ᵢ·{a[1]}ᵢ (Ā, A, z as for {a[0]})",
         None)

# --- selecting and cleaning values ---
formulas(np.select, "{dy} where this choice's condition is the first true one (for the default: where "
         "none is), else 0")  # condlist and choicelist are lists: one template for all their entries
formulas(np.unique, "{dy} put at the first occurrence of each unique value (or slice along axis) of {a[0]}, the one "
         "return_index names; 0 at the later ones")
formulas(np.nan_to_num, "{dy} where {a[0]} is finite, 0 at nan and ±inf (each part of a complex number apart)", None)
formulas(np.real_if_close, "{dy} (the imaginary parts it dropped were within tolerance of 0)", None)
formulas(np.angle, "-i·{dy}/{a[0]} for a complex {a[0]} (times 180/π with deg); 0 for a real one (0 or π, flat "
         "on either side)", None)

# --- indexing ---
formulas(operator.getitem, "{dy} scattered into zeros shaped like {a[0]} at [{ix[1]}]", None)
formulas(updated, "{dy} with zeros at [{ix[1]}]", None, "{dy}[{ix[1]}]")
formulas(added_at, "{dy}", None, "{dy}[{ix[1]}], one share per repeated index")
formulas(scatter_add, "{dy}[{ix[2]}] (a scatter's tangent is a gather)", None)
formulas(np.take, "{dy} scatter-added into zeros shaped like {a[0]} at the taken indices", None)
formulas(np.take_along_axis, "{dy} scatter-added into zeros shaped like {a[0]} at the taken indices", None)
formulas(build, None, "the part of {dy} at this value's place in the result")

# --- products ---
for _fn in (np.matmul, np.dot):
    formulas(_fn, "{dy} · {a[1]}ᵀ", "{a[0]}ᵀ · {dy}")
formulas(np.inner, "{dy} · {a[1]}", "{dy} · {a[0]}")
formulas(np.vdot, "conj({dy} · {a[1]})", "{dy} · conj({a[0]})")
formulas(np.outer, "{dy} · {a[1]}", "{dy}ᵀ · {a[0]}")
formulas(np.kron, "each block of {dy} contracted with {a[1]}", "the blocks of {dy} weighted by {a[0]} and summed")
formulas(np.linalg.multi_dot, "(A₀⋯Aₖ₋₁)ᵀ · {dy} · (Aₖ₊₁⋯Aₙ)ᵀ for each Aₖ of {a[0]}")
formulas(np.tensordot, "{dy} contracted with {a[1]} over its free axes", "{a[0]} contracted with {dy} over its free axes")
formulas(np.einsum, _einsum)

# --- linear algebra ---
formulas(np.linalg.det, "{dy} · {y} · {a[0]}⁻ᵀ")
formulas(np.linalg.slogdet, "({dy}[1] + i·Im({dy}[0]·sign)) · {a[0]}⁻ᵀ (sign = {y}[0])")
formulas(np.linalg.inv, "-{y}ᵀ · {dy} · {y}ᵀ")
formulas(np.linalg.solve, "-({a[0]}⁻ᵀ · {dy}) · {y}ᵀ", "{a[0]}⁻ᵀ · {dy}")
formulas(np.linalg.lstsq, "the least-squares pullback through pinv({a[0]})", "pinv({a[0]})ᵀ · {dy}[0]")
formulas(np.linalg.pinv, "-{y}ᵀ·{dy}·{y}ᵀ plus the terms of the two null spaces")
formulas(np.linalg.matrix_power, "Σₖ ({a[0]}ᵀ)ᵏ · {dy} · ({a[0]}ᵀ)ⁿ⁻¹⁻ᵏ")
formulas(np.linalg.cholesky, "L⁻ᵀ · Φ(Lᵀ · {dy}) · L⁻¹, symmetrized (L = {y}, Φ: lower half, diagonal halved)")
formulas(cholesky_lower_grad,
         "tril(tril({a[1]}) · Q̄ᵀ - ({y} + {y}ᵀ) · L · P̄), P̄ = L⁻¹ · S̄ · L⁻ᵀ, S̄ = Φ({dy}) + Φ({dy})ᵀ, Q̄ = Φ(P̄) (L = {a[0]})",
         "tril({a[0]} · Φ(P̄)), P̄ = L⁻¹ · (Φ({dy}) + Φ({dy})ᵀ) · L⁻ᵀ (L = {a[0]})")
formulas(np.linalg.eigh, "conj(V) · (diag(ȳw) + F ∘ Vᵀ·ȳV) · Vᵀ, Fᵢⱼ = 1/(wⱼ - wᵢ) ((w, V) = {y})")
formulas(np.linalg.eigvalsh, "conj(V) · diag({dy}) · Vᵀ (V the eigenvectors of {a[0]})")
formulas(np.linalg.qr, "the QR pullback: (ȳQ + conj(Q)·B) · R⁻ᵀ, B Hermitian from the upper triangle of ȳR·Rᵀ - Qᵀ·ȳQ")
formulas(np.linalg.svd, "U · diag(ȳs) · Vᵀ plus the terms of the singular vectors")
formulas(np.linalg.eig, "V⁻ᵀ · (diag(ȳw) + F ∘ Vᵀ·ȳV′) · Vᵀ, Fᵢⱼ = 1/(wⱼ - wᵢ), ȳV′ = ȳV less its part "
         "along each vⱼ ((w, V) = {y})")
formulas(np.linalg.eigvals, "V⁻ᵀ · diag({dy}) · Vᵀ (V the eigenvectors of {a[0]})")
formulas(tg_linalg.cholesky, "L⁻ᵀ · Φ(Lᵀ · {dy}) · L⁻¹, symmetrized (L = {y}, Φ: lower half, diagonal halved)")
formulas(tg_linalg.cho_factor, "as cholesky: L⁻ᵀ · Φ(Lᵀ · ȳL) · L⁻¹, symmetrized")
formulas(tg_linalg.cho_solve, "-(A⁻¹ · {dy}) · {y}ᵀ, through the factor", "A⁻¹ · {dy} (A = L·Lᵀ)")
formulas(tg_linalg.lu_factor, "the LU pullback: L⁻ᵀ · (tril(Lᵀ·ȳL, -1) + triu(ȳU·Uᵀ)) · U⁻ᵀ, permuted back")
formulas(tg_linalg.lu_solve, "-(A⁻ᵀ · {dy}) · {y}ᵀ, through the factors", "A⁻ᵀ · {dy} (A = P·L·U)")
formulas(tg_linalg.solve, "-({a[0]}⁻ᵀ · {dy}) · {y}ᵀ", "{a[0]}⁻ᵀ · {dy}")
formulas(tg_linalg.solve_triangular, "-triangle of ({a[0]}⁻ᵀ · {dy}) · {y}ᵀ", "{a[0]}⁻ᵀ · {dy}")
formulas(tg_linalg.expm, "the Fréchet derivative of expm at {a[0]}ᵀ applied to {dy}")
formulas(tg_linalg.sqrtm, "the solution Ā of {y}ᵀ·Ā + Ā·{y}ᵀ = {dy} (a Sylvester equation)")
formulas(tg_linalg.solve_sylvester, "-Q̄ · {y}ᵀ, Q̄ the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}",
         "-{y}ᵀ · Q̄, Q̄ the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}",
         "Q̄, the solution of {a[0]}ᵀ·Q̄ + Q̄·{a[1]}ᵀ = {dy}")
formulas(tg_linalg.solve_banded, None, "-b̄ᵢ · {y}ⱼ on the band entry of A[i, j], 0 in the corners scipy does not read "
         "(b̄ = A⁻ᵀ · {dy}, A the banded matrix of {a[1]})",
         "A⁻ᵀ · {dy}: a banded solve with the band of Aᵀ (A the banded matrix of {a[1]})", None)

# --- Fourier transforms ---
for _fn in (np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn):
    formulas(_fn, _complex_fft(_fn.__name__))
for _fn, _full in ((np.fft.rfft, "fft"), (np.fft.rfft2, "fft2"), (np.fft.rfftn, "fftn")):
    formulas(_fn, _real_fft(_full))
for _fn, _full in ((np.fft.irfft, "ifft"), (np.fft.irfft2, "ifft2"), (np.fft.irfftn, "ifftn")):
    formulas(_fn, _inverse_real_fft(_full))
formulas(np.fft.fftshift, "ifftshift({dy}) (the opposite shift)", None)
formulas(np.fft.ifftshift, "fftshift({dy}) (the opposite shift)", None)

# --- signals and differential equations ---
formulas(tg_convolve, _convolve)
formulas(np.convolve, "convolve({dy}, flip({a[1]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it",
         "convolve({dy}, flip({a[0]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it", None)
formulas(np.correlate, "convolve({dy}, conj({a[1]}), 'valid'), {dy} first zero-padded to the 'full' length where the mode cropped it",
         "conj(convolve(flip({dy}), {a[0]}, 'valid')), {dy} first zero-padded to the 'full' length where the mode cropped it", None)
formulas(odeint_op, None,
         "λ(t₀): the adjoint λ integrated back from the last time, dλ/dt = -λᵀ·∂f/∂y, "
         "taking the jump {dy}ᵢ at each tᵢ",
         "{dy}ᵢ·f(yᵢ, tᵢ) at i > 0; at t₀ minus their sum, plus ∫ -λᵀ·∂f/∂t",
         "∫ λᵀ·∂f/∂θ dt from t₀ to the last time (θ the parameters)")

# --- outer products of ufuncs: from each two-input ufunc's own entry above ---
for _fn in list(RULES):
    _method = ufunc_method(_fn)
    if _method is not None and _method[1] == "outer" and _method[0] in FORMULAS:
        formulas(_fn, _outer(FORMULAS[_method[0]]))

"""`explain`: the backward pass written out as a student would by hand.

Every value is named as the tapes name it (`tapegrad.numbering`: ``%2`` the first input,
``%4`` the value `trace` prints as ``%4``), every adjoint with a d, as in the tape's notes:
``d%5`` is the derivative of the result with respect to ``%5``. The forward pass is listed first, then the
reverse sweep in the order tapegrad runs it, one line per tangent with its formula and its
number, and a ``+=`` line wherever a second share of a derivative is accumulated.

On arrays the lines read the same way: each formula comes from the table in
`tapegrad.show.formulas` (``d%5 · %3ᵀ`` for a matrix product, a scatter into zeros for an
index), the forward lines show keyword arguments (``axis=1, keepdims=True``) and indexes as
``%7[:, 1:]``, an array the code holds is named once (``c1``), and where an elementwise
function broadcast an argument, its adjoint's line says over which axes the pullback sums
("summed over axis 0, broadcast in the forward pass").
"""
from __future__ import annotations

import operator
import re

import numpy as np

from ..errors import short_name
from ..grad import pullback
from ..registry import rrule
from ..tangents import accum, getitem
from ..numbering import numbering
from ..tape import Call, Constant, Input, Variable
from .formulas import FORMULAS

__all__ = ["explain", "explain_text", "explain_steps", "format_number", "generic_formula"]

def _num(v) -> str:
    if type(v) is bool or v is None:
        return repr(v)
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return np.array2string(v, precision=6, separator=", ", threshold=6).replace("\n", "")
    try:
        if isinstance(v, (complex, np.complexfloating)) or getattr(v, "dtype", None) is not None \
                and v.dtype.kind == "c":
            return f"{complex(v):.10g}"  # both parts (float() would drop the imaginary one)
        return f"{float(v):.10g}"
    except (TypeError, ValueError):
        return repr(v)


#: a number as explain writes it (10 significant digits; an array in full, up to 6 entries)
format_number = _num


def _times(adjoint: str, partial: str) -> str:
    if partial == "1":
        return adjoint
    if partial == "-1":
        return f"-{adjoint}"
    return f"{adjoint} · {partial}"


def _index(v) -> str:
    """An index as it is written between brackets: ``1:3, ..., 0``."""
    if type(v) is tuple:
        return ", ".join(_index(x) for x in v) if v else "()"
    if type(v) is slice:
        parts = ["" if p is None else _index(p) for p in (v.start, v.stop, v.step)]
        return ":".join(parts[:2] if v.step is None else parts)
    if v is Ellipsis:
        return "..."
    if v is None:
        return "np.newaxis"
    return _num(v)


def _over(fargs, kwargs) -> str:
    """The axes a reduction ran over, from its ``axis`` keyword or its second argument."""
    axis = kwargs.get("axis", fargs[1] if len(fargs) > 1 and type(fargs[1]) in (int, tuple) else None)
    if axis is None:
        return "every axis"
    if type(axis) is tuple:
        return ("axes " + ", ".join(map(str, axis))) if len(axis) != 1 else f"axis {axis[0]}"
    return f"axis {axis}"


def _summed_axes(arg_shape, out_shape):
    """The axes of `out_shape` that a broadcast of `arg_shape` made, which the pullback sums over."""
    lead = len(out_shape) - len(arg_shape)
    axes = list(range(lead))
    axes += [lead + i for i, n in enumerate(arg_shape) if n == 1 and out_shape[lead + i] != 1]
    return axes


def _formula(fn, i, names, fargs, kwargs, dy, out):
    """``d%5 · cos(%4)``: the tangent of argument `i` as explain writes it, or None without a formula."""
    entry = FORMULAS.get(fn)
    template = entry.template(i, names, fargs, kwargs) if entry is not None else None
    if template is None:
        return None
    fields = {"dy": dy, "y": out, "a": names, "ix": [_index(a) for a in fargs], "over": _over(fargs, kwargs)}
    text = template.format(**fields)
    return _times(dy, text) if entry.kind == "partial" else text


def _broadcast_note(fn, arg_value, out_value) -> str:
    """Where an elementwise function broadcast an argument, the sum its pullback does to undo it."""
    if not isinstance(fn, np.ufunc):
        return ""
    arg_shape, out_shape = np.shape(arg_value), np.shape(out_value)
    if arg_shape == out_shape or len(arg_shape) > len(out_shape):
        return ""
    axes = _summed_axes(arg_shape, out_shape)
    if not axes:
        return ""
    where = f"axis {axes[0]}" if len(axes) == 1 else "axes " + ", ".join(map(str, axes))
    return f", summed over {where}, broadcast in the forward pass"


def generic_formula(fn, dy, i) -> str:
    """The text for a rule with no formula in `FORMULAS` (tests keep tapegrad's own from it)."""
    return f"pullback of {short_name(fn)} applied to {dy}, argument {i + 1}"


def _fill(op, name, constant, shown_call):
    """The forward line's call text for the value read `op` of an rrule."""
    src = op.args[0]._op
    fn, fargs = src.args[0], src.args[1:]
    shown = []
    for a in fargs:
        if type(a) is Variable:
            shown.append(name.get(a, "?"))
        elif isinstance(a, np.ndarray) and a.size > 1:
            if id(a) not in constant:  # an array the code holds: named once, as c1
                constant[id(a)] = f"c{len(constant) + 1}"
                shown_call.append((constant[id(a)], a))
            shown.append(constant[id(a)])
        else:
            shown.append(_num(a))
    shown += [f"{key}={_num(v)}" for key, v in (src.kwargs or {}).items()]
    if fn is operator.getitem and len(fargs) == 2 and not src.kwargs:
        return fn, fargs, src.kwargs or {}, f"{shown[0]}[{_index(fargs[1])}]"
    return fn, fargs, src.kwargs or {}, f"{short_name(fn)}({', '.join(shown)})"


_VALUE_NAME = re.compile(r"(?<![d\w])%\d+")


def explain_steps(back):
    """The forward pass and the reverse sweep of a pullback that has run, as records.

    Returns ``(forward, backward, gradient)``: `forward` lists ``{"name", "text", "value"}``
    (``text`` the call, or the input's name, or ``constant`` for an array the code holds);
    `backward` lists ``{"kind": "seed" | "set" | "add", "target": "%2", "adjoint": "d%2",
    "formula", "value", "total", "var": the tangent's own name, "holder": the value whose
    pullback made it, "reads": the forward values the formula reads}``; `gradient` lists
    ``(input name, adjoint, value)``. Names are those of `tapegrad.numbering`. `explain_text`
    and the viewer (`tapegrad.show.viewer`) are both written from these.
    """
    tape = back.tape
    names = numbering(tape)
    name = {}  # Variable -> "%4", for the values explain follows
    forward, backward = [], []
    primitive_of = {}  # value Variable -> (fn, arg Variables or constants, kwargs)
    constant = {}  # id of a constant array argument -> its name "c1"
    for op in tape.ops:
        if type(op) is Input and op.id > 1:
            name[op.var] = names[op.var]
            forward.append({"name": names[op.var], "text": op.note or "input", "value": op.val})
        elif type(op) is Call and op.fn is getitem and type(op.args[0]) is Variable:
            src = op.args[0]._op
            if type(src) is Call and src.fn is rrule and op.args[1] == 0:
                name[op.var] = names[op.var]
                arrays = []
                fn, fargs, kwargs, call = _fill(op, name, constant, arrays)
                forward += [{"name": c, "text": "constant", "value": a} for c, a in arrays]
                primitive_of[op.var] = (fn, fargs, kwargs)
                forward.append({"name": names[op.var], "text": call, "value": op.val})
    bar = {v: "d" + n for v, n in name.items()}
    has = set()
    accum_of = {op.args[1]: op for op in tape.ops if type(op) is Call and op.fn is accum}
    for op in tape.ops:
        if type(op) is Constant and op.note == "seed":
            res = tape.result
            has.add(res)
            backward.append({"kind": "seed", "target": name.get(res, "result"), "adjoint": bar.get(res, "d"),
                             "formula": "seed", "value": op.val, "total": op.val, "var": names[op.var],
                             "holder": None, "reads": []})
        elif type(op) is Call and op.fn is getitem and type(op.note) is tuple:
            _, holder, arg = op.note
            if arg not in bar:
                continue
            fn, fargs, kwargs = primitive_of[holder]
            arg_names = [name.get(a, _num(a)) if type(a) is Variable else constant.get(id(a)) or _num(a)
                         for a in fargs]
            values = [a._op.val if type(a) is Variable else a for a in fargs]
            i = op.args[1] - 1
            formula = _formula(fn, i, arg_names, values, kwargs, bar[holder], name[holder])
            # the forward values the pullback reads: those its formula names (none for a sum's
            # pullback); without a formula, every argument it may read
            if formula is None:
                formula = generic_formula(fn, bar[holder], i)
                reads = [name[a] for a in fargs if type(a) is Variable and a in name]
            else:
                if i < len(values):
                    formula += _broadcast_note(fn, values[i], holder._op.val)
                reads = list(dict.fromkeys(_VALUE_NAME.findall(formula)))
            step = {"target": name[arg], "adjoint": bar[arg], "formula": formula, "value": op.val,
                    "var": names[op.var], "holder": name[holder], "reads": reads}
            if arg in has:
                total = accum_of[op.var] if op.var in accum_of else op
                step.update(kind="add", total=total.val, var_total=names[total.var])
            else:
                has.add(arg)
                step.update(kind="set", total=op.val)
            backward.append(step)
    gradient = [(tape[v].note, bar[v], back.derivatives[v]._op.val)
                for v in tape.inputs if v in bar and v in back.derivatives]
    return forward, backward, gradient


def explain_text(f, *args, seed=None) -> str:
    """The text `explain` prints."""
    value, back = pullback(f, *args)
    back(seed)
    forward, backward, gradient = explain_steps(back)
    lines = ["Forward"]
    for row in forward:
        lines.append(f"  {row['name']} = {row['text']} {_num(row['value'])}" if row["text"] == "constant"
                     else f"  {row['name']} = {row['text']} = {_num(row['value'])}")
    lines.append("Backward: d%k = ∂result/∂%k, from the seed back to the inputs")
    for s in backward:
        if s["kind"] == "seed":
            lines.append(f"  {s['adjoint']} = {_num(s['value'])}   (seed)")
        elif s["kind"] == "add":
            lines.append(f"  {s['adjoint']} += {s['formula']} = {_num(s['value'])}   "
                         f"→ {s['adjoint']} = {_num(s['total'])}")
        else:
            lines.append(f"  {s['adjoint']} = {s['formula']} = {_num(s['value'])}")
    grads = [f"∂f/∂{note} = {adj} = {_num(v)}" for note, adj, v in gradient]
    lines.append("Gradient: " + ", ".join(grads) if grads else "Gradient: no input reaches the result")
    return "\n".join(lines)


def explain(f, *args, seed=None) -> None:
    """Print the forward pass and the reverse sweep of ``grad(f, *args)`` as worked by hand.

    Examples
    --------
    >>> import tapegrad
    >>> tapegrad.explain(lambda a, b: a / (a + b * b), 2.0, 3.0)
    Forward
      %2 = a = 2
      %3 = b = 3
      %4 = multiply(%3, %3) = 9
      %5 = add(%2, %4) = 11
      %6 = divide(%2, %5) = 0.1818181818
    Backward: d%k = ∂result/∂%k, from the seed back to the inputs
      d%6 = 1   (seed)
      d%2 = d%6 · 1/%5 = 0.09090909091
      d%5 = d%6 · (-%2/%5²) = -0.01652892562
      d%2 += d%5 = -0.01652892562   → d%2 = 0.07438016529
      d%4 = d%5 = -0.01652892562
      d%3 = d%4 · %3 = -0.04958677686
      d%3 += d%4 · %3 = -0.04958677686   → d%3 = -0.09917355372
    Gradient: ∂f/∂a = d%2 = 0.07438016529, ∂f/∂b = d%3 = -0.09917355372
    """
    print(explain_text(f, *args, seed=seed))

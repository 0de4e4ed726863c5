"""`explain`: the backward pass written out as a student would by hand.

Every value gets a name ``y1, y2, ...`` (inputs first), every adjoint a bar: ``ȳ5`` is the
derivative of the result with respect to ``y5``. The forward pass is listed first, then the
reverse sweep in the order tapegrad runs it, one line per tangent with its formula and its
number, and a ``+=`` line wherever a second share of a derivative is accumulated.
"""
from __future__ import annotations

import numpy as np

from ..errors import short_name
from ..grad import pullback
from ..registry import rrule
from ..tangents import accum, getitem
from ..tape import Call, Constant, Input, Variable

__all__ = ["explain", "explain_text"]

Y_BAR = "\u0233"  # ȳ, one precomposed character
_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def _num(v) -> str:
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return np.array2string(v, precision=6, separator=", ", threshold=6).replace("\n", "")
    try:
        return f"{float(v):.10g}"
    except (TypeError, ValueError):
        return repr(v)


def _power(base: str, k) -> str:
    if k == 1:
        return base
    text = f"{k:g}" if isinstance(k, (int, float, np.number)) else str(k)
    return base + text.translate(_SUPERSCRIPT)


# the partial derivative of each primitive by argument: a function of the argument names
# (a list of strings), the output name and the constant arguments' values
def _partials(fn, names, out, consts):
    x = names[0] if names else "x"
    y = names[1] if len(names) > 1 else "y"
    if fn is np.add:
        return ["1", "1"]
    if fn is np.subtract:
        return ["1", "-1"]
    if fn is np.multiply:
        return [y, x]
    if fn is np.divide:
        return [f"1/{y}", f"(-{x}/{_power(y, 2)})"]
    if fn is np.power:
        k = consts[1]
        dx = f"{k:g}·{_power(x, k - 1)}" if isinstance(k, (int, float, np.number)) else f"{y}·{x}^({y}-1)"
        return [f"({dx})", f"log({x})·{out}"]
    if fn is np.negative:
        return ["-1"]
    table = {
        np.sin: f"cos({x})", np.cos: f"(-sin({x}))", np.tan: f"(1 + {_power(out, 2)})",
        np.exp: out, np.log: f"1/{x}", np.log10: f"1/({x}·ln 10)", np.sqrt: f"1/(2·{out})",
        np.tanh: f"(1 - {_power(out, 2)})", np.positive: "1",
        np.sum: "1 (spread over the summed axes)", np.mean: "1/n (spread over the averaged axes)",
    }
    if fn in table:
        return [table[fn]]
    return None


def _times(adjoint: str, partial: str) -> str:
    if partial == "1":
        return adjoint
    if partial == "-1":
        return f"-{adjoint}"
    return f"{adjoint} · {partial}"


def explain_text(f, *args, seed=None) -> str:
    """The text `explain` prints."""
    value, back = pullback(f, *args)
    back(seed)
    tape = back.tape
    name = {}  # Variable -> "y3"
    lines = ["Forward"]
    k = 0
    primitive_of = {}  # value Variable -> (fn, arg Variables or constants)
    for op in tape.ops:
        if type(op) is Input and op.id > 1:
            k += 1
            name[op.var] = f"y{k}"
            lines.append(f"  y{k} = {op.note or 'input'} = {_num(op.val)}")
        elif type(op) is Call and op.fn is getitem and type(op.args[0]) is Variable:
            src = op.args[0]._op
            if type(src) is Call and src.fn is rrule and op.args[1] == 0:
                k += 1
                name[op.var] = f"y{k}"
                fn, fargs = src.args[0], src.args[1:]
                primitive_of[op.var] = (fn, fargs)
                shown = ", ".join(name.get(a, "?") if type(a) is Variable else _num(a) for a in fargs)
                lines.append(f"  y{k} = {short_name(fn)}({shown}) = {_num(op.val)}")
    bar = {v: Y_BAR + n[1:] for v, n in name.items()}
    lines.append("Backward: ȳk = ∂result/∂yk, from the seed back to the inputs")
    has = set()
    accum_of = {op.args[1]: op for op in tape.ops if type(op) is Call and op.fn is accum}
    for op in tape.ops:
        if type(op) is Constant and op.note == "seed":
            res = tape.result
            has.add(res)
            lines.append(f"  {bar.get(res, Y_BAR)} = {_num(op.val)}   (seed)")
        elif type(op) is Call and op.fn is getitem and type(op.note) is tuple:
            _, holder, arg = op.note
            if arg not in bar:
                continue
            fn, fargs = primitive_of[holder]
            names = [name.get(a, _num(a)) if type(a) is Variable else _num(a) for a in fargs]
            parts = _partials(fn, names, name[holder], fargs)
            i = op.args[1] - 1
            if parts is not None and i < len(parts):
                formula = _times(bar[holder], parts[i])
            else:
                formula = f"pullback of {short_name(fn)} applied to {bar[holder]}, argument {i + 1}"
            if arg in has:
                total = accum_of[op.var].val if op.var in accum_of else op.val
                lines.append(f"  {bar[arg]} += {formula} = {_num(op.val)}   → {bar[arg]} = {_num(total)}")
            else:
                has.add(arg)
                lines.append(f"  {bar[arg]} = {formula} = {_num(op.val)}")
    grads = [f"∂f/∂{tape[v].note} = {bar[v]} = {_num(back.derivatives[v]._op.val)}"
             for v in tape.inputs if v in bar and v in back.derivatives]
    lines.append("Gradient: " + ", ".join(grads) if grads else "Gradient: no input reaches the result")
    return "\n".join(lines)


def explain(f, *args, seed=None) -> None:
    """Print the forward pass and the reverse sweep of ``grad(f, *args)`` as worked by hand.

    Examples
    --------
    >>> import tapegrad
    >>> tapegrad.explain(lambda a, b: a / (a + b * b), 2.0, 3.0)
    Forward
      y1 = a = 2
      y2 = b = 3
      y3 = multiply(y2, y2) = 9
      y4 = add(y1, y3) = 11
      y5 = divide(y1, y4) = 0.1818181818
    Backward: ȳk = ∂result/∂yk, from the seed back to the inputs
      ȳ5 = 1   (seed)
      ȳ1 = ȳ5 · 1/y4 = 0.09090909091
      ȳ4 = ȳ5 · (-y1/y4²) = -0.01652892562
      ȳ1 += ȳ4 = -0.01652892562   → ȳ1 = 0.07438016529
      ȳ3 = ȳ4 = -0.01652892562
      ȳ2 = ȳ3 · y2 = -0.04958677686
      ȳ2 += ȳ3 · y2 = -0.04958677686   → ȳ2 = -0.09917355372
    Gradient: ∂f/∂a = ȳ1 = 0.07438016529, ∂f/∂b = ȳ2 = -0.09917355372
    """
    print(explain_text(f, *args, seed=seed))

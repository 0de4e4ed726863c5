"""Tape dumps: the plain format (one op a line) and the compact one (rrules folded with their reads).

Values are named with `tapegrad.numbering` (the value of a primitive keeps the number
`trace` gives it; its rrule tuple, pullback and tangent tuple are ``rr%4``, ``pb%4``,
``dx%4``). Plain::

    rr%4 = rrule(multiply, %2, %3)::tuple
    %4 = getitem(rr%4, 0)::float64
    pb%4 = getitem(rr%4, 1)::function multiply_pullback

Compact, the same three ops::

    %4, pb%4 = rrule(multiply, %2, %3)::float64

and a pullback call with its reads, ``_`` for a tangent that is not read::

    _, %8, %9 = pb%6(%7)   # pullback for %6

Notes (``# seed``, ``# pullback for %6``, ``# accumulate d%2``, an input's name) are aligned
in one column.
"""
from __future__ import annotations

import html
from collections import Counter

import numpy as np

from ..errors import short_name, type_str
from ..program.guards import GUARDS, guard_text
from ..registry import rrule
from ..tangents import accum, getitem
from ..numbering import named_note, numbering
from ..tape import Call, Constant, Input, Tape, Variable

__all__ = ["format_tape", "format_value", "format_html", "group_ops", "summarize"]


def format_value(v, names=None) -> str:
    """A constant as dumps show it: numbers as Python prints them, small arrays in full; a
    Variable by its name in `names` (`tapegrad.numbering`), else as ``%id``."""
    if type(v) is Variable:
        return names.get(v, repr(v)) if names else repr(v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (bool, int, float, complex, str)) or v is None:
        return repr(v)
    if isinstance(v, np.ndarray):
        if v.size <= 6:
            return np.array2string(v, separator=", ").replace("\n", "")
        return f"array({type_str(v)})"
    if isinstance(v, slice):
        parts = ["" if p is None else format_value(p, names) for p in (v.start, v.stop, v.step)]
        return ":".join(parts[:2]) if v.step is None else ":".join(parts)
    if v is Ellipsis:
        return "..."
    if isinstance(v, tuple):
        inner = ", ".join(format_value(x, names) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x, names) for x in v) + "]"
    if isinstance(v, np.dtype) or isinstance(v, type):
        return getattr(v, "__name__", str(v))
    if callable(v):
        return short_name(v)
    if type(v).__repr__ is not object.__repr__:
        text = repr(v)
        if len(text) <= 40 and "\n" not in text:
            return text
    return type(v).__name__


def _call_text(op, names) -> str:
    fn = format_value(op.fn, names) if type(op.fn) is Variable else short_name(op.fn)
    parts = [format_value(a, names) for a in op.args]
    if op.kwargs:
        parts += [f"{k}={format_value(v, names)}" for k, v in op.kwargs.items()]
    return f"{fn}({', '.join(parts)})"


def _plain(op, names) -> str:
    if type(op) is Call and op.fn in GUARDS:
        return "guard " + guard_text(op, lambda v: format_value(v, names))
    if type(op) is Input:
        return f"inp {names[op.var]}::{type_str(op.val)}"
    if type(op) is Constant:
        return f"const {names[op.var]} = {format_value(op.val, names)}"
    return f"{names[op.var]} = {_call_text(op, names)}::{type_str(op.val)}"


def _reads_of(ops, i, var):
    """The getitem reads of `var` that follow ops[i] directly: [(index, op), ...]."""
    reads = []
    j = i + 1
    while j < len(ops):
        op = ops[j]
        if type(op) is Call and op.fn is getitem and len(op.args) == 2 and op.args[0] is var:
            reads.append((op.args[1], op))
            j += 1
        else:
            break
    return reads


def group_ops(ops, names=None):
    """The ops in display groups: ``(kind, head, members, text)``.

    kind is "rrule" (an rrule call with its value and pullback reads), "pullback" (a pullback
    call with its tangent reads) or "op" (anything else, alone); text is the compact line,
    written with `names` (`tapegrad.numbering`; made from `ops` when not given).
    """
    if names is None:
        names = numbering(_Ops(ops))
    i = 0
    while i < len(ops):
        op = ops[i]
        if type(op) is Call and (op.fn is rrule or type(op.fn) is Variable):
            reads = _reads_of(ops, i, op.var)
            if op.fn is rrule and [k for k, _ in reads] == [0, 1]:
                value_op = reads[0][1]
                text = f"{names[value_op.var]}, {names[reads[1][1].var]} = {_call_text(op, names)}"
                yield "rrule", op, [op, reads[0][1], reads[1][1]], f"{text}::{type_str(value_op.val)}"
                i += 3
                continue
            if type(op.fn) is Variable and reads and isinstance(op.val, tuple):
                shown = ["_"] * len(op.val)
                for k, r in reads:
                    if isinstance(k, int) and 0 <= k < len(names):
                        shown[k] = names[r.var]
                text = f"{', '.join(shown)} = {_call_text(op, names)}"
                yield "pullback", op, [op] + [r for _, r in reads], text
                i += 1 + len(reads)
                continue
        yield "op", op, [op], _plain(op, names)
        i += 1


class _Ops:
    """A list of ops seen as a tape, for `numbering`."""

    __slots__ = ("ops",)

    def __init__(self, ops):
        self.ops = ops


def _lines(tape, compact):
    names = numbering(tape)
    if compact:
        return [(text, named_note(head.note, names)) for _, head, _, text in group_ops(tape.ops, names)]
    return [(_plain(op, names), named_note(op.note, names)) for op in tape.ops]


def tape_of(obj, who: str) -> Tape:
    """The tape that `who` shows: a Tape, or a pullback's (forward ops, and the backward ones of
    its last call); a TypeError saying how to get one for anything else (a function and its
    arguments, as `explain` takes them)."""
    if isinstance(obj, Tape):
        return obj
    tape = getattr(obj, "tape", None)
    if isinstance(tape, Tape):
        return tape
    got = f"the function {short_name(obj)}" if callable(obj) else f"a {type(obj).__name__}"
    raise TypeError(
        f"{who} shows a tape, not {got}: take `_, tape = tapegrad.trace(f, *args)` for the forward "
        f"program, or `_, back = tapegrad.pullback(f, *args)` then `back()` and pass `back` for the "
        f"forward and backward program (tapegrad.explain(f, *args) prints the gradient worked "
        f"from a function and its arguments)")


def format_tape(tape, compact: bool = False) -> str:
    """The tape as text, one op a line (`compact` folds each rrule and pullback with its reads):
    of a Tape, or of a pullback's tape."""
    tape = tape_of(tape, "format_tape")
    lines = _lines(tape, compact)
    width = max((len(code) for code, note in lines if note), default=0)
    out = ["Tape"]
    for code, note in lines:
        out.append(f"  {code.ljust(width)}   # {note}" if note else f"  {code}")
    return "\n".join(out)


def format_html(tape, compact: bool = False) -> str:
    """The tape as an HTML table (what notebooks show): the same lines as `format_tape`."""
    rows = []
    for code, note in _lines(tape, compact):
        rows.append(f"<tr><td style='text-align:left'><code>{html.escape(code)}</code></td>"
                    f"<td style='text-align:left;color:#666'>{html.escape(note)}</td></tr>")
    return ("<table class='tapegrad-tape'><thead><tr><th style='text-align:left'>Tape</th>"
            "<th style='text-align:left'>note</th></tr></thead><tbody>" + "".join(rows) +
            "</tbody></table>")


def summarize(tape) -> str:
    """A few lines about a tape of any length: op counts by kind and the most used functions."""
    kinds = Counter()
    fns = Counter()
    for op in tape.ops:
        if type(op) is Input:
            kinds["inputs"] += 1
        elif type(op) is Constant:
            kinds["constants"] += 1
        elif op.fn in GUARDS:
            kinds["guards"] += 1
        elif op.fn is accum:
            kinds["accumulations"] += 1
        elif op.fn is rrule:
            kinds["primitives (rrule)"] += 1
            fns[short_name(op.args[0])] += 1
        elif type(op.fn) is Variable:
            kinds["pullback calls"] += 1
        elif op.fn is getitem:
            kinds["reads"] += 1
        else:
            kinds["primitives"] += 1
            fns[short_name(op.fn)] += 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    top = ", ".join(f"{name} x{n}" for name, n in fns.most_common(5))
    return f"Tape of {len(tape)} ops: {parts}\n  most used: {top or '-'}"


Tape.format_text = format_tape
Tape.format_summary = summarize
Tape.format_html = format_html

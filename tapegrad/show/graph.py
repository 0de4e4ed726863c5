"""The graph of a tape's picture: one node per op, or per rrule / pullback call with its reads.

Both pictures, Graphviz DOT text (`tapegrad.show.drawing`) and tapegrad's own SVG
(`tapegrad.show.svg`), are drawn from it.
"""
from __future__ import annotations

import re

from ..errors import type_str
from ..program.guards import GUARDS
from .printing import format_value, group_ops
from ..tangents import accum
from ..tape import Call, Constant, Input, note_text, vars_in

__all__ = ["graph"]


def graph(tape, values: bool = False):
    """The nodes and edges of a tape's picture: ``([(node, kind, label lines), ...], [(src, dst), ...])``.

    `kind` is one of input, forward, backward, accumulate, constant, guard; a node is named
    ``n<id of its first op>``. Both pictures (DOT and the SVG drawn here) are made from this.
    """
    backward_from = None
    for op in tape.ops:
        if type(op) is Constant and note_text(op.note) == "seed":
            backward_from = op.id
            break
    node_of = {}  # Variable -> node name
    nodes, edges = [], []
    for kind, head, members, text in group_ops(tape.ops):
        node = f"n{head.id}"
        for m in members:
            node_of[m.var] = node
        value_op = members[1] if kind == "rrule" else head
        if type(head) is Input:
            style = "input"
            label = [f"{head.var} {note_text(head.note) or 'f'}", type_str(head.val)]
        elif type(head) is Constant:
            style = "backward" if note_text(head.note) == "seed" else "constant"
            label = [f"{head.var} = {format_value(head.val)}"] + ([note_text(head.note)] if head.note else [])
        elif type(head) is Call and head.fn in GUARDS:
            style = "guard"
            label = [text]
        elif type(head) is Call and head.fn is accum:
            style = "accumulate"
            label = [f"{head.var} = accum", note_text(head.note)]
        else:
            style = "backward" if backward_from is not None and head.id > backward_from else "forward"
            label = [_readable(kind, text.split("::")[0])]
            if kind == "pullback":
                label.append(note_text(head.note))
            else:
                label.append(type_str(value_op.val))
        if values and kind == "pullback":
            label.append("= " + ", ".join(format_value(m.val) for m in members[1:]))
        elif values and type(head) not in (Input, Constant):
            label.append(f"= {format_value(value_op.val)}")
        nodes.append((node, style, label))
        seen = set()
        for m in members:
            if type(m) is not Call:
                continue
            used = [m.fn] + list(m.args) + list((m.kwargs or {}).values())
            for a in vars_in(used):
                src = node_of.get(a)
                if src is not None and src != node and (src, node) not in seen:
                    seen.add((src, node))
                    edges.append((src, node))
    return nodes, edges


_RRULE = re.compile(r"^(%\d+), %\d+ = \[%\d+\] = rrule\(([^,()]+)(?:, )?(.*)\)$")
_PULLBACK = re.compile(r"^(.*) = \[%\d+\] = %\d+\((.*)\)$")


def _readable(kind, text):
    """A node's first line as the user's call reads: ``%5 = multiply(%3, %3)`` for the rrule call
    ``%5, %6 = [%4] = rrule(multiply, %3, %3)``, ``_, %15 = pullback(%13)`` for a pullback call
    (the pullback's own name is an edge into the node)."""
    m = (_RRULE if kind == "rrule" else _PULLBACK).match(text)
    if m is None:
        return text
    if kind == "rrule":
        return f"{m.group(1)} = {m.group(2)}({m.group(3)})"
    return f"{m.group(1)} = pullback({m.group(2)})"

"""The graph of a tape's picture: one node per op, or per rrule / pullback call with its reads.

Both pictures, Graphviz DOT text (`tapegrad.show.drawing`) and tapegrad's own SVG
(`tapegrad.show.svg`), are drawn from it.
"""
from __future__ import annotations

import re

from ..errors import type_str
from ..program.guards import GUARDS
from ..numbering import named_note, numbering, source_name
from .printing import format_value, group_ops
from ..tangents import accum
from ..tape import Call, Constant, Input, note_text, vars_in

__all__ = ["graph", "node_text"]


def graph(tape, values: bool = False):
    """The nodes and edges of a tape's picture: ``([(node, kind, label lines), ...], [(src, dst), ...])``.

    `kind` is one of input, forward, backward, accumulate, constant, guard; a node is named
    after its value in `tapegrad.numbering` (``v4`` for ``%4``, ``dx6`` for a pullback call). Both pictures (DOT and the SVG drawn here) are made from this.
    """
    backward_from = None
    for op in tape.ops:
        if type(op) is Constant and note_text(op.note) == "seed":
            backward_from = op.id
            break
    names = numbering(tape)
    node_of = {}  # Variable -> node name
    nodes, edges = [], []
    for kind, head, members, text in group_ops(tape.ops, names):
        value_op = members[1] if kind == "rrule" else head
        node = source_name(names[value_op.var])
        for m in members:
            node_of[m.var] = node
        if type(head) is Input:
            style = "input"
            label = [f"{names[head.var]} {note_text(head.note) or 'f'}", type_str(head.val)]
        elif type(head) is Constant:
            style = "backward" if note_text(head.note) == "seed" else "constant"
            label = [f"{names[head.var]} = {format_value(head.val)}"] + ([note_text(head.note)] if head.note else [])
        elif type(head) is Call and head.fn in GUARDS:
            style = "guard"
            label = [text]
        elif type(head) is Call and head.fn is accum:
            style = "accumulate"
            label = [f"{names[head.var]} = accum", named_note(head.note, names)]
        else:
            style = "backward" if backward_from is not None and head.id > backward_from else "forward"
            label = [node_text(kind, text.split("::")[0])]
            if kind == "pullback":
                label.append(named_note(head.note, names))
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


_RRULE = re.compile(r"^(%\d+), pb%\d+ = rrule\(([^,()]+)(?:, )?(.*)\)$")


def node_text(kind, text):
    """A node's first line as the user's call reads: ``%4 = multiply(%3, %3)`` for the rrule call
    ``%4, pb%4 = rrule(multiply, %3, %3)``; a pullback call as the compact dump writes it,
    ``_, %8, %9 = pb%6(%7)``."""
    m = _RRULE.match(text) if kind == "rrule" else None
    if m is None:
        return text
    return f"{m.group(1)} = {m.group(2)}({m.group(3)})"

"""Pictures of tapes: Graphviz DOT text (no dependency), rendered when the `dot` program exists.

Forward ops are blue boxes, backward ops (the seed, pullback calls and their tangent reads)
orange boxes, accumulations red diamonds, inputs green ellipses, guards grey hexagons. An
rrule and its two reads, or a pullback call and its reads, are drawn as one node, as in the
compact dump. Edges run from the op that makes a value to the ops that use it.
"""
from __future__ import annotations

import shutil
import subprocess

from ..errors import type_str
from ..program.guards import GUARDS
from .printing import format_value, group_ops
from ..tangents import accum
from ..tape import Call, Constant, Input, Variable, note_text

__all__ = ["to_dot", "render", "draw", "Drawing"]

_STYLE = {
    "input": 'shape=ellipse, style=filled, fillcolor="#d9f2d9"',
    "forward": 'shape=box, style="rounded,filled", fillcolor="#dbe8fb"',
    "backward": 'shape=box, style="rounded,filled", fillcolor="#fde3c8"',
    "accumulate": 'shape=diamond, style=filled, fillcolor="#f9c7c7"',
    "constant": 'shape=plaintext',
    "guard": 'shape=hexagon, style=filled, fillcolor="#e6e6e6"',
}


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(tape, values: bool = False, name: str = "tape") -> str:
    """The tape as Graphviz DOT text; `values` adds each node's value under its shape.

    Examples
    --------
    >>> import tapegrad
    >>> _, tape = tapegrad.trace(lambda x: x * 2.0, 3.0)
    >>> print(tapegrad.to_dot(tape))
    digraph tape {
      rankdir=TB;
      node [fontname="monospace", fontsize=10];
      n1 [label="%1 f\\nfunction lambda", shape=ellipse, style=filled, fillcolor="#d9f2d9"];
      n2 [label="%2 x\\nfloat64", shape=ellipse, style=filled, fillcolor="#d9f2d9"];
      n3 [label="%3 = multiply(%2, 2.0)\\nfloat64", shape=box, style="rounded,filled", fillcolor="#dbe8fb"];
      n2 -> n3;
    }
    """
    backward_from = None
    for op in tape.ops:
        if type(op) is Constant and note_text(op.note) == "seed":
            backward_from = op.id
            break
    node_of = {}  # Variable -> node name
    lines = [f"digraph {name} {{", "  rankdir=TB;", '  node [fontname="monospace", fontsize=10];']
    edges = []
    for kind, head, members, text in group_ops(tape.ops):
        node = f"n{head.id}"
        for m in members:
            node_of[m.var] = node
        value_op = members[1] if kind == "rrule" else head
        if type(head) is Input:
            style = "input"
            label = f"{head.var} {note_text(head.note) or 'f'}\\n{type_str(head.val)}"
        elif type(head) is Constant:
            style = "backward" if note_text(head.note) == "seed" else "constant"
            label = f"{head.var} = {format_value(head.val)}" + (f"\\n{note_text(head.note)}" if head.note else "")
        elif type(head) is Call and head.fn in GUARDS:
            style = "guard"
            label = text
        elif type(head) is Call and head.fn is accum:
            style = "accumulate"
            label = f"{head.var} = accum\\n{note_text(head.note)}"
        else:
            style = "backward" if backward_from is not None and head.id > backward_from else "forward"
            label = text.split("::")[0] + (f"\\n{type_str(value_op.val)}" if kind != "pullback" else "")
            if kind == "pullback":
                label += f"\\n{note_text(head.note)}"
        if values and kind == "pullback":
            label += "\\n= " + ", ".join(format_value(m.val) for m in members[1:])
        elif values and type(head) not in (Input, Constant):
            label += f"\\n= {format_value(value_op.val)}"
        lines.append(f'  {node} [label="{_escape(label).replace(chr(92) * 2 + "n", chr(92) + "n")}", {_STYLE[style]}];')
        seen = set()
        for m in members:
            if type(m) is not Call:
                continue
            used = [m.fn] + list(m.args) + list((m.kwargs or {}).values())
            for a in _flat(used):
                src = node_of.get(a)
                if src is not None and src != node and (src, node) not in seen:
                    seen.add((src, node))
                    edges.append(f"  {src} -> {node};")
    return "\n".join(lines + edges + ["}"])


def _flat(items):
    for a in items:
        if type(a) is Variable:
            yield a
        elif type(a) in (list, tuple):
            yield from _flat(a)


def render(tape, path=None, format: str = "svg", values: bool = False):
    """Render with Graphviz's `dot`: write `path` if given, and return the image (str for svg, bytes otherwise)."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "the Graphviz program `dot` is not installed; install it (apt-get install graphviz, "
            "brew install graphviz) or use tapegrad.to_dot(tape) and render the text elsewhere"
        )
    out = subprocess.run([exe, f"-T{format}"], input=to_dot(tape, values).encode(),
                         capture_output=True, check=True).stdout
    if path is not None:
        with open(path, "wb") as fh:
            fh.write(out)
    return out.decode() if format == "svg" else out


class Drawing:
    """A tape drawn for a notebook: SVG when `dot` is installed, the text dump when not."""

    def __init__(self, tape, values: bool = False):
        self.tape = tape
        self.values = values

    def _repr_svg_(self):
        if shutil.which("dot") is None:
            return None  # the notebook falls back to the text
        return render(self.tape, values=self.values)

    def __repr__(self):
        return repr(self.tape)

    def _repr_html_(self):
        if shutil.which("dot") is not None:
            return None
        return self.tape._repr_html_()


def draw(tape, values: bool = False) -> Drawing:
    """Show a tape as a picture in a notebook (SVG through Graphviz, the text dump without it)."""
    return Drawing(tape, values)

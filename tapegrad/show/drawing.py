"""Pictures of tapes: Graphviz DOT text (no dependency), rendered when the `dot` program exists,
and tapegrad's own SVG (`tapegrad.show.svg`) where it does not.

Forward ops are blue boxes, backward ops (the seed, pullback calls and their tangent reads)
orange boxes, accumulations red diamonds, inputs green ellipses, guards grey hexagons. An
rrule and its two reads, or a pullback call and its reads, are drawn as one node, as in the
compact dump. Edges run from the op that makes a value to the ops that use it.
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np

from .graph import graph
from .printing import tape_of
from .svg import to_svg

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
    >>> print(tapegrad.show.to_dot(tape))
    digraph tape {
      rankdir=TB;
      node [fontname="monospace", fontsize=10];
      v1 [label="%1 f\\nfunction lambda", shape=ellipse, style=filled, fillcolor="#d9f2d9"];
      v2 [label="%2 x\\nfloat64", shape=ellipse, style=filled, fillcolor="#d9f2d9"];
      v3 [label="%3 = multiply(%2, 2.0)\\nfloat64", shape=box, style="rounded,filled", fillcolor="#dbe8fb"];
      v2 -> v3;
    }
    """
    nodes, edges = graph(tape_of(tape, "to_dot"), values)
    lines = [f"digraph {name} {{", "  rankdir=TB;", '  node [fontname="monospace", fontsize=10];']
    for node, style, label in nodes:
        text = "\\n".join(_escape(part) for part in label)
        lines.append(f'  {node} [label="{text}", {_STYLE[style]}];')
    lines += [f"  {src} -> {dst};" for src, dst in edges]
    return "\n".join(lines + ["}"])


def render(tape, path=None, format: str = "svg", values: bool = False):
    """Render with Graphviz's `dot`: write `path` if given, and return the image (str for svg, bytes otherwise)."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "the Graphviz program `dot` is not installed; install it (apt-get install graphviz, "
            "brew install graphviz) or use tapegrad.show.to_dot(tape) and render the text elsewhere"
        )
    out = subprocess.run([exe, f"-T{format}"], input=to_dot(tape, values).encode(),
                         capture_output=True, check=True).stdout
    if path is not None:
        with open(path, "wb") as fh:
            fh.write(out)
    return out.decode() if format == "svg" else out


class Drawing:
    """A tape's picture: shown in a notebook, saved to a file.

    `engine` "auto" uses Graphviz where its `dot` program is installed (the nicer layout) and
    tapegrad's own SVG (`tapegrad.show.to_svg`) where not; "graphviz" and "svg" choose one.
    """

    def __init__(self, tape, values: bool = True, engine: str = "auto"):
        self.tape = tape_of(tape, "draw")
        if not isinstance(values, (bool, np.bool_)) or engine not in ("auto", "graphviz", "svg"):
            raise ValueError(
                f"draw(tape, values=True, engine='auto'): values is True or False and engine 'auto', "
                f"'graphviz' or 'svg', not {values!r} and {engine!r} (arguments of the function "
                f"are given to tapegrad.trace or tapegrad.pullback, which record the tape)")
        self.values = values
        self.engine = engine

    def _uses_graphviz(self) -> bool:
        return self.engine == "graphviz" or (self.engine == "auto" and shutil.which("dot") is not None)

    def svg(self) -> str:
        """The picture as SVG text."""
        if self._uses_graphviz():
            return render(self.tape, values=self.values)
        return to_svg(self.tape, values=self.values)

    def _repr_svg_(self):
        return self.svg()

    def __repr__(self):
        return repr(self.tape)

    def save(self, path) -> None:
        """Write the picture to `path`: SVG for a ``.svg`` name; other formats (``.png``, ``.pdf``) through Graphviz."""
        path = str(path)
        if path.lower().endswith(".svg"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.svg())
            return
        if shutil.which("dot") is None:
            raise RuntimeError(
                f"saving {path!r} needs the Graphviz program `dot` for its format; save it as .svg "
                "(drawn by tapegrad itself, opened by any browser), or install Graphviz "
                "(apt-get install graphviz, brew install graphviz)")
        render(self.tape, path, format=path.rsplit(".", 1)[-1].lower(), values=self.values)


def draw(tape, values: bool = True, engine: str = "auto") -> Drawing:
    """A picture of a tape (or of a pullback's, after it has run), with each node's value and type:
    in a notebook, or ``.save("tape.svg")``.

    Forward ops, backward ops and accumulations have their own shapes and colours. Graphviz
    draws it where installed; tapegrad's own SVG layout everywhere else (see `Drawing`).

    Examples
    --------
    >>> import tapegrad
    >>> _, tape = tapegrad.trace(lambda x: x * 2.0, 3.0)
    >>> tapegrad.draw(tape, engine="svg").svg().count("<ellipse")  # the legend's, f and x
    3
    """
    return Drawing(tape, values, engine)

"""Pictures of tapes drawn as SVG by tapegrad itself: no Graphviz, no plotting library.

The layout is layered, as Graphviz's `dot` would do it (`tapegrad.show.layout`: layers,
a dummy slot for each layer an edge crosses, barycentre ordering, routes that never run
under a box). Each node is a shape with its text in a monospace font, whose width is known
from the number of characters; a long line is wrapped, and elided past three lines.

Why SVG written here rather than a matplotlib figure: it needs nothing beyond tapegrad's own
dependencies, opens in any browser and notebook and on any code host, and is plain text, so
it is the same on every machine and tests can read it.

Forward ops are blue rounded boxes, backward ops (the seed, pullbacks and their reads) orange
boxes with a dashed border, accumulations red diamonds, inputs green ellipses, guards grey
hexagons, constants plain text; edges into backward ops are orange.
"""
from __future__ import annotations

from html import escape

from .graph import graph
from .printing import tape_of
from .layout import layered_layout

__all__ = ["to_svg"]

FONT = 11  # px
CHAR = 0.62 * FONT  # the advance of one monospace character, with a little room
LINE = 1.3 * FONT
PAD_X, PAD_Y = 14, 6
GAP_X, GAP_Y = 18, 34
MARGIN = 12

_FILL = {"input": "#d9f2d9", "forward": "#dbe8fb", "backward": "#fde3c8", "accumulate": "#f9c7c7",
         "constant": "none", "guard": "#e6e6e6"}
_STROKE = {"input": "#3c8c3c", "forward": "#3d6fb6", "backward": "#d07a1f", "accumulate": "#c0392b",
           "constant": "none", "guard": "#777777"}
_EDGE = {"forward": "#555555", "backward": "#d07a1f"}
_LEGEND = [("input", "input"), ("forward", "forward op"), ("backward", "backward op"),
           ("accumulate", "accumulation")]


def _size(kind, label):
    w = max(len(line) for line in label) * CHAR + 2 * PAD_X
    h = len(label) * LINE + 2 * PAD_Y
    if kind == "accumulate":  # the text fits inside a diamond twice its box
        w, h = w * 1.5, h * 1.6
    elif kind == "input":
        w, h = w * 1.2, h * 1.15
    return w, h


#: a label line longer than this is wrapped at a comma or space (a value line elided with …)
WRAP = 48
#: at most this many lines of one wrapped label line; the rest is elided
MAX_LINES = 3


def _wrap(line: str, width: int = WRAP):
    """`line` in lines of at most `width` characters, broken after ", " or " " where it can;
    past `MAX_LINES` lines the text is elided with "…" (the node's tooltip has it whole)."""
    out = []
    rest = line
    while len(rest) > width and len(out) < MAX_LINES - 1:
        cut = max(rest.rfind(", ", 0, width - 1) + 2, rest.rfind(" ", 0, width) + 1)
        if cut < width // 3:  # no good break: cut inside a word
            cut = width
        out.append(rest[:cut].rstrip())
        rest = "  " + rest[cut:].lstrip()
    if len(rest) > width:
        rest = rest[:width - 1].rstrip() + "…"
    out.append(rest)
    return out


def _lines(label):
    return [part for line in label for part in _wrap(line)]


def _shape(kind, cx, top, w, h):
    fill, stroke = _FILL[kind], _STROKE[kind]
    style = f'fill="{fill}" stroke="{stroke}" stroke-width="1.2"'
    if kind == "input":
        return f'<ellipse cx="{cx:.1f}" cy="{top + h / 2:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" {style}/>'
    if kind == "accumulate":
        pts = [(cx, top), (cx + w / 2, top + h / 2), (cx, top + h), (cx - w / 2, top + h / 2)]
    elif kind == "guard":
        d = h / 2
        pts = [(cx - w / 2, top + d), (cx - w / 2 + d, top), (cx + w / 2 - d, top), (cx + w / 2, top + d),
               (cx + w / 2 - d, top + h), (cx - w / 2 + d, top + h)]
    else:
        dash = ' stroke-dasharray="5,3"' if kind == "backward" else ""
        if kind == "constant":
            return ""
        return (f'<rect x="{cx - w / 2:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" '
                f'{style}{dash}/>')
    points = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
    return f'<polygon points="{points}" {style}/>'


def _text(cx, top, h, label):
    first = top + h / 2 - (len(label) - 1) * LINE / 2 + FONT * 0.35
    rows = [f'<text x="{cx:.1f}" y="{first + i * LINE:.1f}">{escape(line)}</text>' for i, line in enumerate(label)]
    return "\n".join(rows)


def to_svg(tape, values: bool = True) -> str:
    """The tape as an SVG picture (text), laid out in layers; `values` shows each node's value.

    The layout (`tapegrad.show.layout`) gives every edge that spans layers a slot of its own
    in each layer it crosses, so no edge runs under a box; long labels are wrapped, and
    elided past three lines (the node's tooltip, its ``<title>``, holds them whole).

    Examples
    --------
    >>> import tapegrad
    >>> _, back = tapegrad.pullback(lambda x: x * x, 3.0)
    >>> _ = back(1.0)
    >>> svg = tapegrad.show.to_svg(back.tape)
    >>> svg.count("<polygon")  # diamonds: the legend's and the accumulation of d%2
    2
    """
    nodes, edges = graph(tape_of(tape, "to_svg"), values)
    lines = {n: _lines(label) for n, _, label in nodes}
    kinds = {n: k for n, k, _ in nodes}
    legend_h = LINE + 2 * PAD_Y + GAP_Y / 2
    boxes, routes, width, height = layered_layout(
        [(n, k, _size(k, lines[n])) for n, k, _ in nodes], edges, GAP_X, GAP_Y, top=MARGIN + legend_h)
    legend_w = sum(len(name) * CHAR * (1.3 if kind == "accumulate" else 1) + 2 * PAD_X + GAP_X
                   for kind, name in _LEGEND)
    width = max(width, legend_w) + 2 * MARGIN
    height = height + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
           f'font-size="{FONT}" text-anchor="middle">',
           "<defs>" + "".join(
               f'<marker id="arrow-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
               f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
               for name, colour in _EDGE.items()) + "</defs>",
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
    # the legend: one small sample of each kind along the top
    left = MARGIN
    for kind, name in _LEGEND:
        w, h = len(name) * CHAR + 2 * PAD_X, LINE + 2 * PAD_Y
        if kind == "accumulate":
            w *= 1.3
        out.append(_shape(kind, left + w / 2, MARGIN, w, h))
        out.append(_text(left + w / 2, MARGIN, h, [name]))
        left += w + GAP_X
    out.append('<g class="edges" fill="none">')
    for a, b in edges:
        name = "backward" if kinds[b] in ("backward", "accumulate") else "forward"
        d = " ".join(f"{'M' if i == 0 else 'L'}{x + MARGIN:.1f},{y:.1f}" for i, (x, y) in enumerate(routes[(a, b)]))
        out.append(f'<path class="edge" data-from="{a}" data-to="{b}" d="{d}" stroke="{_EDGE[name]}" '
                   f'stroke-width="1" marker-end="url(#arrow-{name})"/>')
    out.append("</g>")
    out.append('<g class="nodes">')
    for n, kind, label in nodes:
        cx, top, w, h = boxes[n]
        cx += MARGIN
        out.append(f'<g class="node" data-name="{n}" data-box="{cx - w / 2:.1f} {top:.1f} {w:.1f} {h:.1f}">'
                   f'<title>{escape(chr(10).join(label))}</title>')
        out.append(_shape(kind, cx, top, w, h))
        out.append(_text(cx, top, h, lines[n]))
        out.append("</g>")
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(line for line in out if line)

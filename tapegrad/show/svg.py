"""Pictures of tapes drawn as SVG by tapegrad itself: no Graphviz, no plotting library.

The layout is layered, as Graphviz's `dot` would do it: a node sits one layer below the
lowest of the nodes it reads from (a constant just above its first reader), and the nodes of
a layer are ordered by the mean position of their sources, a few sweeps down, so that most
edges run straight. Each node is a shape with its text in a monospace font, whose width is
known from the number of characters.

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


def _layers(nodes, edges):
    """{node: layer}: below every source; a node without sources (a constant) just above its first reader."""
    sources = {n: [] for n, _, _ in nodes}
    readers = {n: [] for n, _, _ in nodes}
    for a, b in edges:
        sources[b].append(a)
        readers[a].append(b)
    layer = {}
    for n, kind, _ in nodes:  # tape order: sources come first
        layer[n] = 1 + max((layer[s] for s in sources[n]), default=-1)
    for n, kind, _ in nodes:
        if not sources[n] and kind != "input" and readers[n]:
            layer[n] = max(0, min(layer[r] for r in readers[n]) - 1)
    return layer, sources


def _place(nodes, edges):
    """{node: (x centre, y top, width, height)} and the picture's size."""
    sizes = {n: _size(k, label) for n, k, label in nodes}
    layer, sources = _layers(nodes, edges)
    rows = {}
    for n, _, _ in nodes:
        rows.setdefault(layer[n], []).append(n)
    order = [rows[i] for i in sorted(rows)]
    x = {}

    def pack(row):
        """Lay `row` out left to right, each node as near its wanted centre as the ones before allow."""
        left = 0.0
        for n in row:
            w = sizes[n][0]
            centre = max(x.get(n, left + w / 2), left + w / 2)
            x[n] = centre
            left = centre + w / 2 + GAP_X

    for _ in range(3):  # sweeps: order each row by the mean position of its nodes' sources
        for row in order:
            wanted = {n: sum(x[s] for s in sources[n] if s in x) / len([s for s in sources[n] if s in x])
                      for n in row if any(s in x for s in sources[n])}
            row.sort(key=lambda n: wanted.get(n, x.get(n, 0.0)))
            for n in row:
                if n in wanted:
                    x[n] = wanted[n]
            pack(row)
    width = max(x[n] + sizes[n][0] / 2 for n in x) + 2 * MARGIN
    legend_h = LINE + 2 * PAD_Y + GAP_Y / 2
    y, boxes = MARGIN + legend_h, {}
    for row in order:
        h = max(sizes[n][1] for n in row)
        for n in row:
            w, hn = sizes[n]
            boxes[n] = (x[n] + MARGIN, y + (h - hn) / 2, w, hn)
        y += h + GAP_Y
    return boxes, width, y - GAP_Y + MARGIN


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

    Examples
    --------
    >>> import tapegrad
    >>> _, back = tapegrad.pullback(lambda x: x * x, 3.0)
    >>> _ = back(1.0)
    >>> svg = tapegrad.show.to_svg(back.tape)
    >>> svg.count("<polygon")  # diamonds: the legend's and the accumulation of d%2
    2
    """
    nodes, edges = graph(tape, values)
    boxes, width, height = _place(nodes, edges)
    kinds = {n: k for n, k, _ in nodes}
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
    out.append("<g>")
    for a, b in edges:
        ax, atop, _, ah = boxes[a]
        bx, btop, _, _ = boxes[b]
        name = "backward" if kinds[b] in ("backward", "accumulate") else "forward"
        out.append(f'<line x1="{ax:.1f}" y1="{atop + ah:.1f}" x2="{bx:.1f}" y2="{btop:.1f}" '
                   f'stroke="{_EDGE[name]}" stroke-width="1" marker-end="url(#arrow-{name})"/>')
    for n, kind, label in nodes:
        cx, top, w, h = boxes[n]
        out.append(_shape(kind, cx, top, w, h))
        out.append(_text(cx, top, h, label))
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(line for line in out if line)

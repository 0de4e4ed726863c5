"""A layered layout of a graph whose edges never pass under a box (Sugiyama's method).

1. Layers: a node sits one layer below the lowest of its sources; a node without sources
   that is not an input (a constant) sits just above its first reader.
2. Dummies: an edge that spans several layers gets one dummy node in each layer it crosses,
   a slot of its own in that layer's row, so that no box can sit where it passes.
3. Order: the nodes of each row are sorted by the mean position of their neighbours in the
   row above, then in the row below, a few sweeps each way (the barycentre heuristic), which
   removes most crossings of edges with edges.
4. Coordinates: each node is pulled to the mean x of its neighbours, packed left to right and
   right to left without overlap, and the two packings averaged (both keep the order and
   the gaps, so their mean does too).
5. Routes: an edge leaves its source's bottom straight down to the bottom of the source's
   row, crosses each gap between rows as one straight segment, runs straight down through a
   row at its dummy's slot, and enters its target straight down from the top of the
   target's row. Inside a row it is only ever below its own source, above its own target or
   in its own slot; between rows there are no boxes. So no edge runs under a box.
"""
from __future__ import annotations

__all__ = ["layered_layout", "DUMMY_WIDTH"]

DUMMY_WIDTH = 6.0


def _layers(names, kinds, edges):
    sources = {n: [] for n in names}
    readers = {n: [] for n in names}
    for a, b in edges:
        sources[b].append(a)
        readers[a].append(b)
    layer = {}
    for n in names:  # tape order: sources come first
        layer[n] = 1 + max((layer[s] for s in sources[n]), default=-1)
    for n in names:
        if not sources[n] and kinds[n] != "input" and readers[n]:
            layer[n] = max(0, min(layer[r] for r in readers[n]) - 1)
    return layer


def _order(rows, up, down, sweeps=4):
    """Sort each row by the barycentre of its neighbours' positions, down then up, `sweeps` times."""
    index = {n: i for row in rows for i, n in enumerate(row)}

    def sort(row, neighbours):
        def key(n):
            near = neighbours[n]
            return (sum(index[m] for m in near) / len(near)) if near else index[n]
        row.sort(key=key)
        for i, n in enumerate(row):
            index[n] = i

    for _ in range(sweeps):
        for row in rows[1:]:
            sort(row, up)
        for row in reversed(rows[:-1]):
            sort(row, down)


def _pack(row, width, wanted, gap):
    """x centres for `row` in order, as near `wanted` as the gaps allow: the mean of a packing
    from the left and one from the right."""
    n = len(row)
    left, right = [0.0] * n, [0.0] * n
    edge = float("-inf")
    for i, v in enumerate(row):
        left[i] = max(wanted[v], edge + width[v] / 2)
        edge = left[i] + width[v] / 2 + gap
    edge = float("inf")
    for i in range(n - 1, -1, -1):
        v = row[i]
        right[i] = min(wanted[v], edge - width[v] / 2)
        edge = right[i] - width[v] / 2 - gap
    return [(a + b) / 2 for a, b in zip(left, right)]


def layered_layout(nodes, edges, gap_x=18.0, gap_y=34.0, top=0.0, rounds=6):
    """Boxes and edge routes for `nodes` ``[(name, kind, (width, height)), ...]`` (in tape order)
    and `edges` ``[(src, dst), ...]``.

    Returns ``(boxes, routes, width, height)``: `boxes` maps a name to ``(x centre, y top, w,
    h)``, `routes` maps each edge to its polyline ``[(x, y), ...]`` from the source's bottom to
    the target's top; width and height span everything, from x = 0 and y = `top`.
    """
    names = [n for n, _, _ in nodes]
    kinds = {n: k for n, k, _ in nodes}
    size = {n: s for n, _, s in nodes}
    layer = _layers(names, kinds, edges)
    chains = {}
    for a, b in edges:
        chain = []
        for k in range(layer[a] + 1, layer[b]):
            d = ("dummy", a, b, k)
            layer[d] = k
            size[d] = (DUMMY_WIDTH, 0.0)
            chain.append(d)
        chains[(a, b)] = chain
    up = {n: [] for n in layer}
    down = {n: [] for n in layer}
    for (a, b), chain in chains.items():
        path = [a] + chain + [b]
        for s, t in zip(path, path[1:]):
            up[t].append(s)
            down[s].append(t)
    rows = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    leaving = {n: [] for n in names}
    for a, b in chains:
        leaving[a].append(b)
    for n in names:  # a row starts in tape order, dummies after the node they leave
        rows[layer[n]].append(n)
        for b in leaving[n]:
            for d in chains[(n, b)]:
                rows[layer[d]].append(d)
    rows = [row for row in rows if row]
    _order(rows, up, down)
    width = {n: size[n][0] for n in layer}
    x = {}
    for row in rows:
        x.update(zip(row, _pack(row, width, {n: 0.0 for n in row}, gap_x)))
    for _ in range(rounds):  # pull each node to its neighbours, down then up
        for pass_rows, near in ((rows[1:], up), (list(reversed(rows[:-1])), down)):
            for row in pass_rows:
                wanted = {n: (sum(x[m] for m in near[n]) / len(near[n]) if near[n] else x[n]) for n in row}
                x.update(zip(row, _pack(row, width, wanted, gap_x)))
    shift = -min((x[n] - width[n] / 2 for n in x), default=0.0)
    boxes, band = {}, {}
    y = top
    for row in rows:
        h = max(size[n][1] for n in row)
        for n in row:
            w, hn = size[n]
            boxes[n] = (x[n] + shift, y + (h - hn) / 2, w, hn)
        band[layer[row[0]]] = (y, y + h)
        y += h + gap_y
    routes = {}
    for (a, b), chain in chains.items():
        ax, atop, _, ah = boxes[a]
        bx, btop, _, _ = boxes[b]
        points = [(ax, atop + ah), (ax, band[layer[a]][1])]
        for d in chain:
            dx = boxes[d][0]
            points += [(dx, band[layer[d]][0]), (dx, band[layer[d]][1])]
        points += [(bx, band[layer[b]][0]), (bx, btop)]
        routes[(a, b)] = [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
    real = {n: boxes[n] for n in names}
    total_w = max((bx + w / 2 for bx, _, w, _ in boxes.values()), default=0.0)
    return real, routes, total_w, (y - gap_y if rows else top)

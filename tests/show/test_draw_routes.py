"""tapegrad.show.layout and to_svg: edges never pass under a box, long labels are wrapped or elided.

Each picture is checked geometrically: every segment of every edge's route is tested against
every node's box (its shape's bounding box) other than the edge's own two ends.
"""
import re
import xml.dom.minidom

import numpy as np
import pytest

import tapegrad
from tapegrad.show.layout import layered_layout
from tapegrad.show.svg import MAX_LINES, WRAP, _wrap
from show_programs import small_mlp


def _segment_hits_box(p, q, box, inset=0.5):
    """True if the segment p-q meets the inside of `box` (x, y, w, h) shrunk by `inset` (Liang-Barsky)."""
    x0, y0, w, h = box
    xmin, xmax, ymin, ymax = x0 + inset, x0 + w - inset, y0 + inset, y0 + h - inset
    if xmin >= xmax or ymin >= ymax:
        return False
    (px, py), (qx, qy) = p, q
    dx, dy = qx - px, qy - py
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, px - xmin), (dx, xmax - px), (-dy, py - ymin), (dy, ymax - py)):
        if pk == 0:
            if qk < 0:
                return False
            continue
        t = qk / pk
        if pk < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def crossings(svg):
    """[(edge, node), ...]: each edge segment that passes under a node other than its ends."""
    dom = xml.dom.minidom.parseString(svg)
    boxes = {}
    for g in dom.getElementsByTagName("g"):
        if g.getAttribute("class") == "node":
            boxes[g.getAttribute("data-name")] = tuple(float(v) for v in g.getAttribute("data-box").split())
    found = []
    for path in dom.getElementsByTagName("path"):
        if path.getAttribute("class") != "edge":
            continue
        a, b = path.getAttribute("data-from"), path.getAttribute("data-to")
        points = [(float(x), float(y)) for x, y in re.findall(r"[ML]([-\d.]+),([-\d.]+)", path.getAttribute("d"))]
        assert len(points) >= 2
        for p, q in zip(points, points[1:]):
            for name, box in boxes.items():
                if name not in (a, b) and _segment_hits_box(p, q, box):
                    found.append(((a, b), name))
    return found


def test_the_check_finds_a_segment_under_a_box():
    """The geometric check itself: a segment through a box is found, one beside it or ending on its edge is not."""
    box = (10.0, 10.0, 20.0, 10.0)
    assert _segment_hits_box((0, 15), (40, 15), box)
    assert _segment_hits_box((20, 0), (20, 30), box)
    assert not _segment_hits_box((0, 0), (40, 5), box)
    assert not _segment_hits_box((20, 0), (20, 10), box)  # ends on the top edge: an arrow into it


def readme_tape():
    _, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    return back.tape


def notebook07_tape():
    """The tape notebook 07 draws: the pullback of a small network's loss."""
    loss, params = small_mlp()
    _, back = tapegrad.pullback(loss, params)
    back(1.0)
    return back.tape


def mlp_tape(layers=4):
    """A deeper MLP, in a loop, with a softplus, a residual add and the input used twice."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    params = [(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(layers)]

    def loss(params):
        h = X
        for W, b in params:
            h = np.log1p(np.exp(h @ W + b)) + 0.5 * h
        return np.sum(h * h) / h.size

    _, back = tapegrad.pullback(loss, params)
    back(1.0)
    return back.tape


@pytest.mark.parametrize("make", [readme_tape, notebook07_tape, mlp_tape], ids=lambda f: f.__name__)
@pytest.mark.parametrize("values", [True, False])
def test_no_edge_passes_under_a_box(make, values):
    """In tapegrad's own SVG of the README's example, notebook 07's network and a deeper MLP, no
    segment of any edge meets a box other than the two it joins."""
    svg = tapegrad.show.to_svg(make(), values=values)
    assert svg.count('<path class="edge"') > 5
    assert crossings(svg) == []


def test_no_edge_passes_under_a_box_of_a_trace():
    """The forward tape alone (what trace records) is drawn with the same guarantee."""
    _, tape = tapegrad.trace(lambda a, b: a / (a + b * b), 2.0, 3.0)
    assert crossings(tapegrad.show.to_svg(tape)) == []


def test_an_edge_across_layers_takes_a_slot_in_each_layer_it_crosses():
    """An edge spanning three layers gets two dummy slots, and its route bends only at them."""
    nodes = [("a", "input", (40, 20)), ("b", "forward", (40, 20)), ("c", "forward", (40, 20)),
             ("d", "forward", (40, 20))]
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")]
    boxes, routes, width, height = layered_layout(nodes, edges)
    assert set(boxes) == {"a", "b", "c", "d"} and set(routes) == set(edges)
    long = routes[("a", "d")]
    assert long[0] == (boxes["a"][0], boxes["a"][1] + 20) and long[-1] == (boxes["d"][0], boxes["d"][1])
    assert len(long) == 6  # out of a, through each slot (top and bottom of its layer), into d
    for p, q in zip(long, long[1:]):
        for name in "bc":
            x, top, w, h = boxes[name]
            assert not _segment_hits_box(p, q, (x - w / 2, top, w, h))


def test_a_long_line_is_wrapped_at_commas_and_elided_past_three_lines():
    """A label line longer than WRAP characters breaks after a comma; past MAX_LINES it ends in …"""
    line = "= " + ", ".join(f"{x:.6f}" for x in np.linspace(0, 1, 40))
    parts = _wrap(line)
    assert len(parts) == MAX_LINES and all(len(p) <= WRAP for p in parts)
    assert parts[0].endswith(",") and parts[-1].endswith("…")
    assert _wrap("%4 = multiply(%3, %3)") == ["%4 = multiply(%3, %3)"]


def test_long_values_stay_inside_their_box_and_whole_in_the_tooltip():
    """A node's text lines are no wider than its box; its <title> holds the label unshortened."""
    _, tape = tapegrad.trace(lambda x: np.sin(x) * 2.0, np.linspace(0, 1, 5))
    svg = tapegrad.show.to_svg(tape)
    dom = xml.dom.minidom.parseString(svg)
    for g in dom.getElementsByTagName("g"):
        if g.getAttribute("class") != "node":
            continue
        _, _, w, _ = (float(v) for v in g.getAttribute("data-box").split())
        for t in g.getElementsByTagName("text"):
            assert len(t.firstChild.data) * tapegrad.show.svg.CHAR <= w
    titles = [t.firstChild.data for t in dom.getElementsByTagName("title")]
    assert any(len(line) > WRAP and line.startswith("= [0.") for t in titles for line in t.split("\n"))

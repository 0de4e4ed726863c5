"""tapegrad.show.drawing and svg: DOT text of tapes, rendered by Graphviz when it is there, tapegrad's own SVG when not."""
import re
import shutil
import xml.dom.minidom

import numpy as np
import pytest

import tapegrad


def test_dot_tells_forward_backward_and_accumulation_apart():
    """Forward nodes, backward nodes and accumulations get their own shapes and colours."""
    _, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    dot = tapegrad.show.to_dot(back.tape, values=True)
    assert dot.count('fillcolor="#dbe8fb"') == 3  # rrule calls
    assert dot.count('fillcolor="#fde3c8"') == 4  # seed and three pullbacks
    assert dot.count("shape=diamond") == 2  # accumulations of a and b
    assert '= 0.0743801652892562"' in dot and "v12 [label=\"%12 = accum\\naccumulate d%2" in dot


def test_picture_labels_read_as_the_users_calls():
    """An rrule node reads as the call (its pullback's name is an edge), a pullback node as the
    compact dump writes it, named as every view names it (tapegrad.numbering)."""
    _, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    dot = tapegrad.show.to_dot(back.tape)
    assert '  v4 [label="%4 = multiply(%3, %3)\\nfloat64", ' in dot
    assert '  dx6 [label="_, %8, %9 = pb%6(%7)\\npullback for %6", ' in dot
    assert "rrule" not in dot and "[%" not in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_render_svg_when_dot_is_installed():
    """With Graphviz, render returns SVG and draw() shows it in notebooks."""
    _, tape = tapegrad.trace(lambda x: np.sin(x) * 2, 1.0)
    svg = tapegrad.show.render(tape)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert tapegrad.draw(tape, values=False)._repr_svg_() == svg


def test_render_without_dot_names_the_fix(monkeypatch):
    """Without Graphviz, render() says how to install it or where else to render the DOT text."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    _, tape = tapegrad.trace(lambda x: np.sin(x) * 2, 1.0)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        tapegrad.show.render(tape)


def scalar_gradient_tape():
    _, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    return back.tape


def test_svg_picture_tells_forward_backward_and_accumulation_apart():
    """tapegrad's own SVG: ellipses for inputs, blue boxes forward, dashed orange boxes backward,
    red diamonds for accumulations, each with its value and type; one edge per use."""
    tape = scalar_gradient_tape()
    svg = tapegrad.show.to_svg(tape)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and svg.endswith("</svg>")
    assert svg.count("<ellipse") == 1 + 3  # the legend's sample and f, a, b
    assert svg.count('fill="#dbe8fb"') == 1 + 3  # legend, multiply, add, divide
    assert svg.count('stroke-dasharray="5,3"') == 1 + 4  # legend, the seed and three pullbacks
    assert svg.count("<polygon") == 1 + 2  # legend, the accumulations of d%2 and d%3
    assert svg.count('<path class="edge"') == len(tapegrad.show.graph.graph(tape)[1])
    assert ">%12 = accum</text>" in svg and ">= 0.0743801652892562</text>" in svg
    assert ">%3 b</text>" in svg and ">float64</text>" in svg


def test_svg_picture_shows_shapes_of_arrays_and_escapes_text():
    """An array's node shows its dtype and shape; text is escaped for SVG (a < in a note stays text)."""
    _, tape = tapegrad.trace(lambda p: np.sum(p["x<y"] < 0.5) + np.sum(p["x<y"] ** 2), {"x<y": np.ones((2, 3))})
    svg = tapegrad.show.to_svg(tape)
    assert ">float64[2,3]</text>" in svg and ">bool[2,3]</text>" in svg and ">%3 = less(%2, 0.5)</text>" in svg
    assert ">%2 p[&quot;x&lt;y&quot;]</text>" in svg
    xml.dom.minidom.parseString(svg)  # well-formed


def test_svg_layout_puts_every_node_below_its_sources():
    """In the layered layout each edge runs downwards: every segment of its route goes down or
    straight across, never up, and it ends lower than it starts."""
    tape = scalar_gradient_tape()
    for d in re.findall(r'<path class="edge" [^>]* d="([^"]+)"', tapegrad.show.to_svg(tape)):
        ys = [float(y) for y in re.findall(r"[ML][\d.]+,([\d.]+)", d)]
        assert ys == sorted(ys) and ys[-1] > ys[0]


def test_draw_without_graphviz_shows_and_saves_the_svg(monkeypatch, tmp_path):
    """Without Graphviz, draw() shows tapegrad's SVG in a notebook and saves it to a .svg file;
    a .png needs Graphviz and the error says so."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    tape = scalar_gradient_tape()
    d = tapegrad.draw(tape)
    assert d._repr_svg_() == tapegrad.show.to_svg(tape) and repr(d) == str(tape)
    d.save(tmp_path / "tape.svg")
    assert (tmp_path / "tape.svg").read_text(encoding="utf-8") == tapegrad.show.to_svg(tape)
    with pytest.raises(RuntimeError, match=r"save it as \.svg"):
        d.save(tmp_path / "tape.png")
    with pytest.raises(ValueError, match=r"values is True or False and engine 'auto', 'graphviz' or 'svg', "
                                         r"not True and 'matplotlib'"):
        tapegrad.draw(tape, engine="matplotlib")


def test_a_pullback_is_drawn_as_its_tape_and_a_function_is_refused_with_the_way():
    """draw, to_svg, to_dot and format_tape take a pullback that has run as its tape; given a
    function (and its arguments, as explain takes them) they say how to record a tape; a
    function's argument in values' place is refused naming both parameters."""
    f = lambda a, b: a / (a + b * b)  # noqa: E731
    _, back = tapegrad.pullback(f, 2.0, 3.0)
    back()
    assert tapegrad.draw(back, engine="svg").svg() == tapegrad.show.to_svg(back.tape) == tapegrad.show.to_svg(back)
    assert tapegrad.show.to_dot(back) == tapegrad.show.to_dot(back.tape)
    assert tapegrad.show.format_tape(back) == tapegrad.show.format_tape(back.tape)
    way = ("shows a tape, not the function lambda: take `_, tape = tapegrad.trace(f, *args)` for the "
           "forward program, or `_, back = tapegrad.pullback(f, *args)` then `back()` and pass `back` "
           "for the forward and backward program (tapegrad.explain(f, *args) prints the gradient "
           "worked from a function and its arguments)")
    for name, call in [("draw", lambda: tapegrad.draw(f, 2.0, 3.0)), ("to_svg", lambda: tapegrad.show.to_svg(f)),
                       ("to_dot", lambda: tapegrad.show.to_dot(f)), ("format_tape", lambda: tapegrad.show.format_tape(f))]:
        with pytest.raises(TypeError) as err:
            call()
        assert str(err.value) == f"{name} {way}"
    with pytest.raises(TypeError, match=r"^to_dot shows a tape, not a float: take "):
        tapegrad.show.to_dot(3.0)
    with pytest.raises(ValueError, match=r"not 3\.0 and 'auto' \(arguments of the function are given to "
                                         r"tapegrad\.trace or tapegrad\.pullback"):
        tapegrad.draw(back, 3.0)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_draw_prefers_graphviz_when_installed():
    tape = scalar_gradient_tape()
    assert tapegrad.draw(tape, values=False)._repr_svg_() == tapegrad.show.render(tape)
    assert tapegrad.draw(tape, engine="svg")._repr_svg_() == tapegrad.show.to_svg(tape)

"""tapegrad.show.drawing: DOT text of tapes, rendered or drawn when Graphviz is there, a table when not."""
import shutil

import numpy as np
import pytest

import tapegrad


def test_dot_tells_forward_backward_and_accumulation_apart():
    """Forward nodes, backward nodes and accumulations get their own shapes and colours."""
    _, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    dot = tapegrad.to_dot(back.tape, values=True)
    assert dot.count('fillcolor="#dbe8fb"') == 3  # rrule calls
    assert dot.count('fillcolor="#fde3c8"') == 4  # seed and three pullbacks
    assert dot.count("shape=diamond") == 2  # accumulations of a and b
    assert '= 0.0743801652892562"' in dot and "n20 [label=\"%20 = accum\\naccumulate d%2" in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_render_svg_when_dot_is_installed():
    """With Graphviz, render returns SVG and draw() shows it in notebooks."""
    _, tape = tapegrad.trace(lambda x: np.sin(x) * 2, 1.0)
    svg = tapegrad.render(tape)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert tapegrad.draw(tape)._repr_svg_() == svg


def test_draw_falls_back_to_text_without_dot(monkeypatch):
    """Without Graphviz, draw() gives no SVG, an HTML table and the text dump."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    _, tape = tapegrad.trace(lambda x: np.sin(x) * 2, 1.0)
    d = tapegrad.draw(tape)
    assert d._repr_svg_() is None and repr(d) == str(tape)
    assert "<code>%3 = sin(%2)::float64</code>" in d._repr_html_()
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        tapegrad.render(tape)

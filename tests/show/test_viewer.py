"""tapegrad.show.viewer: the step-through page of a reverse sweep, checked without a browser.

(tests/show/test_viewer_browser.py drives it in headless Chromium.)
"""
import json
import re

import numpy as np
import pytest

import tapegrad
from tapegrad.numbering import numbering
from tapegrad.show import to_html, viewer, viewer_data
from tapegrad.show.cli import main


def f(a, b):
    return a / (a + b * b)


def ran(fn, *args):
    _, back = tapegrad.pullback(fn, *args)
    back(None)
    return back


def page_data(page):
    text = re.search(r'<script type="application/json" id="tapegrad-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text.replace("<\\/", "</"))


def test_the_page_needs_nothing_from_the_network():
    """One HTML document: its styles and script inline, no link, no src, no URL but the SVG namespace."""
    page = viewer(f, 2.0, 3.0).html()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<link" not in page and " src=" not in page and "@import" not in page
    assert re.findall(r"https?://", page) == []
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_the_steps_are_explains_lines_in_the_one_numbering():
    """Each step is one backward line of explain, and its value is the tape's value of the
    variable it names."""
    back = ran(f, 2.0, 3.0)
    data = viewer_data(back)
    lines = tapegrad.show.explain_text(f, 2.0, 3.0).split("\n")
    backward = lines[lines.index(next(x for x in lines if x.startswith("Backward"))) + 1:-1]
    shown = []
    for s in data["steps"]:
        if s["kind"] == "seed":
            shown.append(f"  {s['adjoint']} = {s['value']['text']}   (seed)")
        elif s["kind"] == "add":
            shown.append(f"  {s['adjoint']} += {s['formula']} = {s['value']['text']}   → {s['adjoint']} = {s['total']['text']}")
        else:
            shown.append(f"  {s['adjoint']} = {s['formula']} = {s['value']['text']}")
    assert shown == backward
    by_name = {name: var for var, name in numbering(back.tape).items()}
    for s in data["steps"]:
        assert s["value"]["data"] == [float(by_name[s["var"]].op.val)]
    assert [(s["kind"], s["target"], s["reads"]) for s in data["steps"]] == [
        ("seed", "%6", []), ("set", "%2", ["%5"]), ("set", "%5", ["%2", "%5"]), ("add", "%2", []),
        ("set", "%4", []), ("set", "%3", ["%3"]), ("add", "%3", ["%3"])]
    assert [r["name"] for r in data["forward"]] == ["%1", "%2", "%3", "%4", "%5", "%6"]
    assert data["forward"][3]["text"] == "%4 = multiply(%3, %3)"


def test_the_gradient_shown_is_the_gradient_returned():
    """The page's gradient rows hold, in full, the numbers grad returns."""
    data = viewer_data(ran(f, 2.0, 3.0))
    _, (_, da, db) = tapegrad.grad(f, 2.0, 3.0)
    assert [(g["name"], g["adjoint"], g["value"]["data"]) for g in data["gradient"]] == [
        ("a", "d%2", [da]), ("b", "d%3", [db])]


def test_arrays_show_dtype_shape_and_a_few_entries_and_keep_their_numbers():
    """An array value shows its type and at most a few entries; all its numbers are in the data."""
    x = np.arange(24.0).reshape(4, 6) / 7
    data = viewer_data(ran(lambda x: np.sum(np.sin(x) * x), x))
    step = next(s for s in data["steps"] if s["value"]["shape"] == [4, 6])
    assert step["value"]["text"].startswith("float64[4,6] [[") and "..." in step["value"]["text"]
    assert len(step["value"]["data"]) == 24
    assert data["gradient"][0]["value"]["data"] == tapegrad.gradient(lambda x: np.sum(np.sin(x) * x), x)[0].ravel().tolist()


def test_the_source_beside_it_names_values_as_the_tapes_do():
    """The gradient tape as Python names %k v<k>, and each step knows its line's name."""
    data = viewer_data(ran(f, 2.0, 3.0))
    assert data["source"][0] == "def gradient_tape(fn, a, b):"
    assert "    v4 = getitem(rr4, 0)" in data["source"]
    assert [s["tangent"] for s in data["steps"]] == ["v7", "v8", "v9", "v10", "v11", "v13", "v14"]


def test_a_traced_tape_shows_its_forward_program_alone():
    """A tape from trace has no sweep: the page shows the forward program and says so."""
    _, tape = tapegrad.trace(f, 2.0, 3.0)
    data = page_data(to_html(tape))
    assert data["steps"] == [] and data["gradient"] == []
    assert [r["text"] for r in data["forward"]][3:] == ["%4 = multiply(%3, %3)", "%5 = add(%2, %4)", "%6 = divide(%2, %5)"]


def test_what_it_cannot_show_is_refused_with_the_fix():
    """A pullback not yet run, or something that is no tape, is refused, naming what to pass."""
    _, back = tapegrad.pullback(f, 2.0, 3.0)
    with pytest.raises(ValueError, match=r"call it \(back\(seed\)\)"):
        to_html(back)
    with pytest.raises(TypeError, match=r"tapegrad.show.viewer\(f, \*args\)"):
        to_html(42)


def test_text_that_looks_like_a_tag_stays_data():
    """An input named "</script>" cannot end the page's data early."""
    page = viewer(lambda p: p["</script><b>"] * 2.0, {"</script><b>": 1.5}).html()
    assert page.count("</script>") == 2
    assert page_data(page)["forward"][1]["text"] == '%2 = p["</script><b>"]'


def test_a_notebook_shows_it_in_an_iframe_and_save_writes_the_page(tmp_path):
    """_repr_html_ is the page in an iframe (its script and styles kept apart); save writes the page."""
    v = viewer(f, 2.0, 3.0, title="a / (a + b²)")
    shown = v._repr_html_()
    assert shown.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;') and "a / (a + b²)" in shown
    v.save(tmp_path / "sweep.html")
    assert (tmp_path / "sweep.html").read_text(encoding="utf-8") == v.html()
    assert repr(v) == "<tapegrad viewer: a / (a + b²), 24 ops>"


def test_the_command_line_writes_the_viewer_and_the_picture(tmp_path, capsys):
    """--html FILE writes the viewer, --svg FILE the picture, with no Graphviz."""
    html, svg = tmp_path / "sweep.html", tmp_path / "tape.svg"
    assert main(["a/(a + b*b)", "a=2", "b=3", "--html", str(html), "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert out.endswith(f"wrote the viewer to {html}\nwrote the picture to {svg}\n")
    assert page_data(html.read_text(encoding="utf-8"))["title"] == "a/(a + b*b) at a = 2.0, b = 3.0: the reverse sweep"
    assert svg.read_text(encoding="utf-8").startswith("<svg") and '<path class="edge"' in svg.read_text(encoding="utf-8")
    assert main(["sin(x)", "x=1", "--explain", "--html", str(html)]) == 0
    assert capsys.readouterr().out.endswith(f"wrote the viewer to {html}\n")


def test_a_long_sweep_builds_one_page_of_modest_size():
    """Three thousand steps make one page of under a kilobyte a step (the table of adjoints is
    worked out in the page, not stored for each step)."""
    def long(x):
        for _ in range(1000):
            x = np.sin(x) * 0.5 + x
        return x
    back = ran(long, 0.3)
    steps = len(viewer_data(back)["steps"])
    assert steps > 3000
    assert len(to_html(back)) < 1000 * steps

"""Teaching tools: the explainer, drawings, HTML dumps and the command line."""
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
from tapegrad.show.cli import main


def test_explain_worked_by_hand(capsys):
    """explain prints the forward values and each backward step with its formula and number."""
    tapegrad.explain(lambda x: 1 / x**2, 1.5)
    assert capsys.readouterr().out == (
        "Forward\n"
        "  y1 = x = 1.5\n"
        "  y2 = power(y1, 2) = 2.25\n"
        "  y3 = divide(1, y2) = 0.4444444444\n"
        "Backward: ȳk = ∂result/∂yk, from the seed back to the inputs\n"
        "  ȳ3 = 1   (seed)\n"
        "  ȳ2 = ȳ3 · (-1/y2²) = -0.1975308642\n"
        "  ȳ1 = ȳ2 · (2·y1) = -0.5925925926\n"
        "Gradient: ∂f/∂x = ȳ1 = -0.5925925926\n"
    )


def test_explain_shows_every_accumulation():
    """A variable used twice gets a += line whose running total is the final derivative."""
    text = tapegrad.explain_text(lambda x: x * np.sin(x), 0.5)
    assert "  ȳ1 += ȳ2 · cos(y1)" in text
    assert text.endswith(f"∂f/∂x = ȳ1 = {np.sin(0.5) + 0.5 * np.cos(0.5):.10g}")


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


def test_html_dump_has_the_text_lines():
    """A tape in a notebook is a table with the same lines as the text dump."""
    _, tape = tapegrad.trace(lambda a, b: a * b, 2.0, 3.0)
    html = tape._repr_html_()
    for line in str(tape).splitlines()[1:]:
        code = line.strip().split("   # ")[0].strip()
        assert f"<code>{code}</code>" in html


def test_cli_prints_tapes_and_gradient(capsys):
    """python -m tapegrad EXPR NAME=VALUE prints the tape, the gradient tape and the gradient."""
    assert main(["a/(a + b*b)", "a=2", "b=3", "--compact"]) == 0
    out = capsys.readouterr().out
    assert "  %6 = divide(%2, %5)::float64\n" in out
    assert "  _, %15, %16 = [%14] = %12(%13)   # pullback for %11\n" in out
    assert out.endswith("value = 0.18181818181818182\nd/da = 0.0743801652892562\nd/db = -0.09917355371900827\n")


@pytest.mark.parametrize("flag, expect", [
    ("--source", "def gradient_program(fn, x, y):"),
    ("--dot", "digraph tape {"),
    ("--explain", "Backward: ȳk"),
])
def test_cli_flags(flag, expect, capsys):
    """Flags switch to the Python source, the DOT text or the explainer."""
    assert main(["sin(x) * y", "x=1", "y=2", flag]) == 0
    assert expect in capsys.readouterr().out


@pytest.mark.parametrize("expr, message", [
    ("__import__('os').system('true')", "is not allowed in an expression"),
    ("x.__class__", "is not allowed in an expression"),
    ("open('f')", "is not allowed in an expression"),
    ("sin(x, out=x)", "is not allowed in an expression"),
    ("z + x", "unknown name 'z': give it a value as z=VALUE"),
    ("x +", "cannot parse"),
])
def test_cli_refuses_anything_outside_the_whitelist(expr, message, capsys):
    """The expression is parsed against a whitelist and never run as code."""
    assert main([expr, "x=1"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Allowed: numbers" in (err if "parse" not in message else "Allowed: numbers")


def test_cli_help_and_demo_run_as_commands():
    """python -m tapegrad --help documents the command; with no arguments it runs the demo."""
    out = subprocess.run([sys.executable, "-m", "tapegrad", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "NAME=VALUE" in out.stdout and "never run as Python code" in out.stdout
    demo = subprocess.run([sys.executable, "-m", "tapegrad"], capture_output=True, text=True)
    assert demo.returncode == 0 and "gradient df/da   = 0.0743801652892562" in demo.stdout

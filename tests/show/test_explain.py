"""tapegrad.show.explain: the backward pass written out as a student would by hand."""
import numpy as np

import tapegrad


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
    text = tapegrad.show.explain_text(lambda x: x * np.sin(x), 0.5)
    assert "  ȳ1 += ȳ2 · cos(y1)" in text
    assert text.endswith(f"∂f/∂x = ȳ1 = {np.sin(0.5) + 0.5 * np.cos(0.5):.10g}")


def test_explain_writes_complex_values_whole():
    """A complex value and its cotangent are written with both parts (autograd's convention:
    the gradient of |z|² at 1+2j is 2-4j), never as their real part alone."""
    assert tapegrad.show.explain_text(lambda z: np.abs(z) ** 2, 1 + 2j).splitlines()[-1] == "Gradient: ∂f/∂z = ȳ1 = 2-4j"
    assert "  y1 = z = 1+2j" in tapegrad.show.explain_text(lambda z: np.abs(z) ** 2, 1 + 2j).splitlines()

"""tapegrad.show.explain: the backward pass written out as a student would by hand."""
import numpy as np

import tapegrad


def test_explain_worked_by_hand(capsys):
    """explain prints the forward values and each backward step with its formula and number."""
    tapegrad.explain(lambda x: 1 / x**2, 1.5)
    assert capsys.readouterr().out == (
        "Forward\n"
        "  %2 = x = 1.5\n"
        "  %3 = power(%2, 2) = 2.25\n"
        "  %4 = divide(1, %3) = 0.4444444444\n"
        "Backward: d%k = ∂result/∂%k, from the seed back to the inputs\n"
        "  d%4 = 1   (seed)\n"
        "  d%3 = d%4 · (-1/%3²) = -0.1975308642\n"
        "  d%2 = d%3 · (2·%2) = -0.5925925926\n"
        "Gradient: ∂f/∂x = d%2 = -0.5925925926\n"
    )


def test_explain_shows_every_accumulation():
    """A variable used twice gets a += line whose running total is the final derivative."""
    text = tapegrad.show.explain_text(lambda x: x * np.sin(x), 0.5)
    assert "  d%2 += d%3 · cos(%2)" in text
    assert text.endswith(f"∂f/∂x = d%2 = {np.sin(0.5) + 0.5 * np.cos(0.5):.10g}")


def test_explain_writes_complex_values_whole():
    """A complex value and its cotangent are written with both parts (autograd's convention:
    the gradient of |z|² at 1+2j is 2-4j), never as their real part alone."""
    assert tapegrad.show.explain_text(lambda z: np.abs(z) ** 2, 1 + 2j).splitlines()[-1] == "Gradient: ∂f/∂z = d%2 = 2-4j"
    assert "  %2 = z = 1+2j" in tapegrad.show.explain_text(lambda z: np.abs(z) ** 2, 1 + 2j).splitlines()

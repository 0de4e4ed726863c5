"""Write the notebooks in notebooks/ from the cell lists below (run after editing them).

Notebooks are generated so that their source stays reviewable as Python; the test suite
executes them and compares the printed output of the cells marked with an expected output.
"""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

TRACING = [
    new_markdown_cell(
        "# 1. Tracing: Wengert lists and tapes\n\n"
        "A *tape* (a Wengert list) is the list of primitive operations a function performed, "
        "each writing one new variable. `tapegrad.trace` runs a plain numpy function on "
        "*Tracers* and records every primitive they see."
    ),
    new_code_cell(
        "import numpy as np\n"
        "import tapegrad\n\n"
        "def f(a, b):\n"
        "    return a / (a + b * b)\n\n"
        "value, tape = tapegrad.trace(f, 2.0, 3.0)\n"
        "print(value)\n"
        "print(tape)"
    ),
    new_markdown_cell(
        "`%1` is the function itself, `%2` and `%3` its arguments. Each line after them is "
        "one primitive with the type of its result. `b * b` became `multiply`, `/` became "
        "`divide`: the tape speaks numpy.\n\n"
        "## Nested functions are traced through\n\n"
        "Only primitives reach the tape. The helpers `g` and `h` vanish:"
    ),
    new_code_cell(
        "def g(a, b):\n"
        "    return a * b\n\n"
        "def h(a):\n"
        "    return np.sin(a)\n\n"
        "def f2(x1, x2):\n"
        "    return g(x1, x2) + h(x1)\n\n"
        "print(tapegrad.trace(f2, 2.0, 3.0)[1])"
    ),
    new_markdown_cell(
        "## The tape is a program\n\n"
        "Every op keeps the value it computed, and the tape can run again on new inputs:"
    ),
    new_code_cell("print(tape.replay(f, 1.0, 2.0), f(1.0, 2.0))"),
    new_markdown_cell(
        "## Keeping a function whole\n\n"
        "A *context* decides what is a primitive. Mark a function with `tapegrad.primitive` "
        "and a context can keep it as one op:"
    ),
    new_code_cell(
        "@tapegrad.primitive\n"
        "def softplus(x):\n"
        "    return np.log(1 + np.exp(x))\n\n"
        "class KeepSoftplus(tapegrad.BaseContext):\n"
        "    def is_primitive(self, fn, *args):\n"
        "        return fn is softplus or super().is_primitive(fn, *args)\n\n"
        "print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5)[1])\n"
        "print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5, ctx=KeepSoftplus())[1])"
    ),
    new_markdown_cell(
        "**Exercise.** Trace `lambda x: np.exp(-x * x) * np.cos(3 * x)` at 0.4. How many "
        "primitives does the tape hold, and which constant appears twice? Then write a context "
        "that records only `cos` and traces `exp` as usual... can it? (Hint: which functions "
        "reach `is_primitive`?)"
    ),
]


def main():
    nb = new_notebook(cells=TRACING, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, "notebooks/01_tracing.ipynb")


if __name__ == "__main__":
    main()

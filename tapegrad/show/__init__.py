"""Showing tapes to people: text dumps, explanations, pictures, the step-through viewer, the rule
listing, the command line.

>>> import tapegrad
>>> _, tape = tapegrad.trace(lambda x: x * x + 1.0, 3.0)
>>> print(tapegrad.show.format_tape(tape, compact=True))
Tape
  inp %1::function lambda
  inp %2::float64   # x
  %3 = multiply(%2, %2)::float64
  %4 = add(%3, 1.0)::float64
"""
from .printing import format_tape
from .explain import explain, explain_text
from .formulas import explain_formula
from .drawing import draw, render, to_dot
from .svg import to_svg
from .viewer import Viewer, to_html, viewer, viewer_data

__all__ = ["format_tape", "explain", "explain_text", "explain_formula", "draw", "render", "to_dot", "to_svg",
           "viewer", "to_html", "viewer_data", "Viewer"]

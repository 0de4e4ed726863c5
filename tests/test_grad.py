"""tapegrad.grad: the gradient context and the entry points grad, gradient and pullback."""
import numpy as np

import tapegrad
from tapegrad import GradContext, trace


def test_grad_context_is_reusable_as_trace_context():
    """trace with a GradContext records rrules, the first half of grad."""
    _, tape = trace(lambda x: np.sin(x), 1.0, ctx=GradContext())
    assert tapegrad.format_tape(tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  %4, %5 = [%3] = rrule(sin, %2)::float64"
    )

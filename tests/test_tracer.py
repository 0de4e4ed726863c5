"""tapegrad.tracer: a Tracer records every call on the innermost tape among its arguments, and
takes the value it holds where Python needs a concrete one (a branch, a count)."""
from tapegrad import grad


def test_comparison_drives_control_flow():
    """if on a traced comparison takes the branch of the value at trace time."""
    def relu_ish(x):
        if x > 0:
            return x * 3.0
        return x * 0.5

    assert grad(relu_ish, 2.0)[1][1] == 3.0
    assert grad(relu_ish, -2.0)[1][1] == 0.5

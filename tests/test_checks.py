"""tapegrad.checks: central differences, and check_grad comparing reverse and forward mode against them."""
import pytest

import tapegrad
from tapegrad import check_grad, primitive, rrule


def test_check_grad_catches_a_wrong_rule():
    """check_grad fails, with both numbers, when a rule is wrong: the checks can fail."""
    @primitive
    def cube(x):
        return x ** 3

    @rrule(cube)
    def cube_rrule(x):
        return cube(x), lambda dy: (tapegrad.NO_TANGENT, 2 * x ** 2 * dy)  # should be 3x²

    with pytest.raises(AssertionError, match="reverse mode gives .* central differences give"):
        check_grad(lambda x: cube(x), 1.3)

"""tapegrad.registry: the rule tables, registering and finding rules, `needs=` and stand-ins."""
import tapegrad
from tapegrad import grad, primitive, rrule


def test_rule_for_a_marked_function_is_used_by_grad():
    """A marked function with an rrule is one primitive of the gradient tape, using that rule."""
    @primitive
    def square(x):
        return x * x

    calls = []

    @rrule(square)
    def square_rrule(x):
        calls.append(x)

        def square_pullback(dy):
            return tapegrad.NO_TANGENT, 2 * x * dy

        return square(x), square_pullback

    y, (_, dx) = grad(lambda x: square(x) + 1, 3.0)
    assert (y, dx, calls) == (10.0, 6.0, [3.0])

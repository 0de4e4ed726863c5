"""Python's own number protocols on traced values: a Fraction operand, three-argument pow,
format(), logging, %-formatting and the statistics module, each working as an autograd or
JAX user would expect or refused with the line and the fix."""
import logging
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, grad


@pytest.mark.parametrize("f, value, slope", [
    (lambda x: x * Fraction(1, 3), 0.5, 1 / 3),
    (lambda x: Fraction(1, 3) * x, 0.5, 1 / 3),
    (lambda x: x / Fraction(1, 2), 3.0, 2.0),
    (lambda x: Fraction(3, 2) - x, 0.0, -1.0),
    (lambda x: x ** Fraction(2, 1), 2.25, 3.0),
], ids=["mul", "rmul", "truediv", "rsub", "pow"])
def test_a_fraction_operand_is_the_float_python_makes_of_it(f, value, slope):
    """x * Fraction(1, 3) is x * float(Fraction(1, 3)), as Python's float arithmetic takes it
    (it was AttributeError: 'float' object has no attribute 'dtype')."""
    y, (_, dx) = grad(f, 1.5)
    assert (y, dx) == pytest.approx((value, slope), rel=1e-15)
    assert type(y) is float


def test_three_argument_pow_is_refused_with_the_fix():
    """pow(x, 2, 5) of a traced or dual value is refused as Python refuses pow(1.5, 2, 5), naming
    the line and x ** 2 % 5 (it was TypeError: forward() takes 2 positional arguments)."""
    with pytest.raises(TypeError, match=r"pow\(x, 2, 5\) of the traced value %2::float64 at "
                       r"test_plain_python\.py:\d+: Python's three-argument pow takes integers only.*"
                       r"write x \*\* 2 % 5 \(np\.mod\(x \*\* 2, 5\)\)"):
        grad(lambda x: pow(x, 2, 5), 1.5)
    with pytest.raises(TypeError, match=r"pow\(x, 2, 5\) of the dual value float64 at test_plain_python"):
        tapegrad.jvp(lambda x: pow(x, 2, 5), (1.5,), (1.0,))
    assert grad(lambda x: x ** 2 % 5, 2.5) == (1.25, (tapegrad.ZERO, 5.0))


def test_formatting_a_traced_value_formats_its_value():
    """f"{x:.3f}" and "{:.3f}".format(x) inside a traced function give the value's text and
    leave the gradient alone (it was TypeError: unsupported format string)."""
    shown = []

    def f(x):
        y = x * 2.0
        shown.extend([f"{y:.3f}", "{:>6.2f}".format(x), f"{np.sum(x * 0.5):.1e}"])
        return y

    y, (_, dx) = grad(f, 1.25)
    assert (y, dx) == (2.5, 2.0)
    assert shown == ["2.500", "  1.25", "6.2e-01"]


def test_logging_a_traced_value_shows_its_value(caplog):
    """logging.info("%.3f", x) logs the value (logging formats with float(x), here only for
    display); the gradient is whole (it was a 'Logging error' and then a ConcreteValueError)."""
    def f(x):
        logging.getLogger("tapegrad-test").warning("x = %.3f, twice %8.4f", x, x * 2.0)
        return x * 3.0

    with caplog.at_level(logging.WARNING, logger="tapegrad-test"):
        assert grad(f, 1.5) == (4.5, (tapegrad.ZERO, 3.0))
    assert caplog.messages == ["x = 1.500, twice   3.0000"]


def test_percent_formatting_is_refused_with_how_to_print():
    """"%.3f" % x asks float(x): refused, and the message says how to print a traced value."""
    with pytest.raises(ConcreteValueError, match=r"float\(\) of the traced value %2::float64 at "
                       r"test_plain_python\.py:\d+ would drop its gradient.*; \"%\.3f\" % x asks float\(x\): "
                       r"to print a traced value, format it with f\"\{x:\.3f\}\""):
        grad(lambda x: ("%.3f" % x, x)[1], 1.5)
    with pytest.raises(ConcreteValueError, match=r"on the traced value instead$"):  # not a % format: no hint
        grad(lambda x: math.sin(x), 1.5)


@pytest.mark.parametrize("fn", [statistics.mean, statistics.fmean, statistics.stdev,
                                statistics.variance, statistics.geometric_mean],
                         ids=lambda fn: fn.__name__)
def test_the_statistics_module_is_refused_with_numpys_function(fn):
    """statistics.mean([a, b]) and its siblings read numbers as exact fractions or floats:
    refused naming the function, the user's line (not statistics.py) and np.mean (it was
    "can't convert type 'Tracer' to numerator/denominator")."""
    with pytest.raises(ConcreteValueError, match=rf"statistics\.{fn.__name__}\(\) of the traced value "
                       r"%\d+::float64 at test_plain_python\.py:\d+ .*np\.mean\(\[a, b\]\)"):
        grad(lambda x: fn([x, x * 2.0, x * 4.0]), 1.5)

"""tapegrad.registry: the rule tables, registering and finding rules, `needs=` and stand-ins."""
import weakref

import numpy as np

import tapegrad
from tapegrad import grad, gradient, primitive, rrule


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


def test_multiply_by_a_constant_keeps_no_traced_partner():
    """c * a with a constant c needs c for a's tangent, and a only for c's, which is never read:
    with grad, a goes as soon as f drops it."""
    freed = []
    c = np.array([1.0, -2.0, 3.0])

    def f(x):
        a = x + 1.0  # add keeps only stand-ins
        ref = weakref.ref(a._val)
        b = c * a
        del a
        freed.append(ref() is None)
        return np.sum(b)

    # wrt=0: c, which f captures, stays a constant (without wrt it is differentiated too)
    value, (_, dx) = grad(f, np.zeros(3), wrt=0)
    assert freed == [True]
    assert value == 2.0 and np.array_equal(dx, c)


def test_a_rule_with_needs_learns_which_arguments_are_traced():
    """A rule that takes `needs` gets one bool per positional argument from a gradient when
    some array argument is a constant (True where it is traced), and None, meaning every
    tangent may be read, when all are traced, for numbers, and when called directly."""
    seen = []

    @primitive
    def scale(a, b):
        return a * b

    @rrule(scale)
    def scale_rrule(a, b, *, needs=None):
        seen.append(needs)

        def scale_pullback(dy):
            return tapegrad.NO_TANGENT, dy * b, dy * a

        return scale(a, b), scale_pullback

    one = np.ones(())  # a 0-d array: an array argument with a scalar result
    assert gradient(lambda x: scale(x, 3.0), one) == (3.0,)
    assert gradient(lambda c, x: scale(c, x), 2.0 * one, one, wrt=1) == (tapegrad.NO_TANGENT, 2.0)
    assert gradient(lambda x: scale(x, x), one) == (2.0,)
    assert gradient(lambda x: scale(x, 3.0), 1.0) == (3.0,)  # two numbers: nothing worth telling
    tapegrad.rrule(scale, one, one)
    assert seen == [(True, False), (False, True), None, None, None]


def test_stand_in_has_the_shape_and_dtype_and_no_memory(monkeypatch):
    x = np.ones((3, 4), dtype=np.float32)
    s = tapegrad.registry.stand_in(x)
    assert type(s) is np.ndarray and s.shape == (3, 4) and s.dtype == np.float32
    assert s.strides == (0, 0) and not s.flags.writeable
    assert np.isnan(s).all()  # a pullback that reads it gets NaN, not a plausible number
    assert tapegrad.registry.stand_in(2.5) == 2.5
    objects = np.array([1, "a"], dtype=object)
    assert tapegrad.registry.stand_in(objects) is objects
    monkeypatch.setattr(tapegrad.registry, "STAND_IN_BYTES", 1 << 14)
    assert tapegrad.registry.stand_in(x) is x  # 48 bytes: kept as it is
    big = np.ones(2048)
    assert tapegrad.registry.stand_in(big).strides == (0,)

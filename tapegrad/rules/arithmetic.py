"""Rules for the arithmetic ufuncs: add, subtract, multiply, divide, negative, positive, square,
reciprocal, power, float_power, remainder, fmod and divmod.

Each rule here is the reference: the derivative as the math says it, for every kind of
argument. add, subtract, multiply, divide and power, which a gradient of numerical code meets at
almost every step, have a fast path too (`tapegrad.rules.fast`), registered in front of the
rule here and checked against it on the rule tables.

Constants inside pullbacks are Python floats, which numpy treats as "weak": a float32 input
keeps a float32 tangent (a numpy float64 scalar would promote it to float64).

Complex values (the rules declared with ``complex=True``): under autograd's convention (see the
README) a holomorphic rule's pullback is the real rule's formula, with no conjugate, and a real
argument of a complex result takes its real part (`real_to`); checked in
tests/rules/test_elementwise.py (COMPLEX_TABLE). The remainders and divmod (no complex loops in
numpy) stay out.
"""
from __future__ import annotations

import numpy as np

from ..errors import is_complex_value
from ..arraylike import primitive
from ..registry import frule, partials, rrule, whole
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk, ZERO
from ._forward import add_variations, scaled
from ._shapes import real_to

# --- add, subtract, multiply, divide ---


@rrule(np.add, complex=True, formula=partials("1", "1"))
def add_rrule(x, y):
    def add_pullback(dz):
        return NO_TANGENT, real_to(dz, x), real_to(dz, y)

    return np.add(x, y), add_pullback


@frule(np.add)
def add_frule(d, x, y):
    return np.add(x, y), add_variations(d[0], d[1])


@rrule(np.subtract, complex=True, formula=partials("1", "-1"))
def subtract_rrule(x, y):
    def subtract_pullback(dz):
        return NO_TANGENT, real_to(dz, x), real_to(np.negative(dz), y)

    return np.subtract(x, y), subtract_pullback


@frule(np.subtract)
def subtract_frule(d, x, y):
    return np.subtract(x, y), add_variations(d[0], scaled(d[1], -1))


@rrule(np.multiply, complex=True, formula=partials("{a[1]}", "{a[0]}"))
def multiply_rrule(x, y):
    def multiply_pullback(dz):
        # d(xy) = y dx + x dy
        return NO_TANGENT, real_to(dz * y, x), real_to(dz * x, y)

    return np.multiply(x, y), multiply_pullback


@frule(np.multiply)
def multiply_frule(d, x, y):
    return np.multiply(x, y), add_variations(scaled(d[0], y), scaled(d[1], x))


# (np.true_divide is the same ufunc)
@rrule(np.divide, complex=True, formula=partials("1/{a[1]}", "(-{a[0]}/{a[1]}²)"))
def divide_rrule(x, y):
    z = np.divide(x, y)

    def divide_pullback(dz):
        # d(x/y) = dx/y - (x/y²) dy = (dx - z dy)/y; np.divide, which gives inf at y == 0.0
        return NO_TANGENT, real_to(np.divide(dz, y), x), real_to(np.divide(-dz * z, y), y)

    return z, divide_pullback


@frule(np.divide)
def divide_frule(d, x, y):
    z = np.divide(x, y)
    # d(x/y) = dx/y - z dy/y
    return z, add_variations(scaled(d[0], 1 / y), scaled(d[1], -z / y))


# --- sign ---


def negative_pullback(dy):
    return NO_TANGENT, -dy


@rrule(np.negative, complex=True, formula=partials("-1"))
def negative_rrule(x):
    return np.negative(x), negative_pullback


@frule(np.negative)
def negative_frule(d, x):
    return np.negative(x), scaled(d[0], -1)


def positive_pullback(dy):
    return NO_TANGENT, dy


@rrule(np.positive, complex=True, formula=partials("1"))
def positive_rrule(x):
    return np.positive(x), positive_pullback


# --- powers ---


@rrule(np.square, complex=True, formula=partials("2·{a[0]}"))
def square_rrule(x):
    def square_pullback(dy):
        # d/dx x² = 2x
        return NO_TANGENT, dy * (2 * x)

    return np.square(x), square_pullback


@rrule(np.reciprocal, complex=True, formula=partials("(-{y}²)"))
def reciprocal_rrule(x):
    y = np.reciprocal(x)

    def reciprocal_pullback(dy):
        # d/dx 1/x = -1/x² = -y²; inf at 0
        return NO_TANGENT, -dy * (y * y)

    return y, reciprocal_pullback


def is_integer(v):
    """An int or an integer array: used as an exponent it is a count, not a differentiable quantity."""
    if isinstance(v, (bool, int, np.integer)):
        return True
    dtype = getattr(v, "dtype", None)
    return dtype is not None and dtype.kind in "biu"


def log_base(x):
    """log(x), and 0 where x == 0, as autograd and JAX do: then x**y is 0 (y > 0) or 1 (y == 0), flat in y."""
    if is_complex_value(x):  # the same, without np.where (a traced complex x meets only complex rules)
        return np.log(x + (x == 0))
    return np.log(np.where(x == 0, 1.0, x))


@primitive(traceable=False)
def as_count(n):
    """An integer exponent in its power's derivative (``n x**(n-1)``): its value, through which
    no derivative flows. The exponent is a count (`exponent_tangent`), so a second derivative
    must not reach it through the slope either: a traced int ``n`` there made ``d/dn dy/dx``
    differ from ``d/dx dy/dn`` (reverse-over-reverse against forward-over-forward)."""
    return n


@rrule(as_count, formula=whole("0 (an integer exponent is a count)"))
def as_count_rrule(n):
    return n, lambda dy: (NO_TANGENT, ZERO)


@frule(as_count)
def as_count_frule(d, n):
    return n, ZERO


def power_slope(power, x, y):
    """d/dx x**y = y x**(y-1), finite at x == 0 for every integer y >= 0 (it is 0 for y == 0, as in JAX)."""
    if is_integer(x):
        x = np.multiply(x, 1.0)  # an int to a negative int power is an error in numpy
    if isinstance(y, (int, float, np.number)):
        # a plain exponent: y == 0 gives 0 * x**1, not 0 * 0**-1 = nan at x == 0
        return y * power(x, 1 if y == 0 else y - 1)
    if is_integer(y):  # an integer array, or a traced integer: a count
        y = as_count(y)
    # a traced exponent: y - 1, but 1 where y == 0 and x == 0 (0 * 0**-1 = nan there); elsewhere
    # y - 1 even at y == 0, so that the slope's derivative in y, x**(y-1)(1 + y log x), is 1/x
    # there (0 * x**1 made it x: the Hessian of x**y at y == 0 was not symmetric)
    if is_complex_value(y):  # the same, without np.where (a traced complex y meets only complex rules)
        return y * power(x, y - 1 + np.logical_and(np.equal(y, 0), np.equal(x, 0)))
    return y * power(x, np.where(np.logical_and(np.equal(y, 0), np.equal(x, 0)), 1, y - 1))


def exponent_tangent(dz, z, x, y):
    """The exponent's tangent, d/dy x**y = log(x) x**y, deferred (a constant exponent's is
    never read, and log of a negative base would warn). An integer exponent is a count (x**3),
    as JAX sees it: no tangent."""
    if is_integer(y):
        return NO_TANGENT
    return Thunk(lambda: real_to(dz * z * log_base(x), y))


def _power_formula(names, values, kwargs):
    """``3·x²`` for a number exponent, ``y·x^(y-1)`` for an array."""
    x, k = names[0], values[1]
    if isinstance(k, (int, float, np.number)) and not isinstance(k, bool):
        dx = f"{k:g}·{x}{_superscript(k - 1)}"
    else:
        dx = f"{names[1]}·{x}^({names[1]}-1)"
    return [f"({dx})", f"log({x})·{{y}}"]


_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def _superscript(k):
    return "" if k == 1 else f"{k:g}".translate(_SUPERSCRIPT)


@rrule(np.power, complex=True, formula=partials(_power_formula))
def power_rrule(x, y):
    z = np.power(x, y)

    def power_pullback(dz):
        # d(x**y) = y x**(y-1) dx + log(x) x**y dy (deferred: a constant's tangent is never read)
        return (NO_TANGENT, Thunk(lambda: real_to(dz * power_slope(np.power, x, y), x)),
                exponent_tangent(dz, z, x, y))

    return z, power_pullback


# (float_power computes in float64 or complex128 whatever its inputs: so do its tangents)
@rrule(np.float_power, complex=True, formula=partials(_power_formula))
def float_power_rrule(x, y):
    z = np.float_power(x, y)

    def float_power_pullback(dz):
        return (NO_TANGENT, Thunk(lambda: real_to(dz * power_slope(np.float_power, x, y), x)),
                exponent_tangent(dz, z, x, y))

    return z, float_power_pullback


def _power_frule(power):
    def power_frule(d, x, y):
        z = power(x, y)
        # y x**(y-1), with 0 x**1 for y == 0: finite at x == 0 (the reverse rule's convention),
        # so that x**2 at 0 has a third derivative, 0, not 0 * 0**-1 = nan
        if isinstance(y, (int, float, np.number)):
            below = 1 if y == 0 else y - 1
        elif is_integer(y):  # a count, in the slope too (`as_count`)
            y = as_count(y)
            below = np.where(np.equal(y, 0), 1, y - 1)
        elif is_complex_value(y):  # the same without np.where, which takes no complex values
            below = y - 1 + np.logical_and(np.equal(y, 0), np.equal(x, 0))
        else:  # (1 only where x == 0 too: the reverse rule's `power_slope`)
            below = np.where(np.logical_and(np.equal(y, 0), np.equal(x, 0)), 1, y - 1)
        dz = scaled(d[0], y * power(x, below))
        if d[1] is not ZERO and not is_integer(y):  # (an integer exponent is a count: no tangent)
            # log x, taken as 0 at x == 0 (x**y is flat in y there)
            safe = x + np.equal(x, 0) if is_complex_value(x) else np.where(x == 0, 1.0, x)
            dz = add_variations(dz, d[1] * z * np.log(safe))
        return z, dz

    power_frule.__name__ = f"{power.__name__}_frule"
    return frule(power)(power_frule)


power_frule = _power_frule(np.power)
# (float_power's variation follows, with no broadcast operand summed, as a derived rule would have to)
float_power_frule = _power_frule(np.float_power)


# --- remainders ---


def _remainder_rule(fn, name, formula):
    """The rule of x mod y = x - q y with q = floor(x/y) (remainder) or trunc(x/y) (fmod):
    d/dx = 1, d/dy = -q, where q is read off the result, (x - z)/y rounded, so that it agrees
    with numpy's own division."""
    def rule(x, y):
        z = fn(x, y)

        def pullback(dz):
            return (
                NO_TANGENT,
                Thunk(lambda: unbroadcast(dz, x)),
                Thunk(lambda: unbroadcast(-dz * np.rint((x - z) / y), y)),
            )

        pullback.__name__ = f"{name}_pullback"
        return z, pullback

    rule.__name__ = f"{name}_rrule"
    return rrule(fn, formula=formula)(rule)


# (np.mod is the same ufunc as np.remainder)
remainder_rrule = _remainder_rule(np.remainder, "remainder", partials("1", "(-floor({a[0]}/{a[1]}))"))
fmod_rrule = _remainder_rule(np.fmod, "fmod", partials("1", "(-trunc({a[0]}/{a[1]}))"))


@rrule(np.divmod, formula=whole("{dy}[1]", "-{dy}[1] · floor({a[0]}/{a[1]})"))
def divmod_rrule(x, y):
    q, r = np.divmod(x, y)

    def divmod_pullback(dqr):
        # the quotient is piecewise constant; only the remainder x - q y carries a derivative
        dr = dqr[1]
        if dr is ZERO:
            return NO_TANGENT, ZERO, ZERO
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dr, x)),
            Thunk(lambda: unbroadcast(-dr * q, y)),
        )

    return (q, r), divmod_pullback

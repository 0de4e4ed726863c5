"""Rules for the arithmetic ufuncs: add, subtract, multiply, divide, negative, positive, square,
reciprocal, power, float_power, remainder, fmod and divmod.

Constants inside pullbacks are Python floats, which numpy treats as "weak": a float32 input
keeps a float32 tangent (a numpy float64 scalar would promote it to float64).

Complex values (the rules declared with ``complex=True``): under autograd's convention (see the
README) a holomorphic rule's pullback is the real rule's formula, with no conjugate, and a real
argument of a complex result takes its real part (the complex branches of the rules); checked in
tests/rules/test_elementwise.py (COMPLEX_TABLE). The remainders and divmod (no complex loops in
numpy) stay out.
"""
from __future__ import annotations

import numpy as np

from .. import registry
from ..registry import frule, partials, rrule, stand_in, unbroadcast, whole
from ..tangents import NO_TANGENT, Thunk, ZERO
from ..errors import is_complex_value
from ._forward import add_variations, scaled
from ._shapes import plain_array, real_to


def _complex_pullback(name, *parts):
    """The pullback of a binary rule with a complex result: ``parts`` are (argument, function of
    the cotangent giving that argument's holomorphic share), one per argument, None for a
    constant whose tangent is not needed."""
    def pullback(dz):
        return (NO_TANGENT, *(NO_TANGENT if share is None else Thunk(lambda x=x, share=share: real_to(share(dz), x))
                              for x, share in parts))

    pullback.__name__ = f"{name}_pullback"
    return pullback


def _is_integer(v):
    """An int or an integer array: used as an exponent it is a count, not a differentiable quantity."""
    if isinstance(v, (bool, int, np.integer)):
        return True
    dtype = getattr(v, "dtype", None)
    return dtype is not None and dtype.kind in "biu"


#: plain scalars: nothing to unbroadcast and nothing worth deferring, so rules of scalar
#: arithmetic skip Thunk and unbroadcast, and use Python's operators, which round exactly as
#: the ufuncs do but cost a tenth of a ufunc call on scalars (the per-op cost of scalar code).
#: A set: ``type(a) in`` it hashes a pointer, where a tuple compares an array's type with
#: each entry through ``==``
_SCALARS = frozenset((float, np.float64))
#: with an int beside a float (``s / n``, ``2 * t``, ``1 - t``) the same holds: Python and numpy
#: both convert the int to a double first. Two ints are left to numpy (int64, not Python's ints)
_NUMBERS = _SCALARS | {int}
_F8 = registry.FLOAT64


def _passed_on(dz, x):
    """`dz` as the tangent of `x` when the shapes agree; else a Thunk that sums it down to x's
    shape, so that a broadcast constant (``1 + e``) costs no reduction."""
    if type(x) is type(dz) and (type(x) is float or type(x) is np.ndarray and x.shape == dz.shape):
        return dz
    return Thunk(lambda: unbroadcast(dz, x))


# --- add, subtract, multiply, divide ---

# The pullbacks that keep nothing are made once, here: a function made inside the rule would
# be a new object for every primitive.


def _add_pullback(dz):  # nothing was broadcast: both tangents are dz
    return NO_TANGENT, dz, dz


def _subtract_numbers_pullback(dz):
    return NO_TANGENT, dz, -dz


def _subtract_arrays_pullback(dz):  # nothing was broadcast
    return NO_TANGENT, dz, Thunk(lambda: np.negative(dz))


_add_pullback.__name__ = "add_pullback"
_subtract_numbers_pullback.__name__ = _subtract_arrays_pullback.__name__ = "subtract_pullback"


@rrule(np.add, complex=True, formula=partials("1", "1"))
def add_rrule(x, y):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        return x + y, _add_pullback

    z = np.add(x, y)
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":
        return z, _complex_pullback("add", (stand_in(x), lambda dz: dz), (stand_in(y), lambda dz: dz))
    if type(x) is np.ndarray and type(y) is np.ndarray and x.shape == y.shape:
        return z, _add_pullback  # nothing was broadcast, and nothing is kept
    return z, _add_broadcast_pullback(x, y, z)


@frule(np.add)
def add_frule(d, x, y):
    return np.add(x, y), add_variations(d[0], d[1])


def _add_broadcast_pullback(x, y, z):
    """`add_rrule`'s pullback for every other case (a function of its own, so that the rule
    does not make cells for x and y, which only this pullback captures)."""
    if type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES:  # skip two calls when small
        x, y = stand_in(x), stand_in(y)  # only their shapes are needed

    def add_pullback(dz):
        return NO_TANGENT, _passed_on(dz, x), _passed_on(dz, y)

    return add_pullback


@rrule(np.subtract, complex=True, formula=partials("1", "-1"))
def subtract_rrule(x, y):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        return x - y, _subtract_numbers_pullback

    z = np.subtract(x, y)
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":
        return z, _complex_pullback("subtract", (stand_in(x), lambda dz: dz), (stand_in(y), np.negative))
    if type(x) is np.ndarray and type(y) is np.ndarray and x.shape == y.shape:
        return z, _subtract_arrays_pullback  # nothing was broadcast, and nothing is kept
    return z, _subtract_broadcast_pullback(x, y, z)


@frule(np.subtract)
def subtract_frule(d, x, y):
    return np.subtract(x, y), add_variations(d[0], scaled(d[1], -1))


def _subtract_broadcast_pullback(x, y, z):
    """`subtract_rrule`'s pullback for every other case (see `_add_broadcast_pullback`)."""
    if type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES:  # skip two calls when small
        x, y = stand_in(x), stand_in(y)  # only their shapes are needed

    def subtract_pullback(dz):
        return NO_TANGENT, _passed_on(dz, x), Thunk(lambda: unbroadcast(np.negative(dz), y))

    return subtract_pullback


def _product_to(dz, y, x):
    """``unbroadcast(dz * y, x)``; for a scalar x (``variance * K``), a dot product, which
    makes no array of dz's size (four times faster on a 300x300 matrix). Decided on shapes and
    dtypes only, so that a traced pullback (a compiled gradient) takes the same path."""
    if getattr(x, "ndim", 0) == 0 and getattr(dz, "ndim", 0) > 0 and dz.shape == getattr(y, "shape", None) \
            and dz.dtype.kind == "f" == y.dtype.kind:
        return unbroadcast(np.dot(np.ravel(dz), np.ravel(y)), x)
    return unbroadcast(dz * y, x)


def _needed(needs, z):
    """(need x's tangent, need y's tangent, keep only stand-ins of what is not needed)."""
    if needs is None:
        return True, True, False
    return needs[0], needs[1], type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES


# The rules below take ``needs`` as an ordinary parameter, not a keyword-only one, and keep
# their array case in a function of its own: CPython calls functions with keyword-only
# parameters the slow way, and makes every captured variable's cell on entry, also on the
# scalar path (benchmarks/README.md has the measurement).


@rrule(np.multiply, complex=True, formula=partials("{a[1]}", "{a[0]}"))
def multiply_rrule(x, y, needs=None):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        def multiply_pullback(dz):
            return NO_TANGENT, dz * y, dz * x

        return x * y, multiply_pullback
    return _multiply_arrays(x, y, needs)


@frule(np.multiply)
def multiply_frule(d, x, y):
    return np.multiply(x, y), add_variations(scaled(d[0], y), scaled(d[1], x))


def _multiply_arrays(x, y, needs):
    if needs is not None:
        tx, ty = type(x), type(y)
        # a constant number times a float64 array (0.5 * t), or the other way round
        if ty is np.ndarray and tx in _SCALARS and not needs[0] and y.dtype is _F8:
            return _scaled(x, y, 2)
        if tx is np.ndarray and ty in _SCALARS and not needs[1] and x.dtype is _F8:
            return _scaled(y, x, 1)
    z = np.multiply(x, y)
    if needs is None:  # `_needed`, written out: this is every array product's cost
        need_x = need_y = True
        large = False
    else:
        need_x, need_y = needs
        large = type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":  # d(xy) = y dx + x dy: the real rule's shares, real parts for a real argument
        return z, _complex_pullback("multiply", (x, (lambda dz: dz * y) if need_x else None),
                                    (y, (lambda dz: dz * x) if need_y else None))
    if large:  # dx = dz y and dy = dz x: a constant's partner is needed only for its shape
        x, y = (x if need_y else stand_in(x)), (y if need_x else stand_in(y))

    # Plain arrays of one shape, or a number times an array: nothing to sum, so each tangent is
    # one product. `needs` says which ones the sweep reads (a traced argument's tangent is
    # always read), so they are computed at once, without a Thunk and its closure apiece.
    tx, ty = type(x), type(y)
    if tx is np.ndarray and ty is np.ndarray and x.shape == y.shape:
        def multiply_pullback(dz):  # nothing was broadcast
            return NO_TANGENT, dz * y if need_x else NO_TANGENT, dz * x if need_y else NO_TANGENT

        return z, multiply_pullback
    if ty is np.ndarray and not need_x and tx in _SCALARS:  # c * t: dz has t's shape
        def multiply_pullback(dz):
            return NO_TANGENT, NO_TANGENT, dz * x

        return z, multiply_pullback
    if tx is np.ndarray and not need_y and ty in _SCALARS:  # t * c
        def multiply_pullback(dz):
            return NO_TANGENT, dz * y, NO_TANGENT

        return z, multiply_pullback

    def multiply_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: _product_to(dz, y, x)) if need_x else NO_TANGENT,
            Thunk(lambda: _product_to(dz, x, y)) if need_y else NO_TANGENT,
        )

    return z, multiply_pullback


def _scaled(c, t, at):
    """``c * t`` for a constant number `c` and a traced float64 array `t`, `t` the argument at
    position `at`: its tangent is ``dz * c``, computed with `c` as a 0-d float64 array. numpy
    takes a Python or numpy float beside an array through its slow "weak scalar" path (on a
    short vector, ``c * t`` costs twice ``array(c) * t``); the 0-d array of the same float64
    gives the same products bit for bit. A cotangent that is not a float64 array (a traced
    one, in a higher derivative) is multiplied by the number, as before."""
    c0 = plain_array(c)
    z = np.multiply(c0, t)

    def multiply_pullback(dz):
        d = dz * c0 if type(dz) is np.ndarray and dz.dtype is _F8 else dz * c
        return (NO_TANGENT, NO_TANGENT, d) if at == 2 else (NO_TANGENT, d, NO_TANGENT)

    return z, multiply_pullback


# (np.true_divide is the same ufunc)
@rrule(np.divide, complex=True,
       formula=partials("1/{a[1]}", "(-{a[0]}/{a[1]}²)"))
def divide_rrule(x, y, needs=None):
    if (type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS) and y != 0:
        # (x / 0.0 raises in Python, where numpy gives inf)
        z = x / y

        def divide_pullback(dz):
            return NO_TANGENT, dz / y, -dz * z / y

        return z, divide_pullback
    return _divide_arrays(x, y, needs)


@frule(np.divide)
def divide_frule(d, x, y):
    z = np.divide(x, y)
    # d(x/y) = dx/y - z dy/y
    return z, add_variations(scaled(d[0], 1 / y), scaled(d[1], -z / y))


def _divide_arrays(x, y, needs):
    out = z = np.divide(x, y)
    x = stand_in(x)  # only its shape is needed
    need_x, need_y, large = _needed(needs, z)
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":  # d(x/y) = dx/y - z dy/y
        return z, _complex_pullback("divide", (x, (lambda dz: np.divide(dz, y)) if need_x else None),
                                    (y, (lambda dz: np.divide(-dz * z, y)) if need_y else None))
    if large and not need_y:
        z = None  # only y's tangent reads z

    def divide_pullback(dz):
        # d(x/y)/dy = -x/y² = -z/y
        return (
            NO_TANGENT,
            # np.divide, not /: a Python float y may be 0.0, where / raises and numpy gives inf
            Thunk(lambda: unbroadcast(np.divide(dz, y), x)) if need_x else NO_TANGENT,
            # summed down to y's shape first: a scalar y costs one pass over dz, not three
            Thunk(lambda: np.divide(-_product_to(dz, z, y), y)) if need_y else NO_TANGENT,
        )

    return out, divide_pullback


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


def _log_base(x):
    """log(x), and 0 where x == 0, as autograd and JAX do: then x**y is 0 (y > 0) or 1 (y == 0), flat in y."""
    if is_complex_value(x):  # the same, without np.where (a traced complex x meets only complex rules)
        return np.log(x + (x == 0))
    return np.log(np.where(x == 0, 1.0, x))


def _power_slope(power, x, y):
    """d/dx x**y = y x**(y-1), finite at x == 0 for every integer y >= 0 (it is 0 for y == 0, as in JAX)."""
    if _is_integer(x):
        x = np.multiply(x, 1.0)  # an int to a negative int power is an error in numpy
    if isinstance(y, (int, float, np.number)):
        # a plain exponent: y == 0 gives 0 * x**1, not 0 * 0**-1 = nan at x == 0
        return y * power(x, 1 if y == 0 else y - 1)
    if is_complex_value(y):  # the same, without np.where (a traced complex y meets only complex rules)
        return y * power(x, y - (y != 0))
    return y * power(x, np.where(y == 0, 1, y - 1))


def _exponent_tangent(power, dz, z, x, y):
    # An integer exponent is a count (x**3), as JAX sees it: no tangent; this also keeps
    # log(x) of a negative base out of x**3.
    if _is_integer(y):
        return NO_TANGENT
    # d/dy x**y = log(x) x**y
    return Thunk(lambda: unbroadcast(dz * z * _log_base(x), y))


def _power(names, values, kwargs):
    x, k = names[0], values[1]
    if isinstance(k, (int, float, np.number)) and not isinstance(k, bool):
        dx = f"{k:g}·{x}{_superscript(k - 1)}"
    else:
        dx = f"{names[1]}·{x}^({names[1]}-1)"
    return [f"({dx})", f"log({x})·{{y}}"]


_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def _superscript(k):
    return "" if k == 1 else f"{k:g}".translate(_SUPERSCRIPT)


@rrule(np.power, complex=True, formula=partials(_power))
def power_rrule(x, y, needs=None):
    if type(x) in _SCALARS and (type(y) is int or type(y) in _SCALARS):
        return _power_scalars(x, y)
    if _is_real_square(x, y):
        out = z = np.square(x)  # the same bits as np.power(x, 2), in half the time
    else:
        out = z = np.power(x, y)
    need_x, need_y, large = _needed(needs, z)
    if z.dtype.kind == "c":  # (z is numpy's, or a Tracer: both have a dtype)
        # d(x**y) = y x**(y-1) dx + log(x) x**y dy (principal log; the same 0 at x == 0)
        return z, _complex_pullback(
            "power",
            (x, (lambda dz: dz * _power_slope(np.power, x, y)) if need_x else None),
            (y, (lambda dz: dz * z * _log_base(x)) if need_y and not _is_integer(y) else None))
    if large and not need_y:
        z = None  # only the exponent's tangent reads z

    def power_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: _square_tangent(dz, x) if _is_real_square(x, y) and type(dz) is np.ndarray
                  else unbroadcast(dz * _power_slope(np.power, x, y), x)) if need_x else NO_TANGENT,
            _exponent_tangent(np.power, dz, z, x, y) if need_y else NO_TANGENT,
        )

    return out, power_pullback


def _is_real_square(x, y):
    """x**2 of a float32/float64 ndarray with a Python exponent, where np.square gives the same
    bits as np.power (checked over all classes of floats) and x's tangent is 2x dz."""
    return (type(x) is np.ndarray and (type(y) is int or type(y) is float) and y == 2
            and x.dtype.kind == "f" and x.dtype.itemsize in (4, 8))


def _square_tangent(dz, x):
    """dz · 2x, as ``dz * (2 * x)`` rounds it (doubling is exact), in one pass over x when dz is
    broadcast (a mean's cotangent, 0-strided): its distinct values are doubled instead."""
    if dz.shape == x.shape and 0 in dz.strides:
        return x * (2 * dz[tuple(slice(0, 1) if s == 0 else slice(None) for s in dz.strides)])
    return unbroadcast(dz * (2 * x), x)


def _power_scalars(x, y):
    """`power_rrule` of a float base and a number exponent: `_power_slope` and `unbroadcast`
    written out for two scalars (the same operations, so the same bits), still deferred."""
    z = np.power(x, y)

    def power_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: dz * (y * np.power(x, 1 if y == 0 else y - 1))),
            _exponent_tangent(np.power, dz, z, x, y),
        )

    return z, power_pullback


@rrule(np.float_power, complex=True, formula=partials(_power))
def float_power_rrule(x, y, needs=None):
    # float_power computes in float64 (at least), so its tangents are float64 too
    out = z = np.float_power(x, y)
    need_x, need_y, large = _needed(needs, z)
    if z.dtype.kind == "c":  # complex128 inside: power's complex branch, with float_power
        return z, _complex_pullback(
            "float_power",
            (x, (lambda dz: dz * _power_slope(np.float_power, x, y)) if need_x else None),
            (y, (lambda dz: dz * z * _log_base(x)) if need_y and not _is_integer(y) else None))
    if large and not need_y:
        z = None  # only the exponent's tangent reads z

    def float_power_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: unbroadcast(dz * _power_slope(np.float_power, x, y), x)) if need_x else NO_TANGENT,
            _exponent_tangent(np.float_power, dz, z, x, y) if need_y else NO_TANGENT,
        )

    return out, float_power_pullback


def _power_frule(power):
    def power_frule(d, x, y):
        z = power(x, y)
        # y x**(y-1), with 0 x**1 for y == 0: finite at x == 0 (the reverse rule's convention),
        # so that x**2 at 0 has a third derivative, 0, not 0 * 0**-1 = nan
        if isinstance(y, (int, float, np.number)):
            below = 1 if y == 0 else y - 1
        elif is_complex_value(y):  # the same without np.where, which takes no complex values
            below = y - np.not_equal(y, 0)
        else:
            below = np.where(np.equal(y, 0), 1, y - 1)
        dz = scaled(d[0], y * power(x, below))
        if d[1] is not ZERO:
            # log x, taken as 0 at x == 0 (x**y is flat in y there)
            safe = x + np.equal(x, 0) if is_complex_value(x) else np.where(x == 0, 1.0, x)
            dz = add_variations(dz, d[1] * z * np.log(safe))
        return z, dz

    power_frule.__name__ = f"{power.__name__}_frule"
    return frule(power)(power_frule)


power_frule = _power_frule(np.power)
# (float_power computes in float64 or complex128: its variation follows, with no broadcast
# operand summed, as a derived rule would have to)
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

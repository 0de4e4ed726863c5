"""Fast paths of the elementwise rules met most: add, subtract, multiply, divide, power
(`tapegrad.rules.arithmetic`) and tanh (`tapegrad.rules.unary`).

The rules of those modules say what each derivative is (the reference); these say the same
for the calls a gradient of numerical code makes most (two floats, two arrays of one shape, a
constant number times an array, ``x ** 2``), in fewer steps, and take the reference's place in
the registry (`tapegrad.registry.fast_path`); tests/rules/test_elementwise.py checks each
against its reference on the rule tables. What each shortcut saves, and on which workloads,
is measured in benchmarks/README.md ("Why the fast paths"). The shortcuts:

- two plain scalars (a float beside a float or an int): Python's operators, which round as the
  ufuncs do, and pullbacks that keep nothing and defer nothing;
- arrays of one shape: nothing was broadcast, so a tangent is the cotangent (add), its
  negative or one product; the pullbacks that keep nothing are made once, here;
- ``needs=`` (the rule is told which arguments are constants of the tape): a constant's tangent
  is not computed, and a large argument needed only for its shape is kept as a stand-in
  (`tapegrad.registry.stand_in`), so that it can be freed before the sweep;
- a constant number times a float64 array: the number as a 0-d float64 array, which numpy
  multiplies through its fast path with the same bits;
- ``x ** 2`` of a float array: np.square, the same bits as np.power; its tangent in one pass
  over x when the cotangent is broadcast (a mean's);
- a number times an array, summed back to the number (``variance * K``): a dot product, with
  no array of the cotangent's size;
- tanh of a float64 array: ``1 - y²`` with 1 as a 0-d float64 array; of a large array, the
  pullback's three operations in one buffer of its own (``out=``), since fresh temporaries of
  a large array cost more than the arithmetic.

Each decides on types, shapes and dtypes only, so that a traced pullback (a compiled
gradient) takes the same path as the eager one.

The pullbacks of two numbers (and tanh's of a number) are module-level functions bound to
the values they need (``MethodType(_multiply_numbers_pullback, (x, y))``): 64 bytes for the
method and 64 for a pair, where a function made inside the rule costs 152 with a closure
tuple and 40 for each cell, and a long scalar chain holds one per op until the sweep reaches
it (benchmarks/README.md, "Memory per recorded op").
"""
from __future__ import annotations

from types import MethodType

import numpy as np

from .. import registry
from ..registry import fast_path, stand_in
from ..broadcasting import unbroadcast
from ..tangents import NO_TANGENT, Thunk
from ._shapes import plain_array, real_to
from .arithmetic import exponent_tangent, is_integer, log_base, power_slope

#: plain scalars: nothing to unbroadcast and nothing worth deferring. A set: ``type(a) in`` it
#: hashes a pointer, where a tuple compares an array's type with each entry through ``==``
_SCALARS = frozenset((float, np.float64))
#: 1 as a 0-d float64 array (as `_scaled` takes its number): the same bits as 1.0 beside a
#: float64 array, through numpy's fast path
_ONE_F8 = np.array(1.0)
_ONE_F8.flags.writeable = False
#: with an int beside a float (``s / n``, ``2 * t``, ``1 - t``) the same holds: Python and numpy
#: both convert the int to a double first. Two ints are left to numpy (int64, not Python's ints)
_NUMBERS = _SCALARS | {int}
_F8 = registry.FLOAT64


def _complex_pullback(name, *parts):
    """The pullback of a binary rule with a complex result: ``parts`` are (argument, function of
    the cotangent giving that argument's holomorphic share), one per argument, None for a
    constant whose tangent is not needed."""
    def pullback(dz):
        return (NO_TANGENT, *(NO_TANGENT if share is None else Thunk(lambda x=x, share=share: real_to(share(dz), x))
                              for x, share in parts))

    pullback.__name__ = f"{name}_pullback"
    return pullback


def _passed_on(dz, x):
    """`dz` as the tangent of `x` when the shapes agree; else a Thunk that sums it down to x's
    shape, so that a broadcast constant (``1 + e``) costs no reduction."""
    if type(x) is type(dz) and (type(x) is float or type(x) is np.ndarray and x.shape == dz.shape):
        return dz
    return Thunk(lambda: unbroadcast(dz, x))


def _needed(needs, z):
    """(need x's tangent, need y's tangent, keep only stand-ins of what is not needed)."""
    if needs is None:
        return True, True, False
    return needs[0], needs[1], type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES


def _product_to(dz, y, x):
    """``unbroadcast(dz * y, x)``; for a scalar x (``variance * K``), a dot product, which
    makes no array of dz's size. Decided on shapes and dtypes only, so that a traced pullback
    (a compiled gradient) takes the same path."""
    if getattr(x, "ndim", 0) == 0 and getattr(dz, "ndim", 0) > 0 and dz.shape == getattr(y, "shape", None) \
            and dz.dtype.kind == "f" == y.dtype.kind:
        return unbroadcast(np.dot(np.ravel(dz), np.ravel(y)), x)
    return unbroadcast(dz * y, x)


# --- add and subtract ---

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


@fast_path(np.add)
def add_fast(x, y):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        return x + y, _add_pullback

    z = np.add(x, y)
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":
        return z, _complex_pullback("add", (stand_in(x), lambda dz: dz), (stand_in(y), lambda dz: dz))
    if type(x) is np.ndarray and type(y) is np.ndarray and x.shape == y.shape:
        return z, _add_pullback  # nothing was broadcast, and nothing is kept
    return z, _add_broadcast_pullback(x, y, z)


def _add_broadcast_pullback(x, y, z):
    """`add_fast`'s pullback for every other case (a function of its own, so that the rule
    does not make cells for x and y, which only this pullback captures)."""
    if type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES:  # skip two calls when small
        x, y = stand_in(x), stand_in(y)  # only their shapes are needed

    def add_pullback(dz):
        return NO_TANGENT, _passed_on(dz, x), _passed_on(dz, y)

    return add_pullback


@fast_path(np.subtract)
def subtract_fast(x, y):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        return x - y, _subtract_numbers_pullback

    z = np.subtract(x, y)
    dtype = z.dtype  # (z is numpy's, or a Tracer: both have a dtype)
    if dtype is not _F8 and dtype.kind == "c":
        return z, _complex_pullback("subtract", (stand_in(x), lambda dz: dz), (stand_in(y), np.negative))
    if type(x) is np.ndarray and type(y) is np.ndarray and x.shape == y.shape:
        return z, _subtract_arrays_pullback  # nothing was broadcast, and nothing is kept
    return z, _subtract_broadcast_pullback(x, y, z)


def _subtract_broadcast_pullback(x, y, z):
    """`subtract_fast`'s pullback for every other case (see `_add_broadcast_pullback`)."""
    if type(z) is np.ndarray and z.nbytes >= registry.STAND_IN_BYTES:  # skip two calls when small
        x, y = stand_in(x), stand_in(y)  # only their shapes are needed

    def subtract_pullback(dz):
        return NO_TANGENT, _passed_on(dz, x), Thunk(lambda: unbroadcast(np.negative(dz), y))

    return subtract_pullback


# --- multiply and divide ---

# These take ``needs`` as an ordinary parameter, not a keyword-only one, and keep their array
# case in a function of its own: CPython calls functions with keyword-only parameters the slow
# way, and makes every captured variable's cell on entry, also on the scalar path.


def _multiply_numbers_pullback(xy, dz):
    x, y = xy
    return NO_TANGENT, dz * y, dz * x


def _times_first_pullback(x, dz):  # x a constant: only y's tangent is read
    return NO_TANGENT, NO_TANGENT, dz * x


def _times_second_pullback(y, dz):  # y a constant: only x's tangent is read
    return NO_TANGENT, dz * y, NO_TANGENT


_multiply_numbers_pullback.__name__ = _times_first_pullback.__name__ = "multiply_pullback"
_times_second_pullback.__name__ = "multiply_pullback"


@fast_path(np.multiply)
def multiply_fast(x, y, needs=None):
    if type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS:
        if needs is not None and needs[0] is not needs[1]:  # a constant factor: keep it alone
            return x * y, MethodType(_times_second_pullback, y) if needs[0] else MethodType(_times_first_pullback, x)
        return x * y, MethodType(_multiply_numbers_pullback, (x, y))
    return _multiply_arrays(x, y, needs)


def _multiply_arrays(x, y, needs):
    if needs is not None:
        tx, ty = type(x), type(y)
        # a constant number times a float64 array (0.5 * t), or the other way round
        if ty is np.ndarray and tx in _SCALARS and not needs[0] and y.dtype is _F8:
            return _scaled(x, y, 2)
        if tx is np.ndarray and ty in _SCALARS and not needs[1] and x.dtype is _F8:
            return _scaled(y, x, 1)
    z = np.multiply(x, y)
    if needs is None:  # `_needed`, written out (every array product passes here)
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
    position `at`: its tangent is ``dz * c``, computed with `c` as a 0-d float64 array (numpy
    takes a Python or numpy float beside an array through its slower "weak scalar" path; the
    0-d array of the same float64 gives the same products bit for bit). A cotangent that is
    not a float64 array (a traced one, in a higher derivative) is multiplied by the number."""
    c0 = plain_array(c)
    z = np.multiply(c0, t)

    def multiply_pullback(dz):
        d = dz * c0 if type(dz) is np.ndarray and dz.dtype is _F8 else dz * c
        return (NO_TANGENT, NO_TANGENT, d) if at == 2 else (NO_TANGENT, d, NO_TANGENT)

    return z, multiply_pullback


def _divide_numbers_pullback(yz, dz):
    y, z = yz
    return NO_TANGENT, dz / y, -dz * z / y


def _divided_by_constant_pullback(y, dz):  # y a constant: only x's tangent is read
    return NO_TANGENT, dz / y, NO_TANGENT


_divide_numbers_pullback.__name__ = _divided_by_constant_pullback.__name__ = "divide_pullback"


@fast_path(np.divide)
def divide_fast(x, y, needs=None):
    if (type(x) in _SCALARS and type(y) in _NUMBERS or type(x) is int and type(y) in _SCALARS) and y != 0:
        # (x / 0.0 raises in Python, where numpy gives inf)
        z = x / y
        if needs is not None and needs[0] and not needs[1]:  # a constant divisor: keep it alone
            return z, MethodType(_divided_by_constant_pullback, y)
        return z, MethodType(_divide_numbers_pullback, (y, z))
    return _divide_arrays(x, y, needs)


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
            # summed down to y's shape first: for a scalar y, one pass over dz
            Thunk(lambda: np.divide(-_product_to(dz, z, y), y)) if need_y else NO_TANGENT,
        )

    return out, divide_pullback


# --- powers ---


@fast_path(np.power)
def power_fast(x, y, needs=None):
    if type(x) in _SCALARS and (type(y) is int or type(y) in _SCALARS):
        return _power_scalars(x, y)
    if _is_real_square(x, y):
        out = z = np.square(x)  # the same bits as np.power(x, 2)
    else:
        out = z = np.power(x, y)
    need_x, need_y, large = _needed(needs, z)
    if z.dtype.kind == "c":  # (z is numpy's, or a Tracer: both have a dtype)
        # d(x**y) = y x**(y-1) dx + log(x) x**y dy (principal log; the same 0 at x == 0)
        return z, _complex_pullback(
            "power",
            (x, (lambda dz: dz * power_slope(np.power, x, y)) if need_x else None),
            (y, (lambda dz: dz * z * log_base(x)) if need_y and not is_integer(y) else None))
    if large and not need_y:
        z = None  # only the exponent's tangent reads z

    def power_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: _square_tangent(dz, x) if _is_real_square(x, y) and type(dz) is np.ndarray
                  else unbroadcast(dz * power_slope(np.power, x, y), x)) if need_x else NO_TANGENT,
            exponent_tangent(dz, z, x, y) if need_y else NO_TANGENT,
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
    """`power_fast` of a float base and a number exponent: `power_slope` and `unbroadcast`
    written out for two scalars (the same operations, so the same bits), still deferred."""
    z = np.power(x, y)

    def power_pullback(dz):
        return (
            NO_TANGENT,
            Thunk(lambda: dz * (y * np.power(x, 1 if y == 0 else y - 1))),
            exponent_tangent(dz, z, x, y),
        )

    return z, power_pullback


# --- tanh ---


@fast_path(np.tanh)
def tanh_fast(x):
    y = np.tanh(x)
    if type(y) is np.ndarray:
        if y.nbytes >= registry.STAND_IN_BYTES:
            return y, _tanh_pullback_in_place(y)
        if y.dtype is _F8:
            def tanh_pullback(dy):  # (y is a plain array: 1 - y² records nothing on any tape)
                return NO_TANGENT, dy * (_ONE_F8 - y * y)

            return y, tanh_pullback

    return y, MethodType(_tanh_pullback, y)


def _tanh_pullback(y, dy):
    # d/dx tanh = 1 - tanh²
    return NO_TANGENT, dy * (1 - y * y)


_tanh_pullback.__name__ = "tanh_pullback"


def _tanh_pullback_in_place(y):
    """tanh's pullback of a large array: the same three operations in one buffer of its own
    (out=). Any other cotangent (a Tracer, another shape or dtype) takes the plain expression.
    Decided in the rule, so that a small array's pullback checks nothing."""
    def tanh_pullback(dy):
        if type(dy) is np.ndarray and dy.shape == y.shape and dy.dtype == y.dtype:
            t = np.multiply(y, y)
            np.subtract(1, t, out=t)
            return NO_TANGENT, np.multiply(dy, t, out=t)
        return NO_TANGENT, dy * (1 - y * y)

    return tanh_pullback

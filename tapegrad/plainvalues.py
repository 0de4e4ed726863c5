"""What a Tracer answers when code asks it for a plain value.

Python and numpy ask a value for a plain number or array in many ways: ``bool(t)`` in an
``if``, ``int(t)`` and ``t.__index__()`` for counts and indices, ``float(t)`` in ``math`` and
``%`` formatting, ``np.float64(t)``, ``t.item()``, numpy converting ``t`` with ``__array__``.
A value whose derivative is zero anyway (a bool, an integer, a rounded number) is given, with
a guard op on the tape that records the assumption so that a replay checks it (control flow
takes the path of the value at trace time, as a tracing JIT does); anything else would drop
the gradient, so it is refused with a `ConcreteValueError` that says what to write instead.

`PlainValues` is a base of `tapegrad.tracer.Tracer`, kept apart so that the tracer reads as
the recording of calls; its methods use the Tracer's ``_tape``, ``_var``, ``_val`` and
``_guard``.
"""
from __future__ import annotations

import operator
import sys

import numpy as np

from .errors import BRANCH_HINT, ConcreteValueError, in_scipy, scalar_cast_error, type_str, user_location
from .hints import foreign_function_hint, numpy_call_hint, percent_formatting, random_sampler_hint
from .program.guards import guard_array, guard_bool, guard_index, guard_int, guard_round
from .views import concrete

__all__ = ["PlainValues"]


class PlainValues:
    """A Tracer's answers to bool(), int(), float(), indices, numpy's scalar types and __array__."""

    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        """Refused (a plain array would drop the gradient), but for numpy's scalar types.

        ``np.float64(t)`` is built as a Python float (``float64`` subclasses ``float``): it
        asks ``t.__float__()`` and, when that raises TypeError, ``t.__array__(float64)``; every
        other scalar type (``np.int64(t)``, ``np.float32(t)``) asks ``t.__array__(dtype)``.
        Either way the type's constructor returns a plain number of its type, never what a
        hook returns, and the type cannot be replaced in numpy's namespace without breaking
        ``isinstance`` and ``dtype=np.float64``. So an integer or bool cast, whose derivative
        is zero, is taken with a guard as ``int(t)``/``bool(t)`` are, and a float or complex
        cast is refused with the casts that keep the gradient."""
        val = self._val
        if np.result_type(val).kind in "iub" and (dtype is None or np.dtype(dtype).kind in "iub"):
            # integers or booleans (an index or a mask computed from traced values, T[i] of a
            # plain T) carry no derivative: numpy takes their values, guarded as int(t) is, so
            # that a replay on other values takes the path again
            counts = self._tape.meta.setdefault("concrete", set())
            if self._var in counts:  # (T[i, i]: numpy asks twice; one guard says it)
                plain = np.array(val)
            else:
                counts.add(self._var)
                plain = np.asarray(self._guard(guard_array, np.array(val)))
            return plain if dtype is None else plain.astype(dtype, copy=False)
        if dtype is not None and np.ndim(self._val) == 0:
            kind = np.dtype(dtype).kind
            if kind in "iu":
                # np.int64(t): an integer cast, whose derivative is zero, taken with a guard as int(t)
                return np.array(self.__int__(), dtype=dtype)
            if kind == "b":
                return np.array(self.__bool__(), dtype=dtype)  # np.bool_(t), guarded as bool(t)
            if kind in "fc":
                # np.float64(t) (after __float__) or np.float32(t): a plain number, never a traced one
                raise self._refused(self._sampler_error() or scalar_cast_error(
                    self._described(), dtype))
        sampler = self._sampler_error()  # rng.normal(loc=x): numpy's samplers take plain numbers
        if sampler is not None:
            raise self._refused(sampler)
        foreign = foreign_function_hint()  # a scipy function converting: its name and the way out
        hint = "" if foreign else numpy_call_hint()  # a name bound from numpy, a list given to numpy
        if dtype is not None:
            name = np.dtype(dtype).name
            raise self._refused(ConcreteValueError(
                f"{foreign}numpy asked for {self._described()} as a plain "
                f"{name} at {user_location()} (np.{name}(t), np.asarray(t, dtype=...), or a write "
                f"into a plain array), which would drop its gradient"
                + (f". {hint}" if hint else "" if foreign else
                   f". Cast with t.astype(np.{name}), which keeps it; make the arrays you write into "
                   f"inside the traced function (np.zeros, np.empty, ...) or build them with np.stack")
            ))
        raise self._refused(ConcreteValueError(
            f"{foreign}numpy tried to turn {self._described()} into a plain "
            f"array at {user_location()}, which would drop its gradient. "
            + (hint or
               f"Use the traced value as it is (x.copy() for a copy), build arrays from traced "
               f"values with np.array([...]), np.stack or np.concatenate rather than by assignment "
               f"into a plain array, and use numpy functions rather than math or other functions "
               f"that cannot see traced values")
        ))

    def _sampler_error(self):
        hint = random_sampler_hint(self._described())
        return ConcreteValueError(hint) if hint else None

    def _refused(self, err):
        """`err`, remembered by the tape: code that catches it and goes on (``try: float(x)
        except TypeError: ...``) would return a result without this value's gradient, so the
        trace raises it again when the function returns (`tapegrad.tracing.trace`)."""
        meta = getattr(self._tape, "meta", None)
        if meta is not None and "refused" not in meta:
            meta["refused"] = err
        return err

    def __bool__(self):
        return self._guard(guard_bool, bool(self._val))

    def __index__(self):
        val = self._val
        if not np.issubdtype(np.result_type(val), np.integer):
            raise ConcreteValueError(
                f"{self._var}::{type_str(val)} is used as an index or count at {user_location()}, "
                f"but it is not an integer; convert it explicitly with int() if that is meant"
            )
        index = operator.index(val)  # (an array of several raises, before anything is noted)
        self._tape.meta.setdefault("concrete", set()).add(self._var)
        return self._guard(guard_index, index)

    def __int__(self):
        # int() truncates: its derivative is zero wherever it exists, so nothing is lost
        self._tape.meta.setdefault("concrete", set()).add(self._var)
        return self._guard(guard_int, int(self._val))

    def __round__(self, ndigits=None):
        # round(t) is an integer, as for a float: its derivative is zero wherever it exists,
        # so it is taken with a guard, as int() is; round(t, n) stays traced (np.round)
        if ndigits is not None:
            return np.round(self, ndigits)
        self._tape.meta.setdefault("concrete", set()).add(self._var)
        return self._guard(guard_round, round(self._val))

    def __float__(self):
        # an integer (a count) or a bool (a comparison: float(x > 0), an indicator) loses
        # nothing: take its value, guarded. A float would silently carry no gradient afterwards
        # (math.sin(x) calls this too), so that is refused
        kind = np.result_type(self._val).kind
        if kind in "iu":
            self._tape.meta.setdefault("concrete", set()).add(self._var)
            return float(self._guard(guard_int, int(self._val)))
        if kind == "b":
            return float(self.__bool__())
        caller = sys._getframe(1)
        module = caller.f_globals.get("__name__")
        if module == "logging":
            # logging.info("%.3f", x) formats its message with float(x): a string to show,
            # which keeps no number (logging would print "Logging error" and go on)
            return float(concrete(self))
        if module == "statistics":  # fmean, geometric_mean: math.fsum
            raise self._statistics(caller)
        if percent_formatting(caller):  # "%.3f" % x
            raise self._concrete("float", how=(
                "; \"%.3f\" % x asks float(x): to print a traced value, format it with "
                "f\"{x:.3f}\" or \"{:.3f}\".format(x), which format its value, or print(x)"))
        err = self._concrete("float")
        if in_scipy(caller) and np.size(self._val) == 1:
            # scipy converting (brentq's compiled code does, with the function's result, and goes
            # on past an error raised here into a SystemError elsewhere): it gets the value, and
            # the trace raises `err`, which _concrete has kept, when the function returns
            return float(np.reshape(self._val, ()))
        raise err

    def as_integer_ratio(self):
        """Refused: Python's statistics module reads numbers as exact fractions through it."""
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == "statistics":
            raise self._statistics(caller)
        raise self._concrete("as_integer_ratio")

    def _statistics(self, frame):
        """The refusal of a function of Python's statistics module (statistics.mean([a, b]))."""
        while frame.f_back is not None and frame.f_back.f_globals.get("__name__") == "statistics":
            frame = frame.f_back  # the function the user called (mean, not its helper _sum)
        return self._refused(ConcreteValueError(
            f"statistics.{frame.f_code.co_name}() of {self._described()} "
            f"at {user_location(skip_packages=('statistics', 'fractions'))} "
            f"reads it as a plain number (an exact fraction, or float()), which would drop its "
            f"gradient; use numpy, which takes a list of traced values: np.mean([a, b]), "
            f"np.median, np.std, np.var (ddof=1 for statistics.stdev and variance)"
        ))

    def __complex__(self):
        raise self._concrete("complex")

    def _concrete(self, what, how=""):
        hint = foreign_function_hint()
        return self._refused(ConcreteValueError(
            f"{hint}{what}() of {self._described()} at {user_location()} "
            f"would drop its gradient" + ("" if hint else " (math functions such as math.sin call it "
                                          f"too); use numpy (np.sin, np.exp, ...) on the traced value instead{how}")
        ))

    def item(self, *args):
        raise self._concrete("item", BRANCH_HINT)

    def tolist(self):
        raise self._concrete("tolist", BRANCH_HINT)

"""Guards: the conditions and values a recorded program assumed when it was traced.

Python control flow on a traced value (``if x > 0:``, ``while err > tol:``, ``range(n)``,
``int(t)``) takes the value it has at trace time, so the tape records one path. A guard op
records what that path assumed; replaying the tape on new inputs runs the guard, which
raises `GuardError` when the new inputs would have taken another path.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import TapegradError, short_name
from ..tape import note_text

__all__ = ["GuardError", "guard_bool", "guard_index", "guard_int", "guard_round", "guard_array", "guard_raises", "GUARDS",
           "guard_text"]


class GuardError(TapegradError, RuntimeError):
    """A guard failed on replay: the new inputs take a path the tape did not record."""


def _guard(name, convert, what):
    """A guard function: ``convert(value) == expected``, or GuardError saying what changed."""
    def guard(value, expected):
        got = convert(value)
        if got != expected:
            err = GuardError(f"{what} is now {got}, the tape recorded {expected}")
            err.got = got  # the outcome on these inputs: compiled gradients keep a program per outcome
            raise err
        return got

    guard.__name__ = guard.__qualname__ = name
    guard.__doc__ = f"``{convert.__name__}(value) == expected``, or GuardError."
    return guard


guard_bool = _guard("guard_bool", bool, "the condition")
guard_index = _guard("guard_index", operator.index, "the index")  # a count or an index
guard_int = _guard("guard_int", int, "int()")
guard_round = _guard("guard_round", round, "round()")


def guard_array(value, expected):
    """``value`` holds the integers or booleans `expected` holds, or GuardError: an index or a
    mask computed from traced values and used as a plain array (``T[i]`` of a plain ``T``)."""
    got = np.asarray(value)
    if got.shape != expected.shape or not np.array_equal(got, expected):
        err = GuardError(f"the index array is now {got!r}, the tape recorded {expected!r}")
        err.got = (got.shape, got.dtype.str, got.tobytes())  # (hashable: an outcome's key)
        raise err
    return got


def guard_raises(fn, expected, *args, **kwargs):
    """``fn(*args, **kwargs)`` raises `expected` (an exception class), or GuardError.

    A primitive that raised while being traced (``np.linalg.cholesky`` of a matrix that is not
    positive definite, caught by the user's ``try``/``except``) chose the path the tape went on
    with: replaying it, the call must raise again for the recorded path to hold.
    """
    try:
        fn(*args, **kwargs)
    except expected:
        return None
    except Exception as exc:
        got = type(exc)
    else:
        got = None
    err = GuardError(f"{getattr(fn, '__name__', fn)}() "
                     + (f"now raises {got.__name__}" if got else "no longer raises")
                     + f", the tape recorded {expected.__name__}")
    err.got = got
    raise err


#: how each guard prints in dumps: guard %7 == True, guard index(%3) == 3
GUARDS = {guard_bool: "{} == {!r}", guard_index: "index({}) == {!r}", guard_int: "int({}) == {!r}",
          guard_round: "round({}) == {!r}", guard_array: "{} == {!r}",
          guard_raises: "{} raises {.__name__}"}  # (see guard_text)


def guard_text(op, fmt=repr) -> str:
    """What a guard op checks, as dumps print it: ``%7 == True``, ``cholesky(%2) raises
    LinAlgError``; `fmt` writes each argument."""
    if op.fn is guard_raises:
        args = ", ".join(fmt(a) for a in op.args[2:])
        return f"{short_name(op.args[0])}({args}) raises {op.args[1].__name__}"
    return GUARDS[op.fn].format(fmt(op.args[0]), op.args[1])


def _replay_error(op, exc):
    """What a failed guard means on replay (`Tape.replay` asks the function of a failed op)."""
    if not isinstance(exc, GuardError):
        return None
    return GuardError(
        f"guard {op.var} ({guard_text(op)}) recorded at "
        f"{note_text(op.note)} failed on replay: {exc}. The new inputs take a path the tape did "
        f"not record: trace again"
    )


for _guard in GUARDS:
    _guard.on_replay_error = _replay_error

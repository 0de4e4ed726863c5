"""Array literals of traced values: ``np.array([x[0] * x[1], np.sin(x[2])])``.

numpy gives no traced value a say in ``np.array(list)``: it asks each element for a plain
array (``__array__``), which a traced value must refuse, since that would drop its gradient.
So while a function is traced (or run on dual numbers), `tapegrad` stands in for
``numpy.array`` and ``numpy.asarray``: a list or tuple holding traced or dual values, at any
depth, becomes ``np.stack`` of its entries (constants included), which is recorded and
differentiated like any other call; every other argument goes to numpy's own function
unchanged. Outside a trace numpy's functions are restored, and code that imported them by
name (``from numpy import array``) is not affected.

A call that comes from scipy keeps numpy's own behaviour, so that a scipy function that
cannot see traced values still fails where it converts them, with the error that names
its replacement in `tapegrad.scipy`.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from .pytree import Boxed, find_nested

__all__ = ["literals_allowed"]

_ORIGINAL = {"array": np.array, "asarray": np.asarray}
_lock = threading.Lock()
_users = 0


def _stack(obj):
    """A nested list or tuple holding traced values as one traced array: np.stack of its entries."""
    return np.stack([_stack(e) if type(e) is list or type(e) is tuple else e for e in obj])


def _from_scipy():
    name = sys._getframe(2).f_globals.get("__name__", "")
    return name == "scipy" or name.startswith("scipy.")


def _literal(original):
    def convert(obj, dtype=None, *args, **kwargs):
        if ((type(obj) is list or type(obj) is tuple) and find_nested(obj, Boxed) is not None
                and not _from_scipy()):
            out = _stack(obj)
            return out if dtype is None else out.astype(dtype)
        return original(obj, dtype, *args, **kwargs)

    convert.__name__ = original.__name__
    convert.__doc__ = original.__doc__
    convert.__wrapped_numpy__ = original
    return convert


_LITERALS = {name: _literal(fn) for name, fn in _ORIGINAL.items()}


class literals_allowed:
    """While open (a trace, a forward-mode call), ``np.array`` and ``np.asarray`` take lists of
    traced values; nested uses count, and numpy's functions come back when the last closes."""

    __slots__ = ()

    def __enter__(self):
        global _users
        with _lock:
            if _users == 0:
                for name, fn in _LITERALS.items():
                    setattr(np, name, fn)
            _users += 1

    def __exit__(self, *exc):
        global _users
        with _lock:
            _users -= 1
            if _users == 0:
                for name, fn in _ORIGINAL.items():
                    setattr(np, name, fn)
        return False

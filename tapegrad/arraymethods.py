"""The ndarray methods and attributes of traced and dual values beyond their core
(`tapegrad.arraylike.ArrayLike`: numpy's protocols, shapes, indexing, writes): the methods that
are numpy's functions (``x.sum(axis)`` is ``np.sum(x, axis)``), in-place partition and put, and
what a value's memory would say (``x.nbytes``; ``x.tobytes()`` and ``x.view(dtype)`` refused).
"""
from __future__ import annotations

import numpy as np

from .errors import user_location
from .registry import TRACED_BY
from .views import concrete

__all__ = ["ArrayMethods"]


class ArrayMethods:
    """A mixin of `ArrayLike`: what it needs of it is ``_dispatch``, ``_label``, ``_described``
    (how messages name the value), ``_check_writable`` and ``_become``."""

    __slots__ = ()

    def partition(self, kth, axis=-1, kind="introselect"):
        """``x.partition(k)`` partitions in place, as numpy's method: from now on this value is
        ``np.partition(x, k, axis)``."""
        if not isinstance(concrete(self), np.ndarray):
            raise TypeError(f"partition() of the scalar {self._label()} at {user_location()}")
        self._check_writable("x.partition(k)")
        self._become(np.partition(self, kth, axis=axis, kind=kind))

    def put(self, ind, v, mode="raise"):
        """``x.put(ind, v)`` is ``np.put(x, ind, v)``: a write, as ``x.flat[ind] = v``."""
        np.put(self, ind, v, mode=mode)

    def compress(self, condition, axis=None):
        """``x.compress(c, axis)`` is ``np.compress(c, x, axis)`` (the condition comes first there)."""
        return np.compress(condition, self, axis=axis)

    def view(self, dtype=None, type=None):
        """``x.view()``: the same values (a traced value is a value, not memory); a view as another
        dtype reinterprets bytes, which has no derivative, and is refused."""
        if dtype is not None or type is not None:
            as_what = np.dtype(dtype).name if dtype is not None else type.__name__
            raise TypeError(
                f"x.view({as_what}) of {self._described()} at {user_location()} reads its bytes as "
                f"another type, which has no derivative; use x.astype(np.{as_what}) to convert values")
        return np.reshape(self, np.shape(concrete(self)))

    @property
    def flat(self):
        """``x.flat``: the values in order, as ``np.ravel(x)`` (indexing and iteration)."""
        return np.ravel(self)

    @property
    def itemsize(self):
        return np.result_type(concrete(self)).itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def strides(self):
        v = concrete(self)
        return v.strides if isinstance(v, np.ndarray) else ()

    def tobytes(self, order="C"):
        raise TypeError(
            f"tobytes() of {self._described()} at {user_location()} would turn its values into bytes, "
            f"which carry no gradient; keep the value as it is (write bytes of the result outside "
            f"the differentiated function)")


def _method(fn, name):
    def method(self, *args, **kwargs):
        body = TRACED_BY.get(fn)  # a function traced through (np.compress): its body, as np.compress(x) takes
        if body is not None:
            return body(self, *args, **kwargs)
        return self._dispatch(fn, (self,) + args, kwargs)

    method.__name__ = name
    method.__doc__ = f"``x.{name}(...)`` is ``numpy.{fn.__name__}(x, ...)``."
    return method


for _name, _fn in [
    ("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min),
    ("std", np.std), ("var", np.var), ("cumsum", np.cumsum), ("cumprod", np.cumprod),
    ("ravel", np.ravel), ("dot", np.dot), ("squeeze", np.squeeze),
    ("clip", np.clip), ("copy", np.copy), ("swapaxes", np.swapaxes), ("diagonal", np.diagonal),
    ("trace", np.trace), ("argmax", np.argmax), ("argmin", np.argmin), ("argsort", np.argsort),
    ("repeat", np.repeat), ("round", np.round), ("conj", np.conj), ("conjugate", np.conj),
    ("all", np.all), ("any", np.any), ("nonzero", np.nonzero), ("take", np.take),
    ("ptp", np.ptp), ("argpartition", np.argpartition),
    ("searchsorted", np.searchsorted),
]:
    setattr(ArrayMethods, _name, _method(_fn, _name))

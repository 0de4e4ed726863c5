"""The surface of numpy arrays that traced and dual values share: operators, attributes, methods.

`ArrayLike` holds its value in ``_val`` and sends every operation through ``_dispatch(fn, args,
kwargs)``, which each subclass sets: a Tracer records the call on its tape, a Dual applies
the forward rule. ``a * b`` is ``np.multiply(a, b)``, ``x.sum(axis=0)`` is
``np.sum(x, axis=0)``, ``x.T`` is ``np.transpose(x)``: what the user wrote, in numpy's names.
"""
from __future__ import annotations

import operator

import numpy as np

__all__ = ["ArrayLike"]


class ArrayLike:
    """Operators, attributes and methods of an ndarray, forwarded to numpy functions."""

    __slots__ = ()
    __array_priority__ = 1000

    @staticmethod
    def _dispatch(fn, args, kwargs):  # pragma: no cover - every subclass sets its own
        raise NotImplementedError

    # --- containers ---
    def __len__(self):
        return len(self._val)

    def __iter__(self):
        for i in range(len(self._val)):
            yield self._dispatch(operator.getitem, (self, i), None)

    def __getitem__(self, index):
        return self._dispatch(operator.getitem, (self, index), None)

    # --- attributes numpy users read (shapes are fixed: plain values) ---
    @property
    def shape(self):
        return np.shape(self._val)

    @property
    def ndim(self):
        return np.ndim(self._val)

    @property
    def size(self):
        return np.size(self._val)

    @property
    def dtype(self):
        return np.result_type(self._val)

    @property
    def T(self):
        return self._dispatch(np.transpose, (self,), None)

    @property
    def mT(self):
        return self._dispatch(np.matrix_transpose, (self,), None)

    @property
    def real(self):
        return self._dispatch(np.real, (self,), None)

    @property
    def imag(self):
        return self._dispatch(np.imag, (self,), None)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return self._dispatch(np.reshape, (self, tuple(shape)), kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        if not axes:
            return self._dispatch(np.transpose, (self,), None)
        return self._dispatch(np.transpose, (self, tuple(axes)), None)

    def astype(self, dtype, **kwargs):
        return self._dispatch(np.astype, (self, dtype), kwargs)

    __hash__ = object.__hash__


def _binary(ufunc, name):
    def forward(self, other):
        return self._dispatch(ufunc, (self, other), None)

    def reflected(self, other):
        return self._dispatch(ufunc, (other, self), None)

    forward.__name__ = f"__{name}__"
    reflected.__name__ = f"__r{name}__"
    return forward, reflected


def _unary(ufunc, name):
    def method(self):
        return self._dispatch(ufunc, (self,), None)

    method.__name__ = f"__{name}__"
    return method


def _method(fn, name):
    def method(self, *args, **kwargs):
        return self._dispatch(fn, (self,) + args, kwargs)

    method.__name__ = name
    method.__doc__ = f"``x.{name}(...)`` is ``numpy.{fn.__name__}(x, ...)``."
    return method


for _name, _uf in [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
    ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power),
    ("matmul", np.matmul), ("and", np.logical_and), ("or", np.logical_or),
    ("xor", np.logical_xor), ("divmod", np.divmod),
]:
    _f, _r = _binary(_uf, _name)
    setattr(ArrayLike, f"__{_name}__", _f)
    setattr(ArrayLike, f"__r{_name}__", _r)
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(ArrayLike, f"__{_name}__", _binary(_uf, _name)[0])
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)]:
    setattr(ArrayLike, f"__{_name}__", _unary(_uf, _name))
for _name, _fn in [
    ("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min),
    ("std", np.std), ("var", np.var), ("cumsum", np.cumsum), ("cumprod", np.cumprod),
    ("ravel", np.ravel), ("flatten", np.ravel), ("dot", np.dot), ("squeeze", np.squeeze),
    ("clip", np.clip), ("copy", np.copy), ("swapaxes", np.swapaxes), ("diagonal", np.diagonal),
    ("trace", np.trace), ("argmax", np.argmax), ("argmin", np.argmin), ("argsort", np.argsort),
    ("repeat", np.repeat), ("round", np.round), ("conj", np.conj), ("conjugate", np.conj),
    ("all", np.all), ("any", np.any), ("nonzero", np.nonzero), ("take", np.take),
    ("ptp", np.ptp), ("compress", np.compress),
]:
    setattr(ArrayLike, _name, _method(_fn, _name))



"""The surface of numpy arrays that traced and dual values share: operators, attributes, methods.

`ArrayLike` holds its value in ``_val`` and sends every operation through ``_dispatch(fn, args,
kwargs)``, which each subclass sets: a Tracer records the call on its tape, a Dual applies
the forward rule. ``a * b`` is ``np.multiply(a, b)``, ``x.sum(axis=0)`` is
``np.sum(x, axis=0)``, ``x.T`` is ``np.transpose(x)``: what the user wrote, in numpy's names.
numpy's ufuncs and functions reach `_dispatch` through ``__array_ufunc__`` and
``__array_function__``; a function marked with `primitive` reaches it by itself. This is the
only module that defines operators.
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from .errors import user_location
from .pytree import Boxed, find_nested
from .arraymethods import ArrayMethods
from .registry import TRACED_BY
from .views import VIEWS, concrete, note_view, view_positions

__all__ = ["ArrayLike", "WRITERS", "SHAPE_FUNCTIONS", "primitive", "is_marked_primitive",
           "is_traceable", "updated", "added_at",
           # from .views, where they live (forward mode imports them from here)
           "VIEWS", "note_view"]


def primitive(fn=None, *, traceable=True):
    """Mark a function so that a Tracer sees its calls as one unit.

    Called on plain values it just runs. Called with traced values (also inside tuples and
    lists), the active context decides: a context that treats it as primitive records one op
    (with a rule registered by `tapegrad.rrule`, a gradient context differentiates it with
    that rule); otherwise its body is traced through. Called with dual numbers, it applies
    its forward rule.

    ``traceable=False`` says that the body cannot be traced, because it hands its inputs to a
    library that converts them with ``np.asarray`` (scipy's functions do): every context then
    records it as one op. This is how the replacements in `tapegrad.scipy` are made, and it
    works on a function of another library as it is: ``primitive(scipy.special.polygamma,
    traceable=False)``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> @tapegrad.primitive
    ... def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> class KeepSoftplus(tapegrad.context.BaseContext):
    ...     def is_primitive(self, fn, *args):
    ...         return fn is softplus or super().is_primitive(fn, *args)
    >>> _, tape = tapegrad.trace(lambda x: 2 * softplus(x), 0.5, ctx=KeepSoftplus())
    >>> print(tape)
    Tape
      inp %1::function lambda
      inp %2::float64   # x
      %3 = softplus(%2)::float64
      %4 = multiply(2, %3)::float64
    """
    if fn is None:
        return functools.partial(primitive, traceable=traceable)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # a traced or dual value among the arguments decides (a dual value hands a call that
        # also holds a traced one on to the trace)
        special = find_nested((*args, *kwargs.values()), ArrayLike)
        if special is not None:
            return special._dispatch(wrapper, args, kwargs)
        return fn(*args, **kwargs)

    wrapper.__tapegrad_primitive__ = "traceable" if traceable else "whole"
    return wrapper


def is_marked_primitive(fn) -> bool:
    """True for a function made by `primitive`."""
    return getattr(fn, "__tapegrad_primitive__", None) is not None


def is_traceable(fn) -> bool:
    """True for a `primitive` whose body a context may trace through (not ``traceable=False``)."""
    return getattr(fn, "__tapegrad_primitive__", None) == "traceable"


@primitive(traceable=False)
def updated(x, index, v):
    """A copy of `x` with ``x[index] = v`` applied (numpy's assignment, broadcasting `v`): the
    functional form of an in-place write, which traced and dual values record instead."""
    out = np.array(x, copy=True)
    out[index] = v
    return out


@primitive(traceable=False)
def added_at(x, index, b):
    """A copy of `x` with ``np.add.at(x, index, b)`` applied: unbuffered, so a position that
    `index` names several times receives every share; the functional form of ``np.add.at``."""
    out = np.array(x, copy=True)
    np.add.at(out, index, b)
    return out


#: writers among numpy's functions (np.copyto, np.put, ...), declared in `tapegrad.writes` with
#: ``declare(fn, traced_by=handler)``: a call of one that reaches a traced value goes to its
#: handler, ``handler(*args, **kwargs)``
WRITERS = TRACED_BY


# numpy functions that depend only on shapes, which are fixed while tracing: they answer with
# plain values and record nothing (as shapes are static in JAX).
SHAPE_FUNCTIONS = frozenset((np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj,
                             np.isrealobj, np.can_cast, np.min_scalar_type))

#: one clock for the traces and the forward-mode passes of this process: a later one is nested
#: inside (or after) an earlier one, so it handles the calls the two share
_EPOCHS = itertools.count(1)


def new_epoch() -> int:
    """The next tick of the nesting clock (a trace's, or the tag of a forward-mode pass's Duals)."""
    return next(_EPOCHS)


class ArrayLike(ArrayMethods, Boxed):
    """Operators, attributes and methods of an ndarray, forwarded to numpy functions."""

    __slots__ = ()
    __array_priority__ = 1000

    @staticmethod
    def _dispatch(fn, args, kwargs):  # pragma: no cover - every subclass sets its own
        raise NotImplementedError

    # --- numpy protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":
            return _ufunc_at(ufunc, *inputs)
        out = kwargs.pop("out", None)
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        if out is None:
            return self._dispatch(fn, inputs, kwargs)
        where = kwargs.pop("where", True)
        results = self._dispatch(fn, inputs, kwargs)
        return _write_out(out, results if ufunc.nout > 1 else (results,), where)

    def __array_function__(self, func, types, args, kwargs):
        if func in SHAPE_FUNCTIONS:
            return func(*[a._val if isinstance(a, ArrayLike) else a for a in args], **kwargs)
        writer = WRITERS.get(func)
        if writer is not None:
            return writer(*args, **kwargs)
        out = kwargs.get("out")
        if out is not None:  # a reduction or another function writing into out=
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
            result = self._dispatch(func, args, kwargs)
            return _write_out(out if type(out) is tuple else (out,), (result,), True)
        return self._dispatch(func, args, kwargs)

    def __format__(self, spec):
        # f"{x:.3f}" shows the value: a string carries no gradient, so formatting drops nothing
        # (and records nothing: a compiled gradient prints only when it traces)
        return format(concrete(self), spec) if spec else str(self)

    def _modular_pow_error(self, other, modulo, what=None):
        """The refusal of ``pow(x, y, m)``: Python takes three-argument pow of integers only."""
        y = other if isinstance(other, (int, float)) else "y"
        return TypeError(
            f"pow(x, {y}, {modulo!r}) of {what or self._label()} at {user_location()}: Python's "
            f"three-argument pow takes integers only (pow(1.5, 2, 5) raises TypeError too), and a "
            f"remainder has no derivative at its jumps; write x ** {y} % {modulo!r} "
            f"(np.mod(x ** {y}, {modulo!r})), which is differentiated between them, or "
            f"pow(int(x), {y}, {modulo!r}) for integer arithmetic on its value"
        )

    # --- containers ---
    def __len__(self):
        return len(self._val)

    def __iter__(self):
        for i in range(len(self._val)):
            yield self._dispatch(operator.getitem, (self, i), None)

    def __getitem__(self, index):
        # a traced bound in a slice (x[k:]) is read as a plain integer here, which guards it,
        # as the shape of the result depends on it: the tape keeps no traced value inside a
        # slice, where replay could not replace it
        t = type(index)
        if t is slice:
            index = _plain_slice(index)
        elif t is tuple and slice in map(type, index):
            index = tuple(_plain_slice(i) if type(i) is slice else i for i in index)
        return self._dispatch(operator.getitem, (self, index), None)

    # --- attributes numpy users read (shapes are fixed: plain values) ---
    @property
    def shape(self):
        v = self._val  # (an array's own attribute: np.shape is a dispatched Python function)
        return v.shape if type(v) is np.ndarray else np.shape(v)

    @property
    def ndim(self):
        v = self._val
        return v.ndim if type(v) is np.ndarray else np.ndim(v)

    @property
    def size(self):
        v = self._val
        return v.size if type(v) is np.ndarray else np.size(v)

    @property
    def dtype(self):
        return np.result_type(self._val)

    @property
    def T(self):
        return self._dispatch(np.transpose, (self,), None)

    @property
    def mT(self):
        # through numpy's function, as a user's np.matrix_transpose(x): it has no rule of its own
        # and reaches np.swapaxes's (tapegrad.rules.array_api); dispatched here it met no rule
        return np.matrix_transpose(self)

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

    def flatten(self, order="C"):
        """``x.flatten()`` is a copy of ``np.ravel(x)``, as numpy's method: never a view."""
        out = self._dispatch(np.ravel, (self,), None if order == "C" else {"order": order})
        views = getattr(self, "_views", None)
        if getattr(out, "_base", None) is not None and views and views[-1] is out:
            views.pop()
            out._base = None
        return out

    def fill(self, value):
        """``x.fill(v)`` sets every element to v, as numpy's method: ``x[...] = v``."""
        self[...] = value

    def astype(self, dtype, **kwargs):
        if type(concrete(self)) in (float, int, complex):
            # numpy's astype takes arrays only: a Python number is cast as its 0-d array, and
            # the result is numpy's scalar, as np.float64(1.5).astype(np.float32) gives
            return np.reshape(self, ()).astype(dtype, **kwargs)[()]
        return self._dispatch(np.astype, (self, dtype), kwargs)

    # --- in-place updates: done as functional updates, after which this object holds the result.
    # Subclasses provide _take(new) (adopt new's state), _label() and _make_stale(reason).
    def __setitem__(self, index, value):
        if not isinstance(concrete(self), np.ndarray):
            raise TypeError(f"item assignment on the scalar {self._label()} at {user_location()}")
        self._check_writable("x[...] = v")
        self._become(self._dispatch(updated, (self, index, value), None))

    def sort(self, axis=-1, kind=None):
        """``x.sort()`` sorts in place, as numpy's method: from now on this value is
        ``np.sort(x, axis)`` (through a view, its base changes too)."""
        if not isinstance(concrete(self), np.ndarray):
            raise TypeError(f"sort() of the scalar {self._label()} at {user_location()}")
        self._check_writable("x.sort()")
        kwargs = {"axis": axis} if kind is None else {"axis": axis, "kind": kind}
        self._become(self._dispatch(np.sort, (self,), kwargs))

    def _check_writable(self, pattern):
        base = getattr(self, "_base", None)
        if base is not None and base[5] is not None:
            kind, why = base[5]
            raise kind(f"{pattern} at {user_location()} writes into {self._label()}, a view: {why}")

    def _become(self, new, keep=None):
        """Stand for `new` from now on; write through to the base of a view; stale other views."""
        old = self._label()
        self._take(new)
        views = getattr(self, "_views", None)
        if views:
            where = user_location()
            for v in views:
                if v is not keep:
                    _stale_all(v, f"{v._label()} is a view of {old}, which was written in place at "
                                  f"{where}; numpy would show the change through the view, tapegrad "
                                  f"does not: take the view again after the update")
            self._views = [keep] if keep is not None else []
        base = getattr(self, "_base", None)
        if base is not None:
            parent = base[0]
            index = view_positions(self)
            parent._become(parent._dispatch(updated, (parent, index, self), None), keep=self)

    def _inplace(self, ufunc, other):
        new = self._dispatch(ufunc, (self, other), None)
        val = concrete(self)
        if not isinstance(val, np.ndarray):
            return new  # numbers are immutable: x += y rebinds the name only
        self._check_writable(f"{ufunc.__name__} in place")
        new_val = concrete(new)
        if np.shape(new_val) != val.shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {val.shape} doesn't match the "
                f"broadcast shape {np.shape(new_val)} (in-place {ufunc.__name__} at {user_location()})"
            )
        if np.result_type(new_val) != val.dtype:
            if not np.can_cast(np.result_type(new_val), val.dtype, "same_kind"):
                raise TypeError(
                    f"in-place {ufunc.__name__} at {user_location()} cannot cast "
                    f"{np.result_type(new_val)} to {val.dtype} (numpy's same_kind rule)"
                )
            new = self._dispatch(np.astype, (new, val.dtype), None)
        self._become(new)
        return self

    __hash__ = object.__hash__


def _write_out(out, results, where):
    """Write each result into its ``out=`` array, as numpy does (``where=``: only there);
    numpy returns the out arrays."""
    for target, result in zip(out, results):
        if target is None:
            continue
        if where is not True:
            result = np.where(where, result, target)
        target[...] = result
    return out[0] if len(out) == 1 else out


def _ufunc_at(ufunc, a, index, b=None):
    """``np.add.at(a, index, b)`` and ``np.subtract.at``: unbuffered, every share counts."""
    if ufunc is np.add or ufunc is np.subtract:
        a[...] = added_at(a, index, b if ufunc is np.add else np.negative(b))
        return None
    raise NotImplementedError(
        f"np.{ufunc.__name__}.at at {user_location()} with traced values: tapegrad follows "
        f"np.add.at and np.subtract.at; write the updates as x[index] = ... in a loop instead"
    )


def _stale_all(view, reason):
    view._make_stale(reason)
    for v in getattr(view, "_views", None) or ():
        _stale_all(v, reason)


def _inplace_method(ufunc, name):
    def method(self, other):
        return self._inplace(ufunc, other)

    method.__name__ = f"__i{name}__"
    return method


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul)]:
    setattr(ArrayLike, f"__i{_name}__", _inplace_method(_uf, _name))


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


for _name, _uf in [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
    ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power),
    ("matmul", np.matmul), ("and", np.bitwise_and), ("or", np.bitwise_or),
    ("xor", np.bitwise_xor), ("divmod", np.divmod),
]:
    _f, _r = _binary(_uf, _name)
    setattr(ArrayLike, f"__{_name}__", _f)
    setattr(ArrayLike, f"__r{_name}__", _r)


def _pow(self, other, modulo=None):
    if modulo is not None:  # pow(x, y, m)
        raise self._modular_pow_error(other, modulo)
    return self._dispatch(np.power, (self, other), None)


ArrayLike.__pow__ = _pow
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(ArrayLike, f"__{_name}__", _binary(_uf, _name)[0])
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)]:
    setattr(ArrayLike, f"__{_name}__", _unary(_uf, _name))


def _plain_slice(s):
    """`s` with bounds that are plain integers (a traced bound is read through __index__)."""
    start, stop, step = s.start, s.stop, s.step
    if ((start is None or type(start) is int) and (stop is None or type(stop) is int)
            and (step is None or type(step) is int)):
        return s
    return slice(*(None if b is None else operator.index(b) for b in (start, stop, step)))

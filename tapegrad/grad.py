"""Reverse mode, the user's entry points: `grad`, `gradient` and `pullback`, and the checks
of what they are given and what `f` returns (seeds, results).

`pullback` traces `f` under a `GradContext` and hands back a `Pullback`, whose every call
runs the reverse sweep recorded onto the same tape (`tapegrad.sweep.back`): the tape is the
user's, and keeps every value. `grad` traces `f` on a private tape
(``GradContext(private=True)``, see `tapegrad.gradcontext`) and runs the same sweep once,
unrecorded (`tapegrad.sweep.back_values`), freeing each value as soon as nothing later needs
it. It keeps Python's cyclic collector paused until its tape has been freed (reference
counting frees it; `Tape.__del__` breaks the op/Variable cycles). benchmarks/README.md has
the measurements behind these choices.
"""
from __future__ import annotations

import gc

import numpy as np

from .tracing import ARGUMENTS, trace
from .errors import (
    SeedError,
    StaleInputError,
    is_complex_value,
    restore_warnings,
    route_warnings,
    type_str,
    user_location,
)
from .gradcontext import GradContext
from .pytree import Boxed, flatten, tangent_of
from .sweep import back, back_values
from .tangents import NO_TANGENT, ZERO
from .tape import Input, paused_gc

__all__ = ["Pullback", "grad", "gradient", "pullback"]

_ndarray = np.ndarray
_float64 = np.float64
_ONE_FLOAT64 = np.float64(1.0)  # the default seed of a numpy float result (numpy scalars are immutable)


def _default_seed(y, where):
    if type(y) is float:
        return 1.0
    if type(y) is _float64:  # a numpy float gets a numpy float (a loss reduced by np.sum or np.mean)
        return _ONE_FLOAT64
    if np.size(_innermost(y)) != 1:
        raise SeedError(
            f"{where} returned {type_str(y)}, not a scalar, so the gradient taken at "
            f"{user_location()} needs a seed: pass "
            f"seed= an array of the same shape (the vector in a vector-Jacobian product), "
            f"for example seed=np.ones({np.shape(y)})"
        )
    if is_complex_value(y):
        # a gradient is of a real number; which real number a complex result stands for is
        # the caller's choice (autograd and JAX refuse it too, unless told it is holomorphic)
        raise SeedError(
            f"{where} returned {type_str(y)}, a complex number, so the gradient taken at "
            f"{user_location()} needs a seed: pass seed=1.0 for the gradient of its real part "
            f"(for a holomorphic {where}, its derivative f'(z), as autograd's holomorphic_grad), "
            f"seed=-1j for that of its imaginary part, or return a real number such as "
            f"np.abs(...) ** 2"
        )
    # one number, perhaps in an array of size 1 (shape (1,), as scipy.optimize objectives
    # return): the seed 1 of its shape and dtype, as autograd takes it (1.0 for a traced number)
    inner = _innermost(y)
    if isinstance(y, (np.ndarray, np.generic)) or np.ndim(inner):
        if inner.dtype.kind in "fc":
            one = np.ones(np.shape(inner), dtype=inner.dtype)
            return one if np.ndim(inner) else one[()]
    return 1.0


def _innermost(x):
    """The plain value inside a value traced by enclosing traces or a dual number."""
    while isinstance(x, Boxed):
        x = x._val
    return x


def _complex_seed(y, seed):
    """A real seed of a complex result, as a complex value of the result's dtype: the rules'
    pullbacks see cotangents of their values' dtype. A traced or dual seed (of an enclosing
    trace: a pullback differentiated with respect to its cotangent) is cast by a recorded
    ``astype``, so that its derivative flows back through the cast."""
    if not is_complex_value(y) or np.iscomplexobj(_innermost(seed)):
        return seed
    dtype = np.result_type(_innermost(y))
    if isinstance(seed, Boxed):
        return seed.astype(dtype)
    return np.asarray(seed, dtype=dtype) if isinstance(seed, np.ndarray) else dtype.type(seed)


def _numeric(x) -> bool:
    """A number (not a bool) or an array of numbers, also traced by an enclosing trace or dual:
    what a result or a seed may be."""
    x = _innermost(x)
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iufc"
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, bool)


def _check_seed(y, seed, where):
    """A seed is a number or an array of numbers of the result's shape (plain, or traced by an
    enclosing trace: the cotangent of a pullback that is itself differentiated)."""
    if type(seed) is float and type(y) is float:
        return
    if not _numeric(seed):
        raise SeedError(
            f"the seed given at {user_location()} is {type_str(seed)}; a seed is a number, or an "
            f"array of numbers of the result's shape ({where} returned {type_str(y)})"
            + (": pass np.asarray(seed)" if isinstance(seed, (list, tuple)) else "")
        )
    if np.iscomplexobj(_innermost(seed)) and not np.iscomplexobj(_innermost(y)):
        raise SeedError(
            f"the seed given at {user_location()} is complex, but {where} returned a real "
            f"{type_str(y)}; pass a real seed"
        )
    if np.shape(_innermost(seed)) != np.shape(_innermost(y)):
        raise SeedError(
            f"the seed given at {user_location()} has shape {np.shape(_innermost(seed))} but {where} returned "
            f"{type_str(y)}; pass a seed of the result's shape, {np.shape(_innermost(y))}"
        )


def _check_result(f, value):
    """A result has a derivative when it is a number, an array of numbers, or a tuple, list or
    dict of those; anything else (None, a string, a set) raises, naming what came back."""
    if type(value) is float or type(value) is _float64:  # (a loss is often a numpy float)
        return
    _, leaves = flatten(value)
    for leaf in leaves:
        while isinstance(leaf, Boxed):  # a value traced by an enclosing trace, or a dual number
            leaf = leaf._val
        if _numeric(leaf):
            continue
        what = type(value).__name__ if leaf is value else f"a {type(value).__name__} holding {type_str(leaf)}"
        raise TypeError(
            f"{getattr(f, '__name__', 'f')} returned {what} at {user_location()}, which has no "
            f"derivative; return a number, an array of numbers, or a tuple, list or dict of them"
        )


class Pullback:
    """``back(dy) -> (df, *dargs)``: the reverse sweep of one recorded call, runnable many times.

    `tape` holds the forward program and, after a call, the backward program of that call.
    """

    def __init__(self, f, args, tape, value):
        self.f = f
        self.args = args
        self.tape = tape
        self.value = value
        self._n_forward = len(tape.ops)
        self._inputs = None

    def keep_inputs(self):
        """Keep a copy of each input array, so that `back` can tell if one was changed in place
        (the recorded pullbacks hold the arrays themselves, and would use the new values)."""
        self._inputs = [(op, op.val.copy()) for op in self.tape.ops
                        if type(op) is Input and type(op.val) is _ndarray]

    def _check_inputs(self):
        for op, kept in self._inputs or ():
            if not np.array_equal(op.val, kept, equal_nan=True):
                raise StaleInputError(
                    f"the input {op.var}{' (' + op.note + ')' if op.note else ''}::{type_str(op.val)} "
                    f"of this pullback was changed in place after pullback() recorded it, and the "
                    f"pullback run at {user_location()} would mix old and new values; call "
                    f"pullback again after changing it, or change a copy"
                )

    def __call__(self, dy=None):
        self._check_inputs()
        token = route_warnings()
        try:
            return self._sweep(dy, record=True)
        finally:
            restore_warnings(token)

    def _sweep(self, dy, record):
        """The reverse sweep from `dy`: recorded onto the tape (`back`), or, for `grad`, whose
        tape nobody reads afterwards, computed without recording (`back_values`)."""
        tape = self.tape
        y = self.value
        structured = tape.meta.get("structured_result", False)
        if dy is None and type(y) is float and not structured:
            dy = 1.0  # `_default_seed` of a float, without the call (a scalar gradient's fixed cost)
        elif dy is None:
            name = getattr(self.f, "__name__", "f")
            if structured:
                raise SeedError(
                    f"{name} returned a {type(y).__name__}, so the gradient taken at "
                    f"{user_location()} needs a seed: pass "
                    f"seed= a {type(y).__name__} of the same structure, one seed per entry "
                    f"(1.0 for a scalar entry, an array of its shape for an array)"
                )
            dy = _default_seed(y, name)
        elif not structured:
            _check_seed(y, dy, getattr(self.f, "__name__", "f"))
            if type(dy) is not float or type(y) is not float:
                dy = _complex_seed(y, dy)
        del tape.ops[self._n_forward:]
        if record:
            with paused_gc():
                derivs = back(tape, dy)
            #: Variable of each input -> Variable of its derivative, after the last call
            self.derivatives = derivs

            def derivative_of(var):
                d = derivs.get(var)
                return None if d is None else d._op.val
        else:
            derivative_of = back_values(tape, dy).get  # (grad keeps the collector paused)
        concrete = tape.meta.get("concrete", ())

        fspec, argspecs, kwspecs = tape.meta["inputs"]
        memo = {}
        grads = [ZERO if fspec.kind == "static" else tangent_of(fspec, derivative_of, concrete, memo)]
        for s in argspecs:  # (an argument not differentiated, data, without a call)
            grads.append(NO_TANGENT if s.kind == "static" else tangent_of(s, derivative_of, concrete, memo))
        if kwspecs:
            grads.append({k: tangent_of(s, derivative_of, concrete, memo) for k, s in kwspecs.items()})
        return tuple(grads)

    def __repr__(self):
        return f"<pullback of {getattr(self.f, '__name__', self.f)!r} at {self.value!r}>"


def pullback(f, *args, **kwargs):
    """Run `f` and return ``(y, back)``; ``back(dy)`` returns ``(df, *dargs)``.

    ``back()`` with no argument uses the seed 1 (scalar results only). ``back.tape`` is the
    recorded program: the forward part, and the backward part of the last call of `back`.
    The recorded pullbacks hold the input arrays themselves: change one in place and `back`
    raises `StaleInputError` rather than mix old and new values.

    Examples
    --------
    >>> import tapegrad
    >>> y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> y
    0.18181818181818182
    >>> back(1.0)
    (ZeroTangent(), 0.0743801652892562, -0.09917355371900827)
    """
    token = route_warnings()  # numpy's warnings inside rules point at the user's line
    try:
        value, tape = trace(f, *args, ctx=GradContext(), **kwargs)
    finally:
        restore_warnings(token)
    _check_result(f, value)
    back = Pullback(f, args, tape, value)
    back.keep_inputs()
    return value, back


def grad(f, *args, seed=None, **kwargs):
    """Value and gradient: ``grad(f, *args) -> (value, (df, *dargs))``.

    `df` is the gradient with respect to `f` itself (`ZeroTangent()` for a plain function).
    Each gradient has the type of its argument: a float for a float or int, an ndarray of the
    same shape and dtype for an ndarray; `ZeroTangent()` where no path reaches an argument and
    `NoTangent()` where it cannot have a derivative (an integer used as a count). A non-scalar
    result needs a `seed` of its shape: the gradient is then a vector-Jacobian product.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> tapegrad.grad(lambda x: np.sin(np.cos(x)), 0.9)
    (0.5823447254418763, (ZeroTangent(), -0.6367993086184733))

    The tape is private to the call, so it records a large array result only by its shape
    and dtype (`tapegrad.registry.stand_in`): an intermediate that no pullback needs is freed
    as soon as `f` drops it, as plain numpy would free it. The reverse sweep runs without
    being recorded (`back_values`), and the values the pullbacks keep are freed as it leaves
    them behind (as PyTorch's ``backward()`` frees saved tensors). Use `pullback` to keep the
    whole forward-and-backward tape and read it; the gradients are the same, bit for bit.
    """
    # (``_size=[]``, from `compiled_grad`: the number of ops the tape recorded is appended to
    # it, from which it reads how long the gradient program would be)
    size = kwargs.pop("_size", None) if kwargs else None
    # The collector stays paused until the tape has been freed: resumed earlier, its first
    # pass would walk every op of a tape that reference counting is about to free anyway.
    token = route_warnings()  # numpy's warnings inside rules point at the user's line
    gc_was_on = gc.isenabled()  # `paused_gc`, without making its object (a fixed cost)
    gc.disable()
    try:
        value, tape = trace(f, *args, ctx=GradContext(private=True), **kwargs)
        _check_result(f, value)
        if size is not None:
            size.append(len(tape.ops))
        back_ = Pullback(f, args, tape, value)
        grads = back_._sweep(seed, record=False)  # the tape goes after this one sweep
        del back_, tape
    finally:
        if gc_was_on:
            gc.enable()
        restore_warnings(token)
    return value, grads


def gradient(f, *args, seed=None, **kwargs):
    """Only the gradients with respect to the arguments: ``gradient(f, *args) -> dargs``.

    The values `f` captures are not traced (as `grad` traces them, for `df`): they stay the
    plain constants they are, so a closure's data costs no work in the sweep, and a value a
    solver refuses to differentiate (an ODE's output times) may be captured. `wrt=` chooses
    among the arguments as in `trace`.

    Examples
    --------
    >>> import tapegrad
    >>> tapegrad.gradient(lambda x, y: x * y + y, 2.0, 3.0)
    (3.0, 3.0)
    """
    return grad(f, *args, seed=seed, **{"wrt": ARGUMENTS, **kwargs})[1][1:]

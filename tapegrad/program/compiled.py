"""Compiled, cached gradients: trace the gradient program once per input signature, replay it as Python.

``g = tapegrad.compiled_grad(f)`` behaves like ``lambda *args: tapegrad.grad(f, *args)``. On a
call with a new *signature* (the structure of the arguments, the shapes and dtypes of their
leaves, and the values of the leaves that are not differentiated) it traces the whole
gradient computation, ``grad`` itself included, into a tape of plain numpy calls; simplifies
it, removes common subexpressions and dead code; and compiles it to Python source. Later calls
with the same signature run that function directly.

The program records the path the first call took: control flow on traced values leaves
guards in it. A call whose inputs fail a guard is traced again for its own path, and both
programs are kept. The cache is bounded (least recently used signatures are dropped first).

Values a function reads from globals are baked in at trace time, as in ``jax.jit``: change a
global and call ``g.cache_clear()``. Values a closure captures are inputs (differentiable, as
in `grad`) and are read afresh on every call.
"""
from __future__ import annotations

from collections import OrderedDict

from .codegen import compile_tape
from ..grad import grad
from .guards import GuardError
from .passes import optimize
from ..pytree import finalize, flatten, spec_key
from ..context import param_names, trace
from ..tape import paused_gc
from ..tracer import plain_scalar

__all__ = ["compiled_grad", "CompiledGrad"]


def _gradient_program(f, seed, *args, _wrt=None, **kwargs):
    return grad(f, *args, seed=seed, wrt=_wrt, **kwargs)


class CompiledGrad:
    """``grad(f, *args, seed=None, **kwargs)`` traced once per signature and replayed as compiled Python."""

    def __init__(self, f, maxsize: int = 64, assume_finite: bool = False, wrt=None):
        self.f = f
        self.wrt = wrt
        self.maxsize = maxsize
        self.assume_finite = assume_finite
        self._cache = OrderedDict()  # signature -> [compiled program, ...] (one per path)
        self.hits = self.misses = self.retraces = 0

    def _signature(self, args, seed, kwargs):
        memo, leaves = {}, []

        def key_of(x):
            spec, found = flatten(x, argument=True, memo=memo)
            leaves.extend(found)
            return spec_key(spec)

        positional = tuple(key_of(x) for x in (self.f, seed, *args))
        kw = tuple(sorted((k, key_of(v)) for k, v in kwargs.items()))
        return (positional, kw, len(leaves)), leaves

    def __call__(self, *args, seed=None, **kwargs):
        key, leaves = self._signature(args, seed, kwargs)
        programs = self._cache.get(key)
        if programs is not None:
            self._cache.move_to_end(key)
            for program in programs:
                try:
                    out = program(_gradient_program, *leaves)
                except GuardError:
                    continue
                self.hits += 1
                return self._finish(out, args)
            self.retraces += 1
        else:
            self.misses += 1
        names = ["f", "seed"] + param_names(self.f, len(args))
        # Python's cyclic collector is paused while the program is traced, optimized and
        # compiled: each of these makes objects by the hundred thousand that live to the end,
        # and the collector's passes over them took most of the time (benchmarks/README.md)
        with paused_gc():
            out, tape = trace(_gradient_program, self.f, seed, *args, _names=names, _wrt=self.wrt, **kwargs)
            program = compile_tape(optimize(tape, assume_finite=self.assume_finite), "gradient_program")
        program.__tape__ = tape
        self._cache.setdefault(key, []).append(program)
        self._cache.move_to_end(key)
        while len(self._cache) > self.maxsize:
            self._cache.popitem(last=False)
        return self._finish(out, args)

    def _finish(self, out, args):
        value, grads = out
        return plain_scalar(value), finalize(grads, (self.f, *args))

    def cache_info(self) -> dict:
        """Hits, misses, retraces (a guard failed) and the number of signatures held."""
        return {"hits": self.hits, "misses": self.misses, "retraces": self.retraces,
                "signatures": len(self._cache), "maxsize": self.maxsize}

    def cache_clear(self) -> None:
        """Forget every compiled program (after changing a global the function reads)."""
        self._cache.clear()

    def source(self, *args, seed=None, **kwargs) -> str:
        """The Python source of the program that a call with these arguments runs."""
        self(*args, seed=seed, **kwargs)
        key, leaves = self._signature(args, seed, kwargs)
        for program in self._cache[key]:
            try:
                program(_gradient_program, *leaves)
            except GuardError:
                continue
            return program.__source__
        raise RuntimeError("no compiled program accepts these arguments")  # pragma: no cover


def compiled_grad(f=None, *, maxsize: int = 64, assume_finite: bool = False, wrt=None):
    """Compiled, cached ``grad``: ``compiled_grad(f)(*args)`` returns what ``grad(f, *args)`` does.

    Use as a function or a decorator. `wrt` picks the arguments to differentiate, as in
    `grad`. See the module docstring for what is cached and when a call traces again.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> @tapegrad.compiled_grad
    ... def f(x):
    ...     return np.sin(x) * x if x > 0 else -x
    >>> f(1.0)[1][1] == tapegrad.grad(lambda x: np.sin(x) * x, 1.0)[1][1]
    True
    >>> f(-2.0)      # another branch: traced again, both programs kept
    (2.0, (ZeroTangent(), -1.0))
    >>> f.cache_info()["retraces"]
    1
    """
    if f is None:
        return lambda g: CompiledGrad(g, maxsize=maxsize, assume_finite=assume_finite, wrt=wrt)
    return CompiledGrad(f, maxsize=maxsize, assume_finite=assume_finite, wrt=wrt)

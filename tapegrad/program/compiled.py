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

A compiled gradient pickles with cloudpickle (as Dask and other process pools built on it
send functions), compiled programs included, so the receiver runs them without tracing. The
programs are functions made by exec, which the standard pickle cannot find by name: it
pickles a compiled gradient only before its first call, and its function only by reference.
"""
from __future__ import annotations

from collections import OrderedDict

from .codegen import compile_tape
from ..grad import grad
from .guards import GuardError
from .passes import optimize
from ..pytree import Spec, build, finalize, flatten, spec_key, unflatten
from ..context import param_names, trace
from ..tape import Call, Input, Variable, paused_gc
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
                return self._finish(out, args, program)
            self.retraces += 1
        else:
            self.misses += 1
        names = ["f", "seed"] + param_names(self.f, len(args))
        # Python's cyclic collector is paused while the program is traced, optimized and
        # compiled: each of these makes objects by the hundred thousand that live to the end,
        # and the collector's passes over them took most of the time (benchmarks/README.md)
        with paused_gc():
            out, tape = trace(_gradient_program, self.f, seed, *args, _names=names, _wrt=self.wrt, **kwargs)
            optimized = optimize(tape, assume_finite=self.assume_finite)
            drops_df, df = _drop_function_tangent(optimized)
            chosen = _result_names(optimized, (names[2:] if drops_df else ["f"] + names[2:]))
            program = compile_tape(optimized, "gradient_program", names=chosen)
        program.__drops_df__ = drops_df
        program.__df__ = df
        self._cache.setdefault(key, []).append(program)
        self._cache.move_to_end(key)
        while len(self._cache) > self.maxsize:
            self._cache.popitem(last=False)
        return self._finish(out, args)  # the traced call returned the whole result

    def _finish(self, out, args, program=None):
        value, grads = out
        if program is not None and program.__drops_df__:
            grads = (program.__df__, *grads)
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


def _drop_function_tangent(tape):
    """Leave the gradient with respect to `f` out of the program's result when it is a constant.

    A plain function has no values of its own to differentiate (``df`` is `ZERO`), nor has a
    closure over integers and flags (a `Tangent` of `NO_TANGENT`); without that constant the
    program ends in ``return value, (da, db)``, as a student would write it. Returns
    ``(True, df)`` when the tape was changed (`CompiledGrad._finish` puts `df` back), else
    ``(False, None)``.
    """
    op = tape.ops[-1] if tape.ops else None
    if type(op) is not Call or op.fn is not build or op.var is not tape.result or op.kwargs:
        return False, None
    spec = op.args[0]
    if not (isinstance(spec, Spec) and spec.kind == "seq" and len(spec.children) == 2):
        return False, None
    value_spec, grads_spec = spec.children
    if (value_spec.kind != "leaf" or grads_spec.kind != "seq" or grads_spec.cls is not tuple
            or not grads_spec.children):
        return False, None
    df_spec = grads_spec.children[0]
    n = len(flatten_spec_leaves(df_spec))
    if n == 0 or any(type(a) is Variable for a in op.args[2:2 + n]) or len(op.args) < 2 + n:
        return False, None
    df = unflatten(df_spec, op.args[2:2 + n])
    rest = grads_spec.children[1:]
    new_grads = Spec("seq", cls=tuple, keys=tuple(range(len(rest))), children=tuple(rest))
    new_spec = Spec("seq", cls=spec.cls, keys=spec.keys, children=(value_spec, new_grads))
    op.args = (new_spec, op.args[1], *op.args[2 + n:])
    value, grads = op.val
    op.val = (value, grads[1:])
    return True, df


def _result_names(tape, params):
    """{Variable: name} for the values the program returns: ``value`` for the function's value,
    ``d<parameter>`` (``da``, ``dp_W1``) for each gradient, so that the program reads
    ``return value, (da, db)``. A value that is an input or already named keeps its name."""
    op = tape.ops[-1] if tape.ops else None
    if type(op) is not Call or op.fn is not build or op.var is not tape.result:
        return {}
    spec = op.args[0]
    if not (isinstance(spec, Spec) and spec.kind == "seq" and len(spec.children) == 2
            and spec.children[0].kind == "leaf" and spec.children[1].kind == "seq"):
        return {}
    chosen = {}

    def choose(v, name):
        if type(v) is Variable and v not in chosen and type(v._op) is not Input:
            chosen[v] = name

    leaves = iter(op.args[1:])
    choose(next(leaves), "value")
    seen = set()
    for param, child in zip(params, spec.children[1].children):
        for path in _leaf_paths(child, seen):
            choose(next(leaves), "d" + "_".join([param, *path]))
    return chosen


def _leaf_paths(spec, seen):
    """The key path of each leaf of `spec`, in the order `build` takes them (a shared part once)."""
    stack = [(spec, [])]
    while stack:
        s, path = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        if s.kind == "leaf":
            yield [str(k) for k in path]
        elif s.kind != "static":
            stack.extend(reversed([(c, path + [k]) for k, c in zip(s.keys, s.children)]))


def flatten_spec_leaves(spec):
    """The leaf specs of `spec` in the order `build` takes their values (each shared part once)."""
    out, seen, stack = [], set(), [spec]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        if s.kind == "leaf":
            out.append(s)
        elif s.kind != "static":
            stack.extend(reversed(s.children))
    return out


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

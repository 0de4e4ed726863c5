"""How each framework runs a workload: one adapter per framework.

``Framework.load()`` imports the framework (raising if it is not installed);
``Framework.prepare(workload, args, quick)`` returns a `Prepared`: zero-argument callables
``forward()`` and ``gradient()`` that run the workload once (and wait for the result, for
JAX), and ``convert(result) -> (value, grads)`` that turns a gradient call's result into
numpy values in the structure of the reference. ``prepare`` raises `Skipped` for a
combination that is deliberately not run.

The thread settings (environment variables) are made by run.py before anything here is
imported.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import time

import numpy as np

__all__ = ["Framework", "Prepared", "Skipped", "FRAMEWORKS", "framework_names", "steady_heap"]

#: glibc's mallopt parameters (malloc.h): M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def steady_heap(mmap_threshold=32 << 20, trim_threshold=1 << 30) -> str:
    """Keep freed blocks in malloc's heap for this process, for every framework alike.

    By default glibc gives a large block (from 128 KiB, a threshold that moves as blocks are
    freed) a mapping of its own, and hands the top of its heap back to the system when more
    than twice that is free; the next call then page-faults its arrays in again. Whether a
    workload's arrays fault depended on what ran before it in the process (the scalar
    workloads' large tapes grew the heap, so W4 measured alone and in the suite differed by
    20-40%), on the array sizes and on each framework's allocation order. With both thresholds
    high, every framework's second call reuses the memory of its first, as in a long-running
    program. Returns a line for the report (what was set, or why not).
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        ok = libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold) and libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    except (OSError, AttributeError):
        return "malloc: default (no glibc mallopt)"
    if not ok:
        return "malloc: default (mallopt refused)"
    return (f"malloc: mallopt M_MMAP_THRESHOLD={mmap_threshold >> 20} MiB, "
            f"M_TRIM_THRESHOLD={trim_threshold >> 20} MiB (freed blocks stay in the heap)")


class Skipped(Exception):
    """This framework deliberately does not run this workload (the message says why)."""


class Prepared:
    def __init__(self, forward, gradient, convert, notes=(), reset=None):
        self.forward = forward
        self.gradient = gradient
        self.convert = convert
        self.notes = list(notes)
        #: drops what a gradient call leaves behind (torch's .grad), before a memory measurement
        self.reset = reset or (lambda: None)


def _map_tree(fn, tree):
    """Apply fn to the leaves of nested lists and tuples, keeping the structure."""
    if isinstance(tree, list):
        return [_map_tree(fn, t) for t in tree]
    if isinstance(tree, tuple):
        return tuple(_map_tree(fn, t) for t in tree)
    return fn(tree)


def _tree_leaves(tree):
    if isinstance(tree, (list, tuple)):
        out = []
        for t in tree:
            out.extend(_tree_leaves(t))
        return out
    return [tree]


def _to_numpy(x):
    if isinstance(x, float):
        return x
    a = np.asarray(x)
    return float(a) if a.ndim == 0 else a


class Framework:
    """Base adapter. `name` is the short name used on the command line; `label` the table's."""

    name = "?"
    label = "?"
    #: "tracemalloc" when the framework's arrays are numpy arrays (tracemalloc sees them)
    memory = "tracemalloc"

    def load(self):
        raise NotImplementedError

    def version(self) -> str:
        return ""

    def prepare(self, workload, args, quick=False) -> Prepared:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------


class NumpyHand(Framework):
    """The plain numpy forward and the hand-written gradient of workloads.py."""

    name = "numpy"
    label = "numpy (hand)"

    def load(self):
        pass

    def version(self):
        return np.__version__

    def prepare(self, workload, args, quick=False):
        f = workload.numpy_function()
        ref = workload.reference
        return Prepared(lambda: f(*args), lambda: ref(*args), lambda r: r)


class Tapegrad(Framework):
    """``tapegrad.grad(f, *args, wrt=...)`` on the plain numpy function."""

    name = "tapegrad"
    label = "tapegrad"

    def load(self):
        import tapegrad

        self.tg = tapegrad
        self.has_wrt = True
        try:
            value, grads = tapegrad.grad(lambda a, b: a * b, 2.0, 3.0, wrt=0)
            self.has_wrt = value == 6.0 and grads[1] == 3.0
        except TypeError:
            self.has_wrt = False

    def version(self):
        return getattr(self.tg, "__version__", "?")

    def solve_triangular(self):
        """``(function, note)``: tapegrad.scipy.linalg's, else scipy's if it has a rule, else a fallback."""
        for name in ("tapegrad.scipy.linalg", "tapegrad.scipy_linalg"):  # (its name before 0.1.0)
            try:
                return importlib.import_module(name).solve_triangular, None
            except (ImportError, AttributeError):
                pass
        import scipy.linalg

        try:
            if self.tg.extend.find_rrule(scipy.linalg.solve_triangular) is not None:
                return scipy.linalg.solve_triangular, (
                    "tapegrad.scipy.linalg does not exist yet; used scipy.linalg.solve_triangular, "
                    "which has a tapegrad rule")
        except Exception:
            pass

        def solve_lower(L, y, lower=True):
            return np.linalg.solve(L, y)

        return solve_lower, ("tapegrad.scipy.linalg.solve_triangular does not exist yet: tapegrad "
                             "(forward and gradient) used np.linalg.solve(L, y) instead")

    def prepare(self, workload, args, quick=False):
        notes = []
        extra = {}
        if "solve_triangular" in workload.extra:
            extra["solve_triangular"], note = self.solve_triangular()
            notes.append(note or "solve_triangular: tapegrad.scipy.linalg.solve_triangular")
        f = workload.build(np, **extra)
        wrt = workload.wrt
        grad = self.tg.grad
        if self.has_wrt:
            w = wrt if len(wrt) > 1 else wrt[0]

            def gradient():
                return grad(f, *args, wrt=w)
        else:
            notes.append("tapegrad.grad has no wrt=: every argument was differentiated")

            def gradient():
                return grad(f, *args)

        def convert(r):
            value, grads = r
            return _to_numpy(value), tuple(_map_tree(_to_numpy, grads[1 + i]) for i in wrt)

        return Prepared(lambda: f(*args), gradient, convert, notes)


class TapegradCompiled(Tapegrad):
    """``tapegrad.compiled_grad(f, wrt=...)``: traced and compiled in its first five calls, timed after them."""

    name = "tapegrad-compiled"
    label = "tapegrad (compiled)"

    def prepare(self, workload, args, quick=False):
        plain = super().prepare(workload, args, quick)
        extra = {}
        if "solve_triangular" in workload.extra:
            extra["solve_triangular"], _ = self.solve_triangular()
        f = workload.build(np, **extra)
        wrt = workload.wrt
        g = self.tg.compiled_grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])
        for _ in range(5):  # an eager grad, the trace, optimize, source, compile: outside the timing
            g(*args)

        def gradient():
            return g(*args)

        return Prepared(plain.forward, gradient, plain.convert, plain.notes + ["compiled once before timing"])


class Autograd(Framework):
    """``autograd.value_and_grad(f, argnum=wrt)`` with autograd.numpy substituted."""

    name = "autograd"
    label = "autograd"

    def load(self):
        import autograd
        import autograd.numpy
        import autograd.scipy.linalg

        self.ag = autograd

    def version(self):
        return importlib.metadata.version("autograd")

    def prepare(self, workload, args, quick=False):
        import autograd.numpy as anp
        import autograd.scipy.linalg as asl

        extra = {"solve_triangular": asl.solve_triangular}
        f = workload.build(anp, **{k: extra[k] for k in workload.extra})
        vg = self.ag.value_and_grad(f, workload.wrt)

        def convert(r):
            value, grads = r
            return _to_numpy(value), tuple(_map_tree(_to_numpy, g) for g in grads)

        return Prepared(lambda: f(*args), lambda: vg(*args), convert)


class Torch(Framework):
    """PyTorch eager: tensors with requires_grad, ``loss.backward()``, grads read from ``.grad``."""

    name = "torch"
    label = "torch (eager)"
    memory = "rss"

    def load(self):
        import torch

        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        self.torch = torch

    def version(self):
        return self.torch.__version__

    def prepare(self, workload, args, quick=False):
        torch = self.torch
        f = workload.torch_build(torch) if workload.torch_build else workload.build(torch)

        def tensor(x):
            if isinstance(x, np.ndarray):
                return torch.from_numpy(x)
            return torch.tensor(x, dtype=torch.float64)

        targs = [_map_tree(tensor, a) for a in args]
        leaves = []
        for i in workload.wrt:
            for t in _tree_leaves(targs[i]):
                t.requires_grad_(True)
                leaves.append(t)

        def forward():
            with torch.no_grad():
                return f(*targs)

        def reset():
            for t in leaves:
                t.grad = None

        def gradient():
            reset()
            out = f(*targs)
            out.backward()
            return out.detach(), [t.grad for t in leaves]

        def convert(r):
            value, _ = r
            grads = tuple(_map_tree(lambda t: _to_numpy(t.grad.numpy()), targs[i]) for i in workload.wrt)
            return float(value), grads

        return Prepared(forward, gradient, convert, reset=reset)


class Jax(Framework):
    """JAX with jax.numpy and float64: ``jax.value_and_grad`` run eagerly (op by op)."""

    name = "jax"
    label = "jax (eager)"
    memory = "rss"
    jit = False

    def load(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy  # noqa: F401
        import jax.scipy.linalg  # noqa: F401

        self.jax = jax

    def version(self):
        return f"{self.jax.__version__} (jaxlib {importlib.metadata.version('jaxlib')})"

    def prepare(self, workload, args, quick=False):
        jax = self.jax
        jnp = jax.numpy
        notes = []
        extra = {"solve_triangular": jax.scipy.linalg.solve_triangular}
        f = workload.build(jnp, **{k: extra[k] for k in workload.extra})
        jargs = [_map_tree(lambda x: jnp.asarray(x) if isinstance(x, np.ndarray) else x, a) for a in args]
        vg = jax.value_and_grad(f, argnums=workload.wrt)
        fwd = f
        if self.jit:
            if quick and workload.n_ops and workload.n_ops > 1000:
                raise Skipped(f"skipped in --quick: compiling {workload.n_ops} unrolled ops "
                              f"takes tens of seconds")
            fwd = jax.jit(f)
            vg = jax.jit(vg)
            t0 = time.perf_counter()
            jax.block_until_ready(fwd(*jargs))
            t1 = time.perf_counter()
            jax.block_until_ready(vg(*jargs))
            t2 = time.perf_counter()
            notes.append(f"compile (first call): forward {t1 - t0:.2f} s, gradient {t2 - t1:.2f} s")
        block = jax.block_until_ready

        def convert(r):
            value, grads = r
            return _to_numpy(value), tuple(_map_tree(_to_numpy, g) for g in grads)

        return Prepared(lambda: block(fwd(*jargs)), lambda: block(vg(*jargs)), convert, notes)


class JaxJit(Jax):
    """``jax.jit(jax.value_and_grad(f))``, timed after the first (compiling) call."""

    name = "jax-jit"
    label = "jax (jit)"
    jit = True


FRAMEWORKS = {fw.name: fw for fw in [NumpyHand(), Tapegrad(), TapegradCompiled(), Autograd(), Torch(), Jax(), JaxJit()]}


def framework_names():
    return list(FRAMEWORKS)

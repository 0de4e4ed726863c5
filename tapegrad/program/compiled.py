"""Compiled, cached gradients: trace the gradient program once per input signature, replay it as Python.

``g = tapegrad.compiled_grad(f)`` behaves like ``lambda *args: tapegrad.grad(f, *args)``. A
*signature* (the structure of the arguments, the shapes and dtypes of their leaves, and the
values of the leaves that are not differentiated) goes through tiers, one costly stage per
call, so that no call pays for them all (on a long program, each stage costs several eager
gradients):

1. its first call is an eager ``grad``, no dearer than one: a signature may never come again
   (an array whose length changes from call to call);
2. its second call traces the whole gradient computation, ``grad`` itself included, into a
   tape of plain numpy calls, and returns the traced result;
3. its third call simplifies that tape and removes common subexpressions and dead code, its
   fourth writes the program as Python source (the tapes and their values are then
   dropped); each of them is answered by an eager ``grad``;
4. its fifth call compiles the source and runs it. Later calls with the same signature run
   that function directly.

A long program (its first eager grad recorded `BESIDE_OPS` ops or more: each stage would cost
five to eight eager grads; or `BESIDE_MIN_OPS` ops and took longer than half the fork will:
`_beside`) is made beside the calls instead, where the platform forks (Linux):
its second call forks a child that traces, optimizes, writes and compiles the program
(`tapegrad.program.background`), and that call and the next ones are eager grads until the
child's program is there (``cache_info()["background"]`` counts them); on a 20,000-op chain no
call costs more than ~1.3 eager grads of the caller's CPU, and the program runs from about
the 30th call (another core does the child's work: ~30 eager grads of it). A value the program
names that the child cannot send (a function made inside f, as a solver's lambda) leaves the
making to the calls, as above (``child_error`` says why). ``background=True`` or ``False``
decides it for every program.

A path traced again after a failed guard (below) skips the first tier: it is traced at once
(or, for a long program, handed to a child) and goes through the others on its next calls.

The program records the path the first call took: control flow on traced values leaves
guards in it, and so does a call that raised while traced (``try: np.linalg.cholesky(a)
except LinAlgError:`` takes its path from the exception). A call whose inputs fail a guard, or
make a call of the program raise, is traced again for its own path, and both programs are
kept: the programs of one signature form a tree keyed on where and how a program failed (the
line of its guard and the value the guard met), so a call runs only the programs along its
own path, never every program in turn. ``maxsize`` bounds the number of programs kept in all;
the least recently used signatures are dropped first.

A compiled gradient is never stale. Values a function reads from globals are baked in at
trace time, as in ``jax.jit``: change a global and call ``g.cache_clear()``. Values a closure
captures are inputs (differentiable, as in `grad`) and are read afresh on every call; the
values that are not differentiated are part of the signature. What no signature can describe
is traced on every call instead of compiled (``cache_info()["traced"]``): a mutable object
that is not walked into (a set, a library's object), random numbers (a program would replay its first
draws: a trace that draws from numpy's global generator, as ``np.random.normal`` and
scipy.stats' ``rvs`` do, from Python's ``random``, from a generator passed in, captured or
read by name from a module or an object, or from one made inside f without a seed, is seen
by the generators' states and by numpy's reads of fresh entropy (`tapegrad.program.draws`);
a generator seeded inside f draws the same numbers on every call and is compiled), a program
that writes into a plain array (its first call's writes would be baked in), a function that
enters ``np.errstate`` (a replay would run under the caller's error state and show warnings
it silenced) and an argument that holds itself (its gradient holds
itself too, which no program returns).

A compiled gradient pickles with cloudpickle (as Dask and other process pools built on it
send functions), compiled programs included (a program traced but not yet compiled is
compiled as it is pickled), so the receiver runs them without tracing. The programs are
functions made by exec, which the standard pickle cannot find by name: it pickles a compiled
gradient only before a program has been traced (or after ``cache_clear()``), and its
function only by reference; otherwise it raises a TypeError that says so. (Which pickler
is at work is read from the modules on the stack: cloudpickle's and dill's, and ``copy``,
take the programs.)
"""
from __future__ import annotations

import sys
import threading
import time
import types
from collections import OrderedDict
from functools import partial

import numpy as np

from . import background
from ..grad import grad
from .making import Node, Unmade, gradient_program, made_in_child, traced
from ..pytree import OPAQUE_TYPES, cell_filled, finalize, flatten, spec_key
from ..tracing import param_names
from ..errors import restore_warnings, route_warnings, short_name, user_location
from ..tape import paused_gc
from ..tracer import active_tapes, plain_scalar

__all__ = ["compiled_grad", "CompiledGrad"]


#: where `CompiledGrad._lookup` says a signature's first program is to be traced again, and
#: that the signature has none (a child found that it draws random numbers, ...)
_ROOT, _UNCOMPILED = ("the signature's first program",), ("no program",)


def _outcome(program, exc):
    """Where and how `program` failed: the line of its source (one guard or call per line), the
    exception's type, and for a guard the value it met. Two inputs with the same outcome take
    the same path up to that line, so the program traced for one serves the other."""
    line = None
    tb = exc.__traceback__
    code = program.__code__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line, type(exc), getattr(exc, "got", None)


class CompiledGrad:
    """``grad(f, *args, seed=None, **kwargs)`` traced once per path and replayed as compiled Python.

    A signature goes through tiers, so that no call pays every cost at once: its first call
    is an eager `grad` (``cache_info()["eager"]``); its second is traced into the gradient
    program (``"misses"``) and returns the traced result; its third optimizes the program and
    its fourth writes its source, each answered by an eager grad (``"eager"`` too); its fifth
    compiles and runs the program (``"hits"``), as do the calls after it. With ``tiers=False``
    the first call traces and the second runs the program, made through every stage at once.
    A long program is made by a forked child instead (`background`: see the module docstring),
    while eager grads answer the calls (``"background"``: programs a child made).
    """

    def __init__(self, f, maxsize: int = 64, assume_finite: bool = False, wrt=None, tiers: bool = True,
                 background=None):
        self.f = f
        self.tiers = tiers
        self.background = background
        self.wrt = wrt
        self.maxsize = maxsize
        self.assume_finite = assume_finite
        self._cache = OrderedDict()  # signature -> Node (the first program; the others below it)
        self._sizes = {}  # signature -> number of programs
        self._programs = 0
        self._seen = OrderedDict()  # signatures called once (answered by an eager grad), not yet traced
        self._uncompiled = OrderedDict()  # signatures whose programs would be stale: traced each call
        # signatures whose last trace saw a generator move: traced again before they are given up
        # (another thread's draw from numpy's or Python's global generator moves it too)
        self._drew_once = OrderedDict()
        #: signature -> (ops its first eager grad recorded, its seconds); None: a child failed to make it
        self._first_grads = {}
        self.child_error = None  # why the last child that made no program made none (`background`)
        self.hits = self.misses = self.retraces = self.traced = self.eager = self.made_in_background = 0
        # the caches and counters are shared by the threads that call this gradient (a thread
        # pool's workers): each change of them holds the lock; traces, eager grads and programs
        # run outside it, so that calls in other threads go on meanwhile
        self._lock = threading.Lock()

    def __getstate__(self):
        if not _pickled_by_value():
            return self._plain_state()
        # the programs of the paths traced but not yet used are compiled now, so that a copy
        # (a Dask worker) runs them without tracing; the tapes are not sent
        with self._lock:
            for key, node in list(self._cache.items()):
                try:
                    node.compile_all()
                except Unmade:  # a child made no program: the copy traces this signature again
                    self._forget(key)
            state = dict(self.__dict__)
        del state["_lock"]  # (a lock is not sent: the copy makes its own)
        return state

    def _plain_state(self):
        """The state the standard pickle can take, or a TypeError saying what to do (as pickle
        refuses what it cannot take): it stores functions by name, and the programs (made by
        exec) have none."""
        where = user_location(skip_packages=_PICKLERS)
        if self._cache:
            raise TypeError(
                f"pickle at {where} cannot store the compiled gradient of {short_name(self.f)}: it "
                f"holds {self._programs} traced program{'s' if self._programs != 1 else ''}, "
                f"functions made by exec, which the standard pickle (and multiprocessing's) can "
                f"store only by name. Pickle it with cloudpickle (cloudpickle.dumps(g), as Dask "
                f"and joblib do), which sends the programs along, or call g.cache_clear() first "
                f"to send it without them (the copy traces again)"
            )
        if type(self.f) is _FunctionType and not _findable(self.f):
            raise TypeError(
                f"pickle at {where} cannot store the compiled gradient of {short_name(self.f)}: the "
                f"standard pickle stores a function by name, and {self.f.__qualname__} (a lambda "
                f"or a function defined inside another) has none it can import. Define the "
                f"function at module level, or pickle the compiled gradient with cloudpickle "
                f"(cloudpickle.dumps(g)), which stores the function itself"
            )
        state = dict(self.__dict__)
        state.pop("_lock", None)
        # the signatures called once or traced on every call: keys that hold the type of a
        # function, which the standard pickle cannot find by name; the copy meets them again
        state["_seen"], state["_uncompiled"], state["_drew_once"] = OrderedDict(), OrderedDict(), OrderedDict()
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_drew_once", OrderedDict())  # (a copy pickled before it was kept)
        self._lock = threading.Lock()

    def _signature(self, args, seed, kwargs):
        """``(key, leaves, keyed)``: the key of the call's structure (types, shapes, dtypes,
        static values), the values the program takes, and False when no key can say the
        arguments are unchanged (see `tapegrad.pytree.spec_key`)."""
        walked = {}  # f's walk, when the plain signature made it and gave up
        if seed is None and not kwargs:
            plain = _plain_signature(self.f, args, walked)
            if plain is not None:
                return plain
        return self._walked_signature(args, seed, kwargs, walked)

    def _walked_signature(self, args, seed, kwargs, walked=None):
        walked = {} if walked is None else walked
        memo, leaves, unkeyed = walked.get("memo", {}), [], []

        def key_of(x):
            spec, found = walked.pop("f") if x is self.f and "f" in walked else flatten(x, argument=True, memo=memo)
            leaves.extend(found)
            if _holds_itself(spec):
                # its gradient holds itself too, which no program can return: traced each call
                unkeyed.append(x)
            return spec_key(spec, unkeyed=unkeyed)

        positional = tuple(key_of(x) for x in (self.f, seed, *args))
        kw = tuple((k, key_of(kwargs[k])) for k in sorted(kwargs))  # (leaves in the names' order: the trace's)
        return (positional, kw, len(leaves)), leaves, not unkeyed

    def _lookup(self, key, node, leaves, step=False, count=True):
        """``(out, program, None, None)`` from the program for these inputs, or ``(None, None, parent, outcome)``:
        where a program for them belongs. Each step follows the outcome of the failed guard or
        call, so a lookup runs only the programs on its own path, never every program in turn;
        `node` is the signature's first program. A program that answers counts a hit.

        With `step`, a node whose program is still a tape (traced, or optimized) is taken one
        stage on and the lookup ends there: ``(None, None, None, None)``, for an eager grad to
        answer this call.

        A compiled program is run outside the lock (its node's program, once set, stays), and
        its hit counted with the signature made the most recent, in one hold of the lock; the
        stages, a child's program and the path taken after a failure are the lock's."""
        lock, parent, outcome, first = self._lock, None, None, True
        while node is not None:
            program = node.program
            if program is None:
                with lock:
                    program = self._program_of(key, node, parent, outcome, step)
                if type(program) is tuple:
                    return program
            with lock:
                if first and key in self._cache:
                    self._cache.move_to_end(key)
                if count:
                    self.hits += 1  # (taken back below if the program fails on these inputs)
            first = False
            token = route_warnings()  # numpy's warnings point at the user's line
            try:
                return program(gradient_program, *leaves), program, None, None
            except Exception as exc:  # a guard, or a call that raises on these inputs
                parent, outcome = node, _outcome(program, exc)
                with lock:
                    self.hits -= count
                    node = node.children.get(outcome)
            finally:
                restore_warnings(token)
        return None, None, parent, outcome

    def _program_of(self, key, node, parent, outcome, step):
        """`_lookup`'s step at `node`, under the lock: its compiled program, or the tuple the
        lookup returns when there is none to run (a child at work or failed, a stage taken)."""
        if node.child() is not None:
            made = node.collect(wait=not step)
            if made is None:  # the child is still at work
                return None, None, None, None
            if made == "uncompiled":  # f draws random numbers, ...: traced on every call
                self._forget(key)
                self._uncompiled[key] = True
                return None, None, None, _UNCOMPILED
            if made != "ready":  # it made none: this path is traced here, for good
                self._first_grads[key] = None
                self.child_error = node.child().error
                if parent is None:
                    self._forget(key)
                    return None, None, None, _ROOT
                if parent.children.pop(outcome, None) is node and key in self._sizes:
                    self._sizes[key] -= 1
                    self._programs -= 1
                return None, None, parent, outcome
            self.made_in_background += 1
        if step and node.unwritten():
            node.advance()
            return None, None, None, None
        return node.program or node.compile()

    def __call__(self, *args, seed=None, **kwargs):
        return self._call(args, seed, kwargs, self.tiers)

    def _call(self, args, seed, kwargs, eager_first=True):
        try:
            key, leaves, keyed = self._signature(args, seed, kwargs)
        except RecursionError:
            keyed = False
        if not keyed or key in self._uncompiled:
            # a mutable object f sees (a set, a random generator) or a write into a plain
            # array: no program could know when it is stale, so this call is traced afresh
            self._count("traced")
            return self._eager(args, seed, kwargs, count=False)
        node = self._cache.get(key)
        if node is not None:
            out, program, parent, outcome = self._lookup(key, node, leaves, step=eager_first)
            if program is not None:
                return self._finish(out, args, kwargs, program)
            if parent is None and outcome is None:
                # a program was taken one stage on, or a child is making it: an eager grad answers
                return self._eager(args, seed, kwargs)
            if outcome is _UNCOMPILED:  # the child found what no program can replay
                self._count("traced")
                return self._eager(args, seed, kwargs, count=False)
            traced_as = "retraces"
        elif eager_first and key not in self._seen:
            # the first call of a signature: an eager grad, as cheap as the program's first call
            # can be; a signature seen once may never come again (an array length that changes)
            size, began = [], time.perf_counter()
            answer = self._eager(args, seed, dict(kwargs, _size=size))
            # how long the tape was, and the time it took: is the program made by a child?
            with self._lock:
                self._remember(self._seen, key, (size[0], time.perf_counter() - began))
            return answer
        else:
            with self._lock:
                self._first_grads[key] = self._seen.pop(key, None) or self._first_grads.get(key) or (None, None)
            parent = outcome = None
            traced_as = "misses"
        names = ["f", "seed"] + param_names(self.f, len(args))
        if eager_first and self._beside(key):
            job = background.start(
                partial(made_in_child, self.f, seed, args, kwargs, names, self.wrt, self.assume_finite),
                limit=BESIDE_LIMIT + BESIDE_LIMIT_PER_OP * self._first_grads[key][0])
            if job is not None:  # the program is made beside the calls: an eager grad answers
                self._insert(key, parent, outcome, Node(("child", job)))
                return self._eager(args, seed, kwargs)
        self._count(traced_as)
        # Python's cyclic collector is paused while the program is traced, optimized and
        # compiled: each of these makes objects by the hundred thousand that live to the end,
        # and the collector's passes over them took most of the time (benchmarks/README.md)
        with paused_gc():
            out, tape, replayable, drew = traced(self.f, seed, args, kwargs, names, self.wrt)
            with self._lock:
                if not replayable and drew and key not in self._drew_once:
                    # a draw seen once may be another thread's (the global generators are shared):
                    # the next call traces again, and a second draw gives the signature up for good
                    self._remember(self._drew_once, key, True)
                    self._seen[key] = self._first_grads.get(key) or (None, None)
                    return self._finish(out, args, kwargs)
                self._drew_once.pop(key, None)
                if not replayable:  # random draws, a write into a constant, np.errstate: traced each call
                    self._remember(self._uncompiled, key, True)
                    return self._finish(out, args, kwargs)
        self._insert(key, parent, outcome, Node(("tape", tape, names, self.assume_finite)))
        return self._finish(out, args, kwargs)  # the traced call returned the whole result

    def _remember(self, table, key, value):
        """``table[key] = value``, the oldest entries dropped past `maxsize` (under the lock)."""
        table[key] = value
        while len(table) > self.maxsize:
            table.popitem(last=False)

    def _count(self, what):
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)

    def _eager(self, args, seed, kwargs, count=True):
        """An eager grad's answer to a call (counted in ``cache_info()["eager"]``)."""
        if count:
            self._count("eager")
        value, grads = grad(self.f, *args, seed=seed, wrt=self.wrt, **kwargs)
        return plain_scalar(value), grads

    def _beside(self, key) -> bool:
        """Whether the program of `key` is made by a child (`background`) rather than by the
        calls: with ``background=None``, a program whose first eager grad recorded at least
        `BESIDE_OPS` ops (each stage the calls would run costs several eager grads there, the
        fork less than one), or `BESIDE_MIN_OPS` and took long enough that the call that forks
        (an eager grad and the fork) costs less than `BESIDE_CALL` eager grads, by what the last
        fork cost; never once a child has failed for the signature, inside a trace (the
        arguments are traced values) or where no child can be forked."""
        first = self._first_grads.get(key)
        if first is None or first[0] is None or not background.available() or active_tapes():
            return False
        if self.background is not None:
            return bool(self.background)
        ops, seconds = first
        return ops >= BESIDE_OPS or (
            ops >= BESIDE_MIN_OPS and seconds * (BESIDE_CALL - 1) >= background.fork_seconds)

    def _forget(self, key):
        """Drop a signature's programs."""
        self._cache.pop(key, None)
        self._programs -= self._sizes.pop(key, 0)

    def _insert(self, key, parent, outcome, node):
        """Keep `node`; past `maxsize` programs in all, drop the least recently used signatures,
        or, when one signature holds them all, every program of it but the new one. (Another
        thread may have traced the same path meanwhile, or dropped the signature: its node is
        kept, and a path under a parent dropped since is not.)"""
        with self._lock:
            if parent is None:
                if key in self._cache:
                    return
                self._cache[key] = node
                self._sizes[key] = 1
            else:
                if outcome in parent.children or key not in self._sizes:
                    return
                parent.children[outcome] = node
                self._sizes[key] += 1
            self._programs += 1
            self._evict(key, node)

    def _evict(self, key, node):
        """`_insert`'s bound on the programs kept, under the lock."""
        self._cache.move_to_end(key)
        while self._programs > self.maxsize and len(self._cache) > 1:
            old, _ = self._cache.popitem(last=False)
            self._programs -= self._sizes.pop(old)
            self._first_grads.pop(old, None)
        if self._programs > self.maxsize:
            self._cache[key] = node
            node.children.clear()
            self._programs = self._sizes[key] = 1

    def _finish(self, out, args, kwargs, program=None):
        value, grads = out
        if program is not None and program.__drops_df__:
            grads = (program.__df__, *grads)
        primals = (self.f, *args)
        if len(grads) > len(primals):  # the gradients of the keyword arguments `wrt` names, as grad's last
            primals += ({k: kwargs[k] for k in grads[-1]},)
        return plain_scalar(value), finalize(grads, primals)

    def cache_info(self) -> dict:
        """Calls answered by an eager grad (``eager``: a signature's first call, and the calls
        that optimized a program or wrote its source), by tracing a new signature (``misses``:
        its second call) or a new path (``retraces``), by a program (``hits``), calls traced
        without a program (``traced``); the numbers of signatures traced and of programs held
        (compiled, or on their way to it)."""
        return {"hits": self.hits, "misses": self.misses, "retraces": self.retraces,
                "traced": self.traced, "eager": self.eager, "background": self.made_in_background,
                "signatures": len(self._cache),
                "programs": self._programs, "maxsize": self.maxsize}

    def wait(self) -> None:
        """Wait until the programs that children are making (``background``) are made: the
        calls after this run them (or trace, where a child made none). For benchmarks and
        tests that must reach a program at a known call; calls never need it."""
        with self._lock:
            stack = list(self._cache.values())
        while stack:
            node = stack.pop()
            job = node.child()
            if job is not None:
                job.wait()
            with self._lock:
                stack.extend(node.children.values())

    def cache_clear(self) -> None:
        """Forget every compiled program (after changing a global the function reads)."""
        with self._lock:
            self._cache.clear()  # (a child still making a program is stopped as its node goes)
            self._sizes.clear()
            self._first_grads.clear()
            self._seen.clear()
            self._drew_once.clear()
            self._uncompiled.clear()
            self._programs = 0

    def source(self, *args, seed=None, **kwargs) -> str:
        """The Python source of the program that a call with these arguments runs (traced and
        compiled now if no call has made it yet)."""
        self._call(args, seed, kwargs, eager_first=False)
        key, leaves, keyed = self._signature(args, seed, kwargs)
        if not keyed or key in self._uncompiled:
            raise ValueError("these arguments are traced on every call: there is no program to show")
        out, _, parent, _ = self._lookup(key, self._cache[key], leaves, count=False)
        if parent is not None:  # pragma: no cover
            raise RuntimeError("no compiled program accepts these arguments")
        node = self._cache[key]
        while True:  # the program that ran: the lookup's path again
            try:
                node.program(gradient_program, *leaves)
                return node.program.__source__
            except Exception as exc:
                node = node.children[_outcome(node.program, exc)]


#: a signature whose eager grad records this many ops has its program made by a child
#: (`background`): the calls' stages would cost 5-8 eager grads each, the fork ~3 ms (an eager
#: grad of 1,000 scalar ops takes ~5 ms)
BESIDE_OPS = 1000
#: and so does one of at least `BESIDE_MIN_OPS` ops whose first eager grad took long enough that
#: the call that forks (an eager grad, then the fork: `background.fork_seconds`) costs at most
#: `BESIDE_CALL` eager grads, the first eight calls' bound (an 800-op scalar chain, ~5 ms an
#: eager grad: its stages cost 6-10 eager grads each, the forking call ~2 here, ~2.7 in a
#: notebook's kernel, whose forks take 8-11 ms)
BESIDE_MIN_OPS, BESIDE_CALL = 200, 3.0
#: a child making a program is stopped after this many seconds, plus this many per op
BESIDE_LIMIT, BESIDE_LIMIT_PER_OP = 60.0, 0.005
_FunctionType = types.FunctionType
#: the packages that pickle and copy objects: their frames are not the user's
_PICKLERS = ("pickle", "_pickle", "copyreg", "copy", "cloudpickle", "dill", "multiprocessing")


def _pickled_by_value() -> bool:
    """True when the object being pickled is taken by a pickler that stores functions made by
    exec by value (cloudpickle, also as Dask, joblib, Ray and PySpark carry it; dill) or by
    copy.copy / copy.deepcopy, which keep functions as they are; False for the standard pickle
    (and multiprocessing's), which stores them by name. Read from the modules on the stack,
    only when something is pickled."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if "cloudpickle" in module or module.split(".")[0] in ("dill", "copy"):
            return True
        frame = frame.f_back
    return False


def _findable(fn) -> bool:
    """True if the standard pickle can find `fn` by its module and qualified name."""
    obj = sys.modules.get(fn.__module__ or "")
    for part in fn.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is fn
_NONE_KEY = ("static", (type(None), None))
_FLOAT_KEY = ("leaf", float, (), np.result_type(float).str)


def _plain_signature(f, args, walked=None):
    """``_signature``'s answer for the common call, without its walk: no seed or keywords, a
    function that captures no differentiable value, and for arguments floats, float or complex
    arrays, and non-empty lists and tuples of them (two levels deep: an MLP's ``[(W, b), ...]``),
    no array or list met twice. None for any other call, which takes the walk. The keys are
    the walk's own (a test compares them), so a program is found whichever way its key was
    made. Where it walked f and gave up, f's walk and its memo are left in `walked` for the
    walk to go on from (a function that captures arrays: walked once a call, not twice)."""
    if type(f) is not _FunctionType or f.__dict__:
        return None
    cells = f.__closure__
    if not cells:
        fkey = ("static", (_FunctionType, f))
    elif all(cell_filled(c) and type(c.cell_contents) in OPAQUE_TYPES for c in cells):
        # a loss function that captures only the numpy module (the common case): values the walk never
        # goes into, each keyed by `spec_key` as ``("static", (type, value))``
        fkey = ("object", _FunctionType, tuple(
            (name, ("static", (type(c.cell_contents), c.cell_contents)))
            for name, c in zip(f.__code__.co_freevars, cells)))
    else:
        memo = {}
        spec, found = flatten(f, argument=True, memo=memo)
        if walked is not None:
            walked.update(f=(spec, found), memo=memo)
        unkeyed = []
        fkey = spec_key(spec, unkeyed=unkeyed)
        if found or unkeyed or _holds_itself(spec):
            return None  # a captured value the program takes, or one no key describes: the walk's
    keys = [fkey, _NONE_KEY]
    leaves = []
    seen = set()  # ids of the arrays and sequences met: one met twice is keyed by the walk (as shared)
    for x in args:
        key = _plain_key(x, leaves, seen, 2)
        if key is None:
            return None
        keys.append(key)
    return ((tuple(keys), (), len(leaves)), leaves, True)


def _plain_key(x, leaves, seen, depth):
    """The walk's key of one argument `_plain_signature` takes (its leaves appended to `leaves`),
    or None."""
    t = type(x)
    if t is float:
        leaves.append(x)
        return _FLOAT_KEY
    if t is np.ndarray:
        if x.dtype.kind not in "fc" or id(x) in seen:
            return None
        seen.add(id(x))
        leaves.append(x)
        return ("leaf", np.ndarray, x.shape, x.dtype.str)
    if (t is list or t is tuple) and x and depth and id(x) not in seen:
        seen.add(id(x))
        items = []
        for i, v in enumerate(x):
            key = _plain_key(v, leaves, seen, depth - 1)
            if key is None:
                return None
            items.append((i, key))
        return ("seq", t, tuple(items))
    return None


def _holds_itself(spec) -> bool:
    """True if an argument's structure leads back into itself (a list inside itself); walked
    with a stack, not recursion, so that no depth meets the recursion limit."""
    active, done = set(), set()
    stack = [(spec, iter(spec.children))]
    active.add(id(spec))
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            active.discard(id(node))
            done.add(id(node))
        elif id(child) in active:
            return True
        elif id(child) not in done and child.children:
            active.add(id(child))
            stack.append((child, iter(child.children)))
    return False


def compiled_grad(f=None, *, maxsize: int = 64, assume_finite: bool = False, wrt=None, tiers: bool = True,
                  background=None):
    """Compiled, cached ``grad``: ``compiled_grad(f)(*args)`` returns what ``grad(f, *args)`` does.

    Use as a function or a decorator. `wrt` picks the arguments to differentiate, as in
    `grad`; `maxsize` bounds the number of compiled programs kept (all paths of all
    signatures). A signature's first call is an eager ``grad``, its second traces the
    gradient program, its third optimizes the program and its fourth writes its source
    (both answered by an eager ``grad``), its fifth compiles and runs it
    (benchmarks/README.md has what each costs); later calls run the program. With
    ``tiers=False`` the first call traces the program and the second compiles and runs it
    (for a function called many times, where one dear first call does not matter, and in
    tests that must reach the program). A long program (`BESIDE_OPS` ops or more, or
    `BESIDE_MIN_OPS` whose eager grad outlasts half a fork) is made by a
    forked child while eager grads answer the calls, so that no call stalls
    (``background=None``; ``True`` or ``False`` decides for every program; `wait` waits for
    the child). See the module docstring for what is cached and when a call traces again.
    Threads may call one compiled gradient at once (a thread pool's workers, Dask's threaded
    scheduler): its caches change under a lock, and traces, eager grads and programs run
    outside it.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> @tapegrad.compiled_grad
    ... def f(x):
    ...     return np.sin(x) * x if x > 0 else -x
    >>> [f(1.0)[1][1] == tapegrad.grad(lambda x: np.sin(x) * x, 1.0)[1][1] for _ in range(5)]
    [True, True, True, True, True]
    >>> f(-2.0)      # another branch: traced again, both programs kept
    (2.0, (ZeroTangent(), -1.0))
    >>> f.cache_info()
    {'hits': 1, 'misses': 1, 'retraces': 1, 'traced': 0, 'eager': 3, 'background': 0, 'signatures': 1, 'programs': 2, 'maxsize': 64}
    """
    options = dict(maxsize=maxsize, assume_finite=assume_finite, wrt=wrt, tiers=tiers, background=background)
    if f is None:
        return lambda g: CompiledGrad(g, **options)
    return CompiledGrad(f, **options)

"""Random draws made while a compiled gradient traces its program, which the program would replay.

A compiled gradient (`tapegrad.program.compiled`) must trace on every call a function that
draws random numbers: a program replays the numbers its trace drew. The draws leave no mark
on the tape (a draw is a plain number, as a constant is), so they are read from the
generators: `Draws` notes, before the trace, the state of every generator the function can
draw from, and after it whether any moved:

- numpy's global RandomState (``np.random.normal``, ``np.random.rand``, scipy.stats' ``rvs``
  without a random_state), watched on every trace at the cost of a 2.5 kB copy
  (`_LegacyWatch`);
- the generators the function reads by name: a module-level ``rng``, ``self.rng``, the one
  behind Python's ``random`` module (`_generators_in_reach`);
- a generator made inside the function without a seed (``np.random.default_rng()``), which
  seeds itself from the system's randomness: numpy's reads of it are counted while the trace
  runs (`_watch_entropy`).

A generator passed in or captured by a closure is part of the signature: `tapegrad.pytree.spec_key`
has such a call traced each time before a program is traced. Nothing here runs on a call that
finds its program, only on the calls that trace one.
"""
from __future__ import annotations

import ctypes
import random
import sys
import threading
import types

import numpy as np
import numpy.random.bit_generator as _bit_generator

from ..pytree import cell_filled

__all__ = ["Draws"]

#: numpy's legacy global RandomState: np.random.normal, np.random.rand, and scipy.stats' rvs
#: without a random_state draw from it without naming it, so every trace watches it
_LEGACY = getattr(np.random.mtrand, "_rand", None)
_GENERATOR_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)
#: the modules of code whose globals are not searched for generators (libraries, Python's own)
_LIBRARIES = frozenset(("numpy", "scipy", "tapegrad", "builtins")) | frozenset(getattr(sys, "stdlib_module_names", ()))
#: how many objects `_generators_in_reach` looks at, at most
_REACH = 2000


def _state(g):
    """A copy of what a draw of generator `g` changes."""
    if isinstance(g, np.random.RandomState):
        return g.get_state(legacy=False)  # the bit generator's state and the cached normal
    if isinstance(g, np.random.Generator):
        return g.bit_generator.state
    if isinstance(g, np.random.BitGenerator):
        return g.state
    return g.getstate()


def _same_state(a, b) -> bool:
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(_same_state(a[k], b[k]) for k in a))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a == b


def _code_names(code):
    """The global and attribute names a code object and the functions nested in it read."""
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def _generators_in_reach(f):
    """The random generators `f` reads by name, besides numpy's legacy global one (watched on
    every trace, `_LegacyWatch`): a module-level ``rng = np.random.default_rng(0)``,
    ``self.rng``, ``helpers.rng``, the generator behind Python's ``random`` module when it
    reads that module or a function of it, following the user's functions it names, their
    closures and defaults, the objects of its bound methods and the user's modules, as far as
    `_REACH` objects. (A generator passed in or captured by a closure is part of the
    signature: `spec_key` has such a call traced each time before it gets here.)"""
    found = {}
    names = set()  # the names the functions met read: attributes looked up on the objects met
    stack, objects, seen = [f], [], set()
    budget = _REACH
    while (stack or objects) and budget > 0:
        if not stack:  # the objects met, looked into by the names read so far
            obj = objects.pop()
            try:  # (no attribute is read through getattr: no property or __getattr__ runs)
                d = object.__getattribute__(obj, "__dict__")
            except Exception:
                d = None
            mro = () if isinstance(obj, types.ModuleType) else type(obj).__mro__
            for name in names:
                if isinstance(d, dict) and name in d:
                    stack.append(d[name])
                for klass in mro:
                    if name in klass.__dict__:
                        stack.append(klass.__dict__[name])
                        break
            continue
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        budget -= 1
        if isinstance(obj, _GENERATOR_TYPES):
            if obj is not _LEGACY:
                found[id(obj)] = obj
        elif isinstance(obj, types.MethodType):
            stack += [obj.__func__, obj.__self__]
        elif isinstance(obj, (staticmethod, classmethod)):
            stack.append(obj.__func__)
        elif isinstance(obj, types.FunctionType):
            if (obj.__module__ or "").split(".")[0] in _LIBRARIES:
                continue
            code_names = _code_names(obj.__code__)
            names |= code_names
            g = obj.__globals__
            stack += [g[n] for n in code_names if n in g]
            stack += [c.cell_contents for c in obj.__closure__ or () if cell_filled(c)]
            stack += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        elif isinstance(obj, types.ModuleType):
            if obj is random:
                stack.append(getattr(random, "_inst", None))
            elif obj.__name__.split(".")[0] not in _LIBRARIES:
                objects.append(obj)
        elif not isinstance(obj, type) and (type(obj).__module__ or "").split(".")[0] not in _LIBRARIES:
            objects.append(obj)  # the user's object: a callable model, self of a method
    return list(found.values())


def _state_address(bg) -> int:
    """The address of a bit generator's state: the first field of the ``bitgen_t`` its capsule
    points to (numpy's C API). ``bg.ctypes.state_address`` says the same, but builds ctypes
    function types on its first use (~0.2 ms, the dearest part of a process's first trace);
    `_LegacyWatch._words` checks what it reads there against the state before trusting it."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.c_void_p.from_address(get(bg.capsule, b"BitGenerator")).value


class _LegacyWatch:
    """numpy's global RandomState, watched on every trace at the cost of a 2.5 kB copy.

    Its full state (``get_state``) takes longer to read than a small program's whole trace
    (benchmarks/README.md). A draw changes its MT19937 words (read through numpy's ctypes
    interface), except a legacy normal draw that takes the normal cached by the one before (``has_gauss``), which
    changes the cache only. So the cache flag is read with the full state only when the words
    are not those of the last full read (`last`); a flag remembered as clear is clear while
    the words stay the same (setting it draws from them), and one remembered as set may be
    stale only in the safe direction (a call that drew nothing is taken as a draw: it is
    traced each time, not compiled wrongly)."""

    _lock = threading.Lock()
    last = None  # (words, has_gauss) at the last full read
    checked = fast = None  # the bit generator last checked; True if its words read as its state
    address = None  # where the checked bit generator's words are, when `fast`

    @classmethod
    def _words(cls):
        bg = _LEGACY._bit_generator
        if bg is not cls.checked:  # (np.random.set_bit_generator puts another in its place)
            cls.fast, cls.checked = False, bg
            if type(bg) is np.random.MT19937:
                try:
                    cls.address = address = _state_address(bg)
                    raw = ctypes.string_at(address, 624 * 4 + 4)
                    full = _LEGACY.get_state(legacy=False)
                    st = full["state"]
                    cls.fast = (raw[:2496] == np.ascontiguousarray(st["key"], np.uint32).tobytes()
                                and int.from_bytes(raw[2496:], sys.byteorder, signed=True) == st["pos"])
                    if cls.fast:  # (the full read `before` would make next)
                        with cls._lock:
                            cls.last = (raw, full["has_gauss"])
                except Exception:  # pragma: no cover - another numpy: the full state each time
                    pass
        return ctypes.string_at(cls.address, 624 * 4 + 4) if cls.fast else None

    @classmethod
    def _full(cls, words):
        st = _LEGACY.get_state(legacy=False)
        with cls._lock:
            cls.last = (words, st["has_gauss"])
        return st

    @classmethod
    def before(cls):
        words = cls._words()
        if words is None:
            return None, _LEGACY.get_state(legacy=False)
        last = cls.last
        if last is not None and last[0] == words:
            return words, last[1]
        return words, cls._full(words)["has_gauss"]

    @classmethod
    def drew(cls, before) -> bool:
        words, was = before
        if words is None:
            return not _same_state(was, _LEGACY.get_state(legacy=False))
        now = cls._words()
        if now != words:
            return True
        # the same words: only taking the cached normal drew, and only if one was cached
        return bool(was) and not cls._full(now)["has_gauss"]


_entropy = threading.local()  # .reads: fresh entropy read in this thread while watched
_watch_lock = threading.Lock()
_watchers = [0, None]  # traces watching, numpy's own randbits


def _counting_randbits(k):
    _entropy.reads = getattr(_entropy, "reads", 0) + 1
    return _watchers[1](k)


def _watch_entropy(on):
    """While a program is traced, count the fresh entropy numpy reads in this thread: a
    generator made without a seed inside f (``np.random.default_rng()``) seeds itself from the
    system's randomness through ``numpy.random.bit_generator.randbits``, where nothing else
    shows. numpy's own function is back when no trace watches, in any thread."""
    if not hasattr(_bit_generator, "randbits"):  # pragma: no cover - another numpy
        return
    with _watch_lock:
        if on:
            if _watchers[0] == 0:
                _watchers[1] = _bit_generator.randbits
                _bit_generator.randbits = _counting_randbits
            _watchers[0] += 1
        else:
            _watchers[0] -= 1
            if _watchers[0] == 0:
                _bit_generator.randbits = _watchers[1]


class Draws:
    """Whether the trace begun after this was made drew random numbers: numpy's global
    generator moved (`_LegacyWatch`), the state of a generator in reach of `f` changed
    (`_generators_in_reach`), or a generator was seeded from the system's randomness
    (`_watch_entropy`). Made just before the trace; `drew()` after it."""

    __slots__ = ("legacy", "states", "reads")

    def __init__(self, f):
        self.legacy = _LegacyWatch.before() if _LEGACY is not None else None
        self.states = []
        for g in _generators_in_reach(f):
            try:
                self.states.append((g, _state(g)))
            except NotImplementedError:  # random.SystemRandom: no state, every draw is fresh
                self.states.append((g, None))
        self.reads = getattr(_entropy, "reads", 0)
        _watch_entropy(True)

    def drew(self) -> bool:
        _watch_entropy(False)
        if getattr(_entropy, "reads", 0) != self.reads:
            return True
        if self.legacy is not None and _LegacyWatch.drew(self.legacy):
            return True
        for g, before in self.states:
            if before is None or not _same_state(before, _state(g)):
                return True
        return False

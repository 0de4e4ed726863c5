"""A long program made beside the calls: traced, optimized, written and compiled by a forked child.

On a long program each stage of making a compiled gradient costs several eager gradients (the
trace alone five to eight on a 20,000-op chain), so a call that ran one would stall the caller.
Where the platform forks (Linux), `start` forks the process: the child has the function, its
arguments and numpy's state as they were, makes the program with the same code the tiers run in
the caller, compiles its source, and writes back the source, the bytecode (`marshal`) and the
values the program names (`pickle`: numpy's arrays and scalars, Python's constants, functions
and classes by reference, tapegrad's own constants and modules by name), through a pipe only the
two processes hold: the bytes are the child's own, and nothing else can write them. The caller
meanwhile answers each call with an eager gradient, and `Job.poll` takes the program when it
is there.

Nothing is guessed: a value the program names that is none of those kinds (an object of the
user's, a function made inside another) makes the child fail, and so does anything that goes
wrong in it (its error is kept: `Job.error`); the caller then makes the program itself, as the
tiers do. A child writes nothing to the caller's terminal or notebook (its standard streams are
the null device), ignores Ctrl-C (the caller's to handle), never runs the caller's exit handlers
(`os._exit`), and is killed when the compiled gradient is cleared or dropped, when the
interpreter exits, or when it has run far longer than its program should take. No child is
forked while another thread is at work (`alone`): a fork while another thread computes can
hang. Threads that wait (an idle thread pool's, a progress bar's monitor) are no obstacle.
"""
from __future__ import annotations

import atexit
import inspect
import io
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
import types
import warnings
import weakref

import numpy as np

from ..pytree import Spec

__all__ = ["available", "alone", "start", "Job", "dumps", "loads"]

#: the children running, killed when the interpreter exits
_RUNNING = weakref.WeakSet()

#: what the last fork cost this process, in seconds of wall time (`start` measures it): a fork
#: copies the process's page tables: 3-4 ms for a process that imported numpy and scipy on the
#: machines measured (benchmarks/README.md), ~1 ms more a GB it holds, 8-11 ms in a notebook's
#: kernel; the first fork of a process 5-6 ms, the estimate until one is measured
fork_seconds = 0.006


def available() -> bool:
    """True where a program can be made by a forked child (Linux: fork is safe and cheap there;
    macOS's system libraries are not safe to use after a fork, and Windows has none)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class Job:
    """A child making one program: `poll` for its result (None while it runs), `wait`, `cancel`.

    The child writes its result into a pipe only it and this process hold (no file, no name
    another process could reach) when it is done, and exits: a pipe with data to read (or at
    its end) means the child is done, and its result is read whole."""

    __slots__ = ("pid", "fd", "started", "limit", "error", "seconds", "result", "__weakref__")

    def __init__(self, pid, fd, limit):
        self.pid = pid
        self.fd = fd  # the pipe's end this process reads
        self.started = time.monotonic()
        self.limit = limit
        self.error = None  # why the child made no program (its traceback, or what stopped it)
        self.seconds = None  # the CPU time the child took, once it has exited
        self.result = None  # what the child sent (False: nothing), once it has exited

    def poll(self, wait=False):
        """The child's result (the object `work` returned) once it is done, else None; a child
        that failed or ran past its time limit gives ``False`` (and `error` says why)."""
        if self.fd is None:
            return self.result
        if not wait and not select.select([self.fd], [], [], 0)[0]:
            if time.monotonic() - self.started > self.limit:
                self.cancel()
                self.error = f"the child making the program ran past {self.limit:.0f} s and was stopped"
            return self.result
        chunks = []
        while True:  # the child writes once it is done: read to the end
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(self.fd)
        self.fd = None
        self._reap()
        data = b"".join(chunks)
        self.result = False
        if data[:1] == b"+":
            try:
                self.result = loads(data[1:])
            except Exception as exc:  # noqa: BLE001 - a value that will not load here
                self.error = f"the child's program could not be read ({type(exc).__name__}: {exc})"
        else:
            self.error = data[1:].decode("utf-8", "replace") or "the child ended without a result"
        return self.result

    def wait(self):
        return self.poll(wait=True)

    def _reap(self):
        try:
            _, _, usage = os.wait4(self.pid, 0)
            self.seconds = usage.ru_utime + usage.ru_stime
        except ChildProcessError:  # reaped by someone else (a SIGCHLD handler)
            pass
        _RUNNING.discard(self)

    def cancel(self):
        """Stop the child (if it runs) and forget its result."""
        if self.fd is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()
            os.close(self.fd)
            self.fd = None
            self.result = False

    def __del__(self):
        try:
            self.cancel()
        except Exception:  # noqa: BLE001 - at the interpreter's exit the modules may be gone
            pass


def alone(threads=None) -> bool:
    """True if no other thread of the process (of `threads`, by default all) could be at work:
    each other thread is parked (`parked`: waiting in threading's waits, as an idle thread
    pool's workers and a progress bar's monitor do, until it holds the GIL again, which `start`
    keeps until the fork) or one of a notebook kernel's own (ipykernel's channels and output
    pipes, IPython's history). A fork while another thread computes can hang the caller itself
    (OpenBLAS's fork handler waits for its threads to finish the other thread's work, which
    never comes), or the child; a thread in any other state keeps the making with the calls."""
    this = threading.current_thread()
    threads = threading.enumerate() if threads is None else threads
    _pool_waits()  # (read from a file the first time: before the look, which nothing may interrupt)
    frames = sys._current_frames()
    frames.pop(this.ident, None)  # (this frame, held by its own local: a cycle that keeps the caller's alive)
    for t in threads:
        if t is this:
            continue
        module = type(t).__module__ or ""
        if t.daemon and (module.startswith(("ipykernel.", "IPython.")) or t.name == "IOPub"
                         or t.name.endswith("(_watch_pipe_fd)")):
            continue
        if not parked(frames.get(t.ident)) or not _gil():
            return False
    return True


def _gil() -> bool:
    """Whether the interpreter has a GIL (a free-threaded build may not: there a parked thread
    could wake and compute while this one forks, so only a notebook's own threads are allowed)."""
    enabled = getattr(sys, "_is_gil_enabled", None)
    return True if enabled is None else bool(enabled())


def parked(frame) -> bool:
    """Whether a thread whose innermost Python frame is `frame` waits and will compute nothing
    before it runs Python again (which needs the GIL): in threading's waits (``Event.wait``,
    ``Condition.wait``, ``queue.Queue.get``, ``Thread.join``) or where a worker of a
    ``concurrent.futures`` thread pool (Dask's threaded scheduler) waits for work."""
    if frame is None:  # (a thread not yet running, or no longer: taken as at work)
        return False
    code = frame.f_code
    if code.co_filename == threading.__file__ and code.co_name in ("wait", "_wait_for_tstate_lock", "join"):
        return True
    return (code, frame.f_lineno) in _pool_waits()


def _pool_waits():
    """``{(code, line)}`` where a ``concurrent.futures`` pool's worker waits for work (its
    queue's ``get``, in C): read from the worker's source, once; empty where it is not found."""
    global _POOL_WAITS
    if _POOL_WAITS is None:
        module = sys.modules.get("concurrent.futures.thread")
        if module is None:
            return ()  # no pool yet: looked for again when one is made
        _POOL_WAITS = set()
        try:
            lines, first = inspect.getsourcelines(module._worker)
            _POOL_WAITS.update((module._worker.__code__, first + i) for i, line in enumerate(lines)
                               if "work_queue.get(block=True)" in line)
        except (OSError, TypeError, AttributeError):  # no source: no pool's thread is taken as parked
            pass
    return _POOL_WAITS


_POOL_WAITS = None


def start(work, limit: float) -> Job | None:
    """Fork a child that runs ``work()`` and writes back what it returns; None if no child can
    be forked, or none should be (`alone`: other threads at work). The child is stopped if it
    runs more than `limit` seconds. From the look at the other threads to the fork, this thread
    keeps the GIL (the switch interval is raised, and nothing between waits on the system), so
    a thread found parked is still parked when the process forks."""
    global fork_seconds
    for stream in (sys.stdout, sys.stderr):  # what the caller buffered is written once, by it
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or odd stream: nothing to flush
            pass
    began = time.perf_counter()
    try:
        read_end, write_end = os.pipe()
    except OSError:  # no more descriptors: the calls make the program
        return None
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        if not alone():
            os.close(read_end)
            os.close(write_end)
            return None
        with warnings.catch_warnings():
            # Python 3.12 warns on forking a process with threads (BLAS pools, a notebook's):
            # the child here runs only tapegrad and numpy, and one stuck is stopped at `limit`
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:  # no more processes: the calls make the program
        os.close(read_end)
        os.close(write_end)
        return None
    finally:
        sys.setswitchinterval(interval)
    if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
        os.close(read_end)
        _child(work, write_end)
    os.close(write_end)
    job = Job(pid, read_end, limit)
    _RUNNING.add(job)
    fork_seconds = time.perf_counter() - began
    return job


def _child(work, write_end):  # pragma: no cover - runs in the forked child
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        sys.stdout = sys.stderr = io.TextIOWrapper(io.FileIO(null, "w", closefd=False))
        try:
            data = b"+" + dumps(work())
        except BaseException:  # noqa: BLE001 - every failure goes back to the caller as text
            data = b"-" + traceback.format_exc(limit=-8).encode("utf-8", "replace")
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)


@atexit.register
def _stop_all():
    for job in list(_RUNNING):
        job.cancel()


# -- the values a program names, sent from the child to the caller -------------------------

#: types sent by value (or, for functions and classes, by reference, as pickle does); instances
#: of tapegrad's own classes go by value too (what they hold is checked the same way), but for
#: the recorded ones, which no program names
_PLAIN = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, slice, range,
          type(Ellipsis), Spec, type, types.FunctionType, types.BuiltinFunctionType,
          np.ufunc, np.ndarray, pickle.PickleBuffer)
_RECORDED = ("tapegrad.tape", "tapegrad.tracer")


class _Pickler(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fresh = False  # whether `_NAMED` was made during this pickling

    def persistent_id(self, obj):
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        t = type(obj)
        plain = (t in _PLAIN or isinstance(obj, (type, np.dtype))
                 or (isinstance(obj, np.generic) and t.__module__ == "numpy"))
        own = not plain and t.__module__.startswith("tapegrad") and t.__module__ not in _RECORDED
        where = _named(self, obj, sure=own)
        if where is not None or plain or own:
            return where
        raise pickle.PicklingError(
            f"the program names a {t.__module__}.{t.__qualname__}, which is sent to the caller "
            f"neither by value nor by name")


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        if pid[0] == "module":
            return sys.modules[pid[1]]
        return _resolve(pid, strict=True)


def dumps(obj) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf).dump(obj)
    return buf.getvalue()


def loads(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


#: ``(len(sys.modules), {id: (object, where)})``: `_constants` as last made, holding the objects
#: (so that no other object takes one's id); made again when a module was imported since
_NAMED = None


def _named(pickler, obj, sure=False):
    """``("constant", module, name, unwrap)`` where both processes hold `obj` by name, or None.

    The map of such objects takes ~10 ms to make (every tapegrad module's names), so it is kept
    between programs: made anew when modules were imported since, and, once per pickling, when
    the name it gives no longer names `obj` (bound again since) or when `sure` (an instance of
    tapegrad's, which goes by value if unnamed: a copy of a singleton such as `ZERO` would not
    be it) and `obj` is not in it."""
    global _NAMED
    while True:
        if _NAMED is None or _NAMED[0] != len(sys.modules):
            _NAMED = (len(sys.modules), {k: (_resolve(w), w) for k, w in _constants().items()})
            pickler.fresh = True
        held = _NAMED[1].get(id(obj))
        if held is not None and held[0] is obj and _resolve(held[1]) is obj:
            return held[1]
        if pickler.fresh or (held is None and not sure):
            return None
        _NAMED = None  # made before a name was bound again, or before obj was made: once more


def _resolve(where, strict=False):
    """The object a ``("constant", module, name, unwrap)`` names here: None if it names none,
    or (`strict`, as the caller reads a child's program) an AttributeError."""
    _, module, name, unwrap = where
    obj = getattr(sys.modules[module], name) if strict else getattr(sys.modules[module], name, None)
    for _ in range(unwrap):
        obj = obj.__wrapped__ if strict else getattr(obj, "__wrapped__", None)
    return obj


def _constants():
    """{id: ("constant", module, name, unwrap)} of the objects both processes hold by name:
    tapegrad's module-level objects that are not plain values (`ZERO`, `NO_TANGENT`, ...) and
    the functions its wrappers wrap (``unwrap`` times ``__wrapped__``), numpy's singletons
    (``np._NoValue``), and the types of the `types` module (functions' own class)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "tapegrad" or name.startswith("tapegrad.") or name in ("numpy", "types")):
            continue
        for attr, value in list(vars(module).items()):
            if name == "types":
                if isinstance(value, type):
                    found.setdefault(id(value), ("constant", name, attr, 0))
                continue
            t = type(value)
            if name != "numpy":  # tapegrad's functions too: a recorded one may be named as another
                if not isinstance(value, (type, types.ModuleType, *_PLAIN)) or isinstance(value, types.FunctionType):
                    found.setdefault(id(value), ("constant", name, attr, 0))
            elif not isinstance(value, (type, types.FunctionType, types.ModuleType, np.ufunc, np.generic,
                                        np.ndarray, np.dtype)) and t.__module__.split(".")[0] == "numpy":
                found.setdefault(id(value), ("constant", name, attr, 0))
            unwrap, inner = 0, value
            while callable(inner) and hasattr(inner, "__wrapped__") and unwrap < 4:
                inner, unwrap = inner.__wrapped__, unwrap + 1
                found.setdefault(id(inner), ("constant", name, attr, unwrap))
    return found

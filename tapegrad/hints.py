"""What a refusal can tell about where it came from, and the fix: the hints on the error path.

`tapegrad.errors` holds the exceptions and the helpers every message uses (the user's line,
names, types). The functions here look further, only when something is refused: which scipy
function converted a traced value and tapegrad's replacement for it, which name in the user's
function is numpy's own bound at import, which numpy function was given a list of traced
values, which random sampler got a traced parameter, whether ``"%.3f" % x`` asked for a float.
None of them runs on a path that succeeds.
"""
from __future__ import annotations

import dis
import linecache
import re
import sys

import numpy as np

from .errors import ConcreteValueError, in_library, in_scipy, traceback_location, user_location

__all__ = ["register_replacement", "filler_hint", "foreign_function_hint", "NUMPY_ORIGINALS",
           "numpy_call_hint", "plain_store_error", "bound_at_import_hint", "random_sampler_hint",
           "percent_formatting"]

_REPLACEMENTS: dict = {}


def register_replacement(original: str, replacement: str) -> None:
    """Name tapegrad's replacement for a function that cannot see traced values.

    ``register_replacement("scipy.linalg.solve_triangular", "tapegrad.scipy.linalg.solve_triangular")``:
    when a Tracer reaches the original (which converts it to a plain array), the error names
    the replacement.
    """
    _REPLACEMENTS[original] = replacement


def _public(module: str, name: str) -> str:
    """scipy.linalg._basic.solve_triangular -> scipy.linalg.solve_triangular"""
    return ".".join(p for p in module.split(".") if not p.startswith("_")) + "." + name

def filler_hint() -> str:
    """If numpy's ``full`` or ``full_like`` is writing a dual or traced fill value into the
    plain array it made, say so and how to build the array instead (numpy asks only the first
    argument of ``full_like``, and no argument of ``full``, about the call)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if module.startswith("numpy") and frame.f_code.co_name in ("full", "full_like"):
            name = frame.f_code.co_name
            shape = "a" if name == "full_like" else "shape"
            return (f"np.{name}({shape}, fill_value) at {user_location()} with a dual fill value: "
                    f"numpy builds a plain array and writes the fill value into it, which would "
                    f"drop its variation; write fill_value * np.ones_like(a) (or "
                    f"fill_value * np.ones(shape)) instead")
        frame = frame.f_back
    return ""


def foreign_function_hint() -> str:
    """If a scipy function is converting a traced value, name it (the one the user called,
    the outermost scipy frame) and tapegrad's replacement when there is one."""
    names = []
    frame = sys._getframe(1)
    while frame is not None:
        if in_scipy(frame):
            if not frame.f_code.co_name.startswith("<"):  # (a lambda or comprehension of scipy's)
                names.append(_public(frame.f_globals.get("__name__", "scipy"), frame.f_code.co_name))
            # scipy's decorators (array-argument batching) run before the real function's frame
            # exists: the function they wrap is a local of theirs
            for local in ("f", "func", "fun"):
                wrapped = frame.f_locals.get(local)
                if (callable(wrapped) and hasattr(wrapped, "__name__")
                        and (getattr(wrapped, "__module__", None) or "").startswith("scipy")):
                    names.append(_public(wrapped.__module__ or "scipy", wrapped.__name__))
        elif names and not in_library(frame):
            break  # back in the user's code
        frame = frame.f_back
    for name in names:
        if name in _REPLACEMENTS:
            return f"{name} cannot see traced values: use {_REPLACEMENTS[name]} instead. "
    if names:
        return f"{names[-1]} cannot see traced values and tapegrad has no replacement for it. "
    return ""


#: numpy's own objects that tapegrad stands in for while it traces, by name in numpy's
#: namespace (filled by tapegrad.literals): a name bound to one at import keeps numpy's own
NUMPY_ORIGINALS: dict = {}


def numpy_call_hint(value="traced") -> str:
    """Why numpy's own code is converting a traced value, and the fix, if it can be told: a name
    in the user's function bound to numpy's own at import (``from numpy import mean``,
    `bound_at_import_hint`), or a list holding traced values given to a numpy function or ufunc
    that converts it itself; "" otherwise. Only on an error's path."""
    frame = sys._getframe(1)
    called = None
    while frame is not None and in_library(frame):
        module = frame.f_globals.get("__name__") or ""
        if module == "numpy" or module.startswith("numpy."):
            called = frame  # the outermost numpy frame: the function the user called
        frame = frame.f_back
    if frame is None:
        return ""
    bound = bound_at_import_hint(frame, value)
    if bound:
        return bound
    known = _known_refusal(called) if called is not None else ""
    if known:
        return known
    line = _source_line(frame)
    for name in re.findall(r"([A-Za-z_][\w.]*)\s*\(\s*[\[(]", line):  # f([...]) or f((...))
        if isinstance(_resolve(frame, name), np.ufunc):
            return _given_a_list(name, value)
    if called is not None:
        for local in list(called.f_locals.values()):
            if isinstance(local, (list, tuple)) and any(hasattr(v, "_val") and hasattr(v, "_dispatch") for v in local):
                return _given_a_list(_numpy_name(called), value)
    return ""


def _known_refusal(called) -> str:
    """The fix for numpy's callables that convert traced values whatever they are given (the
    outermost numpy frame `called` is theirs): np.vectorize, numpy.polynomial."""
    owner = called.f_locals.get("self")
    if isinstance(owner, np.vectorize):
        return ("np.vectorize calls its function on one element at a time, as plain numbers: write the "
                "function with numpy calls on the whole array (np.where for a branch), or use "
                "np.apply_along_axis, or a list comprehension and np.stack")
    module = called.f_globals.get("__name__") or ""
    if module.startswith("numpy.polynomial"):
        name = (f"numpy.polynomial.{type(owner).__name__}" if owner is not None
                else _public(module, called.f_code.co_name))
        return (f"{name} converts its coefficients with np.array itself: evaluate a power series with "
                f"np.polyval(c[::-1], t) (which has a rule), or write the recurrence (Horner's; Clenshaw's "
                f"for chebval, legval, hermval) with numpy calls on the traced coefficients")
    return ""


def _given_a_list(name, value) -> str:
    return (f"{name} was given a list holding {value} values, which numpy converts to an array "
            f"itself: pass np.stack([...]) (or np.array([...])) instead")


def _resolve(frame, name):
    """The object a dotted name (``np.sin``) stands for in `frame`, or None."""
    parts = name.split(".")
    scopes = (frame.f_locals, frame.f_globals, frame.f_builtins)
    obj = next((s[parts[0]] for s in scopes if parts[0] in s), None)
    for p in parts[1:]:
        obj = getattr(obj, p, None)
    return obj


def _source_line(frame) -> str:
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno)


def _numpy_name(frame) -> str:
    """``np.append``: the public name of the numpy function whose implementation runs in `frame`."""
    name = frame.f_code.co_name
    for space, prefix in ((np, "np."), (np.linalg, "np.linalg."), (np.fft, "np.fft.")):
        fn = getattr(space, name, None)
        if getattr(getattr(fn, "_implementation", fn), "__code__", None) is frame.f_code:
            return prefix + name
    return _public(frame.f_globals.get("__name__", "numpy"), name)

def plain_store_error(exc, value="traced"):
    """The error to raise for `exc`, numpy's ValueError when a `value` ("traced" or "dual")
    value was written into a plain ndarray, or None for any other exception."""
    if not isinstance(exc, ValueError) or "setting an array element with a sequence" not in str(exc):
        return None
    frame = None
    tb = exc.__traceback__
    while tb is not None:  # the innermost frame of the user's: the function that wrote
        if not in_library(tb.tb_frame):
            frame = tb.tb_frame
        tb = tb.tb_next
    hint = bound_at_import_hint(frame, value, literals=False) if frame is not None else ""
    if hint:
        return ConcreteValueError(
            f"numpy could not store a {value} value into a plain array at {traceback_location(exc)}: {hint}")
    return ConcreteValueError(
        f"numpy could not store a value into a plain array at {traceback_location(exc)}: a {value} "
        f"value cannot be written into a plain ndarray (one made outside the differentiated "
        f"function, by np.array of plain numbers, or by a copy of such an array). Make the "
        f"array inside the function with "
        f"np.zeros, np.empty, np.ones, np.full or their _like forms, called as np.zeros(...), which "
        f"take {value} values there (a name bound from numpy at import, from numpy import zeros, "
        f"is numpy's own and makes a plain array), or build it from {value} values: "
        f"np.stack([...]), np.where(mask, t, 0.0), np.concatenate"
    )


#: numpy's functions that make arrays to fill in, which tapegrad sees inside a trace under
#: numpy's names only (`tapegrad.literals`), and those that make arrays of lists
_CONSTRUCTORS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like")
_LITERALS = ("array", "asarray", "asanyarray")


def bound_at_import_hint(frame=None, value="traced", literals=True) -> str:
    """If the function running in `frame` (by default the user's innermost: the first outside
    tapegrad, numpy and scipy) calls one of numpy's objects that tapegrad stands in for while it
    traces (`NUMPY_ORIGINALS`: the constructors, ``np.array``, the functions that take lists,
    ``np.r_``) through a name bound from numpy (``from numpy import zeros`` at the top of its
    module, or a module that re-exports numpy's names), what that does and what to write
    instead; "" otherwise. Without `literals`, the constructors only (an array written into
    was made by one). Only on an error's path."""
    if frame is None:
        frame = sys._getframe(1)
        while frame is not None and in_library(frame):
            frame = frame.f_back
        if frame is None:  # pragma: no cover - tapegrad is always called from somewhere
            return ""
    names_of = {id(obj): name for name, obj in NUMPY_ORIGINALS.items()}
    code = frame.f_code
    found = {}  # the user's name -> numpy's
    for name in code.co_varnames + code.co_cellvars + code.co_freevars + code.co_names:
        try:
            v = frame.f_locals[name] if name in frame.f_locals else frame.f_globals.get(name)
        except Exception:  # pragma: no cover - a frame's locals that cannot be read
            continue
        own = names_of.get(id(v))
        # (while a trace runs numpy's name holds tapegrad's stand-in: the user's is numpy's own)
        if own is not None and own != "errstate" and getattr(np, own, None) is not v \
                and (literals or own in _CONSTRUCTORS):
            found.setdefault(name, own)
    if not found:
        return ""
    text = []
    for kind, what, fix in (
            (_CONSTRUCTORS, f"the array it makes is plain, and a {value} value cannot be written "
                            f"into a plain ndarray",
             f"inside a trace tapegrad sees np.zeros & co., and the arrays they make take {value} values"),
            (_LITERALS, f"it turns {value} values into a plain array, which drops their "
                        f"derivative", f"tapegrad records np.array([...]) of {value} values as "
                                   f"np.stack of them"),
            (None, f"it cannot see {value} values inside a list or an index, which numpy converts "
                   f"itself", f"tapegrad takes lists of {value} values there while it traces")):
        names = {n: own for n, own in found.items()
                 if (own in kind if kind else own not in _CONSTRUCTORS + _LITERALS)}
        if not names:
            continue
        binds = ", ".join(own if n == own else f"{own} as {n}" for n, own in names.items())
        calls = " and ".join(f"np.{own}" for own in dict.fromkeys(names.values()))
        text.append(f"{' and '.join(names)} in {code.co_name} {'is' if len(names) == 1 else 'are'} "
                    f"numpy's own, bound by name when the module was imported (from numpy "
                    f"import {binds}): {what}. Call {calls} through numpy's namespace (import "
                    f"numpy as np): {fix}")
    return "; ".join(text)


# --- numpy's random samplers given traced parameters ---

#: how a draw with traced parameters is written as fixed noise shifted and scaled
_REPARAMETERIZED = {
    "normal": "x + {rng}.normal() for normal(loc=x); in general loc + scale * {rng}.standard_normal(size)",
    "uniform": "low + (high - low) * {rng}.random(size)",
    "exponential": "scale * {rng}.standard_exponential(size)",
    "lognormal": "np.exp(mean + sigma * {rng}.standard_normal(size))",
    "laplace": "loc + scale * {rng}.laplace(size=size)",
    "logistic": "loc + scale * {rng}.logistic(size=size)",
    "gumbel": "loc + scale * {rng}.gumbel(size=size)",
    "rayleigh": "scale * {rng}.rayleigh(size=size)",
    "weibull": "scale * {rng}.weibull(a, size) (a plain)",
    "standard_cauchy": "loc + scale * {rng}.standard_cauchy(size)",
    "multivariate_normal": "mean + {rng}.standard_normal(size + (n,)) @ np.linalg.cholesky(cov).T",
}
_NOT_SAMPLERS = {"bit_generator", "spawn", "bytes", "shuffle", "permutation", "permuted",
                 "get_state", "set_state", "seed"}
_SAMPLERS: set = set()


def random_sampler_hint(what) -> str:
    """If the user's line is calling a sampler of a numpy random generator (``rng.normal(loc=x)``,
    ``np.random.uniform(0, x)``), which converted `what` ("the traced value %2::float64") to a
    plain number, the error that says how to draw instead; "" otherwise. Found from the
    bytecode of the call being made (no source needed: it works under ``python -c`` too), or,
    where instructions carry no positions (Python 3.10), from the source line."""
    if not _SAMPLERS:
        for cls in (np.random.Generator, np.random.RandomState):
            _SAMPLERS.update(n for n in dir(cls) if not n.startswith("_") and n not in _NOT_SAMPLERS)
    frame = sys._getframe(1)
    while frame is not None and in_library(frame):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - tapegrad is always called from somewhere
        return ""
    called = _called_method(frame)
    if called is None:
        return ""
    receiver, name = called
    if name not in _SAMPLERS:
        return ""
    shifted = _REPARAMETERIZED.get(name)
    fix = (f"Draw the noise with fixed parameters and shift and scale it, which is differentiated: "
           f"{shifted.format(rng=receiver)}" if shifted else
           f"{name}'s draws are not a shift and scale of fixed noise, so they have no derivative by "
           f"their parameters here: pass it plain numbers (values from outside the "
           f"differentiated function)")
    return (f"{receiver}.{name}() at {user_location()} was given {what} as a parameter: numpy's "
            f"random samplers take plain numbers only, so its gradient would be lost. {fix}")


_LOADS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_GLOBAL", "LOAD_NAME")


def percent_formatting(frame) -> bool:
    """True when `frame` is running a ``%`` operation (``"%.3f" % x``, which asks float(x))."""
    try:
        op = next((i for i in dis.get_instructions(frame.f_code) if i.offset == frame.f_lasti), None)
    except Exception:  # pragma: no cover - an unusual code object
        return False
    return op is not None and (op.opname in ("BINARY_MODULO", "INPLACE_MODULO")
                               or op.opname == "BINARY_OP" and op.argrepr in ("%", "%="))


def _called_method(frame):
    """``(receiver, method name)`` of the method call `frame` is making (``("rng", "normal")``
    while ``rng.normal(loc=x)`` runs), or None. The receiver is named as written when it is a
    chain of names and attributes whose object is a numpy generator or ``np.random``."""
    code, lasti = frame.f_code, frame.f_lasti
    chain = []
    try:
        instructions = list(dis.get_instructions(code))
        call = next((i for i in instructions if i.offset == lasti), None)
        start = getattr(call, "positions", None)
        if start is None or start.lineno is None:
            return _called_method_from_source(frame)
        for i in instructions:
            if i.offset >= lasti:
                break
            p = i.positions
            if p is not None and (p.lineno, p.col_offset) == (start.lineno, start.col_offset):
                chain.append(i)  # the callee's chain: rng, .normal (each starts where the call does)
    except Exception:  # pragma: no cover - an unusual code object: no hint
        return None
    attrs = [i for i in chain if i.opname in ("LOAD_ATTR", "LOAD_METHOD")]
    if not attrs:
        return None
    name = attrs[-1].argval
    loads = [i for i in chain if i.opname in _LOADS + ("LOAD_ATTR", "LOAD_METHOD")]
    if loads and loads[0].opname in _LOADS and all(i.opname in _LOADS + ("LOAD_ATTR", "LOAD_METHOD") for i in chain
                                                    if not i.opname.startswith(("KW_NAMES", "PRECALL", "PUSH_NULL"))):
        # a chain of names (rng, self.rng, np.random): the object it names, read again
        first = loads[0].argval
        try:
            if first in frame.f_locals:
                obj = frame.f_locals[first]
            else:
                obj = frame.f_globals.get(first, frame.f_builtins.get(first))
            for i in loads[1:-1]:
                obj = getattr(obj, i.argval)
        except Exception:
            obj = None
        if not (isinstance(obj, (np.random.Generator, np.random.RandomState)) or obj is np.random):
            return None
        return ".".join(i.argval for i in loads[:-1]), name
    return "rng", name  # a receiver made by a call: named by the method alone


def _called_method_from_source(frame):
    """`_called_method` from the source line, where instructions carry no positions."""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno, frame.f_globals)
    calls = re.findall(r"([A-Za-z_][\w.]*)\.(\w+)\s*\(", line)
    return calls[-1] if calls else None

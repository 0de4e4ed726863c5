"""Errors that teach the fix, and the helpers they use to name functions, types and places.

Every message names the operation, the argument types, where in the user's code it happened
and what to do about it. Finding the place walks the Python stack, so it is done only when
an error is raised, never on the tracing path.
"""
from __future__ import annotations

import dis
import importlib
import linecache
import os
import re
import sys
import traceback
import warnings

import numpy as np

__all__ = [
    "TapegradError",
    "NoRuleError",
    "SeedError",
    "RuleError",
    "EscapedTracerError",
    "ConcreteValueError",
    "StaleViewError",
    "StaleInputError",
    "ComplexValueError",
    "user_location",
    "random_sampler_hint",
    "bound_at_import_hint",
    "percent_formatting",
    "in_library",
    "qualified_name",
    "short_name",
    "type_str",
    "ufunc_method",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_DIRS = (_PACKAGE_DIR, os.path.dirname(np.__file__))


class TapegradError(Exception):
    """Base of every error tapegrad raises on its own account."""


class NoRuleError(TapegradError, NotImplementedError):
    """A primitive was reached that has no rrule (and is not marked non-differentiable)."""


class RuleError(TapegradError, ValueError):
    """A rule broke its contract: a pullback returned the wrong number or shape of tangents."""


class SeedError(TapegradError, ValueError):
    """The seed of the reverse sweep is missing or does not match the result."""


class EscapedTracerError(TapegradError, RuntimeError):
    """A traced value was used after the trace that made it had ended."""


class StaleViewError(TapegradError, RuntimeError):
    """A view was used after the array it views was written in place."""


class StaleInputError(TapegradError, RuntimeError):
    """An input of a recorded pullback was changed in place before the pullback was run."""


class ComplexValueError(TapegradError, NotImplementedError):
    """A complex value reached a rule not written for complex values (see `registry.complex_rules`)."""


COMPLEX_FIX = ("complex values are differentiated only through the rules written and tested for "
               "them (elementwise arithmetic and functions, sums and means, shapes, indexing and "
               "writes, products, numpy.linalg, numpy.fft, tapegrad.scipy.linalg: the list is in "
               "the README's \"Complex numbers\" section; not sign or clip); compute this step "
               "from the real and imaginary parts (np.real(z), np.imag(z)) as two real arrays, or, "
               "if this rule is right for complex values under autograd's convention, declare it "
               "with tapegrad.extend.complex_rules(fn)")


def is_complex_value(y) -> bool:
    """True for a complex number, a complex array or scalar, a traced or dual value holding one,
    or a tuple or list holding one."""
    t = type(y)
    if t is float or t is int:
        return False
    if t is complex:
        return True
    if isinstance(y, (np.ndarray, np.generic)):
        return y.dtype.kind == "c"
    if t is tuple or t is list or isinstance(y, tuple):
        return any(is_complex_value(v) for v in y)
    dt = getattr(y, "dtype", None)  # a Tracer or a Dual (their dtype is their value's)
    return isinstance(dt, np.dtype) and dt.kind == "c"


class ConcreteValueError(TapegradError, TypeError):
    """A traced value was turned into a plain Python or NumPy value, which would drop its gradient."""


def in_scipy(frame) -> bool:
    """True for a frame of scipy's own code, known by its module (a path containing ``scipy/``
    may as well be the user's project or tapegrad's own ``tapegrad/scipy``)."""
    module = frame.f_globals.get("__name__") or ""
    return module == "scipy" or module.startswith("scipy.")


def in_library(frame) -> bool:
    """True for a frame of numpy's, scipy's or tapegrad's own code, or of a program tapegrad
    generated (not the user's)."""
    name = frame.f_code.co_filename
    return (name.startswith("<tapegrad") or os.path.abspath(name).startswith(_SKIP_DIRS)
            or in_scipy(frame))


def user_location(skip_packages=()) -> str:
    """``file.py:12`` of the innermost frame outside tapegrad and numpy, or ``<unknown>``.

    Frames of the packages named in `skip_packages` (``("pickle", "cloudpickle")``) are
    passed over too.
    """
    frame = sys._getframe(1)
    while frame is not None:
        fname = os.path.abspath(frame.f_code.co_filename)
        package = (frame.f_globals.get("__name__") or "").split(".")[0]
        if not in_library(frame) and package not in skip_packages:
            if "ipykernel_" in fname or fname.startswith("<ipython-input"):
                return f"cell line {frame.f_lineno}"  # a notebook cell: its file name means nothing
            return f"{os.path.basename(fname)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


# --- numpy's floating-point warnings, at the user's line ---


#: ``finder(frames) -> (i, fn, in_derivative) or None``: the primitive whose rule or pullback
#: runs in `frames` (innermost first); `tapegrad.registry` sets it, since it knows each rule's
#: code (this module imports nothing of tapegrad's)
running_primitive = None


def _warn_at_user_line(kind, flag):
    """numpy's error callback: warn about `kind` ("divide by zero") at the user's line, naming
    the operation whose rule (or derivative) met it, rather than at a line inside a rule."""
    frame = sys._getframe(1)
    inside = []
    while frame is not None and in_library(frame):
        inside.append(frame)
        frame = frame.f_back
    found = running_primitive(inside) if running_primitive is not None else None
    compiled = next((i for i, f in enumerate(inside) if f.f_code.co_filename.startswith("<tapegrad")), None)
    what = None
    if found is not None and (compiled is None or found[0] < compiled):
        _, fn, in_derivative = found
        what = f"the derivative of {short_name(fn)}" if in_derivative else short_name(fn)
    elif compiled is not None:
        what = "a compiled gradient program"
    message = f"{kind} encountered in {what or 'numpy'}"
    if frame is None:  # pragma: no cover - tapegrad is always called from somewhere
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        return
    g = frame.f_globals
    # module_globals lets the warning show the source of a module that has a loader (a zip
    # import); code run by `python -c`, from stdin or at the prompt has none that can give its
    # source (its __spec__ is None, and asking its loader raises ImportError)
    warnings.warn_explicit(message, RuntimeWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__"), registry=g.setdefault("__warningregistry__", {}),
                           module_globals=g if g.get("__spec__") is not None else None)


try:  # numpy 2 keeps its error state in a context variable: swapping it costs nothing
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - another numpy: the public, slower errstate
    _extobj_contextvar = None

_ROUTED: dict = {}  # the user's error state -> the same with "warn" turned into our callback


def route_warnings():
    """Start sending numpy's floating-point warnings to the user's line (`_warn_at_user_line`);
    ``restore_warnings(token)`` ends it. Categories set to ignore, raise or print stay so."""
    if _extobj_contextvar is None:  # pragma: no cover
        state = np.errstate(call=_warn_at_user_line,
                            **{k: "call" if v == "warn" else v for k, v in np.geterr().items()})
        state.__enter__()
        return state
    current = _extobj_contextvar.get()
    routed = _ROUTED.get(current)
    if routed is None:
        modes = np.geterr()
        if "warn" in modes.values() and "call" not in modes.values():  # (a user's callback stays)
            routed = _make_extobj(call=_warn_at_user_line,
                                  **{k: "call" if v == "warn" else v for k, v in modes.items()})
        else:
            routed = current
        if len(_ROUTED) > 16:
            _ROUTED.clear()
        _ROUTED[current] = routed
    return _extobj_contextvar.set(routed)


def restore_warnings(token) -> None:
    """End what `route_warnings` started."""
    if _extobj_contextvar is None:  # pragma: no cover
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


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


def too_deep_error(what: str, cycles: bool = False) -> TypeError:
    """The error for a value nested more deeply than Python's recursion limit lets a walk go
    (or, for a walk that does not follow cycles, one that holds itself)."""
    cycle = (" or holds itself (a list or dict inside itself), which this function does not "
             "follow") if cycles else ""
    return TypeError(
        f"{what} given at {user_location()} is nested too deeply to walk (more levels than "
        f"Python's recursion limit, {sys.getrecursionlimit()}, allows){cycle}; pass its numbers "
        f"as an array, or nest them less"
    )


def scalar_cast_error(what, dtype) -> ConcreteValueError:
    """The refusal of ``np.float64(t)`` (or another numpy float or complex scalar type) of a
    traced or dual number `what` (``the traced value %2::float64``): numpy's scalar types make
    plain numbers only, so no hook can return a value that keeps the gradient."""
    name = np.dtype(dtype).name
    return ConcreteValueError(
        f"np.{name}(t) of {what} at {user_location()} (or another conversion of it to a plain "
        f"{name}) would drop its derivative: numpy's scalar types always make a plain number, "
        f"which cannot carry one. Cast it with t.astype(np.{name}) or np.asarray(t, np.{name}), "
        f"which keep it"
    )


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
        fname = os.path.abspath(frame.f_code.co_filename)
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
        elif names and not fname.startswith(_SKIP_DIRS):
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
    line = _source_line(frame)
    for name in re.findall(r"([A-Za-z_][\w.]*)\s*\(\s*[\[(]", line):  # f([...]) or f((...))
        if isinstance(_resolve(frame, name), np.ufunc):
            return _given_a_list(name, value)
    if called is not None:
        for local in list(called.f_locals.values()):
            if isinstance(local, (list, tuple)) and any(hasattr(v, "_val") and hasattr(v, "_dispatch") for v in local):
                return _given_a_list(_numpy_name(called), value)
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


_QUALIFIED = None


def _build_qualified():
    """Map id(ufunc or function) -> 'module.name' for the modules whose names users know."""
    table = {}
    for modname in ("scipy.special", "numpy.fft", "numpy.linalg", "numpy"):
        try:
            mod = importlib.import_module(modname)
        except ImportError:  # pragma: no cover - scipy is a dependency
            continue
        for name in dir(mod):
            obj = getattr(mod, name, None)
            if isinstance(obj, np.ufunc) or callable(obj):
                # an alias (true_divide for divide) never hides the function's own name
                if id(obj) not in table or getattr(obj, "__name__", None) == name:
                    table[id(obj)] = f"{modname}.{name}"
    return table


_BUILTIN_METHOD = type(np.add.reduce)


def ufunc_method(fn):
    """``(ufunc, method name)`` for a method bound to a ufunc (``np.add.reduce`` gives
    ``(np.add, "reduce")``), or None for anything else.

    Such a method is a new object at each attribute access, but it compares and hashes equal
    to every other ``np.add.reduce``: the registry finds its rule by a dict lookup."""
    if type(fn) is _BUILTIN_METHOD:
        owner = fn.__self__
        if isinstance(owner, np.ufunc):
            return owner, fn.__name__
    return None


def qualified_name(fn) -> str:
    """``numpy.multiply``, ``scipy.special.erfcx``, ``numpy.add.reduce``, ``mymodule.myfn``: a
    name the user can import."""
    global _QUALIFIED
    if _QUALIFIED is None:
        _QUALIFIED = _build_qualified()
    method = ufunc_method(fn)
    if method is not None:
        return f"{qualified_name(method[0])}.{method[1]}"
    q = _QUALIFIED.get(id(fn))
    if q is not None:
        return q
    mod = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{mod}.{name}" if mod and mod != "builtins" else name


def ufunc_method_hint(fn, rules) -> str:
    """For a method of a ufunc that has no rule (``np.subtract.reduce``), the ufuncs whose
    method of that name tapegrad differentiates and what to write instead, as a clause ending
    in "; " to put before the advice of a NoRuleError; "" for any other function. `rules` is
    the registry's table (passed in: this module imports nothing of tapegrad's)."""
    method = ufunc_method(fn)
    if method is None:
        return ""
    ufunc, name = method
    have = sorted(qualified_name(m[0]) for m in map(ufunc_method, rules) if m is not None and m[1] == name)
    own = qualified_name(ufunc)
    if name == "outer":
        return (f"tapegrad differentiates the outer method of the two-input ufuncs that had a "
                f"rule when it was imported: if {own} has one now, write "
                f"{own}(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b), the same outer "
                f"product by broadcasting; otherwise ")
    listed = (", ".join(have[:-1]) + " and " + have[-1]) if len(have) > 1 else "".join(have) or "no ufunc"
    return (f"tapegrad differentiates the {name} method of {listed} only: write this one with "
            f"{own} itself, applied step by step along the axis (each step is differentiated), "
            f"or ")


def short_name(fn) -> str:
    """The name a dump shows: ``multiply``, ``sum``, ``erfcx``, ``add.reduce``, ``sin_pullback``."""
    method = ufunc_method(fn)
    if method is not None:
        return f"{method[0].__name__}.{method[1]}"
    name = getattr(fn, "__name__", None)
    if name is None:
        name = type(fn).__name__
    if name == "<lambda>":
        return "lambda"
    return name


def type_str(val) -> str:
    """``float64``, ``float64[3]``, ``int64[2,3]``, ``tuple``, ``function f``: a value's type as dumps print it
    (of a traced or dual value, the type of the value it stands for)."""
    while hasattr(val, "_dispatch") and hasattr(val, "_val"):
        val = val._val
    t = type(val)
    if t is float:
        return "float64"
    if t is int:
        return "int64"
    if t is bool:
        return "bool"
    if t is complex:
        return "complex128"
    if isinstance(val, np.ndarray):
        if val.ndim == 0:
            return f"{val.dtype}[]"
        return f"{val.dtype}[{','.join(map(str, val.shape))}]"
    if isinstance(val, np.generic):
        return str(val.dtype)
    if callable(val) and hasattr(val, "__name__"):
        kind = "ufunc" if isinstance(val, np.ufunc) else "function"
        return f"{kind} {short_name(val)}"
    return t.__name__


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


def traceback_location(exc) -> str:
    """``file.py:12`` of the innermost frame of `exc`'s traceback outside tapegrad and numpy."""
    where = "<unknown>"
    for fs in traceback.extract_tb(exc.__traceback__):
        if not os.path.abspath(fs.filename).startswith(_SKIP_DIRS) and not fs.filename.startswith("<tapegrad"):
            where = f"{os.path.basename(fs.filename)}:{fs.lineno}"
    return where

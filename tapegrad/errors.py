"""Errors that teach the fix, and the helpers they use to name functions, types and places.

Every message names the operation, the argument types, where in the user's code it happened
and what to do about it. Finding the place walks the Python stack, so it is done only when
an error is raised, never on the tracing path.
"""
from __future__ import annotations

import importlib
import os
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
    "in_library",
    "qualified_name",
    "short_name",
    "type_str",
    "ufunc_method",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_DIRS = (_PACKAGE_DIR, os.path.dirname(np.__file__))


#: what a refused ``item()`` or ``tolist()`` of a traced or dual value adds: a branch needs no
#: plain number (a comparison of the value itself is recorded, with a guard)
BRANCH_HINT = "; to branch on its value, compare it as it is (if x[0] > 0:)"


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
    return _library_file(frame.f_code.co_filename) or in_scipy(frame)


#: file name of code -> whether it is tapegrad's, numpy's or a generated program's: asked for
#: each frame a location passes (a guard at every branch on a traced value), and
#: ``os.path.abspath`` was most of the cost
_LIBRARY_FILES: dict = {}


def _library_file(name) -> bool:
    known = _LIBRARY_FILES.get(name)
    if known is None:
        known = name.startswith("<tapegrad") or os.path.abspath(name).startswith(_SKIP_DIRS)
        if os.path.isabs(name) or name.startswith("<"):  # (a relative name moves with the directory)
            if len(_LIBRARY_FILES) > 4096:  # (a notebook's cells are files of their own)
                _LIBRARY_FILES.clear()
            _LIBRARY_FILES[name] = known
    return known


def user_location(skip_packages=()) -> str:
    """``file.py:12`` of the innermost frame outside tapegrad and numpy, or ``<unknown>``.

    Frames of the packages named in `skip_packages` (``("pickle", "cloudpickle")``) are
    passed over too.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if not in_library(frame) and (
                not skip_packages or (frame.f_globals.get("__name__") or "").split(".")[0] not in skip_packages):
            fname = os.path.abspath(frame.f_code.co_filename)
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

#: code -> what it does, for tapegrad's own code outside any rule that can meet a warning (the
#: reverse sweep's sum of two shares of a derivative); its modules fill it in
DOING: dict = {}

#: the name, in a compiled program's globals, of its table {line: the operation it calls}
#: (`tapegrad.program.codegen`), by which a warning inside the program names the operation
PROGRAM_LINES = "__tapegrad_lines__"


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
        what = (f"{short_name(fn)} or its derivative (forward mode)" if in_derivative == "forward"
                else f"the derivative of {short_name(fn)}" if in_derivative else short_name(fn))
    elif compiled is not None:
        program = inside[compiled]
        operation = program.f_globals.get(PROGRAM_LINES, {}).get(program.f_lineno)
        what = f"{operation}, in a compiled gradient program" if operation else "a compiled gradient program"
    else:  # tapegrad's own code outside a rule (a sum of shares of dual numbers runs their rules' helpers)
        what = next((DOING[f.f_code] for f in inside if f.f_code in DOING), None)
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


def several_points_error(what: str, given) -> TypeError:
    """The error for `jacobian`, `hessian` or `hvp` given values after their one point x where
    their mode goes (``hessian(f, 1.0, 2.0)``: a function of two arguments), saying how to pass
    several."""
    return TypeError(
        f"{what} at {user_location()} takes one point x (a number, an array or a structure "
        f"of them), then its mode; it was given {', '.join(type_str(v) for v in given)} after x. For a "
        f"function of several arguments, pass them as one tuple: {what}(lambda xs: f(*xs), (x1, x2, ...))"
    )


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


_QUALIFIED = None
_QUALIFIED_SCIPY = False  # whether _QUALIFIED holds scipy.special's names


def _build_qualified():
    """Map id(ufunc or function) -> 'module.name' for the modules whose names users know
    (scipy.special's once the program has imported it: tapegrad does not, see tapegrad.onimport)."""
    table = {}
    for modname in ("scipy.special", "numpy.fft", "numpy.linalg", "numpy"):
        mod = sys.modules.get(modname) if modname == "scipy.special" else importlib.import_module(modname)
        if mod is None:
            continue
        # (the names the module holds: getattr over dir(numpy) would import numpy's lazy
        # submodules, numpy.f2py, numpy.ma and more, which take longer than numpy itself)
        for name, obj in sorted(vars(mod).items()):
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
    global _QUALIFIED, _QUALIFIED_SCIPY
    if _QUALIFIED is None or (not _QUALIFIED_SCIPY and "scipy.special" in sys.modules):
        _QUALIFIED_SCIPY = "scipy.special" in sys.modules
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


def traceback_location(exc) -> str:
    """``file.py:12`` of the innermost frame of `exc`'s traceback outside tapegrad and numpy."""
    where = "<unknown>"
    for fs in traceback.extract_tb(exc.__traceback__):
        if not os.path.abspath(fs.filename).startswith(_SKIP_DIRS) and not fs.filename.startswith("<tapegrad"):
            where = f"{os.path.basename(fs.filename)}:{fs.lineno}"
    return where

"""`trace`: run a function under a context, on traced copies of its arguments.

`trace(f, *args, ctx=...)` makes the Inputs and the Tracers of the arguments (their structure
is `tapegrad.pytree`'s), puts numpy's stand-ins in place for the run (`tapegrad.literals`),
runs `f` on them, says what went wrong if it fails, and packs the result. It sits above the
tracer and the contexts because it needs a context to run under; the tracer itself knows
only that its tape has one, and a context only how to record.
"""
from __future__ import annotations

import functools
import gc
import inspect
import sys
import types

import numpy as np

from .errors import EscapedTracerError, TapegradError, is_complex_value, user_location
from .hints import plain_store_error
from .pytree import Spec, build, flatten, leaf_spec, unflatten
from .tape import Constant, Tape
from .arraylike import new_epoch
from .buffers import Buffer, unbuffer, unbuffer_all
from .literals import constructors_off, constructors_on
from .tracer import Tracer, active_tapes, escaped_error, new_tracer, plain_scalar, record_call
from .context import BaseContext

_ndarray = np.ndarray

__all__ = ["trace", "ARGUMENTS", "param_names", "make_leaf", "traced_copy", "tapegrads_own"]


#: id of a plain function's code object -> (the code object, n, its names): `param_names`
#: reads a code object once, not at every gradient of the same function
_NAMES = {}


def param_names(f, n):
    """Names of the first n positional parameters of f, for the notes on input ops."""
    code = getattr(f, "__code__", None)
    if type(f) is types.FunctionType and (not f.__dict__ or not hasattr(f, "__signature__")
                                          and not hasattr(f, "__wrapped__")):
        hit = _NAMES.get(id(code))
        if hit is not None and hit[0] is code and hit[1] == n:
            return list(hit[2])
        # a plain function: read its code object (inspect.signature costs more than a small gradient)
        names = list(code.co_varnames[:code.co_argcount])
        if code.co_flags & inspect.CO_VARARGS and len(names) < n:
            star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
            names.extend(f"{star}[{i}]" for i in range(n - len(names)))
        names.extend(f"args[{i}]" for i in range(len(names), n))
        if len(_NAMES) >= 256:  # (the code objects it holds stay few)
            _NAMES.clear()
        _NAMES[id(code)] = (code, n, tuple(names[:n]))
        return names[:n]
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.extend(f"{p.name}[{i}]" for i in range(n - len(names)))
            break
    names.extend(f"args[{i}]" for i in range(len(names), n))
    return names[:n]


def make_leaf(tape, ctx, value, path):
    """``(var, tracer)`` of a differentiable leaf of an argument: its Input and what `f` gets."""
    if type(value) is not float and is_complex_value(value):
        ctx.complex_input(value, path)
    var = tape.push_input(value, path)
    return var, new_tracer(tape, var, value)


def traced_copy(x, path, tape, ctx, specs, copies):
    """``(spec, copy)`` of the argument `x` named `path`: its `Spec` (with an Input per
    differentiable leaf, on `tape`) and the copy `f` runs on, Tracers in the leaves' places.
    `specs` and `copies`, shared by the arguments of one trace, keep a value reachable from
    two of them one spec and one copy (see `tapegrad.pytree.flatten`)."""
    t = type(x)
    if t is float or t is _ndarray and x.dtype.kind == "f" or (t is list or t is tuple) and x and _plain(x, 2):
        # the common arguments (numbers, arrays, a list of (W, b) layers) without the walk of `flatten`
        return _plain_copy(x, path, tape, specs, copies)
    if t is types.FunctionType and x.__closure__ is None:
        return Spec("static", x), x  # a function that captures nothing: `object_fields` is None
    try:
        spec, stand_ins = flatten(x, argument=True, leaf=functools.partial(make_leaf, tape, ctx),
                                  path=path, memo=specs)
        return spec, unflatten(spec, stand_ins, copies)
    except RecursionError:
        raise TypeError(
            f"the argument {path} given at {user_location()} is nested too deeply to walk "
            f"(more levels than Python's recursion limit, {sys.getrecursionlimit()}, allows); "
            f"pass its numbers as an array, or nest them less"
        ) from None


def _plain(items, depth) -> bool:
    """True when each of `items` is a float, a real float ndarray, or a non-empty list or tuple
    of them, at most `depth` levels deeper (so never a cycle): what `_plain_copy` takes."""
    for x in items:
        t = type(x)
        if t is _ndarray:
            if x.dtype.kind != "f":
                return False
        elif t is not float and not ((t is list or t is tuple) and x and depth and _plain(x, depth - 1)):
            return False
    return True


def _plain_copy(x, path, tape, specs, copies):
    """`traced_copy` of an argument `_plain` takes: the Specs, Inputs (in the same order, with
    the same paths) and copies that `flatten` and `unflatten` would make."""
    t = type(x)
    if t is not float:  # (a number is never shared: flatten keeps no memo of one)
        hit = specs.get(id(x))
        if hit is not None and hit.primal is x:  # reached before: one spec, one copy
            return hit, copies[id(hit)]
    if t is float or t is _ndarray:
        spec, copy = _plain_leaf(x, path, tape)
        if t is float:
            return spec, copy
    else:
        children, items = [], []
        for i, v in enumerate(x):
            tv = type(v)
            # a number, or an array met for the first time: a leaf, without a call per level
            if tv is float or tv is _ndarray and id(v) not in specs:
                child, item = _plain_leaf(v, f"{path}[{i}]", tape)
                if tv is _ndarray:
                    specs[id(v)] = child
                    copies[id(child)] = item
            else:
                child, item = _plain_copy(v, f"{path}[{i}]", tape, specs, copies)
            children.append(child)
            items.append(item)
        spec = Spec("seq", x, t, range(len(x)), children)
        copy = items if t is list else tuple(items)
    specs[id(x)] = spec
    copies[id(spec)] = copy
    return spec, copy


def _plain_leaf(x, path, tape):
    """``(spec, tracer)`` of a float or a float array `x`: its Input pushed onto `tape`, its
    `Spec` and its Tracer (every array argument of every gradient comes here)."""
    var = tape.push_input(x, path)
    return leaf_spec(x, var), new_tracer(tape, var, x)


class _Arguments:
    """`wrt` for every positional argument and none of the values `f` captures (`gradient`)."""

    def __repr__(self):
        return "tapegrad.tracing.ARGUMENTS"


ARGUMENTS = _Arguments()


def trace(f, *args, ctx=None, wrt=None, _names=None, _keywords=(), **kwargs):
    """Run ``f(*args, **kwargs)`` on Tracers and return ``(value, tape)``.

    Input ``%1`` is `f` itself. Then every differentiable leaf of `f` (the values a closure
    captures, the fields of a callable object) and of each positional argument (numbers,
    float arrays, inside tuples, lists, dicts, NamedTuples, dataclasses and objects) gets an
    Input op noted with its path (``x``, ``params["b"]``, ``model.weights``) and reaches `f`
    as a Tracer, inside a copy of its container: the user's objects are never changed.
    Keyword arguments reach `f` unchanged unless `wrt` names them (or `_keywords` does: a
    compiled gradient's trace takes the call's keyword arguments as arguments, so that its
    program reads them afresh on every call, as it reads the positional ones); `wrt` (a position, a name,
    or a tuple of them) limits tracing to those arguments (and to the values `f` captures only
    if it names ``"f"``; `ARGUMENTS` is every positional argument). `ctx` (default `BaseContext`)
    decides what is a primitive; user functions called inside `f` are traced through.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> def f(a, b):
    ...     return a / (a + b * b)
    >>> value, tape = tapegrad.trace(f, 2.0, 3.0)
    >>> value
    0.18181818181818182
    >>> print(tape)
    Tape
      inp %1::function f
      inp %2::float64   # a
      inp %3::float64   # b
      %4 = multiply(%3, %3)::float64
      %5 = add(%2, %4)::float64
      %6 = divide(%2, %5)::float64
    """
    if not callable(f):
        raise TypeError(
            f"the function to trace comes first, but a {type(f).__name__} was given at "
            f"{user_location()}: call it as trace(f, *args) / grad(f, *args)"
        )
    ctx = BaseContext() if ctx is None else ctx
    tape = Tape(ctx)
    tape.level = len(active_tapes()) + 1
    tape.meta["epoch"] = new_epoch()  # a dual number made later handles the calls it is in
    tape.push_input(f)
    tf, targs, tkwargs = _traced_arguments(tape, ctx, f, args, kwargs, wrt, _names, _keywords)
    out = _run(tape, ctx, f, tf, targs, tkwargs)
    return _result(tape, f, out)


def _traced_arguments(tape, ctx, f, args, kwargs, wrt, names, keywords=()):
    """``(f, args, kwargs)`` as `f` runs on them: copies with Tracers at the leaves `wrt` chooses
    (all of `f`'s and the positional arguments' without it), the rest as given; their specs go
    to ``tape.meta["inputs"]``."""
    specs, copies = {}, {}  # a value reachable from two arguments is one spec and one copy
    names = names or param_names(f, len(args))
    chosen = None if wrt is None or wrt is ARGUMENTS else _selector(wrt, len(args), names, kwargs)
    # with wrt, the values f captures are differentiated only if wrt names "f"
    fspec, tf = (traced_copy(f, "f", tape, ctx, specs, copies) if wrt is None or chosen and "f" in chosen
                 else (Spec("static", f), f))
    argspecs, targs = [], []
    for i, (name, a) in enumerate(zip(names, args)):
        if chosen is None or i in chosen or name in chosen:
            spec, copy = traced_copy(a, name, tape, ctx, specs, copies)
            if chosen is not None and spec.kind == "static":
                raise TypeError(
                    f"wrt names argument {i} ({name}) at {user_location()}, a {type(a).__name__}, which "
                    f"holds nothing differentiable (numbers and float arrays, alone or inside tuples, "
                    f"lists, dicts, dataclasses and objects, are); pass a number or a float array"
                )
        else:
            spec, copy = Spec("static", a), a
        argspecs.append(spec)
        targs.append(copy)
    kwspecs, tkwargs = {}, dict(kwargs)
    for name, v in kwargs.items() if chosen is not None or keywords else ():
        if name in keywords or chosen is not None and name in chosen:
            kwspecs[name], tkwargs[name] = traced_copy(v, name, tape, ctx, specs, copies)
    tape.meta["inputs"] = (fspec, argspecs, kwspecs)
    return tf, targs, tkwargs


def _run(tape, ctx, f, tf, targs, tkwargs):
    """Run `tf` with `tape` innermost and numpy's stand-ins in place (`tapegrad.literals`); the
    result, a structured one packed into one traced value. The tape is closed after."""
    stack = active_tapes()
    stack.append(tape)
    own = _OWN.get(type(ctx))
    if own is None:
        own = _OWN[type(ctx)] = tapegrads_own(type(ctx))
    constructors_on(own)
    gc_was_on = gc.isenabled()  # `paused_gc`, without making its object: every trace pays it
    gc.disable()
    try:
        try:
            out = tf(*targs, **tkwargs)
        except Exception as exc:
            exc.tapegrad_tape = tape  # the partial tape, for debugging: what was recorded up to the failure
            better = _explained(exc, tape, f)
            if better is None:
                raise
            raise better from exc
        return out if type(out) is Tracer else _packed(out, f, tape)
    finally:
        if gc_was_on:
            gc.enable()
        stack.pop()
        constructors_off(own)
        tape.closed = True


def _explained(exc, tape, f):
    """The error to raise in place of `exc`, raised inside `f`, or None to raise `exc` as it is:
    numpy's, for a traced value written into a plain array, says what to do; after a refusal
    that was caught (by f, or by a library it called: scipy's compiled minimizers swallow one),
    an error of another kind followed from it, so the refusal is the cause to fix."""
    error = plain_store_error(exc)
    if error is not None:
        return error
    refused = tape.meta.get("refused")
    if refused is not None and not isinstance(exc, TapegradError):
        return type(refused)(
            f"{refused} (this was caught and {getattr(f, '__name__', 'f')} went on, then "
            f"raised {type(exc).__name__}: {exc})"
        )
    return None


def _packed(out, f, tape):
    """A result that is not one traced value: buffers unboxed, and a structure holding traced
    values (a tuple, a dict) packed by one recorded ``build``, so that the tape has one result."""
    if isinstance(out, Buffer):
        out = unbuffer(out)
    try:
        ospec, leaves = flatten(out)
    except RecursionError:
        raise TypeError(
            f"{getattr(f, '__name__', 'f')} returned a value nested too deeply to walk (more "
            f"levels than Python's recursion limit, {sys.getrecursionlimit()}, allows); "
            f"return its numbers as an array, or nest them less"
        ) from None
    if any(isinstance(v, Buffer) for v in leaves):
        leaves = unbuffer_all(leaves)
    if ospec.kind != "leaf" and any(type(v) is Tracer for v in leaves):
        out = record_call(build, (ospec, *leaves), None)
        tape.meta["structured_result"] = True
    return out


def _result(tape, f, out):
    """``(value, tape)`` with the tape's result set: the traced result's value, or a constant
    result pushed as one. A refusal that `f` caught and went past is raised again here."""
    refused = tape.meta.get("refused")
    if refused is not None:
        raise type(refused)(
            f"{refused} (this error, raised inside {getattr(f, '__name__', 'f')}, was caught by it "
            f"or by a library it called and the computation went on, so its result would silently "
            f"lack a gradient: let it propagate and fix its cause)"
        ) from refused
    if type(out) is Tracer and out._tape is tape:
        tape.result = out._var
        return plain_scalar(out._val), tape
    if type(out) is Tracer:
        raise escaped_error(out) if out._tape.closed else EscapedTracerError(
            f"{getattr(f, '__name__', f)!r} returned a value traced by an enclosing trace; "
            f"return values of this trace"
        )
    tape.result = tape.push(Constant(out, note="result does not depend on the inputs"))
    return out, tape


#: context class -> whether tapegrad's own code decides and records its primitives
_OWN = {}


def tapegrads_own(cls) -> bool:
    """True when a context class decides and records primitives by tapegrad's own methods (so
    compares no numpy function by identity, as a custom ``fn is np.sum`` does): then a trace
    under it takes reductions of lists of traced values (`tapegrad.literals`)."""
    return all(getattr(cls, m).__module__.startswith("tapegrad.")
               for m in ("is_primitive", "record_primitive", "record"))


def _selector(wrt, n_args, names, kwargs):
    """The positions and names `wrt` chooses (a tuple or a set; an argument is chosen when its
    position or its name is in it, `f`'s captured values when "f" is); a name or position that
    is no argument of the call raises, listing the ones there are."""
    one = wrt[0] if type(wrt) is tuple and len(wrt) == 1 else wrt
    if type(one) is int and 0 <= one < n_args:  # one position, the common wrt: nothing to check
        return (one,)
    chosen = set(wrt) if isinstance(wrt, (tuple, list, set)) else {wrt}
    for w in chosen:
        if type(w) is int and 0 <= w < n_args:  # a position of the call: the common case
            continue
        if not isinstance(w, (int, str)) or isinstance(w, bool):
            raise TypeError(f"wrt takes argument positions (int) and names (str), not {w!r}")
        if w not in ("f", *names, *kwargs) and not (type(w) is int and 0 <= w < n_args):
            raise TypeError(
                f"wrt={w!r} at {user_location()} names no argument of this call, which has "
                f"positions 0..{n_args - 1} ({', '.join(names)})"
                + (f" and keywords {', '.join(kwargs)}" if kwargs else "")
                + "; name one of them, or \"f\" for the values the function captures"
            )
    return chosen



"""What makes the adjoint and sensitivity solves of ``tapegrad.rules.ivp`` cheap per step.

scipy calls the right-hand side of a backward (adjoint) or tangent solve a few hundred times
on plain arrays. Taking a vector-Jacobian or Jacobian-vector product eagerly at each call
traces the user's function every time (about 1 ms); here it is traced once, optimized and
compiled to Python (`Program`), so each call runs the straight-line numpy program alone (a
guard of the program failing, where f takes another branch, is answered eagerly). The
programs are kept (`PROGRAMS`) by the tape of what they differentiate (`tape_key`): the next
gradient of the same problem, an optimizer's next step, traces f's forward alone and finds
its program. The forward solution is read from scipy's dense output without its per-call
checks (`Dense`), and the backward solve is stepped with scipy's solver classes, one solver
per stretch between observation times, each starting with the step its predecessor ended
with (`backward`), where `solve_ivp` would choose a first step afresh at each observation;
LSODA by scipy's odeint, which steps it in Fortran (`_lsoda_backward`).
"""
from __future__ import annotations

import bisect
import operator
import threading
import types
import warnings
from collections import OrderedDict

import numpy as np
import scipy.integrate as _si
from scipy.integrate._ivp.lsoda import LsodaDenseOutput
from scipy.integrate._ivp.rk import RkDenseOutput

from ..program.codegen import compile_source, source_and_namespace
from ..program.guards import GuardError
from ..program.passes import optimize
from ..arraylike import is_traceable
from ..context import BaseContext
from ..registry import FRULES, NONDIFF, RULES
from ..tape import Call, Input, Variable
from ..tracing import ARGUMENTS, trace
from .indexing import scatter_add

__all__ = ["Program", "Dense", "backward", "solver_class", "odeint_options"]


def _is_basic(index) -> bool:
    """An index of ints (a tuple of them too): it names each position once."""
    items = index if type(index) is tuple else (index,)
    return all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in items)


def _plain_scatter(dy, shape, index, dtype):
    """`scatter_add` for plain values only, as a compiled program of plain inputs calls it:
    without the walk for traced values that the general one makes at every call."""
    out = np.zeros(shape, dtype)
    if _is_basic(index):
        out[index] = dy
    else:
        np.add.at(out, index, dy)
    return out


def _scatter_sum(shape, dtype, *pairs):
    """Zeros of `shape` with each value of ``(index, value, index, value, ...)`` added at its
    (basic) index: a sum of `scatter_add` calls in one array."""
    out = np.zeros(shape, dtype)
    for i in range(0, len(pairs), 2):
        out[pairs[i]] += pairs[i + 1]
    return out


def _merged_scatters(tape):
    """The traced tape made a program's: each sum of scatters (``scatter_add(a, (n,), 0) +
    scatter_add(b, (n,), 1) + ...``, what the pullbacks of ``y[0]``, ``y[1]``, ... leave: an
    array and an add per read) written as one `_scatter_sum` when the scatters and partial sums
    are used nowhere else, a flat result of them as one array (`_one_flat_result`,
    `_packed_scalars`), then optimized once."""
    uses = {}
    for op in tape:
        for v in op.used_vars():
            uses[v] = uses.get(v, 0) + 1
    if tape.result is not None:
        uses[tape.result] = uses.get(tape.result, 0) + 1
    groups, merged = {}, []
    for op in tape:
        if type(op) is not Call or op.kwargs:
            continue
        args = op.args
        if op.fn is scatter_add and len(args) == 4 and type(args[1]) is tuple and _is_basic(args[2]):
            groups[op.var] = (args[1], args[3], [args[2], args[0]])
        elif (op.fn is np.add and len(args) == 2 and all(type(a) is Variable and a in groups and uses[a] == 1
                                                          for a in args)
              and groups[args[0]][:2] == groups[args[1]][:2]):
            shape, dtype, first = groups[args[0]]
            groups[op.var] = (shape, dtype, first + groups[args[1]][2])
            merged.append(op.var)
    for var in merged:
        shape, dtype, pairs = groups[var]
        tape.replace(var, Call(_scatter_sum, (shape, dtype, *pairs)))
    _one_flat_result(tape, groups, uses)
    _packed_scalars(tape)
    _same_shape_reshapes_dropped(tape)
    tape = optimize(tape, assume_finite=True)
    # a read whose value nothing uses is kept by `optimize` (an index may be out of range), but
    # this program only ever sees arrays of the shapes it was traced at: the read cannot fail
    uses = {}
    for op in tape:
        for v in op.used_vars():
            uses[v] = uses.get(v, 0) + 1
    for op in reversed(list(tape)):
        if type(op) is Call and op.fn is operator.getitem and op.var is not tape.result and not uses.get(op.var):
            tape.delete(op.var)
    return tape


def _one_flat_result(tape, groups, uses):
    """The result ``concatenate([ravel(s₁), ravel(s₂), ...])`` of 1-d sums of scatters (an
    adjoint's (∂f/∂y)ᵀλ and (∂f/∂θ)ᵀλ flattened and joined) written as one `_scatter_sum` of the
    whole length, each sum's indices offset by the lengths before it: one array, not three."""
    result = tape.result
    op = result.op if type(result) is Variable else None
    if type(op) is not Call or op.fn is not np.concatenate or op.kwargs or len(op.args) != 1 \
            or type(op.args[0]) is not list:
        return
    pieces = []
    for part in op.args[0]:
        inner = part.op if type(part) is Variable else None
        if type(inner) is not Call or inner.fn is not np.ravel or len(inner.args) != 1 or inner.kwargs \
                or uses.get(part) != 1:
            return
        summed = inner.args[0]
        if summed not in groups or uses.get(summed) != 1 or len(groups[summed][0]) != 1:
            return
        pieces.append(groups[summed])
    if not pieces or len({dtype for _, dtype, _ in pieces}) != 1:
        return
    pairs, offset = [], 0
    for (length,), _, items in pieces:
        for i in range(0, len(items), 2):
            index = items[i][0] if type(items[i]) is tuple else items[i]
            pairs += [offset + int(index) % length, items[i + 1]]
        offset += length
    tape.replace(result, Call(_scatter_sum, ((offset,), pieces[0][1], *pairs)))


def _packed_scalars(tape):
    """Each `_scatter_sum` of float64 numbers into a 1-d array written as ``np.array([a + b,
    c, ...])``: each position's values summed in the order the scatter adds them (the same
    sums, bit for bit, but for the sign of a zero), and one array made from them, where the
    scatter makes zeros and adds into them one at a time (a third of a small vector-Jacobian
    product's time)."""
    for op in list(tape):
        if type(op) is not Call or op.fn is not _scatter_sum or len(op.args[0]) != 1 or op.args[1] != np.float64:
            continue
        (length,), _, *pairs = op.args
        values = pairs[1::2]
        if not all(type(v) is Variable and type(v.op.val) is np.float64 for v in values):
            continue
        slots = [[] for _ in range(length)]
        for index, value in zip(pairs[0::2], values):
            slots[int(index[0] if type(index) is tuple else index) % length].append(value)
        items = []
        for terms in slots:
            total = terms[0] if terms else 0.0
            for term in terms[1:]:
                total = tape.insert(op.id, Call(np.add, (total, term)))[0]
            items.append(total)
        tape.replace(op.var, Call(np.array, (items,)))


def _same_shape_reshapes_dropped(tape):
    """``np.reshape(x, shape)`` of an x of that very shape (what a pullback writes to be sure)
    replaced by x: the program only ever sees arrays of the shapes it was traced at."""
    alias = {}
    for op in tape:
        if (type(op) is Call and op.fn is np.reshape and len(op.args) == 2 and type(op.args[0]) is Variable
                and op.kwargs in (None, {}, {"order": "C"}) and type(op.args[0].op.val) is np.ndarray
                and type(op.val) is np.ndarray and op.args[0].op.val.shape == op.val.shape):
            alias[op.var] = alias.get(op.args[0], op.args[0])
    if not alias:
        return
    for op in tape:
        if type(op) is Call:
            op.args = _renamed(op.args, alias)
            if op.kwargs:
                op.kwargs = {k: alias.get(v, v) if type(v) is Variable else v for k, v in op.kwargs.items()}
    if type(tape.result) is Variable and tape.result in alias:
        tape.result = alias[tape.result]
    for var in alias:
        tape.delete(var)


def _renamed(args, alias):
    return type(args)(alias.get(a, a) if type(a) is Variable else _renamed(a, alias) if type(a) in (list, tuple) else a
                      for a in args)


def _distinct(args):
    """The arguments as distinct objects: a trace takes one object given twice (a weight two layers
    share) as one input, where the program is called with one value per argument."""
    seen, out = set(), []
    for a in args:
        if id(a) in seen:
            a = a.view() if isinstance(a, np.ndarray) else np.float64(a) if isinstance(a, float) else a
        seen.add(id(a))
        out.append(a)
    return out


class Program:
    """``fn(*args)`` on plain values, traced on its first call and compiled; a failed guard (fn
    took another branch for these values) is answered by calling fn itself. The program is
    simplified taking its values as finite (``0 * x`` is 0: a solver that meets an infinite
    state fails anyway), and only ever called with arrays of the shapes it was traced at.

    With ``key=(tag, forward)``, the program is shared by every Program whose `forward` (a
    function of the same arguments, what fn differentiates) records the same tape (`tape_key`):
    the next gradient of one problem (an optimizer's next step) traces only its forward, not
    the products of its derivatives, and compiles nothing. A forward that reads another global,
    takes another branch, calls a function whose rule was replaced or holds another constant
    records another tape, and gets a program of its own."""

    __slots__ = ("fn", "program", "key")

    def __init__(self, fn, key=None):
        self.fn, self.program, self.key = fn, None, key

    def __call__(self, *args):
        if self.program is None:
            self.program = _program(self.fn, self.key, _distinct(args))
        try:
            return self.program(None, *args)
        except GuardError:
            return self.fn(*args)


#: the compiled programs by ``(tag, tape_key(forward's tape))``, the least recently used dropped first
PROGRAMS: OrderedDict = OrderedDict()
PROGRAMS_KEPT = 64
_KEPT = threading.Lock()  # (gradients in several threads share the store)


def _program(fn, key, args):
    """fn's compiled program: `PROGRAMS`' when its key's forward records a tape seen before."""
    found = None
    if key is not None:
        tag, forward = key
        try:
            found = (tag, tape_key(trace(forward, *args, ctx=_Primitives(), wrt=ARGUMENTS)[1]))
        except Unkeyable:
            found = None
        with _KEPT:
            program = PROGRAMS.get(found) if found is not None else None
            if program is not None:
                PROGRAMS.move_to_end(found)
                return program
    _, tape = trace(fn, *args, wrt=ARGUMENTS)
    src, namespace = source_and_namespace(_merged_scatters(tape))
    namespace = {k: _plain_scatter if v is scatter_add else v for k, v in namespace.items()}
    program = compile_source(src, namespace)
    if found is not None:
        with _KEPT:
            PROGRAMS[found] = program
            while len(PROGRAMS) > PROGRAMS_KEPT:
                PROGRAMS.popitem(last=False)
    return program


class _Primitives(BaseContext):
    """A plain trace that stops where derivatives do, at each function with a rule of either
    mode (a `primitive` of the user's with one is recorded as one call, its rule in the key)."""

    def is_primitive(self, fn, *args) -> bool:
        return fn in RULES or fn in FRULES or fn in NONDIFF or not is_traceable(fn)


class Unkeyable(Exception):
    """A tape holds a value `tape_key` does not compare (an object of a library's, a large array)."""


#: the largest constant array a key holds (bytes): a larger one makes the tape `Unkeyable`
KEY_BYTES = 1 << 16
#: the callables whose == compares what they call (a builtin or a method: function and receiver)
_SAME_BY_IDENTITY = (types.BuiltinFunctionType, types.MethodType)
_NUMBERS = (bool, int, str, bytes, type(None), type(Ellipsis))


def _value_key(v):
    t = type(v)
    if t is Variable:
        return ("%", v.id)
    if t is float:
        return (t, v.hex())  # tells -0.0 from 0.0, and is equal to itself for a NaN
    if t in _NUMBERS:
        return (t, v)
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    if isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return (t, v.tobytes())
    if t is np.ndarray and v.dtype.kind in "biufc" and v.nbytes <= KEY_BYTES:
        return (t, v.shape, v.dtype.str, v.tobytes())
    if t is tuple or t is list:
        return (t, *map(_value_key, v))
    if t is slice:
        return (t, _value_key(v.start), _value_key(v.stop), _value_key(v.step))
    if t is np.dtype:
        return (t, v.str)
    if t in _SAME_BY_IDENTITY:
        return (t, v)
    if callable(v) and t.__eq__ is object.__eq__:  # functions, ufuncs, classes
        return _Identity(v)
    raise Unkeyable(t.__name__)


class _Identity:
    """A part of a key equal only to one of the same object, which it keeps alive (so that its id
    is not reused while the key is kept)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is _Identity and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def tape_key(tape):
    """What determines the program traced from a tape's forward: each op's kind, function (and
    the rules registered for it), arguments (constants by value), and the inputs' types and
    shapes. Two tapes with equal keys differentiate to the same program."""
    out = []
    for op in tape:
        t = type(op)
        if t is Call:
            fn = op.fn
            kwargs = tuple((k, _value_key(v)) for k, v in op.kwargs.items()) if op.kwargs else ()
            out.append((_value_key(fn), _Identity(RULES.get(fn)), _Identity(FRULES.get(fn)), _value_key(op.args),
                        kwargs))
        elif t is Input:
            v = op.val
            numeric = isinstance(v, (np.ndarray, np.generic, float))
            out.append(("in", np.shape(v), getattr(v, "dtype", type(v))) if numeric else ("in", type(v)))
        else:
            out.append(("const", _value_key(op.val)))
    out.append(_value_key(tape.result) if tape.result is not None else None)
    return tuple(out)


class Dense:
    """y(t) from scipy's `OdeSolution`, as its own ``_call_single`` finds the piece, without the
    array checks of each call; a Runge–Kutta piece evaluated as ``y_old + h Q (x, x², ...)``."""

    def __init__(self, sol):
        self.sol = sol
        self.ts = list(sol.ts_sorted)
        self.find = bisect.bisect_right if getattr(sol, "side", "left") == "right" else bisect.bisect_left
        self.last = len(sol.interpolants) - 1
        self.pieces = [self._piece(p) for p in sol.interpolants]
        self.at = (np.inf, -np.inf, None)  # (the ends of the piece read last, its reader)

    @staticmethod
    def _piece(p):
        if type(p) is RkDenseOutput:
            exps = np.arange(1, p.Q.shape[1] + 1)
            t_old, h, hQ, y_old = p.t_old, p.h, p.h * p.Q, p.y_old
            return lambda t: y_old + hQ @ (((t - t_old) / h) ** exps)
        if type(p) is LsodaDenseOutput:  # its Nordsieck history: Σⱼ yhⱼ ((t - tₙ)/h)ʲ
            yh, t_new, h, exps = p.yh, p.t, p.h, p.p
            return lambda t: yh @ (((t - t_new) / h) ** exps)
        return lambda t: p._call_impl(np.float64(t))

    def __call__(self, t):
        lo, hi, piece = self.at
        if lo < t < hi:  # a solve reads inside the piece it read last, mostly (at its ends, as scipy picks)
            return piece(t)
        segment = min(max(self.find(self.ts, t) - 1, 0), self.last)
        lo, hi = self.ts[segment], self.ts[segment + 1]
        if not self.sol.ascending:
            segment = self.last - segment
        self.at = (lo, hi, self.pieces[segment])
        return self.pieces[segment](t)


def solver_class(method):
    """scipy's solver class of `method` (a name, or a class as solve_ivp takes)."""
    return getattr(_si, method) if isinstance(method, str) else method


def backward(fun, times, t0, state, jumps, method, options, fail):
    """The state integrated from ``times[-1]`` back to `t0`, ``jumps[:, k]`` added to its first
    entries on reaching ``times[k]``: one scipy solver per stretch between observation times,
    each starting with the step the previous one ended with. `fail(message)` makes the error
    of a failed step. LSODA is stepped by scipy's odeint (`_lsoda_backward`)."""
    if method == "LSODA":
        return _lsoda_backward(fun, times, t0, state, jumps, options, fail)
    cls, h, m = solver_class(method), None, jumps.shape[0]
    state = np.array(state, dtype=float)
    for k in range(len(times) - 1, -1, -1):
        state[:m] += jumps[:, k]
        upper, lower = times[k], times[k - 1] if k > 0 else t0
        if lower == upper:
            continue
        opts = dict(options)
        if h is not None:
            opts["first_step"] = min(h, abs(upper - lower))
        solver = cls(fun, upper, state, lower, **opts)
        steps = []
        while solver.status == "running":
            message = solver.step()
            steps.append(abs(solver.t - solver.t_old) if solver.t_old is not None else 0.0)
        if solver.status == "failed":
            raise fail(message)
        # the last step of a stretch is cut short at its end: the one before it says the scale
        h = max(steps[-2:], default=0.0) or None
        state = np.array(solver.y, dtype=float)
    return state


#: solve_ivp's options under odeint's names
_ODEINT_NAMES = {"rtol": "rtol", "atol": "atol", "max_step": "hmax", "min_step": "hmin", "first_step": "h0",
                 "jac": "Dfun"}


def odeint_options(options) -> dict:
    """solve_ivp's `options` as scipy's odeint takes them (an infinite max_step left out)."""
    return {_ODEINT_NAMES[k]: v for k, v in options.items()
            if k in _ODEINT_NAMES and not (k == "max_step" and np.isinf(v))}


def _lsoda_backward(fun, times, t0, state, jumps, options, fail):
    """`backward` by LSODA, as scipy's odeint steps it: in Fortran from one observation time to
    the next, where solve_ivp's LSODA returns to Python at every step (on Robertson's problem
    the adjoint's ~700 steps cost a fifth of the gradient that way). Each stretch starts with
    the step the previous one ended with, and none steps past its end (``tcrit``: past t₀ the
    forward solution would be extrapolated); no cap on the steps (solve_ivp has none)."""
    m = jumps.shape[0]
    kwargs = odeint_options(options)
    state, h = np.array(state, dtype=float), None
    for k in range(len(times) - 1, -1, -1):
        state[:m] += jumps[:, k]
        upper, lower = times[k], times[k - 1] if k > 0 else t0
        if lower == upper:
            continue
        first = {} if h is None else {"h0": np.sign(lower - upper) * min(h, abs(upper - lower))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _si.ODEintWarning)
            ys, info = _si.odeint(fun, state, [upper, lower], tfirst=True, full_output=True, mxstep=10 ** 8,
                                  tcrit=[lower], **kwargs, **first)
        if info["message"] != "Integration successful.":
            raise fail(info["message"])
        # the last step of a stretch is cut short at its end: the one before it says the scale
        h = abs(float(info["hu"][-1])) or None
        state = np.array(ys[-1], dtype=float)
    return state

"""Tape passes: simplification, dead-code elimination and common subexpressions.

Each pass takes a tape and returns a new one that computes the same values (every kept op
keeps its recorded value); the input tape is not changed. Passes apply to any tape; they do
the most on traced gradient programs (``trace(lambda x: grad(f, x), x)``), which are made of
plain numpy calls.
"""
from __future__ import annotations

import operator

import numpy as np

from .guards import GUARDS
from ..errors import ufunc_method
from ..tape import Call, Constant, Input, Tape, Variable

__all__ = ["simplify", "prune", "cse", "optimize"]

# functions whose value depends only on their arguments: safe to fold and to share
_PURE_MODULES = ("numpy", "scipy.special")


def _is_pure(fn, known=None):
    """True for a function whose value depends only on its arguments; `known`, a dict passed
    by a pass, remembers the answer per function (a tape calls a few functions many times)."""
    if known is not None:
        pure = known.get(id(fn))  # (the tape holds every fn, so no id is reused meanwhile)
        if pure is None:
            pure = known[id(fn)] = _is_pure(fn)
        return pure
    if type(fn) is Variable or fn in GUARDS:
        return False
    if isinstance(fn, np.ufunc):
        return True
    method = ufunc_method(fn)
    if method is not None:  # np.add.reduce, np.subtract.outer; not np.add.at, which writes
        return method[1] != "at"
    mod = getattr(fn, "__module__", "") or ""
    return fn is operator.getitem or (mod.split(".")[0] == "numpy" and "random" not in mod)


def _resolver(replace):
    """``resolve(v)``: what `v` stands for after the replacements (followed to their end)."""
    def resolve(v):
        seen = 0
        while type(v) is Variable and v in replace and seen < 10_000:
            v = replace[v]
            seen += 1
        return v

    return resolve


def _copy_tape(tape, keep, replace=None, folded=None):
    """A new tape of the ops in `keep` (a set of old Variables), arguments renamed through `replace`.

    `replace` maps an old Variable to the old Variable (or plain value) that stands for it.
    A kept op in `folded` (old Variable -> value) becomes a constant of that value.
    """
    replace = replace or {}
    folded = folded or {}
    new = Tape(tape.ctx)
    new.meta = dict(tape.meta)
    new.level = tape.level
    new.closed = tape.closed
    mapping = {}
    resolve = _resolver(replace)

    def arg(a):
        if type(a) is Variable:
            r = resolve(a) if a in replace else a
            return mapping[r] if type(r) is Variable else r
        if type(a) in (list, tuple):
            return type(a)(arg(x) for x in a)
        return a

    push_call = new.push_call
    for op in tape.ops:
        var = op.var
        if var not in keep:
            continue
        t = type(op)
        if t is Call and var not in folded:
            kwargs = {k: arg(v) for k, v in op.kwargs.items()} if op.kwargs else op.kwargs
            fn = arg(op.fn) if type(op.fn) is Variable else op.fn
            mapping[var] = push_call(fn, tuple([arg(a) for a in op.args]), kwargs, op.val, op.note)
        elif t is Input:
            mapping[var] = new.push(Input(op.val, op.note))
        elif t is Call:  # folded: its recorded value, as a constant
            mapping[var] = new.push(Constant(folded[var], op.note))
        else:
            mapping[var] = new.push(Constant(op.val, op.note))
    result = resolve(tape.result) if tape.result is not None else None
    if type(result) is Variable:
        new.result = mapping[result]
    elif tape.result is not None:
        new.result = new.push(Constant(result, "result"))
    renamed = {}
    for op in tape.ops:
        r = resolve(op.var)
        renamed[op.var] = mapping.get(r) if type(r) is Variable else r
    new.meta["renamed"] = renamed
    return new


#: modules whose functions raise on some values (``np.linalg.cholesky`` of a matrix that is not
#: positive definite): see `_may_raise`
_RAISING_MODULES = ("numpy.linalg", "scipy.linalg", "tapegrad.scipy")
#: modules whose functions raise on types and shapes only, which a program's signature fixes
_QUIET_MODULES = ("numpy", "scipy", "tapegrad", "operator", "builtins", "math")


def _may_raise(fn, known) -> bool:
    """True for a function that may raise on values a program meets where the traced call did
    not: numpy's and scipy's linear algebra, tapegrad's scipy replacements, and the user's own
    functions. Its call is kept even when nothing uses its value: the path recorded after it
    holds only if it does not raise (``try: np.linalg.cholesky(a) ... except LinAlgError:``),
    and a call of the program that raises is traced again for its own path. (`known` remembers
    the answer per function, as in `_is_pure`.)"""
    if type(fn) is Variable or fn in GUARDS:
        return False
    answer = known.get(id(fn))  # (the tape holds every fn, so no id is reused meanwhile)
    if answer is None:
        if isinstance(fn, np.ufunc) or ufunc_method(fn) is not None:
            answer = False
        else:
            module = getattr(fn, "__module__", None) or ""
            answer = (module.startswith(_RAISING_MODULES)
                      or module.split(".")[0] not in _QUIET_MODULES)
        known[id(fn)] = answer
    return answer


def _needed(tape, outputs, replace, folded=()):
    """The Variables to keep: the inputs, the guards, the calls that may raise (`_may_raise`),
    and what the result (or `outputs`) and those depend on, reading each op's arguments
    through `replace` (an op in `folded` depends on nothing)."""
    resolve = _resolver(replace)
    needed = set()
    stack = [resolve(v) for v in (outputs if outputs is not None else [tape.result]) if v is not None]
    known = {}
    stack += [op.var for op in tape.ops if type(op) is Call and (op.fn in GUARDS or _may_raise(op.fn, known))]
    while stack:
        v = stack.pop()
        if type(v) is not Variable or v in needed:
            continue
        needed.add(v)
        if v not in folded:
            uses = _uses(v._op)
            stack.extend(map(resolve, uses) if replace else uses)
    return {op.var for op in tape.ops if type(op) is Input or op.var in needed}


def prune(tape, outputs=None):
    """Dead-code elimination: keep the inputs, the guards and what the result (or `outputs`) depends on.

    Guards are kept, and with them the values they check: dropping one would let a replay
    take a path the tape never recorded.
    """
    return _copy_tape(tape, _needed(tape, outputs, {}))


def _uses(op):
    """The Variables a Call reads (its function, arguments, also inside lists and tuples, and keywords)."""
    if type(op) is not Call:
        return []
    out = [op.fn] if type(op.fn) is Variable else []
    for a in op.args:
        ta = type(a)
        if ta is Variable:
            out.append(a)
        elif ta is list or ta is tuple:
            _walk(a, out)
    if op.kwargs:
        _walk(op.kwargs.values(), out)
    return out


def _walk(items, out):
    for a in items:
        if type(a) is Variable:
            out.append(a)
        elif type(a) in (list, tuple):
            _walk(a, out)


def _same_type(a, b):
    # a Python float may stand for a numpy float64 scalar: the code generator picks operators
    # from the recorded types of the values that remain
    return np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)


def _scalar_equals(c, k):
    """c is a constant equal to k everywhere (a number, or an array of k's: a broadcast seed)."""
    if type(c) is Variable or isinstance(c, bool):
        return False
    if isinstance(c, (int, float, np.number)):
        return c == k
    return isinstance(c, np.ndarray) and c.dtype.kind in "iuf" and c.size > 0 and bool(np.all(c == k))


def simplify(tape, assume_finite: bool = False):
    """Algebraic simplification: x*1, 1*x, x+0, 0+x, x-0, x/1, x**1 -> x; x**0 -> 1; -(-x) -> x;
    constant folding of pure calls whose arguments are all constants.

    A rewrite is made only when the value it keeps has the recorded result's shape and dtype
    (``x * 1.0`` with an int array x is not x). ``0 * x`` is folded to zeros only with
    `assume_finite`: in IEEE arithmetic ``0 * inf`` and ``0 * nan`` are nan, so the fold
    would change results for non-finite x.
    """
    replace, folded = _simplified(tape, assume_finite)
    # a folded call becomes a constant op in place
    return _copy_tape(tape, {op.var for op in tape.ops} - replace.keys(), replace, folded)


def _simplified(tape, assume_finite):
    """What `simplify` does, as ``(replace, folded)``: {Variable: the Variable standing for it}
    and {Variable of a call folded to a constant: its value}."""
    replace = {}
    folded = {}
    known = {}
    for op in tape.ops:
        if type(op) is not Call or not op.kwargs is None and op.kwargs:
            continue
        fn, args = op.fn, op.args
        same = None
        if fn in (np.multiply,) and len(args) == 2:
            for x, c in ((args[0], args[1]), (args[1], args[0])):
                if type(x) is Variable and _scalar_equals(c, 1):
                    same = x
                if assume_finite and type(x) is Variable and _scalar_equals(c, 0):
                    folded[op.var] = op.val
        elif fn is np.add and len(args) == 2:
            for x, c in ((args[0], args[1]), (args[1], args[0])):
                if type(x) is Variable and _scalar_equals(c, 0):
                    same = x
        elif fn in (np.subtract, np.divide, np.power) and len(args) == 2:
            x, c = args
            if type(x) is Variable and _scalar_equals(c, 0 if fn is np.subtract else 1):
                same = x
            if fn is np.power and _scalar_equals(c, 0):
                folded[op.var] = op.val
        elif fn is np.negative and len(args) == 1 and type(args[0]) is Variable:
            inner = args[0]._op
            if type(inner) is Call and inner.fn is np.negative and type(inner.args[0]) is Variable:
                same = inner.args[0]
        if same is not None and _same_type(same._op.val, op.val):
            replace[op.var] = same
            continue
        if (type(fn) is not Variable and _is_pure(fn, known) and op.var not in folded
                and fn is not operator.getitem and not _uses(op)):
            folded[op.var] = op.val
    return replace, folded


def _key(a):
    t = type(a)
    if t is Variable:
        return a  # compared by identity, as its id would be
    if t is float or t is int:
        return (t.__name__, a)
    if isinstance(a, (list, tuple)):
        return (type(a).__name__,) + tuple(_key(x) for x in a)
    if isinstance(a, np.ndarray):
        return ("arr", id(a))
    try:
        hash(a)
    except TypeError:
        return ("obj", id(a))
    return (type(a).__name__, a)


def cse(tape):
    """Common subexpression elimination: a pure call repeated with the same arguments is computed once."""
    replace = _shared(tape, {}, {})
    return _copy_tape(tape, {op.var for op in tape.ops} - replace.keys(), replace)


def _shared(tape, replace, skip):
    """What `cse` does after the replacements `replace` (ops in `replace` or `skip` taking no
    part): {Variable of a repeated call: the Variable of its first}."""
    resolve = _resolver(replace)
    seen = {}
    shared = {}
    known = {}
    for op in tape.ops:
        if type(op) is not Call or type(op.fn) is Variable or not _is_pure(op.fn, known):
            continue
        var = op.var
        if var in replace or var in skip:
            continue
        args = tuple([_first(resolve(a) if a in replace else a, shared) if type(a) is Variable else a
                      for a in op.args])
        kwargs = op.kwargs
        if kwargs and replace:
            kwargs = {k: resolve(v) if type(v) is Variable else v for k, v in kwargs.items()}
        fn = op.fn
        method = ufunc_method(fn)  # (np.add.reduce is a new object at each access: one key for all)
        key = (id(fn) if method is None else (id(method[0]), method[1]),
               tuple([a if type(a) is Variable else _key(a) for a in args]),
               _key(tuple(sorted(kwargs.items()))) if kwargs else ())
        first = seen.get(key)
        if first is None:
            seen[key] = var
        else:
            shared[var] = first
    return shared


def _first(v, shared):
    return shared.get(v, v)


def optimize(tape, outputs=None, assume_finite: bool = False):
    """simplify, then common subexpressions, then prune: what compiled gradients apply.

    The three passes are worked out on `tape` itself and applied in one copy, which gives the
    tape ``prune(cse(simplify(tape)))`` would, op for op, at a third of the copying.
    """
    replace, folded = _simplified(tape, assume_finite)
    replace.update(_shared(tape, replace, folded))
    keep = _needed(tape, outputs, replace, folded)
    return _copy_tape(tape, keep, replace, folded)

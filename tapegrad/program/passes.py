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
from ..tape import Call, Constant, Input, Tape, Variable

__all__ = ["simplify", "prune", "cse", "optimize"]

# functions whose value depends only on their arguments: safe to fold and to share
_PURE_MODULES = ("numpy", "scipy.special")


def _is_pure(fn):
    if type(fn) is Variable or fn in GUARDS:
        return False
    if isinstance(fn, np.ufunc):
        return True
    mod = getattr(fn, "__module__", "") or ""
    return fn is operator.getitem or (mod.split(".")[0] == "numpy" and "random" not in mod)


def _copy_tape(tape, keep, replace=None):
    """A new tape of the ops in `keep` (a set of old Variables), arguments renamed through `replace`.

    `replace` maps an old Variable to the old Variable (or plain value) that stands for it.
    """
    replace = replace or {}
    new = Tape(tape.ctx)
    new.meta = dict(tape.meta)
    new.level = tape.level
    new.closed = tape.closed
    mapping = {}

    def resolve(v):
        seen = 0
        while type(v) is Variable and v in replace and seen < 10_000:
            v = replace[v]
            seen += 1
        return v

    def arg(a):
        if type(a) is Variable:
            r = resolve(a)
            return mapping[r] if type(r) is Variable else r
        if type(a) in (list, tuple):
            return type(a)(arg(x) for x in a)
        return a

    for op in tape.ops:
        if op.var not in keep:
            continue
        if type(op) is Input:
            mapping[op.var] = new.push(Input(op.val, op.note))
        elif type(op) is Constant:
            mapping[op.var] = new.push(Constant(op.val, op.note))
        else:
            kwargs = {k: arg(v) for k, v in op.kwargs.items()} if op.kwargs else op.kwargs
            fn = arg(op.fn) if type(op.fn) is Variable else op.fn
            mapping[op.var] = new.push(Call(fn, tuple(arg(a) for a in op.args), kwargs, op.val, op.note))
    result = resolve(tape.result) if tape.result is not None else None
    if type(result) is Variable:
        new.result = mapping[result]
    elif tape.result is not None:
        new.result = new.push(Constant(result, "result"))
    new.meta["renamed"] = {old: mapping.get(resolve(old)) if type(resolve(old)) is Variable else resolve(old)
                           for old in (op.var for op in tape.ops)}
    return new


def prune(tape, outputs=None):
    """Dead-code elimination: keep the inputs, the guards and what the result (or `outputs`) depends on.

    Guards are kept, and with them the values they check: dropping one would let a replay
    take a path the tape never recorded.
    """
    needed = set()
    stack = [v for v in (outputs if outputs is not None else [tape.result]) if v is not None]
    stack += [op.var for op in tape.ops if type(op) is Call and op.fn in GUARDS]
    while stack:
        v = stack.pop()
        if v in needed:
            continue
        needed.add(v)
        stack.extend(_uses(v._op))
    keep = {op.var for op in tape.ops if type(op) is Input or op.var in needed}
    return _copy_tape(tape, keep)


def _uses(op):
    if type(op) is not Call:
        return []
    out = []

    def walk(a):
        if type(a) is Variable:
            out.append(a)
        elif type(a) in (list, tuple):
            for x in a:
                walk(x)

    walk(op.fn)
    for a in op.args:
        walk(a)
    for a in (op.kwargs or {}).values():
        walk(a)
    return out


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
    replace = {}
    folded = {}
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
        if _is_pure(fn) and op.var not in folded and not _uses(op) and fn is not operator.getitem:
            folded[op.var] = op.val
    if folded:
        # a folded call becomes a constant op in place
        out = _copy_tape(tape, {op.var for op in tape.ops} - replace.keys(), replace)
        ren = out.meta["renamed"]
        for old, val in folded.items():
            nv = ren.get(old)
            if type(nv) is Variable:
                out.replace(nv, Constant(val, nv._op.note))
        return out
    return _copy_tape(tape, {op.var for op in tape.ops} - replace.keys(), replace)


def _key(a):
    if type(a) is Variable:
        return ("var", id(a))
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
    seen = {}
    replace = {}
    for op in tape.ops:
        if type(op) is not Call or not _is_pure(op.fn):
            continue
        args = tuple(replace.get(a, a) if type(a) is Variable else a for a in op.args)
        key = (id(op.fn), _key(args), _key(tuple(sorted((op.kwargs or {}).items()))))
        first = seen.get(key)
        if first is None:
            seen[key] = op.var
        else:
            replace[op.var] = first
    return _copy_tape(tape, {op.var for op in tape.ops} - replace.keys(), replace)


def optimize(tape, outputs=None, assume_finite: bool = False):
    """simplify, then common subexpressions, then prune: what compiled gradients apply."""
    t = simplify(tape, assume_finite=assume_finite)
    t = cse(t)
    if outputs is not None:
        ren = t.meta["renamed"]
        outputs = [ren.get(v, v) for v in outputs]
    return prune(t, outputs)

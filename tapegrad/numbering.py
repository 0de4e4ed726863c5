"""One numbering of a tape's values, shared by every view of it.

A tape's own ids count every op, plumbing included: a primitive recorded for a gradient is
three ops (the rrule call, its value, its pullback), so that the value `trace` prints as
``%4`` was ``%5`` on the gradient tape. The dumps, `explain`, the pictures, the generated
source and the viewer name values with this numbering instead, so that one value has one
name everywhere:

- the values a reader follows are counted ``%1, %2, ...`` in tape order: inputs (the
  function is ``%1``), constants, each primitive's value, the seed, each tangent, each
  accumulation. On a traced tape (no rrule) this is the tape's own ids, so `trace`'s dump
  and the forward half of the gradient tape agree;
- the plumbing of a primitive is named after its value: ``rr%4`` the rrule call's tuple,
  ``pb%4`` its pullback, ``dx%4`` the tuple of tangents the pullback returns.

>>> import tapegrad
>>> _, back = tapegrad.pullback(lambda x: x * x, 3.0)
>>> _ = back(1.0)
>>> names = numbering(back.tape)
>>> [names[op.var] for op in back.tape.ops]
['%1', '%2', 'rr%3', '%3', 'pb%3', '%4', 'dx%3', '%5', '%6', '%7']
"""
from __future__ import annotations

from .registry import rrule
from .tangents import getitem
from .tape import Call, Variable

__all__ = ["numbering", "named_note", "source_name"]


def _is_read(op, var, index) -> bool:
    return (type(op) is Call and op.fn is getitem and len(op.args) == 2
            and op.args[0] is var and op.args[1] == index)


def numbering(tape) -> dict:
    """``{Variable: name}`` for every op of `tape`: ``%k`` for values, ``rr%k`` / ``pb%k`` /
    ``dx%k`` for the plumbing of the primitive whose value is ``%k``."""
    names, used = {}, set()
    ops = tape.ops
    k, i, n = 0, 0, len(ops)
    while i < n:
        op = ops[i]
        if (type(op) is Call and op.fn is rrule and i + 2 < n
                and _is_read(ops[i + 1], op.var, 0) and _is_read(ops[i + 2], op.var, 1)):
            k += 1
            names[op.var], names[ops[i + 1].var], names[ops[i + 2].var] = f"rr%{k}", f"%{k}", f"pb%{k}"
            i += 3
            continue
        if type(op) is Call and type(op.fn) is Variable:
            held = names.get(op.fn, "")
            if held.startswith("pb%") and "dx" + held[2:] not in used:
                names[op.var] = "dx" + held[2:]
                used.add(names[op.var])
                i += 1
                continue
        k += 1
        names[op.var] = f"%{k}"
        i += 1
    return names


def named_note(note, names) -> str:
    """A note as text, its Variables written with `names` (``accumulate d%2``)."""
    if type(note) is tuple:
        return note[0] % tuple(names.get(a, a) if type(a) is Variable else a for a in note[1:])
    return note


def source_name(name: str) -> str:
    """A name of the numbering as a Python identifier: ``v4`` for ``%4``, ``pb4`` for ``pb%4``."""
    head, _, k = name.partition("%")
    return f"{head or 'v'}{k}"

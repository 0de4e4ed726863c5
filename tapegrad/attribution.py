"""Which primitive a running frame of Python belongs to: numpy's warnings inside a rule name it.

numpy calls `tapegrad.errors`' callback for a floating-point warning in the middle of a rule or
of its pullback; the warning is moved to the user's line and names the operation ("divide by
zero encountered in the derivative of log"). The frames themselves say which: every rule's
code, the code of the functions written inside it (its pullbacks and thunks) and of the helpers
of its own module that it names are known from the rule table, so a frame's code object finds
its primitive by a lookup, with no function's name read. Only a warning asks, so the table is
built when first needed and again after the rules changed.
"""
from __future__ import annotations

import types

__all__ = ["running_primitive"]

#: id of a rule table -> (the rules it was built from, {code: [(fn, rule), ...]})
_OWNERS: dict = {}


def _codes_of(code, out):
    """`code` and the code of every function written inside it (pullbacks, thunks)."""
    out.add(code)
    for c in code.co_consts:
        if type(c) is types.CodeType and c not in out:
            _codes_of(c, out)


def _owner_table(rules) -> dict:
    """code -> [(fn, rule), ...]: the code a rule runs, its pullbacks' and its helpers' (the
    functions of the rule's own module that it names, and theirs)."""
    key = tuple(map(id, rules.values()))
    built = _OWNERS.get(id(rules))
    if built is not None and built[0] == key:
        return built[1]
    owners = {}
    for fn, rule in rules.items():
        code = getattr(rule, "__code__", None)
        if code is None:
            continue
        codes, todo, seen = set(), [code], set()
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            _codes_of(c, codes)
            for name in c.co_names:  # the module's own helpers that the code names
                g = rule.__globals__.get(name)
                if type(g) is types.FunctionType and g.__module__ == rule.__module__:
                    todo.append(g.__code__)
            todo.extend(k for k in c.co_consts if type(k) is types.CodeType)
        for c in codes:
            owners.setdefault(c, []).append((fn, rule))
    _OWNERS[id(rules)] = (key, owners)
    return owners


def _closure_matches(rule, frame) -> bool:
    """Whether `frame` runs inside this closure of a rule made by a factory: the variables it
    shares with the rule's closure hold the same objects."""
    cells = rule.__closure__ or ()
    local = frame.f_locals
    return all(local[n] is c.cell_contents for n, c in zip(rule.__code__.co_freevars, cells) if n in local)


def running_primitive(rules, frules, frames):
    """``(i, fn, in_derivative)`` for the innermost of `frames` (innermost first) that runs the
    rule, a pullback or a helper of a primitive of `rules` ({fn: rule}), or None. The derivative
    is running unless the rule's own frame is among the frames outside it. A frame that several
    primitives share (a helper of many rules) is passed over, as numpy's own. Failing that, a
    forward rule of `frules` (which computes the value and its variation in one frame) gives
    ``in_derivative="forward"``."""
    found = _running(_owner_table(rules), frames)
    if found is not None:
        return found
    found = _running(_owner_table(frules), frames)
    return None if found is None else (found[0], found[1], "forward")


def _running(owners, frames):
    for i, frame in enumerate(frames):
        found = owners.get(frame.f_code)
        if not found:
            continue
        if len({id(r) for _, r in found}) > 1:
            found = [(fn, r) for fn, r in found if _closure_matches(r, frame)]
            if len({id(r) for _, r in found}) != 1:
                continue
        fn, rule = found[0]
        forward = any(f.f_code is rule.__code__ for f in frames[i:])
        return i, fn, not forward
    return None

"""A long program as functions of a few thousand lines each, compiled one at a time.

Python's ``compile()`` of a gradient program costs several eager gradients of it, all in one
call (about 90 µs a line). Cut into functions of `PIECE_LINES` lines, the same source
compiles in pieces that later calls can take one or a few at a time
(`tapegrad.program.stages`), and costs less in all (2.1 against 4.2 eager gradients on a
20,000-op chain: ``compile()`` of one very long function grows faster than its lines).

The pieces run in turn from one outer function. The values that cross from one piece to a
later one go through a list made afresh on each call (a program stays reentrant): the piece
that makes such a value stores it at its end, each later piece that reads it loads it at its
start; values used only inside one piece stay that piece's locals. A call of the program
costs one Python call per piece more than the one long function, and a store and a load for
each value that crosses (the values of the forward pass that the backward pass reads)::

    def gradient_program_1(fn, x, c, slots):
        v4 = np.sin(x)
        ...
        slots[0] = v2001

    def gradient_program(fn, x, c):
        slots = [None] * 5002
        gradient_program_1(fn, x, c, slots)
        ...
        return value, (dx, dc)

Each piece's line numbers are those of the whole text (``__source__``), so a failed guard is
found at one line whichever function it is in (`tapegrad.program.compiled._outcome` reads
``__pieces__``).
"""
from __future__ import annotations

from .codegen import function_text
from .passes import drain

__all__ = ["PIECE_LINES", "cut", "cut_steps", "compile_steps"]

#: lines of one piece: its compile costs about a fifteenth of an eager gradient of a 20,000-op
#: chain, and a call of the program one Python call more per piece
PIECE_LINES = 2000


def cut(body, name, fresh, size=None):
    """``[(function name, text), ...]``: the pieces of `body` (a tracked `codegen.Body`), then the
    outer function `name` that calls them in turn. `fresh(base)` gives a name no other takes."""
    return drain(cut_steps(body, name, fresh, size))


def cut_steps(body, name, fresh, size=None):
    """`cut`, a generator: yields after each piece it reads, and after each it writes."""
    size = size or PIECE_LINES
    lines, defs, uses = body.lines, body.defs, body.uses
    starts = range(0, max(len(lines), 1), size)
    home = {}  # name -> the piece that defines it
    for j, s in enumerate(starts):
        for d in defs[s:s + size]:
            if d is not None:
                home[d] = j
    yield
    ins, last, large = [], {}, set()  # what each piece reads from before it; name -> last piece reading it
    for j, s in enumerate(starts):
        seen, read = set(), []
        for line, used in zip(lines[s:s + size], uses[s:s + size]):
            if line.startswith("del "):
                large.update(used)  # (a large array, freed after its last use)
            for u in used:
                last[u] = j
                if u not in seen and home.get(u, j) < j:
                    seen.add(u)
                    read.append(u)
        ins.append(read)
        yield
    for u in body.ret_uses:
        last[u] = len(starts)
    slot = {}  # a value that crosses: its place in the list the pieces share
    for d, j in home.items():
        if last.get(d, j) > j:
            slot[d] = len(slot)
    slots = fresh("slots")
    params = ", ".join(body.params + [slots])
    texts, outer = [], [f"{slots} = [None] * {len(slot)}"]
    for j, s in enumerate(starts):
        pname = fresh(f"{name}_{j + 1}")
        head = [f"{u} = {slots}[{slot[u]}]" for u in ins[j]]
        tail = [f"{slots}[{slot[d]}] = {d}" for d in defs[s:s + size] if d in slot]
        # a large array read here for the last time leaves the list, as the one long function
        # would free it after its last use
        tail += [f"{slots}[{slot[u]}] = None" for u in ins[j] if u in large and last[u] == j]
        texts.append((pname, function_text(pname, params.split(", "), head + lines[s:s + size] + tail, None)))
        outer.append(f"{pname}({params})")
        yield
    outer += [f"{u} = {slots}[{slot[u]}]" for u in dict.fromkeys(body.ret_uses) if u in slot]
    texts.append((name, function_text(name, body.params, outer, body.ret)))
    return texts


def compile_steps(texts, namespace, filename):
    """Compile the functions of `cut` one per step (a generator: yields after each), each run
    in `namespace` with its lines numbered as in the whole text; returns the outer function,
    its ``__source__`` the whole text and its ``__pieces__`` the functions it calls."""
    line, fns = 1, []
    for fname, text in texts:
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own generated source
        fn = namespace[fname]
        if line > 1:
            fn.__code__ = fn.__code__.replace(co_firstlineno=fn.__code__.co_firstlineno + line - 1)
        fns.append(fn)
        line += text.count("\n") + 2  # its lines and the blank line between two functions
        yield
    program = fns[-1]
    program.__source__ = "\n\n".join(text for _, text in texts)
    program.__pieces__ = tuple(fns[:-1])
    return program

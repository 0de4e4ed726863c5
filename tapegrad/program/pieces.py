"""A long program as functions of a few thousand lines each, compiled one at a time.

Python's ``compile()`` of a gradient program costs several eager gradients of it, all in one
call (about 90 µs a line). Cut into functions of `PIECE_LINES` lines, the same source
compiles in pieces that later calls can take one or a few at a time
(`tapegrad.program.stages`), and costs less in all (2.1 against 4.2 eager gradients on a
20,000-op chain: ``compile()`` of one very long function grows faster than its lines).

The pieces run in turn from one outer function, which keeps the values that cross from one
piece to a later one as its own locals: a piece takes as parameters the names it reads and
does not define, and returns the names it defines that a later piece (or the return
statement) reads. Values used only inside one piece stay that piece's locals, so a call of
the program costs one Python call per piece more than the one long function, and a tuple and
an argument for each value that crosses::

    def gradient_program_1(x, c):
        v4 = np.sin(x)
        ...
        return (v2001, v1999)

    def gradient_program(fn, x, c):
        v2001, v1999, = gradient_program_1(x, c)
        ...
        return value, (dx, dc)

Each piece's line numbers are those of the whole text (``__source__``), so a failed guard is
found at one line whichever function it is in (`tapegrad.program.compiled._outcome` reads
``__pieces__``).
"""
from __future__ import annotations

from .codegen import function_text

__all__ = ["PIECE_LINES", "cut", "compile_steps"]

#: lines of one piece: its compile costs about a fifteenth of an eager gradient of a 20,000-op
#: chain, and a call of the program one Python call more per piece
PIECE_LINES = 2000


def cut(body, name, fresh, size=None):
    """``[(function name, text), ...]``: the pieces of `body` (a tracked `codegen.Body`), then the
    outer function `name` that calls them in turn. `fresh(base)` gives a name no other takes."""
    size = size or PIECE_LINES
    lines, defs, uses = body.lines, body.defs, body.uses
    starts = range(0, max(len(lines), 1), size)
    home = {}  # name -> the piece that defines it
    for j, s in enumerate(starts):
        for d in defs[s:s + size]:
            if d is not None:
                home[d] = j
    ins, last = [], {}  # the names each piece reads from outside; name -> last piece reading it
    for j, s in enumerate(starts):
        seen, read = set(), []
        for used in uses[s:s + size]:
            for u in used:
                last[u] = j
                if u not in seen and home.get(u, -1) != j:
                    seen.add(u)
                    read.append(u)
        ins.append(read)
    for u in body.ret_uses:
        last[u] = len(starts)
    outs = [[] for _ in starts]
    for d, j in home.items():
        if last.get(d, j) > j:
            outs[j].append(d)
    params = set(body.params)
    texts, outer = [], []
    for j, s in enumerate(starts):
        pname = fresh(f"{name}_{j + 1}")
        ret = f"({', '.join(outs[j])},)" if outs[j] else "None"
        texts.append((pname, function_text(pname, ins[j], lines[s:s + size], ret)))
        call = f"{pname}({', '.join(ins[j])})"
        outer.append(f"{', '.join(outs[j])}, = {call}" if outs[j] else call)
        gone = [u for u in ins[j] if last[u] == j and u not in params]
        if gone:  # freed here, as the one long function would free them after their last use
            outer.append("del " + ", ".join(gone))
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

"""How a traced gradient program becomes a compiled one, a share of the work at a time.

A compiled gradient (`tapegrad.program.compiled`) traces a signature's gradient program on
its second call; what follows (the passes, the source, Python's ``compile()``) costs several
eager gradients on a long program, more than any one call should pay. A `Node` holds the
work left as a generator (`program_steps`), and each later call answered by an eager grad
takes it on for a share of that grad's own CPU time (`BUDGET`), so that no call costs much
more than three eager gradients:

- a program of at most `PIECE_OPS` traced ops goes through three stages, one a call: the
  passes, the source, then ``compile()`` done by the call that runs it (its stages cost
  milliseconds, and tests can count on the calls);
- a longer one goes through the passes and the writing of its source `CHUNK` ops at a
  step, its source cut into functions of a few thousand lines (`tapegrad.program.pieces`),
  compiled one at a step; a call stops when its budget is spent, so the number of calls
  follows the machine's speed and the program's size (about seven eager-answered calls on a
  20,000-op scalar chain, fewer where the eager gradient does more numpy work per op).

The generator drops the traced tape once the optimized one is made, and that once the source
is written: between calls a node holds what its next step needs and no more.
"""
from __future__ import annotations

import time

from .codegen import Writer, body_steps, compile_source, source_and_namespace
from .passes import CHUNK, copy_steps, needed_steps, shared_steps, simplified_steps, optimize
from .pieces import compile_steps, cut_steps
from ..pytree import Spec, build, spec_leaves, unflatten
from ..tape import Call, Input, Variable, paused_gc

__all__ = ["Node", "program_steps", "BUDGET", "PIECE_OPS"]

#: a call answered by an eager grad spends at most this share of that grad's CPU time on the
#: program (plus one step, a small fraction of it): with the eager grad, under 3 of them
BUDGET = 1.0
#: traced ops above which a program is made in steps of `CHUNK` ops and compiled in pieces
PIECE_OPS = 2000
#: what `program_steps` yields where a call must stop (`STAGE`), or where what is left is
#: done by the call that runs the program (`LAST`); None between two steps of a long program
STAGE, LAST = "stage", "last"
NAME = "gradient_program"


class Node:
    """A program of one path, and the programs traced after it failed, by where and how it failed.

    Until its program is compiled, a node holds the work left (`steps`, a `program_steps`
    generator); `advance` takes it on, `compile` to its end.
    """

    __slots__ = ("program", "children", "steps", "last", "eager", "step")

    def __init__(self, tape, names, assume_finite, whole=False):
        self.program = None
        self.children = {}  # (line of the program, exception type, outcome) -> Node
        self.last = False  # True when what is left is cheap enough for the call that runs it
        self.steps = program_steps(tape, names, assume_finite, whole)
        self.eager = float("inf")  # the least CPU time of an eager grad that answered a call
        self.step = 0.0  # the CPU time of the last step (the next, in the same pass, costs about as much)

    def waiting(self) -> bool:
        """True while the program needs more than the call that runs it can do."""
        return self.program is None and not self.last

    def after_eager(self, seconds):
        """Take the program on for `BUDGET` times the CPU time of an eager grad (`seconds`, that
        of the one that answered this call, or a quicker one before it: a machine's noise
        should not lengthen the calls)."""
        self.eager = min(self.eager, seconds)
        self.advance(BUDGET * self.eager)

    def advance(self, budget=None):
        """Take the program on by steps while they fit in `budget` seconds of CPU time (each
        reckoned as dear as the one before it; at least one step), or by one stage of a short
        program (with None, one step of a long one)."""
        start = now = time.process_time()
        with paused_gc():  # each step makes and drops objects by the thousand
            while self.program is None:
                try:
                    mark = next(self.steps)
                except StopIteration as done:
                    if done.value is None:  # pragma: no cover - a step raised on an earlier call
                        raise RuntimeError("the program's making failed on an earlier call") from None
                    self.program, self.steps = done.value, None
                    return
                self.step, now = time.process_time() - now, time.process_time()
                if mark is LAST:
                    self.last = True
                if mark is not None or budget is None or now - start + self.step > budget:
                    return

    def compile(self):
        """The compiled program (made now, through the steps left, if this is its first use)."""
        while self.program is None:
            self.advance(float("inf"))
        return self.program

    def compile_all(self):
        stack = [self]
        while stack:
            node = stack.pop()
            node.compile()
            stack.extend(node.children.values())


def program_steps(tape, names, assume_finite, whole=False):
    """The making of the compiled program of `tape` (a generator; see the module docstring):
    yields between steps, returns the program. With `whole`, one function and three stages
    whatever the size (``compiled_grad(tiers=False)``)."""
    if whole or len(tape.ops) <= PIECE_OPS:
        optimized, chosen, drops_df, df = optimized_program(tape, names, assume_finite)
        del tape  # its ops and values go here, while the collector is paused
        yield STAGE
        src, namespace = source_and_namespace(optimized, NAME, names=chosen)
        del optimized
        yield LAST
        program = compile_source(src, namespace, NAME)
    else:
        replace, folded = yield from simplified_steps(tape, assume_finite, CHUNK)
        replace.update((yield from shared_steps(tape, replace, folded, CHUNK)))
        keep = yield from needed_steps(tape, None, replace, folded, CHUNK)
        optimized = yield from copy_steps(tape, keep, replace, folded, CHUNK)
        del optimized.meta["renamed"], replace, folded, keep  # (what held the traced tape's ops)
        yield from _free(tape)
        drops_df, df, chosen = _named(optimized, names)
        w = Writer(optimized)
        body = yield from body_steps(optimized, w, names=chosen, chunk=CHUNK, track=True)
        texts = yield from cut_steps(body, NAME, w.fresh)
        namespace = dict(w.namespace)
        del w, body
        yield
        yield from _free(optimized)
        program = yield from compile_steps(texts, namespace, f"<tapegrad {NAME}>")
    program.__drops_df__ = drops_df
    program.__df__ = df
    return program


def _free(tape):
    """Free the ops of `tape` (a generator), `CHUNK` at a step from its end: a long tape freed
    at once costs about an eager gradient of its own."""
    ops = tape.ops
    tape.result = None
    while ops:
        part = ops[-CHUNK:]
        for op in part:
            op.var = None  # (as `Tape.__del__` does: each op and its Variable refer to each other)
        del ops[-CHUNK:], part
        yield


def optimized_program(tape, names, assume_finite):
    """The traced tape optimized, with the names of the values it returns and the gradient
    with respect to `f` left out of it when constant (`_drop_function_tangent`)."""
    optimized = optimize(tape, assume_finite=assume_finite)
    drops_df, df, chosen = _named(optimized, names)
    return optimized, chosen, drops_df, df


def _named(optimized, names):
    drops_df, df = _drop_function_tangent(optimized)
    chosen = _result_names(optimized, (names[2:] if drops_df else ["f"] + names[2:]))
    return drops_df, df, chosen


def _drop_function_tangent(tape):
    """Leave the gradient with respect to `f` out of the program's result when it is a constant.

    A plain function has no values of its own to differentiate (``df`` is `ZERO`), nor has a
    closure over integers and flags (a `Tangent` of `NO_TANGENT`); without that constant the
    program ends in ``return value, (da, db)``, as a student would write it. Returns
    ``(True, df)`` when the tape was changed (`CompiledGrad._finish` puts `df` back), else
    ``(False, None)``.
    """
    op = tape.ops[-1] if tape.ops else None
    if type(op) is not Call or op.fn is not build or op.var is not tape.result or op.kwargs:
        return False, None
    spec = op.args[0]
    if not (isinstance(spec, Spec) and spec.kind == "seq" and len(spec.children) == 2):
        return False, None
    value_spec, grads_spec = spec.children
    if (value_spec.kind != "leaf" or grads_spec.kind != "seq" or grads_spec.cls is not tuple
            or not grads_spec.children):
        return False, None
    df_spec = grads_spec.children[0]
    n = len(spec_leaves(df_spec))
    if n == 0 or any(type(a) is Variable for a in op.args[2:2 + n]) or len(op.args) < 2 + n:
        return False, None
    df = unflatten(df_spec, op.args[2:2 + n])
    rest = grads_spec.children[1:]
    new_grads = Spec("seq", cls=tuple, keys=tuple(range(len(rest))), children=tuple(rest))
    new_spec = Spec("seq", cls=spec.cls, keys=spec.keys, children=(value_spec, new_grads))
    op.args = (new_spec, op.args[1], *op.args[2 + n:])
    value, grads = op.val
    op.val = (value, grads[1:])
    return True, df


def _result_names(tape, params):
    """{Variable: name} for the values the program returns: ``value`` for the function's value,
    ``d<parameter>`` (``da``, ``dp_W1``) for each gradient, so that the program reads
    ``return value, (da, db)``. A value that is an input or already named keeps its name."""
    op = tape.ops[-1] if tape.ops else None
    if type(op) is not Call or op.fn is not build or op.var is not tape.result:
        return {}
    spec = op.args[0]
    if not (isinstance(spec, Spec) and spec.kind == "seq" and len(spec.children) == 2
            and spec.children[0].kind == "leaf" and spec.children[1].kind == "seq"):
        return {}
    chosen = {}

    def choose(v, name):
        if type(v) is Variable and v not in chosen and type(v._op) is not Input:
            chosen[v] = name

    leaves = iter(op.args[1:])
    choose(next(leaves), "value")
    seen = set()
    for param, child in zip(params, spec.children[1].children):
        for path in _leaf_paths(child, seen):
            choose(next(leaves), "d" + "_".join([param, *path]))
    return chosen


def _leaf_paths(spec, seen):
    """The key path of each leaf of `spec`, in the order `build` takes them (a shared part once)."""
    stack = [(spec, [])]
    while stack:
        s, path = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        if s.kind == "leaf":
            yield [str(k) for k in path]
        elif s.kind != "static":
            stack.extend(reversed([(c, path + [k]) for k, c in zip(s.keys, s.children)]))

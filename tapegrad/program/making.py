"""How a compiled gradient's program is made: traced, optimized, written as source, compiled.

`Node` holds one path's program on its way (`advance` takes it one stage on: the tiers of
`tapegrad.program.compiled`), or the child making it (`tapegrad.program.background`), whose
work is `made_in_child`: the same stages, and the source compiled, in a forked process.
"""
from __future__ import annotations

import marshal

import numpy as np

from .codegen import compile_code, compile_source, source_and_namespace
from .draws import Draws
from ..grad import grad
from .passes import optimize
from ..pytree import Spec, build, spec_leaves, unflatten
from ..registry import WRITES
from ..tape import Call, Input, Variable, paused_gc
from ..tracing import trace

__all__ = ["gradient_program", "Node", "Unmade", "traced", "made_in_child", "writes_into_a_constant"]


def gradient_program(f, seed, *args, _wrt=None, **kwargs):
    """What a compiled gradient traces: `grad` itself, with the seed and `wrt` as arguments."""
    return grad(f, *args, seed=seed, wrt=_wrt, **kwargs)


class Node:
    """A program of one path, and the programs traced after it failed, by where and how it failed.

    A node goes through the stages of its program one call at a time, so that no call pays
    for two of the costly ones (each about as dear as several eager gradients on a long
    program): the call that traced the path leaves its tape (`pending` is ``("tape", ...)``);
    the next call that reaches the node optimizes the tape (``("optimized", ...)``), the one
    after writes the program's source (``("source", ...)``, a string: the tapes and their
    values are gone), each answered by an eager grad (`advance`); the next compiles the source
    and runs the program, as every later call does.
    """

    __slots__ = ("program", "children", "pending")

    def __init__(self, pending):
        self.program = None
        self.pending = pending
        self.children = {}  # (line of the program, exception type, outcome) -> Node

    def child(self):
        """The `background.Job` of the child making this node's program, or None."""
        return self.pending[1] if self.pending is not None and self.pending[0] == "child" else None

    def unwritten(self) -> bool:
        """True while the program is a tape (traced, or optimized): not yet source or code."""
        return self.program is None and self.pending[0] not in ("source", "child")

    def collect(self, wait=False):
        """For a program a child makes (`background`): ``"ready"`` once it is here (then
        `program` holds it), None while the child works, ``"uncompiled"`` if the function
        cannot have one (it draws random numbers, ...: traced each call), ``"failed"`` if the
        child made none (the caller makes it)."""
        made = self.pending[1].poll(wait)
        if made is None:
            return None
        if made is False:
            return "failed"
        if made[0] == "uncompiled":
            return "uncompiled"
        _, src, code, namespace, drops_df, df = made
        self._compiled(src, namespace, drops_df, df, marshal.loads(code))
        return "ready"

    def _compiled(self, src, namespace, drops_df, df, code=None):
        """The program made a function (of `code`, where the source was compiled already)."""
        program = compile_source(src, namespace, "gradient_program", code)
        program.__drops_df__ = drops_df
        program.__df__ = df
        self.program = program
        self.pending = None

    def advance(self):
        """Take the program one stage on: traced tape -> optimized tape -> source -> compiled."""
        stage = self.pending[0]
        with paused_gc():  # each stage makes and drops objects by the hundred thousand
            if stage == "tape":
                _, tape, names, assume_finite = self.pending
                self.pending = ("optimized", *_optimized(tape, names, assume_finite))
                del tape  # its ops and values go here, while the collector is paused
            elif stage == "optimized":
                _, optimized, chosen, drops_df, df = self.pending
                src, namespace = source_and_namespace(optimized, "gradient_program", names=chosen)
                self.pending = ("source", src, namespace, drops_df, df)
                del optimized
            elif stage == "child":
                if self.collect(wait=True) != "ready":
                    raise Unmade
            else:
                self._compiled(*self.pending[1:])

    def compile(self):
        """The compiled program (made now, through the stages left, if this is its first use)."""
        while self.program is None:
            self.advance()
        return self.program

    def compile_all(self):
        stack = [self]
        while stack:
            node = stack.pop()
            node.compile()
            stack.extend(node.children.values())


class Unmade(Exception):
    """A child (`background`) made no program for a node: its signature is traced again."""


def traced(f, seed, args, kwargs, names, wrt):
    """``(out, tape, replayable, drew)``: the gradient program of a call traced, whether a
    program may replay it: not if it drew random numbers (`drew`: a program would replay its
    draws), wrote into a plain array (its first call's writes would be baked in) or entered
    ``np.errstate`` (a replay would run under the caller's error state, showing warnings f
    silenced)."""
    draws = Draws(f)
    try:
        # the keyword arguments are the program's arguments too, after the positional ones in
        # the order of their names, as the signature's leaves come (`CompiledGrad._signature`)
        out, tape = trace(gradient_program, f, seed, *args, _names=names, _wrt=wrt,
                          _keywords=tuple(sorted(kwargs)), **dict(sorted(kwargs.items())))
    finally:
        drew = draws.drew()
    return out, tape, not (drew or writes_into_a_constant(tape) or tape.meta.get("errstate")), drew


def made_in_child(f, seed, args, kwargs, names, wrt, assume_finite):
    """What a forked child sends back (`background`): the program of a call as source, bytecode
    and the values it names, made by the stages the tiers run; or ``("uncompiled",)`` where
    the caller's trace would have found that no program can serve the function."""
    _, tape, replayable, _ = traced(f, seed, args, kwargs, names, wrt)
    if not replayable:
        return ("uncompiled",)
    node = Node(("tape", tape, names, assume_finite))
    del tape
    node.advance()
    node.advance()
    _, src, namespace, drops_df, df = node.pending
    return ("program", src, marshal.dumps(compile_code(src, "gradient_program")), namespace, drops_df, df)


def _optimized(tape, names, assume_finite):
    """The traced tape optimized, with the names of the values it returns and the gradient
    with respect to `f` left out of it when constant (`_drop_function_tangent`)."""
    optimized = optimize(tape, assume_finite=assume_finite)
    drops_df, df = _drop_function_tangent(optimized)
    chosen = _result_names(optimized, (names[2:] if drops_df else ["f"] + names[2:]))
    return optimized, chosen, drops_df, df


#: functions that write into their first argument (declared with ``declare(fn, writes=True)``):
#: on a constant of the program (a plain array that a traced value was written into), the
#: program would bake in what the first call wrote
_WRITERS = WRITES


def writes_into_a_constant(tape) -> bool:
    for op in tape.ops:
        if type(op) is not Call or not op.args or type(op.args[0]) is Variable:
            continue
        fn = op.fn
        if fn in _WRITERS or (getattr(fn, "__name__", None) == "at" and isinstance(getattr(fn, "__self__", None), np.ufunc)):
            return True
    return False


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

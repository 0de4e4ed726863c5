"""The tape: a flat program of operations, each one bound to the Variable that names it.

A Tape is a Wengert list. Every op keeps the value it had when it was recorded, so the tape is
both a record of what happened and a program that can run again (`Tape.replay`).

Variables are bound to their op, not to a position: inserting or deleting ops renumbers the
tape, and every reference held by a later op (or by the user) still names the same op. This
module knows nothing of numpy, rules or gradients.
"""
from __future__ import annotations

import gc

__all__ = ["Variable", "Op", "Input", "Constant", "Call", "Tape", "MISSING", "paused_gc", "vars_in"]


class paused_gc:
    """Pause Python's cyclic garbage collector while a tape is recorded or swept.

    A tape is a large, growing set of small objects that live until it is dropped; the
    collector's full passes over them slowed recording down (benchmarks/README.md). Nothing recorded
    forms garbage cycles that must be collected meanwhile, and the collector is restored (to
    the state it had) on the way out, also when the traced function raises.
    """

    __slots__ = ("was",)

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()
        return False


class _Missing:
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


_new = object.__new__  # a slotted object without a Python-level __init__ call

#: Marks a Call whose value has not been computed yet: `Tape.push` computes it.
MISSING = _Missing()


class Variable:
    """A name for one op of a tape, printed as ``%3``. It follows its op when the tape is edited."""

    __slots__ = ("_op",)

    def __init__(self, op):
        self._op = op

    @property
    def id(self) -> int:
        return self._op.id

    @property
    def op(self):
        return self._op

    def __repr__(self):
        return f"%{self._op.id}"


def note_text(note) -> str:
    """A note as text. Notes naming Variables are kept as ``(format, *vars)`` and formatted only
    when printed, so that recording stays cheap and the ids shown are current."""
    if type(note) is tuple:
        return note[0] % note[1:]
    return note


class Op:
    """Base of the three kinds of op: it has an id (its 1-based position), a value and a note
    (a string, or a ``(format, *vars)`` tuple: see `note_text`).

    ``pullback`` is None unless the context that recorded the op keeps something there for a
    later pass over the tape (a private gradient tape keeps each primitive's pullback on its
    op: a slot costs 8 bytes where a table keyed by the op's Variable cost 50-100).
    """

    __slots__ = ("id", "val", "note", "var", "pullback")

    def __init__(self, val=MISSING, note=""):
        self.id = 0
        self.val = val
        self.note = note
        self.var = None
        self.pullback = None

    def used_vars(self):
        return ()


class Input(Op):
    """An input of the traced program; `note` holds its path in the arguments (``x``, ``p["b"]``)."""

    __slots__ = ()


class Constant(Op):
    """A value fixed when the tape was recorded (a seed, a constant result)."""

    __slots__ = ()


class Call(Op):
    """``fn(*args, **kwargs)``; any of fn, args and kwargs values may be Variables."""

    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args=(), kwargs=None, val=MISSING, note=""):
        self.id = 0
        self.val = val
        self.note = note
        self.var = None
        self.pullback = None
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def used_vars(self):
        out = list(vars_in(self.args))
        if type(self.fn) is Variable:
            out.insert(0, self.fn)
        if self.kwargs:
            out.extend(v for v in self.kwargs.values() if type(v) is Variable)
        return out

    def run(self, value_of):
        """Call fn on the current values; `value_of(var)` resolves a Variable."""
        fn = self.fn
        if type(fn) is Variable:
            fn = value_of(fn)
        args = [value_of(a) if type(a) is Variable else
                _values_in(a, value_of) if type(a) in (list, tuple) else a for a in self.args]
        if self.kwargs:
            kwargs = {k: value_of(v) if type(v) is Variable else v for k, v in self.kwargs.items()}
            return fn(*args, **kwargs)
        return fn(*args)


def vars_in(items):
    """The Variables among `items`, also inside lists and tuples (np.stack([%3, %4]))."""
    for a in items:
        if type(a) is Variable:
            yield a
        elif type(a) in (list, tuple):
            yield from vars_in(a)


def _values_in(seq, value_of):
    """A list or tuple argument with the values of the Variables inside it."""
    return type(seq)(value_of(a) if type(a) is Variable else
                     _values_in(a, value_of) if type(a) in (list, tuple) else a for a in seq)


def _current_value(var):
    return var._op.val


class Tape:
    """A list of ops with a result; the forward (and, after a recorded sweep, backward) program.

    ``tape[3]`` and ``tape[var]`` both give the op printed as ``%3``. `push` appends an op and
    returns its Variable; a Call pushed without a value is run at once on the values recorded so
    far, so the tape is always executed as it is written.
    """

    __slots__ = ("ops", "result", "ctx", "closed", "level", "meta")

    def __init__(self, ctx=None):
        self.ops = []
        self.result = None
        self.ctx = ctx
        self.closed = False
        self.level = 0
        self.meta = {}

    def __del__(self):
        # Each op and its Variable refer to each other. Breaking those cycles when the tape
        # goes lets reference counting free a whole tape at once, instead of leaving
        # hundreds of thousands of objects to the cyclic collector, which slowed gradients
        # down and held the memory of earlier tapes.
        for op in self.ops:
            op.var = None

    # --- building ---
    # Each op and Variable has one constructor, its __init__, and recording one fast one
    # beside it here (made without the call of __init__): `push_call` for a Call and its
    # Variable, `push_input` for an Input.
    def push(self, op) -> Variable:
        """Append `op` and return its Variable; a Call without a value is run at once."""
        ops = self.ops
        ops.append(op)
        op.id = len(ops)
        var = op.var = Variable(op)
        if op.val is MISSING:
            op.val = op.run(_current_value)
        return var

    def push_input(self, val, note="") -> Variable:
        """`push` of an Input made without a call of its __init__: each argument of every trace comes here."""
        op = _new(Input)
        op.val = val
        op.note = note
        op.pullback = None
        return self.push(op)

    def push_call(self, fn, args, kwargs, val, note="") -> Variable:
        """`push` of a Call whose value is known: the recording fast path (no __init__ calls),
        the one every recorded primitive and every recorded step of a sweep takes."""
        op = _new(Call)
        op.fn = fn
        op.args = args
        op.kwargs = kwargs
        op.val = val
        op.note = note
        op.pullback = None
        ops = self.ops
        ops.append(op)
        op.id = len(ops)
        var = op.var = _new(Variable)
        var._op = op
        return var

    def insert(self, position: int, *ops) -> list:
        """Insert ops so that the first gets id `position`; later ops are renumbered."""
        if not 1 <= position <= len(self.ops) + 1:
            raise IndexError(f"insert position {position} is outside 1..{len(self.ops) + 1}")
        at = position - 1
        self.ops[at:at] = ops
        out = []
        for op in ops:
            op.var = Variable(op)
            out.append(op.var)
        self._renumber(at)
        for op in ops:
            if op.val is MISSING:
                op.val = op.run(_current_value)
        return out

    def replace(self, var, op) -> Variable:
        """Put `op` where `var`'s op stands; every reference to `var` now names `op`."""
        old = self[var]
        op.id = old.id
        op.var = old.var
        old.var._op = op
        self.ops[old.id - 1] = op
        if op.val is MISSING:
            op.val = op.run(_current_value)
        return op.var

    def delete(self, var) -> None:
        """Remove the op of `var`; refuses while another op still uses it."""
        op = self[var]
        for other in self.ops:
            if other is not op and op.var in other.used_vars():
                raise ValueError(f"cannot delete {op.var}: {other.var} still uses it")
        if self.result is op.var:
            raise ValueError(f"cannot delete {op.var}: it is the result of the tape")
        del self.ops[op.id - 1]
        self._renumber(op.id - 1)

    def _renumber(self, start: int) -> None:
        for i in range(start, len(self.ops)):
            self.ops[i].id = i + 1

    # --- reading ---
    def __getitem__(self, key):
        if type(key) is Variable:
            op = key._op
            if op.id < 1 or op.id > len(self.ops) or self.ops[op.id - 1] is not op:
                raise KeyError(f"{key} is not an op of this tape")
            return op
        if isinstance(key, int):
            if not 1 <= key <= len(self.ops):
                raise IndexError(f"%{key} is outside this tape (%1..%{len(self.ops)})")
            return self.ops[key - 1]
        raise TypeError(f"a tape is indexed by a Variable or an id (int), not {type(key).__name__}")

    def __iter__(self):
        return iter(self.ops)

    def __len__(self):
        return len(self.ops)

    @property
    def inputs(self) -> list:
        """The Variables of the Input ops, in order."""
        return [op.var for op in self.ops if type(op) is Input]

    def replay(self, *inputs, outputs=None):
        """Run the recorded program again on new input values, without tracing.

        One value per Input op, in order (for ``trace(f, a, b)``: f, a, b). Returns the value of
        the result, or a tuple of the values of the Variables in `outputs`. The tape itself is
        not changed. The ops run under the caller's numpy error state: an ``np.errstate`` the
        traced function set is not on the tape (`compiled_grad` traces such a function afresh).
        """
        ins = self.inputs
        if len(inputs) != len(ins):
            raise TypeError(f"replay takes {len(ins)} input values (one per inp op), got {len(inputs)}")
        env = {}
        it = iter(inputs)
        value_of = env.__getitem__
        for op in self.ops:
            t = type(op)
            if t is Input:
                env[op.var] = next(it)
            elif t is Call:
                try:
                    env[op.var] = op.run(value_of)
                except Exception as exc:
                    # a function may say what its failure means on replay (a guard: the new
                    # inputs take another path); it returns the exception to raise, or None
                    explain = getattr(op.fn, "on_replay_error", None)
                    better = explain(op, exc) if explain is not None else None
                    if better is not None:
                        raise better from None
                    raise
            else:
                env[op.var] = op.val
        if outputs is None:
            return env[self.result] if self.result is not None else None
        return tuple(env[v] for v in outputs)

    # How a tape shows itself is the business of tapegrad.show.printing, which imports this
    # module and sets these when tapegrad is imported: the tape knows nothing of numpy.
    #: tape -> its dump (``print(tape)``)
    format_text = None
    #: tape -> a short summary of a tape of any length (`Tape.summary`)
    format_summary = None
    #: tape -> the dump as an HTML table (notebooks)
    format_html = None

    def __repr__(self):
        show = Tape.format_text
        return show(self) if show is not None else f"<Tape of {len(self.ops)} ops>"

    def _repr_pretty_(self, p, cycle):  # IPython
        p.text(repr(self))

    def summary(self) -> str:
        """Op counts by kind and the most used functions: readable for a tape of any length."""
        return Tape.format_summary(self)

    def _repr_html_(self):  # notebooks: the same lines as the text, as a table
        show = Tape.format_html
        return show(self) if show is not None else None

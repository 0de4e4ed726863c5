"""Python source from tapes: one line per op, runnable, with the notes as comments.

`to_source(tape)` writes a function that takes one parameter per Input op (named after the
argument path where known) and returns the result (or the Variables in `outputs`).
`compile_tape(tape)` executes that source and returns the function; its ``__source__``
attribute holds the text.

Arithmetic ufuncs print as Python operators where the operator means the same as the numpy
function for the values recorded (``a * b`` for ``np.multiply(a, b)``); numpy functions print
as ``np.name``, scipy.special ones as ``scipy.special.name``, a ufunc's method as
``np.add.reduce``; any other function or non-literal constant is bound by name in the
namespace the source is run in.
"""
from __future__ import annotations

import keyword
import operator
import re
import sys
import unicodedata

import numpy as np

from ..errors import PROGRAM_LINES, qualified_name, short_name, ufunc_method
from .guards import GUARDS
from ..pytree import Spec, build, spec_leaves
from ..numbering import named_note, numbering, source_name
from ..tangents import NO_TANGENT, ZERO
from ..tape import Call, Constant, Input, Variable

__all__ = ["to_source", "compile_tape"]

_BINARY = {np.add: "+", np.subtract: "-", np.multiply: "*", np.matmul: "@"}
# Only where the operator is the ufunc bit for bit: numpy scalars' ``**`` is not np.power (it
# differs in the last place for about 3% of cubes), so power stays a call.
_DIVISION = {np.divide: "/"}


def _is_numpy_value(v):
    return isinstance(v, (np.ndarray, np.generic))


class _Writer:
    def __init__(self, tape):
        self.tape = tape
        self.names = {}  # Variable -> name
        #: line of the source -> the operation it calls, for numpy's warnings met there
        #: (`tapegrad.errors`), kept in the namespace the program runs in under `PROGRAM_LINES`
        self.operations = {}
        self.namespace = {"np": np, PROGRAM_LINES: self.operations}
        self.taken = set(keyword.kwlist) | {"np", "scipy", PROGRAM_LINES}
        self.objects = {}  # id(obj) -> name

    def fresh(self, base):
        if (base not in self.taken and base.isascii() and base.isidentifier()
                and base[0] != "_" and base[-1] != "_"):
            # already a name (``v12``, most of a program): what the lines below would make of it
            self.taken.add(base)
            return base
        if not base.isascii():
            # Python reads an identifier in its NFKC form ("ａ" is "a", "ﬁ" is "fi"): two names
            # that differ only before it would be one name in the program (a duplicate
            # parameter, a value overwritten), so names are made in that form and kept apart
            # there (every name in `taken` is in it)
            base = unicodedata.normalize("NFKC", base)
        base = re.sub(r"\W+", "_", base).strip("_") or "v"
        if base[0].isdigit():
            base = "v" + base
        if not base.isidentifier():  # a word character that Python takes in no name
            base = "v_" + "".join(c if ("a" + c).isidentifier() else "_" for c in base)
        name = base
        k = 2
        while name in self.taken:
            name = f"{base}_{k}"
            k += 1
        self.taken.add(name)
        return name

    def bind(self, obj, hint):
        """A name for a function or constant: np.x / scipy.special.x when that is what it is."""
        name = self.objects.get(id(obj))
        if name is not None:
            return name
        method = ufunc_method(obj)
        if method is not None:  # np.add.reduce: the ufunc's own name, then the method's
            name = f"{self.bind(method[0], short_name(method[0]))}.{method[1]}"
            self.objects[id(obj)] = name
            return name
        q = qualified_name(obj) if callable(obj) else ""
        module, _, attr = q.rpartition(".")
        if module == "numpy" and getattr(np, attr, None) is obj:
            name = f"np.{attr}"
        elif module in ("numpy.linalg", "numpy.fft") and getattr(getattr(np, module[6:]), attr, None) is obj:
            name = f"np.{module[6:]}.{attr}"
        elif module == "scipy.special" and getattr(sys.modules.get(module), attr, None) is obj:
            # (scipy.special is imported: obj is one of its functions; tapegrad does not import it)
            self.namespace["scipy"] = sys.modules["scipy"]
            name = f"scipy.special.{attr}"
        if not name:
            name = self.fresh(hint)
            self.namespace[name] = obj
        self.objects[id(obj)] = name
        return name

    def value(self, v):
        if type(v) is Variable:
            return self.names[v]
        if type(v) is float and not np.isfinite(v):
            return "np.nan" if v != v else ("np.inf" if v > 0 else "-np.inf")
        if v is None or isinstance(v, (bool, int, float, complex, str)):
            return repr(v)
        if isinstance(v, np.generic) and v.dtype.kind in "biufc":
            item = v.item()
            if isinstance(item, float) and not np.isfinite(item):
                return f"np.{v.dtype.name}({self.value(item)})"
            return f"np.{v.dtype.name}({item!r})"
        if isinstance(v, slice):
            return f"slice({self.value(v.start)}, {self.value(v.stop)}, {self.value(v.step)})"
        if v is Ellipsis:
            return "..."
        if isinstance(v, tuple):
            inner = ", ".join(self.value(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if callable(v):
            return self.bind(v, short_name(v))
        if v is ZERO or v is NO_TANGENT:
            return self.bind(v, "ZERO" if v is ZERO else "NO_TANGENT")
        if isinstance(v, Spec):
            return self.bind(v, "result_structure")
        if type(v) is np.ndarray and v.dtype.kind in "biufc" and v.size:
            # (an ndarray subclass, a cotangent marked with its structural zeros, is bound as
            # the object itself: its values written out would lose the mark)
            dtype = "" if v.dtype == np.float64 else f", dtype=np.{v.dtype.name}"
            first = v.flat[0]
            if 0 in v.strides and np.all(v == first) and np.isfinite(first):
                # one value broadcast (a seed spread by a pullback): written as the same O(1)
                # broadcast, not as a fresh array, whose memory order numpy's ufuncs would pass
                # on, so that a later matmul rounds as the traced one did
                value = repr(first.item()) if v.dtype == np.float64 else f"np.{v.dtype.name}({first.item()!r})"
                return f"np.broadcast_to({value}, {v.shape!r})"
            if v.size <= 6 and v.flags.c_contiguous:  # a small constant reads best as its values
                return f"np.array({v.tolist()!r}{dtype})"
        return self.bind(v, f"c_{type(v).__name__.lower()}")

    def call(self, op):
        fn = op.fn
        args = [self.value(a) for a in op.args]
        if type(fn) is Variable:
            return f"{self.names[fn]}({', '.join(args)})"
        if fn in GUARDS:
            return f"{self.bind(fn, short_name(fn))}({', '.join(args)})"
        if not op.kwargs and len(args) == 2:
            vals = [a._op.val if type(a) is Variable else a for a in op.args]
            if fn in _BINARY:
                return f"{args[0]} {_BINARY[fn]} {args[1]}"
            if fn in _DIVISION and any(_is_numpy_value(v) for v in vals):
                # on a numpy value the operator is the ufunc; on two Python floats it would not be
                return f"{args[0]} {_DIVISION[fn]} {args[1]}"
            if fn is operator.getitem and type(op.args[1]) is not Variable:
                return f"{args[0]}[{args[1]}]"
        if fn is np.negative and len(args) == 1 and not op.kwargs:
            return f"-{args[0]}"
        kw = [f"{k}={self.value(v)}" for k, v in (op.kwargs or {}).items()]
        return f"{self.bind(fn, short_name(fn))}({', '.join(args + kw)})"


#: a name bound to an array of at least this many bytes is deleted after its last use, so that
#: numpy frees the array there: a large intermediate kept to the end of the function costs page
#: faults on every call once malloc has handed its memory back (on logistic regression, 320
#: faults a call against none)
FREE_BYTES = 1 << 16


def _last_uses(tape, keep):
    """{op index: Variables whose last use is that op}, for the large arrays worth deleting."""
    last = {}
    for i, op in enumerate(tape.ops):
        if type(op) is Call:
            for v in op.used_vars():
                last[v] = i
    out = {}
    for v, i in last.items():
        val = v._op.val
        if (type(v._op) is not Input and v not in keep and type(val) is np.ndarray
                and val.nbytes >= FREE_BYTES):
            out.setdefault(i, []).append(v)
    return out


def to_source(tape, name: str = "replay", outputs=None, _writer=None, names=None) -> str:
    """The tape as the source of a Python function ``name(<one parameter per input>)``.

    A name bound to a large array (`FREE_BYTES`) is deleted after its last use, as the array
    would be freed in the user's own code. `names` ({Variable: name}) gives chosen names to
    some values (``value``, ``da``); the others are named after `tapegrad.numbering`, as the
    dumps name them: ``v4`` for ``%4``, ``pb4`` for ``pb%4``.

    Examples
    --------
    >>> import tapegrad
    >>> _, tape = tapegrad.trace(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> print(tapegrad.program.to_source(tape, "f"))
    def f(fn, a, b):
        v4 = b * b
        v5 = a + v4
        v6 = a / v5
        return v6
    """
    w = _writer or _Writer(tape)
    shown = numbering(tape)
    params, lines = [], []
    dead_after = _last_uses(tape, set(outputs or ()) | {tape.result})
    packed = _final_build(tape) if outputs is None else None
    for i, op in enumerate(tape.ops):
        if op is packed:
            continue  # written as the return statement's literal
        note = named_note(op.note, shown)
        if type(op) is Input:
            pname = w.fresh(note if note else ("fn" if op.id == 1 else f"x{op.id}"))
            w.names[op.var] = pname
            params.append(pname)
            continue
        vname = w.fresh((names or {}).get(op.var) or source_name(shown[op.var]))
        w.names[op.var] = vname
        if type(op) is Constant:
            text = f"{vname} = {w.value(op.val)}"
        elif type(op) is Call and op.fn in GUARDS:
            text = w.call(op)
        else:
            text = f"{vname} = {w.call(op)}"
        if note:
            text = f"{text}  # {_comment(note)}"
        if type(op) is Call and type(op.fn) is not Variable:
            # what numpy's warning on this line names (``divide by zero encountered in log``):
            # the program's line 1 is its ``def``
            w.operations[len(lines) + 2] = short_name(op.fn)
        lines.append(text)
        if i in dead_after:
            lines.append("del " + ", ".join(w.names[v] for v in sorted(dead_after[i], key=lambda v: v.id)))
    if packed is not None:
        ret = _literal(w, packed.args[0], iter(packed.args[1:]), top=True)
    elif outputs is None:
        ret = w.names[tape.result] if tape.result is not None else "None"
    else:
        ret = "(" + ", ".join(w.names[v] for v in outputs) + ("," if len(outputs) == 1 else "") + ")"
    body = "\n".join("    " + line for line in lines + [f"return {ret}"])
    return f"def {name}({', '.join(params)}):\n{body}"


def _final_build(tape):
    """The op packing a structured result, when it is the tape's last op and nothing else reads it.

    Its tuple / list / dict is then written as a literal in the return statement
    (``return v6, (v10, v12)``), so that the program reads as a student would write it; the
    structure machinery remains only for the parts a literal cannot say (a `Tangent`, a
    dataclass, a named tuple, a part shared between two places).
    """
    if not tape.ops or tape.result is None:
        return None
    op = tape.ops[-1]
    if (type(op) is not Call or op.var is not tape.result or op.fn is not build or op.kwargs
            or not op.args or not isinstance(op.args[0], Spec)):
        return None
    return op


def _shared(spec) -> bool:
    """True when a part of `spec` stands in two places (`build` gives both the same object)."""
    seen, stack = set(), [spec]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            return True
        seen.add(id(s))
        stack.extend(s.children)
    return False


def _literal(w, spec, leaves, top=False):
    """The source of the value `spec` packs from the next of `leaves` (an iterator of op arguments):
    tuples, lists and dicts as literals, any other part as a `build` of its own."""
    if spec.kind == "leaf":
        return w.value(next(leaves))
    plain = ((spec.kind == "seq" and spec.cls in (tuple, list))
             or (spec.kind == "dict" and all(type(k) in (str, int) for k in spec.keys)))
    if not plain or (top and _shared(spec)):
        items = [w.value(next(leaves)) for _ in range(len(spec_leaves(spec)))]
        return f"{w.bind(build, 'build')}({', '.join([w.bind(spec, 'structure')] + items)})"
    if spec.kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_literal(w, c, leaves)}" for k, c in zip(spec.keys, spec.children)) + "}"
    items = [_literal(w, c, leaves) for c in spec.children]
    if spec.cls is list:
        return "[" + ", ".join(items) + "]"
    if len(items) == 1:
        return f"({items[0]},)"
    return ", ".join(items) if top and items else f"({', '.join(items)})"


def _comment(note):
    """A note as the text of a comment: notes are data (a file name may hold a newline), so
    control characters are written escaped and can never end the comment."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], note)


_CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def compile_tape(tape, name: str = "replay", outputs=None, names=None):
    """Compile the tape to a Python function (see `to_source`); ``fn.__source__`` is its text.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> _, tape = tapegrad.trace(lambda x: np.sin(x) * 2, 0.5)
    >>> fn = tapegrad.program.compile_tape(tape)
    >>> bool(fn(None, 1.0) == np.sin(1.0) * 2)
    True
    """
    return compile_source(*source_and_namespace(tape, name, outputs, names), name)


def source_and_namespace(tape, name: str = "replay", outputs=None, names=None):
    """``(source, namespace)``: `to_source`'s text and the objects its names are bound to, the
    first half of `compile_tape` (the second is `compile_source`). Neither holds the tape:
    a program can wait for its compile without keeping the tape's values alive."""
    w = _Writer(tape)
    src = to_source(tape, name, outputs, _writer=w, names=names)
    return src, dict(w.namespace)


def compile_source(src: str, namespace: dict, name: str = "replay", code=None):
    """The function `name` that `src` defines, run in `namespace`; ``fn.__source__`` is `src`.
    `code` is `src` compiled already (`compile_code`: by another process, and sent)."""
    exec(compile_code(src, name) if code is None else code, namespace)  # noqa: S102 - our own generated source
    fn = namespace[name]
    fn.__source__ = src
    return fn


def compile_code(src: str, name: str = "replay"):
    """`src` compiled, as `compile_source` runs it (the file name tracebacks show is the program's)."""
    return compile(src, f"<tapegrad {name}>", "exec")

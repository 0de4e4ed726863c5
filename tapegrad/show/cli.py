"""``python -m tapegrad EXPRESSION NAME=VALUE ...``: trace and differentiate an expression.

The expression is parsed with `ast` and checked against a whitelist (numbers, the given
names, ``+ - * / **``, unary minus, and a list of numpy functions); anything else is refused
with a message naming what is allowed. It is never evaluated as Python code: a small
interpreter walks the checked tree (with a loop: no depth of nesting meets the recursion
limit) and calls the numpy functions itself. Integer constants are folded exactly, as Python
ints (``2**64 + a`` adds 2**64, which int64 would wrap to 0), up to `MAX_CONSTANT_BITS`. Bad
input and bad values (a duplicate name, shapes that do not broadcast, overflow, log(0)) are
one-line errors with exit status 2.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import sys
import unicodedata

import numpy as np

from ..grad import pullback
from ..program.compiled import compiled_grad
from ..tracing import trace
from .drawing import to_dot
from .explain import explain_text
from .printing import format_tape
from .svg import to_svg
from .viewer import to_html

__all__ = ["main", "parse_expression", "FUNCTIONS"]

FUNCTIONS = {
    name: getattr(np, name)
    for name in ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                 "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
                 "abs", "sum", "mean", "prod", "maximum", "minimum", "hypot", "arctan2")
}
CONSTANTS = {"pi": np.pi, "e": np.e}
_BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
           ast.Pow: np.power}
_UNARY = {ast.USub: np.negative, ast.UAdd: np.positive}


class ExpressionError(ValueError):
    """The expression uses something outside the whitelist."""


def _allowed() -> str:
    return (f"numbers, the names given as NAME=VALUE, {', '.join(CONSTANTS)}, the operators "
            f"+ - * / ** and unary -, parentheses, and the functions {', '.join(sorted(FUNCTIONS))}")


def _check(node, names):
    """Refuse any node outside the whitelist (walking the tree with a loop, not recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Expression):
            stack.append(n.body)
        elif isinstance(n, ast.BinOp) and type(n.op) in _BINARY:
            stack += [n.left, n.right]
        elif isinstance(n, ast.UnaryOp) and type(n.op) in _UNARY:
            stack.append(n.operand)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FUNCTIONS \
                and not n.keywords:
            _check_arguments(n)
            stack += n.args
        elif isinstance(n, ast.Name) and (n.id in names or n.id in CONSTANTS):
            continue
        elif isinstance(n, ast.Constant) and type(n.value) in (int, float):
            continue
        else:
            what = ast.unparse(n) if hasattr(ast, "unparse") else type(n).__name__
            if isinstance(n, ast.Name):
                raise ExpressionError(f"unknown name {n.id!r}: give it a value as {n.id}=VALUE. "
                                      f"Allowed: {_allowed()}")
            raise ExpressionError(f"{what!r} is not allowed in an expression. Allowed: {_allowed()}")


#: the reductions, which take an array and, after it, an integer axis (sum(a, 0))
_REDUCTIONS = ("sum", "mean", "prod")


def _check_arguments(call):
    """Refuse a call with a number of arguments its function does not take as the expression
    means it: numpy's sin(a, a) would take the second a as out=, the array to write into."""
    name, args = call.func.id, call.args
    text = ast.unparse(call) if hasattr(ast, "unparse") else name + "(...)"
    if name in _REDUCTIONS:
        axis = args[1] if len(args) == 2 else None
        if isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub):
            axis = axis.operand
        if len(args) == 1 or (isinstance(axis, ast.Constant) and type(axis.value) is int):
            return
        raise ExpressionError(f"{name}() takes an array and, after it, an optional integer axis "
                              f"({name}(a) or {name}(a, 0)); {text!r} gives {len(args)} argument"
                              f"{'s' if len(args) != 1 else ''}")
    n = FUNCTIONS[name].nin
    if len(args) != n:
        out = (f": a further argument of numpy's {name} would be out=, the array it writes into"
               if len(args) > n else "")
        raise ExpressionError(f"{name}() takes {n} argument{'s' if n != 1 else ''}; {text!r} gives "
                              f"{len(args)}{out}")


#: the largest integer constant the command line folds exactly (a float64 holds about 2**1024)
MAX_CONSTANT_BITS = 1100


def _fold(op, a, b):
    """``a op b`` for two constants, exactly for integers (Python's ints do not wrap around as
    numpy's int64 does: 2**64 stays 2**64)."""
    if type(a) is int and type(b) is int:
        if op is np.power and b >= 0:
            if abs(a) > 1 and b * abs(a).bit_length() > MAX_CONSTANT_BITS:
                raise ExpressionError(f"the constant {a}**{b} is too large (more than "
                                      f"{MAX_CONSTANT_BITS} bits)")
            return a ** b
        if op is np.multiply and a and b and a.bit_length() + b.bit_length() > MAX_CONSTANT_BITS:
            raise ExpressionError("an integer constant of the expression is too large")
        if op in (np.add, np.subtract, np.multiply):
            return {np.add: a + b, np.subtract: a - b, np.multiply: a * b}[op]
    try:
        a, b = _number(a), _number(b)
        return {np.add: a + b, np.subtract: a - b, np.multiply: a * b}[op] if op in (
            np.add, np.subtract, np.multiply) else (a / b if op is np.divide else a ** b)
    except ZeroDivisionError:
        raise ExpressionError("division by zero in a constant of the expression") from None
    except OverflowError:
        raise ExpressionError("a constant of the expression overflows a float64") from None


def _number(v):
    """A constant as numpy sees it: an integer that does not fit an int64 as the nearest float."""
    if type(v) is int and not -2**63 <= v < 2**63:
        try:
            return float(v)
        except OverflowError:
            raise ExpressionError(f"the integer constant {v} is too large for a float64") from None
    return v


def _is_constant(v):
    return type(v) in (int, float)


def parse_expression(text: str, names):
    """A function of `names` computing the expression, after checking it against the whitelist.

    Integer constants are exact (``2**64 + a`` adds 2**64, not what int64 wraps it to), and
    the tree is walked with a loop, so a long or deeply nested expression needs no recursion.
    """
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {text!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError("the expression is nested too deeply for Python's parser; "
                              "nest it less (write a long sum as sum(...) of an array value)") from None
    _check(tree, set(names))

    def evaluate(root, env):
        # post-order on an explicit stack: (node, visited) pairs, results on `values`
        values, stack = [], [(root, False)]
        while stack:
            node, visited = stack.pop()
            if isinstance(node, ast.Expression):
                stack.append((node.body, False))
            elif isinstance(node, ast.Name):
                values.append(env[node.id] if node.id in env else CONSTANTS[node.id])
            elif isinstance(node, ast.Constant):
                values.append(node.value)
            elif not visited:
                stack.append((node, True))
                children = ([node.left, node.right] if isinstance(node, ast.BinOp) else
                            [node.operand] if isinstance(node, ast.UnaryOp) else node.args)
                stack.extend((c, False) for c in reversed(children))
            elif isinstance(node, ast.BinOp):
                b = values.pop()
                a = values.pop()
                fn = _BINARY[type(node.op)]
                values.append(_fold(fn, a, b) if _is_constant(a) and _is_constant(b)
                              else fn(_number(a), _number(b)))
            elif isinstance(node, ast.UnaryOp):
                a = values.pop()
                if _is_constant(a):
                    values.append(-a if isinstance(node.op, ast.USub) else a)
                else:
                    values.append(_UNARY[type(node.op)](a))
            else:  # a call
                n = len(node.args)
                args = [_number(v) for v in values[len(values) - n:]]
                del values[len(values) - n:]
                values.append(FUNCTIONS[node.func.id](*args))
        return values[0]

    def expression(*values):
        return evaluate(tree, dict(zip(names, values)))

    expression.__name__ = "f"
    expression.__signature__ = _signature(names)
    return expression


def _signature(names):
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])


def _value(text: str):
    parts = text.split(",")
    try:
        nums = [float(p) for p in parts]
    except ValueError:
        raise ExpressionError(f"{text!r} is not a number (or comma-separated numbers)") from None
    return nums[0] if len(nums) == 1 else np.array(nums)


def main(argv=None, out=None) -> int:
    out = sys.stdout if out is None else out
    parser = argparse.ArgumentParser(
        prog="python -m tapegrad",
        description="Trace an expression, differentiate it, and print its tapes and gradient. "
                    "With no arguments: the demo on a/(a + b*b) at a=2, b=3.",
        epilog=f"Example: python -m tapegrad \"a/(a + b*b)\" a=2 b=3 --compact. The expression "
               f"is parsed, never run as Python code; allowed: {_allowed()}. A value may be a "
               f"comma-separated list (x=1,2,3) for an array.",
    )
    parser.add_argument("expression", help="the expression, e.g. \"a/(a + b*b)\"")
    parser.add_argument("values", nargs="+", metavar="NAME=VALUE", help="a value for each name")
    show = parser.add_mutually_exclusive_group()
    show.add_argument("--compact", action="store_true", help="compact dumps (rrules folded)")
    show.add_argument("--source", action="store_true",
                      help="the gradient program (forward and backward, simplified) as Python source")
    show.add_argument("--dot", action="store_true", help="the gradient tape as Graphviz DOT")
    show.add_argument("--explain", action="store_true", help="the backward pass worked by hand")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the step-through viewer of the reverse sweep to FILE (one HTML "
                             "page, opens from disk in any browser)")
    parser.add_argument("--svg", metavar="FILE",
                        help="also write a picture of the gradient tape to FILE (SVG drawn by tapegrad; "
                             "no Graphviz needed)")
    args = parser.parse_args(argv)
    try:
        with np.errstate(divide="raise", over="raise", invalid="raise"):  # one-line errors, not warnings
            return _run(args, out)
    except ExpressionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ArithmeticError, ValueError, TypeError) as exc:
        # a value's problem (shapes that do not broadcast, log(0), overflow), said in one line
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError):
        print("error: the expression is too large or nested too deeply to differentiate here",
              file=sys.stderr)
        return 2


def _write_files(args, back, names, values, out):
    """--html and --svg: the viewer's page and the picture of the gradient tape."""
    at = ", ".join(f"{n} = {v if np.ndim(v) == 0 else list(np.ravel(v))}" for n, v in zip(names, values))
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(to_html(back, f"{args.expression} at {at}: the reverse sweep"))
        print(f"wrote the viewer to {args.html}", file=out)
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as fh:
            fh.write(to_svg(back.tape))
        print(f"wrote the picture to {args.svg}", file=out)


def _run(args, out) -> int:
    """Parse the values and the expression, and print what was asked for."""
    names, values, given = [], [], {}
    for item in args.values:
        spelled, sep, text = item.partition("=")
        if not sep or not spelled.isidentifier():
            raise ExpressionError(f"{item!r} is not NAME=VALUE")
        # Python reads the names of the expression in NFKC form ("ａ" is "a"): so are these
        name = unicodedata.normalize("NFKC", spelled)
        if name in names:
            same = ([f"{s} is {name}" for s in (given[name], spelled) if s != name])
            raise ExpressionError(f"{name} is given twice"
                                  + (f" ({' and '.join(same)}, as Python reads names in NFKC form)" if same else "")
                                  + "; give each name one value")
        given[name] = spelled
        if name in FUNCTIONS or name in CONSTANTS:
            raise ExpressionError(f"{name} is the name of a function or constant"
                                  + (f" ({spelled} is {name}, as Python reads names in NFKC form)"
                                     if spelled != name else "") + "; use another name")
        names.append(name)
        values.append(_value(text))
    f = parse_expression(args.expression, names)
    if args.explain:
        print(explain_text(f, *values), file=out)
        if not (args.html or args.svg):
            return 0
    _, tape = trace(f, *values)
    y, back = pullback(f, *values)
    seed = None if np.ndim(y) == 0 else np.ones_like(y)
    grads = back(seed)
    if args.explain:
        _write_files(args, back, names, values, out)
        return 0
    if args.source:
        print(compiled_grad(f).source(*values, seed=seed), file=out)
    elif args.dot:
        print(to_dot(back.tape), file=out)
    else:
        print(format_tape(tape, compact=args.compact), file=out)
        print(format_tape(back.tape, compact=args.compact), file=out)
    print(f"value = {y!r}", file=out)
    for name, g in zip(names, grads[1:]):
        print(f"d/d{name} = {g!r}", file=out)
    _write_files(args, back, names, values, out)
    return 0

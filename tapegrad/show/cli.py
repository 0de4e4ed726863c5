"""``python -m tapegrad EXPRESSION NAME=VALUE ...``: trace and differentiate an expression.

The expression is parsed with `ast` and checked against a whitelist (numbers, the given
names, ``+ - * / **``, unary minus, and a list of numpy functions); anything else is refused
with a message naming what is allowed. It is never evaluated as Python code: a small
interpreter walks the checked tree and calls the numpy functions itself.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import sys

import numpy as np

from ..grad import pullback
from ..program.compiled import compiled_grad
from ..context import trace
from .drawing import to_dot
from .explain import explain_text
from .printing import format_tape

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


def parse_expression(text: str, names):
    """A function of `names` computing the expression, after checking it against the whitelist."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {text!r}: {exc.msg}") from None
    _check(tree, set(names))

    def evaluate(node, env):
        if isinstance(node, ast.Expression):
            return evaluate(node.body, env)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](evaluate(node.left, env), evaluate(node.right, env))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](evaluate(node.operand, env))
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.id](*[evaluate(a, env) for a in node.args])
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else CONSTANTS[node.id]
        return node.value

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
    args = parser.parse_args(argv)
    names, values = [], []
    try:
        for item in args.values:
            name, sep, text = item.partition("=")
            if not sep or not name.isidentifier():
                raise ExpressionError(f"{item!r} is not NAME=VALUE")
            names.append(name)
            values.append(_value(text))
        f = parse_expression(args.expression, names)
    except ExpressionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.explain:
        print(explain_text(f, *values), file=out)
        return 0
    _, tape = trace(f, *values)
    y, back = pullback(f, *values)
    seed = None if np.ndim(y) == 0 else np.ones_like(y)
    grads = back(seed)
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
    return 0

"""README.md runs as pasted: every ```python block, top to bottom, in one interpreter.

The convention for README blocks (write new ones the same way):

- Every block fenced as ```python runs, in the order of the README, in one namespace, as if
  pasted one after the other into one ``python`` session (``__name__ == "__main__"``). A
  block may use what an earlier block defined, nothing else. Blocks fenced otherwise
  (```bash, ```text, plain ```) are not run: use them for shell commands and for output
  that is not produced by a block (an error message, say).
- Comment lines directly below a top-level statement, with no blank line between, are that
  statement's output: what it prints, then, for an expression, the repr of its value (what
  the interpreter would show). They are compared exactly, whole.
- A comment at the end of a top-level expression's line is the repr of its value, compared
  exactly (``tapegrad.grad(f, 2.0)    # (6.0, (...))``). On any other line a trailing
  comment is only a comment.
- A top-level expression whose value is not None must show it, as above, or be assigned:
  nothing the README shows goes unchecked. A comment meant as prose goes above its
  statement or after a blank line.
"""
import ast
import contextlib
import io
import pathlib
import re
import tokenize

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def python_blocks(text):
    """Each ```python block of `text` with the README line number of its first line."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def _trailing_comments(code):
    """Line number -> the text of a comment that ends a line holding code."""
    out = {}
    code_lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT and tok.start[0] in code_lines:
            out[tok.start[0]] = tok.string[1:].strip()
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                              tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            code_lines.add(tok.start[0])
    return out


def statements(first_line, code):
    """Each top-level statement of a block: (README line, compiled code, is_expr, expected).

    `expected` is the list of output lines the README shows for it, or None if it shows none.
    """
    tree = ast.parse(code)
    lines = code.splitlines()
    trailing = _trailing_comments(code)
    out = []
    for stmt in tree.body:
        expected = []
        n = stmt.end_lineno  # 1-based; lines[n] is the line below the statement
        while n < len(lines) and lines[n].lstrip().startswith("#") and not lines[n].startswith(" "):
            expected.append(re.sub(r"^# ?", "", lines[n]))
            n += 1
        is_expr = isinstance(stmt, ast.Expr)
        if not expected and is_expr and stmt.end_lineno in trailing:
            expected = [trailing[stmt.end_lineno]]
        ast.increment_lineno(stmt, first_line - 1)
        node = ast.Expression(stmt.value) if is_expr else ast.Module([stmt], type_ignores=[])
        compiled = compile(node, str(ROOT / "README.md"), "eval" if is_expr else "exec")
        out.append((stmt.lineno, compiled, is_expr, expected or None))
    return out


def run_readme(text):
    """Run every python block of `text` in order; fail at the first statement that differs."""
    namespace = {"__name__": "__main__"}
    ran = 0
    for first_line, code in python_blocks(text):
        for line, compiled, is_expr, expected in statements(first_line, code):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                value = eval(compiled, namespace)  # noqa: S307 - the project's own README
                if is_expr and value is not None:
                    print(repr(value))
            ran += 1
            if expected is None:
                assert not (is_expr and value is not None), (
                    f"README.md:{line}: the expression's value {value!r} is not shown; "
                    "show it in '# ' lines below it (or at the end of its line), or assign it")
                continue
            assert printed.getvalue() == "\n".join(expected) + "\n", (
                f"README.md:{line}: printed\n{printed.getvalue()}\nbut the README shows\n"
                + "\n".join(expected))
    return ran


def test_every_python_block_runs_in_order_with_the_output_shown():
    """Pasting the README's python blocks top to bottom into one interpreter prints what it shows."""
    state = np.random.get_state()
    try:
        ran = run_readme(README)
    finally:
        np.random.set_state(state)
    assert ran >= len(python_blocks(README))


def test_a_wrong_output_comment_fails():
    """The README check itself fails on output that differs, and on a value left unshown."""
    with pytest.raises(AssertionError, match="README.md:3"):
        run_readme("text\n```python\nprint(1 + 1)\n# 3\n```\n")
    with pytest.raises(AssertionError, match="README.md:3"):
        run_readme("text\n```python\n1 + 1    # 3\n```\n")
    with pytest.raises(AssertionError, match="not shown"):
        run_readme("```python\n1 + 1\n```\n")
    assert run_readme("```python\nx = 2    # prose\n\n# prose\nx + 1\n# 3\nprint(x)  # prose\n# 2\n```\n") == 3


def test_the_ci_runs_the_readmes_test_command():
    """.ci/run runs the README's test command, word for word, then the quick subset from the sdist."""
    command = re.search(r"Run the whole test suite.*?```bash\n(.*?)\n```", README, flags=re.S).group(1)
    assert f"{command} && python tools/check_sdist.py --quick" in (ROOT / ".ci" / "run").read_text()

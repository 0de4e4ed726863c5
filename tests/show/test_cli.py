"""tapegrad.show.cli: ``python -m tapegrad EXPRESSION NAME=VALUE`` prints tapes, gradients and more."""
import subprocess
import sys

import pytest

from tapegrad.show.cli import main


def test_cli_prints_tapes_and_gradient(capsys):
    """python -m tapegrad EXPR NAME=VALUE prints the tape, the gradient tape and the gradient."""
    assert main(["a/(a + b*b)", "a=2", "b=3", "--compact"]) == 0
    out = capsys.readouterr().out
    assert "  %6 = divide(%2, %5)::float64\n" in out
    assert "  _, %8, %9 = pb%6(%7)             # pullback for %6\n" in out
    assert out.endswith("value = 0.18181818181818182\nd/da = 0.0743801652892562\nd/db = -0.09917355371900827\n")


@pytest.mark.parametrize("flag, expect", [
    ("--source", "def gradient_program(fn, x, y):"),
    ("--dot", "digraph tape {"),
    ("--explain", "Backward: d%k"),
])
def test_cli_flags(flag, expect, capsys):
    """Flags switch to the Python source, the DOT text or the explainer."""
    assert main(["sin(x) * y", "x=1", "y=2", flag]) == 0
    assert expect in capsys.readouterr().out


@pytest.mark.parametrize("expr, message", [
    ("__import__('os').system('true')", "is not allowed in an expression"),
    ("x.__class__", "is not allowed in an expression"),
    ("open('f')", "is not allowed in an expression"),
    ("sin(x, out=x)", "is not allowed in an expression"),
    ("z + x", "unknown name 'z': give it a value as z=VALUE"),
    ("x +", "cannot parse"),
])
def test_cli_refuses_anything_outside_the_whitelist(expr, message, capsys):
    """The expression is parsed against a whitelist and never run as code."""
    assert main([expr, "x=1"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Allowed: numbers" in (err if "parse" not in message else "Allowed: numbers")


def test_cli_help_and_demo_run_as_commands():
    """python -m tapegrad --help documents the command; with no arguments it runs the demo."""
    out = subprocess.run([sys.executable, "-m", "tapegrad", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "NAME=VALUE" in out.stdout and "never run as Python code" in out.stdout
    demo = subprocess.run([sys.executable, "-m", "tapegrad"], capture_output=True, text=True)
    assert demo.returncode == 0 and "gradient df/da   = 0.0743801652892562" in demo.stdout
    assert demo.stdout.endswith('python -m tapegrad "a/(a + b*b)" a=2 b=3 --html sweep.html --svg tape.svg\n')


@pytest.mark.parametrize("expr, value, grad", [
    ("2**64 + a", "18446744073709551617.0", "1.0"),  # int64 would wrap 2**64 to 0
    ("10**20*a", "1e+20", "1e+20"),
    ("(2**64 + 1 - 2**64) * a", "1.0", "1.0"),  # exact: 1, not 0 as in float64
    ("2**-1 * a", "0.5", "0.5"),
    ("a * " + "-" * 1000 + "a", "1.0", "2.0"),  # a thousand nested minus signs: a*a
    ("+".join(["a"] * 1000), "1000.0", "1000.0"),
])
def test_cli_integer_constants_are_exact_and_long_input_needs_no_recursion(expr, value, grad, capsys):
    """Integer constants fold exactly as Python ints; long and deeply nested expressions give a result."""
    assert main([expr, "a=1"]) == 0
    out = capsys.readouterr().out
    expected_value = float(value)
    assert out.endswith(f"value = {expected_value!r}\nd/da = {grad}\n")


@pytest.mark.parametrize("argv, message", [
    (["9**9**9 * a", "a=1"], "error: the constant 9**387420489 is too large (more than 1100 bits)\n"),
    (["**".join(["a"] * 3000), "a=1"], "error: the expression is nested too deeply for Python's parser; nest it "
                                        "less (write a long sum as sum(...) of an array value)\n"),
    (["a", "a=1", "a=2"], "error: a is given twice; give each name one value\n"),
    (["sin", "sin=1"], "error: sin is the name of a function or constant; use another name\n"),
    (["a + b", "a=1,2,3", "b=1,2"], "error: operands could not be broadcast together with shapes (3,) (2,) \n"),
    (["exp(a)", "a=1000"], "error: overflow encountered in exp\n"),
    (["log(a)", "a=0"], "error: divide by zero encountered in log\n"),
    (["a / 0", "a=1"], "error: divide by zero encountered in divide\n"),
    (["1 / 0 * a", "a=1"], "error: division by zero in a constant of the expression\n"),
])
def test_cli_bad_input_is_one_line_with_status_2(argv, message, capsys):
    """Duplicate names, shapes that do not broadcast, overflow, log(0) and huge constants: one line, status 2."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == message


def test_cli_reads_names_in_nfkc_form_as_python_does(capsys):
    """ａ (fullwidth) in the expression is a to Python's parser: ａ=1.5 gives it its value (it was
    "unknown name 'a'"), ａ and a given both are one name given twice."""
    assert main(["ａ*2 + sin(ａ)", "ａ=1.5", "--source"]) == 0
    out = capsys.readouterr().out
    assert "def gradient_program(fn, a):" in out and out.endswith("d/da = 2.070737201667703\n")
    assert main(["a*2", "a=1.5", "ａ=2"]) == 2
    assert capsys.readouterr().err == ("error: a is given twice (ａ is a, as Python reads names in NFKC form); "
                                       "give each name one value\n")
    assert main(["a*2", "a=1", "ｐｉ=1.0"]) == 2
    assert "pi is the name of a function or constant (ｐｉ is pi" in capsys.readouterr().err


@pytest.mark.parametrize("expr, message", [
    ("sin(a, a)", "error: sin() takes 1 argument; 'sin(a, a)' gives 2: a further argument of numpy's sin would "
                  "be out=, the array it writes into\n"),
    ("maximum(a)", "error: maximum() takes 2 arguments; 'maximum(a)' gives 1\n"),
    ("exp()", "error: exp() takes 1 argument; 'exp()' gives 0\n"),
    ("sum(a, a)", "error: sum() takes an array and, after it, an optional integer axis (sum(a) or sum(a, 0)); "
                  "'sum(a, a)' gives 2 arguments\n"),
])
def test_cli_refuses_a_call_with_the_wrong_number_of_arguments(expr, message, capsys):
    """A function given more or fewer arguments than it takes is refused naming both (sin(a, a)
    said "item assignment on the scalar %2 at <frozen runpy>:88")."""
    assert main([expr, "a=1.0"]) == 2
    assert capsys.readouterr().err == message


def test_cli_reductions_take_an_integer_axis(capsys):
    """sum(a, 0) and mean(a, -1) are a reduction along an axis, as before."""
    assert main(["sum(a, 0) + mean(a, -1)", "a=1,2"]) == 0
    assert capsys.readouterr().out.endswith("value = 4.5\nd/da = array([1.5, 1.5])\n")

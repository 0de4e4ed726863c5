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
    assert "  _, %15, %16 = [%14] = %12(%13)   # pullback for %11\n" in out
    assert out.endswith("value = 0.18181818181818182\nd/da = 0.0743801652892562\nd/db = -0.09917355371900827\n")


@pytest.mark.parametrize("flag, expect", [
    ("--source", "def gradient_program(fn, x, y):"),
    ("--dot", "digraph tape {"),
    ("--explain", "Backward: ȳk"),
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

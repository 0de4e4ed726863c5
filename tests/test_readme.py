"""The README's examples print what the README says they print."""
import contextlib
import io
import pathlib
import re

README = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def _run_block(code, namespace):
    """Run a README block; return the text it prints and the text its comments promise."""
    promised = []
    lines = []
    for line in code.splitlines():
        m = re.match(r"^# ?(.*)$", line)
        if m and lines and not line.startswith("# -"):
            promised.append(m.group(1))
        else:
            lines.append(line)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec("\n".join(lines), namespace)  # noqa: S102 - the project's own README
    return out.getvalue(), promised


def test_tour_blocks_print_the_tapes_shown():
    """The tour's trace and compact gradient tape are printed exactly as the README shows them."""
    namespace = {}
    checked = 0
    for code in BLOCKS[:2]:
        printed, promised = _run_block(code, namespace)
        tape_lines = [p for p in promised if p.startswith(("Tape", "  "))]
        if tape_lines:
            assert "\n".join(tape_lines) + "\n" in printed
            checked += 1
    assert checked == 2


def test_polynomial_and_closure_examples():
    """The structures example gives the gradients written next to it."""
    import numpy as np

    import tapegrad

    namespace = {"np": np, "tapegrad": tapegrad}  # no __name__: classes get module "builtins"
    block = next(b for b in BLOCKS if "class Polynomial" in b)
    exec(block, namespace)  # noqa: S102
    assert repr(namespace["dmodel"]) in block
    assert repr(tapegrad.grad(namespace["f"], 2.0)) in block


def test_compiled_program_block_prints_the_source_shown():
    """The compiled_grad example prints exactly the program the README shows."""
    block = next(b for b in BLOCKS if "compiled_grad(lambda a, b" in b)
    printed, promised = _run_block(block, {"tapegrad": __import__("tapegrad")})
    assert printed == "\n".join(promised) + "\n"


def test_fft_and_stats_example_checks_its_gradient():
    """The numpy.fft / scipy.stats example runs, and its check_grad (central differences) passes."""
    block = next(b for b in BLOCKS if "def smooth_loss" in b)
    namespace = {}
    exec(block, namespace)  # noqa: S102 - check_grad inside raises when the gradient is wrong
    assert namespace["dx"].shape == (8,) and namespace["dkernel"].shape == (3,)

"""The notebooks run from top to bottom and print what the text around them says."""
import functools
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@functools.lru_cache(maxsize=None)
def run(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def stdout_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_without_errors(path):
    """Every notebook executes with no cell raising."""
    nb = run(path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


def test_tracing_notebook_shows_the_worked_tapes():
    """The tracing notebook prints the a/(a+b*b) tape and the g/h tape of three calls."""
    nb = run(NOTEBOOKS[0])
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert stdout_of(code[0]) == (
        "0.18181818181818182\n"
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64   # a\n"
        "  inp %3::float64   # b\n"
        "  %4 = multiply(%3, %3)::float64\n"
        "  %5 = add(%2, %4)::float64\n"
        "  %6 = divide(%2, %5)::float64\n"
    )
    assert stdout_of(code[1]).splitlines()[4:] == [
        "  %4 = multiply(%2, %3)::float64",
        "  %5 = sin(%2)::float64",
        "  %6 = add(%4, %5)::float64",
    ]
    assert stdout_of(code[2]) == "0.2 0.2\n"
    assert "  %3 = softplus(%2)::float64\n" in stdout_of(code[3])

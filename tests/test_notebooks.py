"""The notebooks run from top to bottom, print what the text around them says, and are stored
with the outputs that a run gives now.

The source of each notebook is the percent-format file notebooks/NAME.py; the .ipynb beside
it holds the same cells, executed (tools/notebooks.py writes it). Each notebook is executed
once here, from its .py, in a Jupyter kernel through nbclient; the tests compare its outputs
with the stored ones cell by cell and read the outputs of named cells (the name is the
cell's id). Two notebooks are also run in this process with an optional dependency hidden
(matplotlib, Graphviz), to check that they still work without it.
"""
import ast
import contextlib
import functools
import html
import importlib.util
import io
import pathlib
import re
import shutil
import sys

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
jupytext = pytest.importorskip("jupytext")

ROOT = pathlib.Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NAMES = [
    "01_tracing.ipynb",
    "02_build_your_own_ad.ipynb",
    "03_pullbacks_and_closures.ipynb",
    "04_pullback_and_accumulation.ipynb",
    "05_dual_numbers.ipynb",
    "06_ssa_simplify_prune.ipynb",
    "07_reading_a_gradient.ipynb",
    "08_solvers.ipynb",
]
FLOAT = r"[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?"
#: this module's tests stay together and in pytest's order (tests/_schedule.py): each notebook is
#: executed once per process (`run`) and read by several tests, which split across the workers
#: executed it twice
SHARED_SETUP = True


def load_tool():
    spec = importlib.util.spec_from_file_location("notebooks_tool", ROOT / "tools" / "notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = load_tool()


def source_of(name):
    return (ROOT / "notebooks" / name).with_suffix(".py")


@functools.lru_cache(maxsize=None)
def run(name):
    path = source_of(name)
    return TOOL.execute(TOOL.read_source(path), path)


def stored(name):
    return nbformat.read(ROOT / "notebooks" / name, as_version=4)


def outputs(name):
    """``{cell id: printed text}`` of the executed notebook's code cells."""
    return {c.id: stdout_of(c) for c in run(name).cells if c.cell_type == "code"}


def stdout_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def floats(text):
    return [float(x) for x in re.findall(FLOAT, text)]


# --- every notebook ---


@pytest.fixture(scope="module", params=NAMES)
def name(request):
    """Each notebook's name, a module-scoped parameter: pytest runs every test of one notebook
    before the next, so that xdist, moving the module's tail to the other worker, executes at
    most one notebook in both."""
    return request.param



def test_every_notebook_has_its_source_beside_it():
    """Each .ipynb has its percent-format .py, and no .py is left without its notebook."""
    assert [p.name for p in NOTEBOOKS] == NAMES
    assert sorted(p.name for p in (ROOT / "notebooks").glob("*.py")) == [
        n.replace(".ipynb", ".py") for n in NAMES]


def test_stored_notebook_has_the_cells_of_its_source(name):
    """The .ipynb holds the .py's cells, in order, with the same ids: run tools/notebooks.py after an edit."""
    source, nb = TOOL.read_source(source_of(name)), stored(name)
    assert [(c.id, c.cell_type, c.source) for c in nb.cells] == [
        (c.id, c.cell_type, c.source) for c in source.cells], (
        f"notebooks/{name} is stale: run python tools/notebooks.py {name[:2]}")
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"


def test_stored_outputs_are_what_the_notebook_prints_now(name):
    """Every code cell is stored executed, and a fresh run prints the same (addresses and picture bytes aside)."""
    fresh = {c.id: c for c in run(name).cells}
    for cell in stored(name).cells:
        if cell.cell_type != "code":
            continue
        assert cell.execution_count is not None, f"{name}: cell {cell.id} is stored unexecuted"
        assert TOOL.normalize(cell.outputs) == TOOL.normalize(fresh[cell.id].outputs), (
            f"{name}: cell {cell.id} prints something else now: run python tools/notebooks.py {name[:2]}")


def test_a_notebook_from_elsewhere_gets_its_source_with_the_cell_names(tmp_path):
    """--from-ipynb writes the .py of a notebook: named code cells keep their names, outputs go."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                         nbformat.v4.new_code_cell("print(1)"),
                                         nbformat.v4.new_code_cell("x = 2")])
    nb.cells[0].id, nb.cells[1].id, nb.cells[2].id = "c00", "first-print", "c02"
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nbformat.write(nb, tmp_path / "08_new.ipynb")
    TOOL.source_from_ipynb(tmp_path / "08_new.ipynb")
    text = (tmp_path / "08_new.py").read_text()
    assert text.endswith('# %% [markdown]\n# # Title\n\n# %% name="first-print"\nprint(1)\n\n# %%\nx = 2\n')
    back = TOOL.read_source(tmp_path / "08_new.py")
    assert [(c.id, c.source) for c in back.cells] == [("c00", "# Title"), ("first-print", "print(1)"), ("c02", "x = 2")]


def test_normalize_blanks_addresses_and_pictures_only():
    """Two runs differ in memory addresses, picture bytes and how a print is cut into pieces;
    any other change is a difference."""
    a = [{"output_type": "stream", "name": "stdout", "text": "<f at 0x7f3a2b1c9d40> 1.5\n"},
         {"output_type": "display_data", "data": {"image/png": "iVBORw0K", "text/plain": "<Figure>"}}]
    b = [{"output_type": "stream", "name": "stdout", "text": "<f at 0x7f00000000aa> 1.5\n"},
         {"output_type": "display_data", "data": {"image/png": "AAAA", "text/plain": "<Figure>"}}]
    assert TOOL.normalize(a) == TOOL.normalize(b) == (
        "[stdout]\n<f at 0x…> 1.5\n\n[display_data image/png]\n<picture>\n[display_data text/plain]\n<Figure>")
    b[0]["text"] = "<f at 0x7f00000000aa> 1.6\n"
    assert TOOL.normalize(a) != TOOL.normalize(b)
    one = [{"output_type": "stream", "name": "stdout", "text": "nan nan\n"}]
    two = [{"output_type": "stream", "name": "stdout", "text": "nan"},
           {"output_type": "stream", "name": "stdout", "text": " nan\n"}]
    assert TOOL.normalize(one) == TOOL.normalize(two) == "[stdout]\nnan nan\n"


def test_notebook_is_short_and_ends_with_an_exercise(name):
    """Prose and small code cells in turn, ending with an exercise for the student."""
    nb = TOOL.read_source(source_of(name))
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    assert nb.cells[-1].cell_type == "markdown" and "**Exercise.**" in nb.cells[-1].source
    assert 5 <= len(code) <= 16
    assert all(len(c.source.splitlines()) <= 40 for c in code)


def test_notebook_runs_without_errors(name):
    """Every notebook executes with no cell raising."""
    nb = run(name)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


# --- 1. tracing ---


@pytest.mark.parametrize("name", [NAMES[0]], indirect=True)
def test_tracing_notebook_shows_the_worked_tapes(name):
    """The a/(a+b*b) tape, its ops, the g/h tape of three calls, replay, softplus kept whole."""
    out = outputs(name)
    assert out["trace-f"] == (
        "0.18181818181818182\n"
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64   # a\n"
        "  inp %3::float64   # b\n"
        "  %4 = multiply(%3, %3)::float64\n"
        "  %5 = add(%2, %4)::float64\n"
        "  %6 = divide(%2, %5)::float64\n"
    )
    assert out["ops"] == (
        "[%1, %2, %3]\n"
        "Call divide (%2, %5) 0.18181818181818182\n"
        "Tape of 6 ops: 3 inputs, 3 primitives\n"
        "  most used: multiply x1, add x1, divide x1\n"
    )
    assert out["nested"].splitlines()[4:] == [
        "  %4 = multiply(%2, %3)::float64",
        "  %5 = sin(%2)::float64",
        "  %6 = add(%4, %5)::float64",
    ]
    assert out["replay"] == "0.2 0.2\n"
    traced_through, kept_whole = out["context"].split("Tape\n")[1:]
    assert "  %5 = log(%4)::float64\n" in traced_through and "softplus" not in traced_through
    assert "  %3 = softplus(%2)::float64\n" in kept_whole


# --- 2. build your own AD ---


@pytest.mark.parametrize("name", [NAMES[1]], indirect=True)
def test_build_your_own_ad_notebook_runs_the_sweep_by_hand(name):
    """Rules run forward then backward last-first; step_back adds the second share of x."""
    out = outputs(name)
    assert out["talking-rule"] == (
        "talking_square_rrule\n"
        "forward:  square(1.5)\n"
        "forward:  square(2.25)\n"
        "backward: the pullback of square(2.25) receives dy = 1.0\n"
        "backward: the pullback of square(1.5) receives dy = 4.5\n"
        "5.0625 13.5\n"
    )
    assert out["step-back"].splitlines()[:3] == [
        "start:                {%4: %5}",
        "after step_back(%4): {%4: %5, %2: %6, %3: %7}",
        "after step_back(%3): {%4: %5, %2: %9, %3: %7}",
    ]
    assert out["step-back"].endswith("  %9 = accum(%6, %8)::float64   # accumulate d%2\n")
    assert "  %15 = accum(%13, %14)::float64   # accumulate d%3\n" in out["back"]
    a, b = floats(out["back"].splitlines()[0])
    a2, b2 = floats(out["seed-2"])
    assert (a, b) == (0.0743801652892562, -0.09917355371900827) and (a2, b2) == (2 * a, 2 * b)
    set_only, set_or_add, by_hand = floats(out["set-only"])
    assert set_or_add == pytest.approx(np.sin(0.5) + 0.5 * np.cos(0.5), rel=1e-15) == by_hand
    assert set_only == pytest.approx(0.5 * np.cos(0.5), rel=1e-15)  # the share through sin only


@pytest.mark.parametrize("name", [NAMES[1]], indirect=True)
def test_build_your_own_ad_notebook_shows_the_viewer(name):
    """Notebook 2 shows the step-through viewer of x · sin(x), its page in an iframe."""
    cell = next(c for c in stored(name).cells if c.id == "viewer")
    (result,) = cell.outputs
    page = result["data"]["text/html"]
    assert page.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    inner = html.unescape(page)
    assert "<title>g(x) = x · sin(x) at x = 0.5: the reverse sweep</title>" in inner
    assert '"kind": "add", "target": "%2", "adjoint": "d%2", "formula": "d%3 · cos(%2)"' in inner
    assert result["data"]["text/plain"] == "<tapegrad viewer: g(x) = x · sin(x) at x = 0.5: the reverse sweep, 15 ops>"


# --- 3. pullbacks and closures ---


@pytest.mark.parametrize("name", [NAMES[2]], indirect=True)
def test_pullbacks_notebook_shows_the_loop_adjoint_and_finds_the_wrong_rule(name):
    out = outputs(name)
    assert out["sin-jacobian"].endswith("True\n")
    raw, evaluated = out["multiply"].splitlines()
    assert raw.startswith("(NoTangent(), ") and evaluated == "NoTangent() [3. 3.] [3.]"
    assert (out["power"]) == (
        "(8.0, (ZeroTangent(), 12.0, NoTangent()))\n"
        "Tape\n"
        "  inp %1::function power\n"
        "  inp %2::float64                  # x\n"
        "  inp %3::int64                    # n\n"
        "  guard index(%3) == 3             # cell line 3\n"
        "  %5, pb%5 = rrule(multiply, 1.0, %2)::float64\n"
        "  %6, pb%6 = rrule(multiply, %5, %2)::float64\n"
        "  %7, pb%7 = rrule(multiply, %6, %2)::float64\n"
        "  const %8 = 1.0                   # seed\n"
        "  _, %9, %10 = pb%7(%8)            # pullback for %7\n"
        "  _, %11, %12 = pb%6(%9)           # pullback for %6\n"
        "  %13 = accum(%10, %12)::float64   # accumulate d%2\n"
        "  _, _, %14 = pb%5(%11)            # pullback for %5\n"
        "  %15 = accum(%13, %14)::float64   # accumulate d%2\n"
    )
    assert out["guard"].startswith("125.0\nGuardError: guard %4 (index(%3) == 3)")
    assert out["closure"].splitlines()[:2] == ["6.0 Tangent[function](a=2.0) 3.0", "2.0 {'a': 2.0}"]
    assert "  inp %2::float64   # f.a\n" in out["closure"]
    assert out["check-loss"].startswith("loss           FAILS: reverse mode gives")
    failing = [line.split()[:2] for line in out["narrow"].splitlines() if "FAILS" in line]
    assert failing == [["%10", "logistic"]] and out["narrow"].count(" ok\n") == 6
    lines = out["fixed"].splitlines()
    assert lines[:2] == ["logistic       ok", "loss           ok"]
    reverse, central = floats(lines[2])
    assert reverse == pytest.approx(central, rel=1e-7)


# --- 4. pullback and accumulation ---


@pytest.mark.parametrize("name", [NAMES[3]], indirect=True)
def test_pullback_notebook_accumulates_and_trains(name):
    out = outputs(name)
    assert out["pullback"] == (
        "0.18181818181818182\n"
        "(ZeroTangent(), 0.0743801652892562, -0.09917355371900827)\n"
        "(ZeroTangent(), 0.1487603305785124, -0.19834710743801653)\n"
    )
    assert out["zero"] == "(ZeroTangent(), 4.0, ZeroTangent())\n%2 x 4.0\n%3 y None\n"
    assert out["accum"].splitlines()[:3] == ["2.5 2.5 2.5 ZeroTangent()", "(1.0, 2.0)",
                                             "{'w': 4.0, 'unused': ZeroTangent()}"]
    assert out["structured-results"] == f"2.0 {float(np.cos(1.0))} {2.0 + float(np.cos(1.0))}\n10.0\n"
    assert "returned a dict, so the gradient taken at" in out["seed-error"]
    assert out["dict-params"].startswith("11.5 {'w': array([3., 4.]), 'b': 1.0} [1. 2.]\n")
    assert '  inp %3::float64      # p["b"]\n' in out["dict-params"]
    assert out["polynomial"] == (
        "Tangent[Polynomial](weights=array([  84.,  288., 1056., 3996.]))\n"
        "[  84.  288. 1056. 3996.]\n"
    )
    first, last, ratio = floats(out["training"].splitlines()[0])
    assert first / last > 10 and ratio > 10  # the loss falls at least 10x
    weights = floats(out["training"].splitlines()[1])
    np.testing.assert_allclose(weights, [1.0, -2.0, 0.5, 1.0], atol=0.05)


@pytest.mark.parametrize("name", [NAMES[3]], indirect=True)
def test_pullback_notebook_plots_the_loss(name):
    """With matplotlib the plot cell shows a PNG; without it, it prints the losses."""
    plot = next(c for c in run(name).cells if c.id == "plot")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "step   0  loss" in stdout_of(plot)
    else:
        assert any("image/png" in o.get("data", {}) for o in plot.outputs)


# --- 5. dual numbers ---


@pytest.mark.parametrize("name", [NAMES[4]], indirect=True)
def test_dual_numbers_notebook_agrees_three_ways(name):
    out = outputs(name)
    assert out["dual"] == "Dual(0.2397127693021015, 0.9182168195493894)\n0.2397127693021015 0.9182168195493894\n"
    table = out["three-ways"].splitlines()
    assert len(table) == 4 and table[-1].endswith("agree to 1e-10: True")
    for line in table[:3]:
        dual, hand, by_grad = floats(line)
        assert dual == pytest.approx(by_grad, rel=1e-10) and hand == pytest.approx(by_grad, rel=1e-10)
    assert floats(out["by-dual"]) == [floats(line)[0] for line in table[:3]]
    assert out["solve"] == "Dual(array([0.1, 0.6]), array([-0.18,  0.12]))\n[0.1 0.6] [-0.18  0.12]\n"
    assert out["formula-at-0"] == "nan nan\n"
    assert out["thin-plate"] == "r = 0.0: value 0.0, slope 0.0\nr = 1.0: value 0.0, slope 1.0\n"


# --- 6. SSA, simplify, prune ---


@pytest.mark.parametrize("name", [NAMES[5]], indirect=True)
def test_ssa_notebook_simplifies_and_prunes_the_gradient_program(name):
    out = outputs(name)
    assert "  %7 = multiply(1.0, %3)::float64\n" in out["traced-grad"]
    assert out["explain"].endswith("Gradient: ∂f/∂m = d%2 = 3, ∂f/∂x = d%3 = 2, ∂f/∂b = d%4 = 1\n")
    assert out["simplify-prune"] == (
        "def df(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    v6 = v5 + b\n"
        "    v7 = 1.0 * x\n"
        "    v8 = 1.0 * m\n"
        "    return ZERO, v7, v8, 1.0\n"
        "def df(fn, m, x, b):\n"
        "    return ZERO, x, m, 1.0\n"
        "6 lines -> 2 lines\n"
    )
    assert out["compiled-tape"] == "(ZeroTangent(), 3.0, 2.0, 1.0) (ZeroTangent(), -1.0, 5.0, 1.0)\n"
    raw, after_cse, optimized = out["cse"].split("def dg(fn, x):\n")[1:]
    assert len(raw.splitlines()) > len(after_cse.splitlines()) > len(optimized.splitlines())
    assert raw.count("np.sin(x)") == 2 and after_cse.count("np.sin(x)") == 1
    assert optimized.count("np.cos(x)") == 1 and len(optimized.splitlines()) == 6
    assert out["compiled-grad"] == (
        "(7.0, (ZeroTangent(), 3.0, 2.0, 1.0))\n"
        "(-5.0, (ZeroTangent(), -1.0, 5.0, 1.0))\n"
        "def gradient_program(fn, m, x, b):\n"
        "    v5 = m * x\n"
        "    value = v5 + b\n"
        "    return value, (x, m, 1.0)\n"
    )
    assert 'shape=diamond' in out["draw"]
    draw = next(c for c in run(name).cells if c.id == "draw")
    shown = [o for o in draw.outputs if o.output_type == "execute_result"]
    assert len(shown) == 1 and "<svg" in shown[0]["data"]["image/svg+xml"]


# --- 7. reading a gradient of real code ---


@pytest.mark.parametrize("name", [NAMES[6]], indirect=True)
def test_reading_a_gradient_notebook_reads_the_network_five_ways(name):
    """Tape, explain with matmul formulas and broadcast sums, an SVG picture, a program ending in
    a plain return of the value and a dict gradient, and a finite-difference check that agrees."""
    out = outputs(name)
    assert "  %6 = matmul(array(float64[4,2]), %2)::float64[4,3]\n" in out["tape"]
    explain = out["explain"]
    for line in ["  c1 = constant [[ 0.13, -0.13],", "  d%8 = d%9 · %4ᵀ = ", "  d%4 = %8ᵀ · d%9 = ",
                 "  d%2 = c1ᵀ · d%6 = ", "  d%3 = d%7, summed over axis 0, broadcast in the forward pass = ",
                 "  d%5 = d%10, summed over axes 0, 1, broadcast in the forward pass = "]:
        assert "\n" + line in explain
    draw = next(c for c in run(name).cells if c.id == "draw")
    shown = [o for o in draw.outputs if o.output_type == "execute_result"]
    assert len(shown) == 1 and "<svg" in shown[0]["data"]["image/svg+xml"]
    source = out["source"].splitlines()
    assert source[0] == "def gradient_program(fn, p_W1, p_b1, p_W2, p_b2):"
    assert source[-1] == "    return value, ({'W1': dp_W1, 'b1': dp_b1, 'W2': dp_W2, 'b2': dp_b2},)"
    reverse, central = floats(out["check"].splitlines()[0].split(":", 1)[1])
    assert reverse == pytest.approx(central, abs=1e-8)
    assert out["check"].endswith("check_grad: reverse and forward mode agree with central differences\n")


# --- 8. gradients through scipy's solvers ---


@pytest.mark.parametrize("name", [NAMES[7]], indirect=True)
def test_solvers_notebook_fits_lotka_volterra_and_a_ridge_penalty(name):
    """One op per solver on the tape; the root's and the integral's gradients are their closed
    forms, the adjoint's agrees with central differences, the ODE fit finds the parameters
    within the noise, and the bilevel gradient is the closed-form ridge's."""
    out = outputs(name)
    root = out["root"].splitlines()
    assert root[3] == "  %3 = implicit_solution(<brentq problem at cell line 9>, (0.0, 5.0), %2)::float64"
    assert root[4] == "0.209986841649 0.209986841649"
    assert "  %7 = ivp_solution(IvpProblem, [2., 1.], %3, %4, %5, %6)::float64[2,20]\n" in out["loss"]
    _, adjoint, central = out["loss-gradient"].splitlines()
    assert floats(adjoint) == pytest.approx(floats(central), abs=2e-5)
    fitted, true = (floats(line) for line in out["fit"].splitlines()[1:])
    assert out["fit"].startswith("True\n") and fitted == pytest.approx(true, rel=0.1)
    ours, closed = floats(out["bilevel"])
    assert ours == pytest.approx(closed, abs=1e-6) and ours != 0.0
    best, best_loss, unpenalized = floats(out["outer"])
    assert best > 0.1 and best_loss < unpenalized
    assert "  %4 = quad_value(<quad problem at cell line 3>, -inf, inf, %2, %3)::float64\n" in out["quad"]
    assert out["quad"].endswith("1.53 = 1.53\n[0.6 2.4] = (0.6, 2.4)\n")


# --- optional dependencies missing ---


def run_in_this_process(name):
    """Run a notebook's code cells here, as a kernel would, and return (stdout, shown results).

    The value of a cell's last expression is "shown" as a kernel shows it: SVG if the object
    offers it, else HTML, else its repr.
    """
    nb = TOOL.read_source(source_of(name))
    namespace = {"__name__": "__main__"}
    shown = []
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            tree = ast.parse(cell.source)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"<{name} {cell.id}>", "exec"), namespace)  # noqa: S102 - our notebooks
            if last is not None:
                value = eval(compile(ast.Expression(last.value), f"<{name} {cell.id}>", "eval"), namespace)
                if value is not None:
                    for method in ("_repr_svg_", "_repr_html_", "__repr__"):
                        text = getattr(value, method, lambda: None)()
                        if text is not None:
                            shown.append((method, text))
                            break
    return buffer.getvalue(), shown


def test_training_notebook_prints_the_losses_without_matplotlib(monkeypatch):
    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    text, _ = run_in_this_process(NAMES[3])
    steps = re.findall(rf"step +(\d+)  loss ({FLOAT})", text)
    assert [int(s) for s, _ in steps] == list(range(0, 200, 25))
    assert float(steps[0][1]) > 10 * float(steps[-1][1])


def test_drawing_notebook_shows_a_picture_without_graphviz(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    text, shown = run_in_this_process(NAMES[5])
    assert "6 lines -> 2 lines" in text
    assert len(shown) == 1 and shown[0][0] == "_repr_svg_" and ">%12 = accum</text>" in shown[0][1]

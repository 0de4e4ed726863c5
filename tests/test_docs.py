"""The documentation site builds with warnings as errors, covers every public name, and its examples run.

The build is the one docs/conf.py states: ``python -m sphinx -W -n -b html docs <out>``
(nitpicky, so a reference to a name that does not exist fails it). The guide pages'
``>>>`` examples run here as doctests.
"""
import doctest
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
import tapegrad.extend
import tapegrad.scipy

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("**/*.rst"))


def sphinx_build(source, out):
    """Build `source` into `out` as the docs are built; return (exit code, warnings)."""
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(out / ".doctrees"), str(source), str(out / "html")],
        capture_output=True, text=True, check=False)
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    code, warnings = sphinx_build(DOCS, out)
    assert (code, warnings) == (0, "")
    return out / "html"


def public_names():
    """Every name a user can reach: tapegrad.*, tapegrad.extend.*, tapegrad.show.*,
    tapegrad.program.*, tapegrad.optim.*, tapegrad.scipy.*.*, and the tape-building names in
    their modules."""
    names = [f"tapegrad.{n}" for n in tapegrad.__all__ if n not in ("extend", "scipy", "show", "program", "optim")]
    for sub in ("extend", "show", "program", "optim"):
        names += [f"tapegrad.{sub}.{n}" for n in getattr(tapegrad, sub).__all__]
    names += [f"{home}.{n}" for n, home in tapegrad.MOVED.items() if home.count(".") == 1
              and home not in ("tapegrad.extend", "tapegrad.show", "tapegrad.program")]
    for sub in tapegrad.scipy.__all__:
        names += [f"tapegrad.scipy.{sub}.{n}" for n in getattr(tapegrad.scipy, sub).__all__]
    return names


def resolve(name):
    """The object a dotted public path names (None if it names nothing)."""
    module, _, attr = name.rpartition(".")
    while module and module not in sys.modules:
        module, _, first = module.rpartition(".")
        attr = f"{first}.{attr}"
    obj = sys.modules.get(module)
    for part in attr.split("."):
        obj = vars(obj).get(part) if obj is tapegrad else getattr(obj, part, None)  # (not a moved name's warning)
    return obj


def test_every_public_name_has_an_entry_in_the_api_reference(built):
    """Each public function, class and constant is documented under its public path (or, for a
    name two modules share, under the other's)."""
    html = "".join(p.read_text() for p in (built / "api").glob("*.html"))
    documented = set(re.findall(r'<dt class="sig sig-object py[^"]*" id="([\w.]+)"', html))
    missing = []
    for name in public_names():
        short = name.rsplit(".", 1)[1]
        obj = resolve(name)
        elsewhere = [d for d in documented if d.rsplit(".", 1)[-1] == short and resolve(d) is obj]
        if name not in documented and not elsewhere:
            missing.append(name)
    assert missing == []
    assert len(documented) >= len(tapegrad.__all__)


def test_every_guide_page_is_built(built):
    """The guide has the pages the README promises, each built to HTML."""
    guide = {p.stem for p in (built / "guide").glob("*.html")}
    assert guide == {"getting-started", "tape", "viewer", "rules", "forward", "compiled", "refusals",
                     "autograd", "parallel", "solvers", "numpy-coverage"}


def test_a_broken_reference_fails_the_build(tmp_path):
    """A reference to a name that does not exist is an error, not a silent plain word."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "conf.py").write_text((DOCS / "conf.py").read_text())
    (tmp_path / "src" / "index.rst").write_text("Page\n====\n\nSee :func:`tapegrad.no_such_function`.\n")
    code, warnings = sphinx_build(tmp_path / "src", tmp_path / "out")
    assert code != 0
    assert "py:func reference target not found: tapegrad.no_such_function" in warnings


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run_as_shown(page):
    """Each >>> example of a docs page prints exactly what the page shows."""
    state = np.random.get_state()
    try:
        result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS,
                                  verbose=False, report=True)
    finally:
        np.random.set_state(state)
    assert result.failed == 0

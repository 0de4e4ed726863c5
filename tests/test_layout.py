"""The layout of the tapegrad package: imports between its modules form no cycle, sit at the top of
their module and take no private name of another module; the names of tapegrad.__all__ are public."""
import ast
import functools
import importlib
import pathlib

import pytest

import tapegrad

PACKAGE = pathlib.Path(tapegrad.__file__).parent


def module_name(path):
    """``tapegrad.program.guards`` for tapegrad/program/guards.py, ``tapegrad.show`` for tapegrad/show/__init__.py."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def tree(module):
    """The parsed source of `module`, read when a test first asks (parsing all of tapegrad at import
    would cost every worker's collection a second, and the runs that skip these tests too)."""
    return ast.parse(MODULES[module].read_text(), str(MODULES[module]))


# Deliberate exceptions to the rules below (none today): an entry says why it must stay.
#: imports inside a function body, as "module: statement"
IMPORTS_IN_FUNCTIONS = []
#: private names taken from another module, as (importing module, module imported from, name)
PRIVATE_IMPORTS = []


def imported_module(module, node):
    """The tapegrad module a `from ... import` statement in `module` reads from, or None for another package."""
    if node.level == 0:
        return node.module if node.module.split(".")[0] == "tapegrad" else None
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imported_names(module):
    """(module imported from, name) for each name a top-level `from ... import` of `module` takes from tapegrad."""
    out = []
    for node in tree(module).body:
        if isinstance(node, ast.ImportFrom) and imported_module(module, node) is not None:
            out.extend((imported_module(module, node), alias.name) for alias in node.names)
    return out


def dependencies(module):
    """The modules `module` imports at its top level; ``from .pkg import sub`` is an edge to the submodule only."""
    out = set()
    for source, name in imported_names(module):
        out.add(f"{source}.{name}" if f"{source}.{name}" in MODULES else source)
    for node in tree(module).body:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in MODULES)
    return out


def cycles(graph):
    """Each cycle a depth-first walk of `graph` ({node: nodes it points to}) closes, as the path around it."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path)
        path.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_imports_resolve_as_python_resolves_them():
    """Relative imports resolve against the importing module's package, and other packages are left out."""
    def resolve(module, statement):
        return imported_module(module, ast.parse(statement).body[0])

    assert resolve("tapegrad.program.codegen", "from ..tape import Call") == "tapegrad.tape"
    assert resolve("tapegrad.program.codegen", "from .guards import GUARDS") == "tapegrad.program.guards"
    assert resolve("tapegrad", "from .program.guards import GuardError") == "tapegrad.program.guards"
    assert resolve("tapegrad.scipy", "from . import linalg") == "tapegrad.scipy"
    assert resolve("tapegrad.__main__", "from tapegrad.show.cli import main") == "tapegrad.show.cli"
    assert resolve("tapegrad.tape", "from collections import Counter") is None
    # (tapegrad.scipy imports its submodules on first use)
    assert dependencies("tapegrad.scipy") == {"tapegrad.onimport"}


def test_cycles_finds_a_cycle_and_only_that():
    """The walk reports a loop a -> b -> c -> a once, and nothing for a graph without loops."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycles_between_modules():
    """No module of tapegrad imports, through any chain of top-level imports, a module that imports it."""
    assert cycles({module: dependencies(module) for module in MODULES}) == []


def test_no_import_inside_a_function():
    """Every import of tapegrad sits at the top level of its module, where the layout can be read."""
    found = set()
    for module in MODULES:
        for fn in ast.walk(tree(module)):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                found.update(f"{module}: {ast.unparse(node)}" for node in ast.walk(fn)
                             if isinstance(node, (ast.Import, ast.ImportFrom)))
    assert sorted(found) == IMPORTS_IN_FUNCTIONS


def test_no_module_imports_a_private_name_of_another():
    """A name starting with an underscore is used only in the module that defines it."""
    found = [(module, source, name) for module in MODULES for source, name in imported_names(module)
             if name.startswith("_") and not name.startswith("__")]
    assert sorted(found) == PRIVATE_IMPORTS


def test_public_names_exist_and_are_public():
    """Every name in tapegrad.__all__ is defined, listed once and not private."""
    names = tapegrad.__all__
    assert [n for n in names if not hasattr(tapegrad, n)] == []
    assert [n for n in names if n.startswith("_")] == []
    assert len(set(names)) == len(names)


def test_no_core_module_is_over_450_lines():
    """The core (tapegrad/*.py: tape, tracer, contexts, sweep, structures, entry points) reads
    in one sitting, a module an idea; the rule families and the subpackages grow by files."""
    long = {path.name: n for path in PACKAGE.glob("*.py")
            if (n := len(path.read_text().splitlines())) > 450}
    assert long == {}


def test_the_top_level_keeps_at_most_45_names():
    """tapegrad's own namespace is what most programs use; the pieces live in their modules."""
    assert len(tapegrad.__all__) <= 45
    assert [n for n in tapegrad.MOVED if n in tapegrad.__all__ or n in vars(tapegrad)] == []


@pytest.mark.parametrize("name", sorted(tapegrad.MOVED))
def test_a_name_that_moved_still_answers_and_says_where_it_lives(name):
    """``tapegrad.Tape`` is ``tapegrad.tape.Tape``, with a warning that names the import to write."""
    home = tapegrad.MOVED[name]
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(tapegrad, name)
    assert value is getattr(importlib.import_module(home), name)
    assert str(caught[0].message).endswith(f"write `from {home} import {name}`")
    assert caught[0].filename == __file__


def test_a_name_tapegrad_never_had_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'tapegrad' has no attribute 'no_such_name'"):
        tapegrad.no_such_name


def test_every_modules_all_names_what_it_defines():
    """Each module's __all__, where it has one, names only what the module defines or imports."""
    missing = []
    for module in MODULES:
        if module == "tapegrad.__main__":
            continue  # running it is the command line, importing it is not meant
        imported = importlib.import_module(module)
        missing += [f"{module}.{n}" for n in getattr(imported, "__all__", ()) if not hasattr(imported, n)]
    assert missing == []

"""Work that waits for a module to be imported: scipy's rules, registered when scipy's module is.

``import scipy.special``, ``scipy.stats`` and ``scipy.signal`` take 0.15–0.6 s each, more than
the rest of tapegrad with numpy; a program that never calls them should not pay for them. So
tapegrad registers the rules keyed on scipy's own functions (the scipy.special ufuncs, the
replacements in `tapegrad.scipy` that wrap scipy's functions) when the program imports scipy's
module, which it must do before it can call one of them on a traced value:

- `when_imported(name, *actions)` runs each action (a function, or the name of a module to
  import) once `name` is imported: at once when it already is, else right after the import
  that brings it in completes.
- `OnFirstUse(name)` is a module imported when one of its names is first read, for the rules
  of numpy's functions that call scipy's (np.linalg.solve's rule factors with scipy.linalg).

How an import is watched: a finder at the front of ``sys.meta_path`` sees each ``scipy.*``
and ``tapegrad.scipy.*`` module found, leaves the finding to the other finders and wraps the
loader's ``exec_module``. The actions run when the outermost such module being imported has
executed (``import scipy.stats`` imports scipy.special on its way: scipy.special's actions wait
until scipy.stats is complete, as a rule module may read names of either; ``import
tapegrad.scipy.signal`` imports scipy.signal, whose rules import tapegrad.scipy.signal), and
the finder leaves ``sys.meta_path`` once nothing waits. An action that fails is reported as a warning and does
not break the program's import.
"""
from __future__ import annotations

import importlib
import sys
import threading
import warnings

__all__ = ["when_imported", "OnFirstUse", "waiting"]

#: module name -> the actions waiting for it
_WAITING: dict = {}
_LOCK = threading.RLock()
_local = threading.local()  # .depth: scipy modules this thread is executing; .running: actions


def waiting() -> dict:
    """``{module name: [actions]}`` still waiting (a copy): empty once every watched module is in."""
    with _LOCK:
        return {name: list(actions) for name, actions in _WAITING.items()}


def _imported(name) -> bool:
    """`name` is in sys.modules and its body has run to the end."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _run(action):
    try:
        importlib.import_module(action) if isinstance(action, str) else action()
    except Exception as exc:  # (the user's import of scipy must not fail because of tapegrad)
        warnings.warn(f"tapegrad could not register its rules for scipy after scipy's import "
                      f"({getattr(action, '__qualname__', action)}: {type(exc).__name__}: {exc}); "
                      f"gradients through those scipy functions will raise NoRuleError",
                      RuntimeWarning, stacklevel=2)


def _flush():
    """Run the actions of every waited-for module now imported (and what they import in turn)."""
    if getattr(_local, "running", False):
        return  # (the loop below picks up what an action's own imports make ready)
    _local.running = True
    try:
        while True:
            with _LOCK:
                ready = [name for name in _WAITING if _imported(name)]
                actions = [a for name in ready for a in _WAITING.pop(name)]
                if not _WAITING and _FINDER in sys.meta_path:
                    sys.meta_path.remove(_FINDER)
            if not actions:
                return
            for action in actions:
                _run(action)
    finally:
        _local.running = False


def when_imported(name, *actions):
    """Run each of `actions` (functions, or names of modules to import) once module `name` is
    imported: now if it is, else right after the program's import of it completes."""
    with _LOCK:
        _WAITING.setdefault(name, []).extend(actions)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
    if _imported(name) and not getattr(_local, "depth", 0):
        _flush()


class _Watcher:
    """The finder that wraps the loading of each scipy module (see the module docstring)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_WATCHED) or getattr(_local, "finding", False):
            return None
        _local.finding = True
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is not self and find is not None:
                    spec = find(fullname, path, target)
                    if spec is not None:
                        break
            else:
                return None
        finally:
            _local.finding = False
        loader = spec.loader
        if loader is not None and hasattr(loader, "exec_module") and "exec_module" not in vars(loader):
            loader.exec_module = _executing(loader.exec_module)
        return spec

    def __repr__(self):
        return "<tapegrad.onimport watcher of scipy's modules>"


def _executing(exec_module):
    """`exec_module` that counts this thread's scipy modules in execution and, when the
    outermost is done, runs the actions that wait for what is now imported."""
    def exec_module_then_flush(module):
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            exec_module(module)
        finally:
            _local.depth -= 1
        if not _local.depth and _WAITING:
            module.__spec__._initializing = False  # (its body has run: a rule module may read it)
            _flush()
    return exec_module_then_flush


#: the modules whose execution the actions wait for: scipy's, and tapegrad.scipy's, which import
#: scipy's modules and which the rule modules an action imports import in turn
_WATCHED = ("scipy", "tapegrad.scipy")
_FINDER = _Watcher()


class OnFirstUse:
    """Module `name`, imported when one of its names is first read (``_sl = OnFirstUse("scipy.linalg")``,
    then ``_sl.lu_factor(a)`` imports scipy.linalg on the first call)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self):
        return f"<module {self._name!r}, imported on first use>"

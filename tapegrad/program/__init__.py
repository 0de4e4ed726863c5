"""The recorded program as a program: guards, Python source, rewriting passes, compiled gradients.

>>> import tapegrad
>>> _, tape = tapegrad.trace(lambda x: x * x + 1.0, 3.0)
>>> print(tapegrad.program.to_source(tape))
def replay(fn, x):
    v3 = x * x
    v4 = v3 + 1.0
    return v4

The names below are imported when first used (PEP 562): the tracer imports `guards` while
tapegrad itself is being imported, before the modules the others need exist.
"""
import importlib

_HOMES = {
    "to_source": "codegen", "compile_tape": "codegen",
    "simplify": "passes", "prune": "passes", "cse": "passes", "optimize": "passes",
    "compiled_grad": "compiled", "GuardError": "guards",
}

__all__ = list(_HOMES)


def __getattr__(name):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""The listing of every rule in the registry: the source of docs/rules.md.

For each function: its importable name, the arguments a gradient flows to (the rule's
positional parameters without a default), whether its forward rule is explicit or derived
from the reverse rule, and the first line of the rule's docstring as a note; a replacement
in ``tapegrad.scipy`` names the scipy function it stands for. The non-differentiable table
is listed after the rules.
"""
from __future__ import annotations

import importlib
import inspect

from ..errors import qualified_name
from ..registry import FRULES, NONDIFF, RULES
from ..rules import load_all
from ..scipy import stats as tg_stats

__all__ = ["rules_markdown", "rule_rows"]


def _differentiable_args(rule) -> str:
    explicit = getattr(rule, "differentiable", None)
    if explicit is not None:
        return ", ".join(explicit)
    try:
        params = inspect.signature(rule).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - every rule is a Python function
        return "?"
    names = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    star = [f"*{p.name}" for p in params if p.kind is p.VAR_POSITIONAL]
    return ", ".join(names + star) or "-"


def _note(rule) -> str:
    doc = inspect.getdoc(rule) or ""
    return doc.strip().splitlines()[0].replace("|", "\\|") if doc.strip() else ""


def _name(fn) -> str:
    return qualified_name(fn).replace("_operator.", "operator.")


def _replaced(name: str):
    """``scipy.special.logsumexp`` for ``tapegrad.scipy.special.logsumexp``: the scipy function a
    replacement in tapegrad.scipy stands for (None for a name scipy does not have)."""
    if not name.startswith("tapegrad.scipy."):
        return None
    original = name[len("tapegrad."):]
    module, _, attr = original.rpartition(".")
    try:
        return original if hasattr(importlib.import_module(module), attr) else None
    except ImportError:  # pragma: no cover - tapegrad.scipy mirrors scipy's modules
        return None


def rule_rows():
    """``[(name, differentiable arguments, forward rule, note), ...]`` sorted by name."""
    load_all()  # (the families keyed on scipy's modules, which the program may not have imported)
    rows = []
    for fn, rule in RULES.items():
        module = rule.__module__ or ""
        if not module.startswith("tapegrad") or module.startswith("tapegrad.autograd"):
            continue  # a rule registered by the user, or by the autograd layer when it is imported
        forward = "explicit" if fn in FRULES else "derived"
        name, note = _name(fn), _note(rule)
        original = _replaced(name)
        if original is not None:  # what the user looks for is scipy's name
            note = f"use for `{original}`, which cannot see traced values" + (f"; {note}" if note else "")
        rows.append((name, _differentiable_args(rule), forward, note))
    return sorted(rows)


def rules_markdown() -> str:
    """docs/rules.md: every registered rule and every non-differentiable function."""
    lines = [
        "# Rules",
        "",
        "Generated from the registry by `python tools/make_rules_doc.py`; a test keeps it in sync.",
        "Differentiable arguments are the rule's positional parameters without a default; the",
        "others (axes, flags, shapes) get no tangent. A derived forward rule is computed from the",
        "reverse rule (see `tapegrad.dual`).",
        "",
        f"## Differentiable functions ({len(rule_rows())})",
        "",
        "| function | differentiable arguments | forward rule | notes |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{n}` | {a} | {f} | {note} |" for n, a, f, note in rule_rows()]
    lines += [
        "",
        f"## scipy.stats distributions ({len(tg_stats.__all__)})",
        "",
        "scipy.stats' methods convert their inputs with `np.asarray`: use",
        "`tapegrad.scipy.stats.<distribution>.<method>` instead, written with the rules above.",
        "",
        "| distribution | methods |",
        "|---|---|",
    ]
    for name in sorted(tg_stats.__all__):
        dist = getattr(tg_stats, name)
        methods = sorted(m for m in dir(dist) if not m.startswith("_") and callable(getattr(dist, m)))
        shown = [f"{m} (plain values only)" if getattr(getattr(dist, m), "plain_values_only", False) else m
                 for m in methods]
        lines.append(f"| `tapegrad.scipy.stats.{name}` | {', '.join(shown)} |")
    nondiff = sorted(qualified_name(fn) for fn in NONDIFF)
    lines += [
        "",
        f"## Non-differentiable functions ({len(nondiff)})",
        "",
        "Recorded on tapes; a derivative reaching them stops there (they are piecewise constant",
        "or return integers and booleans).",
        "",
        ", ".join(f"`{n}`" for n in nondiff),
        "",
    ]
    return "\n".join(lines)

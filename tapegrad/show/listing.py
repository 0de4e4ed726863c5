"""The listing of every rule in the registry: the source of docs/rules.md.

For each function: its importable name, the arguments a gradient flows to (the rule's
positional parameters without a default), whether its forward rule is explicit or derived
from the reverse rule, and the first line of the rule's docstring as a note. The
non-differentiable table is listed after the rules.
"""
from __future__ import annotations

import inspect

from ..errors import qualified_name
from ..registry import FRULES, NONDIFF, RULES

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


def rule_rows():
    """``[(name, differentiable arguments, forward rule, note), ...]`` sorted by name."""
    rows = []
    for fn, rule in RULES.items():
        if not (rule.__module__ or "").startswith("tapegrad"):
            continue  # a rule registered by the user, not one of tapegrad's
        forward = "explicit" if fn in FRULES else "derived"
        rows.append((_name(fn), _differentiable_args(rule), forward, _note(rule)))
    return sorted(rows)


def rules_markdown() -> str:
    """docs/rules.md: every registered rule and every non-differentiable function."""
    lines = [
        "# Rules",
        "",
        "Generated from the registry by `python tools/make_rules_doc.py`; a test keeps it in sync.",
        "Differentiable arguments are the rule's positional parameters without a default; the",
        "others (axes, flags, shapes) get no tangent. A derived forward rule is computed from the",
        "reverse rule (see `tapegrad.forward`).",
        "",
        f"## Differentiable functions ({len(rule_rows())})",
        "",
        "| function | differentiable arguments | forward rule | notes |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{n}` | {a} | {f} | {note} |" for n, a, f, note in rule_rows()]
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

"""The step-through viewer: one self-contained HTML page that plays the reverse sweep.

`viewer(f, *args)` runs ``pullback(f, *args)`` and its sweep and returns a `Viewer`: in a
notebook it shows itself (`_repr_html_`, in an iframe so that its script and styles stay its
own), and ``.save("sweep.html")`` writes the page, which opens from disk in any browser: no
network, no CDN, the script and the styles are inline. `to_html(obj)` gives the page's text
for a pullback that has run (``back``) or for a traced tape (forward program only).

The page shows the forward program (the compact dump's lines, with values and shapes), then
the reverse sweep one step at a time (buttons, or the arrow keys; Home and End): each step is
one line of `explain` (the seed, then one tangent of one pullback: set, or added to what its
value had), with its formula, its value and shape, the forward values its formula reads
highlighted in the forward program, the d%k table as it fills, and, after the last step, the
gradient. Every list is virtualized (only the rows in view are in the page), so a tape of a
few thousand steps stays quick. The gradient tape as Python (`tapegrad.program.to_source`)
sits beside it, the current step's line marked. Names are those of every other view
(`tapegrad.numbering`).

Arrays show their dtype and shape and a few entries; the page also holds each value's
numbers in full (up to `FULL_VALUES` entries) in ``data-value`` attributes, which the browser
tests compare with the gradients tapegrad returns.
"""
from __future__ import annotations

import html
import json
import math
from importlib import resources

import numpy as np

from ..errors import short_name, type_str
from ..grad import pullback
from ..numbering import numbering, source_name
from ..program.codegen import to_source
from ..tape import Constant, Input, Tape, note_text
from .explain import explain_steps, format_number
from .graph import node_text
from .printing import format_value, group_ops

__all__ = ["viewer", "to_html", "Viewer", "viewer_data", "FULL_VALUES"]

#: a value with at most this many entries is kept whole in the page (for the tests and a
#: reader's tooltip); a larger one keeps the entries shown
FULL_VALUES = 4096


def _number(x):
    """A number for JSON: non-finite ones as strings (JSON has no NaN)."""
    x = float(x)
    return x if math.isfinite(x) else repr(x)


def _value(v) -> dict:
    """``{"text", "shape", "data"}``: what the page shows of a value and its numbers."""
    if isinstance(v, (np.generic, float, int, bool, complex)) or isinstance(v, np.ndarray) and v.ndim == 0:
        if np.iscomplexobj(v):
            return {"text": format_number(v), "shape": [], "data": None}
        return {"text": format_number(v), "shape": [], "data": [_number(v)]}
    if isinstance(v, np.ndarray):
        entries = np.array2string(v, precision=4, threshold=6, edgeitems=2, separator=", ",
                                  max_line_width=10 ** 6).replace("\n", "")
        real = v.dtype.kind in "biuf"
        data = [_number(x) for x in v.ravel()[:FULL_VALUES]] if real else None
        return {"text": f"{type_str(v)} {entries}", "shape": list(v.shape), "data": data}
    return {"text": format_value(v), "shape": None, "data": None}


def _forward_rows(tape, names):
    """The forward program as the compact dump writes it, up to the seed."""
    rows = []
    for kind, head, members, text in group_ops(tape.ops, names):
        if type(head) is Constant and note_text(head.note) == "seed":
            break
        value_op = members[1] if kind == "rrule" else head
        if type(head) is Input:
            label = f"{names[head.var]} = {note_text(head.note) or 'f'}"
            row_kind = "input"
        else:
            label = node_text(kind, text.split("::")[0])
            row_kind = "const" if type(head) is Constant else "op"
        rows.append({"name": names[value_op.var], "text": label, "kind": row_kind,
                     "value": _value(value_op.val) if type(head) is not Input or head.id > 1
                     else {"text": type_str(head.val), "shape": None, "data": None}})
    return rows


def viewer_data(obj, title: str = "") -> dict:
    """What the page shows, as plain data (the page's JSON): a pullback that has run, or a tape."""
    back = obj if hasattr(obj, "derivatives") and hasattr(obj, "tape") else None
    if back is None and hasattr(obj, "tape") and not isinstance(obj, Tape):
        raise ValueError("this pullback has not run: call it (back(seed)) before showing its sweep")
    if back is None and not isinstance(obj, Tape):
        raise TypeError(f"to_html shows a Tape or a pullback that has run, not a {type(obj).__name__}; "
                        f"use tapegrad.show.viewer(f, *args) to record one")
    tape = back.tape if back is not None else obj
    names = numbering(tape)
    data = {"title": title, "forward": _forward_rows(tape, names), "steps": [], "gradient": [],
            "source": to_source(tape, "gradient_tape").split("\n")}
    if back is not None:
        _, backward, gradient = explain_steps(back)
        for s in backward:
            data["steps"].append({
                "kind": s["kind"], "target": s["target"], "adjoint": s["adjoint"], "formula": s["formula"],
                "holder": s["holder"], "var": s["var"], "reads": s["reads"], "value": _value(s["value"]),
                "total": _value(s["total"]), "source": source_name(s.get("var_total", s["var"])),
                "tangent": source_name(s["var"])})
        data["gradient"] = [{"name": note, "adjoint": adj, "value": _value(v)} for note, adj, v in gradient]
    return data


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def to_html(obj, title: str = "") -> str:
    """The viewer's page (one HTML document, nothing to fetch) for a pullback that has run or a tape.

    Examples
    --------
    >>> import tapegrad
    >>> y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> _ = back(1.0)
    >>> page = tapegrad.show.to_html(back)
    >>> page.startswith("<!DOCTYPE html>") and "http" not in page.replace("http://www.w3.org", "")
    True
    """
    payload = json.dumps(viewer_data(obj, title), ensure_ascii=False, allow_nan=False)
    payload = payload.replace("</", "<\\/")  # no "</script>" inside the script
    page = _asset("viewer.html")
    return (page.replace("/*STYLE*/", _asset("viewer.css"))
                .replace("/*SCRIPT*/", _asset("viewer.js"))
                .replace("/*DATA*/", payload)
                .replace("<!--TITLE-->", html.escape(title or "tapegrad: the reverse sweep")))


class Viewer:
    """The viewer of one pullback: shows itself in a notebook, ``.save(path)`` writes the page."""

    def __init__(self, back, title: str = ""):
        self.back = back
        self.title = title

    def html(self) -> str:
        """The page, one self-contained HTML document."""
        return to_html(self.back, self.title)

    def save(self, path) -> None:
        """Write the page to `path` (open it in any browser; it needs no network)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.html())

    def _repr_html_(self):
        # in an iframe: the page's script, ids and styles stay out of the notebook's own
        return (f'<iframe srcdoc="{html.escape(self.html(), quote=True)}" '
                f'style="width:100%;height:640px;border:1px solid #ddd" '
                f'title="tapegrad viewer"></iframe>')

    def __repr__(self):
        return f"<tapegrad viewer: {self.title or 'reverse sweep'}, {len(self.back.tape)} ops>"


def viewer(f, *args, seed=None, title: str = "") -> Viewer:
    """The step-through viewer of ``grad(f, *args)``'s reverse sweep (see the module docstring).

    Examples
    --------
    >>> import tapegrad
    >>> v = tapegrad.show.viewer(lambda a, b: a / (a + b * b), 2.0, 3.0)
    >>> [s["adjoint"] + (" += " if s["kind"] == "add" else " = ") + s["formula"]
    ...  for s in tapegrad.show.viewer_data(v.back)["steps"]][:3]
    ['d%6 = seed', 'd%2 = d%6 · 1/%5', 'd%5 = d%6 · (-%2/%5²)']
    """
    _, back = pullback(f, *args)
    back(seed)
    return Viewer(back, title or f"{short_name(f)}: the reverse sweep")

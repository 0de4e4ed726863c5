"""The notebooks: percent-format Python files in notebooks/ are the source, each paired with
an executed .ipynb beside it that holds the outputs a reader sees on a code host.

    python tools/notebooks.py            # run every notebooks/*.py, write its .ipynb
    python tools/notebooks.py 03 07      # only the notebooks whose names start so
    python tools/notebooks.py --from-ipynb notebooks/08_new.ipynb   # write the .py of a notebook

Edit the .py file (in any editor, or in Jupyter with jupytext, which keeps the pair in
sync), then run this script to store the outputs. A code cell the tests read has a name,
written in its marker line as ``# %% name="trace-f"``; it becomes the cell's id, and every
other cell gets a fixed id from its position, so running the script twice gives the same
files. tests/test_notebooks.py executes each notebook again and compares its outputs, cell
by cell, with the stored ones (`normalize` says what may differ between runs).
"""
import pathlib
import re
import sys

import jupytext
import nbclient
import nbformat

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
PAIRING = "ipynb,py:percent"


def read_source(path):
    """The notebook that a percent-format file describes, with fixed cell ids and no outputs."""
    nb = jupytext.read(path, fmt="py:percent")
    nb.metadata.setdefault("jupytext", {})["formats"] = PAIRING
    for i, cell in enumerate(nb.cells):
        cell.id = cell.metadata.get("name", f"c{i:02d}")
    return nb


def execute(nb, path):
    """Run `nb` in a fresh kernel (one per notebook), in the notebook's folder; returns it."""
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def write_executed(path):
    """Run the notebook of `path` (a .py file) and store it as the .ipynb beside it."""
    nb = execute(read_source(path), path)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps: they change on every run
    nbformat.write(nb, path.with_suffix(".ipynb"))


# what may change from one run to the next without the notebook being wrong
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_VOLATILE_DATA = ("image/png", "image/svg+xml")


def normalize(outputs):
    """A cell's outputs as text to compare: memory addresses and picture bytes blanked, and
    consecutive pieces of one stream joined (a kernel may send a print in one piece or two)."""
    parts, stream = [], None
    for out in outputs:
        kind = out["output_type"]
        if kind == "stream":
            if stream == out["name"]:
                parts[-1] += out["text"]
            else:
                parts.append(f"[{out['name']}]\n{out['text']}")
            stream = out["name"]
            continue
        stream = None
        if kind in ("execute_result", "display_data"):
            for mime, data in sorted(out.get("data", {}).items()):
                text = "<picture>" if mime in _VOLATILE_DATA else (
                    data if isinstance(data, str) else "".join(data))
                parts.append(f"[{kind} {mime}]\n{text}")
        elif kind == "error":
            parts.append(f"[error]\n{out['ename']}: {out['evalue']}")
    return _ADDRESS.sub("0x…", "\n".join(parts))


def source_from_ipynb(ipynb_path):
    """Write the percent-format .py for a notebook that has none (or had another source):
    a code cell's id that is not a position (``c07``) becomes its name, so tests keep reading
    it. Used once per notebook when a notebook written elsewhere joins notebooks/."""
    path = pathlib.Path(ipynb_path)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if not re.fullmatch(r"c\d\d", cell.id):
                cell.metadata["name"] = cell.id
    nb.metadata["jupytext"] = {"formats": PAIRING}
    jupytext.write(nb, path.with_suffix(".py"), fmt="py:percent")


def main(prefixes):
    if prefixes[:1] == ["--from-ipynb"]:
        for name in prefixes[1:]:
            source_from_ipynb(name)
        return
    for path in sorted(NOTEBOOK_DIR.glob("*.py")):
        if not prefixes or any(path.name.startswith(p) for p in prefixes):
            print("running", path.name)
            write_executed(path)


if __name__ == "__main__":
    main(sys.argv[1:])

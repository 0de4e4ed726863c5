"""Sphinx configuration of tapegrad's documentation.

Sphinx with autodoc and numpydoc: the docstrings are numpydoc already (their Examples run as
doctests in the test suite), and Sphinx needs no plugin beyond numpydoc to render them, so
the docs extra is two packages. The guide pages are reStructuredText with ``>>>`` examples,
which tests/test_docs.py runs as doctests. tests/test_docs.py builds the site with warnings
as errors and nitpicky references: a broken cross-reference fails the suite.

Build: ``pip install -e '.[docs]' && python -m sphinx -W -n -b html docs docs/_build/html``.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # the checkout's tapegrad

import tapegrad  # noqa: E402

project = "tapegrad"
author = "The tapegrad developers"
copyright = "2026, The tapegrad developers"
release = version = tapegrad.__version__

extensions = ["sphinx.ext.autodoc", "numpydoc"]
exclude_patterns = ["_build", "rules.md"]  # rules.md is the generated table, read on the repository
root_doc = "index"
html_theme = "alabaster"
html_static_path = []

# `x` in a docstring names a parameter (numpydoc's convention): italic, not a reference.
# References are written with roles (:func:`tapegrad.grad`) and must resolve.
default_role = None
nitpicky = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()

"""Sphinx configuration of the joltgym_marl site (MyST Markdown sources).

Build it from the clone's root with warnings as errors, as the test suite does
(tests/test_docs_site.py):

    .venv/bin/python -m sphinx -W -b html docs runs/docs/html
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))  # task_pages: the task pages, generated from the registry
sys.path.insert(0, str(DOCS.parent))  # joltgym_marl from this clone (its extension as set-up installed it)

import joltgym_marl  # noqa: E402

project = "joltgym_marl"
author = "the joltgym_marl authors"
copyright = "2026, the joltgym_marl authors (MIT License)"  # as LICENSE says; an empty one left "Copyright ©"
release = version = joltgym_marl.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "task_pages",
]

source_suffix = {".md": "markdown"}
# A block without a language is output or a diagram (tests/test_readme.py), not Python: Sphinx's
# default highlighted the repository map of DESIGN.md as Python.
highlight_language = "text"
root_doc = "index"
exclude_patterns = ["_build", "_ext", "media/**"]

# Markdown that reads the same on a code host: `#heading` links between pages
# resolve to the headings' slugs, GitHub's way.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "signature"
# Members show their own docstrings (an inherited one is Gymnasium's or PettingZoo's, about their API).
autodoc_inherit_docstrings = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"joltgym_marl {release}"
html_static_path = ["_static"]
# Code blocks and wide tables stay inside the page (wrapped, or scrolled where they cannot fit).
html_css_files = ["wide_content.css"]


def _native(obj) -> bool:
    """Whether ``obj`` comes from the pybind11 extension, whose docstrings are plain text."""
    obj = getattr(obj, "fget", None) or obj
    return (getattr(obj, "__module__", None) or "").startswith("joltgym_marl._core")


def _plain_text_as_literal(app, what, name, obj, options, lines):
    """The extension's docstrings are written as plain text (what ``help()``
    shows), not reStructuredText: show them verbatim, after their first line."""
    if _native(obj) and len(lines) > 1:
        body = [line for line in lines[1:]]
        while body and not body[0].strip():
            body.pop(0)
        if body:
            lines[1:] = ["", "::", ""] + ["   " + line for line in body] + [""]


class _GuidesGlobFilter:
    """The guides' toctree lists the guides in reading order, then takes any
    other page under guides/ by glob (a new guide shows up without editing
    index.md). While every guide is listed by name the glob matches nothing:
    that one warning is expected and dropped; any other glob warning stays."""

    def filter(self, record) -> bool:
        message = str(getattr(record, "msg", ""))
        return not ("didn't match any documents" in message and record.args == ("guides/*",))


def setup(app):
    import logging

    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_GuidesGlobFilter())
    app.connect("autodoc-process-docstring", _plain_text_as_literal)

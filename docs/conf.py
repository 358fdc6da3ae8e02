"""Sphinx configuration of the refmodels documentation.

Build (one command, warnings as errors, from the repository root)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Math is rendered offline by MathJax 3 shipped inside the ``sphinx-mathjax-offline``
package (copied into ``_static/mathjax``; no CDN). The family pages are generated at
build time from :func:`refmodels.derive.derive` (``_ext/derive_pages.py``, which also draws
their figures into ``_generated/`` and builds the errata tables and the exercises), and the
gallery in ``examples/`` is executed by sphinx-gallery (with matplotlib, for its figures).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))          # the repository root (refmodels)
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "refmodels"
author = "the refmodels developers"
copyright = "the refmodels developers"
release = version = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",       # MathJax 3 from the package, into _static/mathjax
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "derive_pages",
]

exclude_patterns = ["_build", "**/README.rst", "examples/*.py", "**/*.md"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_theme_options = {"description": "reference margin-distribution models, with certificates",
                      "page_width": "1100px", "sidebar_width": "230px"}
html_show_sourcelink = False

# numpydoc: the docstrings are the API reference; no autosummary stubs
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/ex_",            # execute every ex_*.py at build time
    "image_scrapers": ("matplotlib",),      # the figures of the examples
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "line_numbers": False,
    "plot_gallery": "True",
}

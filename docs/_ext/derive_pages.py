"""Sphinx extension: the pages generated from :mod:`refmodels.derive`.

* A source file containing a line ``.. derive-page:: FAMILY`` has that line replaced, when
  Sphinx reads it, by ``refmodels.derive.derive(FAMILY).to_rst()``: the same walk-through
  that ``refmodels derive FAMILY`` prints, with its checks executed at build time and its
  figures drawn into ``docs/_generated/`` (not committed). A walk-through that does not
  hold (a check failing, an erratum's printed version passing, a step that could not run)
  is a build error.
* ``.. errata-tables::`` is replaced by the two tables of the errata page (wrong in the
  paper, with the failing residual; conventions and remarks), read off the walk-throughs.
* ``.. exercises-page::`` and ``.. exercise-solutions-page::`` by the exercises of
  :mod:`refmodels.derive.exercises` and, on a separate page, their solutions.
* Docstrings shown by autodoc cite the project's internal statement of the mathematics as
  "SPEC §n"; they are rewritten into links to the family pages, which hold the same
  formulations.

Run as a script, it writes the family pages as Markdown with their figures, readable on a
code host without a build (``docs/families/*.md``, ``docs/families/img/``)::

    python docs/_ext/derive_pages.py --markdown docs/families
"""
import os
import re

_MARK = re.compile(r"^\.\. derive-page:: *(\S+) *$", re.M)
_ERRATA = re.compile(r"^\.\. errata-tables:: *$", re.M)
_EXERCISES = re.compile(r"^\.\. exercises-page:: *$", re.M)
_SOLUTIONS = re.compile(r"^\.\. exercise-solutions-page:: *$", re.M)

#: the family pages, in the order of the site
PAGES = ["SVM", "SVMb", "ODML", "LDM", "ODM", "McODM", "SVMm", "MKLm", "DRR"]
_SECTION_PAGE = {"1": "family-svm", "2": "family-odml", "3": "family-ldm", "4": "family-odm",
                 "5": "family-mcodm", "6": "family-svmm", "7": "family-mklm", "8": "family-drr"}
_CACHE = {}


def walkthrough(family, seed=0):
    """The walk-through of ``family`` (computed once per build)."""
    key = (family, seed)
    if key not in _CACHE:
        from refmodels.derive import derive

        wt = derive(family, seed=seed)
        if not wt.ok:
            raise RuntimeError(f"the {family} walk-through does not hold:\n{wt}")
        _CACHE[key] = wt
    return _CACHE[key]


def _figures(wt, srcdir):
    out = os.path.join(srcdir, "_generated")
    saved = wt.save_figures(out)
    return {k: "/_generated/" + os.path.basename(v) for k, v in saved.items()}


def _rst_escape(t):
    return t.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")


def errata_tables(seed=0):
    """reST: the errata (wrong in the paper, each with its failing residual) and the notes
    (conventions the papers state, remarks), read off the walk-throughs."""
    from refmodels.derive import ERRATA, NOTES
    from refmodels.derive.render import fmt_residual

    rows_e, rows_n = [], []
    for fam in PAGES:
        wt = walkthrough(fam, seed)
        for i, s in enumerate(wt.steps, 1):
            for e in s.errata:
                rows_e.append((e, fam, i, s.title))
            for n in s.notes:
                rows_n.append((n, fam, i, s.title))
    assert {e.key for e, *_ in rows_e} == set(ERRATA)
    assert {n.key for n, *_ in rows_n} == set(NOTES)
    out = ["Wrong in the paper", "------------------", "",
           "Each printed formula below is evaluated on its walk-through's instance and fails "
           "its check (the residual is above the tolerance), while the corrected one holds.",
           "", ".. list-table::", "   :header-rows: 1", "   :widths: 18 46 20 16", "",
           "   * - Paper, place", "     - What is printed, and the correction",
           "     - Shown in", "     - Printed: residual (tol)"]
    for e, fam, i, title in rows_e:
        out += [f"   * - {_rst_escape(e.source)}",
                f"     - {_rst_escape(e.text)} Printed :math:`{e.printed_latex}`; corrected "
                f":math:`{e.corrected_latex}`.",
                f"     - :ref:`family-{fam.lower()}`, step {i} ({_rst_escape(title)})",
                f"     - {fmt_residual(e.printed.residual)} (> {e.printed.tol:.0e}); "
                f"corrected {fmt_residual(e.corrected.residual)}"]
    out += ["", "Conventions the papers state, and remarks", "-" * 41, "",
            "Not errors: a paper says what it does (a constant dropped because it does not move "
            "the minimiser), or a statement is right but easy to misread. Each note explains "
            "what goes on, with checks that pass.", "",
            ".. list-table::", "   :header-rows: 1", "   :widths: 18 14 50 18", "",
            "   * - Paper, place", "     - Kind", "     - What goes on", "     - Shown in"]
    for n, fam, i, title in rows_n:
        kind = "a convention the paper states" if n.kind == "convention" else "a remark"
        out += [f"   * - {_rst_escape(n.source)}", f"     - {kind}",
                f"     - {_rst_escape(n.text)}",
                f"     - :ref:`family-{fam.lower()}`, step {i} ({_rst_escape(title)})"]
    return "\n".join(out) + "\n"


def _code(code):
    return [".. code-block:: python", ""] + ["   " + ln for ln in code.rstrip().splitlines()] \
        + [""]


def exercises_rst():
    from refmodels.derive.exercises import exercises

    out = []
    for fam in PAGES:
        title = f"{fam}"
        out += [title, "-" * len(title), "",
                f"The walk-through: :ref:`family-{fam.lower()}`.", ""]
        for e in exercises(fam):
            t = f"{fam} {e.number}. {e.title}"
            out += [f".. _exercise-{fam.lower()}-{e.number}:", "", t, "~" * len(t), "",
                    _rst_escape(e.statement), "",
                    f"Check your answer: ``refmodels derive {fam} --exercise {e.number} "
                    f"--answer my_answer.py``, where ``my_answer.py`` defines:", ""]
            out += _code(e.template())
            out += [f"Solution: :ref:`solution-{fam.lower()}-{e.number}`.", ""]
    return "\n".join(out) + "\n"


def solutions_rst():
    from refmodels.derive.exercises import exercises

    out = []
    for fam in PAGES:
        out += [fam, "-" * len(fam), ""]
        for e in exercises(fam):
            t = f"{fam} {e.number}. {e.title}"
            out += [f".. _solution-{fam.lower()}-{e.number}:", "", t, "~" * len(t), "",
                    f"(The exercise: :ref:`exercise-{fam.lower()}-{e.number}`.)", "",
                    _rst_escape(e.solution_text), ""]
            out += _code(e.solution)
            out += ["A typical mistake, which the check rejects:", ""]
            out += _code(e.wrong)
    return "\n".join(out) + "\n"


def _source_read(app, docname, source):
    text = source[0]
    match = _MARK.search(text)
    if match:
        wt = walkthrough(match.group(1), app.config.derive_seed)
        rst = wt.to_rst(figures=_figures(wt, app.srcdir))
        text = text[:match.start()] + rst + text[match.end():]
    m = _ERRATA.search(text)
    if m:
        text = text[:m.start()] + errata_tables(app.config.derive_seed) + text[m.end():]
    m = _EXERCISES.search(text)
    if m:
        text = text[:m.start()] + exercises_rst() + text[m.end():]
    m = _SOLUTIONS.search(text)
    if m:
        text = text[:m.start()] + solutions_rst() + text[m.end():]
    source[0] = text


def _spec_link(match):
    return f":ref:`the canonical formulation <{_SECTION_PAGE[match.group(1)]}>`"


def rewrite_spec(line):
    """A docstring line with the internal "SPEC §n" replaced by a link to the family page
    (and a bare "SPEC" by the conventions page)."""
    line = re.sub(r"SPEC §(\d)", _spec_link, line)
    line = re.sub(r"\bSPEC's canonical\b", "the canonical", line)
    line = re.sub(r"\bSPEC's\b", "the canonical", line)
    line = re.sub(r"\bSPEC (names|name|notation)\b", r"canonical \1", line)
    line = re.sub(r"\(SPEC\)", "(canonical)", line)
    line = re.sub(r"\bof SPEC\b", "of the canonical formulation", line)
    line = re.sub(r"\bSPEC\b", "the canonical formulations (:doc:`/conventions`)", line)
    return line


_PARAM = re.compile(r"^\*{0,2}[A-Za-z_][\w]*(, \*{0,2}[A-Za-z_][\w]*)*( : .*)?$")


def fix_parameter_layout(lines):
    """numpydoc reads every unindented line of a "Parameters" section as a parameter; prose
    after the parameter list (a paragraph of remarks) then shows as bold pseudo-parameters.
    Such a paragraph starts a "Notes" section instead (inserted before it). Returns the
    new list of lines."""
    out, in_params, i = [], False, 0
    while i < len(lines):
        ln = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and set(nxt.strip()) == {"-"} and ln.strip():
            in_params = ln.strip() in ("Parameters", "Other Parameters", "Attributes")
            out += [ln, nxt]
            i += 2
            continue
        if in_params and ln.strip() and not ln[0].isspace() and not _PARAM.match(ln.strip()) \
                and (not out or not out[-1].strip()):
            out += ["Notes", "-----"]
            in_params = False
        out.append(ln)
        i += 1
    return out


def _docstring(app, what, name, obj, options, lines):
    fixed = fix_parameter_layout([rewrite_spec(ln) if "SPEC" in ln else ln for ln in lines])
    lines[:] = fixed


def markdown_text(family, seed=0):
    """The Markdown page of ``family`` as :func:`write_markdown` writes it."""
    from refmodels.derive import derive

    wt = derive(family, seed=seed)
    figs = {f.name: f"img/{family.lower()}-{f.name}.png" for f in wt.figures}
    return wt, ("<!-- generated by docs/_ext/derive_pages.py from refmodels.derive; do not "
                "edit: run `python docs/_ext/derive_pages.py --markdown docs/families` -->\n\n"
                + wt.to_markdown(figures=figs))


def write_markdown(directory, seed=0, figures=True):
    """Write ``directory/<family>.md`` for every family (and the figures into
    ``directory/img``); returns ``{family: markdown text}``."""
    out = {}
    for fam in PAGES:
        wt, text = markdown_text(fam, seed)
        if figures:
            wt.save_figures(os.path.join(directory, "img"))
        with open(os.path.join(directory, f"{fam.lower()}.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
        out[fam] = text
    return out


def setup(app):
    app.add_config_value("derive_seed", 0, "env")
    app.connect("source-read", _source_read)
    # before numpydoc's own handler (priority 500), which parses the sections
    app.connect("autodoc-process-docstring", _docstring, priority=400)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    import argparse
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap = argparse.ArgumentParser(description="write the family pages as Markdown")
    ap.add_argument("--markdown", metavar="DIR", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for fam in write_markdown(a.markdown, a.seed):
        print("wrote", os.path.join(a.markdown, f"{fam.lower()}.md"))

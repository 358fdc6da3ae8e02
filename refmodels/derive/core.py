"""The shared registries and data types of the walk-throughs: the papers
(:data:`REFERENCES`), the families (:data:`FAMILIES`), the papers' errata (:data:`ERRATA`)
and the notes on what the papers state as conventions (:data:`NOTES`), and the data types
(:class:`Check`, :class:`Erratum`, :class:`Note`, :class:`Figure`, :class:`Step`,
:class:`Walkthrough` with its Unicode, LaTeX, Markdown and reST renderings).

The tables and the conversion of prose to LaTeX are in :mod:`.render`; the numerical helpers
every family uses (reference solves, SymPy gradients, a bounded line search, the box
coordinate descent) in :mod:`.numerics`.
"""
from __future__ import annotations

import contextlib
import math
import textwrap
from dataclasses import dataclass, field

import numpy as np

from .render import (LATEX_PREAMBLE, _gather, _latex_checks, _latex_table, _md_cell, _md_prose,
                     _md_table, _rst_escape, _rst_table, _text_table, fmt_residual, tex_text)

# ----------------------------------------------------------------------------- references

#: The five papers the formulations come from. Docstrings across the package call them
#: "seed 000" … "seed 004"; their sections and equation numbers refer to these versions.
REFERENCES = {
    "000": ("Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. "
            "arXiv preprint arXiv:1604.03348, 2016 (preprint version of the ODM paper; "
            "ODM's eqs. 7, 15–19, Lemma 1)."),
    "001": ("Teng Zhang and Zhi-Hua Zhou. Large Margin Distribution Machine. Proceedings of "
            "the 20th ACM SIGKDD International Conference on Knowledge Discovery and Data "
            "Mining (KDD), 2014."),
    "002": ("Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE "
            "Transactions on Knowledge and Data Engineering, 32(6), 2020 (journal version: "
            "SVM eq. 2, ODML eqs. 4–10, ODM eqs. 12–18, mcODM eqs. 20–41 and Algs. 1–4)."),
    "003": ("Huyen Do and Alexandros Kalousis. A Metric-learning based framework for Support "
            "Vector Machines and Multiple Kernel Learning. arXiv preprint arXiv:1309.3877, "
            "2013."),
    "004": ("Chong Peng and Qiang Cheng. Discriminative Ridge Machine: A Classifier for "
            "High-Dimensional Data or Imbalanced Data. IEEE Transactions on Neural Networks "
            "and Learning Systems, 2021 (arXiv:1904.07686, 2019)."),
}

#: Family name -> (title, the documentation page's anchor of the canonical formulation,
#: seeds cited). The canonical formulations are written out on the family pages of the
#: documentation and summarised on its "Conventions and names" page.
FAMILIES = {
    "SVM": ("Soft-margin SVM", "family-svm", ("002",)),
    "SVMb": ("Soft-margin SVM with an intercept (LIBSVM's C-SVC)", "family-svmb", ("002",)),
    "ODML": ("ODML (the margin mean/variance machine of the ODM papers)", "family-odml",
             ("002", "000")),
    "LDM": ("LDM, the Large margin Distribution Machine", "family-ldm", ("001", "002")),
    "ODM": ("ODM, the Optimal margin Distribution Machine", "family-odm", ("002", "000")),
    "McODM": ("mcODM, multi-class ODM", "family-mcodm", ("002",)),
    "SVMm": ("SVMm and ε-SVM (covering EpsSVM)", "family-svmm", ("003",)),
    "MKLm": ("MKLm and ε-MKL (covering EpsMKL)", "family-mklm", ("003",)),
    "DRR": ("Discriminative ridge regression, DRR and DRM (covering DRM)", "family-drr",
            ("004",)),
}
#: other names of a walk-through (a registry family without a walk-through of its own
#: takes the one of its module, see ``derive``)
_ALIASES = {"SVC": "SVMb", "SVM-B": "SVMb", "SVMB": "SVMb", "SVMINTERCEPT": "SVMb"}

#: Every formula of the papers that is wrong, by key -> family whose walk-through shows it
#: (each appears in exactly one walk-through, at the step where it happens, where the
#: printed version is evaluated and fails beside the corrected one).
ERRATA = {
    "odml-lemma1-inverts-singular-A": "ODML",
    "ldm-singular-Q": "LDM",
    "odm-seed000-eq15-xi-for-eps": "ODM",
    "odm-seed002-lagrangian-after-eq14": "ODM",
    "mcodm-eq23-M-inside-sum": "McODM",
    "mcodm-alg4-nu-not-divided": "McODM",
    "mcodm-linear-speedup-B-drops-1-theta": "McODM",
    "svmm-eqs7-14-half-norm": "SVMm",
    "svmm-fda-eq18-transform": "SVMm",
    "mklm-eq26-C1-on-eta": "MKLm",
}

#: Statements of the papers that are easy to misread as errors, by key -> (family, kind):
#: ``"convention"`` when the paper states what it does (e.g. dropping a constant that does
#: not move the minimiser), ``"remark"`` when the statement is right and the note explains
#: what goes on (a modelling choice, a rate). Each note carries checks that pass.
NOTES = {
    "odml-dual-drops-constant": ("ODML", "convention"),
    "ldm-dual-drops-constant": ("LDM", "convention"),
    "svmm-fda-eq18-hard-margin": ("SVMm", "remark"),
    "drr-apg-rate": ("DRR", "remark"),
}


# ----------------------------------------------------------------------------- data types

def _inf_norm(x):
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return 0.0
    if not np.all(np.isfinite(x)):
        return math.inf
    return float(np.max(np.abs(x)))


@dataclass
class Check:
    """A numerical check: two independently computed quantities and their residual.

    ``kind="eq"``: residual ``max|lhs - rhs| / (1 + max(|lhs|, |rhs|))`` (relative to the
    size of the quantities, absolute near zero); ``kind="le"``: residual
    ``max(lhs - rhs, 0) / (1 + max|rhs|)`` (an inequality ``lhs <= rhs``). The check passes
    when the residual is at most ``tol``; a NaN or an infinite side fails it.
    """

    what: str
    lhs: object
    rhs: object
    tol: float
    kind: str = "eq"
    lhs_name: str = "lhs"
    rhs_name: str = "rhs"

    def _residual(self, lhs, rhs):
        lhs, rhs = np.asarray(lhs, float), np.asarray(rhs, float)
        if lhs.shape != rhs.shape and lhs.size != 1 and rhs.size != 1:
            return math.inf
        if not (np.all(np.isfinite(lhs)) and np.all(np.isfinite(rhs))):
            return math.inf
        if self.kind == "le":
            return float(np.max(np.maximum(lhs - rhs, 0.0))) / (1.0 + _inf_norm(rhs))
        return _inf_norm(lhs - rhs) / (1.0 + max(_inf_norm(lhs), _inf_norm(rhs)))

    @property
    def residual(self):
        return self._residual(self.lhs, self.rhs)

    @property
    def passed(self):
        r = self.residual
        return bool(np.isfinite(r) and r <= self.tol)

    def perturbed(self, rel=1e-3):
        """The residual after moving ``rhs`` by ``rel`` (relative, plus ``rel`` absolute):
        what the check reports when one side is slightly wrong (it should fail)."""
        rhs = np.asarray(self.rhs, float)
        moved = rhs + rel * (np.abs(rhs) + 1.0) * (1 if self.kind == "eq" else -1)
        return self._residual(self.lhs, moved)

    def line(self):
        r = self.residual
        return (f"{'PASS' if self.passed else 'FAIL'}  {self.what}: residual {r:.2e} "
                f"({'≤' if self.passed else '>'} tol {self.tol:.0e})")


@dataclass
class Erratum:
    """A printed formula of a paper that is wrong, evaluated on the same instance as the
    corrected one: ``printed`` must fail (residual above its tolerance), ``corrected`` pass."""

    key: str
    source: str
    text: str
    printed_unicode: str
    printed_latex: str
    corrected_unicode: str
    corrected_latex: str
    printed: Check
    corrected: Check

    @property
    def ok(self):
        return (not self.printed.passed) and self.corrected.passed


@dataclass
class Note:
    """What a paper states on purpose (``kind="convention"``, e.g. a constant dropped from a
    dual because it does not move the minimiser) or a statement that is right but easy to
    misread (``kind="remark"``), explained, with checks that show what goes on (they must
    pass)."""

    key: str
    kind: str
    source: str
    text: str
    checks: list = field(default_factory=list)
    unicode: str = ""
    latex: str = ""

    @property
    def ok(self):
        return all(c.passed for c in self.checks)


@dataclass
class Figure:
    """A picture of the walk-through's instance: ``draw(fig)`` draws on a matplotlib
    figure (imported only when a figure is saved)."""

    name: str
    caption: str
    draw: object
    size: tuple = (6.4, 4.0)


@dataclass
class Step:
    """One step of a derivation.

    ``latex`` holds one display line per text line (``\\n`` separates the lines of a
    display; each line must be valid LaTeX on its own). ``algebra`` is a list of
    ``(label, unicode, latex)`` lines that SymPy derived symbolically (shown as computed).
    ``table`` is ``(header, rows)`` for a small table (the support vectors).
    ``error`` is set when the step could not run (its checks are then missing and the
    walk-through does not hold).
    """

    title: str
    source: str
    text: str
    unicode: str
    latex: str
    checks: list = field(default_factory=list)
    errata: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    algebra: list = field(default_factory=list)
    table: tuple | None = None
    figure: Figure | None = None
    error: str | None = None

    @property
    def ok(self):
        return (self.error is None and bool(self.checks or self.errata or self.notes)
                and all(c.passed for c in self.checks) and all(e.ok for e in self.errata)
                and all(n.ok for n in self.notes))

    @property
    def latex_lines(self):
        return [ln.strip() for ln in self.latex.split("\n") if ln.strip()]


class Steps(list):
    """The list of steps a builder fills; :meth:`attempt` runs one step's computations and,
    if they raise (a solver that fails on this instance, a singular system), records the
    step as one that could not run, with the reason, instead of crashing the walk-through."""

    @contextlib.contextmanager
    def attempt(self, title, source):
        n = len(self)
        try:
            yield
        except Exception as exc:                      # noqa: BLE001 - reported, not hidden
            del self[n:]
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            self.append(Step(title, source, "This step could not run on this instance: "
                             + msg[:300], "(could not run)", r"\text{(could not run)}",
                             error=msg))


class Walkthrough:
    """The derivation of one family: a list of :class:`Step` on one random instance."""

    def __init__(self, family, seed, instance, steps, figures=None):
        self.family = family
        self.seed = seed
        self.instance = instance
        self.steps = list(steps)
        self.title, self.anchor, self.seeds = FAMILIES[family]
        self.figures = [s.figure for s in self.steps if s.figure is not None]
        self.figures += list(figures or [])

    def __iter__(self):
        return iter(self.steps)

    def __len__(self):
        return len(self.steps)

    @property
    def checks(self):
        return [c for s in self.steps for c in s.checks]

    @property
    def errata(self):
        return [e for s in self.steps for e in s.errata]

    @property
    def notes(self):
        return [n for s in self.steps for n in s.notes]

    @property
    def failed_steps(self):
        return [s for s in self.steps if s.error is not None]

    @property
    def ok(self):
        return bool(self.steps) and all(s.ok for s in self.steps)

    # ---- figures ----------------------------------------------------------------------------
    def save_figures(self, directory, prefix=None, dpi=100):
        """Draw every figure of the walk-through into ``directory`` as PNG; returns
        ``{name: path}``. Needs matplotlib."""
        import os

        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        os.makedirs(directory, exist_ok=True)
        prefix = self.family.lower() if prefix is None else prefix
        out = {}
        for f in self.figures:
            fig = plt.figure(figsize=f.size)
            try:
                f.draw(fig)
                path = os.path.join(directory, f"{prefix}-{f.name}.png")
                fig.savefig(path, dpi=dpi, bbox_inches="tight",
                            metadata={"Software": None})
                out[f.name] = path
            finally:
                plt.close(fig)
        return out

    # ---- renderings ------------------------------------------------------------------------
    def summary(self):
        n_c, n_ok = len(self.checks), sum(c.passed for c in self.checks)
        n_e = sum(e.ok for e in self.errata)
        n_n = sum(n.ok for n in self.notes)
        out = (f"{n_ok}/{n_c} checks pass; {n_e}/{len(self.errata)} errata shown (printed "
               f"fails, corrected holds); {n_n}/{len(self.notes)} notes hold")
        if self.failed_steps:
            out += f"; {len(self.failed_steps)} step(s) could not run"
        return out

    def __str__(self):
        out = [f"{self.title}: derivation, step by step (seed={self.seed})",
               f"instance: {self.instance}", ""]
        for i, s in enumerate(self.steps, 1):
            out.append(f"{i}. {s.title}    [{s.source}]")
            out.extend("   " + ln for ln in textwrap.wrap(s.text, 86))
            out.extend("     " + ln for ln in s.unicode.splitlines())
            if s.error is not None:
                out.append("   COULD NOT RUN: " + s.error[:300])
            if s.algebra:
                out.append("   SymPy:")
                for label, uni, _ in s.algebra:
                    out.append(f"     {label}: {uni}")
            if s.table is not None:
                out.extend("   " + ln for ln in _text_table(*s.table))
            for c in s.checks:
                out.append("   check " + c.line())
            for e in s.errata:
                out.append(f"   ERRATUM [{e.source}] " + e.text)
                out.append("     printed:   " + e.printed_unicode)
                out.append("       " + e.printed.line()
                           + ("   (fails, as it should)" if not e.printed.passed else
                              "   (!! the printed version should fail)"))
                out.append("     corrected: " + e.corrected_unicode)
                out.append("       " + e.corrected.line())
            for n in s.notes:
                out.append(f"   NOTE ({_NOTE_KIND[n.kind]}) [{n.source}]")
                out.extend("     " + ln for ln in textwrap.wrap(n.text, 84))
                if n.unicode:
                    out.append("     " + n.unicode)
                for c in n.checks:
                    out.append("     check " + c.line())
            if s.figure is not None:
                out.append(f"   figure: {s.figure.caption} (--figures DIR draws it)")
            out.append("")
        out.append(self.summary())
        out.append("References:")
        out.extend(f"  [seed {k}] {REFERENCES[k]}" for k in self.seeds)
        return "\n".join(out)

    __repr__ = __str__

    def to_latex(self, standalone=False, figures=None):
        """LaTeX: a ``\\section*`` per family and a ``\\subsection*`` per step; the prose is
        escaped and its symbols are set in math mode, so that the output is plain ASCII and
        compiles with pdflatex, xelatex or lualatex. ``standalone=True`` wraps it in a
        complete document (preamble with amsmath and amssymb). ``figures``: ``{name: path}``
        from :meth:`save_figures` (included with graphicx)."""
        T = tex_text
        out = [rf"\section*{{{T(self.title)}}}",
               rf"Instance: {T(self.instance)} (seed {self.seed}).", ""]
        for i, s in enumerate(self.steps, 1):
            out.append(rf"\subsection*{{{i}. {T(s.title)}}}")
            out.append(rf"\emph{{{T(s.source)}.}} {T(s.text)}")
            out.append(_gather(s.latex_lines))
            if s.error is not None:
                out.append(r"\textbf{Could not run:} " + T(s.error[:300]) + r"\par")
            if s.algebra:
                out.append(r"\paragraph{SymPy.}")
                out.append(_gather([ln for lbl, _, tex in s.algebra
                                    for ln in _algebra_latex(T(lbl), tex)]))
            if s.table is not None:
                out.append(_latex_table(*s.table))
            if s.checks:
                out.append(_latex_checks(s.checks))
            for e in s.errata:
                out.append(rf"\paragraph{{Erratum ({T(e.source)}).}} {T(e.text)}")
                out.append(r"Printed:" + _gather([e.printed_latex]))
                out.append(r"Corrected:" + _gather([e.corrected_latex]))
                out.append(_latex_checks([e.printed, e.corrected],
                                         ["printed, fails as it should"
                                          if not e.printed.passed else "printed, PASSES (!)",
                                          None]))
            for n in s.notes:
                out.append(rf"\paragraph{{Note: {_NOTE_KIND[n.kind]} ({T(n.source)}).}} "
                           f"{T(n.text)}")
                if n.latex:
                    out.append(_gather([n.latex]))
                if n.checks:
                    out.append(_latex_checks(n.checks))
            if s.figure is not None and figures and s.figure.name in figures:
                out += [r"\begin{center}",
                        rf"\includegraphics[width=0.8\linewidth]{{{figures[s.figure.name]}}}\\",
                        rf"\small {T(s.figure.caption)}", r"\end{center}"]
            out.append("")
        out.append(T(self.summary()) + r"\par")
        out.append(r"\subsection*{References}")
        out.append(r"\begin{itemize}")
        out += [rf"\item[] [seed {k}] {T(REFERENCES[k])}" for k in self.seeds]
        out.append(r"\end{itemize}")
        body = "\n".join(out)
        if not standalone:
            return body
        return (LATEX_PREAMBLE + rf"\title{{{T(self.title)}}}" + "\n" + r"\date{}" + "\n"
                + r"\begin{document}" + "\n" + body + "\n" + r"\end{document}" + "\n")

    def _check_rows(self, s):
        rows = []
        for c in s.checks:
            rows.append(("check", c.what, c.residual, c.tol, "pass" if c.passed else "FAIL"))
        for e in s.errata:
            rows.append(("printed (erratum)", e.printed.what, e.printed.residual, e.printed.tol,
                         "fails, as it should" if not e.printed.passed else "UNEXPECTED PASS"))
            rows.append(("corrected", e.corrected.what, e.corrected.residual, e.corrected.tol,
                         "pass" if e.corrected.passed else "FAIL"))
        for n in s.notes:
            for c in n.checks:
                rows.append(("note", c.what, c.residual, c.tol,
                             "pass" if c.passed else "FAIL"))
        return rows

    def to_markdown(self, figures=None, heading="#"):
        """Markdown with ``$$…$$`` display math (GitHub, Jupyter, MyST). ``figures``:
        ``{name: path or URL}`` of the saved figures, shown at their steps."""
        h2 = heading + "#"
        out = [f"{heading} {self.title}", "",
               f"Instance: {self.instance} (`refmodels derive {self.family} --seed "
               f"{self.seed}`).", ""]
        for i, s in enumerate(self.steps, 1):
            out += [f"{h2} {i}. {s.title}", "", f"*{_md_prose(s.source)}.* {_md_prose(s.text)}",
                    ""]
            for ln in s.latex_lines:
                out += ["$$", ln, "$$", ""]
            if s.error is not None:
                out += [f"**Could not run:** {s.error[:300]}", ""]
            if s.algebra:
                out += ["SymPy, computed:", ""]
                for lbl, _, tex in s.algebra:
                    out += [f"* {lbl}:", "", "  $$", "  " + tex, "  $$", ""]
            if s.table is not None:
                out += _md_table(*s.table) + [""]
            for e in s.errata:
                out += [f"> **Erratum ({_md_prose(e.source)}).** {_md_prose(e.text)}", ">",
                        "> Printed:", ">", "> $$", "> " + e.printed_latex, "> $$", ">",
                        "> Corrected:", ">", "> $$", "> " + e.corrected_latex, "> $$", ""]
            for n in s.notes:
                out += [f"> **Note: {_NOTE_KIND[n.kind]} ({_md_prose(n.source)}).** "
                        f"{_md_prose(n.text)}", ""]
                if n.latex:
                    out += ["$$", n.latex, "$$", ""]
            if s.figure is not None and figures and s.figure.name in figures:
                out += [f"![{s.figure.caption}]({figures[s.figure.name]})", "",
                        f"*{s.figure.caption}*", ""]
            rows = self._check_rows(s)
            if rows:
                out += ["| | check | residual | tol | result |", "|---|---|---|---|---|"]
                for kind, what, r, tol, res in rows:
                    out.append(f"| {kind} | {_md_cell(what)} | {fmt_residual(r)} | {tol:.0e} "
                               f"| {res} |")
                out.append("")
        out += [f"{self.summary()}.", "", f"{h2} References", ""]
        out += [f"* [seed {k}] {REFERENCES[k]}" for k in self.seeds]
        return "\n".join(out) + "\n"

    def to_rst(self, heading="=", figures=None):
        """reStructuredText for Sphinx (``.. math::`` blocks, a table of checks per step,
        admonitions for errata and notes). ``figures``: ``{name: path}`` relative to the
        page."""
        sub = "-" if heading == "=" else "~"
        title = f"{self.title}"
        out = [title, heading * len(title), "",
               "The canonical formulation (the one scaling this package uses; see "
               ":doc:`/conventions`), derived step by step and executed on one small random "
               f"instance: {_rst_escape(self.instance)} (``refmodels derive {self.family} "
               f"--seed {self.seed}``). Every step shows its formula, the paper and "
               "equation it follows, and numerical checks; where a paper has an erratum, the "
               "printed version is evaluated beside the corrected one.", ""]
        for i, s in enumerate(self.steps, 1):
            t = f"{i}. {s.title}"
            out += [t, sub * len(t), "", f"*{_rst_escape(s.source)}.* {_rst_escape(s.text)}",
                    ""]
            for ln in s.latex_lines:
                out += [".. math::", "", "   " + ln, ""]
            if s.error is not None:
                out += [".. error::", "", "   Could not run: " + _rst_escape(s.error[:300]), ""]
            if s.algebra:
                out += ["SymPy, computed (not typed):", ""]
                for lbl, _, tex in s.algebra:
                    out += [f"* {_rst_escape(lbl)}:", "", "  .. math::", "", "     " + tex, ""]
            if s.table is not None:
                out += _rst_table(*s.table) + [""]
            for e in s.errata:
                out += [".. admonition:: Erratum (wrong in the paper)", "",
                        f"   *{_rst_escape(e.source)}.* {_rst_escape(e.text)}", "",
                        "   Printed:", "", "   .. math::", "", "      " + e.printed_latex, "",
                        "   Corrected:", "", "   .. math::", "", "      " + e.corrected_latex,
                        ""]
            for n in s.notes:
                out += [f".. admonition:: Note: {_NOTE_KIND[n.kind]}", "",
                        f"   *{_rst_escape(n.source)}.* {_rst_escape(n.text)}", ""]
                if n.latex:
                    out += ["   .. math::", "", "      " + n.latex, ""]
            if s.figure is not None and figures and s.figure.name in figures:
                out += [f".. figure:: {figures[s.figure.name]}", "   :width: 85%", "",
                        "   " + _rst_escape(s.figure.caption), ""]
            rows = self._check_rows(s)
            if rows:
                out += [".. list-table::", "   :header-rows: 1", "   :widths: 14 50 12 8 16", "",
                        "   * - \u00a0", "     - check", "     - residual", "     - tol",
                        "     - result"]
                for kind, what, r, tol, res in rows:
                    out += [f"   * - {kind}", f"     - {_rst_escape(what)}",
                            f"     - {fmt_residual(r)}",
                            f"     - {tol:.0e}", f"     - {res}"]
                out.append("")
        out += [_rst_escape(self.summary()) + ".", "", "References", sub * 10, ""]
        out += [f"* [seed {k}] {_rst_escape(REFERENCES[k])}" for k in self.seeds]
        return "\n".join(out) + "\n"


def _algebra_latex(label, tex):
    """A SymPy line as display lines: the label beside the expression, or on a line of its
    own above it when the two together are longer than 160 characters of LaTeX (about where
    such a line overflows the text width of the standalone document)."""
    if len(label) + len(tex) > 160:
        return [rf"\text{{{label}:}}", tex]
    return [rf"\text{{{label}:}}\quad {tex}"]


_NOTE_KIND = {"convention": "a convention the paper states",
              "remark": "what goes on (not an error)"}

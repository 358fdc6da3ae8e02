"""The shared machinery of the walk-throughs: the papers (:data:`REFERENCES`), the
families (:data:`FAMILIES`), the papers' errata (:data:`ERRATA`) and the notes on what the
papers state as conventions (:data:`NOTES`), the data types (:class:`Check`,
:class:`Erratum`, :class:`Note`, :class:`Figure`, :class:`Step`, :class:`Walkthrough` with
its Unicode, LaTeX, Markdown and reST renderings), and the helpers every family uses: the
random instance, tight reference solves, SymPy gradients, a bounded line search and the box
coordinate descent of seed 002 Alg. 1.
"""
from __future__ import annotations

import contextlib
import math
import re
import textwrap
from dataclasses import dataclass, field

import numpy as np

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
_ALIASES = {"EPSSVM": "SVMm", "EPSMKL": "MKLm", "DRM": "DRR", "RELAXEDMCODM": "McODM",
            "MCODM": "McODM", "SVC": "SVMb", "SVM-B": "SVMb", "SVMB": "SVMb",
            "SVMINTERCEPT": "SVMb"}

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
                out.append(_gather([rf"\text{{{T(lbl)}:}}\quad {tex}" for lbl, _, tex
                                    in s.algebra]))
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


_NOTE_KIND = {"convention": "a convention the paper states",
              "remark": "what goes on (not an error)"}


# ----------------------------------------------------------------------------- tables

def _fmt_cell(v):
    """A table value: 3 significant digits; below 1e-9 in size it is 0 (round-off)."""
    if isinstance(v, (float, np.floating)):
        return "0" if abs(v) < 1e-9 else f"{v:.3g}"
    return str(v)


def fmt_residual(r):
    """A residual as shown in the tables: round-off levels (below 1e-12) as "< 1e-12"."""
    if not np.isfinite(r):
        return "inf"
    return "< 1e-12" if r < 1e-12 else f"{r:.1e}"


def _text_table(header, rows):
    cells = [[str(h) for h in header]] + [[_fmt_cell(v) for v in r] for r in rows]
    wid = [max(len(c[j]) for c in cells) for j in range(len(header))]
    lines = ["  ".join(c[j].rjust(wid[j]) for j in range(len(header))) for c in cells]
    return [lines[0], "  ".join("-" * w for w in wid)] + lines[1:]


def _md_prose(t):
    """Prose for Markdown: ``^{…}`` and ``_{…}`` groups as <sup>/<sub> (GitHub renders
    them); everything else as typed."""
    t = re.sub(r"\^\{([^{}]+)\}", r"<sup>\1</sup>", str(t))
    return re.sub(r"_\{([^{}]+)\}", r"<sub>\1</sub>", t)


def _md_cell(t):
    return _md_prose(t).replace("|", "\\|")


def _md_table(header, rows):
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_md_cell(_fmt_cell(v)) for v in r) + " |" for r in rows]
    return out


def _rst_table(header, rows):
    out = [".. list-table::", "   :header-rows: 1", ""]
    for r in [header] + [[_fmt_cell(v) for v in r] for r in rows]:
        out.append(f"   * - {_rst_escape(str(r[0])) or chr(160)}")
        out += [f"     - {_rst_escape(str(v)) or chr(160)}" for v in r[1:]]
    return out


def _latex_table(header, rows):
    cols = "r" * len(header)
    out = [r"\begin{center}\small", rf"\begin{{tabular}}{{{cols}}}", r"\hline",
           " & ".join(tex_text(str(h)) for h in header) + r" \\ \hline"]
    out += [" & ".join(tex_text(_fmt_cell(v)) for v in r) + r" \\" for r in rows]
    out += [r"\hline", r"\end{tabular}", r"\end{center}"]
    return "\n".join(out)


def _latex_checks(checks, labels=None):
    out = [r"\begin{itemize}\small"]
    for j, c in enumerate(checks):
        tag = ("PASS" if c.passed else "FAIL")
        extra = f" ({labels[j]})" if labels and labels[j] else ""
        out.append(rf"\item[{tag}] {tex_text(c.what)}: residual {c.residual:.2e}, "
                   rf"tol {c.tol:.0e}{tex_text(extra)}")
    out.append(r"\end{itemize}")
    return "\n".join(out)


def _gather(lines):
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return ""
    return r"\begin{gather*}" + "\n" + " \\\\\n".join(lines) + "\n" + r"\end{gather*}"


LATEX_PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{graphicx}
\allowdisplaybreaks
\setlength{\parindent}{0pt}
\setlength{\parskip}{4pt}
"""


# ----------------------------------------------------------------------------- text to TeX

#: Unicode symbols of the prose and their math-mode LaTeX (the output stays ASCII).
_MATH = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "κ": r"\kappa", "λ": r"\lambda",
    "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma",
    "τ": r"\tau", "φ": r"\phi", "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "ϵ": r"\epsilon",
    "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi",
    "Σ": r"\Sigma", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
    "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx", "≲": r"\lesssim",
    "→": r"\to", "←": r"\leftarrow", "⇔": r"\iff", "⇒": r"\Rightarrow", "↦": r"\mapsto",
    "∈": r"\in", "∉": r"\notin", "∞": r"\infty", "∂": r"\partial", "∇": r"\nabla",
    "∑": r"\sum", "·": r"\cdot", "×": r"\times", "−": "-", "±": r"\pm", "‖": r"\|",
    "⟨": r"\langle", "⟩": r"\rangle", "≻": r"\succ", "⪰": r"\succeq", "√": r"\surd",
    "∀": r"\forall", "∅": r"\emptyset", "½": r"\tfrac12", "∘": r"\circ", "⊤": r"\top",
    "ᵀ": r"^{\top}", "𝟙": r"\mathbb{1}", "∝": r"\propto", "⊆": r"\subseteq",
    "∩": r"\cap", "∪": r"\cup", "≡": r"\equiv", "∗": "*", "†": r"\dagger", "⋆": r"\star",
    "₀": "_0", "₁": "_1", "₂": "_2", "₃": "_3", "₄": "_4", "₅": "_5", "₆": "_6",
    "₇": "_7", "₈": "_8", "₉": "_9", "ₖ": "_k", "ᵢ": "_i", "ⱼ": "_j",
    "⁰": "^0", "¹": "^1", "²": "^2", "³": "^3", "⁴": "^4", "⁻": "^-", "⁺": "^+",
    "ℝ": r"\mathbb{R}", "ℓ": r"\ell", "∥": r"\|", "⋅": r"\cdot", "…": r"\dots",
}
#: Unicode superscripts and subscripts (a run of them becomes one ^{…} or _{…}).
_SUPS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁻": "-", "⁺": "+",
         "ᵀ": r"\top "}
_SUBS = {"₀": "0", "₁": "1", "₂": "2", "₃": "3", "₄": "4", "₅": "5", "₆": "6", "₇": "7",
         "₈": "8", "₉": "9", "ₖ": "k", "ᵢ": "i", "ⱼ": "j"}
#: Unicode of the prose set in text mode.
_TEXT = {"–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "\u00a0": "~",
         "§": r"\S{}", "é": r"\'e", "è": r"\`e", "ö": r'\"o', "ü": r'\"u', "ä": r'\"a',
         "…": r"\dots{}"}
_ACCENTS = {"\u0302": r"\hat", "\u0303": r"\tilde", "\u0304": r"\bar", "\u0307": r"\dot"}
_TEXT_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
                 "%": r"\%", "#": r"\#", "~": r"\textasciitilde{}", "<": r"\textless{}",
                 ">": r"\textgreater{}", "|": r"\textbar{}"}
_MATH_SPECIAL = {"\\": r"\backslash ", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
                 "%": r"\%", "#": r"\#", "~": r"\sim ", "|": r"|"}
#: Characters :func:`tex_text` met and could not map (shown as ``?``; a test keeps it empty).
UNMAPPED = set()


def _math_of(ch):
    if ch in _MATH:
        v = _MATH[ch]
        return v + (" " if v[-1].isalpha() else "")
    if ch in _MATH_SPECIAL:
        return _MATH_SPECIAL[ch]
    if ord(ch) < 128:
        return ch
    UNMAPPED.add(ch)
    return "?"


def _group_math(s):
    """The inside of a ``_{…}`` or ``^{…}`` group, converted to math mode."""
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if i + 1 < len(s) and s[i + 1] in _ACCENTS:
            out.append(f"{_ACCENTS[s[i + 1]]}{{{_math_of(ch).strip()}}}")
            i += 2
            continue
        out.append(_math_of(ch))
        i += 1
    return "".join(out)


def _identifier_underscore(s, i):
    """``_`` inside an identifier (``fit_intercept``, ``solution_from``): a run of at least
    three ASCII letters or digits on one side; ``γ_i``, ``K_x``, ``Q_ii`` are subscripts."""
    j = i
    while j > 0 and s[j - 1].isascii() and s[j - 1].isalnum():
        j -= 1
    k = i + 1
    while k < len(s) and s[k].isascii() and s[k].isalnum():
        k += 1
    return (i - j >= 3) or (k - i - 1 >= 3)


def tex_text(s):
    """Prose (Unicode, with the formula-like fragments of the terminal text) as LaTeX text:
    the LaTeX specials escaped, Greek letters and symbols in math mode, ``x_i`` / ``x^{…}``
    and runs of Unicode super/subscripts (``⁻¹``, ``₁₂``) as sub/superscripts. The result
    is plain ASCII."""
    toks = []                          # (is_math, text)
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "_" and _identifier_underscore(s, i):
            toks.append((False, r"\_"))
            i += 1
            continue
        if ch in "_^" and i + 1 < n and s[i + 1] not in " \t\n":
            if s[i + 1] == "{":
                depth, j = 1, i + 2
                while j < n and depth:
                    depth += {"{": 1, "}": -1}.get(s[j], 0)
                    j += 1
                inner = s[i + 2:j - 1] if depth == 0 else s[i + 2:]
                toks.append((True, f"{ch}{{{_group_math(inner)}}}"))
                i = j
            else:
                k = i + 2 if not (i + 2 < n and s[i + 2] in _ACCENTS) else i + 3
                toks.append((True, f"{ch}{{{_group_math(s[i + 1:k])}}}"))
                i = k
            continue
        if i + 1 < n and s[i + 1] in _ACCENTS:
            toks.append((True, f"{_ACCENTS[s[i + 1]]}{{{_math_of(ch).strip()}}}"))
            i += 2
            continue
        run = _SUPS if ch in _SUPS else _SUBS if ch in _SUBS else None
        if run is not None:                       # a run of Unicode super/subscripts
            j = i
            while j < n and s[j] in run:
                j += 1
            mark = "^" if run is _SUPS else "_"
            toks.append((True, mark + "{" + "".join(run[c] for c in s[i:j]) + "}"))
            i = j
            continue
        if ch in _MATH:
            toks.append((True, _math_of(ch)))
        elif ch in _TEXT:
            toks.append((False, _TEXT[ch]))
        elif ch in _TEXT_SPECIAL:
            toks.append((False, _TEXT_SPECIAL[ch]))
        elif ord(ch) < 128:
            toks.append((False, ch))
        else:
            UNMAPPED.add(ch)
            toks.append((False, "?"))
        i += 1
    out, math_run = [], []
    for is_math, t in toks + [(False, "")]:
        if is_math:
            math_run.append(t)
            continue
        if math_run:
            body = "".join(math_run).rstrip()
            if body.startswith(("_", "^")):
                body = "{}" + body
            out.append(f"${body}$")
            math_run = []
        out.append(t)
    return "".join(out)


def _rst_escape(t):
    """Prose for reST: the markup characters escaped, ``^{…}`` and ``_{…}`` groups as
    superscripts and subscripts (``:sup:``, ``:sub:``)."""
    t = t.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")
    t = re.sub(r"\^\{([^{}]+)\}", r"\\ :sup:`\1`\\ ", t)
    return re.sub(r"_\{([^{}]+)\}", r"\\ :sub:`\1`\\ ", t)


# ----------------------------------------------------------------------------- solves

#: Clarabel's tolerances for the walk-throughs' reference solves. The checks compare
#: quantities of two separate solves, and a point that is optimal to a relative gap g can
#: be off by about √(2g) in the variables of a strongly convex objective: the default
#: gap 1e-8 leaves 1e-4 in w, the tight 1e-12 about 1e-6 at worst (far less in practice).
TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10}
#: the next levels, tried in turn when Clarabel reports a level "inaccurate" (second-order
#: cone problems often stop short of 1e-12). Passed explicitly: CVXPY keeps the settings of
#: the previous call in a problem's cached solver object.
MEDIUM = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}
DEFAULT = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8, "tol_ktratio": 1e-6}


def solve(prob, form="dual", levels=None, **extra):
    """A reference solve of a problem class at the tightest of ``levels`` (default
    :data:`TIGHT`, :data:`MEDIUM`, :data:`DEFAULT`) that succeeds (the class certifies every
    point it returns, so a looser level is still a certified optimum)."""
    from refmodels import SolverError

    err = None
    for level in (levels or (TIGHT, MEDIUM, DEFAULT)):
        try:
            return prob.solve(form=form, **{**level, **extra})
        except SolverError as exc:
            err = exc
    raise err


def cvx_solve(problem):
    """Solve a CVXPY problem of a walk-through: Clarabel with tight tolerances, then with its
    defaults, then OSQP (for QPs) at 1e-10; the first that reports optimal wins. Returns
    the optimal value; raises RuntimeError naming every attempt when none does."""
    import cvxpy as cp

    attempts = [("CLARABEL", TIGHT), ("CLARABEL", MEDIUM), ("CLARABEL", DEFAULT),
                ("OSQP", {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200000,
                          "polish": True}),
                ("SCS", {"eps": 1e-10, "max_iters": 200000})]
    log = []
    for solver, opts in attempts:
        if solver not in cp.installed_solvers():
            continue
        try:
            problem.solve(solver=solver, **opts)
        except (cp.error.SolverError, ValueError) as exc:
            log.append(f"{solver}: {str(exc)[:60]}")
            continue
        if problem.status == cp.OPTIMAL:
            return problem.value
        log.append(f"{solver}: {problem.status}")
    raise RuntimeError("no CVXPY solver reached 'optimal' (" + "; ".join(log) + ")")


# ----------------------------------------------------------------------------- helpers

def _binary_instance(rng, m=10, d=3):
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=m) > 0, 1, -1)
    y[0], y[1] = 1, -1
    return X, y


_SYM_DATA = []     # (symbol, value) of the data entries of the expression being built
_SYM_CACHE = {}


def _sym_gradient(build, blocks, point, key=None, data=None):
    """Gradient of a SymPy expression, evaluated numerically.

    ``blocks``: ordered ``{name: size}`` of vector symbols; ``build(sym)`` gets
    ``{name: sympy.Matrix column of symbols}`` and returns the expression; ``point``:
    ``{name: array}``. Data matrices enter through :func:`_sym_matrix` as symbols too (their
    values are substituted only when the derivative is evaluated). Returns
    ``{name: gradient array}`` computed by ``sympy.diff`` and ``sympy.lambdify`` (nothing
    typed). ``key``: the expression's structure does not change between calls with the
    same key (only the data values do), so SymPy's work is done once per key and
    process; ``data``: the data arrays in the order ``build`` passes them to
    :func:`_sym_matrix` (then a cached call does not rebuild the expression)."""
    import sympy as sp

    _SYM_DATA.clear()
    if key is not None and key in _SYM_CACHE and data is not None:
        f, _ = _SYM_CACHE[key]
        data = [(None, v) for A in data for v in np.atleast_2d(np.asarray(A, float)).ravel()]
    else:
        syms = {k: sp.Matrix(sp.symbols(f"{k}0:{n}")) for k, n in blocks.items()}
        expr = build(syms)
        data = list(_SYM_DATA)
        _SYM_DATA.clear()
        flat = [s for v in syms.values() for s in v]
        grad = [sp.diff(expr, s) for s in flat]
        f = sp.lambdify(flat + [d for d, _ in data], grad, "numpy")
        if key is not None:
            _SYM_CACHE[key] = (f, None)
    args = np.concatenate([np.asarray(point[k], float).ravel() for k in blocks]
                          + [np.array([v for _, v in data], float)])
    vals = np.asarray(f(*args), dtype=float)
    out, pos = {}, 0
    for k, n in blocks.items():
        out[k] = vals[pos:pos + n]
        pos += n
    return out


def _sym_matrix(A):
    """A data array as a SymPy matrix of fresh symbols (values kept for evaluation)."""
    import sympy as sp

    A = np.atleast_2d(np.asarray(A, float))
    n0 = len(_SYM_DATA)
    syms = sp.symbols(f"data{n0}:{n0 + A.size}")
    _SYM_DATA.extend(zip(syms, A.ravel()))
    return sp.Matrix(A.shape[0], A.shape[1], syms)


_SYMPY_TEXT = ("SymPy differentiates the Lagrangian (built symbolically on the first 4 points "
               "and 3 features of the instance); the check compares its gradient at a random "
               "point with the stationarity expressions as the paper states them.")


def _line_min(phi, lo, hi, xatol=1e-12):
    """Minimiser of a scalar function on ``[lo, hi]`` by a bounded scalar search (SciPy),
    independent of any closed form; the end points are compared too (a bounded Brent search
    never evaluates them exactly)."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(phi, bounds=(lo, hi), method="bounded",
                          options={"xatol": xatol, "maxiter": 500})
    best, fbest = float(res.x), float(res.fun)
    for t in (lo, hi):
        ft = phi(t)
        if ft < fbest:
            best, fbest = float(t), ft
    return best


def _cert_residual(cert):
    """Largest scaled residual of a certificate (0 when it holds exactly)."""
    return max(abs(s) for _, s in cert.residuals.values())


def _certificate_check(prob, what, **point):
    """The check that ``prob``'s KKT certificate of ``prob.solution_from(**point)`` holds
    (its largest scaled residual is 0 to 1e-6); ``what`` names the point."""
    cert = prob.certify(prob.solution_from(**point))
    return Check(f"KKT certificate of {what}: largest scaled residual", _cert_residual(cert),
                 0.0, 1e-6)


def _box_cd(Qm, lin, upper, x0=None, epochs=20000, stop=1e-13, return_epochs=False):
    """Dual coordinate descent on ``1/2 x^T Qm x + lin^T x``, ``0 <= x <= upper`` with the
    closed-form step of seed 002 Alg. 1: ``x_i <- clip(x_i - g_i / Qm_ii, 0, upper_i)``,
    epochs until the largest step of an epoch is below ``stop·(1 + max|x|)`` (CD converges
    linearly on these strongly convex or box-bounded QPs) or ``epochs`` have run."""
    n = Qm.shape[0]
    x = np.zeros(n) if x0 is None else np.array(x0, float)
    up = np.broadcast_to(np.asarray(upper, float), (n,))
    g = Qm @ x + lin
    ep = 0
    for ep in range(1, epochs + 1):
        big = 0.0
        for i in range(n):
            if Qm[i, i] <= 0:
                continue
            new = min(max(x[i] - g[i] / Qm[i, i], 0.0), up[i])
            d = new - x[i]
            if d != 0.0:
                g += d * Qm[:, i]
                x[i] = new
                big = max(big, abs(d))
        if big <= stop * (1.0 + float(np.max(np.abs(x)))):
            break
    return (x, ep) if return_epochs else x


def _cd_step_checks(Qm, lin, upper, x_star, rng, tol=1e-6):
    """The closed-form coordinate step against a bounded line search on the same 1-D
    restriction, and CD run to convergence against the CVXPY optimum ``x_star``."""
    n = Qm.shape[0]
    up = np.broadcast_to(np.asarray(upper, float), (n,))
    x = rng.uniform(0, 1, n) * np.where(np.isfinite(up), up, 1.0)
    i = int(rng.integers(n))
    g = Qm[i] @ x + lin[i]
    closed = min(max(x[i] - g / Qm[i, i], 0.0), up[i])

    def phi(t):
        z = x.copy()
        z[i] = t
        return 0.5 * z @ Qm @ z + lin @ z
    hi = up[i] if np.isfinite(up[i]) else abs(x[i]) + 10 * (abs(g) / Qm[i, i] + 1)
    searched = _line_min(phi, 0.0, hi)
    xcd, ep = _box_cd(Qm, lin, upper, return_epochs=True)
    return [Check(f"closed-form step on coordinate {i} = bounded line search on the same "
                  "1-D restriction", closed, searched, 1e-6),
            Check(f"coordinate descent from 0 until its largest step is below 1e-13 ({ep} "
                  "epochs) = the CVXPY dual optimum", xcd, x_star, tol)]

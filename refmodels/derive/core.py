"""The shared machinery of the walk-throughs: the papers (:data:`REFERENCES`), the
families (:data:`FAMILIES`) and their errata (:data:`ERRATA`), the data types
(:class:`Check`, :class:`Erratum`, :class:`Step`, :class:`Walkthrough` with its
Unicode, LaTeX, Markdown and reST renderings), and the helpers every family uses:
the random instance, SymPy gradients, a bounded line search and the box coordinate
descent of seed 002 Alg. 1.
"""
from __future__ import annotations

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

#: Family name -> (title, sections of the canonical formulation it follows, seeds cited).
FAMILIES = {
    "SVM": ("Soft-margin SVM", "§1", ("002",)),
    "ODML": ("ODML (ODM^L, the margin mean/variance machine of the ODM papers)", "§2",
             ("002", "000")),
    "LDM": ("LDM, the Large margin Distribution Machine", "§3", ("001", "002")),
    "ODM": ("ODM, the Optimal margin Distribution Machine", "§4", ("002", "000")),
    "McODM": ("mcODM, multi-class ODM", "§5", ("002",)),
    "SVMm": ("SVMm and ε-SVM (covering EpsSVM)", "§6", ("003",)),
    "MKLm": ("MKLm and ε-MKL (covering EpsMKL)", "§7", ("003",)),
    "DRR": ("Discriminative ridge regression, DRR and DRM (covering DRM)", "§8", ("004",)),
}
_ALIASES = {"EPSSVM": "SVMm", "EPSMKL": "MKLm", "DRM": "DRR", "RELAXEDMCODM": "McODM",
            "MCODM": "McODM"}

#: Every erratum of the papers the project found, by key -> family whose walk-through shows
#: it (each appears in exactly one walk-through, at the step where it happens).
ERRATA = {
    "odml-dropped-constant": "ODML",
    "odml-lemma1-inverts-singular-A": "ODML",
    "ldm-dropped-constant": "LDM",
    "ldm-singular-Q": "LDM",
    "odm-seed000-eq15-xi-for-eps": "ODM",
    "odm-seed002-lagrangian-after-eq14": "ODM",
    "mcodm-eq23-M-inside-sum": "McODM",
    "mcodm-alg4-nu-not-divided": "McODM",
    "mcodm-linear-speedup-B-drops-1-theta": "McODM",
    "svmm-eqs7-14-half-norm": "SVMm",
    "svmm-fda-eq18-transform": "SVMm",
    "mklm-eq26-C1-on-eta": "MKLm",
    "drr-apg-rate-not-quadratic": "DRR",
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
class Step:
    """One step of a derivation."""

    title: str
    source: str
    text: str
    unicode: str
    latex: str
    checks: list = field(default_factory=list)
    errata: list = field(default_factory=list)

    @property
    def ok(self):
        return bool(self.checks or self.errata) and all(c.passed for c in self.checks) \
            and all(e.ok for e in self.errata)


class Walkthrough:
    """The derivation of one family: a list of :class:`Step` on one random instance."""

    def __init__(self, family, seed, instance, steps):
        self.family = family
        self.seed = seed
        self.instance = instance
        self.steps = steps
        self.title, self.section, self.seeds = FAMILIES[family]

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
    def ok(self):
        return all(s.ok for s in self.steps)

    # ---- renderings ------------------------------------------------------------------------
    def __str__(self):
        out = [f"{self.title}: derivation, step by step (seed={self.seed})",
               f"instance: {self.instance}", ""]
        for i, s in enumerate(self.steps, 1):
            out.append(f"{i}. {s.title}    [{s.source}]")
            out.extend("   " + ln for ln in textwrap.wrap(s.text, 86))
            out.extend("     " + ln for ln in s.unicode.splitlines())
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
            out.append("")
        n_c = len(self.checks)
        n_ok = sum(c.passed for c in self.checks)
        out.append(f"{n_ok}/{n_c} checks pass; {sum(e.ok for e in self.errata)}/"
                   f"{len(self.errata)} errata shown (printed fails, corrected holds)")
        out.append("References:")
        out.extend(f"  [seed {k}] {REFERENCES[k]}" for k in self.seeds)
        return "\n".join(out)

    __repr__ = __str__

    def to_latex(self):
        """A LaTeX fragment (``\\section*`` per family, ``\\subsection*`` per step)."""
        def esc(t):
            return (t.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%")
                    .replace("&", r"\&").replace("#", r"\#"))
        out = [rf"\section*{{{esc(self.title)}}}", rf"Instance: {esc(self.instance)}.", ""]
        for i, s in enumerate(self.steps, 1):
            out.append(rf"\subsection*{{{i}. {esc(s.title)} ({esc(s.source)})}}")
            out.append(esc(s.text))
            out.append(r"\begin{gather*}" + " \\\\\n".join(_split_latex(s.latex))
                       + r"\end{gather*}")
            for c in s.checks:
                out.append(esc("Check " + c.line()) + r"\\")
            for e in s.errata:
                out.append(rf"\paragraph{{Erratum ({esc(e.source)}).}} {esc(e.text)}")
                out.append(r"Printed: \begin{equation*}" + e.printed_latex + r"\end{equation*}")
                out.append(esc(e.printed.line()) + r"\\")
                out.append(r"Corrected: \begin{equation*}" + e.corrected_latex
                           + r"\end{equation*}")
                out.append(esc(e.corrected.line()) + r"\\")
            out.append("")
        return "\n".join(out)

    def _check_rows(self, s):
        rows = []
        for c in s.checks:
            rows.append(("check", c.what, c.residual, c.tol, "pass" if c.passed else "FAIL"))
        for e in s.errata:
            rows.append(("printed (erratum)", e.printed.what, e.printed.residual, e.printed.tol,
                         "fails, as it should" if not e.printed.passed else "UNEXPECTED PASS"))
            rows.append(("corrected", e.corrected.what, e.corrected.residual, e.corrected.tol,
                         "pass" if e.corrected.passed else "FAIL"))
        return rows

    def to_markdown(self):
        """Markdown with ``$$…$$`` display math (MyST / GitHub / Jupyter)."""
        out = [f"# {self.title}", "", f"Instance: {self.instance} (seed {self.seed}).", ""]
        for i, s in enumerate(self.steps, 1):
            out += [f"## {i}. {s.title}", "", f"*{s.source}.* {s.text}", ""]
            for ln in _split_latex(s.latex):
                out += ["$$", ln, "$$", ""]
            for e in s.errata:
                out += [f"**Erratum ({e.source}).** {e.text}", "", "Printed:", "", "$$",
                        e.printed_latex, "$$", "", "Corrected:", "", "$$", e.corrected_latex,
                        "$$", ""]
            out += ["| | check | residual | tol | result |", "|---|---|---|---|---|"]
            for kind, what, r, tol, res in self._check_rows(s):
                out.append(f"| {kind} | {what} | {r:.2e} | {tol:.0e} | {res} |")
            out.append("")
        out += ["## References", ""]
        out += [f"* [seed {k}] {REFERENCES[k]}" for k in self.seeds]
        return "\n".join(out) + "\n"

    def to_rst(self, heading="="):
        """reStructuredText for Sphinx (``.. math::`` blocks, a table of checks per step)."""
        sub = "-" if heading == "=" else "~"
        title = f"{self.title}"
        out = [title, heading * len(title), "",
               f"The canonical formulation SPEC {self.section} (see :doc:`/conventions`), derived "
               f"step by step and executed on one small random instance: {self.instance} "
               f"(``refmodels.derive.derive"
               f"(\"{self.family}\", seed={self.seed})``). Every step shows its formula, the "
               "paper and equation it follows, and numerical checks; where a paper has an "
               "erratum, the printed version is evaluated beside the corrected one.", ""]
        for i, s in enumerate(self.steps, 1):
            t = f"{i}. {s.title}"
            out += [t, sub * len(t), "", f"*{_rst_escape(s.source)}.* {_rst_escape(s.text)}", "",
                    ]
            for ln in _split_latex(s.latex):
                out += [".. math::", "", "   " + ln, ""]
            for e in s.errata:
                out += [".. admonition:: Erratum", "", f"   *{_rst_escape(e.source)}.* "
                        f"{_rst_escape(e.text)}", "", "   Printed:", "", "   .. math::", ""]
                out += ["      " + ln for ln in e.printed_latex.splitlines()]
                out += ["", "   Corrected:", "", "   .. math::", ""]
                out += ["      " + ln for ln in e.corrected_latex.splitlines()]
                out.append("")
            out += [".. list-table::", "   :header-rows: 1", "   :widths: 14 50 12 8 16", "",
                    "   * - \u00a0", "     - check", "     - residual", "     - tol",
                    "     - result"]
            for kind, what, r, tol, res in self._check_rows(s):
                out += [f"   * - {kind}", f"     - {_rst_escape(what)}", f"     - {r:.2e}",
                        f"     - {tol:.0e}", f"     - {res}"]
            out.append("")
        out += ["References", sub * 10, ""]
        out += [f"* [seed {k}] {_rst_escape(REFERENCES[k])}" for k in self.seeds]
        return "\n".join(out) + "\n"


_BREAKS = re.compile(r"\\qquad|;\\quad|,\\quad|\\quad\\text\{s\.t\.\}\\quad|"
                     r"\\ \\text\{s\.t\.\}\\ ")


def _split_latex(tex, width=70):
    """Split a long display formula into lines at top-level separators (``\\qquad``,
    ``;\\quad``, ``,\\quad`` and "s.t."), outside braces and environments."""
    if len(tex) <= width:
        return [tex]
    cuts, depth, env = [], 0, 0
    for mt in _BREAKS.finditer(tex):
        pre = tex[:mt.start()]
        depth = pre.count("{") - pre.count("}")
        env = pre.count("\\begin") - pre.count("\\end")
        if depth == 0 and env == 0:
            cuts.append(mt)
    lines, start = [], 0
    for mt in cuts:
        if mt.start() - start > width * 0.5:
            keep = mt.group(0)
            head = tex[start:mt.start()] + (keep[0] if keep[0] in ",;" else "")
            lines.append(head.strip())
            start = mt.end() if "s.t." not in keep else mt.start()
    lines.append(tex[start:].strip())
    out = []
    for ln in lines:
        if ln.startswith("\\quad\\text{s.t.}\\quad") or ln.startswith("\\ \\text{s.t.}\\ "):
            ln = "\\text{s.t.}\\ " + ln.split("}", 1)[1].lstrip("\\quad").lstrip("\\ ")
        out.append(ln)
    return [ln for ln in out if ln]


def _rst_escape(t):
    return t.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")


# ----------------------------------------------------------------------------- helpers

def _binary_instance(rng, m=10, d=3):
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=m) > 0, 1, -1)
    y[0], y[1] = 1, -1
    return X, y


_SYM_DATA = []     # (symbol, value) of the data entries of the expression being built


def _sym_gradient(build, blocks, point):
    """Gradient of a SymPy expression, evaluated numerically.

    ``blocks``: ordered ``{name: size}`` of vector symbols; ``build(sym)`` gets
    ``{name: sympy.Matrix column of symbols}`` and returns the expression; ``point``:
    ``{name: array}``. Data matrices enter through :func:`_sym_matrix` as symbols too (their
    values are substituted only when the derivative is evaluated). Returns
    ``{name: gradient array}`` computed by ``sympy.diff`` and ``sympy.lambdify`` (nothing
    typed)."""
    import sympy as sp

    _SYM_DATA.clear()
    syms = {k: sp.Matrix(sp.symbols(f"{k}0:{n}")) for k, n in blocks.items()}
    expr = build(syms)
    data = list(_SYM_DATA)
    _SYM_DATA.clear()
    flat = [s for v in syms.values() for s in v]
    grad = [sp.diff(expr, s) for s in flat]
    f = sp.lambdify(flat + [d for d, _ in data], grad, "numpy")
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


def _line_min(phi, lo, hi):
    """Minimiser of a scalar function on ``[lo, hi]`` by a bounded scalar search (SciPy),
    independent of any closed form."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(phi, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12, "maxiter": 500})
    return float(res.x)


def _cert_residual(cert):
    """Largest scaled residual of a certificate (0 when it holds exactly)."""
    return max(abs(s) for _, s in cert.residuals.values())


def _certificate_check(prob, what, **point):
    """The check that ``prob``'s KKT certificate of ``prob.solution_from(**point)`` holds
    (its largest scaled residual is 0 to 1e-6); ``what`` names the point."""
    cert = prob.certify(prob.solution_from(**point))
    return Check(f"KKT certificate of {what}: largest scaled residual", _cert_residual(cert),
                 0.0, 1e-6)


def _box_cd(Qm, lin, upper, x0=None, epochs=400, const=None):
    """Dual coordinate descent on ``1/2 x^T Qm x + lin^T x``, ``0 <= x <= upper`` with the
    closed-form step of seed 002 Alg. 1: ``x_i <- clip(x_i - g_i / Qm_ii, 0, upper_i)``."""
    n = Qm.shape[0]
    x = np.zeros(n) if x0 is None else np.array(x0, float)
    up = np.broadcast_to(np.asarray(upper, float), (n,))
    g = Qm @ x + lin
    for _ in range(epochs):
        for i in range(n):
            if Qm[i, i] <= 0:
                continue
            new = min(max(x[i] - g[i] / Qm[i, i], 0.0), up[i])
            d = new - x[i]
            if d != 0.0:
                g += d * Qm[:, i]
                x[i] = new
    return x


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
    xcd = _box_cd(Qm, lin, upper)
    return [Check(f"closed-form step on coordinate {i} = bounded line search on the same "
                  "1-D restriction", closed, searched, 1e-6),
            Check("coordinate descent from 0, 400 epochs = the CVXPY dual optimum",
                  xcd, x_star, tol)]

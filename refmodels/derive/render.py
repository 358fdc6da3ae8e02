"""How a walk-through is written out: small tables in text, Markdown, reST and LaTeX, the
LaTeX preamble of a standalone document, and :func:`tex_text`, which turns the Unicode prose
of the walk-throughs into plain-ASCII LaTeX (specials escaped, symbols in math mode).
"""
from __future__ import annotations

import re

import numpy as np

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

"""The executable derivations (refmodels.derive): every family's walk-through runs and holds
on every seed, every step carries a check that passes, every erratum's printed version fails
beside its correction, each erratum and note appears in exactly one walk-through, the checks
can fail, the LaTeX is escaped everywhere and compiles where a TeX engine is installed, and
the exercises accept their solutions and reject a typical mistake."""
import argparse
import importlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

# the module (``refmodels.derive`` as a package attribute may be the function derive)
D = importlib.import_module("refmodels.derive")
core = importlib.import_module("refmodels.derive.core")
render = importlib.import_module("refmodels.derive.render")
EX = importlib.import_module("refmodels.derive.exercises")

FAMILIES = list(D.FAMILIES)
N_SEEDS = 40


@pytest.fixture(scope="module")
def walkthroughs():
    return {f: D.derive(f, seed=0) for f in FAMILIES}


def test_nine_walkthroughs():
    assert len(FAMILIES) == 9 and "SVMb" in FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_walkthrough_holds(walkthroughs, family):
    wt = walkthroughs[family]
    assert len(wt.steps) >= 5
    assert not wt.failed_steps, [s.error for s in wt.failed_steps]
    titles = " ".join(s.title.lower() for s in wt.steps)
    for word in ("primal", "dual", "solver step", "complementary slackness"):
        assert word in titles, (family, word)
    for step in wt.steps:
        assert step.checks or step.errata or step.notes, \
            f"{family}: step {step.title!r} has no check"
        assert step.source.strip() and step.unicode.strip() and step.latex.strip()
        for c in step.checks:
            assert c.passed, f"{family} / {step.title}: {c.line()}"
        for e in step.errata:
            assert not e.printed.passed, f"{family}: printed version of {e.key} passes"
            assert e.corrected.passed, f"{family}: corrected version of {e.key} fails"
            assert np.isfinite(e.corrected.residual)
        for n in step.notes:
            assert n.checks and n.ok, f"{family}: note {n.key} does not hold"
    assert wt.ok
    assert wt.figures, f"{family} draws no figure"


def _run_family(family):
    """Every seed of one family: the failures as text (empty when every seed holds)."""
    import warnings

    warnings.simplefilter("ignore")
    bad = []
    for seed in range(N_SEEDS):
        wt = D.derive(family, seed=seed)
        if not wt.ok:
            lines = [c.line() for c in wt.checks if not c.passed]
            lines += [f"erratum {e.key} not shown" for e in wt.errata if not e.ok]
            lines += [f"note {n.key} fails" for n in wt.notes if not n.ok]
            lines += [f"step {s.title!r} could not run: {s.error}" for s in wt.failed_steps]
            bad.append(f"{family} seed {seed}: " + "; ".join(lines))
        if len(wt.errata) != sum(1 for k, f in D.ERRATA.items() if f == family):
            bad.append(f"{family} seed {seed}: {len(wt.errata)} errata shown")
    return bad


@pytest.mark.slow
def test_every_walkthrough_holds_on_40_seeds():
    """``refmodels derive F --seed s`` holds (exit 0, every erratum shown failing) for
    every family and the seeds 0..39; the families run in two processes."""
    workers = max(1, min(2, os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        bad = [b for out in pool.map(_run_family, FAMILIES) for b in out]
    assert not bad, "\n".join(bad)


def test_every_erratum_and_note_in_exactly_one_walkthrough(walkthroughs):
    seen, notes = {}, {}
    for f, wt in walkthroughs.items():
        for e in wt.errata:
            assert e.key not in seen, f"{e.key} in both {seen[e.key]} and {f}"
            seen[e.key] = f
        for n in wt.notes:
            assert n.key not in notes, f"{n.key} in both {notes[n.key]} and {f}"
            notes[n.key] = (f, n.kind)
    assert seen == D.ERRATA
    assert notes == D.NOTES
    # what the papers state as a convention is not an erratum
    assert not set(D.ERRATA) & set(D.NOTES)
    assert {k for k, (_, kind) in D.NOTES.items() if kind == "convention"} == \
        {"odml-dual-drops-constant", "ldm-dual-drops-constant"}


@pytest.mark.parametrize("family", FAMILIES)
def test_checks_can_fail(walkthroughs, family):
    """Every check compares two computed quantities: moving one by 0.1 % makes it fail."""
    wt = walkthroughs[family]
    for c in wt.checks + [c for n in wt.notes for c in n.checks]:
        if c.kind == "eq":
            assert c.perturbed(1e-3) > c.tol, f"{family}: {c.what} does not notice a 0.1 % error"
        else:   # an inequality lhs <= rhs: it fails once lhs is above rhs
            moved = D.Check(c.what, np.asarray(c.rhs, float) + 0.1 * (1 + np.abs(c.rhs)), c.rhs,
                            c.tol, kind="le")
            assert not moved.passed


def test_a_step_that_cannot_run_is_reported_not_raised(monkeypatch):
    """A solver failing on the instance makes a step that could not run (and the walk-through
    does not hold), not a crash."""
    steps = core.Steps()
    with steps.attempt("Dual", "somewhere"):
        raise RuntimeError("the solver gave up")
    assert steps[0].error and "gave up" in steps[0].error and not steps[0].ok
    wt = core.Walkthrough("SVM", 0, "x", steps)
    assert not wt.ok and "could not run" in str(wt) and "could not run" in wt.summary()

    def broken(seed):
        raise ValueError("no instance")
    monkeypatch.setitem(D._BUILDERS, "SVM", broken)
    wt = D.derive("SVM")
    assert not wt.ok and wt.failed_steps


def test_erratum_residuals_are_shown(walkthroughs):
    text = str(walkthroughs["McODM"])
    assert text.count("ERRATUM") == 3
    assert "fails, as it should" in text
    assert "!! the printed version should fail" not in text


def test_symbols_are_defined_where_used(walkthroughs):
    """mcODM's block step defines its constants (p₀, q₀, Φ) in the formula itself, in every
    rendering; DRR does not reuse z for two things; no page cites the project's internal
    SPEC."""
    mc = next(s for s in walkthroughs["McODM"].steps if "sorting" in s.title)
    for text in (mc.unicode, mc.latex):
        assert "p" in text and ("q₀" in text or "q_0" in text)
        assert "Φ = {" in text or r"\Phi=\{" in text
        assert ("β = 0 iff" in text) or (r"\beta=0\iff" in text)
    for f, wt in walkthroughs.items():
        for r in (wt.to_markdown(), wt.to_rst(), wt.to_latex(), str(wt)):
            assert "SPEC" not in r, f
    drr = walkthroughs["DRR"]
    apg = drr.steps[-1]
    assert "Q_Dz" not in apg.unicode and "Q_Dz" not in apg.latex   # z is the dual variable


def test_renderings(walkthroughs):
    wt = walkthroughs["ODML"]
    md, rst, tex, txt = wt.to_markdown(), wt.to_rst(), wt.to_latex(), str(wt)
    for s in wt.steps:
        assert s.title in md and s.title in rst and s.title in txt
    assert "$$" in md and ".. math::" in rst and r"\begin{gather*}" in tex
    assert "Note: a convention the paper states" in md and "admonition" in rst
    assert r"\paragraph{Note: a convention" in tex
    assert "Erratum" in md and r"\paragraph{Erratum" in tex
    assert "Zhang" in md and "Zhou" in rst         # full citations
    assert D.derive("SVM", latex=True).startswith(r"\section*")
    # SymPy's algebra is printed, as computed
    assert "SymPy" in txt and "eᵀHe" in txt


# ----------------------------------------------------------------------------- LaTeX

def _strip_math(tex):
    """The text-mode parts of a LaTeX document (math and environments' bodies removed)."""
    tex = re.sub(r"\\begin\{(gather\*|equation\*|tabular)\}.*?\\end\{\1\}", " ", tex,
                 flags=re.S)
    out, i, math = [], 0, False
    while i < len(tex):
        ch = tex[i]
        if ch == "\\" and i + 1 < len(tex):
            if not math:
                out.append(tex[i:i + 2])
            i += 2
            continue
        if ch == "$":
            math = not math
            i += 1
            continue
        if not math:
            out.append(ch)
        i += 1
    assert not math, "unbalanced $"
    return "".join(out)


def _escaping_problems(tex):
    problems = []
    if not tex.isascii():
        problems.append("non-ASCII: " + "".join(sorted({c for c in tex if ord(c) > 127})))
    if tex.count("{") - tex.count(r"\{") != tex.count("}") - tex.count(r"\}"):
        problems.append("unbalanced braces")
    for env in set(re.findall(r"\\begin\{([^}]*)\}", tex)):
        if tex.count(rf"\begin{{{env}}}") != tex.count(rf"\end{{{env}}}"):
            problems.append(f"unbalanced environment {env}")
    text = _strip_math(tex)
    text = re.sub(r"\\[A-Za-z]+\*?|\\.", "", text)            # commands and escapes
    for ch in "^_&%#~":
        if ch in text:
            problems.append(f"unescaped {ch!r} in text: ...{text[text.index(ch) - 30:][:60]}")
    return problems


def test_tex_text_escapes_prose():
    t = render.tex_text("ODM^L, (I + λS_W)^{−1/2}x, blockdiag(K^c/n_c), 50% & #1 ~ x_i ≤ ½ "
                      "fit_intercept solution_from")
    assert t.isascii()
    assert r"\%" in t and r"\&" in t and r"\#" in t and r"\textasciitilde{}" in t
    assert r"$\lambda" in t and r"^{-1/2}" in t and r"\le" in t
    assert r"fit\_intercept" in t and r"solution\_from" in t
    assert not _escaping_problems(t)


@pytest.mark.parametrize("family", FAMILIES)
def test_latex_is_escaped_everywhere(walkthroughs, family):
    render.UNMAPPED.clear()
    tex = walkthroughs[family].to_latex(standalone=True)
    assert not render.UNMAPPED, f"unmapped characters {render.UNMAPPED}"
    assert tex.startswith(r"\documentclass") and r"\usepackage{amsmath" in tex
    assert tex.rstrip().endswith(r"\end{document}")
    assert not _escaping_problems(tex), _escaping_problems(tex)
    for s in walkthroughs[family].steps:
        for ln in s.latex_lines + [x[2] for x in s.algebra]:
            assert ln.count("{") == ln.count("}"), (family, ln)
            assert not ln.rstrip().endswith("\\") and "\\[" not in ln, (family, ln)
            assert not re.search(r"(?<!\\)tfrac", ln), (family, ln)


def _engines():
    return [e for e in ("pdflatex", "xelatex") if shutil.which(e)]


@pytest.mark.parametrize("family", FAMILIES)
def test_latex_compiles(walkthroughs, family, tmp_path):
    engines = _engines()
    if not engines:
        pytest.skip("no TeX engine on PATH (apt-get install texlive-xetex): the LaTeX is "
                    "still checked for escaping by test_latex_is_escaped_everywhere")
    src = tmp_path / f"{family}.tex"
    src.write_text(walkthroughs[family].to_latex(standalone=True))
    for engine in engines:
        proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error",
                               src.name], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        log = proc.stdout[-3000:]
        assert proc.returncode == 0, f"{engine} failed on {family}:\n{log}"
        assert (tmp_path / f"{family}.pdf").stat().st_size > 10_000
        assert "! " not in proc.stdout, log
        # nothing runs off the page (a long SymPy line puts its label above it)
        overfull = re.findall(r"Overfull \\hbox \(([\d.]+)pt", proc.stdout)
        assert not [w for w in overfull if float(w) > 2.0], f"{family}: overfull {overfull}"


# ----------------------------------------------------------------------------- exercises

def test_three_exercises_per_family():
    for f in FAMILIES:
        assert len(EX.exercises(f)) >= 3, f


@pytest.mark.parametrize("ex", EX.EXERCISES, ids=lambda e: f"{e.family}-{e.number}")
def test_exercise_accepts_its_solution_and_rejects_a_mistake(ex):
    checks = ex.run(EX.solution_function(ex), seed=0)
    assert checks and all(c.passed for c in checks), [c.line() for c in checks]
    assert not ex.passes(EX.wrong_function(ex), seed=0)

    def raises(*args):
        raise NotImplementedError
    assert not ex.passes(raises, seed=0)          # the template fails its check


def test_exercise_command_line(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="refmodels")
    sub = parser.add_subparsers(dest="command", required=True)
    D.add_parser(sub)
    args = parser.parse_args(["derive", "ODM", "--exercise", "3"])
    assert D.run(args) == 0
    out = capsys.readouterr().out
    assert "def dual_function(zeta, beta, Q, a, mu, theta):" in out
    ex = EX.get("ODM", 3)
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(ex.solution)
    bad.write_text(ex.wrong)
    assert D.run(parser.parse_args(["derive", "ODM", "--exercise", "3", "--answer",
                                    str(good)])) == 0
    assert "PASSED" in capsys.readouterr().out
    assert D.run(parser.parse_args(["derive", "ODM", "--exercise", "3", "--answer",
                                    str(bad)])) == 1
    assert "FAIL" in capsys.readouterr().out
    with pytest.raises(ValueError, match="exercise"):
        D.run(parser.parse_args(["derive", "ODM", "--exercise", "99"]))
    with pytest.raises(ValueError, match="answer"):
        D.run(parser.parse_args(["derive", "ODM", "--answer", str(good)]))


# ----------------------------------------------------------------------------- the rest

def test_block_solver_by_sorting_against_cvxpy():
    """mcODM's block QP (seed 002 eq. 24): sorting = CVXPY in both cases (beta = 0, > 0);
    Alg. 4 as printed is wrong on most random blocks."""
    from refmodels.derive.mcodm import _block_cvxpy

    rng = np.random.default_rng(5)
    n_case, wrong = {True: 0, False: 0}, 0
    for t in range(12):
        A = 0.3 + rng.random()
        B = rng.normal(size=5)
        Dd, E = A + 0.2 + rng.random(), A + 0.2 + rng.random()
        F = rng.normal() + (2.0 if t % 2 else -2.0)
        y = int(rng.integers(5))
        a, b = D.mcodm_block_sort(A, B, Dd, E, F, y)
        ca, cb = _block_cvxpy(A, B, Dd, E, F, y)
        np.testing.assert_allclose(np.r_[a, b], np.r_[ca, cb], atol=1e-6)
        n_case[b > 0] += 1
        pa, pb = D.mcodm_block_alg4_printed(A, B, Dd, E, F, y)
        wrong += not np.allclose(np.r_[pa, pb], np.r_[ca, cb], atol=1e-6)
    assert min(n_case.values()) >= 3 and wrong >= 8


def test_smo_step_and_reduced_gradient():
    rng = np.random.default_rng(2)
    m = 6
    X = rng.normal(size=(m, 2))
    G = X @ X.T + np.eye(m)
    y = np.array([1, -1, 1, -1, 1, -1.0])
    idx, s = np.r_[np.arange(m), np.arange(m)], np.r_[y, -y]
    c, up = np.r_[-np.ones(m), 1.3 * np.ones(m)], np.r_[np.ones(m), 0.5 * np.ones(m)]
    u = np.zeros(2 * m)
    u[0] = u[1] = 0.4
    u2 = D.smo_pair_step(u, s, c, up, G, idx, 0, 1)
    v0, v2 = np.zeros(m), np.zeros(m)
    np.add.at(v0, idx, s * u)
    np.add.at(v2, idx, s * u2)
    assert abs(v2.sum() - v0.sum()) < 1e-12                     # keeps e^T v
    assert np.all(u2 >= -1e-15) and np.all(u2 <= up + 1e-15)     # stays in the box
    obj = lambda u_, v_: 0.5 * v_ @ G @ v_ + c @ u_             # noqa: E731
    assert obj(u2, v2) < obj(u, v0)                               # descends
    Dd = D.reduced_gradient_direction([0.7, 0.3, 0.0], [-2.0, -1.0, 0.5])
    assert abs(Dd.sum()) < 1e-15 and Dd[2] == 0.0 and np.dot([-2.0, -1.0, 0.5], Dd) < 0


def test_smo_with_intercept_matches_the_reference():
    import refmodels as rm

    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=20) > 0, 1.0, -1.0)
    prob = rm.SVM(X, y, C=0.7, kernel=rm.kernels.Linear(), fit_intercept=True)
    Q = y[:, None] * prob.gram * y[None, :]
    a, b, gap, _ = D.smo_svm(Q, y, 0.7)
    ref = prob.solve()
    assert gap <= 1e-12 and abs(y @ a) < 1e-12
    assert abs(prob.primal_value(X.T @ (y * a), b) - ref.objective) < 1e-8


def test_bad_input():
    with pytest.raises(ValueError, match="family"):
        D.derive("NoSuchModel")
    with pytest.raises(ValueError, match="seed"):
        D.derive("SVM", seed=-1)
    assert D._family("epssvm") == "SVMm" and D._family("drm") == "DRR" \
        and D._family("EpsMKL") == "MKLm" and D._family("odm") == "ODM" \
        and D._family("svc") == "SVMb"


def test_cli_entry_points(capsys, tmp_path):
    parser = argparse.ArgumentParser(prog="refmodels")
    sub = parser.add_subparsers(dest="command", required=True)
    D.add_parser(sub)
    args = parser.parse_args(["derive", "svm", "--seed", "1"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "Soft-margin SVM" in out and "PASS" in out and "FAIL" not in out.split("checks pass")[0]
    args = parser.parse_args(["derive", "SVM", "--latex"])
    assert D.run(args) == 0
    assert r"\subsection*" in capsys.readouterr().out
    args = parser.parse_args(["derive", "SVM", "--latex", "--standalone", "--figures",
                              str(tmp_path)])
    assert D.run(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(r"\documentclass") and r"\includegraphics" in out
    assert (tmp_path / "svm-decision.png").stat().st_size > 5_000
    with pytest.raises(ValueError, match="standalone"):
        D.run(parser.parse_args(["derive", "SVM", "--standalone"]))


def test_function_and_module_both_serve():
    """``rm.derive`` is the function (or, before the package binds it, the callable module):
    both can be called, and both carry the command-line hooks."""
    assert D.derive.add_parser is D.add_parser and D.derive.run is D.run
    assert callable(D)
    import refmodels as rm
    f = getattr(rm, "derive", D)
    assert callable(f) and hasattr(f, "add_parser") and hasattr(f, "run")
